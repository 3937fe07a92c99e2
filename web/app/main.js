// The explorer page's controller: it keeps the explorer's state (explorer-state.js), asks the
// source of heads for what to show (web/sources) and hands the results to the views
// (web/views). Every number shown comes from the WebAssembly core through the JS API.

import { loadMha } from '../lib/index.js';
import { el, saveBlob, showError, rovingTarget } from '../views/dom.js';
import { drawLegend } from '../views/heatmap.js';
import { themeColors } from '../views/theme.js';
import { renderHeadTabs, focusHeadTab } from '../views/tabs.js';
import { renderHeadMap, renderHeadInfo, followPointer } from '../views/head.js';
import { renderHeadGrid } from '../views/grid.js';
import { renderCompare } from '../views/compare.js';
import { renderTokenStrip, highlightToken } from '../views/token-strip.js';
import { renderWeightsTable } from '../views/weights-table.js';
import { renderWoView, drawHeadWeights, headWeightsCellAt } from '../views/wo.js';
import { statisticsRows } from '../views/head-text.js';
import { headMaps } from '../sources/source.js';
import { DesignedSource } from '../sources/designed.js';
import { RandomSource } from '../sources/random.js';
import { FileSource, readWeightsFile, stateDictToJson } from '../sources/file.js';
import { TrainedSource } from '../sources/trained.js';
import { MAX_TOKENS } from '../sources/tokens.js';
import { D_MODEL, DIMENSION_NAMES, LAYOUT } from '../sources/embeddings.js';
import { ExplorerState } from './explorer-state.js';
import { keepStateInUrl } from './url-state.js';

/** The explorer's state: the lesson, the exports and the tests read it. */
export const explorer = new ExplorerState();

const $ = (id) => document.getElementById(id);
let mha = null;
let theme = null;
/** The last weights file read: { name, config, stateDict, note }. */
let loadedFile = null;
let seed = 0;
let layers = { trained: 0 };
/** The last sentence shown with each set of sentences (the lesson's, the grammar's). */
const savedSentences = new Map();
let generation = 0;

// ---------------------------------------------------------------------------------------------
// Sources of heads

const SOURCES = {
  designed: () => new DesignedSource(),
  random: () => new RandomSource({ seed }),
  file: () => new FileSource({ file: loadedFile }),
  trained: () => new TrainedSource({ layer: layers.trained }),
};
/** Sources that show the lesson's example sentences (the others have their own). */
const sentenceSet = (id) => (id === 'trained' ? 'grammar' : 'lesson');

const LOADING_NOTES = { trained: 'Loading the trained model and measuring its heads on 300 held-out sentences…' };

async function useSource(id) {
  $('source-error').hidden = true;
  const previous = explorer.source;
  explorer.update({ busy: explorer.busy + 1 });
  try {
    if (id === 'file' && !loadedFile) throw new Error('Load a state_dict file first.');
    if (LOADING_NOTES[id]) $('source-note').textContent = LOADING_NOTES[id];
    const source = SOURCES[id]();
    await source.load(mha);
    const sentence = await sentenceFor(source, previous);
    if (previous && sentenceSet(previous.id) !== sentenceSet(id)) savedSentences.set(sentenceSet(previous.id), keyOf(explorer.sentence));
    const H = source.numHeads;
    explorer.update({
      source, sentence, selectedHead: explorer.selectedHead < H ? explorer.selectedHead : 0,
      pair: { a: Math.min(explorer.pair.a, H - 1), b: Math.min(explorer.pair.b, H - 1) },
      focusToken: sentence.focus, hoverToken: -1,
    });
    if (previous && previous !== source) previous.dispose();
    showSourceControls();
    showSentenceControls();
    await recompute();
  } catch (error) {
    // back to the designed heads first: that call hides the message, which must stay shown
    if (id !== 'designed') await useSource('designed');
    else document.querySelectorAll('input[name="source"]').forEach((r) => { r.checked = explorer.source ? r.value === explorer.source.id : r.value === 'designed'; });
    showError($('source-error'), error);
  } finally {
    explorer.update({ busy: explorer.busy - 1 });
  }
}

const keyOf = (sentence) => (sentence ? (sentence.example >= 0 ? sentence.example : sentence.text) : 0);

/** The sentence to show with a new source: the same one when both take the same sentences. */
async function sentenceFor(source, previous) {
  const set = sentenceSet(source.id);
  const wanted = previous && sentenceSet(previous.id) === set ? keyOf(explorer.sentence) : (savedSentences.get(set) ?? 0);
  try {
    return await source.sentence(wanted);
  } catch {
    return source.sentence(0);
  }
}

async function loadWeightsFile(file) {
  $('source-error').hidden = true;
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    loadedFile = { name: file.name, ...readWeightsFile(bytes, file.name, { width: D_MODEL }) };
    $('source-file').disabled = false;
    $('loaded-name').textContent = `(${file.name})`;
    await useSource('file');
  } catch (error) {
    showError($('source-error'), error);
  }
}

async function downloadWeights() {
  const { source } = explorer;
  const json = await stateDictToJson(source.attention, source.id === 'designed' ? 'designed heads of the MHA Explorer' : source.name);
  saveBlob(new Blob([json], { type: 'application/json' }), `mha-explorer-${source.id}-weights.json`);
}

function showSourceControls() {
  const { source } = explorer;
  document.querySelectorAll('input[name="source"]').forEach((r) => { r.checked = r.value === source.id; });
  $('source-note').textContent = source.note();
  $('download-weights').disabled = !source.attention;
  const layerPicker = $('layer-picker');
  layerPicker.hidden = source.numLayers <= 1;
  const select = $('layer');
  if (select.options.length !== source.numLayers) {
    select.replaceChildren(...Array.from({ length: source.numLayers }, (_, l) => el('option', { value: String(l), text: String(l) })));
  }
  select.value = String(source.layer);
}

// ---------------------------------------------------------------------------------------------
// Sentences

const FREE_TEXT = { help: null, placeholder: '' };

function showSentenceControls() {
  const { source, sentence } = explorer;
  const examples = source.examples();
  const list = $('sentence-list');
  const texts = examples.map((e) => e.text).join('\u0000');
  if (list.dataset.texts !== texts) {
    list.dataset.texts = texts;
    list.replaceChildren(...examples.map((example, i) => el('button', {
      type: 'button', role: 'radio', 'aria-checked': 'false', class: 'sentence', text: example.text, onclick: () => selectSentence(i),
    })));
  }
  list.querySelectorAll('[role="radio"]').forEach((b, i) => {
    b.setAttribute('aria-checked', String(i === sentence.example));
    b.tabIndex = i === Math.max(0, sentence.example) ? 0 : -1;
  });
  $('sentence-note').textContent = source.sentenceNote ? source.sentenceNote(sentence)
    : sentence.example >= 0 ? `Shows ${examples[sentence.example].shows}.` : `Your sentence: ${sentence.tokens.length} tokens.`;
  const help = source.textHelp ? source.textHelp() : null;
  if (help) {
    $('free-text-help').textContent = help.help;
    $('free-text').placeholder = help.placeholder;
  } else {
    $('free-text-help').replaceChildren(...FREE_TEXT.help.map((n) => n.cloneNode(true)));
    $('free-text').placeholder = FREE_TEXT.placeholder;
  }
  renderTokenStrip($('token-strip'), { tokens: sentence.tokens, onHover: setHoverToken, onPick: (i) => { explorer.update({ focusToken: i }); setHoverToken(i); } });
  $('parse-summary').textContent = sentence.summary || '';
}

/** Show an example (index) or typed text; a message in errorNode if the source refuses it. */
async function selectSentence(input, errorNode = $('source-error')) {
  errorNode.hidden = true;
  explorer.update({ busy: explorer.busy + 1 });
  try {
    const sentence = await explorer.source.sentence(input);
    explorer.update({ sentence, focusToken: sentence.focus, hoverToken: -1 });
    showSentenceControls();
    await recompute();
  } catch (error) {
    showError(errorNode, error);
  } finally {
    explorer.update({ busy: explorer.busy - 1 });
  }
}

// ---------------------------------------------------------------------------------------------
// Compute (the core) and draw

async function recompute() {
  const run = ++generation;
  const { source, sentence } = explorer;
  const t0 = performance.now();
  const result = await source.compute(sentence);
  if (result.headOutputs && source.outProjectionWeight) result.wo = await source.outProjectionWeight();
  if (run !== generation) return;
  const t1 = performance.now();
  explorer.update({ result });
  render();
  const t2 = performance.now();
  Object.assign(explorer.timings, { lastComputeMs: t1 - t0, lastDrawMs: t2 - t1, lastUpdateMs: t2 - t0 });
  $('perf').textContent = `Last update: ${(t2 - t0).toFixed(1)} ms (core: forward pass, statistics and divergences ${(t1 - t0).toFixed(1)} ms; drawing ${(t2 - t1).toFixed(1)} ms) for ${sentence.tokens.length} tokens.`;
}

const labels = () => explorer.sentence.tokens.map((t) => t.text);
const highlightRow = () => (explorer.hoverToken >= 0 ? explorer.hoverToken : -1);
const titleOf = (h) => explorer.source.title(h);
const shortOf = (h) => explorer.source.short(h);

/** Widths the views lay out in. Read once and again only when a container is resized, so that
 *  an update never forces a layout of the whole page before drawing. */
let sizes = null;
function readSizes() {
  return {
    main: $('main-heatmap').parentElement.clientWidth || 600,
    grid: $('small-multiples').clientWidth || 1000,
    pair: $('compare-view').clientWidth || 900,
  };
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
      if (changed && explorer.result) render();
    });
  });
  for (const node of [$('main-heatmap').parentElement, $('small-multiples'), $('compare-view')]) observer.observe(node);
}

const VIEWS = {
  measure: () => { if (!sizes) sizes = readSizes(); },
  tabs: () => renderTabs(),
  main: () => renderMainHeatmap(),
  info: () => renderInfo(),
  table: () => scheduleWeightsTable(),
  grid: () => renderHeadGrid($('small-multiples'), {
    maps: headMaps(explorer.result.weights), length: explorer.sentence.tokens.length, selected: explorer.selectedHead,
    width: sizes.grid, minColumn: 130, theme, shortOf, highlightRow: highlightRow(), onSelect: (h) => selectHead(h),
  }),
  pair: () => renderCompare($('compare-view'), {
    maps: headMaps(explorer.result.weights), length: explorer.sentence.tokens.length, labels: labels(),
    a: explorer.pair.a, b: explorer.pair.b, similarity: explorer.result.similarity, width: sizes.pair, theme,
    highlightRow: highlightRow(), shortOf, titleOf, onChange: (a, b) => { explorer.update({ pair: { a, b } }); render(['measure', 'pair']); },
  }),
  wo: () => renderWo(),
  tokens: () => highlightToken($('token-strip'), explorer.hoverToken),
  weights: () => renderHeadWeights(),
};
/** Which views depend on what: a new head redraws only what shows the selected head; a
 *  highlighted token redraws the maps with rows and the W_O view. */
const HEAD_VIEWS = ['measure', 'tabs', 'main', 'info', 'table', 'grid', 'wo', 'weights'];
const HOVER_VIEWS = ['measure', 'main', 'grid', 'pair', 'wo', 'tokens'];

function render(only = null) {
  const parts = {};
  for (const [name, draw] of Object.entries(VIEWS)) {
    if (only && !only.includes(name)) continue;
    const t0 = performance.now();
    draw();
    parts[name] = performance.now() - t0;
  }
  explorer.timings.parts = parts;
}

function renderTabs() {
  renderHeadTabs($('head-tabs'), {
    count: explorer.numHeads, selected: explorer.selectedHead, shortOf, titleOf, panelId: 'head-panel', idPrefix: 'head-tab-',
    onSelect: (h, { focus }) => selectHead(h, focus),
  });
  $('head-panel').setAttribute('aria-labelledby', `head-tab-${explorer.selectedHead}`);
}

let hoverCell = null;
function renderMainHeatmap() {
  renderHeadMap($('main-heatmap'), {
    values: explorer.map(), labels: labels(), width: sizes.main, theme, title: titleOf(explorer.selectedHead),
    highlightRow: highlightRow(), hoverCell,
  });
}

function renderInfo() {
  const { source, sentence, result, selectedHead: h } = explorer;
  const s = result.stats[h];
  const text = source.describe(h, s, sentence);
  renderHeadInfo($('head-info'), {
    title: titleOf(h), focus: text.focus, typical: text.typical,
    statistics: statisticsRows(s, { length: sentence.tokens.length, causal: source.causal }),
    check: source.check(h, explorer.map(h), sentence, s) ?? null,
  });
  $('head-how').hidden = !text.how;
  $('head-how-text').textContent = text.how || '';
}

// The table (L² cells) is built after the frame, when the browser is idle: it is read, not
// watched, and building it inside the update would double the page's layout work.
let tableTask = 0;
function scheduleWeightsTable() {
  const cancel = window.cancelIdleCallback || clearTimeout;
  const request = window.requestIdleCallback || ((fn) => setTimeout(fn, 30));
  cancel(tableTask);
  tableTask = request(() => renderWeightsTable($('weights-table-wrap'), {
    values: explorer.map(), labels: labels(), version: explorer.shownKey(),
    caption: `${titleOf(explorer.selectedHead)}: attention weights. Rows are queries, columns are keys; each row sums to 1.`,
  }), { timeout: 200 });
}

function renderWo() {
  const { source, result, sentence } = explorer;
  const shown = !!result.headOutputs;
  $('wo-view').hidden = !shown;
  $('wo-missing').hidden = shown;
  if (!shown) {
    $('wo-missing').textContent = source.woMissing ? source.woMissing() : 'This source does not expose its head outputs.';
    return;
  }
  const [H, L, hd] = result.headOutputs.shape;
  const E = result.concat.shape[result.concat.shape.length - 1];
  const out = result.wo.shape[0];
  const t = Math.max(0, Math.min(L - 1, explorer.hoverToken >= 0 ? explorer.hoverToken : explorer.focusToken));
  const headOutputs = Array.from({ length: H }, (_, h) => result.headOutputs.data.subarray((h * L + t) * hd, (h * L + t + 1) * hd));
  const token = sentence.tokens[t].text;
  renderWoView($('wo-view'), {
    token, position: t, numHeads: H, headDim: hd, embedDim: E, outDim: out, headOutputs,
    concat: result.concat.data.subarray(t * E, (t + 1) * E), output: result.output.data.subarray(t * out, (t + 1) * out),
    wo: result.wo.data, selectedHead: explorer.selectedHead, titleOf, theme,
    formula: `Token “${token}” (position ${t + 1}): ${H} heads × ${hd} dimensions = ${H * hd} = d_model, this page's model width. (At the original Transformer's d_model of 512: 8 heads × 64 = 512, and W_O is 512 × 512.)`,
    note: source.woNote ? source.woNote() : '',
  });
}

/** The selected head's rows of W_Q, W_K, W_V (drawn only while "How its weights do it" is open). */
async function renderHeadWeights() {
  const { source } = explorer;
  if (!$('head-how').open || $('head-how').hidden || !source.headWeightRows) return;
  const h = explorer.selectedHead;
  const blocks = await source.headWeightRows(h);
  const groups = Object.entries(LAYOUT).map(([name, [start, width]]) => ({ name, start, width }));
  headWeightsLayout = drawHeadWeights($('head-weights'), { blocks, embedDim: source.embedDim, groups, theme });
  $('head-weights').setAttribute('aria-label', `${titleOf(h)}: its rows of W_Q, W_K and W_V against the 64 token features`);
}
let headWeightsLayout = null;

// ---------------------------------------------------------------------------------------------
// Controls

function selectHead(h, focus = false) {
  explorer.update({ selectedHead: h });
  hoverCell = null;
  const t0 = performance.now();
  render(HEAD_VIEWS);
  const t1 = performance.now();
  explorer.timings.lastDrawMs = t1 - t0;
  explorer.timings.lastUpdateMs = t1 - t0;
  if (focus) focusHeadTab($('head-tabs'), h);
}

let hoverFrame = 0;
function setHoverToken(i) {
  if (explorer.hoverToken === i) return;
  explorer.update({ hoverToken: i });
  cancelAnimationFrame(hoverFrame);
  hoverFrame = requestAnimationFrame(() => { if (explorer.result) render(HOVER_VIEWS); });
}

function setTheme(dark) {
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  const toggle = $('theme-toggle');
  toggle.setAttribute('aria-pressed', String(dark));
  try { localStorage.setItem('mha-theme', dark ? 'dark' : 'light'); } catch { /* storage may be off */ }
  theme = themeColors();
  if (explorer.result) render();
}

function wireControls() {
  $('theme-toggle').addEventListener('click', () => setTheme(document.documentElement.dataset.theme !== 'dark'));
  $('free-text-form').addEventListener('submit', (event) => {
    event.preventDefault();
    selectSentence($('free-text').value, $('free-text-error'));
  });
  $('free-text').addEventListener('input', () => { $('free-text-error').hidden = true; });
  const list = $('sentence-list');
  list.addEventListener('keydown', (event) => {
    const buttons = [...list.querySelectorAll('[role="radio"]')];
    const current = buttons.indexOf(document.activeElement);
    if (current < 0) return;
    const next = rovingTarget(event, current, buttons.length);
    if (next < 0) return;
    event.preventDefault();
    buttons[next].focus();
    selectSentence(next);
  });
  document.querySelectorAll('input[name="source"]').forEach((radio) => radio.addEventListener('change', () => {
    if (radio.checked) useSource(radio.value);
  }));
  $('seed').addEventListener('change', () => {
    const value = Number($('seed').value);
    if (!Number.isInteger(value) || value < 0) {
      showError($('source-error'), new Error(`The seed must be a whole number ≥ 0, got "${$('seed').value}".`));
      return;
    }
    seed = value;
    useSource('random');
  });
  $('state-dict-file').addEventListener('change', (event) => {
    const [file] = event.target.files;
    if (file) loadWeightsFile(file);
  });
  $('download-weights').addEventListener('click', downloadWeights);
  $('head-how').addEventListener('toggle', () => renderHeadWeights());
  $('layer').addEventListener('change', async () => {
    const layer = Number($('layer').value);
    layers = { ...layers, [explorer.source.id]: layer };
    explorer.source.layer = layer;
    explorer.update({ busy: explorer.busy + 1 });
    try {
      $('source-note').textContent = explorer.source.note();
      await recompute();
    } finally {
      explorer.update({ busy: explorer.busy - 1 });
    }
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
    const hit = headWeightsCellAt(headWeightsLayout, event, $('head-weights'));
    $('head-weights-hover').textContent = hit ? `${hit.block} row ${hit.row + 1}, feature ${hit.col}: ${DIMENSION_NAMES[hit.col]} = ${hit.value.toFixed(3)}` : '';
  });
  followPointer($('main-heatmap'), $('tooltip'), {
    labels,
    onCell: (cell) => {
      hoverCell = cell;
      setHoverToken(cell ? cell.row : -1);
      if (cell) render(['measure', 'main']);
    },
  });
  let resizeFrame = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => { sizes = null; if (explorer.result) render(); });
  });
  const dprQuery = () => matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
  const watchDpr = () => dprQuery().addEventListener('change', () => { if (explorer.result) render(); watchDpr(); }, { once: true });
  watchDpr();
}

// ---------------------------------------------------------------------------------------------

async function main() {
  explorer.timings.scriptStartMs = performance.now();
  theme = themeColors();
  setTheme(document.documentElement.dataset.theme === 'dark');
  FREE_TEXT.help = [...$('free-text-help').childNodes].map((n) => n.cloneNode(true));
  FREE_TEXT.placeholder = $('free-text').placeholder;
  $('max-tokens').textContent = String(MAX_TOKENS);
  wireControls();
  watchSizes();
  drawLegend($('legend'), false, 200, 12);
  try {
    mha = await loadMha();
    explorer.timings.coreLoadedMs = performance.now();
  } catch (error) {
    $('status').textContent = `The WebAssembly core could not be loaded: ${error.message}. Build it with "npm run build".`;
    $('status').classList.add('error');
    explorer.update({ status: 'error' });
    document.body.dataset.status = 'error';
    return;
  }
  await useSource('designed');
  explorer.timings.readyMs = performance.now();
  await keepStateInUrl(explorer);
  $('status').textContent = `Ready: the WebAssembly core computed ${explorer.numHeads} heads in ${explorer.timings.lastComputeMs.toFixed(1)} ms.`;
  explorer.update({ status: 'ready' });
  document.body.dataset.status = 'ok';
  // The lesson text, when it is installed, mounts itself on <section id="lesson">.
  import('./lesson/index.js').then((lesson) => {
    if (lesson && typeof lesson.mount === 'function') lesson.mount($('lesson'), { explorer });
  }).catch(() => { /* no lesson module: the explorer stands alone */ });
}

main();
