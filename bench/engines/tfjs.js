// `tfjs-wasm`: TensorFlow.js 4.22 on its WebAssembly backend (SIMD; one thread in Node), with
// multi-head attention written in tf ops as a competent user would: one matMul for the fused
// q,k,v projection, heads split by reshape/transpose, batched matMuls for the scores and P·V,
// tf.softmax, one matMul for the out-projection. dataSync() (the copy out) is timed too.
import fs from 'node:fs';
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
      // Hand the backend its .wasm bytes directly (Node's fetch cannot read file paths).
      const simd = fs.readFileSync(path.join(dist, 'tfjs-backend-wasm-simd.wasm'));
      wasm.setWasmPaths({
        'tfjs-backend-wasm.wasm': path.join(dist, 'tfjs-backend-wasm.wasm'),
        'tfjs-backend-wasm-simd.wasm': path.join(dist, 'tfjs-backend-wasm-simd.wasm'),
        'tfjs-backend-wasm-threaded-simd.wasm': path.join(dist, 'tfjs-backend-wasm-threaded-simd.wasm'),
      });
      void simd;
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
  const wIn = tf.tensor2d(weights.in_proj_weight, [3 * E, E]);
  const bIn = tf.tensor1d(weights.in_proj_bias);
  const wOut = tf.tensor2d(weights['out_proj.weight'], [E, E]);
  const bOut = tf.tensor1d(weights['out_proj.bias']);
  const scale = tf.scalar(1 / Math.sqrt(hd));
  return {
    run(x) {
      const out = tf.tidy(() => {
        const x2 = tf.tensor2d(x, [L, E]);
        const qkv = tf.add(tf.matMul(x2, wIn, false, true), bIn);             // (L, 3E)
        const heads = tf.transpose(tf.reshape(qkv, [L, 3, H, hd]), [1, 2, 0, 3]);  // (3, H, L, hd)
        const [q, k, v] = tf.unstack(heads, 0);
        const scores = tf.matMul(tf.mul(q, scale), k, false, true);           // (H, L, L)
        const probs = tf.softmax(scores);
        const ctx = tf.matMul(probs, v);                                      // (H, L, hd)
        const concat = tf.reshape(tf.transpose(ctx, [1, 0, 2]), [L, E]);
        return tf.add(tf.matMul(concat, wOut, false, true), bOut);
      });
      const data = out.dataSync();
      out.dispose();
      return data;
    },
    dispose() {
      for (const t of [wIn, bIn, wOut, bOut, scale]) t.dispose();
    },
  };
}
