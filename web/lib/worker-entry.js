// The script createWorkerMha() starts as a module worker: it loads the WebAssembly core and
// answers the page's requests (web/lib/rpc.js) with the direct API of index.js.
//
//   load [options]                      loadMha(options)
//   create [handle, config]             new MultiHeadAttention(config) as `handle`; its config
//   call [handle, method, args]         a method of that MultiHeadAttention
//   dispose [handle]
//   module [name, args]                 headStatistics, headSimilarity, jsDivergence, heapBytes,
//                                       threads
//   loadStateDictFile [input, options]
import { loadMha, loadStateDictFile, MhaError } from './index.js';
import { serveRequests } from './rpc.js';

const METHODS = new Set(['forward', 'loadStateDict', 'setParameter', 'getParameter', 'parameterNames', 'parameterShape',
  'stateDict', 'resetParameters', 'setMemoryCap']);
const MODULE_METHODS = new Set(['headStatistics', 'headSimilarity', 'jsDivergence', 'heapBytes']);

/** @type {import('./index.js').MhaModule | null} */
let mha = null;
/** @type {Map<number, import('./index.js').MultiHeadAttention>} */
const handles = new Map();

/** @param {number} id */
function live(id) {
  const handle = handles.get(id);
  if (!handle) throw new MhaError('DISPOSED', 'this MultiHeadAttention has been disposed');
  return handle;
}

/**
 * A request's answer; the names of methods are checked against METHODS and MODULE_METHODS.
 * @param {string} op
 * @param {any[]} args  as the page's side (worker.js) sends them
 */
async function answer(op, args) {
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
    return /** @type {Record<string, (...a: unknown[]) => unknown>} */ (/** @type {unknown} */ (live(id)))[method](...methodArgs);
  }
  if (op === 'module') {
    const [method, methodArgs] = args;
    if (method === 'threads') return mha.threads;
    if (!MODULE_METHODS.has(method)) throw new MhaError('INVALID_ARGUMENT', `no function ${method}`);
    return /** @type {Record<string, (...a: unknown[]) => unknown>} */ (/** @type {unknown} */ (mha))[method](...methodArgs);
  }
  if (op === 'loadStateDictFile') return loadStateDictFile(args[0], args[1]);
  throw new MhaError('INVALID_ARGUMENT', `unknown request ${op}`);
}

serveRequests(answer);
