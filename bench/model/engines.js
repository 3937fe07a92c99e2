// The engines of the model benchmark, each running ids through a checkpoint and returning
// { logits: Float32Array (T·vocab), attentions: Float32Array (every layer's (H, T, T), in order) }:
//   wasm                 this project's mha_models.wasm (single thread) through its JS API
//                        (web/lib/models.js: loadModel, run): every layer's weights and residual,
//                        the hidden state and the logits copied out as the API returns them
//   wasm-threads         the same on the pthreads module (web/lib/wasm/threads/, 2 threads)
//   onnxruntime-web      onnxruntime-web's WebAssembly backend (SIMD) in Node.js, 1 thread, on
//                        the same checkpoint exported to ONNX (bench/model/cases.js)
//   onnxruntime-web-2t   the same, 2 threads
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { concat, repoRoot } from '../data.js';

const require = createRequire(import.meta.url);
export const MODEL_ENGINES = ['wasm', 'wasm-threads', 'onnxruntime-web', 'onnxruntime-web-2t'];
export const OUR_ENGINES = ['wasm', 'wasm-threads'];

const shown = (file) => path.relative(repoRoot, file);

/** true, or why the engine cannot run the case. */
export function available(engine, modelCase) {
  if (OUR_ENGINES.includes(engine)) {
    const wasm = engine === 'wasm' ? 'web/lib/wasm/mha_models.wasm' : 'web/lib/wasm/threads/mha_models_threads.wasm';
    if (!fs.existsSync(path.join(repoRoot, wasm))) return `${wasm} is not built (npm run build)`;
    if (!fs.existsSync(path.join(modelCase.dir, 'model.safetensors'))) return `${shown(modelCase.dir)}/model.safetensors is missing (made on a full run: bench/model/cases.js)`;
    return true;
  }
  try {
    require.resolve('onnxruntime-web');
  } catch {
    return 'onnxruntime-web is not installed (npm ci)';
  }
  if (!fs.existsSync(modelCase.onnx)) return `${shown(modelCase.onnx)} is missing (made on a full run: bench/model/cases.js)`;
  return true;
}

export async function create(engine, modelCase) {
  if (OUR_ENGINES.includes(engine)) {
    const { loadModel, loadModelsCore } = await import('../../web/lib/models.js');
    const threads = engine === 'wasm-threads';
    const model = await loadModel(modelCase.dir, { threads });
    const core = await loadModelsCore({ threads });
    return {
      run(ids) {
        const r = model.run(ids);
        return { logits: r.logits.data, attentions: concat(r.layers.map((l) => l.weights.data)) };
      },
      heapBytes: () => core.heapBytes(),
      dispose: () => model.dispose(),
    };
  }
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = engine === 'onnxruntime-web-2t' ? 2 : 1;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(fs.readFileSync(modelCase.onnx), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
  });
  const L = modelCase.config.L;
  return {
    async run(ids) {
      const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]) };
      const out = await session.run(feeds);
      const attentions = [];
      for (let l = 0; l < L; l++) attentions.push(out[`attn_${l}`].data);
      return { logits: out.logits.data, attentions: concat(attentions) };
    },
    dispose: () => session.release(),
  };
}
