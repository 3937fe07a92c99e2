// The explorer page's choices: which source of heads (web/sources), which sentence, and the
// core's computation for them; the results go into the explorer's state and are drawn (draw.js).
import { el, saveBlob, showError } from '../views/dom.js';
import { renderTokenStrip } from '../views/token-strip.js';
import { renderRolesTable } from '../views/roles-table.js';
import { renderSimilarity } from '../views/similarity.js';
import { renderAblation } from '../views/ablation.js';
import { DesignedSource } from '../sources/designed.js';
import { RandomSource } from '../sources/random.js';
import { FileSource, readWeightsFile, stateDictToJson } from '../sources/file.js';
import { TrainedSource } from '../sources/trained.js';
import { D_MODEL } from '../sources/embeddings.js';
import { explorer } from './explorer-state.js';
import { render, setHoverToken } from './draw.js';

const $ = (id) => document.getElementById(id);
let mha = null;
/** The last weights file read: { name, config, stateDict, note }. */
let loadedFile = null;
let seed = 0;
const layers = {};
/** The last sentence shown with each set of sentences (the lesson's, the grammar's). */
const savedSentences = new Map();
let generation = 0;
let loadingSource = false;

/** The JS API module every source computes with (loadMha's). */
export function setCore(module) { mha = module; }

// ---------------------------------------------------------------------------------------------
// Sources of heads

const SOURCES = {
  designed: () => new DesignedSource(),
  random: () => new RandomSource({ seed }),
  file: () => new FileSource({ file: loadedFile }),
  trained: () => new TrainedSource({ layer: layers.trained ?? 0 }),
  // the pretrained model's module and weights load only when it is picked
  pretrained: async () => new (await import('../sources/pretrained.js')).PretrainedSource({ layer: layers.pretrained ?? 0, onProgress: showProgress }),
};
/** Sources that show the lesson's example sentences (the trained model has its own). */
const sentenceSet = (id) => (id === 'trained' ? 'grammar' : 'lesson');

const LOADING_NOTES = {
  trained: 'Loading the trained model and measuring its heads on 300 held-out sentences…',
  pretrained: 'Loading the Universal Sentence Encoder lite and measuring its heads on 327 sentences…',
};

export async function useSource(id) {
  $('source-error').hidden = true;
  const previous = explorer.source;
  explorer.update({ busy: explorer.busy + 1 });
  try {
    if (id === 'file' && !loadedFile) throw new Error('Load a state_dict file first.');
    if (!SOURCES[id]) throw new Error(`There is no source of heads called "${id}".`);
    if (LOADING_NOTES[id]) $('source-note').textContent = LOADING_NOTES[id];
    const source = await SOURCES[id]();
    loadingSource = true;
    await source.load(mha);
    loadingSource = false;
    $('source-progress').hidden = true;
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
    else document.querySelectorAll('input[name="source"]').forEach((r) => { r.checked = r.value === (explorer.source?.id ?? 'designed'); });
    showError($('source-error'), error);
  } finally {
    loadingSource = false;
    $('source-progress').hidden = true;
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

/** The model's download, as a progress bar under the sources (while a source is loading). */
function showProgress({ loaded, total, file }) {
  if (!loadingSource) return;
  $('source-progress').hidden = false;
  const bar = $('source-progress-bar');
  bar.max = total || 1;
  bar.value = loaded;
  $('source-progress-text').textContent = `${file}: ${(loaded / 1e6).toFixed(1)} of ${total ? (total / 1e6).toFixed(1) : '?'} MB`;
}

export async function loadWeightsFile(file) {
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

export async function downloadWeights() {
  const { source } = explorer;
  const json = await stateDictToJson(source.attention, source.id === 'designed' ? 'designed heads of the MHA Explorer' : source.name);
  saveBlob(new Blob([json], { type: 'application/json' }), `mha-explorer-${source.id}-weights.json`);
}

export function setSeed(value) { seed = value; }

/** Show another layer of the source shown. */
export async function selectLayer(layer) {
  layers[explorer.source.id] = layer;
  explorer.source.layer = layer;
  explorer.update({ busy: explorer.busy + 1 });
  try {
    const H = explorer.source.numHeads;
    if (explorer.selectedHead >= H) explorer.update({ selectedHead: 0 });
    showSourceControls();
    await recompute();
  } finally {
    explorer.update({ busy: explorer.busy - 1 });
  }
}

function showSourceControls() {
  const { source } = explorer;
  document.querySelectorAll('input[name="source"]').forEach((r) => { r.checked = r.value === source.id; });
  $('source-note').textContent = source.note();
  $('download-weights').disabled = !source.attention;
  $('layer-picker').hidden = source.numLayers <= 1;
  const select = $('layer');
  if (select.options.length !== source.numLayers) {
    select.replaceChildren(...Array.from({ length: source.numLayers }, (_, l) => el('option', { value: String(l), text: String(l) })));
  }
  select.value = String(source.layer);
  const measured = !!source.roles;
  $('roles-panel').hidden = !measured;
  $('similarity-panel').hidden = !source.similarity;
  if (measured) {
    import('../sources/head-roles.js').then((roles) => renderRolesTable($('roles-view'), {
      table: source.roles, roles: roles.ROLES, roleNames: roles.ROLE_NAMES, relations: roles.RELATIONS, relationNames: roles.RELATION_NAMES, layer: source.layer,
    }));
  }
}

// ---------------------------------------------------------------------------------------------
// Sentences

const FREE_TEXT = { help: null, placeholder: '' };

/** Remember the free-text box's own help, for the sources that do not bring their own. */
export function keepFreeTextHelp() {
  FREE_TEXT.help = [...$('free-text-help').childNodes].map((n) => n.cloneNode(true));
  FREE_TEXT.placeholder = $('free-text').placeholder;
}

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
export async function selectSentence(input, errorNode = $('source-error')) {
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
  showAblation();
  Object.assign(explorer.timings, { lastComputeMs: t1 - t0, lastDrawMs: t2 - t1, lastUpdateMs: t2 - t0 });
  $('perf').textContent = `Last update: ${(t2 - t0).toFixed(1)} ms (core: forward pass, statistics and divergences ${(t1 - t0).toFixed(1)} ms; drawing ${(t2 - t1).toFixed(1)} ms) for ${sentence.tokens.length} tokens.`;
}

/** The ablation panel: the heads switched off (explorer.ablated), and how far each token moves. */
export async function showAblation() {
  const { source, sentence } = explorer;
  const heads = [...explorer.ablated].filter((h) => h < source.numHeads).sort((a, b) => a - b);
  const shown = source.ablation ? await source.ablation(sentence, heads) : null;
  if (sentence !== explorer.sentence || source !== explorer.source) return; // a newer sentence came meanwhile
  renderAblation($('ablation-view'), {
    numHeads: source.numHeads, off: new Set(heads), shortOf: (h) => source.short(h), labels: sentence.tokens.map((t) => t.text),
    rows: shown ? shown.rows : null, what: shown ? shown.what : '',
    missing: `The ${source.name} cannot have its heads switched off here.`,
    onToggle: (h, off) => {
      const next = new Set(explorer.ablated);
      if (off) next.add(h); else next.delete(h);
      explorer.update({ ablated: next });
      showAblation();
    },
  });
}

/** The similarity panel: two sentences through the pretrained model, each head switched off in turn. */
export async function compareSentences(a, b) {
  const { source } = explorer;
  $('similarity-error').hidden = true;
  explorer.update({ busy: explorer.busy + 1 });
  try {
    if (!a.trim() || !b.trim()) throw new Error('Type two sentences to compare.');
    const result = await source.similarity(a, b);
    renderSimilarity($('similarity-view'), { a, b, result });
    explorer.update({ similarity: { a, b, ...result } });
  } catch (error) {
    showError($('similarity-error'), error);
  } finally {
    explorer.update({ busy: explorer.busy - 1 });
  }
}
