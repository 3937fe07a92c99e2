// `onnxruntime-web` (1 thread) and `onnxruntime-web-2t` (2 threads): onnxruntime-web's
// WebAssembly backend (SIMD) in Node.js, running torch.nn.MultiheadAttention exported to ONNX
// by scripts/export/export_onnx.py (opset 14, batch_first, need_weights=False). The models hold the
// weights: shape A's (E=64, 70 KB) is committed in bench/models/, so `--quick` runs it without
// torch; the others (4-9 MB) are generated at bench time into build/bench/. Without a model
// (and without /usr/bin/python3 + torch to make it), this engine is skipped.
//
// The weights are bench/data.js's makeWeights(E, H): if that changes, re-export with
// `/usr/bin/python3 scripts/export/export_onnx.py ...` (the cross-check would fail otherwise).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { benchDir, repoRoot } from '../data.js';

const require = createRequire(import.meta.url);

/** Where the model for (E, H) is: the committed one if any, else the one made in build/bench/. */
export function modelPath(E, H) {
  const committed = path.join(repoRoot, 'bench/models', `mha_E${E}_H${H}.onnx`);
  return fs.existsSync(committed) ? committed : path.join(benchDir, `mha_E${E}_H${H}.onnx`);
}

export function available({ E, H }) {
  try {
    require.resolve('onnxruntime-web');
  } catch {
    return 'onnxruntime-web is not installed (npm ci)';
  }
  if (!fs.existsSync(modelPath(E, H)))
    return `${path.relative(process.cwd(), modelPath(E, H))} is missing (made by scripts/export/export_onnx.py on a full run)`;
  return true;
}

export async function create({ L, E, H }, _weights, { threads = 1 } = {}) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(fs.readFileSync(modelPath(E, H)), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
  });
  return {
    async run(x) {
      const feeds = { x: new ort.Tensor('float32', x, [1, L, E]) };
      const result = await session.run(feeds);
      return result.out.data;
    },
    dispose: () => session.release(),
  };
}
