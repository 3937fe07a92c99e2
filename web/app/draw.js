// The explorer page's drawing: it hands the explorer's state (web/explorer) to the views
// (web/views), each view redrawn only when what it shows has changed.
import { themeColors } from '../views/theme.js';
import { drawnOn, useLongMaps } from '../views/heatmap.js';
import * as longMaps from '../views/long-maps.js';
import { renderHeadTabs, focusHeadTab } from '../views/tabs.js';
import { renderHeadMap, renderHeadInfo } from '../views/head.js';
import { renderHeadGrid } from '../views/grid.js';
import { renderCompare } from '../views/compare.js';
import { highlightToken } from '../views/token-strip.js';
import { renderWeightsTable } from '../views/weights-table.js';
import { renderWoView, drawHeadWeights } from '../views/wo.js';
import { renderFollow } from '../views/follow.js';
import { renderModelGrid } from '../views/model-grid.js';
import { renderPredictions } from '../views/predictions.js';
import { headMaps } from '../sources/source.js';
import { D_MODEL, LAYOUT } from '../sources/embeddings.js';
import { headText, concatFormula, kvHeadsOf } from '../explorer/present.js';
import { explorer } from './explorer.js';
import { nextTask } from '../lib/next-task.js';

/** The page's element with this id: the markup has every id these scripts ask for. */
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
let theme = themeColors();
// a model's text may be as long as its context: maps of up to 1,024 tokens fit their boxes
useLongMaps(longMaps);

// The views are drawn once the explorer has a result: explorer.shown() holds.
export const labels = () => explorer.shown().sentence.tokens.map((t) => t.text);
const highlightRow = () => (explorer.hoverToken >= 0 ? explorer.hoverToken : -1);
const titleOf = (/** @type {number} */ h) => explorer.shown().source.title(h);
const shortOf = (/** @type {number} */ h) => explorer.shown().source.short(h);
/** Head h's map as computed. */
const mapOf = (/** @type {number} */ h) => /** @type {Float32Array} */ (explorer.map(h));

/** Forget the widths read (after a resize). */
export function resetSizes() { sizes = null; }

/** Widths the views lay out in. Read once and again only when a container is resized, so that
 *  an update never forces a layout of the whole page before drawing. */
/** @typedef {{ main: number, panel: number, grid: number, pair: number, layers: number }} Sizes */
/** @type {Sizes | null} */
let sizes = null;
/** @returns {Sizes} */
function readSizes() {
  // the map's column (the first of the head panel's tracks, whether the map spans both or not),
  // and the whole panel
  const column = parseFloat(getComputedStyle($('head-panel')).gridTemplateColumns);
  return {
    main: column || /** @type {HTMLElement} */ ($('main-heatmap').parentElement).clientWidth || 600,
    panel: $('head-panel').clientWidth || 600,
    grid: $('small-multiples').clientWidth || 1000,
    pair: $('compare-view').clientWidth || 900,
    layers: $('model-grid').clientWidth || $('small-multiples').clientWidth || 1000,
  };
}
export function watchSizes() {
  if (typeof ResizeObserver !== 'function') return;
  let frame = 0;
  const observer = new ResizeObserver(() => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      const next = readSizes();
      const changed = !sizes || /** @type {(keyof Sizes)[]} */ (Object.keys(next)).some((k) => next[k] !== sizes?.[k]);
      sizes = next;
      if (changed && explorer.result) render();
    });
  });
  // One element observed, of the explorer's width and no height: the views' widths follow the
  // explorer's (its grid columns have no content-sized tracks), and a change of the content's
  // height is no resize. An observed size that changes while the observer delivers (content
  // arriving, a scrollbar) leaves a notification undelivered, and the browser reports a
  // "ResizeObserver loop" error.
  observer.observe($('explorer-width'));
}

/** The widths read ('measure' reads them when there are none). */
const measured = () => sizes ?? (sizes = readSizes());

/** @type {Record<string, () => void>} */
const VIEWS = {
  measure: () => { measured(); },
  tabs: () => renderTabs(),
  main: () => renderMainHeatmap(),
  info: () => renderInfo(),
  table: () => scheduleWeightsTable(),
  grid: () => renderHeadGrid($('small-multiples'), {
    maps: headMaps(explorer.shown().result.weights), length: explorer.shown().sentence.tokens.length, selected: explorer.selectedHead,
    width: measured().grid, minColumn: 130, theme, shortOf, highlightRow: highlightRow(), onSelect: (h) => selectHead(h), kvHeads: kvHeadsOf(explorer.shown().source),
  }),
  pair: () => renderCompare($('compare-view'), {
    maps: headMaps(explorer.shown().result.weights), length: explorer.shown().sentence.tokens.length, labels: labels(),
    a: explorer.pair.a, b: explorer.pair.b, similarity: explorer.shown().result.similarity, width: measured().pair, theme,
    highlightRow: highlightRow(), shortOf, titleOf, onChange: (a, b) => explorer.setPair(a, b),
    hoverCell: pairHover && pairHover.result === explorer.result ? pairHover.cell : null, onHover: setPairHover, kvHeads: kvHeadsOf(explorer.shown().source),
  }),
  wo: () => renderWo(),
  follow: () => renderFollowed(),
  layers: () => renderLayers(),
  predictions: () => renderPredicted(),
  tokens: () => highlightToken($('token-strip'), explorer.hoverToken),
  weights: () => renderHeadWeights(),
};
/** Which views depend on what: a new head redraws only what shows the selected head; a
 *  highlighted token redraws the maps with rows and the W_O view. */
export const HEAD_VIEWS = ['measure', 'tabs', 'main', 'info', 'table', 'grid', 'wo', 'follow', 'weights', 'layers'];
export const HOVER_VIEWS = ['measure', 'main', 'grid', 'pair', 'wo', 'follow', 'tokens', 'predictions'];

/** What a new result draws after what shows the selected head, a group a task: the page answers
 *  input between them, and the browser paints each group's part of the page in a frame of its
 *  own (a browser that paints on the CPU, as WebKitGTK without a GPU does, would otherwise paint
 *  every view of the explorer in one frame). The weights table comes last of all, so a table of
 *  the shown key means every view is drawn. */
const LATER_GROUPS = [['grid'], ['pair'], ['wo'], ['follow', 'layers', 'predictions', 'table']];
const LATER = new Set(LATER_GROUPS.flat());
let fullRun = 0;

/**
 * Draw the views named in `only` (every view by default) at once; with `split`, every view,
 * what shows the selected head first and the rest (LATER_GROUPS) in the tasks after. Resolves to
 * the ms spent drawing, or null when a newer split drawing took over before the rest was drawn.
 * @param {string[] | null} [only]
 * @param {{ split?: boolean }} [options]
 * @returns {Promise<number | null>}
 */
export function render(only = null, { split = false } = {}) {
  /** @type {Record<string, number>} */
  const parts = {};
  const draw = (/** @type {(name: string) => boolean} */ which) => {
    for (const [name, view] of Object.entries(VIEWS)) {
      if (!which(name)) continue;
      const t0 = performance.now();
      view();
      parts[name] = performance.now() - t0;
    }
    explorer.timings.parts = parts;
  };
  const sum = () => Object.values(parts).reduce((a, b) => a + b, 0);
  if (!split) {
    draw((name) => !only || only.includes(name));
    return Promise.resolve(sum());
  }
  const run = ++fullRun;
  draw((name) => !LATER.has(name));
  drawing = (async () => {
    for (const group of LATER_GROUPS) {
      await nextTask();
      if (run !== fullRun || !explorer.result) return null;
      draw((name) => group.includes(name));
    }
    return sum();
  })();
  return drawing;
}

/** @type {Promise<number | null>} */
let drawing = Promise.resolve(null);

/** Resolves once every view of the newest result is drawn (where a panel is, for instance). */
export async function drawn() {
  let waited;
  do {
    waited = drawing;
    await waited;
  } while (waited !== drawing);
}

function renderTabs() {
  renderHeadTabs($('head-tabs'), {
    count: explorer.numHeads, selected: explorer.selectedHead, shortOf, titleOf, panelId: 'head-panel', idPrefix: 'head-tab-',
    onSelect: (h, { focus }) => selectHead(h, focus),
  });
  $('head-panel').setAttribute('aria-labelledby', `head-tab-${explorer.selectedHead}`);
}

/** @type {{ row: number, col: number } | null} */
let hoverCell = null;
/** The cell pointed at in the compared maps, and the result it belongs to.
 *  @type {{ cell: { row: number, col: number } | null, result: unknown } | null} */
let pairHover = null;
/** A cell of the compared maps pointed at (or null): its row is followed like a hovered token. @param {{ row: number, col: number } | null} cell */
function setPairHover(cell) {
  pairHover = { cell, result: explorer.result };
  // the compared maps at once, the other maps with rows at the next frame
  render(['measure', 'pair']);
  setHoverToken(cell ? cell.row : -1);
}
/** The cell under the pointer in the main map, or null. @param {{ row: number, col: number } | null} cell */
export function setHoverCell(cell) { hoverCell = cell; }
/** Cells this large (CSS px) name every token on both axes. */
const LABELLED_CELL = 16;
/** A sentence too long for the map's column to name every token there: the map takes the
 *  panel's whole width, the head's card goes below it. */
function renderMainHeatmap() {
  const { main, panel } = measured();
  const L = labels().length;
  const room = L * LABELLED_CELL + 90;
  const long = main < room && panel > main + 40;
  $('head-panel').classList.toggle('long-map', long);
  renderHeadMap(/** @type {HTMLCanvasElement} */ ($('main-heatmap')), {
    values: mapOf(explorer.selectedHead), labels: labels(), width: long ? Math.min(panel, room) : main, theme, title: titleOf(explorer.selectedHead),
    highlightRow: highlightRow(), hoverCell,
  });
  // a long text: maps with fewer device pixels than tokens are max-pooled (drawCells), and the legend says so
  const tokensPerPixel = 1 / ((drawnOn(/** @type {HTMLCanvasElement} */ ($('main-heatmap')))?.layout?.cell ?? 1) * (window.devicePixelRatio || 1));
  $('pooled-note').hidden = L <= longMaps.LONG_MAP;
  $('pooled-note').textContent = L <= longMaps.LONG_MAP ? ''
    : `${L} tokens: a map with fewer pixels than tokens (the heads side by side, every layer and head${tokensPerPixel > 1 ? `, and this one, about ${Math.ceil(tokensPerPixel)} × ${Math.ceil(tokensPerPixel)} cells a pixel` : ''}) shows in each pixel the largest weight of the cells it covers (max-pooled). Point at a cell here for its own weight; the CSV export has every weight.`;
}

function renderInfo() {
  const text = headText(explorer, explorer.selectedHead);
  renderHeadInfo($('head-info'), { title: text.title, focus: text.focus, typical: text.typical, statistics: text.statistics, check: text.check, kv: text.kv });
  $('head-how').hidden = !text.how;
  $('head-how-text').textContent = text.how;
}

// The table (L² cells) is built after the frame, when the browser is idle: it is read, not
// watched, and building it inside the update would double the page's layout work.
let tableTask = 0;
/** Texts longer than this list one row of the weights table. */
const LONG_TABLE = longMaps.LONG_MAP;
function scheduleWeightsTable() {
  const cancel = window.cancelIdleCallback || clearTimeout;
  const request = window.requestIdleCallback || ((/** @type {() => void} */ fn) => setTimeout(fn, 30));
  cancel(tableTask);
  const L = labels().length;
  // a long text: the row of the token followed, whose L cells a reader can go through
  const t = L > LONG_TABLE ? Math.max(0, Math.min(L - 1, explorer.focusToken)) : -1;
  tableTask = request(() => renderWeightsTable($('weights-table-wrap'), {
    values: mapOf(explorer.selectedHead), labels: labels(), version: explorer.shownKey(), ...(t >= 0 ? { rows: [t] } : {}),
    caption: `${titleOf(explorer.selectedHead)}: attention weights. Rows are queries, columns are keys; each row sums to 1.${t >= 0 ? ` Of the ${L} rows, the one of the token followed (${t + 1}); every row is in the CSV export.` : ''}`,
  }), { timeout: 200 });
}

function renderWo() {
  const { source, result, sentence } = explorer.shown();
  const { headOutputs: outputs, concat, output, wo } = result;
  const shown = !!(outputs && concat && output && wo);
  $('wo-view').hidden = !shown;
  $('wo-missing').hidden = shown;
  if (!outputs || !concat || !output || !wo) {
    $('wo-missing').textContent = source.woMissing ? source.woMissing() : 'This source does not expose its head outputs.';
    return;
  }
  const [H, L, hd] = outputs.shape;
  const E = concat.shape[concat.shape.length - 1];
  const out = wo.shape[0];
  const t = Math.max(0, Math.min(L - 1, explorer.hoverToken >= 0 ? explorer.hoverToken : explorer.focusToken));
  const headOutputs = Array.from({ length: H }, (_, h) => outputs.data.subarray((h * L + t) * hd, (h * L + t + 1) * hd));
  const token = sentence.tokens[t].text;
  renderWoView($('wo-view'), {
    token, position: t, numHeads: H, headDim: hd, embedDim: E, outDim: out, headOutputs,
    concat: concat.data.subarray(t * E, (t + 1) * E), output: output.data.subarray(t * out, (t + 1) * out),
    wo: wo.data, selectedHead: explorer.selectedHead, titleOf, theme,
    formula: `Token “${token}” (position ${t + 1}): ${concatFormula(H)} holds ${H} heads × ${hd} dimensions = ${H * hd} = d_model${out === E ? '' : `, and W_O maps them to ${out} numbers`}. (At the original Transformer's d_model of 512: 8 heads × 64 = 512, and W_O is 512 × 512.)`,
    note: source.woNote ? source.woNote() : '',
  });
}

/** The selected head at the token followed (hovered, else clicked): its weights and its output. */
function renderFollowed() {
  const { result, sentence } = explorer.shown();
  const h = explorer.selectedHead;
  const L = sentence.tokens.length;
  const t = Math.max(0, Math.min(L - 1, explorer.hoverToken >= 0 ? explorer.hoverToken : explorer.focusToken));
  let output = null;
  if (result.headOutputs) {
    const hd = result.headOutputs.shape[2];
    output = result.headOutputs.data.subarray((h * L + t) * hd, (h * L + t + 1) * hd);
  }
  renderFollow($('follow-view'), { title: titleOf(h), token: sentence.tokens[t].text, position: t, labels: labels(), row: mapOf(h).subarray(t * L, (t + 1) * L), output });
}

/** Every layer × head of a source with its layers' weights (a model): the selected one marked. */
function renderLayers() {
  const { source, result, sentence } = explorer.shown();
  const shown = !!result.layers;
  $('layers-panel').hidden = !shown;
  if (!result.layers) return;
  const kv = kvHeadsOf(source);
  const groups = $('layers-groups');
  groups.hidden = !kv;
  if (kv) {
    const G = Math.max(...kv) + 1;
    const per = kv.length / G;
    groups.textContent = `Grouped-query attention: its ${kv.length} query heads share ${G} key/value head${G > 1 ? 's' : ''}, ${per} query heads each. The heads under one label (KV 1, KV 2, …) read the same keys and values; only their queries differ.`;
  }
  renderModelGrid($('model-grid'), {
    layers: result.layers, length: sentence.tokens.length, selected: { layer: source.layer, head: explorer.selectedHead }, width: measured().layers, kvHeads: kvHeadsOf(source),
    titleOf: (l, h) => `Layer ${l}, head ${h + 1}${l === source.layer ? `: ${source.short(h)}` : ''}`,
    onSelect: (l, h) => { explorer.setState({ layer: l, head: h }); },
  });
}

/** The model's predictions at the token followed, and with the heads switched off. */
function renderPredicted() {
  const { source, sentence } = explorer.shown();
  $('predictions-panel').hidden = !source.predicts;
  if (!source.predicts || !source.predictions) return;
  const run = /** @type {{ run?: { logits: import('../lib/index.js').Tensor | null } }} */ (sentence).run;
  if (!run) return;
  const L = sentence.tokens.length;
  const t = Math.max(0, Math.min(L - 1, explorer.hoverToken >= 0 ? explorer.hoverToken : explorer.focusToken));
  const { ablation } = explorer;
  const off = ablation && ablation.heads.length && ablation.run
    ? { heads: `${ablation.heads.length === 1 ? 'head' : 'heads'} ${ablation.heads.map((h) => h + 1).join(', ')} of layer ${source.layer}`, rows: source.predictions(ablation.run, t) }
    : null;
  renderPredictions($('predictions-view'), { token: sentence.tokens[t].text, position: t, count: L, next: source.causal, rows: source.predictions(run, t), off });
}

/** The selected head's rows of W_Q, W_K, W_V (drawn only while "How its weights do it" is open). */
export async function renderHeadWeights() {
  const { source } = explorer;
  if (!source || !/** @type {HTMLDetailsElement} */ ($('head-how')).open || $('head-how').hidden || !source.headWeightRows) return;
  const h = explorer.selectedHead;
  const blocks = await source.headWeightRows(h);
  const groups = Object.entries(LAYOUT).map(([name, [start, width]]) => ({ name, start, width }));
  headWeightsLayout = drawHeadWeights(/** @type {HTMLCanvasElement} */ ($('head-weights')), { blocks, embedDim: source.embedDim, groups, theme });
  const E = source.embedDim;
  const inputs = `the ${E} ${E === D_MODEL ? 'token features' : 'inputs (the token features, projected)'}`;
  $('head-weights').setAttribute('aria-label', `${titleOf(h)}: its rows of W_Q, W_K and W_V against ${inputs}`);
  // the designed heads' fallback on the first token is a query bias (designed-heads.js)
  $('head-weights-caption').textContent = `This head's rows of W_Q, W_K and W_V (${blocks[0][1].length / E} each) against ${inputs}, read back from the core, each on its own colour scale. Purple negative, orange positive; hover for a feature's name and value.${source.id === 'designed' ? ' (The first-token fallback lives in the query bias, not shown.)' : ''}`;
}
/** @type {import('../views/wo.js').HeadWeightsLayout | null} */
let headWeightsLayout = null;
/** Where the head-weights view put its cells (for the pointer). */
export const headWeightsShown = () => headWeightsLayout;

// ---------------------------------------------------------------------------------------------
// What the explorer's changes redraw

/** Select head h: only what shows the selected head is drawn again, timed. @param {number} h @param {boolean} [focus] */
export function selectHead(h, focus = false) {
  explorer.selectHead(h);
  if (focus) focusHeadTab($('head-tabs'), h);
}

/** Draw the head views for a new selected head (the explorer's change), timed. */
export function drawSelectedHead() {
  hoverCell = null;
  const t0 = performance.now();
  render(HEAD_VIEWS);
  const t1 = performance.now();
  explorer.timings.lastDrawMs = t1 - t0;
  explorer.timings.lastUpdateMs = t1 - t0;
}

let hoverFrame = 0;
/** The highlighted token changed: the maps with rows, the W_O view and the strip, at the next frame. */
export function drawHover() {
  cancelAnimationFrame(hoverFrame);
  hoverFrame = requestAnimationFrame(() => { if (explorer.result) render(HOVER_VIEWS); });
}

/** @param {number} i */
export function setHoverToken(i) {
  if (explorer.hoverToken !== i) explorer.setHoverToken(i);
}

/** @param {boolean} dark */
export function setTheme(dark) {
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  const toggle = $('theme-toggle');
  toggle.setAttribute('aria-pressed', String(dark));
  try { localStorage.setItem('mha-theme', dark ? 'dark' : 'light'); } catch { /* storage may be off */ }
  theme = themeColors();
  if (explorer.result) render();
}
