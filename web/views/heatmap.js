// Heatmaps on canvas: crisp at any devicePixelRatio (cells are placed on whole device pixels),
// token labels on both axes, colour-blind-safe scales (viridis; purple–orange for differences).
// Each canvas remembers what it last showed (drawnOn): its layout for pointer hit tests, and
// the values themselves, which tooltips, exports and tests read back.

/** @param {[number, number, number][]} anchors  RGB, evenly spaced over 0..1 */
function lut(anchors) {
  const table = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i += 1) {
    const t = (i / 255) * (anchors.length - 1);
    const k = Math.min(Math.floor(t), anchors.length - 2);
    const f = t - k;
    for (let c = 0; c < 3; c += 1) table[i * 3 + c] = anchors[k][c] + (anchors[k + 1][c] - anchors[k][c]) * f;
  }
  return table;
}

// viridis (matplotlib), sampled every 0.1
const VIRIDIS = lut([[68, 1, 84], [72, 35, 116], [64, 67, 135], [52, 94, 141], [41, 120, 142], [32, 144, 140],
  [34, 167, 132], [68, 190, 112], [121, 209, 81], [189, 222, 38], [253, 231, 37]]);
// PuOr (ColorBrewer), purple for negative, orange for positive
const PUOR = lut([[45, 0, 75], [84, 39, 136], [128, 115, 172], [178, 171, 210], [216, 218, 235], [247, 247, 247],
  [254, 224, 182], [253, 184, 99], [224, 130, 20], [179, 88, 6], [127, 59, 8]]);

const cssColors = (/** @type {Uint8ClampedArray} */ table) => Array.from({ length: 256 }, (_, i) => `rgb(${table[i * 3]},${table[i * 3 + 1]},${table[i * 3 + 2]})`);
const VIRIDIS_CSS = cssColors(VIRIDIS);
const PUOR_CSS = cssColors(PUOR);

/** CSS colour of a weight in [0, 1] (viridis). @param {number} value */
export function sequentialColor(value) {
  return VIRIDIS_CSS[Math.max(0, Math.min(255, Math.round(value * 255))) || 0];
}

/** CSS colour of a value in [-1, 1] (purple–white–orange). @param {number} value */
export function divergingColor(value) {
  return PUOR_CSS[Math.max(0, Math.min(255, Math.round((value + 1) * 127.5))) || 0];
}

/** Long maps (long-maps.js) where a page reads long texts, set by useLongMaps. @type {typeof import('./long-maps.js') | null} */
let long = null;
/** Draw maps of long texts smaller than 3 px a cell, max-pooled. @param {typeof import('./long-maps.js')} m */
export const useLongMaps = (m) => { long = m; };

// One small canvas per target canvas: sharing one would make every target wait for the others.
/** @type {WeakMap<HTMLCanvasElement, HTMLCanvasElement>} */
const cellCanvases = new WeakMap();

/**
 * Paint a (rows × cols) grid of values into the device-pixel rectangle (x, y, w, h): one pixel
 * per value on a small canvas, scaled up without smoothing. One drawImage instead of a fillRect
 * per cell; edges stay sharp.
 * @param {CanvasRenderingContext2D} ctx
 * @param {ArrayLike<number>} values  row-major
 * @param {number} rows
 * @param {number} cols
 * @param {number} x
 * @param {number} y
 * @param {number} w
 * @param {number} h
 * @param {boolean} [diverging]  values in [-1, 1]
 */
export function drawCells(ctx, values, rows, cols, x, y, w, h, diverging) {
  if (long) [values, rows, cols] = long.cellsFor(values, rows, cols, w, h);
  let cellCanvas = cellCanvases.get(ctx.canvas);
  if (!cellCanvas) {
    cellCanvas = document.createElement('canvas');
    cellCanvases.set(ctx.canvas, cellCanvas);
  }
  if (cellCanvas.width !== cols) cellCanvas.width = cols;
  if (cellCanvas.height !== rows) cellCanvas.height = rows;
  const cellCtx = /** @type {CanvasRenderingContext2D} */ (cellCanvas.getContext('2d', { willReadFrequently: false }));
  const image = cellCtx.createImageData(cols, rows);
  const table = diverging ? PUOR : VIRIDIS;
  const pixels = image.data;
  for (let k = 0; k < rows * cols; k += 1) {
    const v = values[k];
    if (Number.isNaN(v)) { pixels[k * 4 + 3] = 0; continue; }
    const i = Math.max(0, Math.min(255, Math.round(diverging ? (v + 1) * 127.5 : v * 255))) * 3;
    pixels[k * 4] = table[i];
    pixels[k * 4 + 1] = table[i + 1];
    pixels[k * 4 + 2] = table[i + 2];
    pixels[k * 4 + 3] = 255;
  }
  cellCtx.putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cellCanvas, 0, 0, cols, rows, x, y, w, h);
}

/** @param {number} value @param {boolean} [diverging] */
function textColorOn(value, diverging) {
  if (diverging) return Math.abs(value) > 0.55 ? '#fff' : '#111';
  return value > 0.55 ? '#111' : '#fff';
}

/** Canvas sizes grow and shrink in steps of this many CSS px: changing a canvas's size
 *  reallocates its pixels, the costliest part of a redraw, so nearby sizes share one. */
const SIZE_STEP = 32;

/** Size a canvas for CSS size (w, h) at the device pixel ratio; returns its 2D context. With
 *  `step`, the canvas is made up to SIZE_STEP px larger (transparent margin) to keep its size,
 *  but no wider than `room` (the width its box has) unless it needs to be.
 * @param {HTMLCanvasElement} canvas
 * @param {number} cssWidth
 * @param {number} cssHeight
 * @param {boolean} [step]
 * @param {number} [room]
 */
export function fitCanvas(canvas, cssWidth, cssHeight, step = false, room = Infinity) {
  const dpr = window.devicePixelRatio || 1;
  if (step) {
    cssWidth = Math.min(Math.ceil(cssWidth / SIZE_STEP) * SIZE_STEP, Math.max(cssWidth, room));
    cssHeight = Math.ceil(cssHeight / SIZE_STEP) * SIZE_STEP;
  }
  const width = Math.max(1, Math.round(cssWidth * dpr));
  const height = Math.max(1, Math.round(cssHeight * dpr));
  if (canvas.width !== width) canvas.width = width;
  if (canvas.height !== height) canvas.height = height;
  const styleWidth = `${cssWidth}px`, styleHeight = `${cssHeight}px`;
  if (canvas.style.width !== styleWidth) canvas.style.width = styleWidth;
  if (canvas.style.height !== styleHeight) canvas.style.height = styleHeight;
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return { ctx, dpr };
}

/** @param {string} label @param {number} max */
function shorten(label, max) {
  return label.length > max ? `${label.slice(0, max - 1)}…` : label;
}

/** Labels shrink to this size (CSS px) before some are left out. */
const MIN_LABEL_FONT = 9;

/**
 * Which of n labels, `spacing` CSS px apart, are drawn so that none overlaps another: every
 * step-th, and the named ones (a hovered or highlighted token), before which the others within
 * reach give way.
 * @param {number} n @param {number} spacing  between neighbours @param {number} room  one label needs
 * @param {number[]} named
 */
function labelsShown(n, spacing, room, named) {
  const step = Math.max(1, Math.ceil(room / spacing));
  const near = (/** @type {number} */ i) => named.some((k) => k !== i && Math.abs(k - i) * spacing < room);
  const shown = [];
  for (let i = 0; i < n; i += 1) if (named.includes(i) || (i % step === 0 && !near(i))) shown.push(i);
  return shown;
}

/**
 * Draw an (rows × cols) map. Its token labels are as large as the cells allow (13 px down to
 * 9 px); the column labels are turned by 45°, or upright (90°) where 45° would leave some out;
 * where the cells are smaller still, every few tokens are named, and always the highlighted
 * row and the hovered cell's row and column (in bold), so that any token is named by pointing
 * at it.
 * @param {HTMLCanvasElement} canvas
 * @param {object} o
 * @param {ArrayLike<number>} o.values row-major
 * @param {number} o.rows
 * @param {number} o.cols
 * @param {string[]} [o.rowLabels]
 * @param {string[]} [o.colLabels]
 * @param {number} o.width CSS width available
 * @param {number} [o.maxCell] largest cell in CSS px
 * @param {boolean} [o.diverging] values in [-1, 1]
 * @param {number} [o.highlightRow]
 * @param {{row:number,col:number}|null} [o.hoverCell]
 * @param {boolean} [o.showValues] write values in cells that are large enough
 * @param {boolean} [o.stableSize] round the canvas size up (default true; see SIZE_STEP)
 * @param {{text:string, grid:string, highlight:string, font:string}} o.theme
 * @returns {{left:number, top:number, cell:number, rows:number, cols:number}} layout for hit tests
 */
export function drawHeatmap(canvas, o) {
  const { values, rows, cols, theme } = o;
  const { rowLabels, colLabels } = o;
  const withLabels = !!(rowLabels && colLabels);
  const maxChars = 11;
  let left = 2;
  let top = 2;
  let fontSize = 0;
  let angle = 45;
  let ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  const cellFor = (/** @type {number} */ l) => Math.max(long ? long.leastCell(cols, o.width - l - 8) : 3, Math.min(o.maxCell || 40, Math.floor((o.width - l - 8) / cols)));
  let cell = cellFor(left);
  let widestCol = 0;
  if (rowLabels && colLabels) {
    const widest = (/** @type {string[]} */ labels) => Math.max(...labels.map((l) => ctx.measureText(shorten(l, maxChars)).width), 10);
    const measure = (/** @type {number} */ size) => {
      ctx.font = `${size}px ${theme.font}`;
      fontSize = size;
      left = Math.ceil(widest(rowLabels)) + 8;
      cell = cellFor(left);
    };
    measure(Math.max(10, Math.min(13, (o.maxCell || 40) * 0.4)));
    // a row needs fontSize + 1 px: smaller labels before fewer labels
    if (cell < fontSize + 1) measure(Math.max(MIN_LABEL_FONT, Math.min(fontSize, cell - 1)));
    widestCol = widest(colLabels);
    angle = Math.ceil(((fontSize + 3) * Math.SQRT2) / cell) > 1 ? 90 : 45;
    top = angle === 45 ? Math.ceil(widestCol * 0.72) + 12 : Math.ceil(widestCol) + 10;
  }
  const cssWidth = left + cell * cols + (withLabels ? Math.ceil(angle === 45 ? fontSize * 1.2 : fontSize * 0.6) : 2);
  const cssHeight = top + cell * rows + 2;
  // as wide as the map: where even the smallest cells do not fit, wider than its box, which scrolls
  const fitted = fitCanvas(canvas, cssWidth, cssHeight, o.stableSize !== false, o.width);
  ctx = fitted.ctx;
  const { dpr } = fitted;
  const px = (/** @type {number} */ v) => Math.round(v * dpr);

  // cells, in device pixels so that edges fall on whole pixels
  drawCells(ctx, values, rows, cols, px(left), px(top), px(left + cols * cell) - px(left), px(top + rows * cell) - px(top), o.diverging);
  if (o.showValues && cell >= 30) {
    ctx.font = `${Math.round(Math.min(11, cell * 0.3) * dpr)}px ${theme.font}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (let i = 0; i < rows; i += 1) {
      for (let j = 0; j < cols; j += 1) {
        const v = values[i * cols + j];
        if (!(Math.abs(v) >= 0.005)) continue;
        ctx.fillStyle = textColorOn(v, o.diverging);
        ctx.fillText(v.toFixed(2).replace(/^0\./, '.').replace(/^-0\./, '−.'), px(left + (j + 0.5) * cell), px(top + (i + 0.5) * cell));
      }
    }
  }
  if (o.highlightRow != null && o.highlightRow >= 0 && o.highlightRow < rows) {
    ctx.strokeStyle = theme.highlight;
    ctx.lineWidth = Math.max(2, Math.round(2 * dpr));
    ctx.strokeRect(px(left) + 1, px(top + o.highlightRow * cell) + 1, px(cell * cols) - 2, px(cell) - 2);
  }
  if (o.hoverCell) {
    ctx.strokeStyle = theme.text;
    ctx.lineWidth = Math.max(1, Math.round(dpr));
    ctx.strokeRect(px(left + o.hoverCell.col * cell) + 0.5, px(top + o.hoverCell.row * cell) + 0.5, px(cell) - 1, px(cell) - 1);
  }

  // labels, in CSS pixels
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  /** @type {{ rows: number[], cols: number[], named: { rows: number[], cols: number[] }, fontSize: number, angle: number } | null} */
  let labels = null;
  if (rowLabels && colLabels) {
    const inRange = (/** @type {number|undefined|null} */ i, /** @type {number} */ n) => i != null && i >= 0 && i < n;
    const boldRows = [o.highlightRow, o.hoverCell?.row].filter((i) => inRange(i, rows));
    const boldCols = [o.hoverCell?.col].filter((j) => inRange(j, cols));
    const font = (/** @type {boolean} */ bold) => `${bold ? 'bold ' : ''}${fontSize}px ${theme.font}`;
    labels = {
      rows: labelsShown(rows, cell, fontSize + 1, /** @type {number[]} */ (boldRows)),
      // turned labels sit cell·sin 45° apart, upright ones a cell apart
      cols: labelsShown(cols, angle === 45 ? cell / Math.SQRT2 : cell, angle === 45 ? fontSize + 3 : fontSize + 1, /** @type {number[]} */ (boldCols)),
      named: { rows: /** @type {number[]} */ (boldRows), cols: /** @type {number[]} */ (boldCols) },
      fontSize, angle,
    };
    ctx.fillStyle = theme.text;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const i of labels.rows) {
      ctx.font = font(boldRows.includes(i));
      ctx.fillText(shorten(rowLabels[i], maxChars), left - 6, top + (i + 0.5) * cell);
    }
    // column labels turned by the angle: one rotated transform; each anchor (x, y) in CSS px
    // becomes (c·x − s·y, s·x + c·y) in the rotated frame
    const c = angle === 45 ? Math.SQRT1_2 : 0, s = angle === 45 ? Math.SQRT1_2 : 1;
    ctx.setTransform(dpr * c, -dpr * s, dpr * s, dpr * c, 0, 0);
    ctx.textAlign = 'left';
    for (const j of labels.cols) {
      const x = left + (j + 0.5) * cell, y = top - 6;
      ctx.font = font(boldCols.includes(j));
      ctx.fillText(shorten(colLabels[j], maxChars), c * x - s * y, s * x + c * y);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  const layout = { left, top, cell, rows, cols };
  drawn.set(canvas, { layout, values, rows, cols, diverging: !!o.diverging, labels });
  return layout;
}

/**
 * @typedef {{ layout: { left: number, top: number, cell: number, rows: number, cols: number } | null,
 *             values: ArrayLike<number>, rows: number, cols: number, diverging: boolean,
 *             labels?: { rows: number[], cols: number[], named: { rows: number[], cols: number[] }, fontSize: number, angle: number } | null }} Drawn
 *   labels: the indices of the row and column labels drawn, of those named in bold (the highlighted
 *   row, the hovered cell's row and column), their size in CSS px and the columns' angle
 */
// canvas -> what its last drawHeatmap or drawStrip showed
/** @type {WeakMap<HTMLCanvasElement, Drawn>} */
const drawn = new WeakMap();

/**
 * What a canvas last showed: { layout, values, rows, cols, diverging, labels }, or null.
 * @param {HTMLCanvasElement} canvas
 * @returns {Drawn | null}
 */
export function drawnOn(canvas) {
  return drawn.get(canvas) ?? null;
}

/**
 * Which cell of the map on `canvas` a pointer event is over, or null.
 * @param {HTMLCanvasElement} canvas
 * @param {{ clientX: number, clientY: number }} event
 * @returns {{ row: number, col: number } | null}
 */
export function cellAt(canvas, event) {
  const shown = drawn.get(canvas);
  if (!shown || !shown.layout) return null;
  const { layout } = shown;
  const rect = canvas.getBoundingClientRect();
  // CSS px of the drawing per CSS px on screen (a box narrower than the canvas may shrink it)
  const scale = (parseFloat(canvas.style.width) || rect.width) / (rect.width || 1);
  const x = (event.clientX - rect.left) * scale - layout.left;
  const y = (event.clientY - rect.top) * scale - layout.top;
  const col = Math.floor(x / layout.cell);
  const row = Math.floor(y / layout.cell);
  if (x < 0 || y < 0 || row >= layout.rows || col >= layout.cols) return null;
  return { row, col };
}

/**
 * Paint a horizontal colour bar (legend).
 * @param {HTMLCanvasElement} canvas
 * @param {boolean} diverging
 * @param {number} cssWidth
 * @param {number} cssHeight
 */
export function drawLegend(canvas, diverging, cssWidth, cssHeight) {
  const { ctx } = fitCanvas(canvas, cssWidth, cssHeight);
  const w = canvas.width, h = canvas.height;
  for (let x = 0; x < w; x += 1) {
    const t = x / (w - 1);
    ctx.fillStyle = diverging ? divergingColor(t * 2 - 1) : sequentialColor(t);
    ctx.fillRect(x, 0, 1, h);
  }
}

/**
 * A strip of numbers as coloured cells (for vectors in the W_O view).
 * @param {HTMLCanvasElement} canvas
 * @param {ArrayLike<number>} values
 * @param {{ cellWidth: number, cellHeight: number, scale: number, groups?: number, gap?: number, theme: { grid: string } }} o
 *   scale: the value drawn at full colour; groups: gaps of `gap` px between that many equal groups
 */
export function drawStrip(canvas, values, { cellWidth, cellHeight, scale, groups = 0, gap = 0, theme }) {
  const n = values.length;
  const groupGaps = groups > 1 ? (groups - 1) * gap : 0;
  const cssWidth = n * cellWidth + groupGaps;
  const { ctx, dpr } = fitCanvas(canvas, cssWidth, cellHeight);
  const px = (/** @type {number} */ v) => Math.round(v * dpr);
  const perGroup = groups > 1 ? n / groups : n;
  for (let k = 0; k < n; k += 1) {
    const x = k * cellWidth + (groups > 1 ? Math.floor(k / perGroup) * gap : 0);
    ctx.fillStyle = divergingColor(scale > 0 ? values[k] / scale : 0);
    ctx.fillRect(px(x), 0, px(x + cellWidth) - px(x), px(cellHeight));
  }
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = 1;
  ctx.strokeRect(0.5, 0.5, canvas.width - 1, canvas.height - 1);
  drawn.set(canvas, { layout: null, values, rows: 1, cols: n, diverging: true });
}
