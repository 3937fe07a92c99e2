// The script loadWorkerModel() starts as a module worker (models-worker.js): it opens one model
// with loadModel() and answers the page's requests (rpc.js) with its methods; download progress
// goes to the page as messages of their own, { progress }.
//
//   load [files, options]            loadModel(files, options): { config, tokenizer, threads, tokenizerSource }
//                                    (tokenizerSource: tokenizer.json's text, for the page's tokenizer worker)
//   call [method, args]              encode, tokens, read, memory, run, headImportance, attentionParameter,
//                                    extend, cachedLength, generate
import { MhaError } from './errors.js';
import { loadModel } from './models.js';
import { tokenizerSourceOf } from './tokenizer-worker.js';
import { serveRequests } from './rpc.js';

const METHODS = new Set(['encode', 'tokens', 'read', 'memory', 'run', 'headImportance', 'attentionParameter', 'extend', 'cachedLength', 'generate']);

/** @type {import('./models.js').Model | null} */
let model = null;

serveRequests(async (op, /** @type {any[]} */ args) => {
  if (op === 'load') {
    /** @type {[unknown, import('./models.js').LoadModelOptions & { progress?: boolean, plan?: boolean }]} */
    const [files, { progress, plan, ...options }] = /** @type {any} */ (args);
    // a worker's global scope (the page's types know only Window's postMessage)
    const scope = /** @type {{ postMessage(message: unknown): void }} */ (/** @type {unknown} */ (globalThis));
    if (progress) options.onProgress = (p) => scope.postMessage({ progress: p });
    if (plan) options.onPlan = (p) => scope.postMessage({ plan: p });
    model?.dispose();
    model = null;
    model = await loadModel(/** @type {Parameters<typeof loadModel>[0]} */ (files), options);
    return { config: { ...model.config }, tokenizer: model.tokenizer && { ...model.tokenizer }, threads: model.threads, tokenizerSource: tokenizerSourceOf(model) };
  }
  if (op === 'call') {
    const [method, methodArgs] = args;
    if (!model) throw new MhaError('DISPOSED', 'no model is open in this worker');
    if (!METHODS.has(method)) throw new MhaError('INVALID_ARGUMENT', `no method ${method}`);
    return /** @type {Record<string, (...a: unknown[]) => unknown>} */ (/** @type {unknown} */ (model))[method](...methodArgs);
  }
  throw new MhaError('INVALID_ARGUMENT', `unknown request ${op}`);
});
