// The explorer page: its controls bound to one explorer (web/explorer/controller.js, made in
// explorer.js), drawn by draw.js and controls.js when the explorer says what changed. Every number
// shown comes from the WebAssembly core through the JS API.

import { keepScrollersReachable, rovingTarget } from '../views/dom.js';
import { drawLegend } from '../views/heatmap.js';
import { followPointer } from '../views/head.js';
import { headWeightsCellAt } from '../views/wo.js';
import { MAX_TOKENS } from '../sources/tokens.js';
import { DIMENSION_NAMES } from '../sources/embeddings.js';
import { pageStatus } from '../explorer/present.js';
import { explorer } from './explorer.js';
import { startFromLink } from './link.js';
import { wireHubBox } from './hub.js';
import { showWriting } from './write.js';
import {
  drawHover, drawSelectedHead, headWeightsShown, labels, render, renderHeadWeights, resetSizes, setHoverCell, setHoverToken, setTheme, watchSizes,
} from './draw.js';
import {
  downloadWeights, keepFreeTextHelp, seedChanged, showAblation, showCounts, showErrors, showSentenceControls, showSimilarity, showSourceControls,
  specOfRadio, weightsFilePicked, showImportance, showDetectors, wireModelOpening,
} from './controls.js';

/** The explorer's state: the lesson, the exports and the tests read it. */
export { explorer };

/** The page's element with this id: the markup has every id these scripts ask for. */
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

function wireControls() {
  $('theme-toggle').addEventListener('click', () => setTheme(document.documentElement.dataset.theme !== 'dark'));
  $('free-text-form').addEventListener('submit', (event) => {
    event.preventDefault();
    explorer.selectSentence(/** @type {HTMLInputElement} */ ($('free-text')).value);
  });
  $('free-text').addEventListener('input', () => { $('free-text-error').hidden = true; });
  const list = $('sentence-list');
  list.addEventListener('keydown', (event) => {
    const buttons = [.../** @type {NodeListOf<HTMLElement>} */ (list.querySelectorAll('[role="radio"]'))];
    const current = buttons.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (current < 0) return;
    const next = rovingTarget(event, current, buttons.length);
    if (next < 0) return;
    event.preventDefault();
    buttons[next].focus();
    explorer.selectSentence(next);
  });
  /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('input[name="source"]')).forEach((radio) => radio.addEventListener('change', () => {
    if (radio.checked) explorer.useSource(specOfRadio(radio.value));
  }));
  $('seed').addEventListener('change', seedChanged);
  $('state-dict-file').addEventListener('change', (event) => {
    const [file] = /** @type {FileList} */ (/** @type {HTMLInputElement} */ (event.target).files);
    if (file) weightsFilePicked(file);
  });
  $('download-weights').addEventListener('click', downloadWeights);
  wireModelOpening();
  wireHubBox();
  $('source-stop').addEventListener('click', () => explorer.stopLoading());
  $('importance-measure').addEventListener('click', () => explorer.measureImportance());
  $('detectors-run').addEventListener('click', () => explorer.detectHeads());
  $('head-how').addEventListener('toggle', () => renderHeadWeights());
  // on the select's label: the select itself is replaced at times (controls.js)
  $('layer-picker').addEventListener('change', () => explorer.selectLayer(Number(/** @type {HTMLSelectElement} */ ($('layer')).value)));
  $('similarity-form').addEventListener('submit', (event) => {
    event.preventDefault();
    explorer.compareSentences(/** @type {HTMLInputElement} */ ($('similarity-a')).value, /** @type {HTMLInputElement} */ ($('similarity-b')).value);
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
    const hit = headWeightsCellAt(headWeightsShown(), event, /** @type {HTMLCanvasElement} */ ($('head-weights')));
    $('head-weights-hover').textContent = hit ? `${hit.block} row ${hit.row + 1}, feature ${hit.col}: ${DIMENSION_NAMES[hit.col]} = ${hit.value.toFixed(3)}` : '';
  });
  followPointer(/** @type {HTMLCanvasElement} */ ($('main-heatmap')), $('tooltip'), {
    labels,
    onCell: (cell) => {
      setHoverCell(cell);
      setHoverToken(cell ? cell.row : -1);
      if (cell) render(['measure', 'main']);
    },
  });
  let resizeFrame = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => { resetSizes(); if (explorer.result) render(); });
  });
  const dprQuery = () => matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
  const watchDpr = () => dprQuery().addEventListener('change', () => { if (explorer.result) render(); watchDpr(); }, { once: true });
  watchDpr();
}

/** The status line: what the explorer shows, loads or computes now. */
function showStatus() {
  $('status').textContent = pageStatus(explorer);
}

/** What each change of the explorer draws again. @param {Event} event */
function onChange(event) {
  const { keys } = /** @type {CustomEvent<{ keys: string[] }>} */ (event).detail;
  const has = (/** @type {string[]} */ ...names) => names.some((k) => keys.includes(k));
  if (has('source', 'spec', 'layer', 'loading', 'progress', 'file')) showSourceControls();
  if (has('result', 'status', 'loading', 'errors')) showStatus();
  if (has('sentence', 'source')) showSentenceControls();
  if (has('errors')) showErrors();
  if (has('result')) {
    const t0 = performance.now();
    showCounts();
    const counts = performance.now() - t0;
    render(null, { split: true }).then((drawMs) => {
      if (drawMs === null) return;
      const { timings } = explorer;
      const ms = counts + drawMs;
      Object.assign(timings, { lastDrawMs: ms, lastUpdateMs: timings.lastComputeMs + ms });
      $('perf').textContent = `Last update: ${timings.lastUpdateMs.toFixed(1)} ms (core: forward pass, statistics and divergences ${timings.lastComputeMs.toFixed(1)} ms; drawing ${ms.toFixed(1)} ms) for ${explorer.shown().sentence.tokens.length} tokens.`;
    });
  } else if (explorer.result) {
    if (has('selectedHead')) drawSelectedHead();
    if (has('pair')) render(['measure', 'pair']);
    if (has('focusToken')) render(['wo', 'follow', 'predictions']);
  }
  if (has('hoverToken') && explorer.result) drawHover();
  if (has('ablation')) { showAblation(); if (explorer.result) render(['predictions']); }
  if (has('importance', 'measuringImportance', 'source', 'layer', 'selectedHead', 'errors', 'busy')) showImportance();
  if (has('detectors', 'detecting', 'source', 'sentence', 'layer', 'selectedHead', 'errors', 'busy')) showDetectors();
  if (has('similarity')) showSimilarity();
  if (has('sentence', 'source', 'busy')) showWriting();
}

async function main() {
  explorer.timings.scriptStartMs = performance.now();
  setTheme(document.documentElement.dataset.theme === 'dark');
  keepFreeTextHelp();
  $('max-tokens').textContent = String(MAX_TOKENS);
  wireControls();
  watchSizes();
  keepScrollersReachable($('explorer'));
  drawLegend(/** @type {HTMLCanvasElement} */ ($('legend')), false, 200, 12);
  explorer.addEventListener('change', onChange);
  await startFromLink();
  showStatus();
  if (explorer.status === 'error') {
    $('status').classList.add('error');
    document.body.dataset.status = 'error';
    return;
  }
  document.body.dataset.status = 'ok';
  // The lesson text, when it is installed, mounts itself on <section id="lesson">.
  import('./lesson/index.js').then((lesson) => {
    if (lesson && typeof lesson.mount === 'function') lesson.mount($('lesson'), { explorer });
  }).catch(() => { /* no lesson module: the explorer stands alone */ });
}

main();
