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
import { folderUrl, modelFileError, readModelFolder } from './model-files.js';
import { parseSafetensors } from './safetensors.js';
import { instantiateWasmModule } from './wasm-module.js';

/** Where loadEncoder() looks by default: web/models/use-lite/ beside web/lib/ (npm start serves it). */
const DEFAULT_MODEL_PATH = '../models/use-lite/';
export const DEFAULT_MODEL_URL = new URL(DEFAULT_MODEL_PATH, import.meta.url).href;

const MODEL_FILES = { float32: 'model-f32.safetensors', float16: 'model-f16.safetensors' };
const VOCAB_FILE = 'vocab.txt';
// Ids 0-5 are the unknown piece and control symbols; the tokenizer never matches them.
const RESERVED_PIECES = 6;
/** Names of a layer's attention parameters, as nn.MultiheadAttention has them. */
export const ATTENTION_PARAMETERS = Object.freeze(['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);
const LAYER_RESULTS = ['weights', 'headOutputs', 'concat', 'attentionOutput', 'residual'];
// More code points than this are refused before anything is copied (the core's own limit).
const MAX_CODE_POINTS = 1 << 24;

let corePromise = null;
let codes = null;  // the module's status codes, once it is loaded

/**
 * The encoder in a Web Worker (encoder-worker.js): the same methods, each returning a promise.
 * Loaded on first use, so pages that encode on the main thread never download it.
 * @param {import('./encoder.js').WorkerEncoderOptions} [options]
 */
export async function createWorkerEncoder(options) {
  const worker = await import('./encoder-worker.js');
  return worker.createWorkerEncoder(options);
}

/** The encoder's WebAssembly module (one instance, shared by every encoder). */
export function loadEncoderCore(options = {}) {
  if (!corePromise) {
    corePromise = (async () => {
      const { default: createMhaEncoder } = await import('./wasm/mha_encoder.js');
      const core = await instantiateWasmModule(createMhaEncoder, new URL('./wasm/mha_encoder.wasm', import.meta.url), options);
      if (typeof core.EncoderSession !== 'function') {
        throw new MhaError('INVALID_ARGUMENT', 'this WebAssembly build has no EncoderSession: rebuild with npm run build');
      }
      codes = statusCodes(core);
      return core;
    })().catch((error) => {
      corePromise = null;
      throw error;
    });
  }
  return corePromise;
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${value.length}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

function check(status) {
  if (status.code !== codes.ok) throw new MhaError(codes.name(status.code), status.message);
}

/** The config a model file carries in its __metadata__, checked. */
function modelConfig(metadata, file) {
  let config;
  try {
    config = JSON.parse(metadata.config);
  } catch {
    throw modelFileError(file, 'its __metadata__ has no "config" JSON: this is not a model file of scripts/build-model.js');
  }
  const positive = (v) => Number.isInteger(v) && v > 0;
  const ok = config && positive(config.vocab_size) && positive(config.embedding_rows) && positive(config.max_tokens) &&
    config.layer_norm_eps > 0 && positive(config.output_dim) && Array.isArray(config.layers) && config.layers.length > 0 &&
    config.layers.every((l) => positive(l.embed_dim) && positive(l.num_heads) && positive(l.out_dim) && positive(l.ffn_dim));
  if (!ok) throw modelFileError(file, `its config is incomplete: ${metadata.config}`);
  return config;
}

/** Code points of a string into the core's buffer (a lone surrogate is one code point, as in for…of). */
function writeCodePoints(session, text) {
  const view = session.codePoints(text.length);
  let count = 0;
  for (let i = 0; i < text.length; ++i) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        view[count++] = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
        ++i;
        continue;
      }
    }
    view[count++] = unit;
  }
  return count;
}

/** A string of code points[begin, end), in chunks (spreading 100k arguments overflows the stack). */
function stringOf(codePoints, begin, end) {
  let out = '';
  for (let at = begin; at < end; at += 4096) out += String.fromCodePoint(...codePoints.subarray(at, Math.min(end, at + 4096)));
  return out;
}

/** The last tokens of the session, the first `kept` of them. */
function readTokens(session, kept) {
  const text = session.tokenText().slice();
  const begins = session.tokenBegins();
  const ends = session.tokenEnds();
  const pieces = new Array(kept);
  for (let i = 0; i < kept; ++i) pieces[i] = stringOf(text, begins[i], ends[i]);
  return { pieces, ids: Array.from(session.tokenIds().subarray(0, kept)), words: Array.from(session.tokenWords().subarray(0, kept)) };
}

/**
 * Load the pretrained encoder: the WebAssembly module, then the model folder (manifest.json,
 * vocab.txt and the weights of the dtype asked for), each file checked.
 * @param {import('./encoder.js').LoadEncoderOptions} [options]
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
    return new Encoder(session, config, dtype, folder.href, manifest);
  } catch (error) {
    session.delete();
    throw error;
  }
}

/** Configure the session from the model file and move vocabulary and weights into it. */
function fill(core, session, files, weightsFile) {
  let parsed;
  try {
    parsed = parseSafetensors(files[weightsFile], { fileName: weightsFile });
  } catch (error) {
    throw new MhaError('MODEL_FILE', error.message);
  }
  const config = modelConfig(parsed.metadata, weightsFile);
  const layers = new core.EncoderLayerConfigList();
  try {
    for (const l of config.layers) layers.push_back({ embedDim: l.embed_dim, numHeads: l.num_heads, outDim: l.out_dim, ffnDim: l.ffn_dim });
    const status = session.configure({
      vocabSize: config.vocab_size, embeddingRows: config.embedding_rows, maxTokens: config.max_tokens,
      layerNormEps: config.layer_norm_eps, outputDim: config.output_dim,
    }, layers);
    if (status.code !== 0) throw modelFileError(weightsFile, `its config is refused: ${status.message}`);
  } finally {
    layers.delete();
  }
  const vocab = files[VOCAB_FILE];
  session.bytes(vocab.byteLength).set(vocab);
  const vocabStatus = session.loadVocabulary(RESERVED_PIECES);
  if (vocabStatus.code !== 0) throw modelFileError(VOCAB_FILE, vocabStatus.message);
  for (const [name, tensor] of Object.entries(parsed.tensors)) {
    session.floats(tensor.data.length).set(tensor.data);
    const status = session.setParameter(name, tensor.shape);
    if (status.code !== 0) throw modelFileError(weightsFile, `tensor '${name}': ${status.message}`);
  }
  session.releaseStaging();
  const missing = session.missingParameters();
  if (missing) throw modelFileError(weightsFile, `lacks the tensors ${missing.split(',').join(', ')}`);
  return config;
}

const registry = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((session) => session.delete()) : null;

export class Encoder {
  #session;
  #config;

  constructor(session, config, dtype, modelUrl, manifest) {
    this.#session = session;
    this.#config = Object.freeze({
      numLayers: config.layers.length,
      maxTokens: config.max_tokens,
      vocabSize: config.vocab_size,
      outputDim: config.output_dim,
      dtype,
      modelUrl,
      model: manifest.model ?? config.model ?? 'pretrained encoder',
      layers: Object.freeze(config.layers.map((l) => Object.freeze({
        numHeads: l.num_heads, embedDim: l.embed_dim, headDim: l.embed_dim / l.num_heads, outDim: l.out_dim, ffnDim: l.ffn_dim,
      }))),
    });
    registry?.register(this, session, this);
  }

  get config() { return this.#config; }
  get disposed() { return this.#session === null; }

  #live() {
    if (!this.#session) throw new MhaError('DISPOSED', 'this Encoder has been disposed');
    return this.#session;
  }

  /** Tokenize text, or take ids as they are; returns how many tokens there are. */
  #tokens(input, what) {
    const session = this.#live();
    if (typeof input === 'string') {
      if (input.length > MAX_CODE_POINTS) {
        throw new MhaError('TOO_LARGE', `${what}: a text of ${input.length} UTF-16 code units; at most ${MAX_CODE_POINTS} are tokenized`);
      }
      check(session.tokenize(writeCodePoints(session, input)));
    } else if (input !== null && typeof input === 'object' && (Array.isArray(input.ids) || ArrayBuffer.isView(input.ids))) {
      const { ids } = input;
      for (let i = 0; i < ids.length; ++i) {
        if (!Number.isInteger(ids[i]) || ids[i] < 0 || ids[i] >= this.#config.vocabSize) {
          throw new MhaError('INVALID_ARGUMENT', `${what}: ids[${i}] is ${String(ids[i])}; expected an integer from 0 to ${this.#config.vocabSize - 1}`);
        }
      }
      session.ids(ids.length).set(ids);
      check(session.fromIds(ids.length));
    } else {
      throw new MhaError('INVALID_ARGUMENT', `${what}: expected a string or { ids: number[] }, got ${describe(input)}`);
    }
    return session.tokenIds().length;
  }

  #kept(count, truncate, what) {
    if (typeof truncate !== 'boolean') throw new MhaError('INVALID_ARGUMENT', `${what}: truncate must be true or false, got ${describe(truncate)}`);
    const max = this.#config.maxTokens;
    if (count <= max) return count;
    if (truncate) return max;
    throw new MhaError('TOO_LARGE', `${what}: ${count} tokens; the model takes at most ${max}. Shorten the text, or pass { truncate: true } to use its first ${max} tokens`);
  }

  /**
   * The model's tokens of a text: pieces, ids and the word of each piece. Every token unless
   * `truncate` (then at most maxTokens, with `truncated` saying whether some were cut).
   */
  tokenize(text, { truncate = false } = {}) {
    if (typeof text !== 'string') throw new MhaError('INVALID_ARGUMENT', `tokenize: expected a string, got ${describe(text)}`);
    if (typeof truncate !== 'boolean') throw new MhaError('INVALID_ARGUMENT', `tokenize: truncate must be true or false, got ${describe(truncate)}`);
    const count = this.#tokens(text, 'tokenize');
    const kept = truncate ? Math.min(count, this.#config.maxTokens) : count;
    return { ...readTokens(this.#session, kept), truncated: kept < count, totalTokens: count };
  }

  #ablation(ablate) {
    if (!Array.isArray(ablate)) throw new MhaError('INVALID_ARGUMENT', `encode: ablate must be an array of [layer, head] pairs, got ${describe(ablate)}`);
    const flat = [];
    for (const pair of ablate) {
      const [layer, head] = Array.isArray(pair) && pair.length === 2 ? pair : [NaN, NaN];
      if (!Number.isInteger(layer) || layer < 0 || layer >= this.#config.numLayers) {
        throw new MhaError('INVALID_ARGUMENT', `encode: ablate: ${JSON.stringify(pair)} is not a [layer, head] pair with a layer from 0 to ${this.#config.numLayers - 1}`);
      }
      const heads = this.#config.layers[layer].numHeads;
      if (!Number.isInteger(head) || head < 0 || head >= heads) {
        throw new MhaError('INVALID_ARGUMENT', `encode: ablate: head ${String(head)} of layer ${layer} is out of range; expected 0 to ${heads - 1}`);
      }
      flat.push(layer, head);
    }
    return flat;
  }

  /**
   * Encode a text (or ids): every layer's attention weights, head outputs, concatenation,
   * attention output and residual stream, and the sentence embedding.
   */
  encode(input, { ablate = [], truncate = false } = {}) {
    const flat = this.#ablation(ablate);
    const count = this.#tokens(input, 'encode');
    const kept = this.#kept(count, truncate, 'encode');
    const session = this.#session;
    check(session.encode(kept, flat));
    const layers = [];
    for (let l = 0; l < this.#config.numLayers; ++l) {
      const layer = {};
      LAYER_RESULTS.forEach((name, which) => {
        layer[name] = { data: session.layerResult(l, which).slice(), shape: session.layerShape(l, which).split(',').map(Number) };
      });
      layers.push(layer);
    }
    const embedding = session.embedding().slice();
    return { ...readTokens(session, kept), truncated: kept < count, totalTokens: count, layers, embedding };
  }

  /** A layer's attention parameter under nn.MultiheadAttention's name (out_proj.weight is W_O). */
  parameter(layer, name) {
    const session = this.#live();
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.#config.numLayers) {
      throw new MhaError('INVALID_ARGUMENT', `parameter: layer must be an integer from 0 to ${this.#config.numLayers - 1}, got ${describe(layer)}`);
    }
    if (!ATTENTION_PARAMETERS.includes(name)) {
      throw new MhaError('UNKNOWN_PARAMETER', `parameter: '${String(name)}' is not an attention parameter; expected one of ${ATTENTION_PARAMETERS.join(', ')}`);
    }
    check(session.getParameter(`layers.${layer}.self_attn.${name}`));
    return { data: session.parameterData().slice(), shape: session.parameterShape().split(',').map(Number) };
  }

  dispose() {
    if (!this.#session) return;
    registry?.unregister(this);
    this.#session.delete();
    this.#session = null;
  }

  [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() {
    this.dispose();
  }
}
