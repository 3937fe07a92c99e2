// Measuring heads without holding the page: in a page, the rule's bootstrap (evaluateHeads) and a
// whole measurement of the trained model run in a Web Worker of their own
// (measure-worker-entry.js), and the loops that feed them pause between sentences (pageBreaks).
// In Node.js and inside a worker the same work runs where it is called.
import { evaluateHeads } from './evaluate.js';
import { connectWorker } from '../lib/rpc.js';
import { nextTask } from '../lib/next-task.js';

/** A page's main thread (not Node.js, not a worker): the one thread that draws and answers input. */
const onPageThread = () => typeof document !== 'undefined' && typeof Worker === 'function';

/** Work a loop does between pauses, in ms: well under the 50 ms at which a task starts to delay input. */
const SLICE_MS = 30;

/**
 * A pause to await between the pieces of a long loop: on a page's main thread it resolves in a
 * new task once SLICE_MS of work have run since the last one (the page draws and answers input in
 * between); elsewhere at once.
 * @returns {() => Promise<void>}
 */
export function pageBreaks() {
  if (!onPageThread()) return async () => {};
  let last = performance.now();
  return async () => {
    if (performance.now() - last < SLICE_MS) return;
    await nextTask();
    last = performance.now();
  };
}

/**
 * Answer `op` in a worker of its own, which ends with the answer; the worker's { progress }
 * messages go to onProgress. Rejects with WORKER_ERROR where no worker could be started.
 * @param {string} op  a request measure-worker-entry.js answers
 * @param {unknown[]} args
 * @param {import('../sources/source.js').MeasureProgress} [onProgress]
 */
export async function inRolesWorker(op, args, onProgress) {
  // '../roles/' holds from this file and from the embed bundle in web/lib/
  const worker = new Worker(new URL('../roles/measure-worker-entry.js', import.meta.url), { type: 'module', name: 'mha-roles' });
  worker.addEventListener('message', (event) => {
    if (event.data && event.data.progress) onProgress?.(event.data.progress);
  });
  const rpc = connectWorker(worker, 'the roles worker (web/roles/measure-worker-entry.js)');
  try {
    return await rpc.request(op, ...args);
  } finally {
    rpc.terminate();
  }
}

/** Whether an error says a worker could not be started or run (its script refused, workers barred). @param {unknown} error */
export const workerRefused = (error) => !!error && typeof error === 'object'
  && (/** @type {{ code?: string }} */ (error).code === 'WORKER_ERROR' || /** @type {{ name?: string }} */ (error).name === 'SecurityError');

/**
 * evaluateHeads (evaluate.js) in the roles worker on a page's main thread, where it is called
 * elsewhere or where no worker can start.
 * @param {Parameters<typeof evaluateHeads>} args
 * @returns {Promise<ReturnType<typeof evaluateHeads>>}
 */
export async function evaluateAway(...args) {
  if (onPageThread()) {
    try {
      return await inRolesWorker('evaluate', args);
    } catch (error) {
      if (!workerRefused(error)) throw error;
    }
  }
  return evaluateHeads(...args);
}

export { onPageThread };
