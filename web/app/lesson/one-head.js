// Section: one head followed with real numbers. q, k, v are computed here from the core's
// in_proj_weight only to show them; the softmax row and the head's output shown are the core's
// own (per-head weights, returnHeadOutputs), and the page checks that both agree.

import { el, section, segmented, fmt, maxAbsDiff, themeColors, onThemeChange, scroller } from './dom.js';
import { math } from './math.js';
import { drawStrip } from '../../views/heatmap.js';
import { exampleInput, designedAttention, designedHeadLabel, D_MODEL, NUM_HEADS, HEADS } from './inputs.js';

const HEAD_DIM = D_MODEL / NUM_HEADS;

/**
 * Row `row` of a (rows, cols) matrix times vector x, plus bias[row].
 * @param {ArrayLike<number>} weight
 * @param {ArrayLike<number> | null} bias
 * @param {number} row
 * @param {number} cols
 * @param {ArrayLike<number>} x
 * @param {number} xOffset
 */
function affineRow(weight, bias, row, cols, x, xOffset) {
  let sum = bias ? bias[row] : 0;
  for (let c = 0; c < cols; c += 1) sum += weight[row * cols + c] * x[xOffset + c];
  return sum;
}

/** @param {ArrayLike<number>} values @param {number} [digits] */
function vectorText(values, digits = 2) {
  return `[${Array.from(values, (v) => fmt(v, digits)).join(', ')}]`;
}

/**
 * Everything about head h and query token i, from the core's parameters and outputs.
 * Exported for the tests: the page's numbers must agree with the core's.
 * @param {import('../../lib/index.js').MultiHeadAttention} attention
 * @param {ReturnType<typeof exampleInput>} input
 * @param {number} h
 * @param {number} i
 */
export function followHead(attention, input, h, i) {
  const { x, L } = input;
  const E = D_MODEL;
  const d = HEAD_DIM;
  const result = attention.forward({
    query: { data: x, shape: [L, E] }, averageAttnWeights: false, returnHeadOutputs: true, returnConcat: true,
  });
  const W = attention.getParameter('in_proj_weight').data; // (3E, E): W_Q; W_K; W_V
  const b = attention.getParameter('in_proj_bias').data; // (3E)
  const Wo = attention.getParameter('out_proj.weight').data; // (E, E)
  const project = (/** @type {number} */ block, /** @type {number} */ token) => Float64Array.from({ length: d }, (_, c) => affineRow(W, b, block * E + h * d + c, E, x, token * E));
  const q = project(0, i);
  const keys = Array.from({ length: L }, (_, j) => project(1, j));
  const values = Array.from({ length: L }, (_, j) => project(2, j));
  const scores = keys.map((k) => k.reduce((s, kc, c) => s + kc * q[c], 0) / Math.sqrt(d));
  const top = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - top));
  const total = exps.reduce((a, e) => a + e, 0);
  const pageSoftmax = exps.map((e) => e / total);
  // asked for: weights (by default), head outputs and the concatenation
  const coreWeights = /** @type {import('../../lib/index.js').Tensor} */ (result.weights).data.slice((h * L + i) * L, (h * L + i + 1) * L); // (H, L, L) row
  const pageContext = Float64Array.from({ length: d }, (_, c) => values.reduce((s, v, j) => s + coreWeights[j] * v[c], 0));
  const coreContext = /** @type {import('../../lib/index.js').Tensor} */ (result.headOutputs).data.slice((h * L + i) * d, (h * L + i + 1) * d); // (H, L, d)
  const concatRow = /** @type {import('../../lib/index.js').Tensor} */ (result.concat).data.slice(i * E, (i + 1) * E);
  const outputRow = result.output.data.slice(i * E, (i + 1) * E);
  // W_O·(this head's slot of the concatenation): the head's share of the output
  const contribution = Float64Array.from({ length: E }, (_, r) => {
    let s = 0;
    for (let c = 0; c < d; c += 1) s += Wo[r * E + h * d + c] * coreContext[c];
    return s;
  });
  return {
    q, keys, values, scores, pageSoftmax, coreWeights, pageContext, coreContext, concatRow, outputRow, contribution,
    checks: {
      softmax: maxAbsDiff(pageSoftmax, coreWeights),
      context: maxAbsDiff(pageContext, coreContext),
      concatSlot: maxAbsDiff(concatRow.subarray(h * d, (h + 1) * d), coreContext),
    },
  };
}

/**
 * Outline slot h of a strip drawn by drawStrip with cellWidth 9 and gap 4 (8 slots of 8).
 * @param {HTMLCanvasElement} canvas
 * @param {number} h
 * @param {{ highlight: string }} theme
 */
function outlineSlot(canvas, h, theme) {
  const dpr = window.devicePixelRatio || 1;
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  const x = h * (HEAD_DIM * 9 + 4);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.strokeStyle = theme.highlight;
  ctx.lineWidth = 2.5;
  ctx.strokeRect(x + 1.25, 1.25, HEAD_DIM * 9 - 2.5, canvas.height / dpr - 2.5);
}

/** @param {import('../../lib/index.js').MhaModule} mha */
export function oneHeadSection(mha) {
  const input = exampleInput(0);
  const attention = designedAttention(mha);
  const state = { head: 4, token: input.labels.indexOf('it') >= 0 ? input.labels.indexOf('it') : input.L - 1 };
  let theme = themeColors();

  const qLine = el('p', { class: 'vector-line' });
  const table = el('table', { class: 'lesson-table follow-table', id: 'follow-table' });
  const contextLine = el('div', { class: 'vector-line' });
  const checkLine = el('p', { class: 'note check-line', id: 'follow-checks' });
  const concatCanvas = el('canvas', { role: 'img', id: 'follow-concat' });
  const contribCanvas = el('canvas', { role: 'img', id: 'follow-contribution' });
  const outputCanvas = el('canvas', { role: 'img', id: 'follow-output' });
  const concatNote = el('p', { class: 'note' });
  const woNote = el('p', { class: 'note' });
  const headFocus = el('p', { class: 'note head-focus' });
  /** @type {ReturnType<typeof followHead> | null} */
  let last = null;

  function render() {
    const { head: h, token: i } = state;
    const f = followHead(attention, input, h, i);
    last = f;
    const tok = input.labels[i];
    headFocus.textContent = `${designedHeadLabel(h)}: looks at ${HEADS[h].focus}`;
    qLine.replaceChildren(el('span', { class: 'vector-name' }, math('q'), ` for “${tok}”`), ' = ', el('code', { text: vectorText(f.q) }));
    const maxW = Math.max(...f.coreWeights);
    table.replaceChildren(
      el('caption', { text: `Head ${h + 1}, query “${tok}”: every key, its score and its weight. d_k = ${HEAD_DIM}, so scores are divided by √${HEAD_DIM} ≈ ${Math.sqrt(HEAD_DIM).toFixed(3)}.` }),
      el('thead', {}, el('tr', {},
        el('th', { scope: 'col', text: 'key token' }), el('th', { scope: 'col' }, math('k_j')),
        el('th', { scope: 'col' }, math(String.raw`q\cdot k_j/\sqrt{d_k}`)), el('th', { scope: 'col', text: 'softmax (core)' }),
        el('th', { scope: 'col' }, math('v_j')))),
      el('tbody', {}, input.labels.map((label, j) => el('tr', { class: f.coreWeights[j] === maxW ? 'top-weight' : '' },
        el('th', { scope: 'row', text: `${j + 1}. ${label}` }),
        el('td', { class: 'vec', text: vectorText(f.keys[j], 1) }),
        el('td', { class: 'num', text: fmt(f.scores[j], 2) }),
        el('td', { class: 'weight' }, el('span', { class: 'bar-track' }, el('span', { class: 'bar', style: `width:${(f.coreWeights[j] * 100).toFixed(1)}%` })), el('span', { class: 'num', text: fmt(f.coreWeights[j], 3) })),
        el('td', { class: 'vec', text: vectorText(f.values[j], 1) })))));
    contextLine.replaceChildren(el('span', { class: 'vector-name' }, 'context ', math(String.raw`\textstyle\sum_j \text{softmax}_j\, v_j`), ' = '),
      el('code', { id: 'follow-context', text: vectorText(f.coreContext, 3) }));
    checkLine.textContent = `Checked against the core: softmax computed here vs the core's weights, max |Δ| = ${f.checks.softmax.toExponential(1)}; Σ softmax·v vs the core's head output, max |Δ| = ${f.checks.context.toExponential(1)}; the head's slot of the core's concatenation vs its head output, max |Δ| = ${f.checks.concatSlot.toExponential(1)}.`;
    checkLine.dataset.softmax = String(f.checks.softmax);
    checkLine.dataset.context = String(f.checks.context);
    checkLine.dataset.concat = String(f.checks.concatSlot);
    const scale = Math.max(1e-6, ...Array.from(f.concatRow, Math.abs), ...Array.from(f.outputRow, Math.abs));
    drawStrip(concatCanvas, f.concatRow, { cellWidth: 9, cellHeight: 20, scale, groups: NUM_HEADS, gap: 4, theme });
    drawStrip(contribCanvas, f.contribution, { cellWidth: 9, cellHeight: 20, scale, groups: NUM_HEADS, gap: 4, theme });
    drawStrip(outputCanvas, f.outputRow, { cellWidth: 9, cellHeight: 20, scale, groups: NUM_HEADS, gap: 4, theme });
    concatCanvas.setAttribute('aria-label', `Concatenation for “${tok}”: 64 numbers in 8 slots of 8; head ${h + 1} fills dimensions ${h * HEAD_DIM}–${h * HEAD_DIM + HEAD_DIM - 1}.`);
    const listed = (/** @type {ArrayLike<number>} */ v) => Array.from(v, (x) => fmt(x, 2)).join(', ');
    contribCanvas.setAttribute('aria-label', `W_O times head ${h + 1}'s slot, for “${tok}”: 64 numbers, ${listed(f.contribution)}.`);
    outputCanvas.setAttribute('aria-label', `Output for “${tok}”: 64 numbers, ${listed(f.outputRow)}.`);
    outlineSlot(concatCanvas, h, theme);
    outlineSlot(contribCanvas, h, theme);
    concatNote.textContent = `Head ${h + 1}'s context vector is placed at dimensions ${h * HEAD_DIM}–${(h + 1) * HEAD_DIM - 1} of the 64-number concatenation (the outlined slot); the other seven slots hold the other heads' context vectors for “${tok}”.`;
    const inSlot = Math.hypot(...Array.from(f.contribution).slice(h * HEAD_DIM, (h + 1) * HEAD_DIM));
    const all = Math.hypot(...f.contribution);
    woNote.textContent = `W_O · (head ${h + 1}'s slot) is this head's share of the output. The designed heads' W_O is the identity, so ${all > 0 ? `${((inSlot / all) * 100).toFixed(0)}%` : 'all'} of that share stays in the head's own slot: nothing is mixed. A trained W_O spreads each head over every output dimension; “Forgetting W_O” below shows one.`;
  }

  const headPicker = segmented('follow-head', Array.from({ length: NUM_HEADS }, (_, h) => ({ value: h, label: `H${h + 1}` })), state.head,
    (v) => { state.head = v; render(); }, 'Head to follow');
  const tokenPicker = segmented('follow-token', input.labels.map((t, i) => ({ value: i, label: t })), state.token,
    (v) => { state.token = v; render(); }, 'Query token');
  const stripRow = (/** @type {string} */ label, /** @type {HTMLCanvasElement} */ canvas, extraClass = '') => el('div', { class: `strip-row ${extraClass}` },
    el('span', { class: 'strip-label', text: label }), el('div', { class: 'strip-canvas' }, canvas));

  const node = section('lesson-one-head', 'One head, followed with real numbers',
    el('p', { text: `The sentence “${input.text}” runs through the explorer's designed heads (d_model = 64, 8 heads, d_k = 8). Pick a head and the word doing the looking; every number below is read from the weights and outputs of the WebAssembly core.` }),
    el('div', { class: 'control-row' },
      el('div', { class: 'control' }, el('span', { class: 'control-label', text: 'Head' }), headPicker),
      el('div', { class: 'control' }, el('span', { class: 'control-label', text: 'Query token' }), tokenPicker)),
    headFocus,
    el('ol', { class: 'steps-list' },
      el('li', {}, el('strong', { text: 'Project. ' }), 'The query token\'s embedding times the head\'s rows of W_Q (plus bias):', qLine,
        el('p', { class: 'note', text: 'Every token gets a key k and a value v the same way, from the head\'s rows of W_K and W_V.' })),
      el('li', {}, el('strong', { text: 'Score and normalise. ' }), 'Dot product of q with every key, divided by √d_k, then a softmax over the row:', scroller('table-wrap', 'The scores and weights of one query', table)),
      el('li', {}, el('strong', { text: 'Mix the values. ' }), 'The weights average the value vectors into the head\'s context vector:', contextLine, checkLine),
      el('li', {}, el('strong', { text: 'Concatenate. ' }), stripRow('Concat (64)', concatCanvas, 'concat-row'), concatNote),
      el('li', {}, el('strong', { text: 'Mix with W_O. ' }),
        stripRow('W_O · this head', contribCanvas), stripRow('Output (64)', outputCanvas), woNote)));
  node.dataset.ready = 'false';
  render();
  node.dataset.ready = 'true';
  onThemeChange((t) => { theme = t; render(); });
  // what the section shows, for the tests
  return Object.assign(node, { followHead: () => last });
}
