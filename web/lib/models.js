// GPT-2- and BERT-family checkpoints in Hugging Face layout (config.json, model.safetensors in
// float32, float16 or bfloat16, tokenizer.json and tokenizer_config.json), run end to end by the
// WebAssembly core (mha_models.wasm: the transformers, every attention layer the core's
// MultiHeadAttention) on ids from the model's own tokenizer (tokenizer.js: Hugging Face's
// tokenizer library). Files, downloads, shapes, defaults, errors and ownership live here; the
// core reads the config and the weights and computes.
// The weights file is never held whole: it goes to the core in chunks (from disk, a Blob's
// slices or a download's body as it arrives), each written straight into the layout the kernels
// read.
//
//   const model = await loadModel('path/to/folder');            // Node.js: a folder on disk
//   const model = await loadModel('models/gpt2/');              // a folder served over HTTP (relative to the page)
//   const model = await loadModel(fileList);                    // browser: File objects (a folder picked)
//   const model = await loadModel({ 'config.json': text, 'model.safetensors': bytes, 'tokenizer.json': text });
//   const model = await loadModel('hf:openai-community/gpt2', { revision, endpoint });  // the Hub, cached (hub.js)
//   const result = model.run('The cat sat on the');              // or run(ids)
//   result.layers[0].weights;      // { data: Float32Array, shape: [H, T, T] }
//   model.top(result, 5);          // [[id, probability], …] at the last position (LM head)
//   model.run(text, { ablate: [[0, 1]] });                       // layer 0, head 1 switched off
//   model.dispose();
//
// loadWorkerModel (models-worker.js) opens the same model in a Web Worker.
import { MhaError, statusCodes } from './errors.js';
import { topTokens } from './top-tokens.js';
import { mulberry32, pickToken, positionSeed, samplingOf } from './sampling.js';
import { heapViews, instantiateWasmModule, isNode, readTensor } from './wasm-module.js';
import { onOtherOrigin } from './start-worker.js';
import { loadTokenizer } from './tokenizer.js';
import { startTokenizerWorker, timeLimitOf, tokenizerSources } from './tokenizer-worker.js';

export { TOKENIZE_TIME_LIMIT } from './tokenizer-worker.js';

export { loadWorkerModel } from './models-worker.js';
export { DETECTORS, DETECTOR_THRESHOLD, detectionPattern, mulScore, scoreHeads, scoreText, repeatedTokens, detectHeads, detectHeadsAsync } from './detectors.js';

const CONFIG_FILE = 'config.json';
const TOKENIZER_FILE = 'tokenizer.json';
const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
const WEIGHTS_FILE = 'model.safetensors';
const SHARDED_INDEX_FILE = 'model.safetensors.index.json';
/**
 * Refused above these: a weights file over maxFileBytes; a model whose weights and one run of 128
 * tokens would take more than maxMemoryBytes (planned from config.json before the weights are read).
 */
export const MODEL_LIMITS = Object.freeze({ maxFileBytes: 2 ** 32, maxMemoryBytes: 2 ** 31 });

/** Bytes of the weights file handed to the core at a time. */
const CHUNK_BYTES = 4 << 20;

/** @typedef {import('./wasm-module.js').Outcome} Outcome */
/** @typedef {import('./wasm/mha_models.js').ModelSession} ModelSession */
/** @typedef {import('./wasm/mha_models.js').ModelsModule} ModelsCore */

/**
 * A loaded module, single-thread or pthreads, with its memory's views.
 * @typedef {{ core: ModelsCore, heap: () => import('./wasm-module.js').HeapViews, threads: number }} LoadedCore
 */
/** @type {Map<'threads' | 'single', Promise<LoadedCore>>} */
const cores = new Map();
/** @type {ReturnType<typeof statusCodes> | null} */
let codes = null;

/**
 * Whether the models' pthreads module can run here: in Node.js, and in pages (and their
 * workers) that are crossOriginIsolated, where SharedArrayBuffer exists, with these files on
 * the page's origin (the module starts its worker threads from its script's URL).
 */
export function modelThreadsAvailable() {
  if (typeof SharedArrayBuffer !== 'function' || typeof WebAssembly !== 'object') return false;
  if (isNode()) return true;
  return globalThis.crossOriginIsolated === true && typeof Worker === 'function' && !onOtherOrigin(import.meta.url);
}

/**
 * The models' WebAssembly module (one instance of each kind, shared by every model): with
 * threads 'auto' (default) the pthreads module (2 threads) where modelThreadsAvailable(), else,
 * or if it cannot start, the single-thread one; true insists on threads, false keeps to one.
 * wasmBinary / wasmUrl name the single-thread module's bytes: 'auto' then keeps to it.
 * @param {{ wasmBinary?: ArrayBuffer | Uint8Array, wasmUrl?: string | URL, threads?: 'auto' | boolean }} [options]
 * @returns {Promise<ModelsCore>}
 */
export async function loadModelsCore(options = {}) {
  return (await loadCore(options)).core;
}

/**
 * @param {{ wasmBinary?: ArrayBuffer | Uint8Array, wasmUrl?: string | URL, threads?: 'auto' | boolean }} options
 * @returns {Promise<LoadedCore>}
 */
async function loadCore(options) {
  const threads = options.threads ?? 'auto';
  if (threads !== 'auto' && threads !== true && threads !== false) {
    throw new MhaError('INVALID_ARGUMENT', `loadModel: threads must be 'auto', true or false, got ${describe(threads)}`);
  }
  if (threads === true && !modelThreadsAvailable()) {
    throw new MhaError('INVALID_ARGUMENT', globalThis.crossOriginIsolated === true
      ? `loadModel: threads: true needs the package's files on this page's origin (the pthreads module starts its worker threads from ${new URL('./wasm/threads/', import.meta.url).href}); threads: 'auto' loads the single-thread module here`
      : 'loadModel: threads: true needs SharedArrayBuffer and workers: Node.js, or a page served crossOriginIsolated ' +
        '(Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp); this one is not');
  }
  const ownBinary = options.wasmBinary !== undefined || options.wasmUrl !== undefined;
  const kind = threads === true || (threads === 'auto' && !ownBinary && modelThreadsAvailable()) ? 'threads' : 'single';
  let loading = cores.get(kind);
  if (!loading) {
    loading = (kind === 'threads' ? instantiateThreads() : instantiateWasmModule(createSingle, new URL('./wasm/mha_models.wasm', import.meta.url), options))
      .then((core) => {
        if (typeof core.ModelSession !== 'function') {
          throw new MhaError('INVALID_ARGUMENT', 'this WebAssembly build has no ModelSession: rebuild with npm run build');
        }
        codes ??= statusCodes(core);
        return { core, heap: heapViews(core), threads: typeof core.numThreads === 'function' ? core.numThreads() : 1 };
      });
    cores.set(kind, loading);
    loading.catch(() => { if (cores.get(kind) === loading) cores.delete(kind); });
  }
  try {
    return await loading;
  } catch (error) {
    // 'auto' falls back to the single-thread module when the threaded one cannot start
    if (kind === 'threads' && threads === 'auto') return loadCore({ ...options, threads: false });
    throw error;
  }
}

/** @param {import('./wasm-module.js').ModuleArgs} [args] */
async function createSingle(args) {
  const { default: createMhaModels } = await import('./wasm/mha_models.js');
  return createMhaModels(args);
}

// The pthreads module (web/lib/wasm/threads/, beside the attention core's): its worker threads
// load the classic script mha_models_threads.js; a page imports the same code as an ES module
// (.mjs), and Node.js requires the classic one with the .wasm's bytes handed over.
/** @returns {Promise<ModelsCore>} */
async function instantiateThreads() {
  /** @type {ModelsCore & { PThread?: { unusedWorkers: { unref?(): void }[], runningWorkers: { unref?(): void }[] } }} */
  let core;
  if (isNode()) {
    const moduleName = 'node:module';
    const fsName = 'node:fs/promises';
    const [{ createRequire }, { readFile }] = await Promise.all([
      import(/* @vite-ignore */ moduleName), import(/* @vite-ignore */ fsName)]);
    const createMhaModels = createRequire(import.meta.url)('./wasm/threads/mha_models_threads.js');
    // Emscripten's Node.js start-up sets globalThis.Worker to worker_threads' Worker, which is
    // not a Web Worker (loadWorkerModel would take it for one): put back what was there. Its one
    // worker thread is started by then (PTHREAD_POOL_SIZE), and the pool needs no other.
    const hadWorker = Object.prototype.hasOwnProperty.call(globalThis, 'Worker');
    const worker = globalThis.Worker;
    try {
      core = await createMhaModels({ wasmBinary: await readFile(new URL('./wasm/threads/mha_models_threads.wasm', import.meta.url)) });
    } finally {
      if (hadWorker) globalThis.Worker = worker;
      else delete (/** @type {{ Worker?: unknown }} */ (globalThis)).Worker;
    }
    // Idle worker threads must not keep the process alive.
    for (const worker of [...(core.PThread?.unusedWorkers ?? []), ...(core.PThread?.runningWorkers ?? [])]) worker.unref?.();
  } else {
    // Imported by URL, not bundled (the script also holds Node.js code that bundles cannot
    // resolve); where it is missing, 'auto' falls back to the single-thread module.
    const scriptUrl = new URL('./wasm/threads/mha_models_threads.mjs', import.meta.url).href;
    /** @type {{ default: (args: { locateFile: (name: string) => string, mainScriptUrlOrBlob: string }) => Promise<ModelsCore> }} */
    const { default: createMhaModels } = await import(/* @vite-ignore */ /* webpackIgnore: true */ scriptUrl);
    /** @type {Record<string, string>} */
    const files = {
      'mha_models_threads.wasm': new URL('./wasm/threads/mha_models_threads.wasm', import.meta.url).href,
      'mha_models_threads.worker.js': new URL('./wasm/threads/mha_models_threads.worker.js', import.meta.url).href,
    };
    core = await createMhaModels({
      locateFile: (name) => files[name] ?? new URL(name, new URL('./wasm/threads/', import.meta.url)).href,
      mainScriptUrlOrBlob: new URL('./wasm/threads/mha_models_threads.js', import.meta.url).href,
    });
  }
  return core;
}

/**
 * The result of a call, or its error thrown.
 * @template {Outcome} R
 * @param {R} status
 * @returns {R}
 */
function check(status) {
  const c = /** @type {ReturnType<typeof statusCodes>} */ (codes);
  if (status.code !== c.ok) throw new MhaError(c.name(status.code), status.message);
  return status;
}

/** @param {string} file @param {string} message */
const fileError = (file, message) => new MhaError('MODEL_FILE', `${file}: ${message}`);

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/** A number or a short string as it was given, anything else by its type. @param {unknown} value */
const valueText = (value) => (typeof value === 'number' ? String(value) : typeof value === 'string' && value.length <= 40 ? JSON.stringify(value) : describe(value));

/** @param {unknown} value */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return /** @type {object} */ (value).constructor?.name ?? 'an object';
  return typeof value;
}

/**
 * A file's content as bytes: string, ArrayBuffer, typed array, Blob/File.
 * @param {unknown} value
 * @param {string} file
 * @returns {Promise<Uint8Array>}
 */
async function bytesOf(value, file) {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value && typeof (/** @type {Blob} */ (value)).arrayBuffer === 'function') return new Uint8Array(await /** @type {Blob} */ (value).arrayBuffer());
  throw fileError(file, `expected text, bytes or a File, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} file @returns {Promise<string>} */
async function textOf(value, file) {
  if (typeof value === 'string') return value;
  const bytes = await bytesOf(value, file);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw fileError(file, 'is not UTF-8 text');
  }
}

/**
 * One file of the model: read() gives its content; `where` is how messages name it (the name,
 * a path on disk or a URL).
 * open(), where there is one, gives the content in chunks (a file on disk, a download's body).
 * @typedef {{ size: number, chunks: AsyncIterable<Uint8Array> }} ChunkSource  size 0: not known
 * planBytes: the weights' size before they are opened (the Hub's listing), for the memory plan.
 * @typedef {{ read: () => Promise<unknown>, where: string, open?: () => Promise<ChunkSource>, planBytes?: number }} ModelFileEntry
 * @typedef {{ maxFileBytes: number, maxMemoryBytes: number }} Limits
 * @typedef {{ file: string, loaded: number, total: number }} ModelProgress
 * @typedef {{ limits: Limits, signal?: AbortSignal, onProgress?: (progress: ModelProgress) => void }} ReadOptions
 */

/** A scheme of two letters or more: `C:\models` is a path, `https://…` and `file:///…` are URLs. */
const URL_PATTERN = /^[a-z][a-z0-9+.-]+:/i;

/**
 * The URL a string or URL names: a URL, or a string with a scheme; in a page, any string
 * (relative to the page). null: a path on disk (Node.js).
 * @param {string | URL} location
 * @returns {URL | null}
 */
function urlOf(location) {
  if (location instanceof URL) return location;
  if (location === '') throw new MhaError('INVALID_ARGUMENT', 'loadModel: expected a folder path or URL, got an empty string');
  if (!URL_PATTERN.test(location) && isNode()) return null;
  try {
    return new URL(location, globalThis.location?.href);
  } catch {
    throw new MhaError('INVALID_ARGUMENT', `loadModel: ${JSON.stringify(location)} is not a URL`);
  }
}

/**
 * A folder's URL ending in '/', from its own URL (with or without the '/') or its config.json's.
 * The query and fragment are dropped: each file's URL is the folder's plus its name.
 * @param {URL} url
 */
function folderOf(url) {
  const folder = new URL(url.href);
  folder.search = '';
  folder.hash = '';
  if (folder.pathname.endsWith(`/${CONFIG_FILE}`)) folder.pathname = folder.pathname.slice(0, -CONFIG_FILE.length);
  else if (!folder.pathname.endsWith('/')) folder.pathname += '/';
  return folder;
}

/**
 * The model's files by name, from a folder (a path or file: URL in Node.js, an http(s) URL
 * anywhere), a FileList or array of Files (a folder picked or dropped: names are the last part
 * of each path), a Map or a plain object. The weights are model.safetensors, or the only
 * *.safetensors there is.
 * @param {unknown} files
 * @param {ReadOptions} options
 * @returns {Promise<Map<string, ModelFileEntry>>}
 */
async function collectFiles(files, options) {
  if (typeof files === 'string' || files instanceof URL) {
    const url = urlOf(files);
    if (url && (url.protocol === 'http:' || url.protocol === 'https:')) return downloadFolder(folderOf(url), options);
    if (url && url.protocol !== 'file:') {
      throw new MhaError('INVALID_ARGUMENT', `loadModel: ${url.href} has the scheme ${url.protocol}; expected http: or https:, or in Node.js a file: URL or a folder path`);
    }
    if (!isNode()) throw new MhaError('INVALID_ARGUMENT', `loadModel: ${url?.href} is on disk, which a page cannot read; serve the folder over HTTP, or pass the Files`);
    return readFolder(url ?? /** @type {string} */ (files));
  }
  const entries = files instanceof Map ? [...files.entries()]
    : files !== null && typeof files === 'object' && Symbol.iterator in files
      ? Array.from(/** @type {Iterable<unknown>} */ (files), (f) => [String(/** @type {{ name?: unknown }} */ (f)?.name ?? ''), f])
      : files !== null && typeof files === 'object' ? Object.entries(files) : null;
  if (!entries) {
    throw new MhaError('INVALID_ARGUMENT', `loadModel: expected a folder path or URL, Files, a Map or an object of file name: content, got ${describe(files)}`);
  }
  /** @type {Map<string, ModelFileEntry>} */
  const byName = new Map();
  for (const [name, value] of entries) {
    const base = String(name).split('/').pop() ?? '';
    byName.set(base, { read: async () => value, where: base });
  }
  return byName;
}

/**
 * A folder on disk (Node.js): its config.json, tokenizer.json and *.safetensors files.
 * @param {URL | string} location  a file: URL or a path, of the folder or its config.json
 * @returns {Promise<Map<string, ModelFileEntry>>}
 */
async function readFolder(location) {
  const names = ['node:fs/promises', 'node:path', 'node:url'];
  // the parts of Node.js read here (the page's types have no Node.js)
  const [fs, path, url] = /** @type {[
   *   { readdir(dir: string): Promise<string[]>, readFile(file: string): Promise<Uint8Array>, open(file: string, flags: string): Promise<FileHandle> },
   *   { join(...parts: string[]): string, basename(p: string): string, dirname(p: string): string },
   *   { fileURLToPath(url: URL): string },
   * ]} */ (await Promise.all(names.map((n) => import(/* @vite-ignore */ n))));
  let dir = location instanceof URL ? url.fileURLToPath(location) : location;
  if (path.basename(dir) === CONFIG_FILE) dir = path.dirname(dir);
  let found;
  try {
    found = await fs.readdir(dir);
  } catch {
    throw fileError(dir, 'is not a folder that can be read');
  }
  /** @type {Map<string, ModelFileEntry>} */
  const byName = new Map();
  for (const name of found) {
    if (name === CONFIG_FILE || name === TOKENIZER_FILE || name === TOKENIZER_CONFIG_FILE || name.endsWith('.safetensors')) {
      const where = path.join(dir, name);
      byName.set(name, { read: () => fs.readFile(where), where, open: () => fileChunks(fs, where) });
    }
  }
  return byName;
}

/**
 * The parts of a Node.js FileHandle read here.
 * @typedef {{ stat(): Promise<{ size: number }>, read(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>, close(): Promise<void> }} FileHandle
 */

/**
 * A file on disk in chunks of CHUNK_BYTES, one buffer reused (each chunk is copied out before
 * the next is read); the file is closed at the end or when the reader stops early.
 * @param {{ open(file: string, flags: string): Promise<FileHandle> }} fs
 * @param {string} where
 * @returns {Promise<ChunkSource>}
 */
async function fileChunks(fs, where) {
  const handle = await fs.open(where, 'r');
  const { size } = await handle.stat();
  async function* chunks() {
    try {
      const buffer = new Uint8Array(Math.min(CHUNK_BYTES, Math.max(size, 1)));
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  }
  return { size, chunks: chunks() };
}

/**
 * A file's content given as a value (bytes, a Blob or File, text) in chunks: a Blob is read
 * slice by slice, bytes are handed on in place.
 * @param {unknown} value
 * @param {string} file
 * @returns {Promise<ChunkSource>}
 */
async function valueChunks(value, file) {
  if (value && typeof (/** @type {Blob} */ (value)).slice === 'function' && typeof (/** @type {Blob} */ (value)).arrayBuffer === 'function' && !ArrayBuffer.isView(value)) {
    const blob = /** @type {Blob} */ (value);
    async function* slices() {
      for (let at = 0; at < blob.size; at += CHUNK_BYTES) yield new Uint8Array(await blob.slice(at, at + CHUNK_BYTES).arrayBuffer());
    }
    return { size: blob.size, chunks: slices() };
  }
  const bytes = await bytesOf(value, file);
  async function* whole() {
    yield bytes;
  }
  return { size: bytes.length, chunks: whole() };
}

/**
 * A folder over HTTP: config.json (required; checked to be JSON before the weights are
 * fetched), model.safetensors (required; its body read as the core takes it) and tokenizer.json
 * (optional: a 404 means none; fetched after the weights).
 * tokenizer_config.json is not asked for: a page reports every 404 as an error in its console,
 * and the ids of GPT-2's, Llama 2's and Llama 3's tokenizers are the same without it
 * (tests/js/tokenizer.test.js); it is read where the files are given (a folder, Files).
 * @param {URL} folder  ends with '/'
 * @param {ReadOptions} options
 * @returns {Promise<Map<string, ModelFileEntry>>}
 */
async function downloadFolder(folder, options) {
  if (typeof globalThis.fetch !== 'function') throw new MhaError('INVALID_ARGUMENT', `loadModel: no fetch() here to load ${folder.href}`);
  /** @type {Map<string, ModelFileEntry>} */
  const byName = new Map();
  const configUrl = new URL(CONFIG_FILE, folder);
  const config = /** @type {Uint8Array} */ (await download(configUrl, CONFIG_FILE, options, { optional: false }));
  const configText = await textOf(config, configUrl.href);
  try {
    JSON.parse(configText);
  } catch (error) {
    throw new MhaError('INVALID_CONFIG', `${configUrl.href}: not valid JSON (${messageOf(error)})`);
  }
  byName.set(CONFIG_FILE, { read: async () => configText, where: configUrl.href });

  // the weights: requested now (a 404 is answered here), their body read as the core takes it
  const weightsUrl = new URL(WEIGHTS_FILE, folder);
  const weights = await request(weightsUrl, options, { optional: true });
  if (!weights) {
    const indexUrl = new URL(SHARDED_INDEX_FILE, folder);
    const index = await download(indexUrl, SHARDED_INDEX_FILE, { ...options, onProgress: undefined }, { optional: true });
    if (index) {
      throw fileError(weightsUrl.href, `not found (HTTP 404), and ${indexUrl.href} lists the weights in several files: sharded checkpoints are not supported; save the model as one file (save_pretrained with a max_shard_size above its size)`);
    }
    throw fileError(weightsUrl.href, 'not found (HTTP 404): a Hugging Face model folder has model.safetensors beside config.json (a PyTorch .bin is not read)');
  }
  let opened = false;
  const open = async () => {
    if (opened) throw fileError(weightsUrl.href, 'its body was read already');
    opened = true;
    return { size: weights.total ?? 0, chunks: bodyChunks(weightsUrl, WEIGHTS_FILE, weights, options) };
  };
  byName.set(WEIGHTS_FILE, {
    read: async () => {
      const chunks = [];
      for await (const chunk of (await open()).chunks) chunks.push(chunk.slice());
      return new Blob(chunks);
    },
    where: weightsUrl.href,
    open,
  });

  // fetched when read, after the weights (null: the server has none)
  const tokenizerUrl = new URL(TOKENIZER_FILE, folder);
  byName.set(TOKENIZER_FILE, { read: () => download(tokenizerUrl, TOKENIZER_FILE, options, { optional: true }), where: tokenizerUrl.href });
  return byName;
}

/** fetch() causes that mean the connection went away under the request, not that it failed. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * fetch() failed: the signal's reason when it was aborted, else an error naming the URL and
 * the cause (fetch() itself says only "fetch failed"; the reason, refused, reset, DNS or TLS,
 * is its cause).
 * @param {unknown} error @param {URL} url @param {AbortSignal | undefined} signal @param {string} what
 */
function fetchFailure(error, url, signal, what) {
  if (signal?.aborted) return signal.reason;
  const reason = /** @type {{ cause?: { code?: string, message?: string } } | null} */ (error)?.cause;
  const cause = reason ? ` (${[reason.code, reason.message].filter(Boolean).join(': ')})` : '';
  return fileError(url.href, `${what}: ${messageOf(error)}${cause}`);
}

/**
 * One file over HTTP, its body not read yet: fetched, and checked (any HTTP error other than an
 * optional file's 404 is an error naming the URL and the status; an HTML page is refused; the
 * size limit is checked on the Content-Length before the body is read).
 * @param {URL} url
 * @param {ReadOptions} options
 * @param {{ optional: boolean }} how
 * @returns {Promise<{ response: Response, total: number | null } | null>}  null: an optional file the server has not
 */
async function request(url, { limits, signal }, { optional }) {
  signal?.throwIfAborted();
  /** @type {Response} */
  let response;
  try {
    response = await fetch(url.href, { signal }).catch((error) => {
      // A server may close an idle kept-alive connection just as the next request is written on
      // it; Node's fetch then fails with a reset that browsers answer by sending the request
      // again. A GET is safe to send twice; only a reset or a closed socket is retried, once.
      if (signal?.aborted || !RESET_CODES.has(error?.cause?.code)) throw error;
      return fetch(url.href, { signal });
    });
  } catch (error) {
    throw fetchFailure(error, url, signal, 'could not be fetched');
  }
  const drop = () => response.body?.cancel().catch(() => {});
  if (optional && response.status === 404) {
    drop();
    return null;
  }
  if (!response.ok) {
    drop();
    throw fileError(url.href, `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
  }
  if (/^text\/html\b/i.test(response.headers.get('content-type') ?? '')) {
    drop();
    throw fileError(url.href, 'the server answered with an HTML page, not the file (does it answer every path with its index page?)');
  }
  // a compressed response's Content-Length counts the compressed bytes, not the file's
  const encoded = !/^(identity)?$/i.test(response.headers.get('content-encoding') ?? '');
  const length = Number(response.headers.get('content-length') ?? NaN);
  const total = !encoded && Number.isSafeInteger(length) && length >= 0 ? length : null;
  if (total !== null && total > limits.maxFileBytes) {
    drop();
    throw tooLarge(url, total, ' (its Content-Length)', limits.maxFileBytes);
  }
  return { response, total };
}

/** @param {URL} url @param {number} bytes @param {string} how @param {number} maxFileBytes */
const tooLarge = (url, bytes, how, maxFileBytes) => new MhaError('TOO_LARGE',
  `${url.href}: ${bytes} bytes${how}, more than the ${maxFileBytes} loadModel takes (option maxFileBytes)`);

/**
 * A response's body as it arrives, with progress ({ file, loaded, total }: total the
 * Content-Length, 0 while unknown, as in a ProgressEvent; the last event has loaded === total)
 * and the size limit checked on the bytes. The download stops when the reader does.
 * @param {URL} url
 * @param {string} file  the name progress events give
 * @param {{ response: Response, total: number | null }} opened
 * @param {ReadOptions} options
 * @returns {AsyncGenerator<Uint8Array>}
 */
async function* bodyChunks(url, file, { response, total }, { limits, signal, onProgress }) {
  const { maxFileBytes } = limits;
  let loaded = 0;
  onProgress?.({ file, loaded, total: total ?? 0 });
  /** @param {Uint8Array} chunk */
  const count = (chunk) => {
    if (loaded + chunk.byteLength > maxFileBytes) throw tooLarge(url, loaded + chunk.byteLength, ' at least (no Content-Length)', maxFileBytes);
    loaded += chunk.byteLength;
  };
  if (response.body && typeof response.body.getReader === 'function') {
    const reader = response.body.getReader();
    let done = false;
    try {
      for (;;) {
        /** @type {ReadableStreamReadResult<Uint8Array>} */
        let part;
        try {
          part = await reader.read();
        } catch (error) {
          throw fetchFailure(error, url, signal, `the download broke off after ${loaded} bytes`);
        }
        if (part.done) break;
        count(part.value);
        if (total === null || loaded < total) onProgress?.({ file, loaded, total: total ?? 0 });
        yield part.value;
      }
      done = true;
    } finally {
      if (!done) reader.cancel().catch(() => {});
    }
  } else {
    /** @type {Uint8Array} */
    let bytes;
    try {
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      throw fetchFailure(error, url, signal, 'the download broke off');
    }
    count(bytes);
    yield bytes;
  }
  onProgress?.({ file, loaded, total: loaded });
}

/**
 * Bytes of one file over HTTP (request, then bodyChunks gathered).
 * @param {URL} url
 * @param {string} file  the name progress events give
 * @param {ReadOptions} options
 * @param {{ optional: boolean }} how
 * @returns {Promise<Uint8Array | null>}  null: an optional file the server has not
 */
async function download(url, file, options, how) {
  const opened = await request(url, options, how);
  if (!opened) return null;
  let bytes = new Uint8Array(opened.total ?? 0);
  let loaded = 0;
  for await (const chunk of bodyChunks(url, file, opened, options)) {
    if (loaded + chunk.byteLength > bytes.byteLength) {
      const grown = new Uint8Array(Math.max(2 * bytes.byteLength, loaded + chunk.byteLength, 65536));
      grown.set(bytes.subarray(0, loaded));
      bytes = grown;
    }
    bytes.set(chunk, loaded);
    loaded += chunk.byteLength;
  }
  return loaded === bytes.byteLength ? bytes : bytes.slice(0, loaded);
}

/**
 * @param {unknown} options
 * @returns {asserts options is import('./models.js').LoadModelOptions}
 */
function checkOptions(options) {
  if (options === null || typeof options !== 'object') throw new MhaError('INVALID_ARGUMENT', `loadModel: expected an options object, got ${describe(options)}`);
  const { onProgress, onPlan, signal } = /** @type {{ onProgress?: unknown, onPlan?: unknown, signal?: unknown }} */ (options);
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', `loadModel: onProgress must be a function, got ${describe(onProgress)}`);
  }
  if (onPlan !== undefined && typeof onPlan !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', `loadModel: onPlan must be a function, got ${describe(onPlan)}`);
  }
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || typeof (/** @type {AbortSignal} */ (signal)).throwIfAborted !== 'function')) {
    throw new MhaError('INVALID_ARGUMENT', `loadModel: signal must be an AbortSignal, got ${describe(signal)}`);
  }
}

/**
 * Opens a checkpoint: config.json and the weights (required), tokenizer.json (optional: without
 * it, run() takes ids only) with tokenizer_config.json where there is one.
 * @param {string | URL | Iterable<File> | Map<string, unknown> | Record<string, unknown>} files
 * @param {import('./models.js').LoadModelOptions} [options]
 * @returns {Promise<Model>}
 */
export async function loadModel(files, options = {}) {
  checkOptions(options);
  const { signal, onProgress } = options;
  const limits = {
    maxFileBytes: options.maxFileBytes ?? MODEL_LIMITS.maxFileBytes,
    maxMemoryBytes: options.maxMemoryBytes ?? MODEL_LIMITS.maxMemoryBytes,
  };
  signal?.throwIfAborted();
  const { core, heap, threads } = await loadCore(options);
  /** @type {import('./hub.js').HubPlan | null} */
  let plan = null;
  /** @type {Map<string, ModelFileEntry>} */
  let byName;
  if (typeof files === 'string' && files.startsWith('hf:')) {
    const { hubFiles } = await import('./hub.js');
    const { revision, endpoint, cache, cacheDir } = options;
    ({ files: byName, plan } = await hubFiles(files, { revision, endpoint, cache, cacheDir, signal, onProgress, maxFileBytes: limits.maxFileBytes }));
  } else {
    byName = await collectFiles(files, { limits, signal, onProgress });
  }
  signal?.throwIfAborted();
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
  const weights = /** @type {ModelFileEntry} */ (byName.get(weightsName));
  const session = new core.ModelSession();
  /** @type {import('./tokenizer.js').ModelTokenizer | null} */
  let tokenizer = null;
  try {
    // config.json first: the core plans the memory from it and refuses, with the numbers, a
    // model that will not fit, before any of the weights is read
    const configText = await textOf(await config.read(), config.where);
    if (weights.planBytes !== undefined) {
      // the sizes are known before any weight is fetched (the Hub's listing): the plan first
      check(session.begin(configText, config.where, weights.where, weights.planBytes, limits.maxFileBytes, limits.maxMemoryBytes));
      if (plan) options.onPlan?.({ ...plan, fits: true });
    }
    const source = weights.open ? await weights.open() : await valueChunks(await weights.read(), weights.where);
    if (source.size > limits.maxFileBytes) {
      throw new MhaError('TOO_LARGE', `${weights.where}: ${source.size} bytes, more than the ${limits.maxFileBytes} loadModel takes (option maxFileBytes)`);
    }
    check(session.begin(configText, config.where, weights.where, source.size, limits.maxFileBytes, limits.maxMemoryBytes));
    for await (const chunk of source.chunks) {
      signal?.throwIfAborted();
      for (let at = 0; at < chunk.byteLength; at += CHUNK_BYTES) {
        const part = chunk.subarray(at, at + CHUNK_BYTES);
        const buffer = check(session.chunkBuffer(part.byteLength));  // may grow the memory: the view after it
        heap().u8.set(part, buffer.data);
        check(session.feed(part.byteLength));
      }
    }
    check(session.finish());
    const tokenizerFile = byName.get(TOKENIZER_FILE);
    const tokenizerConfig = byName.get(TOKENIZER_CONFIG_FILE);
    const tokenizerText = tokenizerFile ? await tokenizerFile.read() : null;  // null: none over HTTP (a 404)
    if (tokenizerFile && tokenizerText !== null) {
      tokenizer = await loadTokenizer(await textOf(tokenizerText, tokenizerFile.where),
        tokenizerConfig ? await textOf(await tokenizerConfig.read(), tokenizerConfig.where) : null,
        { tokenizerFile: tokenizerFile.where, configFile: tokenizerConfig?.where });
    }
  } catch (error) {
    session.dispose();
    session.delete();
    throw error;
  }
  return new Model(session, tokenizer, heap, threads);
}

/**
 * What opening a Hub repository will fetch (hub.js): its commit, each file with its size and
 * whether it is cached. Asks the models API unless the revision is cached.
 * @param {string} id  `hf:owner/name` or `owner/name`
 * @param {import('./models.js').HubOptions} [options]
 * @returns {Promise<import('./models.js').HubPlan>}
 */
export async function hubModelInfo(id, options) {
  return (await import('./hub.js')).hubModelInfo(id, options);
}

/**
 * The Hub's models kept in this browser's Cache Storage (or Node.js's cache folder).
 * @param {{ cacheDir?: string }} [options]
 * @returns {Promise<import('./models.js').CachedModel[]>}
 */
export async function listCachedModels(options) {
  return (await import('./hub.js')).listCachedModels(options);
}

/**
 * Deletes a repository's cached files; resolves to the bytes freed.
 * @param {string} id
 * @param {{ cacheDir?: string }} [options]
 * @returns {Promise<number>}
 */
export async function deleteCachedModel(id, options) {
  return (await import('./hub.js')).deleteCachedModel(id, options);
}

export class Model {
  /** @type {ModelSession | null} */
  #session;
  /** @type {import('./tokenizer.js').ModelTokenizer | null} */
  #tokenizer;
  /** @type {() => import('./wasm-module.js').HeapViews} */
  #heap;
  /** The logits of the next token after the cached text (vocab), from the last extend(). */
  /** @type {Float32Array | null} */
  #nextLogits = null;

  /**
   * @param {ModelSession} session  loaded (loadModel makes it)
   * @param {import('./tokenizer.js').ModelTokenizer | null} tokenizer  tokenizer.json's, or none
   * @param {() => import('./wasm-module.js').HeapViews} heap  the session's module's memory
   * @param {number} threads  threads its module computes with
   */
  constructor(session, tokenizer, heap, threads) {
    this.#session = session;
    this.#tokenizer = tokenizer;
    this.#heap = heap;
    /** Threads the model computes with: 2 on the pthreads module, 1 on the single-thread one. */
    this.threads = threads;
    /** config.json as the core read it, normalised: name, architecture, causal, task, sizes, activation, head. */
    this.config = Object.freeze(session.config());
    /** The tokenizer's kind, name, vocabulary size and mask token; null without tokenizer.json. */
    this.tokenizer = tokenizer ? tokenizer.info : null;
    if (tokenizer?.source) tokenizerSources.set(this, tokenizer.source);
  }

  /**
   * The model's tokenizer in a worker of its own (a worker_threads thread in Node.js), where a
   * text that takes longer than timeLimit ms (default 5000) is stopped: encode() then rejects
   * with TIMEOUT, the worker is ended and started again, and this model is untouched.
   * encode() and run(text) on the model itself tokenize on the calling thread, without a limit.
   * @param {{ timeLimit?: number, setting?: string }} [options]  setting: how the message names what sets the limit
   * @returns {import('./models.js').TokenizerWorker}
   */
  tokenizerWorker(options = {}) {
    const tokenizer = this.#tokenizerOf('tokenizerWorker');
    if (options === null || typeof options !== 'object') throw new MhaError('INVALID_ARGUMENT', `tokenizerWorker: expected an options object, got ${describe(options)}`);
    const source = /** @type {import('./tokenizer-worker.js').TokenizerSource} */ (tokenizerSources.get(this));
    return startTokenizerWorker(source, {
      timeLimit: timeLimitOf(options.timeLimit, 'tokenizerWorker'), name: tokenizer.info.name, setting: options.setting ?? 'the option timeLimit',
    });
  }

  /**
   * The tokenizer, or an error saying there is none.
   * @param {string} what  the call that needs it
   * @param {string} [instead]  what the caller can do without it
   */
  #tokenizerOf(what, instead = '') {
    this.#live();
    if (!this.#tokenizer) throw new MhaError('INVALID_ARGUMENT', `${what} needs tokenizer.json, which this model has not${instead}`);
    return this.#tokenizer;
  }

  /**
   * A text (encoded) or ids, into the session's ids.
   * @param {unknown} input
   * @returns {number[]}
   */
  #ids(input) {
    const s = this.#live();
    const numbers = typeof input === 'string' ? this.#tokenizerOf('a text', '; pass ids').encode(input) : this.#checkedIds(input);
    const buffer = check(s.idsBuffer(numbers.length));
    this.#heap().i32.set(numbers, buffer.data / 4);  // a byte offset may pass 2^31: no signed shift
    return numbers;
  }

  /**
   * Ids given by the caller, checked.
   * @param {unknown} input
   * @returns {number[]}
   */
  #checkedIds(input) {
    if (!Array.isArray(input) && !(input instanceof Int32Array)) {
      throw new MhaError('INVALID_ARGUMENT', `expected a text or an array of ids, got ${describe(input)}`);
    }
    const ids = Array.from(/** @type {ArrayLike<unknown>} */ (input));
    for (const [i, id] of ids.entries()) {
      if (!Number.isInteger(id)) throw new MhaError('INVALID_ARGUMENT', `id ${i} is ${id}, not an integer`);
    }
    return /** @type {number[]} */ (ids);
  }

  #live() {
    if (!this.#session) throw new MhaError('DISPOSED', 'the model was disposed');
    return this.#session;
  }

  /** Whether dispose() has been called. */
  get disposed() { return this.#session === null; }

  /**
   * Memory: the models' WebAssembly module's (it only grows; every model of the page shares it)
   * and this model's weights in it, in bytes.
   * @returns {import('./models.js').ModelMemory}
   */
  memory() {
    const s = this.#live();
    return { moduleBytes: this.#heap().u8.buffer.byteLength, weightBytes: s.weightBytes(), resultBytes: s.resultBytes() };
  }

  /**
   * The ids of a text, with the post-processor's special tokens.
   * @param {string} text
   * @returns {number[]}
   */
  encode(text) {
    return this.#tokenizerOf('encode').encode(text);
  }

  /**
   * The vocabulary's strings for ids (byte-level BPE pieces as the file spells them).
   * @param {number[] | Int32Array} ids
   * @returns {string[]}
   */
  tokens(ids) {
    const tokenizer = this.#tokenizerOf('tokens');
    if (!Array.isArray(ids) && !(ids instanceof Int32Array)) throw new MhaError('INVALID_ARGUMENT', `tokens: expected an array of ids, got ${describe(ids)}`);
    return Array.from(ids, (id) => tokenizer.token(id));
  }

  /**
   * How the pieces of ids read (tokenizer.js): what each shows, the word of each, each marked
   * in SentencePiece's convention, which are special tokens.
   * @param {number[] | Int32Array} ids
   * @returns {import('./models.js').TokenReading}
   */
  read(ids) {
    const tokenizer = this.#tokenizerOf('read');
    if (!Array.isArray(ids) && !(ids instanceof Int32Array)) throw new MhaError('INVALID_ARGUMENT', `read: expected an array of ids, got ${describe(ids)}`);
    return tokenizer.read(ids);
  }

  /**
   * Runs a text (encoded first) or ids. Returns ids, per layer the weights (H, T, T) and the
   * residual stream (T, E), the last hidden state, logits (T, vocab) with an LM head, pooled (E)
   * with a BERT pooler. weightsLayer: the one layer whose weights (and head outputs) are kept
   * (the others' weights are null), or 'none'; pooledSize S: every layer's weights max-pooled to
   * (H, S, S) as well.
   * @param {string | number[] | Int32Array} input
   * @param {import('./models.js').ModelRunOptions} [options]
   * @returns {import('./models.js').ModelRunResult<import('./models.js').ModelTensor | null>}
   */
  run(input, options = {}) {
    const s = this.#live();
    const L = this.config.numLayers;
    const ids = this.#ids(input);
    const ablate = options.ablate ?? [];
    if (!Array.isArray(ablate) || ablate.some((p) => !Array.isArray(p) || p.length !== 2 || !p.every(Number.isInteger))) {
      throw new MhaError('INVALID_ARGUMENT', 'ablate: expected [[layer, head], …] of integers');
    }
    const headOutputs = options.headOutputs === true;
    const { weightsLayer = 'all', pooledSize = 0 } = options;
    // the core's codes: -1 every layer, -2 none; it refuses a layer out of range with the numbers
    const kept = weightsLayer === 'all' ? -1 : weightsLayer === 'none' ? -2 : weightsLayer;
    if (!(Number.isInteger(kept) && (kept >= 0 || typeof weightsLayer === 'string'))) {
      throw new MhaError('INVALID_ARGUMENT', `weightsLayer: expected 'all', 'none' or a layer from 0 to ${L - 1}, got ${valueText(weightsLayer)}`);
    }
    if (!Number.isInteger(pooledSize) || pooledSize < 0) throw new MhaError('INVALID_ARGUMENT', `pooledSize: expected 0 (none) or a whole number >= 1, got ${valueText(pooledSize)}`);
    check(s.run(ablate.flat(), headOutputs, kept, pooledSize));
    const layers = [];
    for (let l = 0; l < L; ++l) {
      /** @type {import('./models.js').ModelRunResult<import('./models.js').ModelTensor | null>['layers'][number]} */
      const layer = { weights: kept === -1 || kept === l ? readTensor(this.#heap, check(s.layerWeights(l))) : null, residual: readTensor(this.#heap, check(s.layerResidual(l))) };
      if (pooledSize) layer.pooled = readTensor(this.#heap, check(s.layerPooled(l)));
      layers.push(headOutputs && layer.weights
        ? { ...layer, headOutputs: readTensor(this.#heap, check(s.layerHeadOutputs(l))), concat: readTensor(this.#heap, check(s.layerConcat(l))), attentionOutput: readTensor(this.#heap, check(s.layerAttentionOutput(l))) }
        : layer);
    }
    return {
      ids,
      layers,
      hidden: readTensor(this.#heap, check(s.hidden())),
      logits: this.config.lmHead ? readTensor(this.#heap, check(s.logits())) : null,
      pooled: this.config.pooler ? readTensor(this.#heap, check(s.pooled())) : null,
    };
  }

  /**
   * Head importance on the model's own task (GPT-2's next token): for each layer and head, the
   * mean drop in log p(actual next token) over the text when that head is switched off.
   * @param {string | number[] | Int32Array} input  at least two tokens
   * @returns {import('./models.js').HeadImportance}  data (layers, heads)
   */
  headImportance(input) {
    const s = this.#live();
    const ids = this.#ids(input);
    const importance = readTensor(this.#heap, check(s.headImportance()));
    return { ids, data: importance.data, shape: /** @type {[number, number]} */ (importance.shape) };
  }

  /**
   * Writing on (a causal model): appends a text (encoded) or ids to the text the model holds in
   * its key/value cache, computing the new positions only. Returns the new ids, the position of
   * the first, per layer the new rows of attention (H, R, S) over all S positions so far, and
   * the new positions' logits (R, vocab) with an LM head. from: after the text's first `from`
   * positions (0: a new text), the rest dropped.
   * @param {string | number[] | Int32Array} input
   * @param {import('./models.js').ExtendOptions} [options]
   * @returns {import('./models.js').ModelExtendResult}
   */
  extend(input, options = {}) {
    const s = this.#live();
    if (options === null || typeof options !== 'object') throw new MhaError('INVALID_ARGUMENT', `extend: expected an options object, got ${describe(options)}`);
    const { from } = options;
    if (from !== undefined && !(Number.isInteger(from) && from >= 0)) throw new MhaError('INVALID_ARGUMENT', `extend: from must be a whole number >= 0, got ${describe(from)} ${String(from)}`);
    const ids = this.#ids(input);
    const first = from ?? s.cachedLength();
    check(s.extend(from ?? -1));
    const layers = [];
    for (let l = 0; l < this.config.numLayers; ++l) layers.push({ weights: readTensor(this.#heap, check(s.extendWeights(l))) });
    const logits = this.config.lmHead ? readTensor(this.#heap, check(s.extendLogits())) : null;
    const V = this.config.vocabSize;
    this.#nextLogits = logits ? logits.data.slice((ids.length - 1) * V, ids.length * V) : null;
    return { ids, first, layers, logits };
  }

  /** The positions the key/value cache holds: the text extend() and generate() have written. */
  cachedLength() { return this.#live().cachedLength(); }

  /**
   * Writes n tokens after the text in the cache (or after options.prompt, which starts it
   * again), one extend() a step: each the most probable token (greedy, the default), or drawn
   * with a temperature and topK (sampling.js), the token at position p from
   * mulberry32(positionSeed(seed, p)): a seed gives the same text, written at once or step by step.
   * Each step gives its id, the model's probability of it, its position and its attention rows.
   * @param {number} n
   * @param {import('./models.js').GenerateOptions} [options]
   * @returns {import('./models.js').GenerateResult}
   */
  generate(n, options = {}) {
    this.#live();
    if (!Number.isInteger(n) || n < 1) throw new MhaError('INVALID_ARGUMENT', `generate: n must be a whole number >= 1, got ${describe(n)}${typeof n === 'number' ? ` ${n}` : ''}`);
    const sampling = samplingOf(options, 'generate');
    if (this.config.task !== 'next-token') {
      throw new MhaError('INVALID_ARGUMENT', `generate needs a causal model with a next-token head; this is a ${this.config.name} ${this.config.architecture}`);
    }
    const { prompt } = /** @type {{ prompt?: string | number[] | Int32Array }} */ (options);
    const promptIds = prompt === undefined ? null : typeof prompt === 'string' ? this.encode(prompt) : this.#checkedIds(prompt);
    const start = promptIds ? promptIds.length : this.cachedLength();
    if (start + n > this.config.maxPositions) {
      throw new MhaError('TOO_LARGE', `generate: ${n} tokens after ${start} make ${start + n} positions; the model takes at most ${this.config.maxPositions}`);
    }
    if (promptIds) this.extend(promptIds, { from: 0 });
    if (this.cachedLength() === 0 || !this.#nextLogits) throw new MhaError('INVALID_ARGUMENT', 'generate: no text to write on: pass a prompt, or extend() first');
    const steps = [];
    for (let i = 0; i < n; ++i) {
      const random = mulberry32(positionSeed(sampling.seed, start + i));
      const { id, probability } = pickToken(/** @type {Float32Array} */ (this.#nextLogits), sampling, random);
      const step = this.extend([id]);
      steps.push({ id, probability, position: step.first, layers: step.layers });
    }
    return { ids: steps.map((step) => step.id), first: start, steps };
  }

  /**
   * The k most probable tokens at a position (softmax of the logits): [[id, probability], …].
   * @param {Pick<import('./models.js').ModelRunResult, 'logits'>} result
   * @param {number} [k]
   * @param {number} [position] the last one by default
   * @returns {Array<[number, number]>}
   */
  top(result, k = 5, position = undefined) {
    return topTokens(result, k, position);
  }

  /**
   * A parameter of a layer's attention in nn.MultiheadAttention's names and layout
   * ('out_proj.weight' (E, E), 'in_proj_weight' (3E, E), their biases).
   * @param {number} layer
   * @param {string} name
   * @returns {import('./models.js').ModelTensor}
   */
  attentionParameter(layer, name) {
    const s = this.#live();
    if (typeof name !== 'string') throw new MhaError('INVALID_ARGUMENT', `attentionParameter: expected a parameter name, got ${typeof name}`);
    return readTensor(this.#heap, check(s.attentionParameter(layer, name)));
  }

  dispose() {
    if (this.#session) {
      this.#session.dispose();
      this.#session.delete();
      this.#session = null;
      this.#tokenizer = null;
      this.#nextLogits = null;
    }
  }

  [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() {
    this.dispose();
  }
}
