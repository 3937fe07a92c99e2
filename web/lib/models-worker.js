// A Hugging Face checkpoint off the main thread, on the page's side: loadWorkerModel() starts a
// module worker (models-worker-entry.js) that opens the model with loadModel() there; the object
// it resolves to has Model's members, each method returning a promise. Calls go through rpc.js,
// answered in order; result tensors come back as transferred buffers (no copy), and the files'
// ArrayBuffers go to the worker the same way (Files and Blobs are cloned, which copies no bytes).
// Texts are tokenized in a second worker (tokenizer-worker.js) with a time limit, so that a
// tokenizer that takes too long on a text is ended there without ending the model.
import { MhaError } from './errors.js';
import { connectWorker } from './rpc.js';
import { topTokens } from './top-tokens.js';
import { onOtherOrigin, startModuleWorker, workerScriptName } from './start-worker.js';
import { startTokenizerWorker, timeLimitOf } from './tokenizer-worker.js';

/** The worker's script beside this module (a name, not a literal URL: bundlers leave it alone). */
const WORKER_ENTRY = './models-worker-entry.js';

/** A scheme of two letters or more: `C:\models` is a path, `https://…` and `file:///…` are URLs. */
const URL_PATTERN = /^[a-z][a-z0-9+.-]+:/i;

/** @param {unknown} value */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return /** @type {object} */ (value).constructor?.name ?? 'an object';
  return typeof value;
}

/** A worker resolves relative URLs against its own script: the page's are made absolute first. */
const inPage = () => typeof globalThis.location === 'object' && globalThis.location !== null && typeof document === 'object';

/**
 * The buffer a file's content owns whole, to move rather than copy.
 * @param {unknown} value
 * @returns {ArrayBuffer | null}
 */
function ownBuffer(value) {
  if (value instanceof ArrayBuffer) return value;
  if (ArrayBuffer.isView(value) && value.buffer instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) {
    return value.buffer;
  }
  return null;
}

/**
 * What loadModel's first argument becomes in a message: a URL as its absolute href, a path as
 * it is, Files as a Map of name to File (a structured clone of a File keeps its name in a
 * browser, not everywhere), a Map or object as it is; with the buffers to transfer.
 * @param {unknown} files
 * @returns {{ input: unknown, transfer: ArrayBuffer[] }}
 */
function toMessage(files) {
  if (files instanceof URL) return { input: files.href, transfer: [] };
  if (typeof files === 'string') {
    const url = URL_PATTERN.test(files) || inPage() ? new URL(files, globalThis.location?.href).href : files;
    return { input: url, transfer: [] };
  }
  if (files === null || typeof files !== 'object') {
    throw new MhaError('INVALID_ARGUMENT', `loadWorkerModel: expected a folder URL, Files, a Map or an object of file name: content, got ${describe(files)}`);
  }
  /** @type {unknown[]} */
  let values;
  /** @type {unknown} */
  let input = files;
  if (files instanceof Map) {
    values = [...files.values()];
  } else if (Symbol.iterator in files) {
    const list = Array.from(/** @type {Iterable<unknown>} */ (files));
    input = new Map(list.map((f) => [String(/** @type {{ name?: unknown }} */ (f)?.name ?? ''), f]));
    values = list;
  } else {
    values = Object.values(files);
  }
  const transfer = new Set();
  for (const value of values) {
    const buffer = ownBuffer(value);
    if (buffer && buffer.byteLength > 0) transfer.add(buffer);
  }
  return { input, transfer: [...transfer] };
}

/**
 * Opens a checkpoint in a Web Worker: what loadModel() takes, plus the worker's options.
 * @param {string | URL | Iterable<File> | Map<string, unknown> | Record<string, unknown>} files
 * @param {import('./models.js').LoadWorkerModelOptions} [options]
 * @returns {Promise<import('./models.js').WorkerModel>}
 */
export async function loadWorkerModel(files, options = {}) {
  if (typeof Worker !== 'function') {
    throw new MhaError('WORKER_ERROR', 'loadWorkerModel needs Web Workers (a browser); in Node.js use loadModel()');
  }
  if (options === null || typeof options !== 'object') throw new MhaError('INVALID_ARGUMENT', `loadWorkerModel: expected an options object, got ${describe(options)}`);
  const { workerUrl, wasmUrl, onProgress, onPlan, signal, tokenizeTimeLimit, tokenizeTimeLimitSetting, ...rest } = options;
  const timeLimit = timeLimitOf(tokenizeTimeLimit, 'loadWorkerModel');
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', `loadWorkerModel: onProgress must be a function, got ${describe(onProgress)}`);
  }
  if (onPlan !== undefined && typeof onPlan !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', `loadWorkerModel: onPlan must be a function, got ${describe(onPlan)}`);
  }
  signal?.throwIfAborted();
  const { input, transfer } = toMessage(files);
  const base = globalThis.location?.href;
  // Written out as `new Worker(new URL('./…', import.meta.url), …)` so that bundlers bundle it;
  // from another origin than the page (a CDN), through a trampoline (start-worker.js).
  const entry = workerUrl ? new URL(workerUrl, base) : new URL(WORKER_ENTRY, import.meta.url);
  const worker = workerUrl || onOtherOrigin(import.meta.url)
    ? startModuleWorker(entry, { name: 'mha-models' })
    : new Worker(new URL('./models-worker-entry.js', import.meta.url), { type: 'module', name: 'mha-models' });
  worker.addEventListener('message', (event) => {
    if (event.data && event.data.progress) onProgress?.(event.data.progress);
    if (event.data && event.data.plan) onPlan?.(event.data.plan);
  });
  const rpc = connectWorker(worker, `the models' worker (${workerScriptName(entry)})`);

  /** @type {{ config: import('./models.js').ModelConfig, tokenizer: import('./models.js').TokenizerInfo | null, threads: number, tokenizerSource: import('./tokenizer-worker.js').TokenizerSource | null }} */
  let opened;
  /** @type {() => void} */
  let abort = () => {};
  try {
    opened = await new Promise((resolve, reject) => {
      abort = () => reject(/** @type {AbortSignal} */ (signal).reason);
      signal?.addEventListener('abort', abort, { once: true });
      const loadOptions = { ...rest, wasmUrl: wasmUrl === undefined ? undefined : new URL(wasmUrl, base).href, progress: Boolean(onProgress), plan: Boolean(onPlan) };
      rpc.send('load', [input, loadOptions], transfer).then(resolve, reject);
    });
  } catch (error) {
    rpc.terminate();  // an aborted load stops there: its download and the worker's memory go
    throw error;
  } finally {
    signal?.removeEventListener('abort', abort);
  }

  let disposed = false;
  const tokenizing = opened.tokenizerSource
    ? startTokenizerWorker(opened.tokenizerSource, { timeLimit, name: opened.tokenizer?.name, ...(tokenizeTimeLimitSetting !== undefined ? { setting: tokenizeTimeLimitSetting } : {}) })
    : null;
  /** @param {string} method @param {unknown[]} args */
  const call = (method, args) => (disposed
    ? Promise.reject(new MhaError('DISPOSED', 'the model was disposed'))
    : rpc.request('call', method, args));
  /**
   * A text's ids from the tokenizer's worker (within the time limit); ids as they are.
   * @param {unknown} input
   */
  const idsOf = async (input) => (typeof input === 'string' && tokenizing && !disposed ? tokenizing.encode(input) : input);
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    rpc.terminate();
    tokenizing?.dispose();
  };
  /** @type {import('./models.js').WorkerModel} */
  const model = {
    config: Object.freeze(opened.config),
    tokenizer: opened.tokenizer && Object.freeze(opened.tokenizer),
    threads: opened.threads,
    get disposed() { return disposed; },
    encode: async (text) => (typeof text === 'string' && tokenizing && !disposed ? tokenizing.encode(text) : call('encode', [text])),
    tokens: (ids) => call('tokens', [ids]),
    read: (ids) => call('read', [ids]),
    memory: () => call('memory', []),
    run: async (input, runOptions) => call('run', [await idsOf(input), runOptions]),
    headImportance: async (input) => call('headImportance', [await idsOf(input)]),
    attentionParameter: (layer, name) => call('attentionParameter', [layer, name]),
    extend: async (input, extendOptions) => call('extend', [await idsOf(input), extendOptions]),
    cachedLength: () => call('cachedLength', []),
    generate: async (n, generateOptions) => call('generate', [n, generateOptions && typeof generateOptions === 'object' && typeof generateOptions.prompt === 'string'
      ? { ...generateOptions, prompt: await idsOf(generateOptions.prompt) } : generateOptions]),
    // the logits are on this side already: no round trip
    top: async (result, k, position) => topTokens(result, k, position),
    dispose,
    [Symbol.dispose ?? Symbol.for('Symbol.dispose')]: dispose,
  };
  return Object.freeze(model);
}
