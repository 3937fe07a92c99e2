// `onnxruntime-web` (1 thread) and `onnxruntime-web-2t` (2 threads): onnxruntime-web's
// WebAssembly backend (SIMD) in Node.js, running torch.nn.MultiheadAttention exported to ONNX
// by scripts/export_onnx.py (opset 14, batch_first, need_weights=False). The model is
// generated at bench time into build/bench/ (it holds the weights: 4 MB at E=512), because
// committing it would not fit; without /usr/bin/python3 + torch, this engine is skipped.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { benchDir } from '../data.js';

const require = createRequire(import.meta.url);

export function modelPath(E, H) {
  return path.join(benchDir, `mha_E${E}_H${H}.onnx`);
}

export function available({ E, H }) {
  try {
    require.resolve('onnxruntime-web');
  } catch {
    return 'onnxruntime-web is not installed (npm ci)';
  }
  if (!fs.existsSync(modelPath(E, H)))
    return `${path.relative(process.cwd(), modelPath(E, H))} is missing (made by scripts/export_onnx.py on a full run)`;
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
