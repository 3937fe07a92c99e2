// The pretrained encoder off the main thread, worker side: started as a module worker by
// createWorkerEncoder() (encoder-worker.js), it loads the encoder and answers its calls in order
// (rpc.js); download progress goes to the page as messages of their own, { progress }.
import { loadEncoder } from './encoder.js';
import { serveRequests } from './rpc.js';

let encoder = null;

serveRequests(async (op, args) => {
  if (op === 'load') {
    const { progress, ...options } = args[0];
    if (progress) options.onProgress = (p) => globalThis.postMessage({ progress: p });
    encoder = await loadEncoder(options);
    return encoder.config;
  }
  if (!encoder) throw new Error('the encoder is not loaded');
  if (op === 'tokenize') return encoder.tokenize(...args);
  if (op === 'encode') return encoder.encode(...args);
  if (op === 'parameter') return encoder.parameter(...args);
  throw new Error(`unknown request ${op}`);
});
