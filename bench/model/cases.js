// The model cases of `npm run bench`: a checkpoint in Hugging Face layout run end to end,
// ids -> logits (T, vocab) and every layer's attention weights (H, T, T).
//   gpt2-small    random-initialised weights of GPT-2 small's shape (12 layers x 12 heads, width
//                 768, MLP 3072, vocab 50257, 1024 positions: 124M parameters), 128 tokens;
//                 written with its ONNX export into build/bench/gpt2-small/ by
//                 scripts/export/export_gpt2_onnx.py (/usr/bin/python3 + torch) on a full run
//   smollm2-135m  random weights of SmolLM2-135M's shape (Llama layout: 30 layers, 9 query and 3
//                 key/value heads, width 576, gated MLP 1536, vocab 49152, tied head: 135M
//                 parameters) in float32, 128 tokens; written by scripts/export/random_checkpoint.js
//                 and exported by scripts/export/export_llama_onnx.py on a full run
//   gpt2-tied     the golden test's small GPT-2 (tests/golden/models/gpt2-tied: 2 layers x 4 heads,
//                 width 24, vocab 377), 32 tokens; its ONNX export is committed
//                 (bench/models/gpt2-tied.onnx), so `--quick` runs it without torch
import path from 'node:path';
import { benchDir, repoRoot } from '../data.js';

export const MODEL_CASES = {
  'gpt2-small': {
    dir: path.join(benchDir, 'gpt2-small'),
    onnx: path.join(benchDir, 'gpt2-small', 'model.onnx'),
    tokens: 128,
    config: { L: 12, H: 12, E: 768, I: 3072, V: 50257 },
    make: [['/usr/bin/python3', 'scripts/export/export_gpt2_onnx.py', 'random-gpt2-small', 'build/bench/gpt2-small']],
  },
  'smollm2-135m': {
    dir: path.join(benchDir, 'smollm2-135m'),
    onnx: path.join(benchDir, 'smollm2-135m', 'model.onnx'),
    tokens: 128,
    config: { L: 30, H: 9, G: 3, E: 576, I: 1536, V: 49152, gated: true },
    make: [
      ['node', 'scripts/export/random_checkpoint.js', 'smollm2-135m', 'F32', 'build/bench/smollm2-135m'],
      ['/usr/bin/python3', 'scripts/export/export_llama_onnx.py', 'build/bench/smollm2-135m', 'build/bench/smollm2-135m/model.onnx'],
    ],
  },
  'gpt2-tied': {
    dir: path.join(repoRoot, 'tests/golden/models/gpt2-tied'),
    onnx: path.join(repoRoot, 'bench/models/gpt2-tied.onnx'),
    tokens: 32,
    config: { L: 2, H: 4, E: 24, I: 96, V: 377 },
  },
};

/** T ids in [0, V), from a seeded xorshift (the same for every engine and run). */
export function modelInput(T, V) {
  let s = 2463534242;
  const ids = [];
  for (let t = 0; t < T; t++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    ids.push(s % V);
  }
  return ids;
}

/**
 * Floating-point operations of one forward at T tokens: per layer 2·T·E·D·(2H + 2G) (the q, k, v
 * and o projections; D = E / H, G = H without grouped-query attention) + 2·T·E·I per MLP matrix
 * (2 plain, 3 gated) + 4·T²·H·D (scores and P·V), then the LM head 2·T·E·V.
 */
export function modelFlops({ L, H, G = H, E, I, V, gated = false }, T) {
  const D = E / H;
  return L * (2 * T * E * D * (2 * H + 2 * G) + 2 * T * E * I * (gated ? 3 : 2) + 4 * T * T * H * D) + 2 * T * E * V;
}
