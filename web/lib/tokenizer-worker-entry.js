// The script startTokenizerWorker() starts (tokenizer-worker.js): one model's tokenizer on a
// thread of its own, so that a text it takes too long on (a pre-tokenizer's regular expression
// that backtracks without end, merges without end) is stopped by ending the thread. A module
// worker in a page; a worker_threads thread in Node.js, given here the worker's postMessage and
// message events.
//
//   load [tokenizerText, configText, where]   loadTokenizer(…): the tokenizer's info
//   encode [text]                              the ids of a text
import { MhaError } from './errors.js';
import { serveRequests } from './rpc.js';
import { loadTokenizer } from './tokenizer.js';
import { isNode } from './wasm-module.js';

if (isNode()) {
  const threadsName = 'node:worker_threads';
  const { parentPort } = await import(/* @vite-ignore */ /* webpackIgnore: true */ threadsName);
  const scope = /** @type {any} */ (globalThis);
  scope.postMessage = (/** @type {unknown} */ message, /** @type {any[]} */ transfer) => parentPort.postMessage(message, transfer);
  scope.addEventListener = (/** @type {string} */ type, /** @type {(event: { data: unknown }) => void} */ listener) => {
    if (type === 'message') parentPort.on('message', (/** @type {unknown} */ data) => listener({ data }));
  };
}

/** @type {import('./tokenizer.js').ModelTokenizer | null} */
let tokenizer = null;

serveRequests(async (op, /** @type {any[]} */ args) => {
  if (op === 'load') {
    const [text, config, where] = args;
    tokenizer = await loadTokenizer(text, config, where);
    return { ...tokenizer.info };
  }
  if (op === 'encode') {
    if (!tokenizer) throw new MhaError('DISPOSED', 'no tokenizer is loaded in this worker');
    return tokenizer.encode(args[0]);
  }
  throw new MhaError('INVALID_ARGUMENT', `unknown request ${op}`);
});
