// GPT-2- and BERT-family checkpoints in Hugging Face layout (config.json, model.safetensors in
// float32, float16 or bfloat16, tokenizer.json), run end to end by the WebAssembly core
// (mha_models.wasm: the tokenizers and the transformers, every attention layer the core's
// MultiHeadAttention). Files, shapes, defaults, errors and ownership live here; the core reads
// the files, tokenizes and computes.
//
//   const model = await loadModel('path/to/folder');            // Node.js: a folder on disk
//   const model = await loadModel(fileList);                    // browser: File objects (a folder picked)
//   const model = await loadModel({ 'config.json': text, 'model.safetensors': bytes, 'tokenizer.json': text });
//   const result = model.run('The cat sat on the');              // or run(ids)
//   result.layers[0].weights;      // { data: Float32Array, shape: [H, T, T] }
//   model.top(result, 5);          // [[id, probability], …] at the last position (LM head)
//   model.run(text, { ablate: [[0, 1]] });                       // layer 0, head 1 switched off
//   model.dispose();
import { MhaError, statusCodes } from './errors.js';
import { instantiateWasmModule, isNode } from './wasm-module.js';

const CONFIG_FILE = 'config.json';
const TOKENIZER_FILE = 'tokenizer.json';
const WEIGHTS_FILE = 'model.safetensors';
/** Refused above these: GPT-2 small (124M parameters, 0.5 GB in float32) fits. */
export const MODEL_LIMITS = Object.freeze({ maxFileBytes: 2 ** 30, maxParameters: 200_000_000 });

let corePromise = null;
let codes = null;

/** The models' WebAssembly module (one instance, shared by every model). */
export function loadModelsCore(options = {}) {
  if (!corePromise) {
    corePromise = (async () => {
      const { default: createMhaModels } = await import('./wasm/mha_models.js');
      const core = await instantiateWasmModule(createMhaModels, new URL('./wasm/mha_models.wasm', import.meta.url), options);
      if (typeof core.ModelSession !== 'function') {
        throw new MhaError('INVALID_ARGUMENT', 'this WebAssembly build has no ModelSession: rebuild with npm run build');
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

function check(status) {
  if (status.code !== codes.ok) throw new MhaError(codes.name(status.code), status.message);
}

const fileError = (file, message) => new MhaError('MODEL_FILE', `${file}: ${message}`);

/** A file's content as bytes: string, ArrayBuffer, typed array, Blob/File. */
async function bytesOf(value, file) {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value && typeof value.arrayBuffer === 'function') return new Uint8Array(await value.arrayBuffer());
  throw fileError(file, `expected text, bytes or a File, got ${value === null ? 'null' : typeof value}`);
}

async function textOf(value, file) {
  if (typeof value === 'string') return value;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(await bytesOf(value, file));
  } catch (error) {
    if (error instanceof MhaError) throw error;
    throw fileError(file, 'is not UTF-8 text');
  }
}

/**
 * The model's files by name, from a folder path (Node.js), a FileList or array of Files (a
 * folder picked or dropped: names are the last part of each path), a Map or a plain object.
 * The weights are model.safetensors, or the only *.safetensors there is.
 */
async function collectFiles(files) {
  const byName = new Map();
  if (typeof files === 'string' || files instanceof URL) {
    if (!isNode()) throw new MhaError('INVALID_ARGUMENT', 'loadModel(path) reads a folder in Node.js; in a page pass the Files');
    const fsName = 'node:fs/promises';
    const pathName = 'node:path';
    const urlName = 'node:url';
    const [fs, path, url] = await Promise.all([fsName, pathName, urlName].map((n) => import(/* @vite-ignore */ n)));
    const dir = files instanceof URL ? url.fileURLToPath(files) : files;
    let names;
    try {
      names = await fs.readdir(dir);
    } catch {
      throw fileError(dir, 'is not a folder that can be read');
    }
    for (const name of names) {
      if (name === CONFIG_FILE || name === TOKENIZER_FILE || name.endsWith('.safetensors')) {
        byName.set(name, { read: () => fs.readFile(path.join(dir, name)), where: path.join(dir, name) });
      }
    }
    return byName;
  }
  const entries = files instanceof Map ? [...files.entries()]
    : typeof files?.[Symbol.iterator] === 'function' ? Array.from(files, (f) => [String(f?.name ?? ''), f])
      : files && typeof files === 'object' ? Object.entries(files) : null;
  if (!entries) throw new MhaError('INVALID_ARGUMENT', 'loadModel: expected a folder path, Files, a Map or an object of file name: content');
  for (const [name, value] of entries) {
    const base = name.split('/').pop();
    byName.set(base, { read: async () => value, where: base });
  }
  return byName;
}

/**
 * Opens a checkpoint: config.json and the weights (required), tokenizer.json (optional: without
 * it, run() takes ids only).
 * @param {string | URL | Iterable<File> | Map<string, any> | Record<string, any>} files
 * @param {{maxFileBytes?: number, maxParameters?: number, wasmBinary?: ArrayBuffer}} [options]
 */
export async function loadModel(files, options = {}) {
  const core = await loadModelsCore(options);
  const byName = await collectFiles(files);
  const config = byName.get(CONFIG_FILE);
  if (!config) throw fileError(CONFIG_FILE, 'is missing: a Hugging Face model folder has config.json beside model.safetensors');
  let weightsName = WEIGHTS_FILE;
  if (!byName.has(weightsName)) {
    const candidates = [...byName.keys()].filter((n) => n.endsWith('.safetensors'));
    if (candidates.length !== 1) {
      throw fileError(WEIGHTS_FILE, candidates.length === 0 ? 'is missing (no .safetensors file; a PyTorch .bin is not read)'
        : `is missing, and ${candidates.length} other .safetensors files are there: ${candidates.join(', ')}`);
    }
    weightsName = candidates[0];
  }
  const limits = { ...MODEL_LIMITS, ...options };
  const session = new core.ModelSession();
  try {
    const weights = byName.get(weightsName);
    const weightsValue = await weights.read();
    const size = weightsValue?.size ?? weightsValue?.byteLength ?? weightsValue?.length;
    if (typeof size === 'number' && size > limits.maxFileBytes) {
      throw new MhaError('TOO_LARGE', `${weightsName}: ${size} bytes, more than the ${limits.maxFileBytes} the page takes (GPT-2 small's 124M parameters fit)`);
    }
    const bytes = await bytesOf(weightsValue, weightsName);
    session.weightsBuffer(bytes.length).set(bytes);
    check(session.load(await textOf(await config.read(), CONFIG_FILE), CONFIG_FILE, weightsName, limits.maxFileBytes, limits.maxParameters));
    const tokenizer = byName.get(TOKENIZER_FILE);
    if (tokenizer) check(session.loadTokenizer(await textOf(await tokenizer.read(), TOKENIZER_FILE), TOKENIZER_FILE));
  } catch (error) {
    session.dispose();
    session.delete();
    throw error;
  }
  return new Model(session);
}

export class Model {
  constructor(session) {
    this._session = session;
    /** config.json as the core read it: family, architecture, sizes, activation, head. */
    this.config = Object.freeze(session.config());
    /** 'bpe', 'wordpiece', or null without tokenizer.json */
    this.tokenizer = session.hasTokenizer() ? session.tokenizerKind() : null;
  }

  /** A text (encoded) or ids, into the session's ids. */
  _ids(input) {
    const s = this._live();
    if (typeof input === 'string') {
      if (!this.tokenizer) throw new MhaError('INVALID_ARGUMENT', 'a text needs tokenizer.json, which this model has not; pass ids');
      return this.encode(input);
    }
    if (!Array.isArray(input) && !(input instanceof Int32Array)) throw new MhaError('INVALID_ARGUMENT', 'expected a text or an array of ids');
    const ids = Array.from(input);
    for (const [i, id] of ids.entries()) {
      if (!Number.isInteger(id)) throw new MhaError('INVALID_ARGUMENT', `id ${i} is ${id}, not an integer`);
    }
    s.ids(ids.length).set(ids);
    return ids;
  }

  _live() {
    if (!this._session) throw new MhaError('INVALID_ARGUMENT', 'the model was disposed');
    return this._session;
  }

  /** The ids of a text, with the post-processor's special tokens. */
  encode(text) {
    const s = this._live();
    if (typeof text !== 'string') throw new MhaError('INVALID_ARGUMENT', `encode: expected a string, got ${typeof text}`);
    check(s.encode(text));
    return Array.from(s.ids(-1));
  }

  /** The vocabulary's strings for ids (byte-level BPE pieces as the file spells them). */
  tokens(ids) {
    const s = this._live();
    return ids.map((id) => s.token(id));
  }

  /**
   * Runs a text (encoded first) or ids. Returns ids, per layer the weights (H, T, T) and the
   * residual stream (T, E), the last hidden state, logits (T, vocab) with an LM head, pooled (E)
   * with a BERT pooler.
   * @param {string | number[] | Int32Array} input
   * @param {{ablate?: Array<[number, number]>}} [options]
   */
  run(input, options = {}) {
    const s = this._live();
    const { numLayers: L, numHeads: H, hidden: E, vocabSize: V } = this.config;
    const ids = this._ids(input);
    const ablate = options.ablate ?? [];
    if (!Array.isArray(ablate) || ablate.some((p) => !Array.isArray(p) || p.length !== 2 || !p.every(Number.isInteger))) {
      throw new MhaError('INVALID_ARGUMENT', 'ablate: expected [[layer, head], …] of integers');
    }
    s.ablate(ablate.length * 2).set(ablate.flat());
    check(s.run());
    const T = ids.length;
    const layers = [];
    for (let l = 0; l < L; ++l) {
      layers.push({
        weights: { data: s.layerWeights(l).slice(), shape: [H, T, T] },
        residual: { data: s.layerResidual(l).slice(), shape: [T, E] },
      });
    }
    return {
      ids,
      layers,
      hidden: { data: s.hidden().slice(), shape: [T, E] },
      logits: this.config.lmHead ? { data: s.logits().slice(), shape: [T, V] } : null,
      pooled: this.config.pooler ? { data: s.pooled().slice(), shape: [E] } : null,
    };
  }

  /**
   * Head importance on the model's own task (GPT-2's next token): for each layer and head, the
   * mean drop in log p(actual next token) over the text when that head is switched off.
   * @param {string | number[] | Int32Array} input  at least two tokens
   * @returns {{data: Float32Array, shape: [number, number]}}  (layers, heads)
   */
  headImportance(input) {
    const s = this._live();
    const ids = this._ids(input);
    check(s.headImportance());
    return { ids, data: s.importance().slice(), shape: [this.config.numLayers, this.config.numHeads] };
  }

  /**
   * The k most probable tokens at a position (softmax of the logits): [[id, probability], …].
   * @param {{logits: {data: Float32Array, shape: number[]} | null}} result
   * @param {number} [k]
   * @param {number} [position] the last one by default
   */
  top(result, k = 5, position = undefined) {
    if (!result.logits) throw new MhaError('INVALID_ARGUMENT', 'top: this model has no LM head');
    const [T, V] = result.logits.shape;
    const t = position ?? T - 1;
    if (!Number.isInteger(t) || t < 0 || t >= T) throw new MhaError('INVALID_ARGUMENT', `top: position ${t} is not 0 to ${T - 1}`);
    const row = result.logits.data.subarray(t * V, (t + 1) * V);
    let max = -Infinity;
    for (const v of row) max = Math.max(max, v);
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
    return order.map((id) => [id, Math.exp(row[id] - max) / sum]);
  }

  dispose() {
    if (this._session) {
      this._session.dispose();
      this._session.delete();
      this._session = null;
    }
  }
}
