// `wasm`: this project's WebAssembly module through its public JS API (web/lib/index.js), so
// every timed forward includes the JS <-> WASM crossing: the input copied in, the outputs
// copied out as new typed arrays.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../data.js';

export function available() {
  const dir = path.join(repoRoot, 'web/lib/wasm');
  return fs.existsSync(path.join(dir, 'mha_core.wasm')) && fs.existsSync(path.join(dir, 'mha_core.js'))
    ? true
    : 'web/lib/wasm/mha_core.wasm is not built (npm run build)';
}

export async function create({ L, E, H }, weights, { needWeights, libUrl = '../../web/lib/index.js', pthreads = false }) {
  const { loadMha } = await import(libUrl);
  const mha = await loadMha({ threads: pthreads });
  if (mha.threads !== (pthreads ? 2 : 1)) throw new Error(`expected the ${pthreads ? 'pthreads' : 'single-thread'} core, got ${mha.threads} thread(s)`);
  const attn = new mha.MultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true, seed: 0 });
  attn.loadStateDict({
    in_proj_weight: { data: weights.in_proj_weight, shape: [3 * E, E] },
    in_proj_bias: { data: weights.in_proj_bias, shape: [3 * E] },
    'out_proj.weight': { data: weights['out_proj.weight'], shape: [E, E] },
    'out_proj.bias': { data: weights['out_proj.bias'], shape: [E] },
  });
  return {
    run(x) {
      const result = attn.forward({ query: { data: x, shape: [1, L, E] }, needWeights });
      return result.output.data;
    },
    heapBytes: () => mha.heapBytes(),
    dispose: () => attn.dispose(),
  };
}
