// The combination step drawn as numbers: Concat(head_1, …, head_H) (a row of H·hd cells, one
// group per head) above W_O (out × E, columns aligned with the concat), and the output vector
// (out cells) beside W_O's rows: output_i = Σ_j W_O[i, j] · concat_j + b_i. Beside it, each
// head's output for the token followed, and (for the designed heads) a head's rows of W_Q, W_K, W_V.

import { el } from './dom.js';
import { divergingColor, drawCells, drawStrip, fitCanvas } from './heatmap.js';

/** @param {ArrayLike<number>} values */
function maxAbs(values) {
  let m = 0;
  for (let k = 0; k < values.length; k += 1) m = Math.max(m, Math.abs(values[k]));
  return m || 1;
}

/** W_O on [-1, 1] and its largest magnitude, computed once a matrix: the same W_O is drawn again for every token followed. */
/** @type {WeakMap<ArrayLike<number>, { scale: number, values: Float32Array }>} */
const scaledMatrices = new WeakMap();
/** @param {ArrayLike<number>} wo */
function scaledOnce(wo) {
  let scaled = scaledMatrices.get(wo);
  if (!scaled) {
    const scale = maxAbs(wo);
    const values = new Float32Array(wo.length);
    for (let k = 0; k < wo.length; k += 1) values[k] = wo[k] / scale;
    scaled = { scale, values };
    scaledMatrices.set(wo, scaled);
  }
  return scaled;
}

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{ concat: ArrayLike<number>, wo: ArrayLike<number>, output: ArrayLike<number>, numHeads: number,
 *           embedDim: number, outDim?: number, theme: {text:string, grid:string, font:string, panel?:string, highlight?:string}, selectedHead: number }} o
 *   wo is row-major (outDim, embedDim), as PyTorch's out_proj.weight
 */
export function drawWoDiagram(canvas, o) {
  const { concat, wo, output, numHeads: H, embedDim: E, theme } = o;
  const outDim = o.outDim ?? E;
  const hd = E / H;
  // CSS px per number: 4 for the lesson's 64 wide model, down to 1 for 512
  const CELL = Math.max(1, Math.min(4, Math.floor(400 / Math.max(E, outDim))));
  const vectorScale = Math.max(maxAbs(concat), maxAbs(output));
  const { scale: woScale, values: scaled } = scaledOnce(wo);
  const offset = (/** @type {number} */ k) => k * CELL; // position of number k
  const span = offset(E - 1) + CELL;
  const outSpan = offset(outDim - 1) + CELL;
  const labels = [`Concat (${H}×${hd})`, `W_O (${outDim}×${E})`];
  const left = Math.max(86, Math.ceil(Math.max(...labels.map((l) => l.length)) * 6.6) + 14); // 11 px labels, right-aligned
  const labelRow = 16;
  const concatTop = labelRow + 2;
  const stripHeight = 14;
  const matrixTop = concatTop + stripHeight + 12;
  const outputLeft = left + span + 18;
  const cssWidth = outputLeft + stripHeight + 70;
  const cssHeight = matrixTop + outSpan + 4;
  const { ctx, dpr } = fitCanvas(canvas, cssWidth, cssHeight);
  const px = (/** @type {number} */ v) => Math.round(v * dpr);
  /** @param {number} x @param {number} y @param {number} w @param {number} h @param {string} color */
  const rect = (x, y, w, h, color) => {
    ctx.fillStyle = color;
    ctx.fillRect(px(x), px(y), px(x + w) - px(x), px(y + h) - px(y));
  };

  for (let j = 0; j < E; j += 1) rect(left + offset(j), concatTop, CELL, stripHeight, divergingColor(concat[j] / vectorScale));
  for (let i = 0; i < outDim; i += 1) rect(outputLeft, matrixTop + offset(i), stripHeight, CELL, divergingColor(output[i] / vectorScale));
  // W_O as one image; the gaps between heads are painted over it
  drawCells(ctx, scaled, outDim, E, px(left), px(matrixTop), px(left + E * CELL) - px(left), px(matrixTop + outDim * CELL) - px(matrixTop), true);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  // separators between heads' groups of head_dim numbers
  ctx.fillStyle = theme.panel || theme.grid;
  for (let h = 1; h < H; h += 1) {
    const x = left + h * hd * CELL - 0.5;
    ctx.fillRect(x, concatTop, 1, stripHeight);
    ctx.fillRect(x, matrixTop, 1, outSpan);
    if (outDim === E) {
      ctx.fillRect(left, matrixTop + h * hd * CELL - 0.5, span, 1);
      ctx.fillRect(outputLeft, matrixTop + h * hd * CELL - 0.5, stripHeight, 1);
    }
  }
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = 1;
  ctx.strokeRect(left - 0.5, concatTop - 0.5, span + 1, stripHeight + 1);
  ctx.strokeRect(left - 0.5, matrixTop - 0.5, span + 1, outSpan + 1);
  ctx.strokeRect(outputLeft - 0.5, matrixTop - 0.5, stripHeight + 1, outSpan + 1);
  if (o.selectedHead >= 0 && o.selectedHead < H) {
    ctx.strokeStyle = theme.highlight || theme.text;
    ctx.lineWidth = 2;
    ctx.strokeRect(left + offset(o.selectedHead * hd) - 1, concatTop - 1, hd * CELL + 2, stripHeight + 2);
  }
  ctx.fillStyle = theme.text;
  ctx.font = `11px ${theme.font}`;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'center';
  for (let h = 0; h < H; h += 1) {
    if (H <= 16 || h % 4 === 0) ctx.fillText(`H${h + 1}`, left + offset(h * hd) + (hd * CELL) / 2, labelRow / 2 + 1);
  }
  ctx.textAlign = 'right';
  ctx.fillText(labels[0], left - 8, concatTop + stripHeight / 2);
  ctx.fillText(labels[1], left - 8, matrixTop + 8);
  ctx.textAlign = 'left';
  ctx.fillText('= output', outputLeft + stripHeight + 6, matrixTop + 8);
  ctx.fillText(`(${outDim})`, outputLeft + stripHeight + 6, matrixTop + 22);
  return { vectorScale, woScale };
}

/** @type {Record<string, string>} */
const GROUP_LABELS = {
  position: 'position', pos: 'POS', semanticClass: 'class', nounAgreement: 'noun agr.',
  pronounAgreement: 'pron. agr.', firstToken: '', punctuation: '', chunkHead: '', subject: '',
  nounId: 'noun id', subjectId: 'subject id', modifiedId: 'modified id', unused: '',
};

/**
 * One head's rows of W_Q, W_K, W_V (hd × E each), stacked, with the feature groups of the
 * embedding marked under the columns.
 * @param {HTMLCanvasElement} canvas
 * @param {{ blocks: [string, ArrayLike<number>][], embedDim: number, groups: { name: string, start: number, width: number }[],
 *           theme: { text: string, grid: string, font: string } }} o  blocks: [name, hd × E rows]
 * @returns {HeadWeightsLayout} layout for hit tests
 */
export function drawHeadWeights(canvas, { blocks, embedDim: E, groups, theme }) {
  const cell = 6;
  const left = 34;
  const blockGap = 6;
  const rowsPer = blocks[0][1].length / E;
  const labelHeight = 58;
  const blockTops = blocks.map((_, b) => 2 + b * (rowsPer * cell + blockGap));
  const gridBottom = blockTops[blocks.length - 1] + rowsPer * cell;
  const { ctx, dpr } = fitCanvas(canvas, left + E * cell + 4, gridBottom + labelHeight);
  const px = (/** @type {number} */ v) => Math.round(v * dpr);
  blocks.forEach(([, data], b) => {
    // each block on its own scale: W_Q carries the sharpness factor, W_K and W_V are 0/1
    let maxAbs = 0;
    for (let k = 0; k < data.length; k += 1) maxAbs = Math.max(maxAbs, Math.abs(data[k]));
    const scaled = Float32Array.from(data, (v) => v / (maxAbs || 1));
    const y = blockTops[b];
    drawCells(ctx, scaled, rowsPer, E, px(left), px(y), px(left + E * cell) - px(left), px(y + rowsPer * cell) - px(y), true);
  });
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = 1;
  ctx.fillStyle = theme.text;
  ctx.font = `11px ${theme.font}`;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  blocks.forEach(([name], b) => {
    ctx.strokeRect(left - 0.5, blockTops[b] - 0.5, E * cell + 1, rowsPer * cell + 1);
    ctx.fillText(name, left - 4, blockTops[b] + (rowsPer * cell) / 2);
  });
  // feature groups: a tick at each group's start, its name written at −45° below
  ctx.textAlign = 'right';
  for (const g of groups) {
    const x = left + g.start * cell;
    ctx.beginPath();
    ctx.moveTo(x + 0.5, 2);
    ctx.lineTo(x + 0.5, gridBottom + 4);
    ctx.stroke();
    const label = GROUP_LABELS[g.name] ?? g.name;
    if (!label) continue;
    const cx = x + (g.width * cell) / 2;
    const cy = gridBottom + 8;
    const d = Math.SQRT1_2 * dpr;
    ctx.setTransform(d, -d, d, d, cx * dpr, cy * dpr);
    ctx.fillText(label, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  return { left, cell, blockTops, rowsPer, E, blocks };
}

/**
 * @typedef {{ left: number, cell: number, blockTops: number[], rowsPer: number, E: number,
 *             blocks: [string, ArrayLike<number>][] }} HeadWeightsLayout
 */

/**
 * The weight under the pointer in the head-weights view.
 * @param {HeadWeightsLayout | null} layout
 * @param {{ clientX: number, clientY: number }} event
 * @param {HTMLCanvasElement} canvas
 * @returns {{ block: string, row: number, col: number, value: number } | null}
 */
export function headWeightsCellAt(layout, event, canvas) {
  if (!layout) return null;
  const rect = canvas.getBoundingClientRect();
  const x = event.clientX - rect.left - layout.left;
  const col = Math.floor(x / layout.cell);
  if (x < 0 || col >= layout.E) return null;
  const y = event.clientY - rect.top;
  for (let b = 0; b < layout.blocks.length; b += 1) {
    const row = Math.floor((y - layout.blockTops[b]) / layout.cell);
    if (row >= 0 && row < layout.rowsPer) {
      return { block: layout.blocks[b][0], row, col, value: layout.blocks[b][1][row * layout.E + col] };
    }
  }
  return null;
}

/** @param {HTMLElement} container */
function build(container) {
  container.replaceChildren(
    el('p', { class: 'note', id: 'wo-formula' }),
    el('div', { class: 'wo-view', id: 'wo-view-main' },
      el('div', { class: 'wo-column' },
        el('span', { class: 'wo-label', text: "Each head's output for this token: the attention-weighted average of its values" }),
        el('ol', { id: 'wo-heads', class: 'wo-heads', 'aria-label': 'Head outputs' })),
      el('div', { class: 'wo-op', 'aria-hidden': 'true', text: '→' }),
      el('figure', { class: 'wo-column' }, el('canvas', { id: 'wo-diagram', role: 'img' }), el('figcaption', { id: 'wo-output-values', class: 'wo-values' }))),
    el('p', { class: 'note' }, 'One cell per number; purple is negative, orange positive, white zero. Hover or click a token above to follow it through. ', el('span', { id: 'wo-note' })));
}

/**
 * The W_O step for one token: each head's output, their concatenation times W_O, the output.
 * @param {HTMLElement} container  built on first use
 * @param {{ token: string, position: number, numHeads: number, headDim: number, embedDim: number, outDim: number,
 *           headOutputs: ArrayLike<number>[], concat: ArrayLike<number>, output: Float32Array, wo: ArrayLike<number>,
 *           selectedHead: number, titleOf: (h: number) => string, formula: string, note: string, theme: import('./theme.js').Theme }} o
 *   headOutputs[h]: head h's hd numbers for this token; concat (E), output (outDim), wo (outDim × E)
 */
export function renderWoView(container, o) {
  if (!container.querySelector('#wo-diagram')) build(container);
  // every id is one build() made
  const q = (/** @type {string} */ id) => /** @type {HTMLElement} */ (container.querySelector(`#${id}`));
  const H = o.numHeads;
  q('wo-formula').textContent = o.formula;
  const list = q('wo-heads');
  if (list.children.length !== H) {
    list.replaceChildren(...Array.from({ length: H }, (_, h) => el('li', { class: 'wo-head' },
      el('span', { class: 'wo-head-name', text: `H${h + 1}` }), el('canvas', { 'aria-hidden': 'true' }), el('span', { class: 'wo-values' }))));
  }
  let scale = 0;
  for (let k = 0; k < o.concat.length; k += 1) scale = Math.max(scale, Math.abs(o.concat[k]));
  for (const v of o.output) scale = Math.max(scale, Math.abs(v));
  scale = scale || 1;
  const cellWidth = Math.max(1, Math.min(12, Math.floor(192 / o.headDim)));
  [...list.children].forEach((row, h) => {
    const values = o.headOutputs[h];
    drawStrip(/** @type {HTMLCanvasElement} */ (row.querySelector('canvas')), values, { cellWidth, cellHeight: 14, scale, theme: o.theme });
    const text = Array.from(values, (v) => v.toFixed(2));
    /** @type {HTMLElement} */ (row.querySelector('.wo-values')).textContent = o.headDim <= 16 ? text.join(' ') : `${text.slice(0, 8).join(' ')} … (${o.headDim} numbers)`;
    row.classList.toggle('selected', h === o.selectedHead);
    row.setAttribute('aria-label', `${o.titleOf(h)} output: ${text.join(', ')}`);
  });
  const diagram = /** @type {HTMLCanvasElement} */ (q('wo-diagram'));
  const { woScale } = drawWoDiagram(diagram, {
    concat: o.concat, wo: o.wo, output: o.output, numHeads: H, embedDim: o.embedDim, outDim: o.outDim, theme: o.theme, selectedHead: o.selectedHead,
  });
  diagram.setAttribute('aria-label', `Concatenated head outputs (${o.embedDim} numbers) times W_O (${o.outDim} by ${o.embedDim}, largest magnitude ${woScale.toFixed(2)}) gives the output vector of ${o.outDim} numbers for “${o.token}”.`);
  q('wo-output-values').textContent = `output[0..7] = ${Array.from(o.output.subarray(0, 8), (v) => v.toFixed(2)).join(' ')} …\ncolour scale ±${scale.toFixed(2)} for the vectors, ±${woScale.toFixed(2)} for W_O`;
  q('wo-note').textContent = o.note;
}
