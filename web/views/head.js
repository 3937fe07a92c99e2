// One head up close: its map with values in the cells, a tooltip for the cell under the
// pointer, and its card: title, what it focuses on, statistics, whether its label holds on
// this sentence, and what such heads do in trained models.
import { el } from './dom.js';
import { cellAt, drawHeatmap, drawnOn } from './heatmap.js';
import { renderStatistics } from './statistics.js';

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{ values: ArrayLike<number>, labels: string[], width: number, theme: object, title: string,
 *           highlightRow?: number, hoverCell?: {row:number,col:number}|null, maxCell?: number }} o
 */
export function renderHeadMap(canvas, o) {
  const L = o.labels.length;
  drawHeatmap(canvas, {
    values: o.values, rows: L, cols: L, rowLabels: o.labels, colLabels: o.labels, width: o.width, maxCell: o.maxCell ?? 46,
    highlightRow: o.highlightRow ?? -1, hoverCell: o.hoverCell ?? null, showValues: true, theme: o.theme,
  });
  canvas.setAttribute('aria-label', `${o.title}: heatmap of ${L} by ${L} attention weights. The table of this head's weights lists every value.`);
}

/**
 * Follow the pointer over a map: onCell({ row, col, value, text }) for the cell under it, or
 * onCell(null) when it leaves the cells; the tooltip (if given) shows the cell's weight.
 * @param {HTMLCanvasElement} canvas  @param {HTMLElement|null} tooltip
 * @param {{ labels: () => string[], onCell: (cell: object|null) => void }} o
 */
export function followPointer(canvas, tooltip, o) {
  let current = null;
  const leave = () => {
    if (tooltip) tooltip.hidden = true;
    if (current) { current = null; o.onCell(null); }
  };
  canvas.addEventListener('pointermove', (event) => {
    const cell = cellAt(canvas, event);
    if (!cell) { leave(); return; }
    const shown = drawnOn(canvas);
    const labels = o.labels();
    const value = shown.values[cell.row * shown.cols + cell.col];
    const text = `“${labels[cell.row]}” → “${labels[cell.col]}”: ${value.toFixed(3)}`;
    if (tooltip) {
      tooltip.textContent = text;
      tooltip.hidden = false;
      const rect = canvas.getBoundingClientRect();
      tooltip.style.left = `${Math.min(event.clientX - rect.left + 14, rect.width - 180)}px`;
      tooltip.style.top = `${event.clientY - rect.top + 14}px`;
    }
    if (!current || current.row !== cell.row || current.col !== cell.col) {
      current = { ...cell, value, text };
      o.onCell(current);
    }
  });
  canvas.addEventListener('pointerleave', leave);
}

function build(box) {
  box.replaceChildren(
    el('h4', { id: 'head-name', class: 'head-name' }),
    el('section', { 'aria-labelledby': 'focus-title' }, el('h5', { id: 'focus-title', text: 'Description' }), el('p', { id: 'head-focus', class: 'focus' })),
    el('section', { 'aria-labelledby': 'stats-title' },
      el('h5', { id: 'stats-title' }, 'Statistics ', el('span', { class: 'note', text: '(from the WebAssembly core)' })),
      el('dl', { id: 'head-stats', class: 'stats' })),
    el('section', { class: 'label-check-section', 'aria-labelledby': 'label-check-title' },
      el('h5', { id: 'label-check-title', text: 'Does the label hold on this sentence?' }), el('p', { id: 'label-check' })),
    el('section', { class: 'typical-section', 'aria-labelledby': 'typical-title' },
      el('h5', { id: 'typical-title', text: 'In trained models' }), el('p', { id: 'head-typical' })));
}

/**
 * @param {HTMLElement} box  the card is built here on first use
 * @param {{ title: string, focus: string, statistics: [string, string, string?][],
 *           check?: { holds: boolean|null, text: string }|null, typical?: string|null }} o
 */
export function renderHeadInfo(box, o) {
  if (!box.querySelector('#head-name')) build(box);
  const q = (id) => box.querySelector(`#${id}`);
  q('head-name').textContent = o.title;
  q('head-focus').textContent = o.focus;
  renderStatistics(q('head-stats'), o.statistics);
  const check = q('label-check');
  check.closest('section').hidden = o.check === undefined;
  if (o.check) {
    check.textContent = o.check.holds === null ? o.check.text : `${o.check.holds ? '✓ Holds' : '✗ Does not hold'}: ${o.check.text}.`;
    check.className = o.check.holds === null ? '' : (o.check.holds ? 'ok' : 'bad');
  }
  const typical = q('head-typical');
  typical.closest('section').hidden = !o.typical;
  typical.textContent = o.typical || '';
}
