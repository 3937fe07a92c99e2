// The JS API off the main thread. This one file plays both parts:
//  - imported on a page, it exports createWorkerMha(): a module whose MultiHeadAttention has the
//    methods of the direct one, each returning a promise, computed in a Web Worker;
//  - started as a module worker (new Worker(url-of-this-file, { type: 'module' })), it loads the
//    WebAssembly core and answers those calls.
// Calls are answered in the order they were made (one worker, one queue). Result tensors come
// back as transferred buffers (no copy); input tensors are copied, so the caller keeps them.

import { loadMha, MhaError, loadStateDictFile } from './index.js';

const inWorker = typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope;

// ---------------------------------------------------------------------------------------------
// Inside the worker

/** Float32/64 and Int32 buffers in a result, to transfer instead of copying. */
function transferables(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (!(value.buffer instanceof ArrayBuffer) || value.byteLength === 0) return found;
    // only views that own their whole buffer: transferring would detach other views' memory
    if (value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) found.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) transferables(v, found);
  }
  return found;
}

function serveRequests() {
  let mha = null;
  const handles = new Map();
  const live = (id) => {
    const handle = handles.get(id);
    if (!handle) throw new MhaError('DISPOSED', 'this MultiHeadAttention has been disposed');
    return handle;
  };
  const METHODS = new Set(['forward', 'loadStateDict', 'setParameter', 'getParameter', 'parameterNames', 'parameterShape',
    'stateDict', 'resetParameters', 'setMemoryCap']);
  const MODULE_METHODS = new Set(['headStatistics', 'headSimilarity', 'jsDivergence', 'heapBytes']);

  async function answer({ op, args }) {
    if (op === 'load') {
      mha = await loadMha(args[0] || {});
      return true;
    }
    if (!mha) mha = await loadMha();
    if (op === 'create') {
      const [id, config] = args;
      const attention = new mha.MultiHeadAttention(config);
      handles.set(id, attention);
      return { ...attention.config };
    }
    if (op === 'dispose') {
      const attention = handles.get(args[0]);
      if (attention) attention.dispose();
      handles.delete(args[0]);
      return true;
    }
    if (op === 'call') {
      const [id, method, methodArgs] = args;
      if (!METHODS.has(method)) throw new MhaError('INVALID_ARGUMENT', `no method ${method}`);
      return live(id)[method](...methodArgs);
    }
    if (op === 'module') {
      const [method, methodArgs] = args;
      if (method === 'threads') return mha.threads;
      if (!MODULE_METHODS.has(method)) throw new MhaError('INVALID_ARGUMENT', `no function ${method}`);
      return mha[method](...methodArgs);
    }
    if (op === 'loadStateDictFile') return loadStateDictFile(...args);
    throw new MhaError('INVALID_ARGUMENT', `unknown request ${op}`);
  }

  globalThis.addEventListener('message', async (event) => {
    const { id } = event.data;
    try {
      const value = await answer(event.data);
      globalThis.postMessage({ id, ok: true, value }, [...transferables(value)]);
    } catch (error) {
      globalThis.postMessage({
        id,
        ok: false,
        error: { name: error?.name, code: error?.code, message: error?.message ?? String(error) },
      });
    }
  });
}

if (inWorker) serveRequests();

// ---------------------------------------------------------------------------------------------
// On the page

function workerError(message) {
  return new MhaError('WORKER_ERROR', message);
}

function rebuildError(error) {
  if (error.name === 'MhaError') return new MhaError(error.code, error.message);
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name || 'Error';
  return rebuilt;
}

/**
 * Start a worker with the WebAssembly core. Resolves once the core is loaded there.
 * @param {import('./index.js').WorkerOptions} [options]
 * @returns {Promise<import('./index.js').WorkerMhaModule>}
 */
export async function createWorkerMha(options = {}) {
  if (typeof Worker !== 'function') {
    throw workerError('createWorkerMha needs Web Workers (a browser); in Node.js use loadMha()');
  }
  // Written out as `new Worker(new URL('./worker.js', import.meta.url), …)` so that bundlers
  // which know the pattern (Vite, webpack 5) bundle the worker with its imports.
  const worker = options.workerUrl
    ? new Worker(new URL(options.workerUrl, globalThis.location?.href), { type: 'module', name: 'mha-explorer' })
    : new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'mha-explorer' });
  const url = { href: options.workerUrl ? String(options.workerUrl) : 'worker.js' };
  let nextId = 1;
  let failure = null;
  const pending = new Map();
  const listeners = new Set();

  const notify = () => {
    for (const listener of listeners) listener(pending.size);
  };
  const failAll = (error) => {
    failure = error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
    notify();
  };
  worker.addEventListener('message', (event) => {
    const { id, ok, value, error } = event.data;
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    notify();
    if (ok) entry.resolve(value);
    else entry.reject(rebuildError(error));
  });
  worker.addEventListener('error', (event) => {
    event.preventDefault?.();
    failAll(workerError(`the worker failed${event.message ? `: ${event.message}` : ''} (${url.href})`));
  });
  worker.addEventListener('messageerror', () => failAll(workerError('a message from the worker could not be read')));

  function request(op, ...args) {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      notify();
      try {
        worker.postMessage({ id, op, args });
      } catch (error) {
        pending.delete(id);
        notify();
        reject(new MhaError('INVALID_ARGUMENT', `the arguments could not be sent to the worker: ${error.message}`));
      }
    });
  }

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
      if (!failure) await request('dispose', this.#handle);
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
    get pending() { return pending.size; },
    /** Call `listener(pendingCount)` whenever the number of unanswered calls changes; returns an unsubscribe function. */
    onPendingChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    terminate() {
      worker.terminate();
      failAll(workerError('the worker was terminated'));
    },
  });
}
