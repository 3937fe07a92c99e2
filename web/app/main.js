// The explorer page: its controls wired to the choices (choose.js) and the drawing (draw.js),
// both of which work on one explicit state (explorer-state.js). Every number shown comes from
// the WebAssembly core through the JS API.

import { loadMha } from '../lib/index.js';
import { showError, rovingTarget } from '../views/dom.js';
import { drawLegend } from '../views/heatmap.js';
import { followPointer } from '../views/head.js';
import { headWeightsCellAt } from '../views/wo.js';
import { MAX_TOKENS } from '../sources/tokens.js';
import { DIMENSION_NAMES } from '../sources/embeddings.js';
import { explorer } from './explorer-state.js';
import { labels, render, renderHeadWeights, headWeightsShown, resetSizes, setHoverCell, setHoverToken, setTheme, watchSizes } from './draw.js';
import {
  compareSentences, downloadWeights, keepFreeTextHelp, loadWeightsFile, selectLayer, selectSentence, setCore, setSeed, useSource,
} from './choose.js';

/** The explorer's state: the lesson, the exports and the tests read it. */
export { explorer };

const $ = (id) => document.getElementById(id);

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
    setSeed(value);
    useSource('random');
  });
  $('state-dict-file').addEventListener('change', (event) => {
    const [file] = event.target.files;
    if (file) loadWeightsFile(file);
  });
  $('download-weights').addEventListener('click', downloadWeights);
  $('head-how').addEventListener('toggle', () => renderHeadWeights());
  $('layer').addEventListener('change', () => selectLayer(Number($('layer').value)));
  $('similarity-form').addEventListener('submit', (event) => {
    event.preventDefault();
    compareSentences($('similarity-a').value, $('similarity-b').value);
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
    const hit = headWeightsCellAt(headWeightsShown(), event, $('head-weights'));
    $('head-weights-hover').textContent = hit ? `${hit.block} row ${hit.row + 1}, feature ${hit.col}: ${DIMENSION_NAMES[hit.col]} = ${hit.value.toFixed(3)}` : '';
  });
  followPointer($('main-heatmap'), $('tooltip'), {
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

// ---------------------------------------------------------------------------------------------

async function main() {
  explorer.timings.scriptStartMs = performance.now();
  setTheme(document.documentElement.dataset.theme === 'dark');
  keepFreeTextHelp();
  $('max-tokens').textContent = String(MAX_TOKENS);
  wireControls();
  watchSizes();
  drawLegend($('legend'), false, 200, 12);
  try {
    setCore(await loadMha());
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
  $('status').textContent = `Ready: the WebAssembly core computed ${explorer.numHeads} heads in ${explorer.timings.lastComputeMs.toFixed(1)} ms.`;
  explorer.update({ status: 'ready' });
  document.body.dataset.status = 'ok';
  // The lesson text, when it is installed, mounts itself on <section id="lesson">.
  import('./lesson/index.js').then((lesson) => {
    if (lesson && typeof lesson.mount === 'function') lesson.mount($('lesson'), { explorer });
  }).catch(() => { /* no lesson module: the explorer stands alone */ });
}

main();
