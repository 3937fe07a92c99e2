// Two heads compared: A, B and their difference A − B on one scale, the Jensen–Shannon
// divergence between them, and the divergence between every pair of heads (all from the core).
// Pointing at (or tapping) a cell of A, B or A − B names its query and key on all three maps
// and writes the three weights below them. Where query heads share key/value heads
// (grouped-query attention), two buttons offer a pair that reads the same keys and values and a
// pair from two groups, and the captions name each head's key/value head.
import { el } from './dom.js';
import { cellAt, drawHeatmap, drawLegend } from './heatmap.js';
import { divergenceText } from './head-text.js';

/** @typedef {{ row: number, col: number }} Cell */
/** @typedef {{ onChange: (a: number, b: number) => void, onHover?: (cell: Cell | null) => void, hoverCell?: Cell | null, kvHeads?: number[] | null }} Handlers */
/** @type {WeakMap<HTMLElement, Handlers>} */
const handlers = new WeakMap();
const PAIR_MAPS = ['pair-map-a', 'pair-map-b', 'pair-map-diff'];
const POINT_HINT = 'Point at a cell, or tap it, to name its query and key and read its weight in A and B.';

/**
 * a − b, element by element (the difference map's values, in [-1, 1]).
 * @param {ArrayLike<number>} a
 * @param {ArrayLike<number>} b
 */
export function differenceMap(a, b) {
  const diff = new Float32Array(a.length);
  for (let k = 0; k < diff.length; k += 1) diff[k] = a[k] - b[k];
  return diff;
}

/** @param {HTMLElement} container */
function build(container) {
  const select = (/** @type {string} */ id, /** @type {string} */ label) => el('select', { id, 'aria-label': label, onchange: () => changed(container) });
  const map = (/** @type {string} */ id) => el('canvas', { id, class: 'heatmap', role: 'img' });
  container.replaceChildren(
    el('div', { class: 'row pair-controls' },
      el('label', {}, 'Head A ', select('pair-a', 'Head A')),
      el('label', {}, 'Head B ', select('pair-b', 'Head B')),
      el('p', { id: 'pair-jsd', class: 'pair-jsd jsd', 'aria-live': 'polite' }),
      el('div', { id: 'pair-kv', class: 'pair-kv', hidden: true },
        el('button', { type: 'button', id: 'pair-same-kv', onclick: () => pick(container, 'same') }),
        el('button', { type: 'button', id: 'pair-other-kv', onclick: () => pick(container, 'other') }),
        el('p', { id: 'pair-kv-note', class: 'note' })),
      el('p', { id: 'pair-cell', class: 'pair-cell note', text: POINT_HINT })),
    el('div', { class: 'pair-maps' },
      el('figure', {}, map('pair-map-a'), el('figcaption', { id: 'pair-caption-a' })),
      el('figure', {}, map('pair-map-b'), el('figcaption', { id: 'pair-caption-b' })),
      el('figure', {}, map('pair-map-diff'), el('figcaption', {}, 'A − B ',
        el('span', { class: 'legend diverging' }, el('span', { text: '−1' }), el('canvas', { class: 'legend-diverging', 'aria-hidden': 'true' }), el('span', { text: '+1' })))),
      el('figure', { class: 'similarity' }, map('similarity-map'),
        el('figcaption', { text: 'Jensen–Shannon divergence between every pair of heads (0 = same map, ln 2 ≈ 0.693 = nothing in common)' }))));
  drawLegend(/** @type {HTMLCanvasElement} */ (container.querySelector('.legend-diverging')), true, 120, 10);
  for (const id of PAIR_MAPS) {
    const canvas = /** @type {HTMLCanvasElement} */ (container.querySelector(`#${id}`));
    const point = (/** @type {PointerEvent} */ event) => hovered(container, cellAt(canvas, event));
    canvas.addEventListener('pointermove', point);
    canvas.addEventListener('pointerdown', point);
    // a tapped cell stays named after the finger lifts
    canvas.addEventListener('pointerleave', (event) => { if (event.pointerType !== 'touch') hovered(container, null); });
  }
}

/** The cell pointed at changed (or not): tell the owner, which draws the view again with it. @param {HTMLElement} container @param {Cell | null} cell */
function hovered(container, cell) {
  const o = handlers.get(container);
  const now = o?.hoverCell ?? null;
  if (!o?.onHover || (now === cell) || (now && cell && now.row === cell.row && now.col === cell.col)) return;
  o.onHover(cell);
}

/**
 * For head a: another query head of its group, and the first head of the next group.
 * @param {number[]} kv  the key/value head of each query head
 * @param {number} a
 */
export function kvPairs(kv, a) {
  const G = Math.max(...kv) + 1;
  const same = kv.findIndex((g, h) => g === kv[a] && h !== a);
  const other = kv.indexOf((kv[a] + 1) % G);
  return { same: same >= 0 ? same : a, other: other >= 0 && G > 1 ? other : a };
}

/** A pair offered by the key/value groups: the one shown as A with `which` of kvPairs. @param {HTMLElement} container @param {'same' | 'other'} which */
function pick(container, which) {
  const o = handlers.get(container);
  if (!o?.kvHeads) return;
  const a = Number(/** @type {HTMLSelectElement} */ (container.querySelector('#pair-a')).value);
  o.onChange(a, kvPairs(o.kvHeads, a)[which]);
}

/** @param {HTMLElement} container */
function changed(container) {
  const { onChange } = /** @type {{ onChange: (a: number, b: number) => void }} */ (handlers.get(container));
  const value = (/** @type {string} */ id) => Number(/** @type {HTMLSelectElement} */ (container.querySelector(id)).value);
  onChange(value('#pair-a'), value('#pair-b'));
}

/**
 * @param {HTMLSelectElement} select
 * @param {number} count
 * @param {(h: number) => string} shortOf
 * @param {number} value
 */
function fillSelect(select, count, shortOf, value) {
  const key = Array.from({ length: count }, (_, h) => shortOf(h)).join('\u0000');
  if (select.dataset.names !== key) {
    select.dataset.names = key;
    select.replaceChildren(...Array.from({ length: count }, (_, h) => el('option', { value: String(h), text: `H${h + 1} · ${shortOf(h)}` })));
  }
  select.value = String(value);
}

/**
 * @param {HTMLElement} container  the view builds its content here on first use
 * @param {{ maps: ArrayLike<number>[], length: number, labels: string[], a: number, b: number,
 *           similarity: ArrayLike<number>, width: number, theme: import('./theme.js').Theme, highlightRow?: number,
 *           hoverCell?: Cell | null, shortOf: (h: number) => string, titleOf: (h: number) => string,
 *           onChange: (a: number, b: number) => void, onHover?: (cell: Cell | null) => void, kvHeads?: number[] | null }} o
 *   similarity: the core's H × H JS divergences; hoverCell: the cell pointed at, which onHover reports;
 *   kvHeads: the key/value head each query head reads (null: each its own)
 */
export function renderCompare(container, o) {
  if (!container.querySelector('#pair-map-a')) build(container);
  handlers.set(container, o);
  const H = o.maps.length;
  // every id is one build() made
  const q = (/** @type {string} */ id) => /** @type {HTMLElement} */ (container.querySelector(`#${id}`));
  const canvas = (/** @type {string} */ id) => /** @type {HTMLCanvasElement} */ (q(id));
  fillSelect(/** @type {HTMLSelectElement} */ (q('pair-a')), H, o.shortOf, o.a);
  fillSelect(/** @type {HTMLSelectElement} */ (q('pair-b')), H, o.shortOf, o.b);
  const mapA = o.maps[o.a];
  const mapB = o.maps[o.b];
  // three across when they fit; stacked on a narrow screen, each as wide as the column allows
  const width = o.width < 540 ? Math.min(300, o.width - 8) : Math.min(300, Math.max(160, (o.width - 40) / 3));
  const hover = o.hoverCell && o.hoverCell.row < o.length && o.hoverCell.col < o.length ? o.hoverCell : null;
  const common = { rows: o.length, cols: o.length, rowLabels: o.labels, colLabels: o.labels, width, maxCell: 22, highlightRow: o.highlightRow ?? -1, hoverCell: hover, theme: o.theme };
  const diff = differenceMap(mapA, mapB);
  drawHeatmap(canvas('pair-map-a'), { ...common, values: mapA });
  drawHeatmap(canvas('pair-map-b'), { ...common, values: mapB });
  drawHeatmap(canvas('pair-map-diff'), { ...common, values: diff, diverging: true });
  if (hover) {
    const k = hover.row * o.length + hover.col;
    const signed = (/** @type {number} */ v) => (Math.abs(v) < 0.0005 ? '0.000' : `${v < 0 ? '−' : '+'}${Math.abs(v).toFixed(3)}`);
    q('pair-cell').textContent = `Query “${o.labels[hover.row]}” (${hover.row + 1}) → key “${o.labels[hover.col]}” (${hover.col + 1}): A ${mapA[k].toFixed(3)}, B ${mapB[k].toFixed(3)}, A − B ${signed(diff[k])}.`;
  } else {
    q('pair-cell').textContent = POINT_HINT;
  }
  const jsd = o.similarity[o.a * H + o.b];
  const kv = o.kvHeads && o.kvHeads.length === H ? o.kvHeads : null;
  const kvOf = (/** @type {number} */ h) => (kv ? ` · KV ${kv[h] + 1}` : '');
  q('pair-caption-a').textContent = `A: ${o.titleOf(o.a)}${kvOf(o.a)}`;
  q('pair-caption-b').textContent = `B: ${o.titleOf(o.b)}${kvOf(o.b)}`;
  q('pair-kv').hidden = !kv;
  if (kv) {
    const { same, other } = kvPairs(kv, o.a);
    q('pair-same-kv').textContent = `One group: H${o.a + 1} and H${same + 1} (KV ${kv[o.a] + 1})`;
    q('pair-other-kv').textContent = `Two groups: H${o.a + 1} and H${other + 1} (KV ${kv[o.a] + 1} and ${kv[other] + 1})`;
    q('pair-kv-note').textContent = o.a === o.b ? 'A and B are the same head.'
      : kv[o.a] === kv[o.b] ? `A and B read the same keys and values (key/value head ${kv[o.a] + 1}): only their queries differ.`
        : `A reads key/value head ${kv[o.a] + 1}, B key/value head ${kv[o.b] + 1}: their keys and values differ too.`;
  }
  q('pair-map-a').setAttribute('aria-label', `Heatmap of ${o.titleOf(o.a)}`);
  q('pair-map-b').setAttribute('aria-label', `Heatmap of ${o.titleOf(o.b)}`);
  q('pair-map-diff').setAttribute('aria-label', `Difference A minus B; Jensen–Shannon divergence ${jsd.toFixed(3)}`);
  q('pair-jsd').textContent = divergenceText(jsd);
  // the H × H matrix, scaled to [0, 1] by ln 2
  const scaled = Float32Array.from(o.similarity, (v) => v / Math.LN2);
  const names = Array.from({ length: H }, (_, h) => `H${h + 1}`);
  drawHeatmap(canvas('similarity-map'), {
    values: scaled, rows: H, cols: H, rowLabels: names, colLabels: names, width: 260, maxCell: 26, showValues: false, theme: o.theme,
  });
  q('similarity-map').setAttribute('aria-label', 'Jensen–Shannon divergence between every pair of heads');
  return { jsd };
}
