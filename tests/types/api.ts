// Type test of the JS API (web/lib/index.d.ts), compiled with `tsc --noEmit -p tsconfig.json`
// and never run. It imports the package by its own name, as users do, so the `exports` →
// `types` mapping in package.json is checked too. Lines marked @ts-expect-error must stay
// errors: tsc fails if one of them starts to compile.

import {
  loadMha,
  MhaError,
  type AttentionConfig,
  type ForwardInput,
  type ForwardResult,
  type HeadStatistics,
  type MhaErrorCode,
  type MhaModule,
  type MultiHeadAttention,
  type Tensor,
} from 'mha-explorer';

export async function lessonForward(): Promise<number[]> {
  const mha: MhaModule = await loadMha();
  const config: AttentionConfig = { embedDim: 64, numHeads: 8, batchFirst: true, seed: 0 };
  using attn = new mha.MultiHeadAttention(config);
  const headDim: number = attn.headDim;
  const resolved: Required<AttentionConfig> = attn.config;
  const numKvHeads: number = resolved.numKvHeads;

  const x = { data: new Float32Array(10 * 64).fill(0.1), shape: [1, 10, 64] };
  const input: ForwardInput = { query: x, needWeights: true, averageAttnWeights: false, isCausal: true };
  const result: ForwardResult = attn.forward(input);
  const output: Tensor = result.output;
  const data: Float32Array = output.data;
  // weights are null when needWeights is false: the type says so
  // @ts-expect-error possibly null
  const weightsShape: number[] = result.weights.shape;
  const perHead = result.weights?.shape ?? [];

  const { heads } = mha.headStatistics(result.weights ?? { data: new Float32Array(0), shape: [0] }, {
    sparsityThreshold: 0.01,
    perRow: true,
  });
  const first: HeadStatistics | undefined = heads[0];
  const entropy: number = first ? first.entropy : NaN;
  const { jsd, numHeads } = mha.headSimilarity(result.weights!);
  const jsdValues: Float64Array = jsd;

  return [headDim, numKvHeads, data.length, perHead.length, entropy, numHeads, jsdValues.length, weightsShape.length];
}

export function inputsAndMasks(attn: MultiHeadAttention): void {
  attn.forward({
    query: { data: [0.1, 0.2, 0.3, 0.4], shape: [2, 2] },
    key: { data: new Float32Array(4), shape: [2, 2], dtype: 'float32' },
    keyPaddingMask: { data: new Uint8Array([0, 1]), shape: [2], dtype: 'bool' },
    attnMask: { data: [true, false, false, true], shape: [2, 2] },
    ablateHeads: [0, 1],
    skipOutProj: true,
    returnHeadOutputs: true,
    returnConcat: true,
    fullyMaskedRowsZero: true,
  });
  attn.loadStateDict({ in_proj_weight: { data: new Float32Array(12), shape: [6, 2] } }, { strict: false });
  const names: string[] = attn.parameterNames();
  const shape: number[] = attn.parameterShape(names[0] ?? 'in_proj_weight');
  const weight: Tensor = attn.getParameter('out_proj.weight');
  attn.setParameter('out_proj.weight', { data: weight.data, shape });
  attn.resetParameters(1);
  const all: Record<string, Tensor> = attn.stateDict();
  void all;

  // @ts-expect-error a tensor needs a shape
  attn.forward({ query: { data: new Float32Array(4) } });
  // @ts-expect-error masks are bool or float32, not int32
  attn.forward({ query: { data: [1], shape: [1, 1] }, attnMask: { data: [0], shape: [1, 1], dtype: 'int32' } });
  // @ts-expect-error embedDim is required
  const noWidth: AttentionConfig = { numHeads: 2 };
  void noWidth;

  attn.dispose();
  const gone: boolean = attn.disposed;
  void gone;
}

export function errors(error: unknown): MhaErrorCode | null {
  if (error instanceof MhaError) {
    const code: MhaErrorCode = error.code;
    const message: string = error.message;
    void message;
    // @ts-expect-error code is read-only
    error.code = 'DISPOSED';
    return code;
  }
  return null;
}

// @ts-expect-error not one of the documented codes
export const unknownCode: MhaErrorCode = 'OUT_OF_MEMORY';

export const loadWithBytes = (bytes: Uint8Array) => loadMha({ wasmBinary: bytes });
export const loadFromUrl = () => loadMha({ wasmUrl: new URL('https://example.org/mha_core.wasm') });
