// The explorer page's drawing: it hands the explorer's state (explorer-state.js) to the views
// (web/views), each view redrawn only when what it shows has changed.
import { themeColors } from '../views/theme.js';
import { renderHeadTabs, focusHeadTab } from '../views/tabs.js';
import { renderHeadMap, renderHeadInfo } from '../views/head.js';
import { renderHeadGrid } from '../views/grid.js';
import { renderCompare } from '../views/compare.js';
import { highlightToken } from '../views/token-strip.js';
import { renderWeightsTable } from '../views/weights-table.js';
import { renderWoView, drawHeadWeights } from '../views/wo.js';
import { statisticsRows } from '../views/head-text.js';
import { renderFollow } from '../views/follow.js';
import { headMaps } from '../sources/source.js';
import { LAYOUT } from '../sources/embeddings.js';
import { explorer } from './explorer-state.js';

const $ = (id) => document.getElementById(id);
let theme = themeColors();

export const labels = () => explorer.sentence.tokens.map((t) => t.text);
const highlightRow = () => (explorer.hoverToken >= 0 ? explorer.hoverToken : -1);
const titleOf = (h) => explorer.source.title(h);
const shortOf = (h) => explorer.source.short(h);

/** Forget the widths read (after a resize). */
export function resetSizes() { sizes = null; }

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
export function watchSizes() {
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
  // One element observed: the views' widths follow the explorer's (its grid columns have no
  // content-sized tracks). With several observed elements at several depths, a size that changes
  // during the observer's delivery (a web font or a scrollbar arriving) leaves a notification
  // undelivered, and the browser reports a "ResizeObserver loop" error.
  observer.observe($('explorer'));
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
  follow: () => renderFollowed(),
  tokens: () => highlightToken($('token-strip'), explorer.hoverToken),
  weights: () => renderHeadWeights(),
};
/** Which views depend on what: a new head redraws only what shows the selected head; a
 *  highlighted token redraws the maps with rows and the W_O view. */
export const HEAD_VIEWS = ['measure', 'tabs', 'main', 'info', 'table', 'grid', 'wo', 'follow', 'weights'];
export const HOVER_VIEWS = ['measure', 'main', 'grid', 'pair', 'wo', 'follow', 'tokens'];

export function render(only = null) {
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
/** The cell under the pointer in the main map, or null. */
export function setHoverCell(cell) { hoverCell = cell; }
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
    formula: `Token “${token}” (position ${t + 1}): ${H} heads × ${hd} dimensions = ${H * hd} = d_model${out === E ? '' : `, and W_O maps them to ${out} numbers`}. (At the original Transformer's d_model of 512: 8 heads × 64 = 512, and W_O is 512 × 512.)`,
    note: source.woNote ? source.woNote() : '',
  });
}

/** The selected head at the token followed (hovered, else clicked): its weights and its output. */
function renderFollowed() {
  const { result, sentence, selectedHead: h } = explorer;
  const L = sentence.tokens.length;
  const t = Math.max(0, Math.min(L - 1, explorer.hoverToken >= 0 ? explorer.hoverToken : explorer.focusToken));
  let output = null;
  if (result.headOutputs) {
    const hd = result.headOutputs.shape[2];
    output = result.headOutputs.data.subarray((h * L + t) * hd, (h * L + t + 1) * hd);
  }
  renderFollow($('follow-view'), { title: titleOf(h), token: sentence.tokens[t].text, position: t, labels: labels(), row: explorer.map(h).subarray(t * L, (t + 1) * L), output });
}

/** The selected head's rows of W_Q, W_K, W_V (drawn only while "How its weights do it" is open). */
export async function renderHeadWeights() {
  const { source } = explorer;
  if (!$('head-how').open || $('head-how').hidden || !source.headWeightRows) return;
  const h = explorer.selectedHead;
  const blocks = await source.headWeightRows(h);
  const groups = Object.entries(LAYOUT).map(([name, [start, width]]) => ({ name, start, width }));
  headWeightsLayout = drawHeadWeights($('head-weights'), { blocks, embedDim: source.embedDim, groups, theme });
  $('head-weights').setAttribute('aria-label', `${titleOf(h)}: its rows of W_Q, W_K and W_V against the 64 token features`);
}
let headWeightsLayout = null;
/** Where the head-weights view put its cells (for the pointer). */
export const headWeightsShown = () => headWeightsLayout;

// ---------------------------------------------------------------------------------------------
// Controls

export function selectHead(h, focus = false) {
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
export function setHoverToken(i) {
  if (explorer.hoverToken === i) return;
  explorer.update({ hoverToken: i });
  cancelAnimationFrame(hoverFrame);
  hoverFrame = requestAnimationFrame(() => { if (explorer.result) render(HOVER_VIEWS); });
}

export function setTheme(dark) {
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  const toggle = $('theme-toggle');
  toggle.setAttribute('aria-pressed', String(dark));
  try { localStorage.setItem('mha-theme', dark ? 'dark' : 'light'); } catch { /* storage may be off */ }
  theme = themeColors();
  if (explorer.result) render();
}
