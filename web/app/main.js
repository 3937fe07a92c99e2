// The head-comparison explorer: every number it shows comes from the WebAssembly core through
// the JS API (../lib/index.js). This file wires the page: sources of weights, sentences,
// the views (heatmaps, statistics, pair comparison, the W_O step) and keyboard/hover handling.

import { loadMha, loadStateDictFile } from '../lib/index.js';
import { analyseTokens, tagText, MAX_TOKENS, SEMANTIC_CLASSES } from './tokens.js';
import { embedTokens, D_MODEL, DIMENSION_NAMES, LAYOUT } from './embeddings.js';
import { designedStateDict, HEADS, NUM_HEADS } from './designed-heads.js';
import { checkHeadLabel } from './label-checks.js';
import { EXAMPLES } from './examples.js';
import { TAGGED_EXAMPLES } from './examples.tagged.js';
import { drawHeatmap, drawLegend, drawStrip, cellAt } from './heatmap.js';
import { readWeightsFile, stateDictToJson } from './state-dict-file.js';
import { drawWoDiagram, drawHeadWeights, headWeightsCellAt } from './wo-view.js';
import { TrainedSource } from './trained-source.js';

// The fourth source: the small transformer trained on the grammar (trained-source.js).
const trained = new TrainedSource();

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('aria-') || key.startsWith('data-') || key === 'role' || key === 'for') node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
};

const state = {
  mha: null,
  attention: null, // the MultiHeadAttention module in use
  source: 'designed',
  seed: 0,
  loaded: null, // { name, stateDict, config }
  sentence: { text: '', example: 0 },
  tokens: [],
  input: null, // (L, 64) embeddings
  result: null, // { weights (H,L,L), headOutputs (H,L,hd), concat (L,E), output (L,E) }
  stats: null,
  similarity: null,
  pairDivergence: null,
  selectedHead: 0,
  pairA: 0,
  pairB: 1,
  hoverToken: -1,
  focusToken: -1,
  hoverCell: null,
  drawn: {}, // canvas id -> values the canvas shows (read by the tests)
  layouts: {},
  timings: { lastUpdateMs: NaN, lastComputeMs: NaN, lastDrawMs: NaN, scriptStartMs: NaN, coreLoadedMs: NaN, readyMs: NaN },
  nlp: null,
};

// ---------------------------------------------------------------------------------------------
// Theme

function themeColors() {
  const css = getComputedStyle(document.documentElement);
  const v = (name) => css.getPropertyValue(name).trim();
  return { text: v('--text'), grid: v('--grid'), highlight: v('--highlight'), panel: v('--panel'), font: v('--font-sans') || 'system-ui, sans-serif' };
}
let theme = null;

function setTheme(dark) {
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  const toggle = $('theme-toggle');
  toggle.setAttribute('aria-pressed', String(dark));
  toggle.querySelector('.theme-toggle-text').textContent = dark ? 'Light' : 'Dark';
  toggle.setAttribute('aria-label', dark ? 'Switch to the light theme' : 'Switch to the dark theme');
  try { localStorage.setItem('mha-theme', dark ? 'dark' : 'light'); } catch { /* ignore */ }
  theme = themeColors();
  if (state.result) render();
}

// ---------------------------------------------------------------------------------------------
// Heads: names and descriptions depend on the source of the weights

function numHeads() {
  if (state.source === 'trained') return trained.numHeads;
  return state.attention ? state.attention.config.numHeads : NUM_HEADS;
}

function headTitle(h) {
  if (state.source === 'trained') return `Head ${h + 1} – ${trained.head(h).name}`;
  if (state.source === 'designed') return `Head ${h + 1} – ${HEADS[h].name}`;
  return `Head ${h + 1}`;
}

function headShort(h) {
  if (state.source === 'trained') return trained.head(h).short;
  return state.source === 'designed' ? HEADS[h].short : (state.source === 'random' ? 'random' : 'loaded');
}

/** What a head looks at, read from the core's statistics (for weights not designed here). */
function describeByStatistics(s) {
  const parts = [];
  const pct = (x) => `${Math.round(x * 100)}%`;
  if (s.normalizedEntropy > 0.9) parts.push(`nothing in particular: its weights are nearly uniform (normalised entropy ${s.normalizedEntropy.toFixed(2)})`);
  if (s.previousTokenShare > 0.4) parts.push(`the previous token (${pct(s.previousTokenShare)} of each row on average)`);
  if (s.diagonalShare > 0.4) parts.push(`the token itself (${pct(s.diagonalShare)})`);
  if (s.firstTokenShare > 0.4) parts.push(`the first token (${pct(s.firstTokenShare)})`);
  if (!parts.length) parts.push(`a mix: largest weight per row ${s.maxAttention.toFixed(2)} on average, mean distance ${s.meanDistance.toFixed(1)} tokens`);
  return parts.join('; ');
}

// ---------------------------------------------------------------------------------------------
// Sources of weights

async function useSource(source) {
  $('source-error').hidden = true;
  const E = D_MODEL;
  try {
    if (source === 'trained' || state.source === 'trained') {
      await switchTrained(source);
      if (source === 'trained') return;
    }
    if (source === 'loaded') {
      if (!state.loaded) throw new Error('Load a state_dict file first.');
      const { config, stateDict } = state.loaded;
      replaceAttention(new state.mha.MultiHeadAttention(config));
      state.attention.loadStateDict(stateDict);
      $('source-note').textContent = `Weights from ${state.loaded.name}: ${config.numHeads} heads of ${E / config.numHeads} dimensions, applied to this page's 64-dimensional token embeddings. Head names are not known for them; the descriptions are read from the statistics.${state.loaded.note}`;
    } else {
      if (!state.attention || state.attention.config.numHeads !== NUM_HEADS || state.attention.config.numKvHeads !== NUM_HEADS ||
          state.attention.config.addBiasKv || state.attention.config.addZeroAttn || !state.attention.config.bias) {
        replaceAttention(new state.mha.MultiHeadAttention({ embedDim: E, numHeads: NUM_HEADS }));
      }
      if (source === 'designed') {
        state.attention.loadStateDict(designedStateDict());
        $('source-note').textContent = 'Each head\'s W_Q, W_K and W_V are written down by hand so that it carries out one relation (see “How its weights do it”). W_O gives every head its own 8 dimensions of the output.';
      } else {
        state.attention.resetParameters(state.seed);
        $('source-note').textContent = `PyTorch's default initialisation from seed ${state.seed}. Untrained heads have not learned anything: their maps are diffuse and look alike, which is exactly why the designed (or trained) weights matter.`;
      }
    }
    state.source = source;
    document.querySelectorAll('input[name="source"]').forEach((r) => { r.checked = r.value === source; });
    if (state.selectedHead >= numHeads()) state.selectedHead = 0;
    state.pairA = Math.min(state.pairA, numHeads() - 1);
    state.pairB = Math.min(state.pairB, numHeads() - 1);
    buildHeadControls();
    sizes = null;
    update();
  } catch (error) {
    // Back to the designed heads first: that call hides the message, which must stay shown.
    if (source !== 'designed') await useSource('designed');
    showError('source-error', error);
  }
}

function replaceAttention(next) {
  if (state.attention) state.attention.dispose();
  state.attention = next;
}

async function loadWeightsFile(file) {
  $('source-error').hidden = true;
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const parsed = readWeightsFile({ loadStateDictFile }, bytes, file.name, D_MODEL);
    state.loaded = { name: file.name, ...parsed };
    $('source-loaded').disabled = false;
    $('loaded-name').textContent = `(${file.name})`;
    await useSource('loaded');
  } catch (error) {
    showError('source-error', error);
  }
}

function downloadWeights() {
  const json = stateDictToJson(state.attention, state.source === 'designed' ? 'designed heads of the MHA Explorer' : state.source);
  saveBlob(new Blob([json], { type: 'application/json' }), `mha-explorer-${state.source}-weights.json`);
}

function saveBlob(blob, name) {
  const a = el('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function showError(id, error) {
  const node = $(id);
  node.textContent = error && error.message ? error.message : String(error);
  node.hidden = false;
}

// ---------------------------------------------------------------------------------------------
// Sentences

function setTokens(rawTokens, text, example) {
  state.tokens = analyseTokens(rawTokens);
  state.input = embedTokens(state.tokens);
  state.sentence = { text, example };
  state.focusToken = defaultFocusToken(state.tokens);
  state.hoverToken = -1;
  $('sentence-note').textContent = example >= 0 ? `Shows ${EXAMPLES[example].shows}.` : `Your sentence: ${state.tokens.length} tokens.`;
  document.querySelectorAll('#sentence-list [role="radio"]').forEach((b, i) => {
    b.setAttribute('aria-checked', String(i === example));
    b.tabIndex = i === Math.max(0, example) ? 0 : -1;
  });
  renderTokenStrip();
  renderParseSummary();
  update();
}

/** The token whose numbers the W_O view shows first: a pronoun, else a verb, else the last word. */
function defaultFocusToken(tokens) {
  const pronoun = tokens.findIndex((t) => t.pronoun && t.pronoun.person === 3);
  if (pronoun >= 0) return pronoun;
  const verb = tokens.findIndex((t) => t.pos === 'VERB');
  return verb >= 0 ? verb : tokens.length - 1;
}

function selectExample(index) {
  if (state.source === 'trained') { showTrainedSentence(() => trained.selectExample(index)); return; }
  const { text } = EXAMPLES[index];
  setTokens(TAGGED_EXAMPLES[text], text, index);
}

async function loadTagger() {
  if (!state.nlp) {
    const module = await import('../vendor/compromise-three.mjs');
    state.nlp = module.default;
  }
  return state.nlp;
}

async function analyseFreeText(text) {
  const errorNode = $('free-text-error');
  errorNode.hidden = true;
  if (state.source === 'trained') { showTrainedSentence(() => trained.selectText(text), 'free-text-error'); return; }
  const trimmed = text.trim();
  if (!trimmed) {
    showError('free-text-error', new Error('Type a sentence first.'));
    return;
  }
  let nlp;
  try {
    nlp = await loadTagger();
  } catch (error) {
    showError('free-text-error', new Error(`The part-of-speech tagger could not be loaded (web/vendor/compromise-three.mjs; run "node scripts/vendor.js"): ${error.message}`));
    return;
  }
  const raw = tagText(nlp, trimmed);
  if (raw.length === 0) {
    showError('free-text-error', new Error('No tokens found in that text.'));
    return;
  }
  if (raw.length > MAX_TOKENS) {
    showError('free-text-error', new Error(`That text has ${raw.length} tokens; the explorer takes at most ${MAX_TOKENS}. Remove ${raw.length - MAX_TOKENS} token${raw.length - MAX_TOKENS > 1 ? 's' : ''} (words and punctuation marks each count as one).`));
    return;
  }
  setTokens(raw, trimmed, -1);
}

// ---------------------------------------------------------------------------------------------
// Compute (the core) and draw

function compute() {
  if (state.source === 'trained') { computeTrained(); return; }
  const L = state.tokens.length;
  const result = state.attention.forward({
    query: { data: state.input, shape: [L, D_MODEL] },
    needWeights: true,
    averageAttnWeights: false,
    returnHeadOutputs: true,
    returnConcat: true,
  });
  state.result = result;
  state.stats = state.mha.headStatistics(result.weights).heads;
  state.similarity = state.mha.headSimilarity(result.weights);
  computePair();
}

function headMap(h) {
  const L = state.tokens.length;
  return state.result.weights.data.subarray(h * L * L, (h + 1) * L * L);
}

function computePair() {
  const L = state.tokens.length;
  state.pairDivergence = state.mha.jsDivergence({ data: headMap(state.pairA), shape: [L, L] }, { data: headMap(state.pairB), shape: [L, L] });
}

function update() {
  if (!state.attention || !state.tokens.length) return;
  const t0 = performance.now();
  compute();
  const t1 = performance.now();
  render();
  const t2 = performance.now();
  state.timings.lastComputeMs = t1 - t0;
  state.timings.lastDrawMs = t2 - t1;
  state.timings.lastUpdateMs = t2 - t0;
  $('perf').textContent = `Last update: ${(t2 - t0).toFixed(1)} ms (core: forward pass, statistics and divergences ${(t1 - t0).toFixed(1)} ms; drawing ${(t2 - t1).toFixed(1)} ms) for ${state.tokens.length} tokens.`;
}

function labels() {
  return state.tokens.map((t) => t.text);
}

function highlightRow() {
  return state.hoverToken >= 0 ? state.hoverToken : -1;
}

/** Widths the views lay out in. Read once and again only when a container is resized, so that
 *  an update never forces a layout of the whole page before drawing. */
let sizes = null;
function readSizes() {
  const firstMultiple = document.querySelector('#small-multiples .multiple');
  return {
    main: $('main-heatmap').parentElement.clientWidth || 600,
    multiple: firstMultiple ? firstMultiple.clientWidth : 140,
    pair: $('pair-map-a').closest('.pair-maps').clientWidth || 900,
  };
}
function measure() {
  if (!sizes) sizes = readSizes();
}
function watchSizes() {
  if (typeof ResizeObserver !== 'function') return;
  let frame = 0;
  const observer = new ResizeObserver(() => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      const next = readSizes();
      const changed = !sizes || Object.keys(next).some((k) => next[k] !== sizes[k]);
      sizes = next;
      if (changed && state.result) render();
    });
  });
  for (const node of [$('main-heatmap').parentElement, $('small-multiples'), $('pair-map-a').closest('.pair-maps')]) observer.observe(node);
}

const VIEWS = [
  ['measure', () => measure()], ['tabs', () => renderTabs()], ['main', () => renderMainHeatmap()],
  ['info', () => renderHeadInfo()], ['table', () => scheduleWeightsTable()], ['multiples', () => renderSmallMultiples()],
  ['pair', () => renderPair()], ['wo', () => renderWoView()], ['tokens', () => renderTokenHighlight()],
  ['weights', () => renderHeadWeights()],
];

/** The selected head's rows of W_Q, W_K, W_V (drawn only while "How its weights do it" is open). */
function renderHeadWeights() {
  if (!$('head-how').open || state.source === 'trained') return;
  const E = D_MODEL;
  const H = numHeads();
  const hd = E / H;
  const kvHeads = state.attention.config.numKvHeads;
  const h = state.selectedHead;
  const kvHead = Math.floor(h / (H / kvHeads));
  const names = state.attention.parameterNames();
  let blocks;
  if (names.includes('in_proj_weight')) {
    const inProj = state.attention.getParameter('in_proj_weight');
    const rows = (offset) => inProj.data.subarray(offset * E, (offset + hd) * E);
    blocks = [['W_Q', rows(h * hd)], ['W_K', rows(H * hd + kvHead * hd)], ['W_V', rows(H * hd + kvHeads * hd + kvHead * hd)]];
  } else {
    // separate projections (grouped-query attention): K and V rows of the head's KV group
    const rows = (name, head) => state.attention.getParameter(name).data.subarray(head * hd * E, (head + 1) * hd * E);
    blocks = [['W_Q', rows('q_proj_weight', h)], ['W_K', rows('k_proj_weight', kvHead)], ['W_V', rows('v_proj_weight', kvHead)]];
  }
  const groups = Object.entries(LAYOUT).map(([name, [start, width]]) => ({ name, start, width }));
  state.layouts['head-weights'] = drawHeadWeights($('head-weights'), { blocks, embedDim: E, groups, theme });
  $('head-weights').setAttribute('aria-label', `${headTitle(h)}: its rows of W_Q, W_K and W_V against the 64 token features`);
}

/** Which views depend on what: a new head redraws only what shows the selected head; a
 *  highlighted token redraws the maps with rows and the W_O view. */
const HEAD_VIEWS = ['measure', 'tabs', 'main', 'info', 'table', 'wo', 'weights'];
const HOVER_VIEWS = ['measure', 'main', 'multiples', 'pair', 'wo', 'tokens'];

function render(only = null) {
  const parts = {};
  for (const [name, draw] of VIEWS) {
    if (only && !only.includes(name)) continue;
    const t0 = performance.now();
    draw();
    parts[name] = performance.now() - t0;
  }
  state.timings.parts = parts;
}

function renderMainHeatmap() {
  const canvas = $('main-heatmap');
  const L = state.tokens.length;
  const values = headMap(state.selectedHead);
  const width = sizes.main;
  state.layouts['main-heatmap'] = drawHeatmap(canvas, {
    values, rows: L, cols: L, rowLabels: labels(), colLabels: labels(), width, maxCell: 46,
    highlightRow: highlightRow(), hoverCell: state.hoverCell, showValues: true, theme,
  });
  state.drawn['main-heatmap'] = Float32Array.from(values);
  canvas.setAttribute('aria-label', `${headTitle(state.selectedHead)}: heatmap of ${L} by ${L} attention weights. The table of this head's weights lists every value.`);
}

function renderTabs() {
  document.querySelectorAll('#head-tabs [role="tab"]').forEach((tab, h) => {
    const selected = h === state.selectedHead;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
  });
  document.querySelectorAll('#small-multiples .multiple').forEach((b, h) => {
    b.classList.toggle('selected', h === state.selectedHead);
    b.setAttribute('aria-pressed', String(h === state.selectedHead));
  });
  $('head-panel').setAttribute('aria-labelledby', `head-tab-${state.selectedHead}`);
}

function renderHeadInfo() {
  const h = state.selectedHead;
  const s = state.stats[h];
  if (state.source === 'trained') { renderTrainedHeadInfo(h, s); return; }
  $('head-name').textContent = headTitle(h);
  const designed = state.source === 'designed';
  $('head-focus').textContent = `This head focuses on ${designed ? HEADS[h].focus : `${describeByStatistics(s)}.`}`;
  $('head-typical').textContent = designed
    ? `Typical function: ${HEADS[h].typical}`
    : 'Typical function: in trained models, heads specialise during training (previous-token, syntactic, coreference and sink heads are all found in BERT and GPT-2); these weights have not been shaped that way, so their function is read from the statistics above.';
  $('head-how-text').textContent = designed
    ? HEADS[h].how
    : (state.source === 'random'
      ? 'These weights are random (uniform Xavier initialisation for W_Q, W_K, W_V, as in PyTorch). Random query and key vectors give small scores of similar size, so the softmax stays close to uniform.'
      : 'These weights come from your file; the page cannot know what they were trained for.');
  $('head-how').hidden = false;
  const stats = [
    ['Entropy', `${s.entropy.toFixed(2)} nats`, `normalised ${s.normalizedEntropy.toFixed(2)}; 0 = all weight on one token, ln L = ${Math.log(state.tokens.length).toFixed(2)} = uniform`],
    ['Sparsity', `${(s.sparsity * 100).toFixed(0)}%`, 'share of weights below 0.01'],
    ['Max attention', s.maxAttention.toFixed(2), 'largest weight of a row, averaged over rows'],
    ['Avg attention', s.averageAttention.toFixed(3), 'mean of all weights (1/L for full rows)'],
  ];
  const dl = $('head-stats');
  dl.replaceChildren(...stats.map(([name, value, help]) => el('div', { class: 'stat', title: help },
    el('dt', { text: name }), el('dd', { text: value }))));
  const check = $('label-check');
  if (designed && h < HEADS.length) {
    const verdict = checkHeadLabel(h, headMap(h), state.tokens, s);
    check.textContent = `${verdict.holds ? '✓ Holds' : '✗ Does not hold'}: ${verdict.summary}.`;
    check.className = verdict.holds ? 'ok' : 'bad';
  } else {
    check.textContent = 'Only the designed heads carry labels to check.';
    check.className = '';
  }
}

// The table (L² cells) is built after the frame, when the browser is idle: it is read, not
// watched, and building it inside the update would double the page's layout work.
let tableTask = 0;
let tableVersion = 0;
let renderVersion = 0;
function scheduleWeightsTable() {
  renderVersion += 1;
  const cancel = window.cancelIdleCallback || clearTimeout;
  const request = window.requestIdleCallback || ((fn) => setTimeout(fn, 30));
  cancel(tableTask);
  tableTask = request(() => { renderWeightsTable(); tableVersion = renderVersion; }, { timeout: 200 });
}

function renderWeightsTable() {
  const h = state.selectedHead;
  const L = state.tokens.length;
  const values = headMap(h);
  const table = el('table', { id: 'weights-table', class: 'weights-table' });
  table.append(el('caption', { text: `${headTitle(h)}: attention weights. Rows are queries, columns are keys; each row sums to 1.` }));
  const headRow = el('tr', {}, el('th', { scope: 'col', text: 'query \\ key' }));
  state.tokens.forEach((t, j) => headRow.append(el('th', { scope: 'col', text: `${j + 1}. ${t.text}` })));
  table.append(el('thead', {}, headRow));
  const body = el('tbody');
  for (let i = 0; i < L; i += 1) {
    const tr = el('tr', {}, el('th', { scope: 'row', text: `${i + 1}. ${state.tokens[i].text}` }));
    for (let j = 0; j < L; j += 1) tr.append(el('td', { text: values[i * L + j].toFixed(3) }));
    body.append(tr);
  }
  table.append(body);
  $('weights-table-wrap').replaceChildren(table);
}

function renderSmallMultiples() {
  const L = state.tokens.length;
  document.querySelectorAll('#small-multiples .multiple').forEach((button, h) => {
    const canvas = button.querySelector('canvas');
    const width = Math.max(90, sizes.multiple - 12);
    state.layouts[`multiple-${h}`] = drawHeatmap(canvas, {
      values: headMap(h), rows: L, cols: L, width, maxCell: 16, highlightRow: highlightRow(), theme, stableSize: false,
    });
    state.drawn[`multiple-${h}`] = Float32Array.from(headMap(h));
    button.querySelector('.multiple-title').textContent = `H${h + 1} · ${headShort(h)}`;
    button.setAttribute('aria-label', `Select ${headTitle(h)}`);
  });
}

function renderPair() {
  const L = state.tokens.length;
  const a = headMap(state.pairA);
  const b = headMap(state.pairB);
  const diff = new Float32Array(L * L);
  for (let k = 0; k < diff.length; k += 1) diff[k] = a[k] - b[k];
  // three across when they fit; stacked on a narrow screen, each as wide as the column allows
  const width = sizes.pair < 540 ? Math.min(300, sizes.pair - 8) : Math.min(300, Math.max(160, (sizes.pair - 40) / 3));
  const opts = { rows: L, cols: L, rowLabels: labels(), colLabels: labels(), width, maxCell: 22, highlightRow: highlightRow(), theme };
  state.layouts['pair-map-a'] = drawHeatmap($('pair-map-a'), { ...opts, values: a });
  state.layouts['pair-map-b'] = drawHeatmap($('pair-map-b'), { ...opts, values: b });
  state.layouts['pair-map-diff'] = drawHeatmap($('pair-map-diff'), { ...opts, values: diff, diverging: true });
  state.drawn['pair-map-a'] = Float32Array.from(a);
  state.drawn['pair-map-b'] = Float32Array.from(b);
  state.drawn['pair-map-diff'] = diff;
  $('pair-caption-a').textContent = `A: ${headTitle(state.pairA)}`;
  $('pair-caption-b').textContent = `B: ${headTitle(state.pairB)}`;
  $('pair-map-a').setAttribute('aria-label', `Heatmap of ${headTitle(state.pairA)}`);
  $('pair-map-b').setAttribute('aria-label', `Heatmap of ${headTitle(state.pairB)}`);
  $('pair-map-diff').setAttribute('aria-label', `Difference A minus B; Jensen–Shannon divergence ${state.pairDivergence.mean.toFixed(3)}`);
  const jsd = state.pairDivergence.mean;
  const verdict = jsd < 0.05 ? 'nearly the same map' : jsd < 0.3 ? 'partly similar' : 'clearly different';
  $('pair-jsd').textContent = `Jensen–Shannon divergence (mean over rows, from the core): ${jsd.toFixed(3)} nats of at most ln 2 ≈ 0.693: ${verdict}.`;

  const H = numHeads();
  const sim = state.similarity.jsd;
  const simValues = new Float32Array(H * H);
  for (let k = 0; k < H * H; k += 1) simValues[k] = sim[k] / Math.LN2;
  const names = Array.from({ length: H }, (_, h) => `H${h + 1}`);
  state.layouts['similarity-map'] = drawHeatmap($('similarity-map'), {
    values: simValues, rows: H, cols: H, rowLabels: names, colLabels: names, width: 260, maxCell: 26, showValues: false, theme,
  });
  state.drawn['similarity-map'] = Float64Array.from(sim);
  $('similarity-map').setAttribute('aria-label', 'Jensen–Shannon divergence between every pair of heads');
}

function renderWoView() {
  $('wo-view-main').style.display = state.source === 'trained' ? 'none' : ''; // .wo-view is display: flex
  if (state.source === 'trained') {
    $('wo-formula').textContent = 'The trained model has two layers, each with its own W_O mixing its 8 heads into d_model = 64, followed by an MLP; its head outputs are not exposed to this view. The W_O step is drawn for the designed, random and loaded sources.';
    $('wo-note').textContent = '';
    return;
  }
  const H = numHeads();
  const E = D_MODEL;
  const hd = E / H;
  const L = state.tokens.length;
  const t = Math.max(0, Math.min(L - 1, state.hoverToken >= 0 ? state.hoverToken : state.focusToken));
  const headOutputs = state.result.headOutputs.data;
  const concat = state.result.concat.data.subarray(t * E, (t + 1) * E);
  const output = state.result.output.data.subarray(t * E, (t + 1) * E);
  const wo = state.attention.getParameter('out_proj.weight').data;
  $('wo-formula').textContent = `Token “${state.tokens[t].text}” (position ${t + 1}): ${H} heads × ${hd} dimensions = ${H * hd} = d_model, this page's model width. (At the original Transformer's d_model of 512: 8 heads × 64 = 512, and W_O is 512 × 512.)`;

  const list = $('wo-heads');
  if (list.children.length !== H) {
    list.replaceChildren(...Array.from({ length: H }, (_, h) => el('li', { class: 'wo-head' },
      el('span', { class: 'wo-head-name', text: `H${h + 1}` }), el('canvas', { 'aria-hidden': 'true' }), el('span', { class: 'wo-values' }))));
  }
  const scale = (() => { let m = 0; for (const v of concat) m = Math.max(m, Math.abs(v)); for (const v of output) m = Math.max(m, Math.abs(v)); return m || 1; })();
  [...list.children].forEach((row, h) => {
    const values = Array.from({ length: hd }, (_, d) => headOutputs[(h * L + t) * hd + d]);
    drawStrip(row.querySelector('canvas'), values, { cellWidth: 12, cellHeight: 14, scale, theme });
    row.querySelector('.wo-values').textContent = values.map((v) => v.toFixed(2)).join(' ');
    row.classList.toggle('selected', h === state.selectedHead);
    row.setAttribute('aria-label', `${headTitle(h)} output: ${values.map((v) => v.toFixed(2)).join(', ')}`);
  });
  const diagram = $('wo-diagram');
  const { woScale } = drawWoDiagram(diagram, { concat, wo, output, numHeads: H, embedDim: E, theme, selectedHead: state.selectedHead });
  diagram.setAttribute('aria-label', `Concatenated head outputs (${H * hd} numbers) times W_O (${E} by ${E}, largest magnitude ${woScale.toFixed(2)}) gives the output vector of ${E} numbers for “${state.tokens[t].text}”.`);
  $('wo-output-values').textContent = `output[0..7] = ${Array.from(output.subarray(0, 8), (v) => v.toFixed(2)).join(' ')} …\ncolour scale ±${scale.toFixed(2)} for the vectors, ±${woScale.toFixed(2)} for W_O`;
  $('wo-note').textContent = state.source === 'designed'
    ? 'The designed W_O is the identity: each head writes into its own 8 numbers of the output, as in compiled transformers. Trained models mix the heads here.'
    : 'These W_O weights mix all heads into every output number, as trained models do.';
  state.drawn['wo-concat'] = Float32Array.from(concat);
  state.drawn['wo-output'] = Float32Array.from(output);
  state.drawn['wo-heads'] = Float32Array.from({ length: H * hd }, (_, k) => headOutputs[(Math.floor(k / hd) * L + t) * hd + (k % hd)]);
}

// ---------------------------------------------------------------------------------------------
// The trained source (its logic lives in trained-source.js; this block only wires it in)

/** Enter or leave the trained source: its example list, its sentence, its help text. */
async function switchTrained(source) {
  const entering = source === 'trained';
  if (entering) {
    $('source-note').textContent = 'Loading the trained model and measuring its heads on 300 held-out sentences…';
    await trained.load();
    trained.layer = Number($('trained-layer').value);
    if (state.source !== 'trained') state.savedSentence = state.sentence;
    state.source = 'trained';
    document.querySelectorAll('input[name="source"]').forEach((r) => { r.checked = r.value === 'trained'; });
    $('download-weights').disabled = true;
    if (!state.freeTextHelp) state.freeTextHelp = [...$('free-text-help').childNodes];
    $('free-text-help').textContent = `Trained source: type a sentence in the grammar's words (${trained.vocabulary.size} words, e.g. “each man likes these women so they are late.”); unknown words are named.`;
    $('free-text').placeholder = 'e.g. each man likes these women so they are late .';
    fillSentenceList(trained.examples().map((e) => ({ text: e.text, shows: `a sentence of the grammar (seed ${e.seed}) with its ground-truth links` })));
    if (state.selectedHead >= trained.numHeads) state.selectedHead = 0;
    state.pairA = Math.min(state.pairA, trained.numHeads - 1);
    state.pairB = Math.min(state.pairB, trained.numHeads - 1);
    buildHeadControls();
    sizes = null;
    const example = trained.sentence && trained.example >= 0 ? trained.example : 0;
    selectExample(example);
    return;
  }
  // leaving: the explorer's own examples and the sentence shown before
  $('download-weights').disabled = false;
  if (state.freeTextHelp) $('free-text-help').replaceChildren(...state.freeTextHelp);
  $('free-text').placeholder = FREE_TEXT_PLACEHOLDER;
  fillSentenceList(EXAMPLES);
  const saved = state.savedSentence || { text: EXAMPLES[0].text, example: 0 };
  state.source = source;
  buildHeadControls(); // the heads of the module in use until useSource replaces it
  if (saved.example >= 0) selectExample(saved.example);
  else await analyseFreeText(saved.text);
}
const FREE_TEXT_PLACEHOLDER = document.getElementById('free-text').placeholder;

function fillSentenceList(examples) {
  const list = $('sentence-list');
  const wired = list.dataset.keyboard === 'wired';
  if (!wired) { buildSentenceList(examples); return; }
  list.replaceChildren(...examples.map((example, i) => {
    const button = el('button', { type: 'button', role: 'radio', 'aria-checked': 'false', class: 'sentence', text: example.text });
    button.tabIndex = i === 0 ? 0 : -1;
    button.addEventListener('click', () => selectExample(i));
    return button;
  }));
  state.listExamples = examples;
}

/** Show a sentence of the trained source: select() picks it (and may throw a clear error). */
function showTrainedSentence(select, errorId = 'source-error') {
  try {
    select();
  } catch (error) {
    showError(errorId, error);
    return;
  }
  state.tokens = trained.tokens();
  state.input = null;
  state.sentence = { text: trained.sentenceText(), example: trained.example };
  state.focusToken = state.tokens.length - 1;
  state.hoverToken = -1;
  const examples = state.listExamples || [];
  $('sentence-note').textContent = trained.example >= 0
    ? `Shows ${examples[trained.example] ? examples[trained.example].shows : 'a sentence of the grammar'}. <bos> is the start token the model always sees first.`
    : `Your sentence: ${state.tokens.length - 1} words after <bos>, all in the trained model's vocabulary.`;
  document.querySelectorAll('#sentence-list [role="radio"]').forEach((b, i) => {
    b.setAttribute('aria-checked', String(i === trained.example));
    b.tabIndex = i === Math.max(0, trained.example) ? 0 : -1;
  });
  renderTokenStrip();
  $('parse-summary').textContent = trained.linksText();
  $('source-note').textContent = `A 2-layer, 8-head transformer (d_model 64, context 32) trained by the core on the grammar (npm run train -- --seed 1, float16 weights); its heads measured on 300 held-out sentences. ${trained.layerSummary()} Heads are named only when their mean weight on a relation's true target clears ${trained.threshold.toFixed(2)}.`;
  update();
}

function computeTrained() {
  const weights = trained.layerWeights();
  state.result = { weights };
  state.stats = state.mha.headStatistics(weights).heads;
  state.similarity = state.mha.headSimilarity(weights);
  computePair();
}

function renderTrainedHeadInfo(h, s) {
  const head = trained.head(h);
  $('head-name').textContent = headTitle(h);
  $('head-focus').textContent = `This head (layer ${trained.layer}) focuses on ${describeByStatistics(s)}. On held-out sentences its mean weight on each relation's true target: ${trained.scoresText(h)}.`;
  $('head-typical').textContent = head.specialised
    ? `Typical function: this head specialised during training: ${head.name}. Such heads are found in trained models such as GPT-2 (previous-token, induction and coreference heads).`
    : `Typical function: this head did not specialise on any of the grammar's relations (best: ${head.best.relation.replace(/_/g, ' ')} at ${head.best.meanWeight.toFixed(2)}, below ${trained.threshold.toFixed(2)}); it may still help the model in ways these relations do not capture.`;
  $('head-how').hidden = true;
  const stats = [
    ['Entropy', `${s.entropy.toFixed(2)} nats`, 'mean over query rows; causal rows see only earlier tokens'],
    ['Sparsity', `${(s.sparsity * 100).toFixed(0)}%`, 'share of weights below 0.01 (the masked future counts)'],
    ['Max attention', s.maxAttention.toFixed(2), 'largest weight of a row, averaged over rows'],
    ['Avg attention', s.averageAttention.toFixed(3), 'mean of all weights'],
  ];
  $('head-stats').replaceChildren(...stats.map(([name, value, help]) => el('div', { class: 'stat', title: help },
    el('dt', { text: name }), el('dd', { text: value }))));
  const verdict = trained.checkOnSentence(h, headMap(h));
  const check = $('label-check');
  check.textContent = verdict.holds === null ? verdict.text : `${verdict.holds ? '✓ Holds' : '✗ Does not hold'}: ${verdict.text}.`;
  check.className = verdict.holds === null ? '' : (verdict.holds ? 'ok' : 'bad');
}

// ---------------------------------------------------------------------------------------------
// Controls

function buildSentenceList(examples = EXAMPLES) {
  const list = $('sentence-list');
  list.replaceChildren();
  examples.forEach((example, i) => {
    const button = el('button', { type: 'button', role: 'radio', 'aria-checked': 'false', class: 'sentence', text: example.text });
    button.tabIndex = i === 0 ? 0 : -1;
    button.addEventListener('click', () => selectExample(i));
    list.append(button);
  });
  list.addEventListener('keydown', (event) => {
    const buttons = [...list.querySelectorAll('[role="radio"]')];
    const current = buttons.indexOf(document.activeElement);
    if (current < 0) return;
    let next = -1;
    if (event.key === 'ArrowDown' || event.key === 'ArrowRight') next = (current + 1) % buttons.length;
    if (event.key === 'ArrowUp' || event.key === 'ArrowLeft') next = (current - 1 + buttons.length) % buttons.length;
    if (event.key === 'Home') next = 0;
    if (event.key === 'End') next = buttons.length - 1;
    if (next >= 0) {
      event.preventDefault();
      buttons[next].focus();
      selectExample(next);
    }
  });
  list.dataset.keyboard = 'wired';
}

function buildHeadControls() {
  const H = numHeads();
  const tabs = $('head-tabs');
  tabs.replaceChildren();
  const multiples = $('small-multiples');
  multiples.replaceChildren();
  for (let h = 0; h < H; h += 1) {
    const tab = el('button', { type: 'button', role: 'tab', id: `head-tab-${h}`, 'aria-controls': 'head-panel', class: 'head-tab', 'aria-label': `Head ${h + 1}: ${headShort(h)}` },
      el('span', { class: 'tab-id', text: `H${h + 1}` }), el('span', { class: 'tab-name', text: headShort(h) }));
    tab.addEventListener('click', () => selectHead(h));
    tabs.append(tab);
    const button = el('button', { type: 'button', class: 'multiple' },
      el('span', { class: 'multiple-title' }), el('canvas', { 'aria-hidden': 'true' }));
    button.addEventListener('click', () => selectHead(h));
    multiples.append(button);
  }
  const options = (select, value) => {
    select.replaceChildren(...Array.from({ length: H }, (_, h) => el('option', { value: String(h), text: `H${h + 1} · ${headShort(h)}` })));
    select.value = String(value);
  };
  options($('pair-a'), state.pairA);
  options($('pair-b'), state.pairB);
}

function selectHead(h, focus = false) {
  state.selectedHead = h;
  state.hoverCell = null;
  const t0 = performance.now();
  render(HEAD_VIEWS);
  const t1 = performance.now();
  state.timings.lastDrawMs = t1 - t0;
  state.timings.lastUpdateMs = t1 - t0;
  if (focus) $(`head-tab-${h}`).focus();
}

function onTabKeydown(event) {
  const H = numHeads();
  let next = -1;
  if (event.key === 'ArrowRight' || event.key === 'ArrowDown') next = (state.selectedHead + 1) % H;
  if (event.key === 'ArrowLeft' || event.key === 'ArrowUp') next = (state.selectedHead - 1 + H) % H;
  if (event.key === 'Home') next = 0;
  if (event.key === 'End') next = H - 1;
  if (/^[1-9]$/.test(event.key) && Number(event.key) <= H) next = Number(event.key) - 1;
  if (next >= 0) {
    event.preventDefault();
    selectHead(next, true);
  }
}

function renderTokenStrip() {
  const strip = $('token-strip');
  strip.replaceChildren(...state.tokens.map((t, i) => {
    const details = [t.pos === 'PUNCT' ? 'punctuation' : t.pos, t.cls, t.number, t.isSubject ? 'subject' : null,
      t.subject >= 0 ? `subject: ${state.tokens[t.subject].text}` : null,
      t.modifies >= 0 ? `describes: ${state.tokens[t.modifies].text}` : null].filter(Boolean);
    const item = el('li', { class: `token cls-${SEMANTIC_CLASSES.indexOf(t.cls)}` });
    const button = el('button', { type: 'button', 'data-index': String(i), 'aria-label': `Token ${i + 1}: ${t.text} (${details.join(', ')}). Highlight its row.` },
      el('span', { class: 'token-text', text: t.text }), el('span', { class: 'token-tag', text: t.pos === 'PUNCT' ? 'PUNCT' : t.pos }));
    button.title = details.join(' · ');
    button.addEventListener('mouseenter', () => setHoverToken(i));
    button.addEventListener('focus', () => setHoverToken(i));
    button.addEventListener('mouseleave', () => setHoverToken(-1));
    button.addEventListener('blur', () => setHoverToken(-1));
    button.addEventListener('click', () => { state.focusToken = i; setHoverToken(i); });
    item.append(button);
    return item;
  }));
}

/** The tagger's shallow parse in words: what the designed heads' features encode. */
function renderParseSummary() {
  const t = state.tokens;
  const subjects = t.filter((x) => x.pos === 'VERB' && x.subject >= 0).map((x) => `${x.text} → ${t[x.subject].text}`);
  const modifiers = t.filter((x) => x.modifies >= 0).map((x) => `${x.text} → ${t[x.modifies].text}`);
  const pronouns = t.filter((x) => x.pronoun && x.pronoun.person === 3)
    .map((x) => `${x.text} (${[x.pronoun.gender ? { m: 'masculine', f: 'feminine', n: 'neuter' }[x.pronoun.gender] : 'any gender', x.pronoun.number === 'pl' ? 'plural' : 'singular'].join(', ')})`);
  const classes = SEMANTIC_CLASSES.filter((c) => c !== 'function')
    .map((c) => [c, t.filter((x) => x.cls === c).map((x) => x.text)]).filter(([, words]) => words.length)
    .map(([c, words]) => `${c}: ${words.join(', ')}`);
  const parts = [
    `Subjects: ${subjects.join('; ') || 'none found'}.`,
    `Modifiers: ${modifiers.join('; ') || 'none'}.`,
    `Third-person pronouns: ${pronouns.join('; ') || 'none'}.`,
    `Classes: ${classes.join('; ')}.`,
  ];
  $('parse-summary').textContent = `What the tagger's parse gives the designed heads as token features. ${parts.join(' ')}`;
}

function renderTokenHighlight() {
  document.querySelectorAll('#token-strip button').forEach((b, i) => b.classList.toggle('active', i === state.hoverToken));
}

let hoverFrame = 0;
function setHoverToken(i) {
  if (state.hoverToken === i) return;
  state.hoverToken = i;
  cancelAnimationFrame(hoverFrame);
  hoverFrame = requestAnimationFrame(() => { if (state.result) render(HOVER_VIEWS); });
}

function onHeatmapPointer(event) {
  const canvas = $('main-heatmap');
  const layout = state.layouts['main-heatmap'];
  const tooltip = $('tooltip');
  if (!layout) return;
  const cell = cellAt(layout, event, canvas);
  if (!cell) {
    tooltip.hidden = true;
    if (state.hoverCell) { state.hoverCell = null; setHoverToken(-1); }
    return;
  }
  const L = state.tokens.length;
  const value = headMap(state.selectedHead)[cell.row * L + cell.col];
  tooltip.textContent = `“${state.tokens[cell.row].text}” → “${state.tokens[cell.col].text}”: ${value.toFixed(3)}`;
  tooltip.hidden = false;
  const rect = canvas.getBoundingClientRect();
  tooltip.style.left = `${Math.min(event.clientX - rect.left + 14, rect.width - 180)}px`;
  tooltip.style.top = `${event.clientY - rect.top + 14}px`;
  if (!state.hoverCell || state.hoverCell.row !== cell.row || state.hoverCell.col !== cell.col) {
    state.hoverCell = cell;
    state.hoverToken = -2; // force the redraw below
    setHoverToken(cell.row);
  }
}

function wireControls() {
  $('theme-toggle').addEventListener('click', () => setTheme(document.documentElement.dataset.theme !== 'dark'));
  $('free-text-form').addEventListener('submit', (event) => {
    event.preventDefault();
    analyseFreeText($('free-text').value);
  });
  $('free-text').addEventListener('input', () => { $('free-text-error').hidden = true; });
  document.querySelectorAll('input[name="source"]').forEach((radio) => radio.addEventListener('change', () => {
    if (radio.checked) useSource(radio.value);
  }));
  $('seed').addEventListener('change', () => {
    const seed = Number($('seed').value);
    if (!Number.isInteger(seed) || seed < 0) {
      showError('source-error', new Error(`The seed must be a whole number ≥ 0, got "${$('seed').value}".`));
      return;
    }
    state.seed = seed;
    useSource('random');
  });
  $('state-dict-file').addEventListener('change', (event) => {
    const [file] = event.target.files;
    if (file) loadWeightsFile(file);
  });
  $('download-weights').addEventListener('click', downloadWeights);
  $('head-tabs').addEventListener('keydown', onTabKeydown);
  $('pair-a').addEventListener('change', () => { state.pairA = Number($('pair-a').value); computePair(); render(['measure', 'pair']); });
  $('pair-b').addEventListener('change', () => { state.pairB = Number($('pair-b').value); computePair(); render(['measure', 'pair']); });
  $('head-how').addEventListener('toggle', () => renderHeadWeights());
  $('trained-layer').addEventListener('change', () => {
    trained.layer = Number($('trained-layer').value);
    if (state.source === 'trained') { buildHeadControls(); showTrainedSentence(() => {}); } else useSource('trained');
  });
  $('table-toggle').addEventListener('click', () => {
    const shown = $('weights-table-wrap').classList.toggle('visually-hidden') === false;
    $('table-toggle').setAttribute('aria-pressed', String(shown));
    $('table-toggle').textContent = shown ? 'Hide the table' : 'Show this head\'s weights as a table';
    // shown, the table scrolls sideways with the arrow keys; hidden, it is no tab stop (screen
    // readers still read it, in the accessibility tree either way)
    $('weights-table-wrap').tabIndex = shown ? 0 : -1;
  });
  $('head-weights').addEventListener('pointermove', (event) => {
    const hit = headWeightsCellAt(state.layouts['head-weights'], event, $('head-weights'));
    $('head-weights-hover').textContent = hit ? `${hit.block} row ${hit.row + 1}, feature ${hit.col}: ${DIMENSION_NAMES[hit.col]} = ${hit.value.toFixed(3)}` : '';
  });
  const canvas = $('main-heatmap');
  canvas.addEventListener('pointermove', onHeatmapPointer);
  canvas.addEventListener('pointerleave', () => { $('tooltip').hidden = true; state.hoverCell = null; setHoverToken(-1); });
  let resizeFrame = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => { sizes = null; if (state.result) render(); });
  });
  const dprQuery = () => matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
  const watchDpr = () => dprQuery().addEventListener('change', () => { if (state.result) render(); watchDpr(); }, { once: true });
  watchDpr();
}

// ---------------------------------------------------------------------------------------------
// A read-only view for tests and the curious: window.__mhaExplorer

function exposeDebugHook() {
  const copyTokens = () => state.tokens.map((t) => ({
    text: t.text, pos: t.pos, cls: t.cls, number: t.number, gender: t.gender && { ...t.gender },
    pronoun: t.pronoun && { ...t.pronoun }, chunk: t.chunk, isHead: t.isHead, isSubject: t.isSubject,
    subject: t.subject, modifies: t.modifies,
  }));
  const hook = {
    get ready() { return !!state.result; },
    get source() { return state.source; },
    get selectedHead() { return state.selectedHead; },
    get highlightedRow() { return state.hoverToken; },
    /** True when the weights table shows the current head and sentence (it is built when idle). */
    get tableCurrent() { return tableVersion === renderVersion; },
    get timings() { return { ...state.timings, parts: { ...state.timings.parts } }; },
    get sentence() { return state.sentence.text; },
    tokens: copyTokens,
    /** The (L, 64) embeddings the page fed to the core. */
    input: () => Array.from(state.input),
    /** The weights of the module in use, as { name: { data: number[], shape } }. */
    stateDict: () => Object.fromEntries(Object.entries(state.attention.stateDict()).map(([k, v]) => [k, { data: Array.from(v.data), shape: v.shape }])),
    config: () => ({ ...state.attention.config }),
    /** Values each canvas shows, by canvas id. */
    drawn: () => Object.fromEntries(Object.entries(state.drawn).map(([k, v]) => [k, Array.from(v)])),
    stats: () => state.stats.map((s) => ({ ...s })),
    pair: () => ({ a: state.pairA, b: state.pairB, mean: state.pairDivergence.mean }),
    /** The trained source: its layer, threshold and sentence (words as the model sees them). */
    trained: () => trained.snapshot(),
  };
  Object.freeze(hook);
  Object.defineProperty(window, '__mhaExplorer', { value: hook, writable: false, configurable: false });
}

// ---------------------------------------------------------------------------------------------

async function main() {
  theme = themeColors();
  setTheme(document.documentElement.dataset.theme === 'dark');
  $('max-tokens').textContent = String(MAX_TOKENS);
  buildSentenceList();
  wireControls();
  watchSizes();
  drawLegend($('legend'), false, 200, 12);
  drawLegend($('legend-diverging'), true, 120, 10);
  state.timings.scriptStartMs = performance.now();
  try {
    state.mha = await loadMha();
    state.timings.coreLoadedMs = performance.now();
  } catch (error) {
    $('status').textContent = `The WebAssembly core could not be loaded: ${error.message}. Build it with "npm run build".`;
    $('status').classList.add('error');
    document.body.dataset.status = 'error';
    return;
  }
  await useSource('designed');
  selectExample(0);
  exposeDebugHook();
  state.timings.readyMs = performance.now();
  $('status').textContent = `Ready: the WebAssembly core computed ${numHeads()} heads in ${state.timings.lastComputeMs.toFixed(1)} ms.`;
  document.body.dataset.status = 'ok';
  // The lesson text, when it is installed, mounts itself on <section id="lesson">.
  import('./lesson/index.js').then((lesson) => {
    if (lesson && typeof lesson.mount === 'function') lesson.mount($('lesson'), { state: window.__mhaExplorer });
  }).catch(() => { /* no lesson module: the explorer stands alone */ });
}

main();
