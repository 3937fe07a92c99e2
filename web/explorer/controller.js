// The explorer: one controller for the lesson page, <mha-explorer> and a shared link. It holds
// what is shown (the source of heads, its layer, the sentence, the selected and compared heads,
// the view, the heads switched off) and what the core computed for it; it chooses and loads the
// source (web/explorer/sources.js) and computes, in the page or in a Web Worker. The page and the
// element bind the DOM to it: they call its methods and draw what it holds when it says, with a
// 'change' event (detail.keys: the fields that changed), that something did.
//
//   const explorer = new Explorer({ views: ['single', 'grid', 'compare'] });
//   await explorer.start({ source: { id: 'random', seed: 3 }, sentence: 'The dog ran.', head: 2 });
//   explorer.addEventListener('change', (e) => draw(e.detail.keys));
//   explorer.selectHead(4);
//
// setState is the one way in for several things at once (a link, an element's attributes): it
// checks each against the source it ends with, loads and computes once, and returns what it
// could not use, as problems { field, value, expected } or { field, message }.

import { loadMha } from '../lib/index.js';
import { loadOnce } from '../lib/load-once.js';
import { nextTask } from '../lib/next-task.js';
import { headMap } from '../sources/source.js';
import { createSource, readPickedWeights, specKey, SpecError } from './sources.js';

/** @typedef {import('../sources/source.js').HeadSource} HeadSource */
/** @typedef {import('../sources/source.js').Sentence} Sentence */
/** @typedef {import('../sources/source.js').HeadResult} HeadResult */
/** @typedef {import('../sources/source.js').AnyMhaModule} AnyMhaModule */
/** @typedef {import('../sources/source.js').SimilarityResult} SimilarityResult */
/** @typedef {import('./sources.js').SourceSpec} SourceSpec */
/** @typedef {import('./sources.js').WeightsFile} WeightsFile */
/** @typedef {'loading' | 'computing' | 'ready' | 'error'} Status */
/** @typedef {'core' | 'source' | 'sentence' | 'similarity' | 'importance' | 'detectors'} ErrorPlace */
/**
 * What setState could not use: the field, the value asked for, and what was expected or went wrong.
 * @typedef {{ field: string, value?: unknown, expected?: string, message?: string }} Problem
 */
/**
 * setState's fields (0-based heads and layers); a field left out keeps what is shown. write:
 * what a causal model writes after the sentence ({ steps, temperature?, topK?, seed? }, null:
 * nothing), which the model source checks, keeps and shows as the sentence's `write`. Values
 * of other types (from attributes and links) are refused as problems.
 * @typedef {{ source?: SourceSpec, layer?: number | string, sentence?: string | number, head?: unknown,
 *             pair?: unknown, view?: string | null, write?: unknown }} WantedState
 */

/** Multiply-adds of a forward pass above which worker: 'auto' computes in a Web Worker. */
export const WORKER_THRESHOLD = 2e7;

/** One Web Worker core for every explorer of the page, started when one first needs it. */
const sharedWorkerCore = loadOnce(() => import('../lib/worker.js').then((m) => m.createWorkerMha()));

/** @param {unknown} error */
const messageOf = (error) => {
  const message = error ? /** @type {{ message?: unknown }} */ (error).message : undefined;
  return message ? String(message) : String(error);
};

export class Explorer extends EventTarget {
  /**
   * @param {{ views?: string[], worker?: 'never' | 'auto' | 'always' | (() => string), fallback?: SourceSpec | null, limitSetting?: string | null }} [options]
   *   views: the names setState accepts for `view`; worker: where the work runs (auto: large
   *   forward passes, and every model opened, in a worker; never: all of it on the page's thread;
   *   a function is asked each time); fallback: the spec shown when a source cannot be loaded
   *   (null: none, the explorer is then in error); limitSetting: what a model's tokenizer that
   *   takes too long names as setting its time limit (the page's control, the element's attribute)
   */
  constructor({ views = [], worker = 'never', fallback = { id: 'designed' }, limitSetting = null } = {}) {
    super();
    /** @type {Status} */
    this.status = 'loading';
    /** The spec of the source shown (sources.js). @type {SourceSpec | null} */
    this.spec = null;
    /** The HeadSource shown, loaded, and its layer shown (0-based). @type {HeadSource | null} */
    this.source = null;
    this.layer = 0;
    /** The spec being loaded, while it loads. @type {{ spec: SourceSpec, note: string } | null} */
    this.loading = null;
    /** A model's download while a source loads (plan: what a Hub repository's opening fetches). @type {{ file: string, loaded: number, total: number, plan?: import('../lib/models.js').HubPlan } | null} */
    this.progress = null;
    /** { text, example, tokens, … } from source.sentence(). @type {Sentence | null} */
    this.sentence = null;
    /** The source's HeadResult for the sentence and layer shown (with wo where there are head outputs). @type {HeadResult | null} */
    this.result = null;
    /** Whether that result was computed in a Web Worker. */
    this.worker = false;
    this.selectedHead = 0;
    this.pair = { a: 0, b: 1 };
    /** The part of the explorer in view (one of options.views), or null. @type {string | null} */
    this.view = null;
    /** The token whose row is highlighted (hover or focus), or -1. */
    this.hoverToken = -1;
    /** The token followed when none is hovered. */
    this.focusToken = 0;
    /** The heads switched off (of the layer shown), and how far each token moves then. */
    /** @type {Set<number>} */
    this.ablated = new Set();
    /** run: a model's run with those heads off (its predictions). */
    /** @type {{ heads: number[], rows: import('../sources/source.js').TokenDifference[] | null, what: string, run: { logits: import('../lib/index.js').Tensor | null } | null } | null} */
    this.ablation = null;
    /** The similarity panel's last result: { a, b, similarity, heads }. @type {({ a: string, b: string } & SimilarityResult) | null} */
    this.similarity = null;
    /** What went wrong, by where it is shown (messages or null). @type {Record<ErrorPlace, string | null>} */
    this.errors = { core: null, source: null, sentence: null, similarity: null, importance: null, detectors: null };
    /** The last weights file read ({ name, config, stateDict, note }), which the file source shows. @type {WeightsFile | null} */
    this.file = null;
    /** The last model opened from files, which the model source shows. @type {import('../sources/model.js').OpenedModel | null} */
    this.opened = null;
    /** Head importance of the model shown on the sentence shown, (layers, heads), once measured. */
    /** @type {{ text: string, data: Float32Array, shape: [number, number], ms: number } | null} */
    this.importance = null;
    /** Whether head importance is being measured (a run of the model per head). */
    this.measuringImportance = false;
    /** The head detectors' scores of the model shown (they do not depend on the sentence), once run; ms: how long they took. */
    /** @type {(import('../sources/source.js').DetectorResult & { ms: number }) | null} */
    this.detectors = null;
    /** The detectors' progress while they run (runs done of total), else null. @type {{ done: number, total: number } | null} */
    this.detecting = null;
    /** Updates in flight. */
    this.busy = 0;
    /** @type {{ lastUpdateMs: number, lastComputeMs: number, lastDrawMs: number, scriptStartMs: number, coreLoadedMs: number, readyMs: number, parts: Record<string, number> }} */
    this.timings = { lastUpdateMs: NaN, lastComputeMs: NaN, lastDrawMs: NaN, scriptStartMs: NaN, coreLoadedMs: NaN, readyMs: NaN, parts: {} };
    this.#views = views;
    this.#workerMode = worker;
    this.#fallback = fallback;
    this.#limitSetting = limitSetting;
  }

  /** @type {string | null} */
  #limitSetting;

  /** @type {string[]} */
  #views;
  /** @type {'never' | 'auto' | 'always' | (() => string)} */
  #workerMode;
  /** @type {SourceSpec | null} */
  #fallback;
  /** The page's core (loadMha), loaded once; a failed load is tried again on the next call. */
  #directCore = loadOnce(() => loadMha());
  #generation = 0;
  /** @type {'direct' | 'worker' | null} the core the shown source is loaded in */
  #sourceCore = null;
  /** @type {Map<string, number>} source id -> the layer last shown */
  #layers = new Map();
  /** @type {Map<string, string | number>} sentence set -> the sentence last shown with it (example index or text) */
  #sentences = new Map();
  #ablationRun = 0;

  // -- reading ---------------------------------------------------------------------------------

  get numHeads() { return this.source ? this.source.numHeads : 0; }
  get numLayers() { return this.source ? this.source.numLayers : 0; }

  /**
   * The source, sentence and result shown, for what draws them; throws before the first result.
   * @returns {{ source: HeadSource, sentence: Sentence, result: HeadResult }}
   */
  shown() {
    const { source, sentence, result } = this;
    if (!source || !sentence || !result) throw new Error('the explorer shows nothing yet');
    return { source, sentence, result };
  }

  /** Head h's (L, L) map as computed, or null before the first result. */
  map(h = this.selectedHead) {
    return this.result ? headMap(this.result.weights, h) : null;
  }

  /** Names what the head views show (source with its seed or file, layer, head, sentence): a view drawn later says which it drew. */
  shownKey() {
    return this.source && this.sentence ? `${specKey(this.spec)}:${this.source.layer}:${this.selectedHead}:${this.sentence.text}` : '';
  }

  /** The selected head as an export needs it: title, sentence, tokens and its weights. */
  selectedHeadMap() {
    const head = this.selectedHead;
    const { source, sentence, result } = this.shown();
    return {
      head, title: source.title(head), sentence: sentence.text, source: source.id,
      tokens: sentence.tokens.map((t) => t.text), values: Array.from(headMap(result.weights, head)),
    };
  }

  // -- changing --------------------------------------------------------------------------------

  /**
   * Set fields and tell listeners which changed.
   * @param {Partial<Explorer>} patch
   */
  #update(patch) {
    const keys = /** @type {(keyof Explorer)[]} */ (Object.keys(patch)).filter((k) => this[k] !== patch[k]);
    Object.assign(this, patch);
    if (keys.length) this.dispatchEvent(new CustomEvent('change', { detail: { keys } }));
  }

  /** @param {ErrorPlace} where @param {string | null} message */
  #setError(where, message) {
    if (this.errors[where] === message) return;
    this.#update({ errors: { ...this.errors, [where]: message } });
  }

  /**
   * @template T
   * @param {() => Promise<T>} work
   * @returns {Promise<T>}
   */
  async #busy(work) {
    this.#update({ busy: this.busy + 1 });
    try {
      return await work();
    } finally {
      this.#update({ busy: this.busy - 1 });
    }
  }

  /**
   * Load the core and show `want` (setState's fields; the designed heads and the first example
   * where it says nothing). Resolves to setState's problems.
   * @param {WantedState} [want]
   * @returns {Promise<Problem[]>}
   */
  async start(want = {}) {
    try {
      await this.#directCore();
      this.timings.coreLoadedMs = performance.now();
    } catch (error) {
      this.#setError('core', messageOf(error));
      this.#update({ status: 'error' });
      return [{ field: 'core', message: messageOf(error) }];
    }
    const problems = await this.setState({ source: { id: 'designed' }, ...want });
    this.timings.readyMs = performance.now();
    return problems;
  }

  /**
   * Show several things at once: { source: spec, layer, sentence: text or example index, head,
   * pair: [a, b], view } (0-based heads and layers; a field left out keeps what is shown). Each is
   * checked against the source shown at the end; what cannot be used is left at its default and
   * returned as a problem. Loads and computes once.
   * @param {WantedState} want
   * @returns {Promise<Problem[]>}
   */
  async setState(want) {
    return this.#busy(async () => {
      const run = ++this.#generation;
      try {
        return await this.#setState(want, run);
      } finally {
        // a source loaded is "loading" until it is drawn (#show), or until this, the last change asked for, ends otherwise
        if (run === this.#generation && this.loading) this.#update({ loading: null, progress: null });
      }
    });
  }

  /** @param {WantedState} want @param {number} run  this change's generation @returns {Promise<Problem[]>} */
  async #setState(want, run) {
    /** @type {Problem[]} */
    const problems = [];
    let { spec, source } = this;
    // the source (with its layer), or the fallback when it cannot be loaded
    // a source with a worker of its own is loaded again when the worker option now asks for the other place
    const moved = source && source.ownWorker != null && source.ownWorker !== (this.#mode() !== 'never');
    if (want.source && (specKey(want.source) !== specKey(this.spec) || !source || moved)) {
      const loaded = await this.#loadSource(want.source, problems);
      await nextTask(); // loading, computing and drawing are tasks of their own: the page answers in between
      if (run !== this.#generation) {
        if (loaded && loaded.source !== this.source) loaded.source.dispose();
        return problems;
      }
      if (loaded) ({ spec, source } = loaded);
    }
    if (!source || !spec) return problems; // the two are set together
    const layer = this.#checkedLayer(source, want, problems);
    // the sentence: the one asked for, or the one shown if the source takes the same sentences
    const set = source.sentenceSet;
    const keep = this.sentence && this.source && this.source.sentenceSet === set ? keyOf(this.sentence) : undefined;
    const wanted = want.sentence ?? keep ?? this.#sentences.get(set) ?? 0;
    /** @type {Sentence} */
    let sentence;
    if (want.sentence !== undefined) this.#setError('sentence', null);
    try {
      sentence = await source.sentence(wanted, want.write);
    } catch (error) {
      problems.push({ field: 'sentence', value: want.sentence, message: messageOf(error) });
      if (want.sentence !== undefined) this.#setError('sentence', messageOf(error));
      if (source === this.source && this.sentence) sentence = this.sentence;
      else sentence = await source.sentence(0);
    }
    if (run !== this.#generation) return problems;
    const H = source.numHeads;
    const head = this.#checkedHead(want.head, H, 'head', problems) ?? (want.head === undefined && this.selectedHead < H ? this.selectedHead : 0);
    const pair = this.#checkedPair(want.pair, H, problems);
    const view = this.#checkedView(want.view, problems);
    return this.#show({ spec, source, layer, sentence, head, pair, view }, run, problems);
  }

  /**
   * Load a spec's source in the page's core; on failure the fallback's (or none).
   * @param {SourceSpec} spec
   * @param {Problem[]} problems
   * @returns {Promise<{ spec: SourceSpec, source: HeadSource } | null>}
   */
  async #loadSource(spec, problems) {
    this.#setError('source', null);
    this.#update({ loading: { spec, note: '' }, progress: null });
    /** @type {HeadSource | null} */
    let made = null;
    try {
      const source = await this.#make(spec);
      made = source;
      this.#loadingSources.add(source);
      if (source.loadingNote) this.#update({ loading: { spec, note: source.loadingNote() } });
      await source.load(await this.#directCore());
      this.#setError('source', null);
      return { spec, source };
    } catch (error) {
      const message = messageOf(error);
      problems.push({ field: 'source', value: spec.id, message });
      this.#setError('source', message);
      const fallback = this.#fallback;
      if (fallback && specKey(fallback) !== specKey(spec) && (!this.source || specKey(this.spec) !== specKey(fallback))) {
        try {
          const source = await this.#make(fallback);
          await source.load(await this.#directCore());
          return { spec: fallback, source };
        } catch (again) {
          problems.push({ field: 'source', value: fallback.id, message: messageOf(again) });
        }
      }
      if (!this.source) this.#update({ status: 'error' });
      return null;
    } finally {
      if (made) this.#loadingSources.delete(made);
    }
  }

  /** The sources being loaded (a model's download can be stopped). @type {Set<HeadSource>} */
  #loadingSources = new Set();

  /** Whether a source being loaded can be stopped (a model's download). */
  get stoppable() {
    return [...this.#loadingSources].some((s) => typeof s.stop === 'function');
  }

  /**
   * Stop the sources being loaded that can be (a model's download): each load fails with its
   * message and what was shown before stays (or the fallback is shown).
   */
  stopLoading() {
    for (const source of this.#loadingSources) source.stop?.();
  }

  /** @param {SourceSpec} spec */
  async #make(spec) {
    return createSource(spec, { onProgress: (p) => { if (this.loading) this.#update({ progress: p }); }, worker: this.#mode(), limitSetting: this.#limitSetting });
  }

  /** The worker option now: 'never', 'auto' or 'always'. */
  #mode() {
    return typeof this.#workerMode === 'function' ? this.#workerMode() : this.#workerMode;
  }

  /** @param {HeadSource} source @param {WantedState} want @param {Problem[]} problems */
  #checkedLayer(source, want, problems) {
    const remembered = this.#layers.get(source.id) ?? 0;
    if (want.layer === undefined) return source === this.source ? source.layer : Math.min(remembered, source.numLayers - 1);
    if (typeof want.layer === 'number' && Number.isInteger(want.layer) && want.layer >= 0 && want.layer < source.numLayers) return want.layer;
    problems.push({ field: 'layer', value: want.layer, expected: source.numLayers > 1 ? `a layer from 0 to ${source.numLayers - 1}` : 'a layer of these heads (they have one)' });
    return 0;
  }

  /**
   * @param {unknown} head
   * @param {number} H
   * @param {string} field
   * @param {Problem[]} problems
   * @returns {number | undefined}
   */
  #checkedHead(head, H, field, problems) {
    if (head === undefined) return undefined;
    if (typeof head === 'number' && Number.isInteger(head) && head >= 0 && head < H) return head;
    problems.push({ field, value: head, expected: `a head from 1 to ${H}` });
    return 0;
  }

  /** @param {unknown} pair @param {number} H @param {Problem[]} problems */
  #checkedPair(pair, H, problems) {
    const clamp = () => ({ a: Math.min(this.pair.a, H - 1), b: Math.min(this.pair.b, H - 1) });
    if (pair === undefined) return clamp();
    if (Array.isArray(pair) && pair.length === 2 && pair.every((h) => Number.isInteger(h) && h >= 0 && h < H)) return { a: pair[0], b: pair[1] };
    problems.push({ field: 'pair', value: pair, expected: `two heads from 1 to ${H}` });
    return { a: 0, b: Math.min(1, H - 1) };
  }

  /** @param {string | null | undefined} view @param {Problem[]} problems */
  #checkedView(view, problems) {
    if (view === undefined) return this.view;
    if (view === null || this.#views.includes(view)) return view;
    problems.push({ field: 'view', value: view, expected: `one of ${this.#views.join(', ')}` });
    return null;
  }

  /**
   * Compute and show: the sentence in the source's layer, in the core the work calls for (a
   * worker above WORKER_THRESHOLD with worker: 'auto').
   * @param {{ spec: SourceSpec, source: HeadSource, layer: number, sentence: Sentence, head: number,
   *           pair: { a: number, b: number }, view: string | null }} shown
   * @param {number} run
   * @param {Problem[]} problems
   * @returns {Promise<Problem[]>}
   */
  async #show({ spec, source, layer, sentence, head, pair, view }, run, problems) {
    let shown = source;
    let core = source === this.source ? this.#sourceCore : 'direct';
    const onWorker = this.#wantsWorker(source, sentence);
    if (onWorker !== (core === 'worker')) {
      // the same heads in the other core: a source of its own
      try {
        shown = await this.#make(spec);
        await shown.load(onWorker ? await sharedWorkerCore() : await this.#directCore());
        core = onWorker ? 'worker' : 'direct';
        if (shown !== source && source !== this.source) source.dispose();
      } catch (error) {
        problems.push({ field: 'worker', message: messageOf(error) });
        shown = source;
      }
    }
    if (run !== this.#generation) { if (shown !== this.source) shown.dispose(); return problems; }
    shown.layer = layer;
    this.#update({ status: this.result ? 'computing' : 'loading' });
    const t0 = performance.now();
    let result;
    try {
      result = await shown.compute(sentence);
      if (result.headOutputs && shown.outProjectionWeight) result.wo = await shown.outProjectionWeight();
    } catch (error) {
      if (run !== this.#generation) return problems;
      problems.push({ field: 'compute', message: messageOf(error) });
      this.#setError('sentence', messageOf(error));
      this.#update({ status: this.result ? 'ready' : 'error' });
      return problems;
    }
    const t1 = performance.now();
    await nextTask(); // what draws the result runs in a task of its own
    const previous = this.source;
    if (previous && previous.sentenceSet !== shown.sentenceSet && this.sentence) this.#sentences.set(previous.sentenceSet, keyOf(this.sentence));
    this.#layers.set(shown.id, layer);
    this.#sourceCore = core;
    this.timings.lastComputeMs = t1 - t0;
    // the same text with more tokens written on is not the same sentence: the W_O view follows its last token
    const sameSentence = this.sentence && this.sentence.text === sentence.text && previous === shown && this.sentence.tokens.length === sentence.tokens.length;
    this.#update({
      spec, source: shown, layer, sentence, result, worker: core === 'worker', selectedHead: head, pair, view, loading: null, progress: null,
      focusToken: sameSentence ? this.focusToken : sentence.focus, hoverToken: sameSentence ? this.hoverToken : -1,
      ablated: previous === shown ? this.ablated : new Set(), status: 'ready',
      importance: sameSentence && this.importance?.text === sentence.text ? this.importance : null,
      detectors: previous === shown ? this.detectors : null,
    });
    if (previous && previous !== shown) previous.dispose();
    this.#refreshAblation();
    return problems;
  }

  /** @param {HeadSource} source @param {Sentence} sentence */
  #wantsWorker(source, sentence) {
    const mode = this.#mode();
    if (mode === 'never' || !source.runsInWorker) return false;
    if (mode === 'always') return true;
    const L = sentence.tokens.length;
    const E = source.embedDim;
    return L * E * E * 4 + 2 * L * L * E > WORKER_THRESHOLD; // multiply-adds: projections and the two attention products
  }

  // -- one thing at a time ---------------------------------------------------------------------

  /**
   * Show another source (a spec); the file source shows the last file read.
   * @param {SourceSpec} spec
   * @returns {Promise<Problem[]>}
   */
  useSource(spec) {
    if (spec.id === 'file' && !spec.file && !spec.url) {
      if (!this.file) {
        this.#setError('source', 'Load a state_dict file first.');
        return Promise.resolve([{ field: 'source', value: 'file', message: 'Load a state_dict file first.' }]);
      }
      return this.setState({ source: { id: 'file', file: this.file } });
    }
    if (spec.id === 'model' && !spec.opened && !spec.url) {
      if (!this.opened) {
        this.#setError('source', 'Open a model folder first.');
        return Promise.resolve([{ field: 'source', value: 'model', message: 'Open a model folder first.' }]);
      }
      return this.setState({ source: { id: 'model', opened: this.opened } });
    }
    return this.setState({ source: spec });
  }

  /**
   * Read weights a user picked (bytes and the file's name) and show them.
   * @param {Uint8Array} bytes
   * @param {string} name
   * @param {{ width?: number }} [options]
   * @returns {Promise<Problem[]>}
   */
  async loadWeightsFile(bytes, name, { width } = {}) {
    let file;
    try {
      file = await readPickedWeights(bytes, name, { width });
      this.#update({ file });
    } catch (error) {
      this.#setError('source', messageOf(error));
      return [{ field: 'source', value: 'file', message: messageOf(error) }];
    }
    return this.setState({ source: { id: 'file', file } });
  }

  /**
   * Open a model folder's files (picked or dropped: config.json, model.safetensors,
   * tokenizer.json) and show it; the model opened before is let go.
   * @param {Iterable<File> | Map<string, any> | Record<string, any>} files
   * @param {string} [name]
   * @param {{ tokenizeTimeLimit?: number }} [options]  how long its tokenizer may take on one text, in ms
   * @returns {Promise<Problem[]>}
   */
  async openModel(files, name, { tokenizeTimeLimit } = {}) {
    this.#setError('source', null);
    let opened;
    try {
      this.#update({ loading: { spec: { id: 'model' }, note: 'Reading the model\'s files…' } });
      const { openModelFiles } = await import('../sources/model.js');
      opened = await openModelFiles(files, name, this.#mode() !== 'never', { tokenizeTimeLimit, limitSetting: this.#limitSetting });
    } catch (error) {
      this.#update({ loading: null });
      this.#setError('source', messageOf(error));
      return [{ field: 'source', value: 'model', message: messageOf(error) }];
    }
    this.#update({ loading: null });
    const previous = this.opened;
    this.#update({ opened });
    const problems = await this.setState({ source: { id: 'model', opened } });
    const shown = /** @type {{ opened?: unknown } | null} */ (this.source)?.opened === opened;
    if (!shown) {
      // it could not be shown (no tokenizer.json, …): the model opened before stays the one offered
      opened.model.dispose();
      this.#update({ opened: previous });
    } else if (previous && previous !== opened) {
      previous.model.dispose();
    }
    return problems;
  }

  /** Measure each head's importance on the model's own task over the sentence shown. */
  async measureImportance() {
    return this.#busy(async () => {
      this.#setError('importance', null);
      this.#update({ measuringImportance: true });
      try {
        const { source, sentence } = this.shown();
        if (!source.headImportance) throw new SpecError(`The ${source.name} has no task of its own to measure heads on.`);
        const t0 = performance.now();
        const { data, shape } = await source.headImportance(sentence);
        if (source !== this.source || sentence !== this.sentence) return;
        this.#update({ importance: { text: sentence.text, data, shape, ms: performance.now() - t0 } });
      } catch (error) {
        this.#setError('importance', messageOf(error));
      } finally {
        this.#update({ measuringImportance: false });
      }
    });
  }

  /**
   * Run the head detectors on the model shown: its heads' previous-token, duplicate-token and
   * induction scores on repeated random tokens and their controls (source.detectHeads).
   */
  async detectHeads() {
    return this.#busy(async () => {
      this.#setError('detectors', null);
      const { source } = this;
      if (!source || !this.result) {
        this.#setError('detectors', 'Open a model first: the head detectors run on the model shown.');
        return;
      }
      this.#update({ detecting: { done: 0, total: 0 } });
      try {
        if (!source.detectHeads || !source.detects) throw new SpecError(`The ${source.name} is not a causal language model: the head detectors need one.`);
        const t0 = performance.now();
        const result = await source.detectHeads({ onProgress: (p) => { if (source === this.source) this.#update({ detecting: p }); } });
        if (source !== this.source) return;
        this.#update({ detectors: { ...result, ms: performance.now() - t0 } });
      } catch (error) {
        if (source === this.source) this.#setError('detectors', messageOf(error));
      } finally {
        this.#update({ detecting: null });
      }
    });
  }

  /** @param {number} layer */
  selectLayer(layer) { return this.setState({ layer }); }

  /** An example (its index) or typed text. @param {string | number} input */
  selectSentence(input) { return this.setState({ sentence: input }); }

  /** Select head h (0-based): nothing to compute. @param {number} h */
  selectHead(h) {
    if (!Number.isInteger(h) || h < 0 || h >= this.numHeads) throw new SpecError(`expected a head from 0 to ${this.numHeads - 1}, got ${h}`);
    this.#update({ selectedHead: h });
  }

  /** The two heads compared (0-based). @param {number} a @param {number} b */
  setPair(a, b) {
    const H = this.numHeads;
    if (![a, b].every((h) => Number.isInteger(h) && h >= 0 && h < H)) throw new SpecError(`expected two heads from 0 to ${H - 1}, got ${a} and ${b}`);
    if (a !== this.pair.a || b !== this.pair.b) this.#update({ pair: { a, b } });
  }

  /** @param {string | null} view */
  setView(view) {
    if (view !== null && !this.#views.includes(view)) throw new SpecError(`expected one of ${this.#views.join(', ')}, got "${view}"`);
    this.#update({ view });
  }

  /** @param {number} i */
  setHoverToken(i) { this.#update({ hoverToken: i }); }
  /** @param {number} i */
  setFocusToken(i) { this.#update({ focusToken: i }); }

  /** Switch heads off (or on again): how far each token moves is computed by the core. @param {Iterable<number>} heads */
  setAblated(heads) {
    this.#update({ ablated: new Set(heads) });
    return this.#refreshAblation();
  }

  async #refreshAblation() {
    const { source, sentence } = this;
    const run = ++this.#ablationRun;
    if (!source || !sentence) return;
    const heads = [...this.ablated].filter((h) => h < source.numHeads).sort((a, b) => a - b);
    const shown = source.ablation ? await source.ablation(sentence, heads) : null;
    if (run !== this.#ablationRun || source !== this.source || sentence !== this.sentence) return;
    this.#update({ ablation: shown ? { heads, rows: shown.rows, what: shown.what, run: shown.run ?? null } : { heads, rows: null, what: '', run: null } });
  }

  /** Two sentences through a model that embeds them, each head switched off in turn. @param {string} a @param {string} b */
  async compareSentences(a, b) {
    return this.#busy(async () => {
      this.#setError('similarity', null);
      try {
        if (!a.trim() || !b.trim()) throw new SpecError('Type two sentences to compare.');
        const { source } = this.shown();
        if (!source.similarity) throw new SpecError(`The ${source.name} do not embed sentences.`);
        const result = await source.similarity(a, b);
        this.#update({ similarity: { a, b, ...result } });
      } catch (error) {
        this.#setError('similarity', messageOf(error));
      }
    });
  }

  /**
   * Back to what start() shows with nothing asked for: the designed heads on the first example,
   * head 1 selected, heads 1 and 2 compared, no view chosen, every head on, nothing hovered, no
   * error or similarity shown. Weights files and models read stay read (the file and model
   * sources show them again when picked).
   * @returns {Promise<Problem[]>}
   */
  async reset() {
    this.#update({
      errors: { core: this.errors.core, source: null, sentence: null, similarity: null, importance: null, detectors: null },
      similarity: null, ablated: new Set(), hoverToken: -1,
    });
    const problems = await this.setState({ source: { id: 'designed' }, sentence: 0, head: 0, pair: [0, 1], view: null });
    if (this.sentence) this.#update({ focusToken: this.sentence.focus });
    await this.#refreshAblation();
    return problems;
  }

  /** Stop: what is being computed is dropped, the source let go. */
  dispose() {
    this.#generation += 1;
    const { source } = this;
    this.source = null;
    this.result = null;
    if (source) source.dispose();
  }
}

/** What names a sentence in its set: an example's index, or the typed text. @param {Sentence} sentence */
const keyOf = (sentence) => (sentence.example >= 0 ? sentence.example : sentence.text);
