// Training in the browser: the grammar and the 2-layer decoder of cpp/include/mha/train, run by
// the WebAssembly core (its TrainSession, cpp/bindings/train_bindings.cpp). Shapes, defaults,
// errors and ownership live here; the core does the arithmetic.
//
//   const trainer = await loadTrainer({ seed: 1, learningRate: 3e-3 });
//   trainer.step(10);                       // ten AdamW steps; returns their mean loss
//   const scores = trainer.evaluate();      // accuracy and every head x relation
//   const s = trainer.sentence(7);          // a sentence of the grammar with its links
//   const maps = trainer.attention(s);      // { data: Float32Array, shape: [layers, H, T, T] }
//   trainer.dispose();
import { MhaError, statusCodes } from './errors.js';
import { loadOnce } from './load-once.js';
import { heapViews, instantiateWasmModule, readTensor } from './wasm-module.js';

/** @typedef {import('./wasm/mha_train.js').TrainModule} TrainModule */
/** @typedef {import('./wasm/mha_train.js').HeadScore} HeadScore */
/** @typedef {import('./wasm/mha_train.js').SentenceResult} SentenceResult */
/**
 * A sentence of the grammar: its token ids and words, and its ground-truth links.
 * @typedef {{ tokens: number[], words: string[], links: import('./wasm/mha_train.js').Link[], length: number }} GrammarSentence
 */
/** @typedef {{ seed?: number, learningRate?: number, steps?: number, batchSize?: number, warmup?: number, heldOut?: number, wasmBinary?: ArrayBuffer }} TrainerOptions */

/** The relations heads are scored on, in the core's order (TrainSession.relations()); ids of web/roles/vocabulary.js. */
export const RELATIONS = ['previous', 'verbSubject', 'pronounAntecedent', 'nounModifier', 'induction'];

const loadCore = loadOnce(async (/** @type {string} */ _, /** @type {TrainerOptions} */ options) => {
  const { default: createMhaTrain } = await import('./wasm/mha_train.js');
  const core = await instantiateWasmModule(createMhaTrain, new URL('./wasm/mha_train.wasm', import.meta.url), options);
  if (typeof core.TrainSession !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', 'this WebAssembly build has no TrainSession: rebuild with npm run build');
  }
  return core;
});

/** The raw WebAssembly module (one instance, shared by every session). @param {TrainerOptions} [options] */
export function loadTrainCore(options = {}) {
  return loadCore('train', options);
}

/** @param {string} what @param {unknown} value @param {boolean} integer @returns {number} */
function positiveNumber(what, value, integer) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: expected a ${integer ? 'positive integer' : 'positive number'}, got ${String(value)}`);
  }
  return value;
}

/**
 * A training session: a model from random weights (seed), its optimizer and the grammar.
 * learningRate, steps (the length of the cosine schedule), batchSize and warmup default to
 * the set-up of `npm run train` (TrainSession.defaults()); heldOut to 200 sentences.
 * @param {TrainerOptions} [options]
 */
export async function loadTrainer(options = {}) {
  const core = await loadTrainCore(options);
  return new Trainer(core, options);
}

export class Trainer {
  /** @type {TrainModule} */
  #core;
  /** @type {import('./wasm/mha_train.js').TrainSession | null} */
  #handle;
  /** @type {string[]} */
  #vocabulary;
  /** @type {string[]} */
  #categories;
  /** @type {Readonly<import('./wasm/mha_train.js').TrainSettings>} */
  #settings;
  /** @type {ReturnType<typeof statusCodes>['check']} a result of the core as it is, or its MhaError thrown */
  #check;
  /** @type {ReturnType<typeof heapViews>} */
  #heap;
  /** @type {number[]} the tokens of the session's sentence, which attention() and predictions() read */
  #sentenceTokens = [];

  /** @param {TrainModule} core @param {TrainerOptions} [options] */
  constructor(core, options = {}) {
    const defaults = core.TrainSession.defaults();  // the native trainer's set-up
    const {
      seed = 1, learningRate = defaults.learningRate, steps = defaults.steps, batchSize = defaults.batchSize,
      warmup = defaults.warmup, heldOut = 200,
    } = options;
    if (!Number.isInteger(seed) || seed < 0) throw new MhaError('INVALID_ARGUMENT', `seed: expected an integer >= 0, got ${String(seed)}`);
    positiveNumber('learningRate', learningRate, false);
    positiveNumber('steps', steps, true);
    positiveNumber('batchSize', batchSize, true);
    positiveNumber('warmup', warmup, true);
    positiveNumber('heldOut', heldOut, true);
    this.#core = core;
    this.#check = statusCodes(core).check;
    this.#heap = heapViews(core);
    const handle = new core.TrainSession();
    this.#handle = handle;
    try {
      this.#check(handle.init({ seed, learningRate, steps, batchSize, warmup, heldOut }));
    } catch (error) {
      handle.delete();
      this.#handle = null;
      throw error;
    }
    this.#vocabulary = handle.vocabulary();
    this.#categories = handle.categories();
    this.seed = seed;
    this.#settings = Object.freeze({ seed, learningRate, steps, batchSize, warmup, heldOut });
  }

  #live() {
    if (!this.#handle) throw new MhaError('DISPOSED', 'this Trainer has been disposed');
    return this.#handle;
  }

  /** The set-up this trainer was made with, defaults filled in: {seed, learningRate, steps, batchSize, warmup, heldOut}. */
  get settings() { return this.#settings; }
  get vocabulary() { return this.#vocabulary.slice(); }
  /** Each word's grammatical category ('determiner', 'noun', 'time', ...), in vocabulary order. */
  get categories() { return this.#categories.slice(); }
  get numLayers() { return this.#live().numLayers(); }
  get numHeads() { return this.#live().numHeads(); }
  get context() { return this.#live().context(); }
  get stepsDone() { return this.#live().stepsDone(); }
  get learningRate() { return this.#live().learningRate(); }

  /** Peak learning rate of the warm-up + cosine schedule from now on. @param {number} peak */
  setLearningRate(peak) {
    positiveNumber('learningRate', peak, false);
    this.#live().setLearningRate(peak);
  }

  /** n AdamW steps on fresh batches of the grammar; returns their mean loss. @param {number} [n] */
  step(n = 1) {
    positiveNumber('n', n, true);
    return this.#check(this.#live().step(n)).loss;
  }

  /** Held-out accuracy and every head scored on every relation. */
  evaluate() {
    const e = this.#check(this.#live().evaluate());
    return { loss: e.loss, accuracy: { agreement: e.agreement, pronoun: e.pronoun, copy: e.copy }, sentences: e.sentences, heads: e.heads };
  }

  /** @param {SentenceResult} result @returns {GrammarSentence} */
  #readSentence(result) {
    const { tokens } = this.#check(result);
    this.#sentenceTokens = tokens;
    return { tokens, words: tokens.map((t) => this.#vocabulary[t]), links: result.links, length: tokens.length };
  }

  /** A sentence of the grammar from its own seed, with its ground-truth links. @param {number} seed */
  sentence(seed) {
    if (!Number.isInteger(seed) || seed < 0) throw new MhaError('INVALID_ARGUMENT', `seed: expected an integer >= 0, got ${String(seed)}`);
    return this.#readSentence(this.#live().sentence(seed));
  }

  /** Free text in the grammar's vocabulary (links: previous token only). @param {string} text */
  parse(text) {
    if (typeof text !== 'string') throw new MhaError('INVALID_ARGUMENT', `text: expected a string, got ${typeof text}`);
    return this.#readSentence(this.#live().parse(text));
  }

  // The session's sentence becomes `sentence` (parsed again from its words when it is not).
  /** @param {GrammarSentence} sentence */
  #load(sentence) {
    const handle = this.#live();
    if (!sentence || !Array.isArray(sentence.tokens)) throw new MhaError('INVALID_ARGUMENT', 'expected a sentence from sentence() or parse()');
    const current = this.#sentenceTokens;
    if (current.length !== sentence.tokens.length || current.some((t, i) => t !== sentence.tokens[i])) {
      const text = sentence.words.filter((w) => w !== '<bos>' && w !== '<pad>').join(' ');
      this.#readSentence(handle.parse(text));
    }
    return handle;
  }

  /** @param {import('./wasm-module.js').TensorOutcome} t */
  #readTensor(t) {
    return readTensor(this.#heap, this.#check(t));
  }

  /** Attention maps of the current weights on a sentence, computed by the core's MultiHeadAttention: shape [layers, heads, T, T]. @param {GrammarSentence} sentence */
  attention(sentence) {
    return this.#readTensor(this.#load(sentence).attention());
  }

  /** Next-token probabilities after each token: shape [T, vocabulary]. @param {GrammarSentence} sentence */
  predictions(sentence) {
    return this.#readTensor(this.#load(sentence).predictions());
  }

  /** Replace the weights with a weights file (float16, as npm run train writes). @param {Uint8Array | ArrayBuffer} bytes */
  loadWeights(bytes) {
    const data = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
    if (!(data instanceof Uint8Array)) throw new MhaError('INVALID_DTYPE', `weights: expected a Uint8Array or ArrayBuffer, got ${typeof bytes}`);
    const handle = this.#live();
    const at = handle.weightsBuffer(data.length).data; // before the view: sizing may grow the memory
    this.#heap().u8.set(data, at);
    this.#check(handle.loadWeights());
  }

  /** The current weights as a weights file (float16). */
  saveWeights() {
    const { data, shape } = this.#check(this.#live().saveWeights());
    return this.#heap().u8.slice(data, data + shape[0]);
  }

  dispose() {
    if (this.#handle) {
      this.#handle.delete();
      this.#handle = null;
    }
  }

  [Symbol.dispose]() { this.dispose(); }
}

/**
 * The two best heads of one layer on a relation, summed (induction spreads over heads).
 * @param {HeadScore[]} heads
 * @param {string} relation
 */
export function bestPair(heads, relation) {
  /** @type {{ layer: number, heads: number[], sum: number }} */
  let best = { layer: -1, heads: [], sum: 0 };
  const layers = [...new Set(heads.map((h) => h.layer))];
  for (const layer of layers) {
    const sorted = heads.filter((h) => h.layer === layer && h.relation === relation).sort((a, b) => b.meanWeight - a.meanWeight);
    const sum = (sorted[0]?.meanWeight ?? 0) + (sorted[1]?.meanWeight ?? 0);
    if (sum > best.sum) best = { layer, heads: sorted.slice(0, 2).map((h) => h.head), sum };
  }
  return best;
}
