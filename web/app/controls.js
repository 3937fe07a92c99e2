// The explorer page's controls, bound to its explorer (web/explorer/controller.js): each control
// calls the explorer; each 'change' of the explorer sets the controls and the texts that show
// its state. Nothing here decides what is shown; the explorer does.
import { el, saveBlob, showError } from '../views/dom.js';
import { renderTokenStrip } from '../views/token-strip.js';
import { renderRolesTable } from '../views/roles-table.js';
import { renderSimilarity } from '../views/similarity.js';
import { renderAblation } from '../views/ablation.js';
import { renderImportance } from '../views/importance.js';
import { renderDetectors, renderTextScores } from '../views/detectors.js';
import { DETECTOR_THRESHOLD, scoreText } from '../lib/detectors.js';
import { D_MODEL } from '../sources/embeddings.js';
import { concatFormula, countWord, progressText } from '../explorer/present.js';
import { MAX_SEED } from '../explorer/sources.js';
import { explorer } from './explorer.js';
import { pageTokenizeTimeLimit, withPageLimit } from './hub.js';
import { setHoverToken } from './draw.js';

/** The page's element with this id: the markup has every id these scripts ask for. */
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * The spec a source radio stands for (random: with the seed box's seed).
 * @param {string} id  a radio's value: one of SOURCE_IDS
 * @returns {import('../explorer/sources.js').SourceSpec}
 */
export function specOfRadio(id) {
  if (id === 'random') return { id, seed: Number(/** @type {HTMLInputElement} */ ($('seed')).value) };
  return /** @type {import('../explorer/sources.js').SourceSpec} */ ({ id });
}

/** Show or hide a message paragraph. @param {HTMLElement} node @param {string | null} text */
function message(node, text) {
  if (text) showError(node, new Error(text));
  else node.hidden = true;
}

export async function downloadWeights() {
  const { source } = explorer;
  if (!source || !source.attention) return; // the button is disabled then
  const { stateDictToJson } = await import('../sources/file.js');
  const json = await stateDictToJson(source.attention, source.id === 'designed' ? 'designed heads of the MHA Explorer' : source.name);
  saveBlob(new Blob([json], { type: 'application/json' }), `mha-explorer-${source.id}-weights.json`);
}

/** The seed box: a whole number from 0, else a message and nothing changes. */
export function seedChanged() {
  const text = /** @type {HTMLInputElement} */ ($('seed')).value;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isInteger(value) || value > MAX_SEED) {
    showError($('source-error'), new Error(`The seed must be a whole number from 0 to ${MAX_SEED}, got "${text}".`));
    return;
  }
  explorer.useSource({ id: 'random', seed: value });
}

/** @param {File} file */
export async function weightsFilePicked(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  await explorer.loadWeightsFile(bytes, file.name, { width: D_MODEL });
}

// ---------------------------------------------------------------------------------------------
// The controls, from the explorer's state

/** Where the heads come from: the radios, the seed, the layer, the notes and the progress bar. */
export function showSourceControls() {
  const { source, spec, loading, progress, file, opened } = explorer;
  /** @type {HTMLInputElement} */ ($('source-file')).disabled = !file;
  $('loaded-name').textContent = file ? `(${file.name})` : '';
  /** @type {HTMLInputElement} */ ($('source-model')).disabled = !opened && source?.id !== 'model';
  $('model-name').textContent = source?.id === 'model' ? `(${source.name})` : opened ? `(${opened.name})` : '';
  const bar = /** @type {HTMLProgressElement} */ ($('source-progress-bar'));
  $('source-progress').hidden = !(loading && progress);
  $('source-stop').hidden = !(loading && explorer.stoppable);
  if (loading && progress) {
    bar.max = progress.total || 1;
    bar.value = progress.loaded;
    $('source-progress-text').textContent = progressText(progress);
  }
  showWaiting();
  if (loading) {
    if (loading.note) $('source-note').textContent = loading.note;
    return;
  }
  if (!source) return;
  /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('input[name="source"]')).forEach((r) => { r.checked = r.value === source.id; });
  const seed = /** @type {HTMLInputElement} */ ($('seed'));
  if (spec?.id === 'random' && seed.value !== String(spec.seed)) seed.value = String(spec.seed);
  $('source-note').textContent = source.note();
  /** @type {HTMLButtonElement} */ ($('download-weights')).disabled = !source.attention;
  $('layer-picker').hidden = source.numLayers <= 1;
  let select = /** @type {HTMLSelectElement} */ ($('layer'));
  if (select.options.length !== source.numLayers) {
    select.replaceChildren(...Array.from({ length: source.numLayers }, (_, l) => el('option', { value: String(l), text: String(l) })));
  }
  if (select.value !== String(source.layer)) {
    // WebKit fires no change when the user picks what they picked last, even if the value was set
    // here in between (layer 1 of one source, then of the next): a fresh select has no last pick
    const focused = document.activeElement === select;
    const fresh = /** @type {HTMLSelectElement} */ (select.cloneNode(true));
    select.replaceWith(fresh);
    select = fresh;
    if (focused) select.focus();
  }
  select.value = String(source.layer);
  const table = source.roles;
  const measured = !!table || !!source.measureRoles;
  $('roles-panel').hidden = !measured;
  $('similarity-panel').hidden = !source.similarity;
  if (!table && source.measureRoles) {
    showMeasureRoles(/** @type {Parameters<typeof showMeasureRoles>[0]} */ (source));
  } else if (table) {
    $('roles-count').textContent = String(table.corpus.split.test);
    $('roles-what').textContent = source.id === 'trained' ? 'sentences of its grammar' : 'hand-annotated sentences';
    // drawn again only when the table or the layer changes, so that an open item list or a
    // measurement under way stays
    const view = $('roles-view');
    const shown = rolesShown.get(view);
    if (!shown || shown.table !== table || shown.layer !== source.layer) {
      rolesShown.set(view, { table, layer: source.layer });
      const measure = source.remeasure ?? source.measureRoles;
      renderRolesTable(view, {
        table, layer: source.layer, measure: measure ? (onProgress) => measure.call(source, onProgress) : null,
        note: source.remeasure ? undefined : measuredNote(source),
      });
    }
  }
}

/** What a table measured in the page was measured from. @param {HeadSource} source */
function measuredNote(source) {
  const from = source.id === 'model' ? `the weights of the ${source.name}` : 'the weights of your file';
  return `Measured in this page from ${from}; measure it again to check that the same table comes out.`;
}

/**
 * While a source loads: what the explorer waits for, above the views, which are dimmed and inert
 * until the new source's heads replace them (they still show the source before).
 */
function showWaiting() {
  const { loading, progress, source } = explorer;
  const wait = $('source-wait');
  const waiting = !!loading && !!source;
  wait.hidden = !waiting;
  $('explorer').toggleAttribute('data-waiting', waiting);
  for (const panel of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('#explorer > .panel:not(.controls)'))) panel.inert = waiting;
  if (!loading || !source) return;
  const note = loading.note || 'Loading…';
  wait.textContent = `${note}${progress ? ` ${progressText(progress)}.` : ''} Until it is ready, the views below stay as they were (${source.name}).`;
}

/** @type {WeakMap<HTMLElement, { table?: import('../sources/source.js').HeadRoles, layer?: number, pending?: HeadSource }>} */
const rolesShown = new WeakMap();

/** @typedef {import('../sources/source.js').HeadSource} HeadSource */

/**
 * A source whose heads are named only on demand (a weights file): the button that measures them.
 * @param {HeadSource & { measureRoles: NonNullable<HeadSource['measureRoles']> }} source
 */
function showMeasureRoles(source) {
  const view = $('roles-view');
  if (rolesShown.get(view)?.pending === source) return;
  rolesShown.set(view, { pending: source });
  $('roles-count').textContent = '388';
  $('roles-what').textContent = 'hand-annotated sentences, once measured';
  const read = source.id === 'model' ? 'each read by the model\'s own tokenizer' : 'each tagged and embedded as this page does it';
  const status = el('p', { class: 'note', role: 'status', id: 'roles-measure-status', text: `These heads are not named yet: measure them on the hand-annotated sentences, ${read}, by the rule every source with learned heads goes through.` });
  const button = el('button', { type: 'button', id: 'roles-measure', text: 'Measure its heads' });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const table = await source.measureRoles(({ done, total }) => { status.textContent = `Measuring: ${done} of ${total} sentences…`; });
      if (explorer.source !== source) return;
      $('roles-count').textContent = String(table.corpus.split.test);
      $('roles-what').textContent = 'hand-annotated sentences';
      rolesShown.set(view, { table, layer: source.layer });
      renderRolesTable(view, { table, layer: source.layer, measure: (onProgress) => source.measureRoles(onProgress), note: measuredNote(source) });
    } catch (error) {
      status.textContent = `Could not measure: ${error instanceof Error ? error.message : String(error)}`;
      button.disabled = false;
    }
  });
  view.replaceChildren(el('div', { class: 'roles-measure' }, button, status));
}

/** Where the page's example model is: a small GPT-2 trained on sentences like the lesson's. */
export const EXAMPLE_MODEL_URL = new URL('../examples/models/gpt2-lesson/', import.meta.url).href;

/**
 * The files of a dropped folder (or of dropped files), read through the entries API; the
 * folder's name when one was dropped.
 * @param {DataTransfer} data
 * @returns {Promise<{ files: File[], name?: string }>}
 */
async function droppedFiles(data) {
  const entries = [...data.items].map((item) => item.webkitGetAsEntry?.()).filter((e) => !!e);
  if (!entries.length) return { files: [...data.files] };
  /** @param {FileSystemFileEntry} entry @returns {Promise<File>} */
  const fileOf = (entry) => new Promise((resolve, reject) => entry.file(resolve, reject));
  /** @param {FileSystemDirectoryEntry} dir @returns {Promise<FileSystemEntry[]>} */
  const listed = async (dir) => {
    const reader = dir.createReader();
    /** @type {FileSystemEntry[]} */
    const all = [];
    // readEntries gives at most 100 entries a call: read until it gives none
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) return all;
      all.push(...batch);
    }
  };
  const folder = entries.length === 1 && entries[0].isDirectory ? /** @type {FileSystemDirectoryEntry} */ (entries[0]) : null;
  const top = folder ? await listed(folder) : entries;
  const files = await Promise.all(top.filter((e) => e.isFile).map((e) => fileOf(/** @type {FileSystemFileEntry} */ (e))));
  return folder ? { files, name: folder.name } : { files };
}

/**
 * A model's files picked or dropped, opened with the page's tokenizer time limit.
 * @param {File[]} files
 * @param {string} [name]
 */
function openPicked(files, name) {
  let tokenizeTimeLimit;
  try {
    tokenizeTimeLimit = pageTokenizeTimeLimit();
  } catch (error) {
    showError($('source-error'), error);
    return;
  }
  explorer.openModel(files, name, { tokenizeTimeLimit });
}

/** Opening a model: the folder and file pickers, dropping a folder on the box, the example. */
export function wireModelOpening() {
  for (const id of ['model-folder', 'model-files']) {
    const input = /** @type {HTMLInputElement} */ ($(id));
    input.addEventListener('change', () => {
      const files = [...(input.files ?? [])];
      input.value = '';
      if (files.length) openPicked(files);
    });
  }
  const box = $('model-drop');
  const over = (/** @type {DragEvent} */ event) => {
    if (![...(event.dataTransfer?.types ?? [])].includes('Files')) return;
    event.preventDefault();
    box.classList.add('dragging');
  };
  box.addEventListener('dragenter', over);
  box.addEventListener('dragover', over);
  box.addEventListener('dragleave', () => box.classList.remove('dragging'));
  box.addEventListener('drop', async (event) => {
    event.preventDefault();
    box.classList.remove('dragging');
    if (!event.dataTransfer) return;
    try {
      const { files, name } = await droppedFiles(event.dataTransfer);
      openPicked(files, name);
    } catch (error) {
      showError($('source-error'), new Error(`The dropped files could not be read: ${error instanceof Error ? error.message : String(error)}`));
    }
  });
  $('model-example').addEventListener('click', () => {
    try {
      explorer.useSource(withPageLimit({ id: 'model', url: EXAMPLE_MODEL_URL }));
    } catch (error) {
      showError($('source-error'), error);
    }
  });
}

/** The head-importance panel: shown for a model that predicts the next token. */
export function showImportance() {
  const { source, importance, errors, sentence } = explorer;
  const shown = !!source && !!source.headImportance && source.causal;
  $('importance-panel').hidden = !shown;
  if (!shown || !source || !sentence) return;
  message($('importance-error'), errors.importance);
  const button = /** @type {HTMLButtonElement} */ ($('importance-measure'));
  const runs = source.numLayers * source.numHeads;
  if (!importance) {
    $('importance-view').replaceChildren();
    $('importance-status').textContent = explorer.measuringImportance
      ? `Measuring: ${runs} runs of the model on ${sentence.tokens.length} tokens…`
      : `${runs} runs of the model on this sentence's ${sentence.tokens.length} tokens.`;
    button.disabled = explorer.busy > 0;
    return;
  }
  button.disabled = true;
  $('importance-status').textContent = `Measured on this sentence: ${runs} runs in ${importance.ms < 1000 ? `${Math.round(importance.ms)} ms` : `${(importance.ms / 1000).toFixed(1)} s`}.`;
  renderImportance($('importance-view'), {
    data: importance.data, shape: importance.shape, selected: { layer: source.layer, head: explorer.selectedHead },
    onSelect: (l, h) => { explorer.setState({ layer: l, head: h }); },
  });
}

/** The head detectors' panel: shown for a causal language model. */
export function showDetectors() {
  const { source, detectors, detecting, errors } = explorer;
  const shown = !!source && !!source.detectHeads && !!source.detects;
  $('detectors-panel').hidden = !shown;
  if (!shown || !source) return;
  message($('detectors-error'), errors.detectors);
  showTextScores(source);
  const button = /** @type {HTMLButtonElement} */ ($('detectors-run'));
  button.disabled = !!detecting || explorer.busy > 0;
  if (detecting) {
    $('detectors-status').textContent = detecting.total ? `Running: ${detecting.done} of ${detecting.total} sequences…` : 'Reading the vocabulary…';
  } else if (!detectors) {
    $('detectors-view').replaceChildren();
    $('detectors-status').textContent = `20 runs of the model: 10 sequences of repeated random tokens and their 10 controls.`;
    return;
  } else {
    $('detectors-status').textContent = `Ran in ${detectors.ms < 1000 ? `${Math.round(detectors.ms)} ms` : `${(detectors.ms / 1000).toFixed(1)} s`}: ${detectors.sequences.length} sequences of ${detectors.sequences[0].length} tokens (token ${detectors.bos} first) and their controls, seed 0.`;
  }
  if (!detectors) return;
  renderDetectors($('detectors-view'), {
    heads: detectors.heads, numLayers: source.numLayers, numHeads: source.numHeads, threshold: DETECTOR_THRESHOLD,
    length: detectors.length, count: detectors.sequences.length,
    selected: { layer: source.layer, head: explorer.selectedHead },
    onSelect: (l, h) => { explorer.setState({ layer: l, head: h }); },
  });
}

/**
 * The detectors' three scores of every head on the text in view, from the weights of the run
 * the page already made for it (no run of its own).
 * @param {import('../sources/source.js').HeadSource} source
 */
function showTextScores(source) {
  const container = $('detectors-text');
  const sentence = /** @type {{ ids?: number[], run?: import('../lib/models.js').ModelRunResult, tokens: unknown[] } | null} */ (explorer.sentence);
  if (!sentence?.ids || !sentence.run || sentence.run.layers.length !== source.numLayers) {
    container.replaceChildren();
    return;
  }
  const T = sentence.ids.length;
  // a long text keeps the maps of the layer in view only (web/sources/model.js)
  const every = sentence.run.layers.every((l) => l.weights);
  const scores = T >= 2 && every ? scoreText(sentence.run.layers.map((l) => /** @type {import('../lib/models.js').ModelTensor} */ (l.weights)), sentence.ids) : null;
  renderTextScores(container, {
    scores, problem: scores ? null : every ? `The scores need at least two tokens; this text has ${T}.` : `The scores of every head need every layer's maps, which a text of ${T} tokens does not keep (only the layer in view's); they are measured on texts of up to 128 tokens.`,
    tokens: T, numLayers: source.numLayers, numHeads: source.numHeads,
    selected: { layer: source.layer, head: explorer.selectedHead },
    onSelect: (l, h) => { explorer.setState({ layer: l, head: h }); },
  });
}

/** Counts and formulas in the page's text that follow the heads shown. */
export function showCounts() {
  const H = explorer.numHeads;
  for (const node of document.querySelectorAll('[data-count="heads-word"]')) node.textContent = countWord(H);
  for (const node of document.querySelectorAll('[data-count="heads"]')) node.textContent = String(H);
  for (const node of document.querySelectorAll('[data-formula="concat"]')) node.textContent = concatFormula(H);
}

/** @type {{ help: Node[] | null, placeholder: string }} */
const FREE_TEXT = { help: null, placeholder: '' };

/** Remember the free-text box's own help, for the sources that do not bring their own. */
export function keepFreeTextHelp() {
  FREE_TEXT.help = [...$('free-text-help').childNodes].map((n) => n.cloneNode(true));
  FREE_TEXT.placeholder = /** @type {HTMLInputElement} */ ($('free-text')).placeholder;
}

/** The example sentences, the note on the one shown, the free-text help and the tokens. */
export function showSentenceControls() {
  const { source, sentence } = explorer;
  if (!source || !sentence) return;
  const examples = source.examples();
  const list = $('sentence-list');
  const texts = examples.map((e) => e.text).join('\u0000');
  if (list.dataset.texts !== texts) {
    list.dataset.texts = texts;
    list.replaceChildren(...examples.map((example, i) => el('button', {
      type: 'button', role: 'radio', 'aria-checked': 'false', class: 'sentence', text: example.text, onclick: () => explorer.selectSentence(i),
    })));
  }
  /** @type {NodeListOf<HTMLElement>} */ (list.querySelectorAll('[role="radio"]')).forEach((b, i) => {
    b.setAttribute('aria-checked', String(i === sentence.example));
    b.tabIndex = i === Math.max(0, sentence.example) ? 0 : -1;
  });
  $('sentence-note').textContent = source.sentenceNote ? source.sentenceNote(sentence)
    : sentence.example >= 0 ? `Shows ${examples[sentence.example].shows}.` : `Your sentence: ${sentence.tokens.length} tokens.`;
  const help = source.textHelp ? source.textHelp() : null;
  if (help) {
    $('free-text-help').textContent = help.help;
    /** @type {HTMLInputElement} */ ($('free-text')).placeholder = help.placeholder;
    // a model reads up to 1,024 tokens: room for them at 8 characters a token, the tokenizer's count decides
    /** @type {HTMLInputElement} */ ($('free-text')).maxLength = Math.max(600, 8 * source.maxTokens);
  } else {
    $('free-text-help').replaceChildren(...(FREE_TEXT.help ?? []).map((n) => n.cloneNode(true)));
    /** @type {HTMLInputElement} */ ($('free-text')).placeholder = FREE_TEXT.placeholder;
    /** @type {HTMLInputElement} */ ($('free-text')).maxLength = 600;
  }
  renderTokenStrip(/** @type {HTMLOListElement} */ ($('token-strip')), { tokens: sentence.tokens, onHover: setHoverToken, onPick: (i) => { explorer.setFocusToken(i); setHoverToken(i); } });
  $('parse-summary').textContent = sentence.summary || '';
}

/** The messages of what went wrong, each where it belongs. */
export function showErrors() {
  const { errors } = explorer;
  message($('source-error'), errors.source);
  message($('free-text-error'), errors.sentence);
  message($('similarity-error'), errors.similarity);
}

/** The ablation panel: the heads switched off, and how far each token moves. */
export function showAblation() {
  const { source, sentence, ablation } = explorer;
  if (!source || !sentence || !ablation) return;
  renderAblation($('ablation-view'), {
    numHeads: source.numHeads, off: new Set(ablation.heads), shortOf: (h) => source.short(h), labels: sentence.tokens.map((t) => t.text),
    rows: ablation.rows, what: ablation.what,
    missing: `The ${source.name} cannot have its heads switched off here.`,
    onToggle: (h, off) => {
      const next = new Set(explorer.ablated);
      if (off) next.add(h); else next.delete(h);
      explorer.setAblated(next);
    },
  });
}

/** The similarity panel's last result. */
export function showSimilarity() {
  const { similarity } = explorer;
  if (similarity) renderSimilarity($('similarity-view'), { a: similarity.a, b: similarity.b, result: similarity });
}
