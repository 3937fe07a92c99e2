// A model's tokenizer on a thread of its own, with a time limit: a tokenizer.json is a stranger's
// data (anyone can publish one on the Hub), and its pre-tokenizer's regular expressions or its
// merges may take without end on some text (a Split pattern such as (a+)+b backtracks
// exponentially in the length of a run of a's). A regular expression cannot be interrupted on
// the thread it runs on, so the text is tokenized in a worker (a Web Worker in a page, a
// worker_threads thread in Node.js); when a text takes more than the limit, that worker is ended,
// a new one is started with the same tokenizer, and the call rejects with a TIMEOUT naming the
// tokenizer, the text's length and what to do. The model is untouched and stays usable.
//
//   const tokenizing = startTokenizerWorker({ tokenizerText, configText, where }, { timeLimit: 5000 });
//   await tokenizing.encode('The cat sat.');   // ids; texts are tokenized one after another
//   tokenizing.dispose();
import { MhaError } from './errors.js';
import { connectWorker } from './rpc.js';
import { onOtherOrigin, startModuleWorker, workerScriptName } from './start-worker.js';
import { isNode } from './wasm-module.js';

/** How long one text may take to tokenize, in ms, unless the option tokenizeTimeLimit says. */
export const TOKENIZE_TIME_LIMIT = 5000;

/**
 * A tokenizer's files as text, and how messages name them.
 * @typedef {{ tokenizerText: string, configText: string | null, where: { tokenizerFile: string, configFile?: string } }} TokenizerSource
 */

/**
 * Each model's tokenizer files (models.js sets them): the models' worker sends them to the page,
 * which tokenizes in a worker of its own (models-worker.js).
 * @type {WeakMap<object, TokenizerSource>}
 */
export const tokenizerSources = new WeakMap();

/** The files a model's tokenizer was read from; null without one. @param {object} model */
export const tokenizerSourceOf = (model) => tokenizerSources.get(model) ?? null;

/** @param {unknown} value */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return /** @type {object} */ (value).constructor?.name ?? 'an object';
  return typeof value === 'number' ? String(value) : typeof value;
}

/**
 * The limit an option gives, checked.
 * @param {unknown} value
 * @param {string} what  the call, for messages
 */
export function timeLimitOf(value, what) {
  if (value === undefined) return TOKENIZE_TIME_LIMIT;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: tokenizeTimeLimit must be a number of milliseconds > 0, got ${describe(value)}`);
  }
  return value;
}

/**
 * A worker_threads thread with the members of a Web Worker that rpc.js uses.
 * @param {URL} entry
 * @returns {Promise<Worker>}
 */
async function nodeThread(entry) {
  const threadsName = 'node:worker_threads';
  const { Worker: Thread } = await import(/* @vite-ignore */ /* webpackIgnore: true */ threadsName);
  const thread = new Thread(entry);
  thread.unref();  // an idle tokenizer does not keep the process alive (a pending call's timer does)
  /** @type {Record<string, string>} */
  const events = { message: 'message', error: 'error', messageerror: 'messageerror' };
  return /** @type {Worker} */ (/** @type {unknown} */ ({
    addEventListener(/** @type {string} */ type, /** @type {(event: any) => void} */ listener) {
      if (!events[type]) return;
      thread.on(events[type], (/** @type {any} */ value) => listener(type === 'message' ? { data: value }
        : type === 'error' ? { message: value?.message ?? String(value) } : {}));
    },
    postMessage: (/** @type {unknown} */ message, /** @type {any[]} */ transfer) => thread.postMessage(message, transfer),
    terminate: () => { thread.terminate(); },
  }));
}

/** @returns {Promise<{ worker: Worker, entry: URL }>} */
async function startWorker() {
  const entry = new URL('./tokenizer-worker-entry.js', import.meta.url);
  if (isNode()) return { worker: await nodeThread(entry), entry };
  if (typeof Worker !== 'function') throw new MhaError('WORKER_ERROR', 'a time limit on tokenizing needs Web Workers, which this page has not');
  // written out as `new Worker(new URL('./…', import.meta.url), …)` so that bundlers bundle it;
  // from another origin than the page (a CDN), through a trampoline (start-worker.js)
  const worker = onOtherOrigin(entry)
    ? startModuleWorker(entry, { name: 'mha-tokenizer' })
    : new Worker(new URL('./tokenizer-worker-entry.js', import.meta.url), { type: 'module', name: 'mha-tokenizer' });
  return { worker, entry };
}

/** @param {number} ms */
const seconds = (ms) => `${Number((ms / 1000).toFixed(ms < 1000 ? 2 : 1))} s`;

/**
 * Starts the tokenizer's worker and reads the tokenizer there.
 * @param {TokenizerSource} source
 * @param {{ timeLimit?: number, name?: string, setting?: string | null }} [options]  name: the
 *   tokenizer's kind, for messages; setting: how messages name what sets the limit (null: none)
 */
export function startTokenizerWorker(source, { timeLimit = TOKENIZE_TIME_LIMIT, name, setting = 'the option tokenizeTimeLimit' } = {}) {
  timeLimitOf(timeLimit, 'startTokenizerWorker');
  const file = source.where.tokenizerFile;
  /** @type {{ rpc: Promise<ReturnType<typeof connectWorker>>, ready: Promise<unknown> } | null} */
  let current = null;
  let disposed = false;
  /** the texts are tokenized one after another: each one's time counts from its turn @type {Promise<unknown>} */
  let queue = Promise.resolve();

  const start = () => {
    const rpc = startWorker().then(({ worker, entry }) => connectWorker(worker, `the tokenizer's worker (${workerScriptName(entry)})`));
    const ready = rpc.then((r) => r.request('load', source.tokenizerText, source.configText, source.where));
    ready.catch(() => {});
    return { rpc, ready };
  };

  /** @param {string} text */
  const encodeNow = async (text) => {
    if (disposed) throw new MhaError('DISPOSED', 'the tokenizer was disposed');
    current ??= start();
    const running = current;
    const rpc = await running.rpc;
    await running.ready;  // reading tokenizer.json is not timed: only the text
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        rpc.terminate();
        // a new worker with the same tokenizer, read while the caller reads the message
        current = disposed ? null : start();
        const chars = [...text].length;
        reject(new MhaError('TIMEOUT', `${file}${name ? ` (${name})` : ''} took more than ${seconds(timeLimit)} to tokenize a text of ${chars} characters and was stopped: ` +
          'its pre-tokenizer\'s regular expressions or its merges are too slow on this text. The model is still open: try a shorter or ' +
          `different text, or a tokenizer.json you trust${setting ? ` (the limit is ${setting}, ${timeLimit} ms)` : ''}.`));
      }, timeLimit);
      rpc.request('encode', text).then(resolve, reject).finally(() => clearTimeout(timer));
    });
  };

  return {
    timeLimit,
    /**
     * The ids of a text, as the tokenizer's encode() gives them; rejects with TIMEOUT after the limit.
     * @param {string} text
     * @returns {Promise<number[]>}
     */
    encode(text) {
      if (typeof text !== 'string') return Promise.reject(new MhaError('INVALID_ARGUMENT', `encode: expected a string, got ${describe(text)}`));
      const result = queue.then(() => encodeNow(text));
      queue = result.catch(() => {});
      return /** @type {Promise<number[]>} */ (result);
    },
    /** Ends the worker; later calls reject with DISPOSED. */
    dispose() {
      disposed = true;
      current?.rpc.then((r) => r.terminate(), () => {});
      current = null;
    },
  };
}
