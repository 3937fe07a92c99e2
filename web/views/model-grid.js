// Every layer and head of a model at once: layers as rows, heads as columns, one small map per
// head; a click (or Enter on the focused map) opens it in the other views. One tab stop: the
// arrow keys move between maps (Home and End within a layer). Where query heads share key/value
// heads (grouped-query attention), the heads of one group stand under one label, "KV 1", and
// every other group's column is tinted.
import { el } from './dom.js';
import { drawCells, fitCanvas } from './heatmap.js';

/** @typedef {import('../lib/index.js').Tensor} Tensor */

const handlers = new WeakMap();

/**
 * @param {HTMLElement} container
 * @param {{ layers: Tensor[], length?: number, selected: { layer: number, head: number }, width: number,
 *           titleOf?: (layer: number, head: number) => string, onSelect: (layer: number, head: number) => void, kvHeads?: number[] | null }} o
 *   layers: per layer the weights [H, T, T] or, for a long text, max-pooled [H, S, S]; width: CSS px the grid may use; kvHeads: the
 *   key/value head each query head reads (null: each its own)
 */
export function renderModelGrid(container, o) {
  const L = o.layers.length;
  const H = L ? o.layers[0].shape[0] : 0;
  // a side of each map: T tokens, or fewer where a long text's maps come max-pooled
  const S = L ? o.layers[0].shape[1] : 0;
  handlers.set(container, o);
  const kv = o.kvHeads && o.kvHeads.length === H ? o.kvHeads : null;
  const key = `${L}x${H}${kv ? `:${kv.join(',')}` : ''}`;
  if (container.dataset.shape !== key) {
    container.dataset.shape = key;
    const cells = [];
    if (kv) {
      // one label over each group of query heads: the key/value head they read
      cells.push(el('span', { class: 'model-grid-corner', 'aria-hidden': 'true' }));
      for (let h = 0; h < H;) {
        let end = h;
        while (end + 1 < H && kv[end + 1] === kv[h]) end += 1;
        const label = el('span', {
          class: `model-grid-group${kv[h] % 2 ? ' kv-alt' : ''}`, 'data-kv': String(kv[h]),
          title: `Query heads ${h + 1}–${end + 1} read key/value head ${kv[h] + 1}`, text: `KV ${kv[h] + 1}`,
        });
        label.style.gridColumn = `span ${end - h + 1}`;
        cells.push(label);
        h = end + 1;
      }
    }
    cells.push(el('span', { class: 'model-grid-corner', 'aria-hidden': 'true' }));
    for (let h = 0; h < H; h += 1) cells.push(el('span', { class: 'model-grid-head', 'aria-hidden': 'true', text: `H${h + 1}` }));
    for (let l = 0; l < L; l += 1) {
      cells.push(el('span', { class: 'model-grid-layer', 'aria-hidden': 'true', text: `L${l}` }));
      for (let h = 0; h < H; h += 1) {
        cells.push(el('button', {
          type: 'button', class: `model-cell${kv && kv[h] % 2 ? ' kv-alt' : ''}`, 'data-layer': String(l), 'data-head': String(h), 'data-kv': kv ? String(kv[h]) : undefined, tabIndex: -1,
          onclick: () => handlers.get(container).onSelect(l, h),
        }, el('canvas', { 'aria-hidden': 'true' })));
      }
    }
    container.replaceChildren(...cells);
    container.setAttribute('role', 'group');
    container.style.setProperty('--mha-heads', String(H));
    container.addEventListener('keydown', (event) => moveFocus(container, event));
  }
  // cells: as wide as fits beside the layer labels, from 20 to 96 CSS px
  const cell = Math.max(20, Math.min(96, Math.floor((o.width - 36) / Math.max(1, H)) - 6));
  container.style.setProperty('--mha-cell', `${cell}px`);
  const current = /** @type {HTMLElement | null} */ (container.querySelector('.model-cell[tabindex="0"]'));
  for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (container.querySelectorAll('.model-cell'))) {
    const l = Number(button.dataset.layer);
    const h = Number(button.dataset.head);
    const selected = l === o.selected.layer && h === o.selected.head;
    button.classList.toggle('selected', selected);
    button.setAttribute('aria-pressed', String(selected));
    button.setAttribute('aria-label', `${o.titleOf ? o.titleOf(l, h) : `Layer ${l}, head ${h + 1}`}${kv ? ` (key/value head ${kv[h] + 1})` : ''}`);
    if (!current) button.tabIndex = selected ? 0 : -1;
    const canvas = /** @type {HTMLCanvasElement} */ (button.firstElementChild);
    const { ctx, dpr } = fitCanvas(canvas, cell, cell);
    const size = Math.round(cell * dpr);
    drawCells(ctx, o.layers[l].data.subarray(h * S * S, (h + 1) * S * S), S, S, 0, 0, size, size);
  }
}

/** Arrow keys move between maps (the grid's one tab stop moves with the focus). @param {HTMLElement} container @param {KeyboardEvent} event */
function moveFocus(container, event) {
  const target = /** @type {HTMLElement} */ (event.target);
  if (!target.classList.contains('model-cell')) return;
  const o = handlers.get(container);
  const L = o.layers.length;
  const H = o.layers[0].shape[0];
  let l = Number(target.dataset.layer);
  let h = Number(target.dataset.head);
  switch (event.key) {
    case 'ArrowRight': h = Math.min(H - 1, h + 1); break;
    case 'ArrowLeft': h = Math.max(0, h - 1); break;
    case 'ArrowDown': l = Math.min(L - 1, l + 1); break;
    case 'ArrowUp': l = Math.max(0, l - 1); break;
    case 'Home': h = 0; break;
    case 'End': h = H - 1; break;
    default: return;
  }
  event.preventDefault();
  const next = /** @type {HTMLElement | null} */ (container.querySelector(`.model-cell[data-layer="${l}"][data-head="${h}"]`));
  if (!next) return;
  target.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}
