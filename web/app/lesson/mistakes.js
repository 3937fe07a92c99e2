// Section: common mistakes, demonstrated on the core.
//  1. "More heads is always better": the same weight matrices split into h = 1, 2, 4, 8, 16 heads.
//  2. "Forgetting W_O": skipOutProj leaves the heads side by side, never mixed.

import { el, section, segmented, fmt, maxAbsDiff, themeColors, onThemeChange, scroller } from './dom.js';
import { math } from './math.js';
import { drawHeatmap, drawStrip } from '../../views/heatmap.js';
import { exampleInput, D_MODEL, NUM_HEADS } from './inputs.js';
import { designedStateDict } from '../../sources/designed-heads.js';

export const HEAD_COUNTS = [1, 2, 4, 8, 16];

/**
 * Mean Jensen–Shannon divergence over pairs of distinct heads (nats), from the core.
 * @param {import('../../lib/index.js').MhaModule} mha
 * @param {import('../../lib/index.js').Tensor} weights
 */
export function meanPairwiseJsd(mha, weights) {
  const { jsd, numHeads: H } = mha.headSimilarity(weights);
  if (H < 2) return NaN;
  let sum = 0;
  for (let a = 0; a < H; a += 1) for (let b = a + 1; b < H; b += 1) sum += jsd[a * H + b];
  return sum / ((H * (H - 1)) / 2);
}

/**
 * The designed weights run as numHeads = h: same matrices, heads cut at other boundaries.
 * @param {import('../../lib/index.js').MhaModule} mha
 * @param {ReturnType<typeof exampleInput>} input
 * @param {number} h
 */
export function headCountRun(mha, input, h) {
  const attention = new mha.MultiHeadAttention({ embedDim: D_MODEL, numHeads: h });
  try {
    attention.loadStateDict(designedStateDict());
    // needWeights is true by default
    const weights = /** @type {import('../../lib/index.js').Tensor} */ (attention.forward({ query: { data: input.x, shape: [input.L, D_MODEL] }, averageAttnWeights: false }).weights);
    const stats = mha.headStatistics(weights).heads;
    return {
      h, dk: D_MODEL / h, weights: weights.data, L: input.L,
      diversity: meanPairwiseJsd(mha, weights),
      meanMax: stats.reduce((s, x) => s + x.maxAttention, 0) / stats.length,
      meanEntropy: stats.reduce((s, x) => s + x.normalizedEntropy, 0) / stats.length,
    };
  } finally {
    attention.dispose();
  }
}

/** @typedef {() => import('../../views/theme.js').Theme} ThemeReader */

/** @param {import('../../lib/index.js').MhaModule} mha @param {ThemeReader} getTheme */
function moreHeadsDemo(mha, getTheme) {
  const input = exampleInput(0);
  const runs = HEAD_COUNTS.map((h) => headCountRun(mha, input, h));
  const table = el('table', { class: 'lesson-table heads-table', id: 'heads-table' });
  const draw = () => {
    const theme = getTheme();
    /** @type {NodeListOf<HTMLCanvasElement>} */ (table.querySelectorAll('canvas[data-h]')).forEach((canvas) => {
      const run = runs[HEAD_COUNTS.indexOf(Number(canvas.dataset.h))];
      const k = Number(canvas.dataset.head);
      drawHeatmap(canvas, { values: run.weights.subarray(k * run.L * run.L, (k + 1) * run.L * run.L), rows: run.L, cols: run.L, width: 52, maxCell: 4, theme, stableSize: false });
    });
  };
  table.append(
    el('caption', { text: `“${input.text}” (${input.L} tokens), d_model = 64 fixed. Diversity: mean Jensen–Shannon divergence between the maps of every pair of heads (0 = identical, ln 2 ≈ 0.693 = disjoint), from the core.` }),
    el('thead', {}, el('tr', {}, ['h', 'd_k per head', 'Every head\'s map', 'Diversity', 'Largest weight per row (mean)'].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {}, runs.map((run) => el('tr', { 'data-h': String(run.h), class: run.h === NUM_HEADS ? 'designed-row' : '' },
      el('th', { scope: 'row', text: String(run.h) }),
      el('td', { class: 'num', text: String(run.dk) }),
      el('td', {}, el('div', { class: 'tiny-maps' }, Array.from({ length: run.h }, (_, k) => el('canvas', { 'data-h': String(run.h), 'data-head': String(k), 'aria-hidden': 'true' })))),
      el('td', { class: 'num diversity', text: Number.isNaN(run.diversity) ? '— (one head)' : fmt(run.diversity, 3) }),
      el('td', { class: 'num', text: fmt(run.meanMax, 2) })))));
  const at = (/** @type {number} */ h) => runs[HEAD_COUNTS.indexOf(h)];
  const r1 = at(1), r8 = at(NUM_HEADS), r16 = at(16);
  const verdictText = `Too few heads and the relations must share one softmax: at h = 1 each row has a single distribution for all eight relations, so the largest scores win (largest weight per row ${fmt(r1.meanMax, 2)}) and most relations vanish from the map. Too many and each head is too narrow: at h = 16 a head has d_k = 4, so its scores Q·Kᵀ form a matrix of rank at most 4 over ${input.L} tokens, and a head that got the empty half of a designed head falls back to a near-uniform map. Going from 8 to 16 heads the maps ${r16.diversity < r8.diversity ? 'become less diverse' : 'do not become more diverse in proportion'} (${fmt(r8.diversity, 3)} → ${fmt(r16.diversity, 3)} nats) and less decisive (largest weight per row ${fmt(r8.meanMax, 2)} → ${fmt(r16.meanMax, 2)}). These weights were written for h = 8; in a trained model the best h is likewise found by experiment, not by “more”.`;
  const wrap = el('div', { class: 'demo', id: 'mistake-heads' },
    el('h3', { text: 'Mistake 1: “more heads is always better”' }),
    el('p', {}, 'With ', math(String.raw`d_{\text{model}}`), ' fixed, every extra head halves ', math('d_k'),
      '. Below, the same 64 × 64 matrices W_Q, W_K, W_V and W_O (the explorer\'s designed heads, written for 8 heads of 8) are run with ',
      el('code', { text: 'numHeads' }), ' set to 1, 2, 4, 8 and 16: only the boundaries between heads move.'),
    scroller('table-wrap', 'The mistakes and what they give', table),
    el('p', { id: 'heads-verdict', text: verdictText }));
  return { node: wrap, draw };
}

/** @param {import('../../lib/index.js').MhaModule} mha @param {ThemeReader} getTheme */
function forgettingWoDemo(mha, getTheme) {
  const input = exampleInput(0);
  const attention = new mha.MultiHeadAttention({ embedDim: D_MODEL, numHeads: NUM_HEADS });
  attention.loadStateDict(designedStateDict());
  // A W_O that mixes: PyTorch's default initialisation (seed 0) stands in for a trained one.
  const donor = new mha.MultiHeadAttention({ embedDim: D_MODEL, numHeads: NUM_HEADS, seed: 0 });
  attention.setParameter('out_proj.weight', donor.getParameter('out_proj.weight'));
  donor.dispose();
  const E = D_MODEL;
  const d = E / NUM_HEADS;
  const state = { applyWo: true, token: Math.max(0, input.labels.indexOf('it')) };
  const toggle = el('input', { type: 'checkbox', id: 'wo-toggle', checked: true });
  const outputCanvas = el('canvas', { role: 'img', id: 'wo-demo-output' });
  const headsCanvas = el('canvas', { role: 'img', id: 'wo-demo-sources' });
  const numbers = el('p', { class: 'vector-line' });
  const verdict = el('p', { id: 'wo-verdict' });
  const node = el('div', { class: 'demo', id: 'mistake-wo' });
  /** @type {{ output: number[], concat: number[], mixed: number, diffFromConcat: number } | null} */
  let last = null;

  function render() {
    const theme = getTheme();
    const { token: t } = state;
    const result = attention.forward({
      query: { data: input.x, shape: [input.L, E] }, needWeights: false, returnConcat: true, skipOutProj: !state.applyWo,
    });
    const output = result.output.data.slice(t * E, (t + 1) * E);
    const concat = /** @type {import('../../lib/index.js').Tensor} */ (result.concat).data.slice(t * E, (t + 1) * E); // returnConcat
    // sources[g][r]: share of output number r that head g can feed: Σ_c |M[r, g·d + c]| over the row's
    // total, where M is W_O, or the identity when W_O is skipped (the output is then the concatenation)
    const Wo = attention.getParameter('out_proj.weight').data;
    const sources = new Float32Array(NUM_HEADS * E);
    for (let r = 0; r < E; r += 1) {
      let total = 0;
      for (let g = 0; g < NUM_HEADS; g += 1) {
        let s = 0;
        for (let c = 0; c < d; c += 1) s += state.applyWo ? Math.abs(Wo[r * E + g * d + c]) : (r === g * d + c ? 1 : 0);
        sources[g * E + r] = s;
        total += s;
      }
      for (let g = 0; g < NUM_HEADS; g += 1) sources[g * E + r] = total > 0 ? sources[g * E + r] / total : 0;
    }
    let mixed = 0;
    for (let r = 0; r < E; r += 1) {
      let count = 0;
      for (let g = 0; g < NUM_HEADS; g += 1) if (sources[g * E + r] > 0.05) count += 1;
      if (count > 1) mixed += 1;
    }
    const scale = Math.max(1e-6, ...Array.from(output, Math.abs));
    drawStrip(outputCanvas, output, { cellWidth: 9, cellHeight: 22, scale, groups: NUM_HEADS, gap: 4, theme });
    drawHeatmap(headsCanvas, {
      values: sources, rows: NUM_HEADS, cols: E, width: 8 + 70 + E * 14, maxCell: 14,
      rowLabels: Array.from({ length: NUM_HEADS }, (_, g) => `head ${g + 1}`), colLabels: Array.from({ length: E }, (_, r) => (r % 8 === 0 ? String(r) : '')), theme,
    });
    const diffFromConcat = maxAbsDiff(output, concat);
    numbers.replaceChildren(el('span', { class: 'vector-name', text: `output[“${input.labels[t]}”][0..7] = ` }),
      el('code', { id: 'wo-demo-numbers', text: `[${Array.from(output.subarray(0, 8), (v) => fmt(v, 3)).join(', ')}]` }));
    verdict.textContent = state.applyWo
      ? `With W_O: ${mixed} of the 64 output numbers draw more than 5% from two or more heads; max |output − concat| = ${fmt(diffFromConcat, 3)}. The next layer receives the heads' findings combined.`
      : `Without W_O the output is the concatenation itself (max |output − concat| = ${diffFromConcat === 0 ? '0' : diffFromConcat.toExponential(1)}, from the core): numbers 0–7 are head 1's context vector, 8–15 head 2's, and so on. ${mixed} output numbers mix heads; nothing learned weighs one head against another.`;
    node.dataset.applyWo = String(state.applyWo);
    node.dataset.mixed = String(mixed);
    node.dataset.diffFromConcat = String(diffFromConcat);
    last = { output: Array.from(output), concat: Array.from(concat), mixed, diffFromConcat };
    outputCanvas.setAttribute('aria-label', `Output vector for “${input.labels[t]}”, 64 numbers${state.applyWo ? '' : ', equal to the concatenated heads'}`);
    headsCanvas.setAttribute('aria-label', `Which head each of the 64 output numbers comes from: ${mixed} numbers mix several heads.`);
  }
  toggle.addEventListener('change', () => { state.applyWo = toggle.checked; render(); });
  const tokenPicker = segmented('wo-token', input.labels.map((label, i) => ({ value: i, label })), state.token, (v) => { state.token = v; render(); }, 'Token');
  node.append(
    el('h3', { text: 'Mistake 2: forgetting W_O' }),
    el('p', {}, 'After concatenation comes one more learned matrix, ', math('W^O'),
      '. Leave it out and the heads\' outputs are simply laid side by side: each output number is one number of one head, and nothing combines what the heads found. Here the designed heads run with a W_O that mixes (PyTorch\'s default initialisation, seed 0, standing in for a trained one).'),
    el('div', { class: 'control-row' },
      el('label', { class: 'switch' }, toggle, el('span', { text: 'Apply W_O' })),
      el('div', { class: 'control' }, el('span', { class: 'control-label', text: 'Token' }), tokenPicker)),
    el('div', { class: 'strip-row' }, el('span', { class: 'strip-label', text: 'Output (64)' }), el('div', { class: 'strip-canvas' }, outputCanvas)),
    numbers,
    el('figure', { class: 'sources-figure' }, scroller('canvas-scroll', 'Each head\'s sources, drawn by the core', headsCanvas),
      el('figcaption', { class: 'note', text: 'Which heads feed each output number: column r shows, for each head, the share of row r of the matrix after the concatenation (W_O, or the identity when W_O is skipped) that reads that head\'s slot: Σ|W_O[r, slot]| over Σ|W_O[r, :]|. Brighter = larger share; an even mix over 8 heads is 1/8 each.' })),
    verdict);
  render();
  // what the demo shows, for the tests
  return { node: Object.assign(node, { current: () => last }), draw: render };
}

/** @param {import('../../lib/index.js').MhaModule} mha */
export function mistakesSection(mha) {
  let theme = themeColors();
  const getTheme = () => theme;
  const heads = moreHeadsDemo(mha, getTheme);
  const wo = forgettingWoDemo(mha, getTheme);
  const node = section('lesson-mistakes', 'Common mistakes, demonstrated', heads.node, wo.node);
  requestAnimationFrame(() => heads.draw());
  onThemeChange((t) => { theme = t; heads.draw(); wo.draw(); });
  return node;
}
