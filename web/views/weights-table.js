// A head's weights as a table (for screen readers, and for reading exact numbers): rows are
// queries, columns keys, 3 decimals.
import { el } from './dom.js';

/** @param {HTMLElement} wrap @param {{ values: ArrayLike<number>, labels: string[], caption: string, version?: string }} o */
export function renderWeightsTable(wrap, { values, labels, caption, version = '' }) {
  const L = labels.length;
  const table = el('table', { id: 'weights-table', class: 'weights-table', 'data-version': version });
  table.append(el('caption', { text: caption }));
  const headRow = el('tr', {}, el('th', { scope: 'col', text: 'query \\ key' }));
  labels.forEach((label, j) => headRow.append(el('th', { scope: 'col', text: `${j + 1}. ${label}` })));
  table.append(el('thead', {}, headRow));
  const body = el('tbody');
  for (let i = 0; i < L; i += 1) {
    const tr = el('tr', {}, el('th', { scope: 'row', text: `${i + 1}. ${labels[i]}` }));
    for (let j = 0; j < L; j += 1) tr.append(el('td', { text: values[i * L + j].toFixed(3) }));
    body.append(tr);
  }
  table.append(body);
  wrap.replaceChildren(table);
}
