// Head importance as a layers × heads table: each cell how far the log-probability of the actual
// next token falls, averaged over the text, with that head switched off; a click opens the head.
import { el } from './dom.js';
import { divergingColor } from './heatmap.js';

/**
 * @param {HTMLElement} container
 * @param {{ data: ArrayLike<number>, shape: [number, number], selected: { layer: number, head: number },
 *           onSelect: (layer: number, head: number) => void }} o
 */
export function renderImportance(container, o) {
  const [L, H] = o.shape;
  let max = 0;
  for (let i = 0; i < L * H; i += 1) max = Math.max(max, Math.abs(o.data[i]));
  const scale = max > 0 ? max : 1;
  const head = el('tr', {}, el('th', { scope: 'col', text: 'layer' }), Array.from({ length: H }, (_, h) => el('th', { scope: 'col', text: `H${h + 1}` })));
  const rows = Array.from({ length: L }, (_, l) => el('tr', {}, el('th', { scope: 'row', text: `L${l}` }),
    Array.from({ length: H }, (_, h) => {
      const v = o.data[l * H + h];
      const t = v / scale;
      const selected = l === o.selected.layer && h === o.selected.head;
      const td = el('td', {}, el('button', {
          type: 'button', class: `importance-cell${selected ? ' selected' : ''}`, 'aria-pressed': String(selected),
          'aria-label': `${v.toFixed(2)} nats: layer ${l}, head ${h + 1}`, title: `${v.toFixed(4)} nats`, text: v.toFixed(2), onclick: () => o.onSelect(l, h),
        }));
      td.style.background = divergingColor(t);
      td.style.color = Math.abs(t) > 0.55 ? '#fff' : '#111';
      return td;
    })));
  let best = 0;
  for (let i = 1; i < L * H; i += 1) if (o.data[i] > o.data[best]) best = i;
  container.replaceChildren(
    el('div', { class: 'table-wrap' }, el('table', { class: 'importance-table' },
      el('caption', { text: `Mean drop in log p(next token), in nats, with each head switched off (positive: the model needs it). Largest: layer ${Math.floor(best / H)}, head ${(best % H) + 1}, ${o.data[best].toFixed(3)}.` }),
      el('thead', {}, head), el('tbody', {}, rows))),
  );
}
