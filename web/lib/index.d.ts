/**
 * MHA Explorer — multi-head attention computed by a C++ core compiled to WebAssembly.
 *
 * Tensors cross the API as `{ data, shape }` with row-major data. Every call that gets bad
 * input throws an {@link MhaError} whose message names what was expected and what came; the
 * module stays usable afterwards.
 *
 * @example
 * ```js
 * import { loadMha } from 'mha-explorer';
 * const mha = await loadMha();
 * using attn = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true, seed: 0 });
 * const x = { data: new Float32Array(10 * 64).fill(0.1), shape: [1, 10, 64] };
 * const { output, weights } = attn.forward({ query: x });
 * // output.shape = [1, 10, 64]; weights.shape = [1, 10, 10] (averaged over heads)
 * ```
 */

/** A float32 tensor: row-major `data` whose length is the product of `shape`. */
export interface Tensor {
  data: Float32Array;
  shape: number[];
}

/** What the API accepts where a float tensor is expected (plain arrays are copied). */
export interface TensorInput {
  data: Float32Array | ArrayLike<number>;
  shape: readonly number[];
  /** Optional; must be `'float32'` when given. */
  dtype?: 'float32';
}

/**
 * A mask. `dtype: 'bool'` — data of 0/1 (Uint8Array, booleans or numbers): true means "not
 * allowed" (attn_mask) or "ignore this key" (key_padding_mask). `dtype: 'float32'` — values
 * added to the scores (use `-Infinity` to forbid). When `dtype` is omitted it is inferred:
 * Uint8Array or boolean[] data is bool, anything else float32.
 */
export interface MaskInput {
  data: Uint8Array | Float32Array | ArrayLike<number | boolean>;
  shape: readonly number[];
  dtype?: 'bool' | 'float32';
}

/** The configuration of `torch.nn.MultiheadAttention`, plus grouped-query attention. */
export interface AttentionConfig {
  /** E, the model width. Must be divisible by numHeads. */
  embedDim: number;
  /** H, the number of (query) heads. */
  numHeads: number;
  /** G, the number of key/value heads (grouped-query attention). Defaults to numHeads; must divide it. */
  numKvHeads?: number;
  /** Width of the key input. Defaults to embedDim. */
  kdim?: number;
  /** Width of the value input. Defaults to embedDim. */
  vdim?: number;
  /** Biases on the in- and out-projections. Default true. */
  bias?: boolean;
  /** Learned bias_k / bias_v rows appended to the keys and values. Default false. */
  addBiasKv?: boolean;
  /** A zero key/value row appended after the heads are split. Default false. */
  addZeroAttn?: boolean;
  /** Inputs and outputs are (N, L, E) rather than (L, N, E). Default false, as in PyTorch. */
  batchFirst?: boolean;
  /** Seed of PyTorch-style default initialisation. Default 0. */
  seed?: number;
}

export interface ForwardInput {
  /** (N, L, E), or (L, N, E) when !batchFirst, or (L, E) unbatched. */
  query: TensorInput;
  /** (N, S, kdim) …; defaults to `query` (self-attention). */
  key?: TensorInput;
  /** (N, S, vdim) …; defaults to `key`. */
  value?: TensorInput;
  /** (N, S), or (S) unbatched. */
  keyPaddingMask?: MaskInput | null;
  /** (L, S) or (N·H, L, S), index n·H + h. */
  attnMask?: MaskInput | null;
  /** Return the attention weights. Default true. */
  needWeights?: boolean;
  /** Average the weights over heads: (N, L, S); else per head (N, H, L, S). Default true. */
  averageAttnWeights?: boolean;
  /** With no attnMask: query i sees keys j ≤ i. Default false. */
  isCausal?: boolean;
  /** Also return each head's output before concatenation: (N, H, L, hd). */
  returnHeadOutputs?: boolean;
  /** Also return Concat(head_1..head_H), shaped like the output. */
  returnConcat?: boolean;
  /** Skip W_O: the output is the concatenation of the heads. */
  skipOutProj?: boolean;
  /** Heads (0-based) zeroed before W_O. */
  ablateHeads?: readonly number[];
  /** Rows whose every key is masked give 0 instead of NaN (PyTorch's SDPA behaviour). */
  fullyMaskedRowsZero?: boolean;
}

export interface ForwardResult {
  output: Tensor;
  /** Present when needWeights. */
  weights: Tensor | null;
  headOutputs: Tensor | null;
  concat: Tensor | null;
}

/** Statistics of one head's map; see cpp/include/mha/statistics.h for the definitions. */
export interface HeadStatistics {
  entropy: number;
  normalizedEntropy: number;
  /** Share (0..1) of weights below the sparsity threshold. */
  sparsity: number;
  maxAttention: number;
  peakAttention: number;
  averageAttention: number;
  meanDistance: number;
  previousTokenShare: number;
  firstTokenShare: number;
  diagonalShare: number;
  rows: number;
}

export interface RowStatistics {
  entropy: Float64Array;
  normalizedEntropy: Float64Array;
  maxAttention: Float64Array;
  argmax: Int32Array;
  sparsity: Float64Array;
  meanDistance: Float64Array;
  /** (N, H, L) */
  shape: number[];
}

export type MhaErrorCode =
  | 'INVALID_CONFIG'
  | 'SHAPE_MISMATCH'
  | 'LENGTH_MISMATCH'
  | 'INVALID_DTYPE'
  | 'UNKNOWN_PARAMETER'
  | 'TOO_LARGE'
  | 'INVALID_ARGUMENT'
  | 'DISPOSED';

/** Thrown for every bad input; `code` says which kind. */
export class MhaError extends Error {
  readonly code: MhaErrorCode;
}

export declare class MultiHeadAttention implements Disposable {
  constructor(config: AttentionConfig);
  /** The resolved config (numKvHeads, kdim, vdim filled in). */
  readonly config: Required<AttentionConfig>;
  /** embedDim / numHeads. */
  readonly headDim: number;
  readonly disposed: boolean;
  /** PyTorch state_dict names this module has. */
  parameterNames(): string[];
  parameterShape(name: string): number[];
  setParameter(name: string, tensor: TensorInput): void;
  getParameter(name: string): Tensor;
  /** Load a PyTorch state_dict (names as PyTorch gives them). strict (default true): every parameter must be given and no other. */
  loadStateDict(stateDict: Record<string, TensorInput>, options?: { strict?: boolean }): void;
  stateDict(): Record<string, Tensor>;
  /** Re-initialise as PyTorch does, from a seed. */
  resetParameters(seed?: number): void;
  /**
   * Cap, in bytes, on the buffers one forward call may allocate (default 1 GiB). A call that
   * would need more throws MhaError with code TOO_LARGE instead of exhausting memory.
   */
  setMemoryCap(bytes: number): void;
  forward(input: ForwardInput): ForwardResult;
  /** Frees the WebAssembly memory; later calls throw MhaError with code DISPOSED. */
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface StatisticsOptions {
  /** Weights below this count as sparse. Default 0.01. */
  sparsityThreshold?: number;
  /** Also return per-row statistics. Default false. */
  perRow?: boolean;
}

export interface MhaModule {
  MultiHeadAttention: typeof MultiHeadAttention;
  MhaError: typeof MhaError;
  /** Statistics of per-head weights (H, L, S) or (N, H, L, S). */
  headStatistics(weights: TensorInput, options?: StatisticsOptions): { heads: HeadStatistics[]; rows: RowStatistics | null };
  /** Jensen–Shannon divergence (nats) between every pair of heads: H×H, row-major. */
  headSimilarity(weights: TensorInput): { jsd: Float64Array; numHeads: number };
  /** JS divergence between the matching rows of two maps of equal shape (…, L, S). */
  jsDivergence(a: TensorInput, b: TensorInput): { perRow: Float64Array; mean: number };
  /** Bytes of WebAssembly memory in use (the heap's size). */
  heapBytes(): number;
}

export interface LoadOptions {
  /** The .wasm bytes (skips fetching). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where the .wasm file is; defaults to beside this module. */
  wasmUrl?: string | URL;
}

/** Load the WebAssembly core (once; later calls return the same module). */
export function loadMha(options?: LoadOptions): Promise<MhaModule>;
