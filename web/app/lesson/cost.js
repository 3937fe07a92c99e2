// Section: keeping the computation comparable. d_model and h (divisors of d_model only) give
// d_k = d_model / h; the parameter count comes from the core's own parameters, the FLOPs are
// counted from the shapes, and the time is what the core took in this page.

import { el, section, segmented, fmt, int, short, scroller } from './dom.js';
import { math } from './math.js';
import { randomNormal } from './inputs.js';

const D_MODELS = [64, 128, 256, 512];
const LENGTHS = [16, 64, 256];
const MAX_HEADS = 64;

/** @param {number} n @param {number} [max] */
export function divisors(n, max = MAX_HEADS) {
  /** @type {number[]} */
  const out = [];
  for (let d = 1; d <= Math.min(n, max); d += 1) if (n % d === 0) out.push(d);
  return out;
}

/**
 * FLOPs (a multiply-add counts as 2) of one multi-head attention forward pass in self-attention.
 * @param {{ dModel: number, heads: number, length: number }} o
 * @returns {{ projections: number, scores: number, softmax: number, weightedSum: number, outProj: number, total: number }}
 */
export function attentionFlops({ dModel, heads, length: L }) {
  const dk = dModel / heads;
  const projections = 3 * 2 * L * dModel * dModel; // X·W_Qᵀ, X·W_Kᵀ, X·W_Vᵀ
  const scores = heads * 2 * L * L * dk; // Q_i·K_iᵀ per head
  const softmax = heads * L * L; // one exponential per score
  const weightedSum = heads * 2 * L * L * dk; // P_i·V_i per head
  const outProj = 2 * L * dModel * dModel; // Concat·W_Oᵀ
  return { projections, scores, softmax, weightedSum, outProj, total: projections + scores + softmax + weightedSum + outProj };
}

/** Number of parameters the core holds for a module (sum over its state_dict). @param {import('../../lib/index.js').MultiHeadAttention} attention */
export function parameterCount(attention) {
  return attention.parameterNames().reduce((sum, name) => sum + attention.parameterShape(name).reduce((a, b) => a * b, 1), 0);
}


/**
 * Median time per forward call of two modules on the same input, measured with performance.now()
 * in alternating rounds so that both see the same machine load.
 * @param {import('../../lib/index.js').MultiHeadAttention[]} modules
 * @param {Float32Array} x
 * @param {number[]} shape
 * @param {{ rounds?: number, budgetMs?: number, isCancelled: () => boolean }} options
 */
async function measure(modules, x, shape, { rounds = 7, budgetMs = 500, isCancelled }) {
  const call = (/** @type {import('../../lib/index.js').MultiHeadAttention} */ m) => m.forward({ query: { data: x, shape }, needWeights: false });
  modules.forEach(call); // warm-up
  // each round runs each module for about budget / (rounds · modules) ms: the total stays near the
  // budget whatever the size and the machine's load
  const slice = budgetMs / rounds / modules.length;
  const samples = modules.map(() => /** @type {number[]} */ ([]));
  let calls = 0;
  for (let r = 0; r < rounds; r += 1) {
    for (let m = 0; m < modules.length; m += 1) {
      const start = performance.now();
      let n = 0;
      do { call(modules[m]); n += 1; } while (performance.now() - start < slice);
      samples[m].push((performance.now() - start) / n);
      calls += n;
      // a task per slice: the page answers between them
      // a gap, not only a new task: an engine that runs timers' and messages' tasks in an order of
      // its own still gets to everything waiting (WebKit, Firefox)
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (isCancelled()) return null;
    }
  }
  const median = (/** @type {number[]} */ a) => { const s = [...a].sort((p, q) => p - q); return s[Math.floor(s.length / 2)]; };
  return { perCallMs: samples.map(median), calls: Math.round(calls / modules.length) };
}

/** @param {import('../../lib/index.js').MhaModule} mha */
export function costSection(mha) {
  const state = { dModel: 64, heads: 8, length: 64, run: 0 };
  const dkOut = el('output', { class: 'big-number', id: 'cost-dk' });
  const dkFormula = el('p', { class: 'dk-line' });
  const headsHolder = el('div', { class: 'control-slot' });
  const table = el('table', { class: 'lesson-table cost-table', id: 'cost-table' });
  const timing = el('p', { class: 'note', id: 'cost-timing', 'aria-live': 'polite' });
  const verdict = el('p', { id: 'cost-verdict' });

  const rebuildHeads = () => {
    const options = divisors(state.dModel).map((d) => ({ value: d, label: String(d) }));
    if (!options.some((o) => o.value === state.heads)) state.heads = Math.min(8, state.dModel);
    headsHolder.replaceChildren(segmented('heads', options, state.heads, (v) => { state.heads = v; update(); }, 'Number of heads h (divisors of d_model)'));
  };

  /**
   * @param {number[]} params
   * @param {ReturnType<typeof attentionFlops>} flops1
   * @param {ReturnType<typeof attentionFlops>} flopsH
   */
  function renderTable(params, flops1, flopsH) {
    const { dModel, heads } = state;
    const dk = dModel / heads;
    /** @param {string} label @param {string} a @param {string} b @param {string} note @param {string} [cls] */
    const row = (label, a, b, note, cls) => el('tr', { class: cls },
      el('th', { scope: 'row' }, label, note ? el('span', { class: 'note', text: ` ${note}` }) : null),
      el('td', { text: a }), el('td', { text: b }));
    table.replaceChildren(
      el('caption', { text: `Self-attention over L = ${state.length} tokens at d_model = ${dModel}. FLOPs count a multiply-add as 2.` }),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: '' }),
        el('th', { scope: 'col', text: `1 head of width ${dModel}` }),
        el('th', { scope: 'col', text: `${heads} heads of width ${dk}` }))),
      el('tbody', {},
        row('Width per head (d_k)', String(dModel), String(dk), '', 'row-dk'),
        row('Parameters', int(params[0]), int(params[1]), '(counted in the core: W_Q, W_K, W_V, W_O and biases)', 'row-params'),
        row('Q, K, V projections', short(flops1.projections, 'FLOP'), short(flopsH.projections, 'FLOP'), '3 · 2·L·d²'),
        row('Scores Q·Kᵀ', short(flops1.scores, 'FLOP'), short(flopsH.scores, 'FLOP'), 'h · 2·L²·d_k'),
        row('Softmax (exponentials)', int(flops1.softmax), int(flopsH.softmax), 'h · L²', 'row-softmax'),
        row('Weights × V', short(flops1.weightedSum, 'FLOP'), short(flopsH.weightedSum, 'FLOP'), 'h · 2·L²·d_k'),
        row('W_O', short(flops1.outProj, 'FLOP'), short(flopsH.outProj, 'FLOP'), '2·L·d²'),
        row('Total', short(flops1.total, 'FLOP'), short(flopsH.total, 'FLOP'), '', 'row-total'),
        el('tr', { class: 'row-time' }, el('th', { scope: 'row' }, 'Time the core took', el('span', { class: 'note', text: ' (this page, median)' })),
          el('td', { class: 'time-1', text: 'measuring…' }), el('td', { class: 'time-h', text: 'measuring…' }))));
  }

  async function update() {
    const { dModel, heads, length } = state;
    const dk = dModel / heads;
    const run = ++state.run;
    dkOut.textContent = String(dk);
    dkFormula.replaceChildren(math(String.raw`d_k = d_{\text{model}} / h`), ` = ${dModel} / ${heads} = ${dk}`);
    const single = new mha.MultiHeadAttention({ embedDim: dModel, numHeads: 1, seed: 1 });
    const multi = new mha.MultiHeadAttention({ embedDim: dModel, numHeads: heads, seed: 1 });
    try {
      const params = [parameterCount(single), parameterCount(multi)];
      const flops1 = attentionFlops({ dModel, heads: 1, length });
      const flopsH = attentionFlops({ dModel, heads, length });
      renderTable(params, flops1, flopsH);
      const extra = flopsH.total - flops1.total;
      verdict.textContent = `Same parameters (${int(params[1])} both ways) and the same matrix-product FLOPs: splitting the width into ${heads} heads only adds ${int(extra)} exponentials, ${((extra / flops1.total) * 100).toFixed(2)}% of the total.`;
      timing.textContent = 'Timing both in the WebAssembly core…';
      await visible; // measure only once someone can see the result (keeps page load light)
      if (run !== state.run) return;
      const x = randomNormal(length * dModel, 7);
      const result = await measure([single, multi], x, [length, dModel], { isCancelled: () => run !== state.run });
      if (!result || run !== state.run) return;
      const [t1, tH] = result.perCallMs;
      /** @type {HTMLElement} */ (table.querySelector('.time-1')).textContent = `${fmt(t1, t1 < 1 ? 3 : 2)} ms`;
      /** @type {HTMLElement} */ (table.querySelector('.time-h')).textContent = `${fmt(tH, tH < 1 ? 3 : 2)} ms`;
      table.dataset.time1 = String(t1);
      table.dataset.timeH = String(tH);
      timing.textContent = `Measured with performance.now() about ${result.calls} forward calls of each module (needWeights: false), in alternating rounds; ratio ${heads} heads / 1 head = ${(tH / t1).toFixed(2)}×. The arithmetic is nearly the same; what differences remain come from how well each matrix shape suits the processor and the core's kernels, and from noise (run it again by choosing the same setting).`;
    } finally {
      single.dispose();
      multi.dispose();
    }
  }

  rebuildHeads();
  const controls = el('div', { class: 'control-row' },
    el('div', { class: 'control' }, el('span', { class: 'control-label', id: 'cost-dmodel-label', text: 'd_model' }),
      segmented('d-model', D_MODELS.map((d) => ({ value: d, label: String(d) })), state.dModel, (v) => { state.dModel = v; rebuildHeads(); update(); }, 'd_model')),
    el('div', { class: 'control' }, el('span', { class: 'control-label', text: 'heads h' }), headsHolder),
    el('div', { class: 'control' }, el('span', { class: 'control-label', text: 'tokens L' }),
      segmented('length', LENGTHS.map((d) => ({ value: d, label: String(d) })), state.length, (v) => { state.length = v; update(); }, 'Sequence length L')),
    el('div', { class: 'control dk-box' }, el('span', { class: 'control-label', text: 'd_k per head' }), dkOut));

  const node = section('lesson-cost', 'Keeping the computation comparable',
    el('p', {}, 'Each head does not get the full width. The model width is split: ', math(String.raw`d_k = d_{\text{model}}/h`),
      '. Then ', math('h'), ' heads of width ', math('d_k'), ' do the same matrix products as one head of width ',
      math(String.raw`d_{\text{model}}`), ', cut into pieces: the projections are the same matrices, and the scores cost ',
      math(String.raw`h \cdot L^2 d_k = L^2 d_{\text{model}}`), '. Multi-head attention trades the capacity of each head for several distinct views, not for more compute.'),
    el('p', { class: 'note', text: 'Choose a width and a number of heads (only divisors of d_model are offered). Both modules below are created in the WebAssembly core and timed here.' }),
    controls, dkFormula, scroller('table-wrap', 'Parameters and FLOPs per choice of heads', table), verdict, timing);
  // resolves the first time the section comes near the screen
  const visible = /** @type {Promise<void>} */ (new Promise((resolve) => {
    if (typeof IntersectionObserver !== 'function') { resolve(); return; }
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) { observer.disconnect(); resolve(); }
    }, { rootMargin: '200px 0px' });
    observer.observe(node);
  }));
  update();
  return node;
}
