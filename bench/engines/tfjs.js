// `tfjs-wasm`: TensorFlow.js 4.22 on its WebAssembly backend (SIMD; one thread in Node), with
// multi-head attention written in tf ops as a competent user would, after measuring: its WASM
// backend is fast for plain 2-D matMul (XNNPACK) and an order of magnitude slower for batched or
// transposed ones, so the weights are transposed once at load, k is transposed once per call,
// and each head is a pair of 2-D matMuls around tf.softmax. dataSync() (the copy out) is timed.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

export function available() {
  try {
    require.resolve('@tensorflow/tfjs-core');
    require.resolve('@tensorflow/tfjs-backend-wasm');
    return true;
  } catch {
    return '@tensorflow/tfjs-core / @tensorflow/tfjs-backend-wasm are not installed (npm ci)';
  }
}

let tfPromise = null;
async function loadTf() {
  if (!tfPromise) {
    tfPromise = (async () => {
      const tf = require('@tensorflow/tfjs-core');
      const wasm = require('@tensorflow/tfjs-backend-wasm');
      const dist = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'));
      // Point the backend at its .wasm files in node_modules.
      wasm.setWasmPaths({
        'tfjs-backend-wasm.wasm': path.join(dist, 'tfjs-backend-wasm.wasm'),
        'tfjs-backend-wasm-simd.wasm': path.join(dist, 'tfjs-backend-wasm-simd.wasm'),
        'tfjs-backend-wasm-threaded-simd.wasm': path.join(dist, 'tfjs-backend-wasm-threaded-simd.wasm'),
      });
      await tf.setBackend('wasm');
      await tf.ready();
      return tf;
    })();
  }
  return tfPromise;
}

export async function create({ L, E, H }, weights) {
  const tf = await loadTf();
  const hd = E / H;
  // Weights stored transposed, (in, out), so every projection is a plain matMul.
  const wInT = tf.tidy(() => tf.transpose(tf.tensor2d(weights.in_proj_weight, [3 * E, E])));
  const bIn = tf.tensor1d(weights.in_proj_bias);
  const wOutT = tf.tidy(() => tf.transpose(tf.tensor2d(weights['out_proj.weight'], [E, E])));
  const bOut = tf.tensor1d(weights['out_proj.bias']);
  const scale = tf.scalar(1 / Math.sqrt(hd));
  return {
    run(x) {
      const out = tf.tidy(() => {
        const x2 = tf.tensor2d(x, [L, E]);
        const qkv = tf.add(tf.matMul(x2, wInT), bIn);                          // (L, 3E)
        const q = tf.mul(tf.slice(qkv, [0, 0], [L, E]), scale);
        const kT = tf.transpose(tf.slice(qkv, [0, E], [L, E]));                // (E, L)
        const v = tf.slice(qkv, [0, 2 * E], [L, E]);
        const heads = [];
        for (let h = 0; h < H; h++) {
          const scores = tf.matMul(tf.slice(q, [0, h * hd], [L, hd]), tf.slice(kT, [h * hd, 0], [hd, L]));
          heads.push(tf.matMul(tf.softmax(scores), tf.slice(v, [0, h * hd], [L, hd])));  // (L, hd)
        }
        return tf.add(tf.matMul(tf.concat(heads, 1), wOutT), bOut);
      });
      const data = out.dataSync();
      out.dispose();
      return data;
    },
    dispose() {
      for (const t of [wInT, bIn, wOutT, bOut, scale]) t.dispose();
    },
  };
}
