// The pretrained encoder off the main thread, worker side: started as a module worker by
// createWorkerEncoder() (encoder-worker.js), it loads the encoder and answers its calls in order
// (rpc.js); download progress goes to the page as messages of their own, { progress }.
import { loadEncoder } from './encoder.js';
import { serveRequests } from './rpc.js';

/** @type {import('./encoder.js').Encoder | null} */
let encoder = null;

serveRequests(async (op, /** @type {any[]} */ args) => {
  if (op === 'load') {
    /** @type {import('./encoder.js').LoadEncoderOptions & { progress?: boolean }} */
    const { progress, ...options } = args[0];
    // a worker's global scope (the page's types know only Window's postMessage)
    const scope = /** @type {{ postMessage(message: unknown): void }} */ (/** @type {unknown} */ (globalThis));
    if (progress) options.onProgress = (p) => scope.postMessage({ progress: p });
    encoder = await loadEncoder(options);
    return encoder.config;
  }
  if (!encoder) throw new Error('the encoder is not loaded');
  if (op === 'tokenize') return encoder.tokenize(args[0], args[1]);
  if (op === 'encode') return encoder.encode(args[0], args[1]);
  if (op === 'parameter') return encoder.parameter(args[0], args[1]);
  throw new Error(`unknown request ${op}`);
});
