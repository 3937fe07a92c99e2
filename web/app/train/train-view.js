// The train view: live training in a Web Worker (train-worker.js) and the shipped trained model,
// both measured head by head against the grammar's relations. Every number comes from the
// WebAssembly core through web/lib/train.js.
import { loadTrainer, RELATIONS, bestPair } from '../../lib/train.js';
import { el } from '../../views/dom.js';
import { chartFrame, polyline } from '../../views/charts.js';
import { drawHeatmap } from '../../views/heatmap.js';
import { themeColors } from '../../views/theme.js';
import { TRAINED_WEIGHTS, ruleHead, evidenceText, sentenceText } from '../../sources/trained.js';
import { trainedRoles } from '../../roles/measure.js';
import { labelName } from '../../roles/vocabulary.js';

/** The page's element with this id: the markup has every id these scripts ask for. */
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @typedef {Awaited<ReturnType<typeof loadTrainer>>} Trainer */
/** @typedef {ReturnType<Trainer['evaluate']>} Evaluation */
/** @typedef {import('../../sources/source.js').HeadRoles} HeadRoles */
/** @typedef {{ entry: import('../../sources/source.js').HeadRoleEntry, name: string, named: boolean }} HeadLabel */
/** @typedef {ReturnType<Trainer['sentence']>} GrammarSentence */
/** @typedef {{ step: number, best: Record<string, number> }} ScorePoint */

/**
 * Read by the browser tests (a symbol-keyed, non-enumerable property: no new global name).
 * @type {{ losses: { step: number, loss: number, seconds: number }[], evaluations: { step: number, seconds: number, evaluation: Evaluation }[],
 *          scoreSeries: ScorePoint[], trained: { evaluation: Evaluation, labels: HeadLabel[], maps?: import('../../lib/index.js').Tensor, sentence?: GrammarSentence } | null,
 *          lastMaps: import('../../lib/index.js').Tensor | null, worker: Worker | null, errors: string[] }}
 */
const view = { losses: [], evaluations: [], scoreSeries: [], trained: null, lastMaps: null, worker: null, errors: [] };
Object.defineProperty(window, Symbol.for('mha-train-view'), { value: view });

/** @param {string} id @param {string} message */
function showError(id, message) {
  const box = $(id);
  box.textContent = message;
  box.hidden = !message;
  if (message) view.errors.push(message);
}

// ---------------------------------------------------------------------------------------------
// Drawing

const theme = themeColors();

/** One head's T x T map: row = query, column = key. @param {HTMLCanvasElement} canvas @param {ArrayLike<number>} values @param {number} T */
function drawMap(canvas, values, T) {
  drawHeatmap(canvas, { values, rows: T, cols: T, width: 168, maxCell: Math.max(2, Math.floor(160 / T)), theme, stableSize: false });
}

/** @param {HTMLCanvasElement} canvas @param {{ step: number, loss: number }[]} losses */
function drawLoss(canvas, losses) {
  if (losses.length < 2) {
    /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d')).clearRect(0, 0, canvas.width, canvas.height);
    return;
  }
  const maxStep = losses[losses.length - 1].step;
  const maxLoss = Math.max(...losses.map((p) => p.loss));
  const minLoss = Math.min(0, ...losses.map((p) => p.loss));
  const { ctx, x, y } = chartFrame(canvas, maxLoss.toFixed(2), minLoss.toFixed(1), maxStep);
  polyline(ctx, losses.map((p) => [x(p.step), y((p.loss - minLoss) / (maxLoss - minLoss || 1))]), '#1d4ed8');
}

// One colour per relation in the score chart and its legend.
/** @type {Record<string, string>} */
const RELATION_COLOURS = {
  previous: '#b45309', verbSubject: '#1d4ed8', pronounAntecedent: '#15803d', nounModifier: '#7c3aed', induction: '#be123c',
};

/** The best single head's mean weight on each relation, any layer: {relation: score}. @param {Evaluation} evaluation */
function bestScores(evaluation) {
  /** @type {Record<string, number>} */
  const best = {};
  for (const relation of RELATIONS) {
    best[relation] = Math.max(...evaluation.heads.filter((s) => s.relation === relation).map((s) => s.meanWeight));
  }
  return best;
}

/** Each relation's best head score by step (0..1). @param {HTMLCanvasElement} canvas @param {ScorePoint[]} series */
function drawScores(canvas, series) {
  const maxStep = series.length ? series[series.length - 1].step : undefined;
  const { ctx, x, y } = chartFrame(canvas, '1.0', '0.0', maxStep);
  for (const relation of RELATIONS) {
    polyline(ctx, series.map((p) => [x(p.step), y(p.best[relation])]), RELATION_COLOURS[relation], 2);
  }
}

/** @param {HTMLElement} list */
function renderLegend(list) {
  list.replaceChildren(...RELATIONS.map((relation) => {
    const swatch = el('span', { class: 'swatch' });
    swatch.style.background = RELATION_COLOURS[relation];  // CSSOM, allowed under style-src 'self'
    return el('li', {}, swatch, relation);
  }));
}

/** Each head's label (layer by layer), by the one rule (web/roles/evaluate.js): {entry, name}. */
/** @param {HeadRoles} roles @param {number} L @param {number} H */
function headLabels(roles, L, H) {
  /** @type {HeadLabel[]} */
  const labels = [];
  for (let layer = 0; layer < L; ++layer) {
    for (let head = 0; head < H; ++head) {
      const entry = /** @type {import('../../sources/source.js').HeadRoleEntry} */ (ruleHead(roles, layer, head)); // every head is in the table
      labels.push({ entry, name: labelName(entry.label), named: entry.kind === 'role' || entry.kind === 'relation' });
    }
  }
  return labels;
}

/** @param {HTMLElement} container @param {import('../../lib/index.js').Tensor} maps  (layers, heads, T, T) @param {HeadLabel[] | null} labels */
function renderMaps(container, maps, labels) {
  const [L, H, T] = maps.shape;
  container.replaceChildren();
  for (let layer = 0; layer < L; ++layer) {
    for (let head = 0; head < H; ++head) {
      const canvas = el('canvas', { 'aria-label': `layer ${layer} head ${head} attention map` });
      const offset = (layer * H + head) * T * T;
      drawMap(canvas, maps.data.subarray(offset, offset + T * T), T);
      const label = labels ? labels[layer * H + head].name : '';
      container.append(el('figure', {}, canvas, el('figcaption', {}, `L${layer} H${head}`, el('span', { class: 'label', text: label }))));
    }
  }
}

/**
 * @param {HTMLElement} container @param {Evaluation} evaluation @param {HeadRoles} roles
 * @param {number} L @param {number} H
 */
function renderTable(container, evaluation, roles, L, H) {
  const labels = headLabels(roles, L, H);
  const table = el('table', { class: 'scores' });
  table.append(el('tr', {}, el('th', { class: 'label', text: 'head' }),
    ...RELATIONS.map((r) => el('th', { text: r })), el('th', { class: 'label', text: 'label' })));
  for (let layer = 0; layer < L; ++layer) {
    for (let head = 0; head < H; ++head) {
      const row = el('tr', {}, el('td', { class: 'label', text: `L${layer} H${head}` }));
      for (const relation of RELATIONS) {
        // every head is scored on every relation
        const s = /** @type {Evaluation['heads'][number]} */ (evaluation.heads.find((x) => x.layer === layer && x.head === head && x.relation === relation));
        row.append(el('td', {
          text: `${s.meanWeight.toFixed(2)} (${s.argmaxShare.toFixed(2)})`,
          title: `measured at the ${s.at.replace('_', ' ')}`,
        }));
      }
      const label = labels[layer * H + head];
      row.append(el('td', { class: 'label', text: label.name, title: evidenceText(label.entry, roles.rule) }));
      table.append(row);
    }
  }
  const specialised = labels.filter((l) => l.named).length;
  const pair = bestPair(evaluation.heads, 'induction');
  const summary = el('p', { class: 'note' },
    `${specialised} of ${L * H} heads named by the rule (the low end of a 95% interval over ${roles.corpus.split.test} test sentences above the strongest baseline, or a role's threshold); ${L * H - specialised} broad or mixed. ` +
    `Induction: the two best heads of layer ${pair.layer} (H${pair.heads.join(', H')}) together put ${pair.sum.toFixed(2)} on the true target. ` +
    `Held-out accuracy: agreement ${(100 * evaluation.accuracy.agreement).toFixed(1)}%, pronoun ${(100 * evaluation.accuracy.pronoun).toFixed(1)}%, copy ${(100 * evaluation.accuracy.copy).toFixed(1)}% (${evaluation.sentences} sentences).`);
  container.replaceChildren(summary, table);
  return labels;
}

// ---------------------------------------------------------------------------------------------
// Live training

function startTraining() {
  showError('error', '');
  const seed = Number(/** @type {HTMLInputElement} */ ($('seed')).value);
  // An empty box trains at the default (the native trainer's, filled in once the core has loaded).
  const learningRate = /** @type {HTMLInputElement} */ ($('learning-rate')).value.trim() === '' ? undefined : Number(/** @type {HTMLInputElement} */ ($('learning-rate')).value);
  if (!Number.isInteger(seed) || seed < 0) return showError('error', `The seed must be a whole number ≥ 0, got "${/** @type {HTMLInputElement} */ ($('seed')).value}".`);
  if (learningRate !== undefined && !(learningRate > 0 && learningRate <= 0.05)) return showError('error', `The learning rate must be in (0, 0.05], got "${/** @type {HTMLInputElement} */ ($('learning-rate')).value}".`);
  if (view.worker) view.worker.terminate();
  view.losses = [];
  view.evaluations = [];
  view.scoreSeries = [];
  drawScores(/** @type {HTMLCanvasElement} */ ($('score-curve')), view.scoreSeries);
  const worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' });
  view.worker = worker;
  worker.onmessage = ({ data }) => {
    if (data.type === 'ready') {
      $('live-sentence').textContent = sentenceText(data.sentence);
      renderMaps($('live-maps'), data.maps, null);
      $('status').textContent = `Training from random weights (seed ${seed})…`;
      /** @type {HTMLButtonElement} */ ($('pause')).disabled = false;
    } else if (data.type === 'loss') {
      view.losses.push({ step: data.step, loss: data.loss, seconds: data.seconds });
      drawLoss(/** @type {HTMLCanvasElement} */ ($('loss-curve')), view.losses);
      $('status').textContent = `Step ${data.step}: loss ${data.loss.toFixed(3)}, learning rate ${data.learningRate.toExponential(2)}, ${data.seconds.toFixed(1)} s of training.`;
    } else if (data.type === 'eval') {
      const e = data.evaluation;
      view.evaluations.push({ step: data.step, seconds: data.seconds, evaluation: e });
      view.scoreSeries.push({ step: data.step, best: bestScores(e) });
      drawScores(/** @type {HTMLCanvasElement} */ ($('score-curve')), view.scoreSeries);
      view.lastMaps = data.maps;
      $('acc-agreement').textContent = `${(100 * e.accuracy.agreement).toFixed(1)}%`;
      $('acc-pronoun').textContent = `${(100 * e.accuracy.pronoun).toFixed(1)}%`;
      $('acc-copy').textContent = `${(100 * e.accuracy.copy).toFixed(1)}%`;
      const [L, H] = data.maps.shape;
      const labels = renderTable($('live-table'), e, data.roles, L, H);
      renderMaps($('live-maps'), data.maps, labels);
    } else if (data.type === 'error') {
      showError('error', data.message);
    }
  };
  worker.onerror = (event) => showError('error', `The training worker failed: ${event.message ?? 'unknown error'}`);
  worker.postMessage({ type: 'start', seed, learningRate });
  /** @type {HTMLButtonElement} */ ($('resume')).disabled = true;
}

$('start').addEventListener('click', startTraining);
$('pause').addEventListener('click', () => {
  view.worker?.postMessage({ type: 'pause' });
  /** @type {HTMLButtonElement} */ ($('pause')).disabled = true;
  /** @type {HTMLButtonElement} */ ($('resume')).disabled = false;
  $('status').textContent += ' Paused.';
});
$('resume').addEventListener('click', () => {
  view.worker?.postMessage({ type: 'resume' });
  /** @type {HTMLButtonElement} */ ($('pause')).disabled = false;
  /** @type {HTMLButtonElement} */ ($('resume')).disabled = true;
});
$('learning-rate').addEventListener('change', () => {
  const value = Number(/** @type {HTMLInputElement} */ ($('learning-rate')).value);
  if (value > 0 && value <= 0.05) view.worker?.postMessage({ type: 'learningRate', value });
});

// ---------------------------------------------------------------------------------------------
// The shipped model

/** @type {Trainer | null} */
let trained = null;

function showTrained() {
  showError('trained-error', '');
  if (!trained || !view.trained) return; // loadShipped has not finished
  try {
    const text = /** @type {HTMLInputElement} */ ($('trained-text')).value.trim();
    const sentence = text ? trained.parse(text) : trained.sentence(Number(/** @type {HTMLInputElement} */ ($('trained-seed')).value));
    const maps = trained.attention(sentence);
    $('trained-sentence').textContent = sentenceText(sentence);
    renderMaps($('trained-maps'), maps, view.trained.labels);
    view.trained.maps = maps;
    view.trained.sentence = sentence;
  } catch (error) {
    showError('trained-error', error instanceof Error ? error.message : String(error));
  }
}

async function loadShipped() {
  try {
    const loaded = await loadTrainer({ seed: 1, heldOut: 300 });
    trained = loaded;
    $('vocabulary').textContent = loaded.vocabulary.filter((/** @type {string} */ w) => !w.startsWith('<')).join(' ');
    $('example-sentence').textContent = sentenceText(loaded.sentence(5));
    const rate = /** @type {HTMLInputElement} */ ($('learning-rate'));
    if (rate.value.trim() === '') rate.value = String(loaded.settings.learningRate);
    const response = await fetch(TRAINED_WEIGHTS);
    if (!response.ok) throw new Error(`could not load ${TRAINED_WEIGHTS.pathname}: HTTP ${response.status}`);
    loaded.loadWeights(new Uint8Array(await response.arrayBuffer()));
    const evaluation = loaded.evaluate();
    const labels = renderTable($('trained-table'), evaluation, await trainedRoles(loaded), loaded.numLayers, loaded.numHeads);
    view.trained = { evaluation, labels };
    $('trained-note').textContent = 'Trained natively by npm run train -- --seed 1 (float16 weights). Its heads on a sentence of the grammar, or on one you type in its vocabulary:';
    showTrained();
  } catch (error) {
    showError('trained-error', error instanceof Error ? error.message : String(error));
    $('trained-note').textContent = 'The trained weights could not be loaded.';
  }
}

$('trained-show').addEventListener('click', showTrained);
$('trained-text').addEventListener('keydown', (event) => { if (event.key === 'Enter') showTrained(); });
renderLegend($('score-legend'));
drawScores(/** @type {HTMLCanvasElement} */ ($('score-curve')), view.scoreSeries);
loadShipped();
