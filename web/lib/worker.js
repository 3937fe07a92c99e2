// The JS API off the main thread, on the page's side: createWorkerMha() gives a module whose
// MultiHeadAttention has the methods of the direct one, each returning a promise, computed in a
// module worker that runs worker-entry.js. Calls go through web/lib/rpc.js: answered in the
// order they were made, result tensors transferred (no copy), input tensors copied (the caller
// keeps them).
import { MhaError } from './errors.js';
import { connectWorker, workerError } from './rpc.js';

/**
 * Start a worker with the WebAssembly core. Resolves once the core is loaded there.
 * @param {import('./index.js').WorkerOptions} [options]
 * @returns {Promise<import('./index.js').WorkerMhaModule>}
 */
export async function createWorkerMha(options = {}) {
  if (typeof Worker !== 'function') {
    throw workerError('createWorkerMha needs Web Workers (a browser); in Node.js use loadMha()');
  }
  // Written out as `new Worker(new URL('./worker-entry.js', import.meta.url), …)` so that
  // bundlers which know the pattern (Vite, webpack 5) bundle the worker with its imports.
  const worker = options.workerUrl
    ? new Worker(new URL(options.workerUrl, globalThis.location?.href), { type: 'module', name: 'mha-explorer' })
    : new Worker(new URL('./worker-entry.js', import.meta.url), { type: 'module', name: 'mha-explorer' });
  const rpc = connectWorker(worker, options.workerUrl ? String(options.workerUrl) : 'worker-entry.js');
  const request = rpc.request;

  await request('load', options.wasmUrl ? { wasmUrl: new URL(options.wasmUrl, globalThis.location?.href).href } : {});

  let nextHandle = 1;
  const finalizer = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => { request('dispose', handle).catch(() => {}); })
    : null;

  class MultiHeadAttention {
    #handle;
    #config = null;
    #disposed = false;

    constructor(config) {
      this.#handle = nextHandle++;
      /** Resolves to the resolved config once the worker has made the module (rejects on a bad config). */
      this.ready = request('create', this.#handle, config).then((resolved) => {
        this.#config = Object.freeze(resolved);
        return this.#config;
      });
      this.ready.catch(() => {}); // reported by every later call too
      finalizer?.register(this, this.#handle, this);
    }

    get config() { return this.#config; }
    get headDim() { return this.#config ? this.#config.embedDim / this.#config.numHeads : NaN; }
    get disposed() { return this.#disposed; }

    async #call(method, ...args) {
      if (this.#disposed) throw new MhaError('DISPOSED', 'this MultiHeadAttention has been disposed');
      await this.ready;
      return request('call', this.#handle, method, args);
    }

    forward(input) { return this.#call('forward', input); }
    loadStateDict(stateDict, options) { return this.#call('loadStateDict', stateDict, options); }
    setParameter(name, tensor) { return this.#call('setParameter', name, tensor); }
    getParameter(name) { return this.#call('getParameter', name); }
    parameterNames() { return this.#call('parameterNames'); }
    parameterShape(name) { return this.#call('parameterShape', name); }
    stateDict() { return this.#call('stateDict'); }
    resetParameters(seed) { return this.#call('resetParameters', seed); }
    setMemoryCap(bytes) { return this.#call('setMemoryCap', bytes); }

    async dispose() {
      if (this.#disposed) return;
      this.#disposed = true;
      finalizer?.unregister(this);
      if (!rpc.failed) await request('dispose', this.#handle);
    }

    [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]() {
      return this.dispose();
    }
  }

  return Object.freeze({
    MultiHeadAttention,
    headStatistics: (weights, opts) => request('module', 'headStatistics', [weights, opts]),
    headSimilarity: (weights) => request('module', 'headSimilarity', [weights]),
    jsDivergence: (a, b) => request('module', 'jsDivergence', [a, b]),
    heapBytes: () => request('module', 'heapBytes', []),
    /** Threads the worker's core computes with (2 when the page is crossOriginIsolated). */
    get threads() { return request('module', 'threads', []); },
    loadStateDictFile: (input, opts) => request('loadStateDictFile', input, opts),
    /** Number of calls sent and not yet answered. */
    get pending() { return rpc.pending; },
    /** Call `listener(pendingCount)` whenever the number of unanswered calls changes; returns an unsubscribe function. */
    onPendingChange: (listener) => rpc.onPendingChange(listener),
    terminate: () => rpc.terminate(),
  });
}
