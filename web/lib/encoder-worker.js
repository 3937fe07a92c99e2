// The pretrained encoder off the main thread, page side: createWorkerEncoder() starts a module
// worker (encoder-worker-entry.js), which loads the encoder there; the object it resolves to has
// the encoder's methods, each returning a promise. Calls are answered in order; result tensors
// come back as transferred buffers (no copy).
import { MhaError } from './errors.js';

function rebuildError(error) {
  if (error?.name === 'MhaError') return new MhaError(error.code, error.message);
  const rebuilt = new Error(error?.message ?? String(error));
  rebuilt.name = error?.name || 'Error';
  return rebuilt;
}

/** URLs the worker should see as the page does (a worker resolves relative URLs against itself). */
function absolute(url) {
  return url === undefined ? undefined : new URL(url, globalThis.location?.href).href;
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
  // Written out as `new Worker(new URL('./…', import.meta.url), …)` so that bundlers bundle it.
  const worker = workerUrl
    ? new Worker(absolute(workerUrl), { type: 'module', name: 'mha-encoder' })
    : new Worker(new URL('./encoder-worker-entry.js', import.meta.url), { type: 'module', name: 'mha-encoder' });
  let nextId = 1;
  let failure = null;
  const pending = new Map();
  const failAll = (error) => {
    failure = error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  worker.addEventListener('message', (event) => {
    const { id, ok, value, error, progress } = event.data;
    if (progress) {
      onProgress?.(progress);
      return;
    }
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    if (ok) entry.resolve(value);
    else entry.reject(rebuildError(error));
  });
  worker.addEventListener('error', (event) => {
    event.preventDefault?.();
    failAll(new MhaError('WORKER_ERROR', `the encoder's worker failed${event.message ? `: ${event.message}` : ''}`));
  });
  worker.addEventListener('messageerror', () => failAll(new MhaError('WORKER_ERROR', 'a message from the worker could not be read')));

  function request(op, args) {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ id, op, args });
      } catch (error) {
        pending.delete(id);
        reject(new MhaError('INVALID_ARGUMENT', `the arguments could not be sent to the worker: ${error.message}`));
      }
    });
  }

  let config;
  try {
    config = await request('load', [{ ...rest, modelUrl: absolute(modelUrl), wasmUrl: absolute(wasmUrl), progress: Boolean(onProgress) }]);
  } catch (error) {
    worker.terminate();
    throw error;
  }
  let disposed = false;
  return Object.freeze({
    config,
    get disposed() { return disposed; },
    tokenize: (text, tokenizeOptions) => request('tokenize', [text, tokenizeOptions]),
    encode: (input, encodeOptions) => request('encode', [input, encodeOptions]),
    parameter: (layer, name) => request('parameter', [layer, name]),
    dispose() {
      if (disposed) return;
      disposed = true;
      worker.terminate();
      failAll(new MhaError('DISPOSED', 'this encoder has been disposed'));
    },
  });
}
