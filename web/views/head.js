// One head up close: its map with values in the cells, a tooltip for the cell under the
// pointer, and its card: title, what it focuses on, statistics, whether its label holds on
// this sentence, and what such heads do in trained models.
import { el } from './dom.js';
import { cellAt, drawHeatmap, drawnOn } from './heatmap.js';
import { renderStatistics } from './statistics.js';

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{ values: ArrayLike<number>, labels: string[], width: number, theme: import('./theme.js').Theme, title: string,
 *           highlightRow?: number, hoverCell?: {row:number,col:number}|null, maxCell?: number }} o
 */
export function renderHeadMap(canvas, o) {
  const L = o.labels.length;
  drawHeatmap(canvas, {
    values: o.values, rows: L, cols: L, rowLabels: o.labels, colLabels: o.labels, width: o.width, maxCell: o.maxCell ?? 46,
    highlightRow: o.highlightRow ?? -1, hoverCell: o.hoverCell ?? null, showValues: true, theme: o.theme,
  });
  canvas.setAttribute('aria-label', `${o.title}: heatmap of ${L} by ${L} attention weights. Press Enter, then the arrow keys to read it cell by cell, Escape to leave; the table of this head's weights lists every value.`);
}

/**
 * Follow the pointer and the keyboard over a map: onCell({ row, col, value, text }) for the cell
 * under the pointer or walked to with the arrow keys, or onCell(null) when it leaves the cells;
 * the tooltip (if given) shows the cell's weight. The map is a tab stop: Enter or an arrow key
 * enters it at the first cell, the arrow keys (Home, End, Page Up, Page Down) walk cell by cell,
 * each cell's query token, key token and weight is announced in a live region beside the map,
 * and Escape leaves it.
 * @param {HTMLCanvasElement} canvas  @param {HTMLElement|null} tooltip
 * @param {{ labels: () => string[], onCell: (cell: { row: number, col: number, value: number, text: string } | null) => void }} o
 */
export function followPointer(canvas, tooltip, o) {
  /** @typedef {{ row: number, col: number }} Cell */
  /** @type {{ row: number, col: number, value: number, text: string } | null} */
  let current = null;
  const cellText = (/** @type {Cell} */ cell, /** @type {string[]} */ labels, /** @type {number} */ value) => `“${labels[cell.row]}” → “${labels[cell.col]}”: ${value.toFixed(3)}`;
  const leave = () => {
    if (tooltip) tooltip.hidden = true;
    if (current) { current = null; o.onCell(null); }
  };
  /** @param {Cell} cell @param {{ x: number, y: number }} at */
  const show = (cell, at) => {
    // called only over a map drawn on this canvas
    const shown = /** @type {import('./heatmap.js').Drawn} */ (drawnOn(canvas));
    const labels = o.labels();
    const value = shown.values[cell.row * shown.cols + cell.col];
    const text = cellText(cell, labels, value);
    if (tooltip) {
      tooltip.textContent = text;
      tooltip.hidden = false;
      const rect = canvas.getBoundingClientRect();
      // beside the pointer, and inside the map's width
      tooltip.style.left = `${Math.max(0, Math.min(at.x + 14, rect.width - tooltip.offsetWidth))}px`;
      tooltip.style.top = `${at.y + 14}px`;
    }
    if (!current || current.row !== cell.row || current.col !== cell.col) {
      current = { ...cell, value, text };
      o.onCell(current);
    }
    return { labels, value };
  };
  const point = (/** @type {PointerEvent} */ event) => {
    const cell = cellAt(canvas, event);
    if (!cell) { leave(); return; }
    const rect = canvas.getBoundingClientRect();
    show(cell, { x: event.clientX - rect.left, y: event.clientY - rect.top });
  };
  canvas.addEventListener('pointermove', point);
  // a tap names a cell too, and it stays named after the finger lifts (until the next tap)
  canvas.addEventListener('pointerdown', point);
  canvas.addEventListener('pointerleave', (event) => { if (event.pointerType !== 'touch') leave(); });

  // The keyboard walk: a live region beside the map says where it is.
  canvas.tabIndex = 0;
  canvas.setAttribute('role', 'application');
  canvas.setAttribute('aria-roledescription', 'attention map');
  let announcer = /** @type {HTMLElement} */ (canvas.parentElement).querySelector(':scope > .cell-announcer');
  if (!announcer) {
    announcer = el('p', { class: 'cell-announcer visually-hidden', 'aria-live': 'polite', 'aria-atomic': 'true' });
    canvas.after(announcer);
  }
  /** @type {Cell | null} */
  let walking = null; // the cell the keyboard is on, or null
  const shownAnnouncer = announcer;
  const announce = (/** @type {string} */ text) => { shownAnnouncer.textContent = text; };
  canvas.addEventListener('keydown', (event) => {
    const shown = drawnOn(canvas);
    if (!shown || !shown.layout) return;
    const { rows, cols, layout } = shown;
    if (event.key === 'Escape') {
      if (!walking) return;
      walking = null;
      leave();
      announce('Left the map.');
      event.preventDefault();
      return;
    }
    /** @type {Record<string, [number, number]>} */
    const moves = {
      ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0],
      Home: [0, -cols], End: [0, cols], PageUp: [-rows, 0], PageDown: [rows, 0],
    };
    if (!walking && (event.key === 'Enter' || event.key === ' ' || moves[event.key])) {
      walking = { row: 0, col: 0 };
    } else if (walking && moves[event.key]) {
      const [dr, dc] = moves[event.key];
      walking = { row: Math.max(0, Math.min(rows - 1, walking.row + dr)), col: Math.max(0, Math.min(cols - 1, walking.col + dc)) };
    } else {
      return;
    }
    event.preventDefault();
    const { labels, value } = show(walking, { x: layout.left + (walking.col + 1) * layout.cell, y: layout.top + (walking.row + 1) * layout.cell });
    announce(`Query ${walking.row + 1} “${labels[walking.row]}”, key ${walking.col + 1} “${labels[walking.col]}”: weight ${value.toFixed(3)}.`);
  });
  canvas.addEventListener('blur', () => {
    if (!walking) return;
    walking = null;
    leave();
  });
}

const LABEL_CHECK_TITLE = 'Does the label hold on this sentence?';

/**
 * A head's check on the sentence shown (HeadSource.check): holds (null: nothing to check), the
 * verdict in words; followsParse: checked against the tagger's parse its features come from, so
 * the verdict is no tick of approval: with the parse's guess, the limits of the text the tagger
 * is likely outside of, and a note on how far the parse is right.
 * @typedef {{ holds: boolean | null, text: string, title?: string, followsParse?: boolean, guess?: string,
 *             limits?: string[], note?: string }} HeadCheck
 */

/** @param {HTMLElement} box */
function build(box) {
  box.replaceChildren(
    el('h4', { id: 'head-name', class: 'head-name' }),
    el('section', { 'aria-labelledby': 'focus-title' }, el('h5', { id: 'focus-title', text: 'Description' }), el('p', { id: 'head-focus', class: 'focus' })),
    el('section', { class: 'kv-section', 'aria-labelledby': 'kv-title', hidden: true },
      el('h5', { id: 'kv-title', text: 'Keys and values' }), el('p', { id: 'head-kv' })),
    el('section', { 'aria-labelledby': 'stats-title' },
      el('h5', { id: 'stats-title' }, 'Statistics ', el('span', { class: 'note', text: '(from the WebAssembly core)' })),
      el('dl', { id: 'head-stats', class: 'stats' })),
    el('section', { class: 'label-check-section', 'aria-labelledby': 'label-check-title' },
      el('h5', { id: 'label-check-title', text: LABEL_CHECK_TITLE }), el('p', { id: 'label-check' }),
      el('p', { id: 'label-check-guess' }), el('div', { id: 'label-check-limits' }), el('p', { id: 'label-check-note', class: 'note' })),
    el('section', { class: 'typical-section', 'aria-labelledby': 'typical-title' },
      el('h5', { id: 'typical-title', text: 'In trained models' }), el('p', { id: 'head-typical' })));
}

/**
 * @param {HTMLElement} box  the card is built here on first use
 * @param {{ title: string, focus: string, statistics: [string, string, string?][],
 *           check?: HeadCheck | null, typical?: string|null, kv?: string|null }} o
 *   kv: the key/value head it reads and the query heads that share it (grouped-query attention)
 */
export function renderHeadInfo(box, o) {
  if (!box.querySelector('#head-name')) build(box);
  // every id is one build() made
  const q = (/** @type {string} */ id) => /** @type {HTMLElement} */ (box.querySelector(`#${id}`));
  q('head-name').textContent = o.title;
  q('head-focus').textContent = o.focus;
  /** @type {HTMLElement} */ (q('head-kv').closest('section')).hidden = !o.kv;
  q('head-kv').textContent = o.kv || '';
  renderStatistics(/** @type {HTMLDListElement} */ (q('head-stats')), o.statistics);
  const check = q('label-check');
  /** @type {HTMLElement} */ (check.closest('section')).hidden = !o.check;
  const c = o.check;
  if (c) {
    q('label-check-title').textContent = c.title ?? LABEL_CHECK_TITLE;
    if (c.followsParse) {
      check.textContent = c.holds === null ? `${c.text}.` : `${c.holds ? 'Follows the parse' : '✗ Does not follow the parse'}: ${c.text}.`;
      check.className = c.holds === null ? '' : c.holds ? 'guess' : 'bad';
    } else {
      check.textContent = c.holds === null ? c.text : `${c.holds ? '✓ Holds' : '✗ Does not hold'}: ${c.text}.`;
      check.className = c.holds === null ? '' : (c.holds ? 'ok' : 'bad');
    }
    const guess = q('label-check-guess');
    guess.textContent = c.guess ?? '';
    guess.hidden = !c.guess;
    q('label-check-limits').replaceChildren(...(c.limits ?? []).map((text) => el('p', { class: 'caution', text })));
    const note = q('label-check-note');
    note.textContent = c.note ?? '';
    note.hidden = !c.note;
  }
  const typical = q('head-typical');
  /** @type {HTMLElement} */ (typical.closest('section')).hidden = !o.typical;
  typical.textContent = o.typical || '';
}
