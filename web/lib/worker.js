// The JS API off the main thread, on the page's side: createWorkerMha() gives a module whose
// MultiHeadAttention has the methods of the direct one, each returning a promise, computed in a
// module worker that runs worker-entry.js. Calls go through web/lib/rpc.js: answered in the
// order they were made, result tensors transferred (no copy), input tensors copied (the caller
// keeps them).
import { MhaError } from './errors.js';
import { connectWorker, workerError } from './rpc.js';
import { onOtherOrigin, startModuleWorker, workerScriptName } from './start-worker.js';

/** The worker's script beside this module (a name, not a literal URL: bundlers leave it alone). */
const WORKER_ENTRY = './worker-entry.js';

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
  // bundlers which know the pattern (Vite, webpack 5) bundle the worker with its imports; these
  // files on another origin than the page (a CDN) start it through a trampoline (start-worker.js).
  const entry = options.workerUrl ? new URL(options.workerUrl, globalThis.location?.href) : new URL(WORKER_ENTRY, import.meta.url);
  const worker = options.workerUrl || onOtherOrigin(import.meta.url)
    ? startModuleWorker(entry, { name: 'mha-explorer' })
    : new Worker(new URL('./worker-entry.js', import.meta.url), { type: 'module', name: 'mha-explorer' });
  const rpc = connectWorker(worker, workerScriptName(entry));
  const request = rpc.request;

  await request('load', options.wasmUrl ? { wasmUrl: new URL(options.wasmUrl, globalThis.location?.href).href } : {});

  let nextHandle = 1;
  const finalizer = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => { request('dispose', handle).catch(() => {}); })
    : null;

  /** @typedef {import('./index.js').TensorInput} TensorInput */
  /** @typedef {import('./index.js').WorkerMultiHeadAttention} WorkerMultiHeadAttention */
  class MultiHeadAttention {
    #handle;
    /** @type {Required<import('./index.js').AttentionConfig> | null} */
    #config = null;
    #disposed = false;

    /** @param {import('./index.js').AttentionConfig} config */
    constructor(config) {
      this.#handle = nextHandle++;
      /** Resolves to the resolved config once the worker has made the module (rejects on a bad config). */
      /** @type {Promise<Required<import('./index.js').AttentionConfig>>} */
      this.ready = request('create', this.#handle, config).then((resolved) => {
        const frozen = Object.freeze(resolved);
        this.#config = frozen;
        return frozen;
      });
      this.ready.catch(() => {}); // reported by every later call too
      finalizer?.register(this, this.#handle, this);
    }

    get config() { return this.#config; }
    get headDim() { return this.#config ? this.#config.embedDim / this.#config.numHeads : NaN; }
    get disposed() { return this.#disposed; }

    /** @param {string} method @param {unknown[]} args @returns {Promise<any>} the worker's answer */
    async #call(method, ...args) {
      if (this.#disposed) throw new MhaError('DISPOSED', 'this MultiHeadAttention has been disposed');
      await this.ready;
      return request('call', this.#handle, method, args);
    }

    /** @param {import('./index.js').ForwardInput} input @returns {Promise<import('./index.js').ForwardResult>} */
    forward(input) { return this.#call('forward', input); }
    /** @param {Record<string, TensorInput>} stateDict @param {{ strict?: boolean }} [options] @returns {Promise<void>} */
    loadStateDict(stateDict, options) { return this.#call('loadStateDict', stateDict, options); }
    /** @param {string} name @param {TensorInput} tensor @returns {Promise<void>} */
    setParameter(name, tensor) { return this.#call('setParameter', name, tensor); }
    /** @param {string} name @returns {Promise<import('./index.js').Tensor>} */
    getParameter(name) { return this.#call('getParameter', name); }
    /** @returns {Promise<string[]>} */
    parameterNames() { return this.#call('parameterNames'); }
    /** @param {string} name @returns {Promise<number[]>} */
    parameterShape(name) { return this.#call('parameterShape', name); }
    /** @returns {Promise<Record<string, import('./index.js').Tensor>>} */
    stateDict() { return this.#call('stateDict'); }
    /** @param {number} [seed] @returns {Promise<void>} */
    resetParameters(seed) { return this.#call('resetParameters', seed); }
    /** @param {number} bytes @returns {Promise<void>} */
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

  /** @typedef {import('./index.js').WorkerMhaModule} WorkerMhaModule */
  return Object.freeze({
    // its [Symbol.asyncDispose] is keyed by the engine's symbol where there is one (tsc sees a computed key)
    MultiHeadAttention: /** @type {WorkerMhaModule['MultiHeadAttention']} */ (/** @type {unknown} */ (MultiHeadAttention)),
    /** @type {WorkerMhaModule['headStatistics']} */
    headStatistics: (weights, opts) => request('module', 'headStatistics', [weights, opts]),
    /** @type {WorkerMhaModule['headSimilarity']} */
    headSimilarity: (weights) => request('module', 'headSimilarity', [weights]),
    /** @type {WorkerMhaModule['jsDivergence']} */
    jsDivergence: (a, b) => request('module', 'jsDivergence', [a, b]),
    heapBytes: () => request('module', 'heapBytes', []),
    /** Threads the worker's core computes with (2 when the page is crossOriginIsolated). */
    get threads() { return request('module', 'threads', []); },
    /** @type {WorkerMhaModule['loadStateDictFile']} */
    loadStateDictFile: (input, opts) => request('loadStateDictFile', input, opts),
    /** Number of calls sent and not yet answered. */
    get pending() { return rpc.pending; },
    /** Call `listener(pendingCount)` whenever the number of unanswered calls changes; returns an unsubscribe function. */
    onPendingChange: (/** @type {(pending: number) => void} */ listener) => rpc.onPendingChange(listener),
    terminate: () => rpc.terminate(),
  });
}
