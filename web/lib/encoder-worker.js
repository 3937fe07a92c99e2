// The pretrained encoder off the main thread, page side: createWorkerEncoder() starts a module
// worker (encoder-worker-entry.js), which loads the encoder there; the object it resolves to has
// the encoder's methods, each returning a promise. Calls are answered in order; result tensors
// come back as transferred buffers (no copy) (rpc.js).
import { MhaError } from './errors.js';
import { connectWorker } from './rpc.js';
import { onOtherOrigin, startModuleWorker, workerScriptName } from './start-worker.js';

/** The worker's script beside this module (a name, not a literal URL: bundlers leave it alone). */
const WORKER_ENTRY = './encoder-worker-entry.js';

/**
 * URLs the worker should see as the page does (a worker resolves relative URLs against itself).
 * @template {string | URL | undefined} U
 * @param {U} url
 * @returns {U extends undefined ? undefined : string}
 */
function absolute(url) {
  return /** @type {U extends undefined ? undefined : string} */ (url === undefined ? undefined : new URL(url, globalThis.location?.href).href);
}

/**
 * @param {import('./encoder.js').WorkerEncoderOptions} [options]
 * @returns {Promise<import('./encoder.js').WorkerEncoder>}
 */
export async function createWorkerEncoder(options = {}) {
  if (typeof Worker !== 'function') {
    throw new MhaError('WORKER_ERROR', 'createWorkerEncoder needs Web Workers (a browser); in Node.js use loadEncoder()');
  }
  if (options === null || typeof options !== 'object') throw new MhaError('INVALID_ARGUMENT', 'createWorkerEncoder: expected an options object');
  const { workerUrl, onProgress, modelUrl, wasmUrl, ...rest } = options;
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new MhaError('INVALID_ARGUMENT', 'createWorkerEncoder: onProgress must be a function');
  }
  // Written out as `new Worker(new URL('./…', import.meta.url), …)` so that bundlers bundle it;
  // from another origin than the page (a CDN), through a trampoline (start-worker.js).
  const entry = workerUrl ? absolute(workerUrl) : new URL(WORKER_ENTRY, import.meta.url);
  const worker = workerUrl || onOtherOrigin(import.meta.url)
    ? startModuleWorker(entry, { name: 'mha-encoder' })
    : new Worker(new URL('./encoder-worker-entry.js', import.meta.url), { type: 'module', name: 'mha-encoder' });
  worker.addEventListener('message', (event) => {
    if (event.data && event.data.progress) onProgress?.(event.data.progress);
  });
  const rpc = connectWorker(worker, `the encoder's worker (${workerScriptName(entry)})`);
  let disposed = false;
  const request = (/** @type {string} */ op, /** @type {unknown[]} */ args) => (disposed ? Promise.reject(new MhaError('DISPOSED', 'this encoder has been disposed')) : rpc.request(op, ...args));

  let config;
  try {
    config = await request('load', [{ ...rest, modelUrl: absolute(modelUrl), wasmUrl: absolute(wasmUrl), progress: Boolean(onProgress) }]);
  } catch (error) {
    worker.terminate();
    throw error;
  }
  return Object.freeze({
    config,
    get disposed() { return disposed; },
    /** @type {import('./encoder.js').WorkerEncoder['tokenize']} */
    tokenize: (text, tokenizeOptions) => request('tokenize', [text, tokenizeOptions]),
    /** @type {import('./encoder.js').WorkerEncoder['encode']} */
    encode: (input, encodeOptions) => request('encode', [input, encodeOptions]),
    /** @type {import('./encoder.js').WorkerEncoder['parameter']} */
    parameter: (layer, name) => request('parameter', [layer, name]),
    dispose() {
      if (disposed) return;
      disposed = true;
      rpc.terminate();
    },
  });
}
