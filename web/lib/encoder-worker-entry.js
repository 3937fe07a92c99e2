// The pretrained encoder off the main thread, worker side: started as a module worker by
// createWorkerEncoder() (encoder-worker.js), it loads the encoder and answers its calls in order.
import { loadEncoder } from './encoder.js';

/** The buffers of a result's typed arrays, transferred instead of copied (each owns its buffer). */
function transferables(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) found.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) transferables(v, found);
  }
  return found;
}

let encoder = null;

async function answer(op, args) {
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
}

globalThis.addEventListener('message', async (event) => {
  const { id, op, args } = event.data;
  try {
    const value = await answer(op, args);
    globalThis.postMessage({ id, ok: true, value }, [...transferables(value)]);
  } catch (error) {
    globalThis.postMessage({ id, ok: false, error: { name: error?.name, code: error?.code, message: error?.message ?? String(error) } });
  }
});
