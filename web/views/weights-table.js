// A head's weights as a table (for screen readers, and for reading exact numbers): rows are
// queries, columns keys, 3 decimals.
import { el } from './dom.js';

/**
 * @param {HTMLElement} wrap
 * @param {{ values: ArrayLike<number>, labels: string[], caption: string, version?: string, rows?: number[] }} o
 *   rows: the queries listed (default every one: a long text's L² cells would be a table no one reads)
 */
export function renderWeightsTable(wrap, { values, labels, caption, version = '', rows }) {
  const L = labels.length;
  const table = el('table', { id: 'weights-table', class: 'weights-table', 'data-version': version });
  table.append(el('caption', { text: caption }));
  const headRow = el('tr', {}, el('th', { scope: 'col', text: 'query \\ key' }));
  labels.forEach((label, j) => headRow.append(el('th', { scope: 'col', text: `${j + 1}. ${label}` })));
  table.append(el('thead', {}, headRow));
  const body = el('tbody');
  for (const i of rows ?? labels.keys()) {
    const tr = el('tr', {}, el('th', { scope: 'row', text: `${i + 1}. ${labels[i]}` }));
    for (let j = 0; j < L; j += 1) tr.append(el('td', { text: values[i * L + j].toFixed(3) }));
    body.append(tr);
  }
  table.append(body);
  wrap.replaceChildren(table);
}
