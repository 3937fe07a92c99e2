// The combination step drawn as numbers: Concat(head_1, …, head_H) (a row of H·hd cells, one
// group per head) above W_O (E × E, columns aligned with the concat), and the output vector
// (E cells) beside W_O's rows: output_i = Σ_j W_O[i, j] · concat_j + b_i.

import { divergingColor, fitCanvas } from './heatmap.js';

const CELL = 4; // CSS px per number
const GAP = 2; // CSS px between head groups

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{ concat: ArrayLike<number>, wo: ArrayLike<number>, output: ArrayLike<number>, numHeads: number,
 *           embedDim: number, theme: {text:string, grid:string, font:string}, selectedHead: number }} o
 */
export function drawWoDiagram(canvas, o) {
  const { concat, wo, output, numHeads: H, embedDim: E, theme } = o;
  const hd = E / H;
  const maxAbs = (arr) => { let m = 0; for (let k = 0; k < arr.length; k += 1) m = Math.max(m, Math.abs(arr[k])); return m || 1; };
  const vectorScale = Math.max(maxAbs(concat), maxAbs(output));
  const woScale = maxAbs(wo);
  const offset = (k) => k * CELL + Math.floor(k / hd) * GAP; // position of number k with head gaps
  const span = offset(E - 1) + CELL;
  const left = 86;
  const labelRow = 16;
  const concatTop = labelRow + 2;
  const stripHeight = 14;
  const matrixTop = concatTop + stripHeight + 12;
  const outputLeft = left + span + 18;
  const cssWidth = outputLeft + stripHeight + 70;
  const cssHeight = matrixTop + span + 4;
  const { ctx, dpr } = fitCanvas(canvas, cssWidth, cssHeight);
  const px = (v) => Math.round(v * dpr);
  const rect = (x, y, w, h, color) => {
    ctx.fillStyle = color;
    ctx.fillRect(px(x), px(y), px(x + w) - px(x), px(y + h) - px(y));
  };

  for (let j = 0; j < E; j += 1) rect(left + offset(j), concatTop, CELL, stripHeight, divergingColor(concat[j] / vectorScale));
  for (let i = 0; i < E; i += 1) {
    for (let j = 0; j < E; j += 1) rect(left + offset(j), matrixTop + offset(i), CELL, CELL, divergingColor(wo[i * E + j] / woScale));
    rect(outputLeft, matrixTop + offset(i), stripHeight, CELL, divergingColor(output[i] / vectorScale));
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = 1;
  ctx.strokeRect(left - 0.5, concatTop - 0.5, span + 1, stripHeight + 1);
  ctx.strokeRect(left - 0.5, matrixTop - 0.5, span + 1, span + 1);
  ctx.strokeRect(outputLeft - 0.5, matrixTop - 0.5, stripHeight + 1, span + 1);
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
  ctx.fillText(`Concat (${H}×${hd})`, left - 8, concatTop + stripHeight / 2);
  ctx.fillText(`W_O (${E}×${E})`, left - 8, matrixTop + 8);
  ctx.textAlign = 'left';
  ctx.fillText('= output', outputLeft + stripHeight + 6, matrixTop + 8);
  ctx.fillText(`(${E})`, outputLeft + stripHeight + 6, matrixTop + 22);
  return { vectorScale, woScale };
}
