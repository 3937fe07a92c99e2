// Calls into a Web Worker as promises: the page side (connectWorker) and the worker side
// (serveRequests) of one small protocol, for any worker that answers named requests.
//
//   page → worker   { id, op, args }
//   worker → page   { id, ok: true, value }  or  { id, ok: false, error: { name, code, message } }
//
// Requests are answered in the order they were sent (one worker, one queue). Values in answers
// are sent back with their typed arrays' buffers transferred (no copy); arguments are copied,
// so the caller keeps them, unless sent with send(op, args, transfer). An MhaError thrown in the worker is an MhaError again on the page.
import { MhaError } from './errors.js';

/**
 * Buffers of the typed arrays in a value that own their whole buffer, to transfer.
 * @param {unknown} value
 * @param {Set<ArrayBuffer>} [found]
 */
export function transferables(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (!(value.buffer instanceof ArrayBuffer) || value.byteLength === 0) return found;
    // only views that own their whole buffer: transferring would detach other views' memory
    if (value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) found.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) transferables(v, found);
  }
  return found;
}

/**
 * In a worker: answer each request with `await answer(op, args)`.
 * @param {(op: string, args: unknown[]) => unknown} answer
 */
export function serveRequests(answer) {
  // a worker's global scope (the page's types know only Window's postMessage)
  const scope = /** @type {{ postMessage(message: unknown, transfer?: Transferable[]): void }} */ (/** @type {unknown} */ (globalThis));
  globalThis.addEventListener('message', async (event) => {
    const { id, op, args } = event.data;
    try {
      const value = await answer(op, args);
      scope.postMessage({ id, ok: true, value }, [...transferables(value)]);
    } catch (error) {
      const e = /** @type {{ name?: string, code?: string, message?: string } | null | undefined} */ (error);
      scope.postMessage({
        id,
        ok: false,
        error: { name: e?.name, code: e?.code, message: e?.message ?? String(error) },
      });
    }
  });
}

/** @param {{ name?: string, code?: string, message: string }} error  as serveRequests sent it */
function rebuildError(error) {
  if (error.name === 'MhaError') return new MhaError(/** @type {import('./index.js').MhaErrorCode} */ (error.code), error.message);
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name || 'Error';
  return rebuilt;
}

/** @param {string} message */
export function workerError(message) {
  return new MhaError('WORKER_ERROR', message);
}

/**
 * On the page: requests to `worker`, each a promise of its answer. Once the worker fails (a
 * load or run error, an unreadable message) or is terminated, every pending and later request
 * rejects with a WORKER_ERROR naming `scriptName`.
 * @param {Worker} worker
 * @param {string} scriptName  how errors name the worker's script
 */
export function connectWorker(worker, scriptName) {
  let nextId = 1;
  /** @type {Error | null} */
  let failure = null;
  /** @type {Map<number, { resolve: (value: any) => void, reject: (error: Error) => void }>} */
  const pending = new Map();
  /** @type {Set<(pending: number) => void>} */
  const listeners = new Set();

  const notify = () => {
    for (const listener of listeners) listener(pending.size);
  };
  const failAll = (/** @type {Error} */ error) => {
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
    failAll(workerError(`the worker failed${event.message ? `: ${event.message}` : ''} (${scriptName})`));
  });
  worker.addEventListener('messageerror', () => failAll(workerError('a message from the worker could not be read')));

  /**
   * Sends `op` with `args`, moving the buffers in `transfer` to the worker (the caller's
   * become empty); resolves to the worker's answer.
   * @param {string} op
   * @param {unknown[]} args
   * @param {Transferable[]} transfer
   * @returns {Promise<any>} what the worker's answer() gave
   */
  function send(op, args, transfer) {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      notify();
      try {
        worker.postMessage({ id, op, args }, transfer);
      } catch (error) {
        pending.delete(id);
        notify();
        reject(new MhaError('INVALID_ARGUMENT', `the arguments could not be sent to the worker: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  }

  return {
    /**
     * Sends `op` with `args` (copied); resolves to the worker's answer.
     * @param {string} op
     * @param {unknown[]} args
     * @returns {Promise<any>} what the worker's answer() gave
     */
    request: (op, ...args) => send(op, args, []),
    send,
    /** Whether the worker has failed or been terminated. */
    get failed() { return failure !== null; },
    /** Number of requests sent and not yet answered. */
    get pending() { return pending.size; },
    /**
     * Calls `listener(pendingCount)` whenever that number changes; returns an unsubscribe function.
     * @param {(pending: number) => void} listener
     */
    onPendingChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    terminate() {
      worker.terminate();
      failAll(workerError('the worker was terminated'));
    },
  };
}
