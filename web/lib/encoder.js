// A pretrained sentence encoder, Universal Sentence Encoder lite (2 layers × 4 heads), run end to
// end by the WebAssembly core (mha_encoder.wasm: its tokenizer and its transformer, every
// attention layer the core's MultiHeadAttention). Files, shapes, defaults, errors and ownership
// live here; the core tokenizes and computes. Types and documentation: encoder.d.ts.
//
//   const encoder = await loadEncoder({ dtype: 'float16', onProgress });
//   const { pieces, words, layers, embedding } = encoder.encode('The cat sat on the mat.');
//   layers[0].weights;              // { data: Float32Array, shape: [4, T, T] }
//   encoder.encode(text, { ablate: [[0, 1]] });   // layer 0, head 1 switched off
//   encoder.dispose();
import { MhaError, statusCodes } from './errors.js';
import { loadOnce } from './load-once.js';
import { nfkc } from './nfkc.js';
import { folderUrl, modelFileError, readModelFolder } from './model-files.js';
import { parseSafetensors } from './safetensors.js';
import { describe, flag } from './tensors.js';
import { heapViews, instantiateWasmModule, readTensor } from './wasm-module.js';

/** @typedef {import('./wasm/mha_encoder.js').EncoderModule} EncoderModule */
/** @typedef {import('./wasm/mha_encoder.js').EncoderSession} EncoderSession */
/** @typedef {import('./encoder.js').LoadEncoderOptions} LoadEncoderOptions */
/** @typedef {import('./encoder.js').EncoderConfig} EncoderConfig */
/** @typedef {import('./encoder.js').EncoderLayerResult} EncoderLayerResult */
/** @typedef {import('./encoder.js').Tokens} Tokens */
/**
 * What a model file's __metadata__ config holds (scripts/build/build-model.js), as modelConfig checked it.
 * @typedef {{ vocab_size: number, embedding_rows: number, max_tokens: number, layer_norm_eps: number, output_dim: number,
 *             model?: string, layers: { embed_dim: number, num_heads: number, out_dim: number, ffn_dim: number }[] }} ModelConfig
 */
/**
 * What an Encoder reads of its module (partsOf).
 * @typedef {ReturnType<typeof statusCodes> & { heap: () => import('./wasm-module.js').HeapViews, layerResults: string[] }} ModuleParts
 */

/** Where loadEncoder() looks by default: web/models/use-lite/ beside web/lib/ (npm start serves it). */
const DEFAULT_MODEL_PATH = '../models/use-lite/';
export const DEFAULT_MODEL_URL = new URL(DEFAULT_MODEL_PATH, import.meta.url).href;

/** @type {Record<'float32' | 'float16', string>} */
const MODEL_FILES = { float32: 'model-f32.safetensors', float16: 'model-f16.safetensors' };
const VOCAB_FILE = 'vocab.txt';
// Ids 0-5 are the unknown piece and control symbols; the tokenizer never matches them.
const RESERVED_PIECES = 6;
/** Names of a layer's attention parameters, as nn.MultiheadAttention has them. */
/** @type {readonly import('./encoder.js').AttentionParameterName[]} */
export const ATTENTION_PARAMETERS = Object.freeze(['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);

/**
 * The encoder in a Web Worker (encoder-worker.js): the same methods, each returning a promise.
 * Loaded on first use, so pages that encode on the main thread never download it.
 * @param {import('./encoder.js').WorkerEncoderOptions} [options]
 */
export async function createWorkerEncoder(options) {
  const worker = await import('./encoder-worker.js');
  return worker.createWorkerEncoder(options);
}

const loadCore = loadOnce(async (/** @type {string} */ _, /** @type {LoadEncoderOptions} */ options) => {
  const { default: createMhaEncoder } = await import('./wasm/mha_encoder.js');
  const core = await instantiateWasmModule(createMhaEncoder, new URL('./wasm/mha_encoder.wasm', import.meta.url), options);
  if (typeof core.EncoderSession !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', 'this WebAssembly build has no EncoderSession: rebuild with npm run build');
  }
  return core;
});

/**
 * The encoder's WebAssembly module (one instance, shared by every encoder).
 * @param {LoadEncoderOptions} [options]
 */
export function loadEncoderCore(options = {}) {
  return loadCore('encoder', options);
}

// What an Encoder reads of its module: status codes, heap views and the names of a layer's
// results (EncoderLayerResult's, in the core's order), once a module.
/** @type {WeakMap<EncoderModule, ModuleParts>} */
const moduleParts = new WeakMap();
/** @param {EncoderModule} core @returns {ModuleParts} */
function partsOf(core) {
  let parts = moduleParts.get(core);
  if (!parts) moduleParts.set(core, (parts = { ...statusCodes(core), heap: heapViews(core), layerResults: core.layerResultNames() }));
  return parts;
}

/**
 * The config a model file carries in its __metadata__ (the core checks its values).
 * @param {Record<string, string>} metadata @param {string} file
 * @returns {ModelConfig}
 */
function modelConfig(metadata, file) {
  let config;
  try {
    config = JSON.parse(metadata.config);
  } catch {
    throw modelFileError(file, 'its __metadata__ has no "config" JSON: this is not a model file of scripts/build/build-model.js');
  }
  const numbers = (/** @type {any} */ o, /** @type {string[]} */ keys) => o !== null && typeof o === 'object' && keys.every((k) => typeof o[k] === 'number');
  const ok = numbers(config, ['vocab_size', 'embedding_rows', 'max_tokens', 'layer_norm_eps', 'output_dim']) &&
    Array.isArray(config.layers) && config.layers.every((/** @type {unknown} */ l) => numbers(l, ['embed_dim', 'num_heads', 'out_dim', 'ffn_dim']));
  if (!ok) throw modelFileError(file, `its config is incomplete: ${metadata.config}`);
  return config;
}

/**
 * Code points of a string into the core's text buffer (a lone surrogate is one code point, as in for…of).
 * @param {EncoderSession} session @param {ModuleParts} module @param {string} text @param {string} what
 */
function writeCodePoints(session, { check, heap }, text, what) {
  const at = check(session.textBuffer(text.length), what).data >> 2;
  const view = heap().u32;
  let count = 0;
  for (let i = 0; i < text.length; ++i) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        view[at + count++] = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
        ++i;
        continue;
      }
    }
    view[at + count++] = unit;
  }
  return count;
}

/**
 * A string of code points[begin, end), in chunks (spreading 100k arguments overflows the stack).
 * @param {Uint32Array} codePoints @param {number} begin @param {number} end
 */
function stringOf(codePoints, begin, end) {
  let out = '';
  for (let at = begin; at < end; at += 4096) out += String.fromCodePoint(...codePoints.subarray(at, Math.min(end, at + 4096)));
  return out;
}

/** All punctuation or symbols (Unicode P* and S*). */
const PUNCTUATION_OR_SYMBOL = /^[\p{P}\p{S}]+$/u;

/**
 * The word index of each piece. A piece begins a word when it is the first, when it starts with
 * "▁", when it is all punctuation or symbols (its leading "▁" aside), or when the piece before it
 * is: "▁The ▁ma t ▁is ▁red ." is five words (0 1 1 2 3 4), "▁( cat ) ▁ok" four (0 1 2 3),
 * "▁my ▁ aunt" two (0 1 1: a lone "▁" begins a word, which "aunt" continues).
 * @param {readonly string[]} pieces
 * @returns {number[]}
 */
export function wordsOfPieces(pieces) {
  const words = [];
  let word = -1;
  let afterPunctuation = false;
  for (const piece of pieces) {
    const marked = piece.startsWith('▁');
    const punctuation = PUNCTUATION_OR_SYMBOL.test(marked ? piece.slice(1) : piece);
    if (word < 0 || marked || punctuation || afterPunctuation) ++word;
    words.push(word);
    afterPunctuation = punctuation;
  }
  return words;
}

/**
 * The last tokens of the session, the first `kept` of them.
 * @param {EncoderSession} session @param {number} kept
 * @returns {Pick<Tokens, 'pieces' | 'ids' | 'words'>}
 */
function readTokens(session, kept) {
  const text = session.tokenText().slice();
  const begins = session.tokenBegins();
  const ends = session.tokenEnds();
  const pieces = new Array(kept);
  for (let i = 0; i < kept; ++i) pieces[i] = stringOf(text, begins[i], ends[i]);
  return { pieces, ids: Array.from(session.tokenIds().subarray(0, kept)), words: wordsOfPieces(pieces) };
}

/**
 * Load the pretrained encoder: the WebAssembly module, then the model folder (manifest.json,
 * vocab.txt and the weights of the dtype asked for), each file checked.
 * @param {LoadEncoderOptions} [options]
 * @returns {Promise<import('./encoder.js').Encoder>}
 */
export async function loadEncoder(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new MhaError('INVALID_ARGUMENT', `loadEncoder: expected an options object, got ${describe(options)}`);
  }
  const { modelUrl = DEFAULT_MODEL_URL, dtype = 'float32', onProgress, cache = true } = options;
  if (!(dtype in MODEL_FILES)) {
    throw new MhaError('INVALID_DTYPE', `loadEncoder: dtype must be 'float32' or 'float16', got ${describe(dtype)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', `loadEncoder: onProgress must be a function, got ${describe(onProgress)}`);
  }
  const folder = await folderUrl(modelUrl);
  const [core, { manifest, files }] = await Promise.all([
    loadEncoderCore(options),
    readModelFolder(folder, [VOCAB_FILE, MODEL_FILES[dtype]], { onProgress, cache }),
  ]);
  const session = new core.EncoderSession();
  try {
    const config = fill(core, session, files, MODEL_FILES[dtype]);
    return new Encoder(session, config, dtype, folder.href, manifest, partsOf(core));
  } catch (error) {
    session.delete();
    throw error;
  }
}

/**
 * Configure the session from the model file and move vocabulary and weights into it.
 * @param {EncoderModule} core @param {EncoderSession} session
 * @param {Record<string, Uint8Array>} files @param {string} weightsFile
 */
function fill(core, session, files, weightsFile) {
  let parsed;
  try {
    parsed = parseSafetensors(files[weightsFile], { fileName: weightsFile });
  } catch (error) {
    throw new MhaError('MODEL_FILE', error instanceof Error ? error.message : String(error));
  }
  const config = modelConfig(parsed.metadata, weightsFile);
  const { ok, heap } = partsOf(core);
  /**
   * A check of the module's results that names the file: a refused result throws MODEL_FILE.
   * @param {string} file @param {string} [what]
   * @returns {<R extends import('./wasm-module.js').Outcome>(result: R) => R}
   */
  const refused = (file, what) => (result) => {
    if (result.code !== ok) throw modelFileError(file, what ? `${what}: ${result.message}` : result.message);
    return result;
  };
  const layers = new core.EncoderLayerConfigList();
  try {
    for (const l of config.layers) layers.push_back({ embedDim: l.embed_dim, numHeads: l.num_heads, outDim: l.out_dim, ffnDim: l.ffn_dim });
    refused(weightsFile, 'its config is refused')(session.configure({
      vocabSize: config.vocab_size, embeddingRows: config.embedding_rows, maxTokens: config.max_tokens,
      layerNormEps: config.layer_norm_eps, outputDim: config.output_dim,
    }, layers));
  } finally {
    layers.delete();
  }
  const vocab = files[VOCAB_FILE];
  // the buffer first: sizing it may grow the memory, and a view taken before would be detached
  const vocabAt = session.vocabularyBuffer(vocab.byteLength).data;
  heap().u8.set(vocab, vocabAt);
  refused(VOCAB_FILE)(session.loadVocabulary(RESERVED_PIECES));
  for (const [name, tensor] of Object.entries(parsed.tensors)) {
    const check = refused(weightsFile, `tensor '${name}'`);
    const buffer = check(session.parameterBuffer(name, tensor.shape));
    heap().f32.set(tensor.data, buffer.data >> 2);
    check(session.setParameter(name, tensor.shape));
  }
  session.releaseStaging();
  const missing = session.missingParameters();
  if (missing.length) throw modelFileError(weightsFile, `lacks the tensors ${missing.join(', ')}`);
  return config;
}

const registry = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((/** @type {EncoderSession} */ session) => session.delete()) : null;

/**
 * Symbol.dispose where the engine has it (`using` calls it), else a stand-in of the same name.
 * @type {typeof Symbol.dispose}
 */
const DISPOSE = Symbol.dispose ?? Symbol.for('Symbol.dispose');

/** @implements {Disposable} */
export class Encoder {
  /** @type {EncoderSession | null} */
  #session;
  /** @type {EncoderConfig} */
  #config;
  /** @type {ModuleParts} */
  #module;

  /**
   * @param {EncoderSession} session @param {ModelConfig} config @param {EncoderConfig['dtype']} dtype
   * @param {string} modelUrl @param {import('./model-files.js').Manifest} manifest @param {ModuleParts} module
   */
  constructor(session, config, dtype, modelUrl, manifest, module) {
    this.#session = session;
    this.#module = module;
    this.#config = Object.freeze({
      numLayers: config.layers.length,
      maxTokens: config.max_tokens,
      vocabSize: config.vocab_size,
      outputDim: config.output_dim,
      dtype,
      modelUrl,
      model: String(manifest.model ?? config.model ?? 'pretrained encoder'),
      layers: Object.freeze(config.layers.map((l) => Object.freeze({
        numHeads: l.num_heads, embedDim: l.embed_dim, headDim: l.embed_dim / l.num_heads, outDim: l.out_dim, ffnDim: l.ffn_dim,
      }))),
    });
    registry?.register(this, session, this);
  }

  get config() { return this.#config; }
  get disposed() { return this.#session === null; }

  /** @returns {EncoderSession} */
  #live() {
    if (!this.#session) throw new MhaError('DISPOSED', 'this Encoder has been disposed');
    return this.#session;
  }

  /**
   * Tokenize text, or take ids as they are: { count, kept } (kept: what encode() takes).
   * @param {unknown} input  checked here  @param {boolean} truncate  @param {string} what
   */
  #tokens(input, truncate, what) {
    const session = this.#live();
    const { check, heap } = this.#module;
    if (typeof input === 'string') {
      // NFKC first, as the model's TF.js tokenizer does: the same string as String.prototype.normalize gives
      return check(session.tokenize(writeCodePoints(session, this.#module, nfkc(input), what), truncate), what);
    }
    const given = input !== null && typeof input === 'object' ? /** @type {{ ids?: unknown }} */ (input).ids : undefined;
    if (Array.isArray(given) || (ArrayBuffer.isView(given) && !(given instanceof DataView))) {
      // an array or a typed array: each value is checked below
      const ids = /** @type {ArrayLike<number>} */ (given);
      for (let i = 0; i < ids.length; ++i) {
        const id = /** @type {unknown} */ (ids[i]);
        if (typeof id !== 'number' || !Number.isInteger(id) || id < -0x80000000 || id > 0x7fffffff) {
          throw new MhaError('INVALID_ARGUMENT', `${what}: ids[${i}] is ${String(id)}; expected a 32-bit integer`);
        }
      }
      const idsAt = session.idsBuffer(ids.length).data >> 2; // before the view: it may grow the memory
      heap().i32.set(ids, idsAt);
      return check(session.fromIds(ids.length, truncate), what);
    }
    throw new MhaError('INVALID_ARGUMENT', `${what}: expected a string or { ids: number[] }, got ${describe(input)}`);
  }

  /**
   * The model's tokens of a text: pieces, ids and the word of each piece. Every token unless
   * `truncate` (then at most maxTokens, with `truncated` saying whether some were cut).
   * @param {string} text @param {import('./encoder.js').TokenizeOptions} [options]
   * @returns {Tokens}
   */
  tokenize(text, { truncate = false } = {}) {
    if (typeof text !== 'string') throw new MhaError('INVALID_ARGUMENT', `tokenize: expected a string, got ${describe(text)}`);
    const { count, kept } = this.#tokens(text, flag('tokenize: truncate', truncate, false), 'tokenize');
    return { ...readTokens(this.#live(), kept), truncated: kept < count, totalTokens: count };
  }

  /**
   * Encode a text (or ids): every layer's attention weights, head outputs, concatenation,
   * attention output and residual stream, and the sentence embedding.
   * @param {import('./encoder.js').EncodeInput} input @param {import('./encoder.js').EncodeOptions} [options]
   * @returns {import('./encoder.js').EncodeResult}
   */
  encode(input, { ablate = [], truncate = false } = {}) {
    if (!Array.isArray(ablate)) throw new MhaError('INVALID_ARGUMENT', `encode: ablate must be an array of [layer, head] pairs, got ${describe(ablate)}`);
    /** @type {number[]} */
    const pairs = [];
    for (const pair of /** @type {readonly unknown[]} */ (ablate)) {
      if (!Array.isArray(pair) || pair.length !== 2 || !pair.every(Number.isSafeInteger)) {
        throw new MhaError('INVALID_ARGUMENT', `encode: ablate: ${JSON.stringify(pair)} is not a [layer, head] pair of integers`);
      }
      pairs.push(pair[0], pair[1]);
    }
    const { count, kept } = this.#tokens(input, flag('encode: truncate', truncate, false), 'encode');
    const session = this.#live();
    this.#module.check(session.encode(pairs, truncate), 'encode');
    /** @type {EncoderLayerResult[]} */
    const layers = [];
    for (let l = 0; l < this.#config.numLayers; ++l) {
      /** @type {Record<string, import('./index.js').Tensor>} */
      const layer = {};
      for (const name of this.#module.layerResults) {
        // the module's own names, of a layer it has: never null
        const data = /** @type {Float32Array} */ (session.layerResult(l, name));
        layer[name] = { data: data.slice(), shape: /** @type {number[]} */ (session.layerShape(l, name)) };
      }
      // layerResultNames() are EncoderLayerResult's fields (encoder_bindings.cpp)
      layers.push(/** @type {EncoderLayerResult} */ (/** @type {unknown} */ (layer)));
    }
    const embedding = session.embedding().slice();
    return { ...readTokens(session, kept), truncated: kept < count, totalTokens: count, layers, embedding };
  }

  /**
   * A layer's attention parameter under nn.MultiheadAttention's name (out_proj.weight is W_O).
   * @param {number} layer @param {import('./encoder.js').AttentionParameterName} name
   * @returns {import('./index.js').Tensor}
   */
  parameter(layer, name) {
    const session = this.#live();
    if (!Number.isSafeInteger(layer)) throw new MhaError('INVALID_ARGUMENT', `parameter: layer must be an integer, got ${describe(layer)}`);
    if (typeof name !== 'string') throw new MhaError('UNKNOWN_PARAMETER', `parameter: the name must be a string, got ${describe(name)}`);
    return readTensor(this.#module.heap, this.#module.check(session.attentionParameter(layer, name), 'parameter'));
  }

  dispose() {
    if (!this.#session) return;
    registry?.unregister(this);
    this.#session.delete();
    this.#session = null;
  }

  [DISPOSE]() {
    this.dispose();
  }
}
