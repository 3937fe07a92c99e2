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
  /**
   * Width of the out-projection: W_O is (outDim, embedDim), out_proj.bias (outDim), and the
   * output's last dimension outDim. An integer of at least 1; defaults to embedDim (PyTorch's).
   */
  outDim?: number;
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
  | 'DISPOSED'
  /** The Web Worker of {@link createWorkerMha} failed to start, or was terminated. */
  | 'WORKER_ERROR'
  /** A model's tokenizer took longer than its time limit on a text and was stopped (tokenizeTimeLimit); the model stays usable. */
  | 'TIMEOUT'
  /** A file of a pretrained model (mha-explorer/encoder) is missing or damaged; the message names it. */
  | 'MODEL_FILE'
  /** {@link loadStateDictFile}: the file does not say how many heads it has; pass the option `numHeads`. */
  | 'NUM_HEADS_MISSING';

/** Thrown for every bad input; `code` says which kind. */
export class MhaError extends Error {
  constructor(code: MhaErrorCode, message: string);
  readonly code: MhaErrorCode;
}

export declare class MultiHeadAttention implements Disposable {
  constructor(config: AttentionConfig);
  /** The resolved config (numKvHeads, kdim, vdim, outDim filled in). */
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
   * Cap, in bytes, on the memory one forward call takes: its inputs, its workspace and its
   * results (default 1 GiB). A call that would take more throws MhaError with code TOO_LARGE
   * instead of exhausting memory.
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
  /** Bytes the core's allocator has handed out and not taken back (flat unless something leaks). */
  heapInUse(): number;
  /** MultiHeadAttention objects whose WebAssembly memory is not yet freed (by dispose() or the finalizer). */
  liveObjects(): number;
  /** Threads the core computes with: 2 for the pthreads core, 1 for the single-thread one. */
  readonly threads: number;
}

export interface LoadOptions {
  /**
   * Which core: `'auto'` (default) loads the pthreads core (2 threads) in Node.js and in pages
   * that are crossOriginIsolated (see {@link threadsAvailable}), the single-thread core elsewhere
   * or when `wasmBinary` / `wasmUrl` are given (they name the single-thread module), and falls
   * back to it if the threaded one cannot start; `true` insists on threads (rejects with an
   * MhaError where they are not available); `false` always loads the single-thread core.
   */
  threads?: 'auto' | boolean;
  /** The .wasm bytes (skips fetching). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where the .wasm file is; defaults to beside this module. */
  wasmUrl?: string | URL;
}

/** Load the WebAssembly core (once per kind; later calls return the same module). */
export function loadMha(options?: LoadOptions): Promise<MhaModule>;

/**
 * Whether the pthreads core can run here: Node.js, or a page (or its workers) served
 * crossOriginIsolated (`Cross-Origin-Opener-Policy: same-origin` and
 * `Cross-Origin-Embedder-Policy: require-corp`), where SharedArrayBuffer exists.
 */
export function threadsAvailable(): boolean;

// ---------------------------------------------------------------------------------------------
// Weights from files (web/lib/safetensors.js)

/** A tensor read from a file, converted to float32; `dtype` is the one stored in the file. */
export interface FileTensor extends Tensor {
  /** 'F32' | 'F16' | 'BF16' | 'F64' for .safetensors; 'float32' for JSON. */
  dtype: string;
}

export interface StateDictFileOptions {
  /** Named in error messages (e.g. the file's name or URL). Default 'state_dict'. */
  fileName?: string;
  /**
   * Name prefix of the attention layer to take from a model's state_dict, e.g.
   * `'encoder.layers.3.self_attn.'`. Default: the one layer the file holds (an error lists
   * the layers when there are several).
   */
  prefix?: string;
  /** The number of heads, when the file does not say (no config / `__metadata__`); wins over the file. */
  numHeads?: number;
  /** Key/value heads (grouped-query attention); default from the file or the shapes. */
  numKvHeads?: number;
  /** Override the file's batch_first (default false, as in PyTorch). */
  batchFirst?: boolean;
  /** Override the file's add_zero_attn (not visible in the shapes; default false). */
  addZeroAttn?: boolean;
}

/** What {@link loadStateDictFile} returns: pass `config` to the constructor, then `loadStateDict(stateDict)`. */
export interface StateDictFile {
  /** Read from the file's config where it has one, the rest from the tensors' shapes. */
  config: Required<Omit<AttentionConfig, 'seed'>>;
  /** nn.MultiheadAttention names (prefix removed) → float32 tensors. */
  stateDict: Record<string, Tensor>;
  format: 'safetensors' | 'json';
  /** The prefix the layer's names had in the file ('' for a bare nn.MultiheadAttention). */
  prefix: string;
  /** A .safetensors file's `__metadata__` ({} for JSON). */
  metadata: Record<string, string>;
}

/**
 * Load a PyTorch `nn.MultiheadAttention` state_dict from a file's contents: `.safetensors`
 * bytes (F32; F16, BF16 and F64 converted), JSON text or bytes (the golden-case format
 * `{ config, state_dict: { name: { shape, data } } }`, or a bare state_dict), or parsed JSON.
 * Every tensor's shape is checked; a malformed, truncated or mis-shaped file throws an
 * {@link MhaError} naming the tensor, its shape and the expected one.
 *
 * @example
 * ```js
 * const bytes = new Uint8Array(await (await fetch('mha.safetensors')).arrayBuffer());
 * const { config, stateDict } = loadStateDictFile(bytes, { fileName: 'mha.safetensors' });
 * const attn = new mha.MultiHeadAttention(config);
 * attn.loadStateDict(stateDict);
 * ```
 */
export function loadStateDictFile(
  input: ArrayBuffer | Uint8Array | string | object,
  options?: StateDictFileOptions,
): StateDictFile;

/** Parse a `.safetensors` file into float32 tensors by name, and its `__metadata__`. */
export function parseSafetensors(
  input: ArrayBuffer | Uint8Array,
  options?: { fileName?: string },
): { tensors: Record<string, FileTensor>; metadata: Record<string, string> };

/**
 * Write tensors as a `.safetensors` file (data 8-byte aligned): F32 by default, or F16 (each
 * value rounded to the nearest half, ties to even; beyond ±65504 it becomes ±Infinity).
 */
export function toSafetensors(
  tensors: Record<string, { data: ArrayLike<number>; shape: readonly number[] }>,
  metadata?: Record<string, string>,
  options?: { dtype?: 'F32' | 'F16' },
): Uint8Array;

// ---------------------------------------------------------------------------------------------
// Off the main thread (web/lib/worker.js)

export interface WorkerOptions {
  /** Where the worker's script, worker-entry.js, is (default: beside this module). Set it when a bundler moved the module. */
  workerUrl?: string | URL;
  /** Where the .wasm file is (default: beside index.js, as the worker sees it). */
  wasmUrl?: string | URL;
}

/**
 * {@link MultiHeadAttention} computed in a Web Worker: the same methods, each returning a
 * promise. Calls run in the order they are made. A bad config rejects `ready` and every call.
 */
export declare class WorkerMultiHeadAttention implements AsyncDisposable {
  constructor(config: AttentionConfig);
  /** Resolves to the resolved config once the worker has made the module. */
  readonly ready: Promise<Required<AttentionConfig>>;
  /** The resolved config; null until `ready` resolves. */
  readonly config: Required<AttentionConfig> | null;
  /** embedDim / numHeads; NaN until `ready` resolves. */
  readonly headDim: number;
  readonly disposed: boolean;
  forward(input: ForwardInput): Promise<ForwardResult>;
  loadStateDict(stateDict: Record<string, TensorInput>, options?: { strict?: boolean }): Promise<void>;
  setParameter(name: string, tensor: TensorInput): Promise<void>;
  getParameter(name: string): Promise<Tensor>;
  parameterNames(): Promise<string[]>;
  parameterShape(name: string): Promise<number[]>;
  stateDict(): Promise<Record<string, Tensor>>;
  resetParameters(seed?: number): Promise<void>;
  setMemoryCap(bytes: number): Promise<void>;
  /** Frees the module's memory in the worker. */
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The API of {@link MhaModule}, answered by a Web Worker: every call returns a promise. */
export interface WorkerMhaModule {
  MultiHeadAttention: typeof WorkerMultiHeadAttention;
  headStatistics(weights: TensorInput, options?: StatisticsOptions): Promise<{ heads: HeadStatistics[]; rows: RowStatistics | null }>;
  headSimilarity(weights: TensorInput): Promise<{ jsd: Float64Array; numHeads: number }>;
  jsDivergence(a: TensorInput, b: TensorInput): Promise<{ perRow: Float64Array; mean: number }>;
  heapBytes(): Promise<number>;
  /** Threads the worker's core computes with: 2 when the page is crossOriginIsolated, else 1. */
  readonly threads: Promise<number>;
  /** {@link loadStateDictFile}, parsed in the worker (for large files). */
  loadStateDictFile(input: ArrayBuffer | Uint8Array | string | object, options?: StateDictFileOptions): Promise<StateDictFile>;
  /** Calls sent and not yet answered. */
  readonly pending: number;
  /** Called with the number of unanswered calls whenever it changes (e.g. to show progress); returns an unsubscribe function. */
  onPendingChange(listener: (pending: number) => void): () => void;
  /** Stop the worker; pending and later calls reject with code WORKER_ERROR. */
  terminate(): void;
}

/**
 * Start a Web Worker with the WebAssembly core (browsers; in Node.js use {@link loadMha}).
 * Inputs beyond the lesson's sizes belong here: the page stays responsive while they compute.
 *
 * @example
 * ```js
 * const mha = await createWorkerMha();
 * const attn = new mha.MultiHeadAttention({ embedDim: 1024, numHeads: 16, batchFirst: true });
 * const { output, weights } = await attn.forward({ query: x });
 * await attn.dispose();
 * ```
 */
export function createWorkerMha(options?: WorkerOptions): Promise<WorkerMhaModule>;
