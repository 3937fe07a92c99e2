// One head followed with real numbers, for the token followed: where its row of weights goes
// (the keys it weights most, with their weights) and what it hands on, its output for the token
// (the weighted average of its values, head_dim numbers).
import { el } from './dom.js';

const TOP = 5;

/**
 * @param {HTMLElement} container
 * @param {{ title: string, token: string, position: number, labels: string[], row: ArrayLike<number>,
 *           output: ArrayLike<number> | null }} o  row: the head's weights of this query (L); output: hd numbers
 */
export function renderFollow(container, o) {
  const order = Array.from(o.row, (w, j) => [w, j]).sort((a, b) => b[0] - a[0]).slice(0, TOP);
  let sum = 0;
  for (let j = 0; j < o.row.length; j += 1) sum += o.row[j];
  const bars = order.map(([w, j]) => {
    const fill = el('span', { class: 'bar-fill' });
    fill.style.width = `${(w * 100).toFixed(1)}%`; // CSSOM: allowed under a strict style-src
    return el('div', { class: 'bar-row', role: 'listitem', 'data-key': String(j), 'data-weight': String(w) },
      el('span', { class: 'bar-label', text: `${j + 1}. ${o.labels[j]}` }), el('span', { class: 'bar-track' }, fill),
      el('span', { class: 'bar-value', text: w.toFixed(3) }));
  });
  const output = o.output ? Array.from(o.output, (v) => v.toFixed(3)) : null;
  container.replaceChildren(
    el('p', { text: `${o.title}, at “${o.token}” (position ${o.position + 1}): its ${o.row.length} weights sum to ${sum.toFixed(3)}; the ${order.length} largest:` }),
    el('div', { class: 'bar-chart', role: 'list', 'aria-label': `The keys ${o.title} weights most at “${o.token}”` }, bars),
    // replaceChildren would turn a null into the text "null"
    ...(output ? [el('p', { class: 'note follow-output', text: `Its output for “${o.token}”, Σ weight × value over every key (${output.length} numbers): ${output.length > 16 ? `${output.slice(0, 16).join(' ')} …` : output.join(' ')}` })] : []));
}
