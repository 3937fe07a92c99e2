// Export of the explorer's selected head: its map as PNG and SVG, its weights as CSV and JSON.
// The numbers are the core's, read from the explorer's state, with full float32 precision in
// CSV and JSON.

import { el, saveBlob } from '../../views/dom.js';
import { sequentialColor } from '../../views/heatmap.js';

const CELL = 40;
/** A long text's maps (more tokens than this) are drawn a CSS px or so a cell, labels thinned. */
const LONG = 128;
/** Such a PNG's map is about this many CSS px a side: at PNG_SCALE, every weight at least a pixel. */
const LONG_MAP_PX = 1024;
const FONT = '13px "DejaVu Sans", Arial, sans-serif';
const CHAR = 7.4; // width of one label character at 13 px, for layout without measuring
const MAX_LABEL = 12;
export const PNG_SCALE = 2;

/** @typedef {ReturnType<import('../../explorer/controller.js').Explorer['selectedHeadMap']>} HeadMap */

/** @param {string} label */
function clip(label) {
  return label.length > MAX_LABEL ? `${label.slice(0, MAX_LABEL - 1)}…` : label;
}

/**
 * The selected head as the explorer shows it: { head, title, sentence, source, tokens, values (L·L) }.
 * @param {import('../../explorer/controller.js').Explorer} explorer
 */
export function selectedHead(explorer) {
  const map = explorer.selectedHeadMap();
  const L = map.tokens.length;
  if (map.values.length !== L * L) throw new Error(`export: expected the selected head's map of ${L} × ${L} = ${L * L} weights, got ${map.values.length}`);
  return map;
}

const FOOTER = 'Rows: queries, columns: keys; each row sums to 1. Computed by the MHA Explorer\'s WebAssembly core.';

/**
 * Geometry shared by the PNG and the SVG (CSS pixels); title and sentence widen it if needed.
 * @param {string[]} tokens
 * @param {{ title?: string, sentence?: string }} [o]
 */
export function mapLayout(tokens, { title = '', sentence = '' } = {}) {
  const longest = Math.max(...tokens.map((t) => clip(t).length), 4);
  const left = Math.ceil(24 + longest * CHAR);
  const top = Math.ceil(44 + longest * CHAR * 0.72 + 10);
  const L = tokens.length;
  const cell = L > LONG ? Math.max(1, Math.floor(LONG_MAP_PX / L)) : CELL;
  // a long text's title and sentence are cut (toPng) rather than widen the picture
  const chars = (/** @type {string} */ text) => (L > LONG ? Math.min(text.length, 160) : text.length);
  const width = Math.ceil(Math.max(left + L * cell + 24, 24 + chars(title) * 9.5, 24 + chars(sentence) * CHAR, 24 + FOOTER.length * 6.4));
  return { left, top, cell, width, height: top + L * cell + 34, L };
}

/** Every step-th label of a long map: labels 14 CSS px apart at least. @param {number} cell */
const labelStep = (cell) => Math.max(1, Math.ceil(14 / cell));

/** @param {HeadMap} map */
function baseName(map) {
  const words = map.sentence.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').split('-').slice(0, 4).join('-');
  return `head-${map.head + 1}-${words || 'sentence'}`;
}

/** @param {HeadMap} map */
export function toCsv(map) {
  const L = map.tokens.length;
  const quote = (/** @type {string} */ s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [['query \\ key', ...map.tokens.map(quote)].join(',')];
  for (let i = 0; i < L; i += 1) lines.push([quote(map.tokens[i]), ...map.values.slice(i * L, (i + 1) * L).map(String)].join(','));
  return `${lines.join('\n')}\n`;
}

/** @param {HeadMap} map */
export function toJson(map) {
  const L = map.tokens.length;
  return `${JSON.stringify({
    head: map.head + 1, title: map.title, sentence: map.sentence, source: map.source, tokens: map.tokens,
    shape: [L, L], rows: 'queries', columns: 'keys',
    weights: Array.from({ length: L }, (_, i) => map.values.slice(i * L, (i + 1) * L)),
  }, null, 1)}\n`;
}

const escapeXml = (/** @type {string} */ s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const textOn = (/** @type {number} */ v) => (v > 0.55 ? '#111' : '#fff');

/** @param {HeadMap} map */
export function toSvg(map) {
  const { left, top, cell, width, height, L } = mapLayout(map.tokens, map);
  if (L > LONG) throw new Error(`SVG export: a map of ${L} × ${L} weights is an element each, a file of about ${Math.round((L * L * 160) / 1e6)} MB; save it as PNG (every weight a pixel or more) or its numbers as CSV or JSON.`);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="13">`,
    `<title>${escapeXml(`${map.title}: ${map.sentence}`)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="bold" fill="#1b1f24">${escapeXml(map.title)}</text>`,
    `<text x="12" y="40" fill="#5a6470">${escapeXml(map.sentence)}</text>`,
  ];
  for (let i = 0; i < L; i += 1) {
    parts.push(`<text x="${left - 6}" y="${top + (i + 0.5) * cell + 4}" text-anchor="end" fill="#1b1f24">${escapeXml(clip(map.tokens[i]))}</text>`);
    parts.push(`<text transform="translate(${left + (i + 0.5) * cell} ${top - 6}) rotate(-45)" fill="#1b1f24">${escapeXml(clip(map.tokens[i]))}</text>`);
  }
  for (let i = 0; i < L; i += 1) {
    for (let j = 0; j < L; j += 1) {
      const v = map.values[i * L + j];
      const x = left + j * cell;
      const y = top + i * cell;
      parts.push(`<rect class="cell" x="${x}" y="${y}" width="${cell}" height="${cell}" fill="${sequentialColor(v)}" data-row="${i}" data-col="${j}" data-value="${v}"><title>${escapeXml(`${map.tokens[i]} → ${map.tokens[j]}: ${v}`)}</title></rect>`);
      if (v >= 0.005) parts.push(`<text x="${x + cell / 2}" y="${y + cell / 2 + 4}" text-anchor="middle" font-size="11" fill="${textOn(v)}">${v.toFixed(2).replace(/^0\./, '.')}</text>`);
    }
  }
  parts.push(`<text x="12" y="${height - 10}" fill="#5a6470" font-size="11">${escapeXml(FOOTER)}</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/**
 * The map drawn on a canvas at PNG_SCALE device pixels per CSS pixel; resolves to a PNG Blob.
 * @param {HeadMap} map
 * @returns {Promise<Blob>}
 */
export function toPng(map) {
  const { left, top, cell, width, height, L } = mapLayout(map.tokens, map);
  const canvas = document.createElement('canvas');
  canvas.width = width * PNG_SCALE;
  canvas.height = height * PNG_SCALE;
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  ctx.scale(PNG_SCALE, PNG_SCALE);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = '#1b1f24';
  ctx.font = `bold 15px "DejaVu Sans", Arial, sans-serif`;
  ctx.fillText(map.title, 12, 22);
  ctx.font = FONT;
  ctx.fillStyle = '#5a6470';
  ctx.fillText(L > LONG && map.sentence.length > 160 ? `${map.sentence.slice(0, 159)}…` : map.sentence, 12, 40);
  for (let i = 0; i < L; i += 1) {
    for (let j = 0; j < L; j += 1) {
      ctx.fillStyle = sequentialColor(map.values[i * L + j]);
      ctx.fillRect(left + j * cell, top + i * cell, cell, cell);
    }
  }
  const step = labelStep(cell);
  ctx.fillStyle = '#1b1f24';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let i = 0; i < L; i += step) ctx.fillText(clip(map.tokens[i]), left - 6, top + (i + 0.5) * cell);
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
  for (let j = 0; j < L; j += step) {
    ctx.save();
    ctx.translate(left + (j + 0.5) * cell, top - 6);
    ctx.rotate(-Math.PI / 4);
    ctx.fillText(clip(map.tokens[j]), 0, 0);
    ctx.restore();
  }
  ctx.font = '11px "DejaVu Sans", Arial, sans-serif';
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (let i = 0; cell >= 30 && i < L; i += 1) {
    for (let j = 0; j < L; j += 1) {
      const v = map.values[i * L + j];
      if (v < 0.005) continue;
      ctx.fillStyle = textOn(v);
      ctx.fillText(v.toFixed(2).replace(/^0\./, '.'), left + (j + 0.5) * cell, top + (i + 0.5) * cell);
    }
  }
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
  ctx.fillStyle = '#5a6470';
  ctx.fillText(FOOTER, 12, height - 10);
  return new Promise((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('export: the canvas could not be encoded as PNG'))), 'image/png'));
}

/**
 * @param {import('../../explorer/controller.js').Explorer} explorer
 * @param {HTMLElement} status
 */
function exporter(explorer, status) {
  return (/** @type {string} */ format) => async () => {
    try {
      const map = selectedHead(explorer);
      const name = `${baseName(map)}.${format}`;
      if (format === 'png') saveBlob(await toPng(map), name);
      if (format === 'svg') saveBlob(new Blob([toSvg(map)], { type: 'image/svg+xml' }), name);
      if (format === 'csv') saveBlob(new Blob([toCsv(map)], { type: 'text/csv' }), name);
      if (format === 'json') saveBlob(new Blob([toJson(map)], { type: 'application/json' }), name);
      status.textContent = `Saved ${name}.`;
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : String(error);
    }
  };
}

/**
 * Hook the exports to the explorer: a bar of all four formats under the selected head's map. If
 * the explorer's figure saves PNG and CSV itself (#save-png, #save-csv in an .export-row), only
 * the SVG picture and the JSON numbers are added beside them. Without the explorer's figure the
 * bar is returned for the caller to place.
 * @param {import('../../explorer/controller.js').Explorer} explorer read at the moment of each click
 * @returns {HTMLElement|null} the bar to place, or null when the buttons went into the explorer
 */
export function attachExport(explorer) {
  const status = el('span', { class: 'note export-status', 'aria-live': 'polite' });
  const run = exporter(explorer, status);
  const row = document.querySelector('#main-heatmap')?.closest('figure')?.querySelector('.export-row');
  if (row && document.getElementById('save-png') && document.getElementById('save-csv')) {
    row.append(
      el('button', { type: 'button', class: 'link-button', id: 'save-svg', 'data-export': 'svg', text: 'Save picture (SVG)', onclick: run('svg') }),
      el('button', { type: 'button', class: 'link-button', id: 'save-json', 'data-export': 'json', text: 'Save numbers (JSON)', onclick: run('json') }),
      status);
    return null;
  }
  const button = (/** @type {string} */ format, /** @type {string} */ label) => el('button', { type: 'button', class: 'button small', id: `save-${format}`, 'data-export': format, text: label, onclick: run(format) });
  const bar = el('div', { class: 'export-bar', id: 'lesson-export', role: 'group', 'aria-label': 'Export the selected head' },
    el('span', { class: 'export-label', text: 'Export this head:' }),
    button('png', 'PNG'), button('svg', 'SVG'), button('csv', 'CSV'), button('json', 'JSON'), status);
  const caption = document.querySelector('#main-heatmap')?.closest('figure')?.querySelector('figcaption');
  if (!caption) return bar;
  caption.append(bar);
  return null;
}
