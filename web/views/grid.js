// All heads side by side: one small map per head, as many columns as fit (balanced: 8 heads
// in 4 + 4 rather than 7 + 1); a click selects the head. Where query heads share key/value heads
// (grouped-query attention), a row holds whole groups where they fit, each map names its
// key/value head, and every other group is tinted.
import { el } from './dom.js';
import { drawHeatmap } from './heatmap.js';

const GAP = 8;
const handlers = new WeakMap();

/**
 * @param {HTMLElement} container
 * @param {{ maps: ArrayLike<number>[], length: number, selected: number, width: number, theme: import('./theme.js').Theme,
 *           shortOf: (h: number) => string, highlightRow?: number, maxCell?: number, minColumn?: number,
 *           onSelect: (h: number) => void, kvHeads?: number[] | null }} o
 *   kvHeads: the key/value head each query head reads (null: each its own)
 */
export function renderHeadGrid(container, o) {
  const H = o.maps.length;
  const kv = o.kvHeads && o.kvHeads.length === H ? o.kvHeads : null;
  let columns = Math.max(1, Math.min(H, Math.floor(o.width / (o.minColumn ?? 150))));
  const per = kv ? H / (Math.max(...kv) + 1) : 1;
  if (kv && columns >= per) columns = per * Math.floor(columns / per); // whole groups a row
  else columns = Math.ceil(H / Math.ceil(H / columns));
  container.style.setProperty('--mha-columns', String(columns));
  const cellWidth = Math.floor((o.width - (columns - 1) * GAP) / columns) - 14;
  handlers.set(container, o);
  if (container.childElementCount !== H) {
    container.replaceChildren(...Array.from({ length: H }, (_, h) => el('button', {
      type: 'button', class: 'multiple', 'aria-pressed': 'false', 'data-head': String(h + 1),
      onclick: () => handlers.get(container).onSelect(h),
    }, el('span', { class: 'multiple-title' }), el('canvas', { 'aria-hidden': 'true' }))));
  }
  [...container.children].forEach((button, h) => {
    const selected = h === o.selected;
    button.classList.toggle('selected', selected);
    button.classList.toggle('kv-alt', !!kv && kv[h] % 2 === 1);
    if (kv) button.setAttribute('data-kv', String(kv[h]));
    else button.removeAttribute('data-kv');
    button.setAttribute('aria-pressed', String(selected));
    /** @type {HTMLElement} */ (button.querySelector('.multiple-title')).textContent = `H${h + 1}${kv ? ` · KV ${kv[h] + 1}` : ''} · ${o.shortOf(h)}`;
    drawHeatmap(/** @type {HTMLCanvasElement} */ (button.querySelector('canvas')), {
      values: o.maps[h], rows: o.length, cols: o.length, width: Math.max(60, cellWidth), maxCell: o.maxCell ?? 16,
      highlightRow: o.highlightRow ?? -1, theme: o.theme, stableSize: false,
    });
  });
}
