// Types of web/lib/encoder.js and web/lib/encoder-worker.js (the package's "mha-explorer/encoder"
// and "mha-explorer/encoder-worker" entries).
import type { MhaError, Tensor } from './index.js';

export type { MhaError, Tensor };

/** One attention layer of the model. */
export interface EncoderLayerConfig {
  readonly numHeads: number;
  /** The attention's width E (numHeads · headDim). */
  readonly embedDim: number;
  readonly headDim: number;
  /** The residual stream's width after the layer: W_O maps embedDim → outDim. */
  readonly outDim: number;
  /** The feed-forward layer's hidden width. */
  readonly ffnDim: number;
}

export interface EncoderConfig {
  readonly numLayers: number;
  /** Longest input in tokens (128); longer ones are refused unless `truncate` is set. */
  readonly maxTokens: number;
  /** Pieces of the tokenizer's vocabulary; ids are below it. */
  readonly vocabSize: number;
  /** Width of the sentence embedding (512). */
  readonly outputDim: number;
  /** The weights' file format (computation is float32 either way). */
  readonly dtype: 'float32' | 'float16';
  /** The model folder the encoder was loaded from. */
  readonly modelUrl: string;
  /** The model's name ("Universal Sentence Encoder lite"). */
  readonly model: string;
  readonly layers: readonly EncoderLayerConfig[];
}

export interface LoadEncoderOptions {
  /**
   * The model folder (manifest.json, vocab.txt, model-f32/f16.safetensors, as
   * `node scripts/build/build-model.js` writes them). Default: `../models/use-lite/` beside this
   * module (web/models/use-lite/, which `npm start` serves at /models/use-lite/). In Node.js also a
   * folder path; an http(s) URL is fetched there too.
   */
  modelUrl?: string | URL;
  /** Which weights to download: `'float32'` (default, 27.9 MB) or `'float16'` (14.0 MB). */
  dtype?: 'float32' | 'float16';
  /** Called as bytes arrive: `loaded` and `total` count every file of the load together. */
  onProgress?: (progress: { file: string; loaded: number; total: number }) => void;
  /**
   * In browsers, keep the files in the Cache Storage ("mha-explorer-models") and load them from
   * there on the next visit, offline too; each is still checked against the manifest. Default true.
   */
  cache?: boolean;
  /** The encoder's .wasm bytes (skips fetching mha_encoder.wasm). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where mha_encoder.wasm is; defaults to beside this module. */
  wasmUrl?: string | URL;
}

export interface TokenizeOptions {
  /** Keep at most `maxTokens` tokens (the first ones) instead of all. Default false. */
  truncate?: boolean;
}

/** The model's tokens of a text, as its own TF.js tokenizer cuts it. */
export interface Tokens {
  /** Each token's text: `"▁"` marks a space before it; an unknown piece (id 0) keeps its text. */
  pieces: string[];
  ids: number[];
  /** The word each piece belongs to (a piece starting with `"▁"` begins a word: {@link wordsOfPieces}), from 0. */
  words: number[];
  /** Whether tokens past `maxTokens` were cut (only with `truncate: true`). */
  truncated: boolean;
  /** How many tokens the whole text has (more than `ids.length` when truncated). */
  totalTokens: number;
}

export interface EncodeOptions extends TokenizeOptions {
  /**
   * Heads switched off: `[layer, head]` pairs. A head is zeroed before its layer's W_O; the
   * layers after it see the change.
   */
  ablate?: ReadonlyArray<readonly [number, number]>;
}

/** What one layer computed. T tokens, H heads, hd head width, E attention width, out its output width. */
export interface EncoderLayerResult {
  /** Attention weights, `[H, T, T]` (query rows, key columns; each row sums to 1). */
  weights: Tensor;
  /** Each head's output before concatenation, `[H, T, hd]` (what an ablated head computed, too). */
  headOutputs: Tensor;
  /** The heads concatenated, `[T, E]`, an ablated head's columns zero. */
  concat: Tensor;
  /** After W_O: concat · W_Oᵀ + b_O, `[T, out]`. */
  attentionOutput: Tensor;
  /** The residual stream after the layer (attention and feed-forward added), `[T, out]`. */
  residual: Tensor;
}

export interface EncodeResult extends Tokens {
  layers: EncoderLayerResult[];
  /** The sentence embedding, L2-normalised (`outputDim` values). */
  embedding: Float32Array;
}

/** A text, or token ids as they are (each from 0 to vocabSize − 1). */
export type EncodeInput = string | { ids: ArrayLike<number> };

/** A layer's attention parameters, as `nn.MultiheadAttention` names them. */
export type AttentionParameterName = 'in_proj_weight' | 'in_proj_bias' | 'out_proj.weight' | 'out_proj.bias';

export declare class Encoder implements Disposable {
  readonly config: EncoderConfig;
  readonly disposed: boolean;
  /**
   * Tokenize as the model does (NFKC, spaces as "▁", the best split into pieces). Any string is
   * accepted (lone surrogates, NUL, megabytes of text): every token comes back unless `truncate`.
   */
  tokenize(text: string, options?: TokenizeOptions): Tokens;
  /**
   * Run the model. Throws an MhaError with code `'TOO_LARGE'` for more than `maxTokens` tokens
   * (unless `truncate`), `'INVALID_ARGUMENT'` for bad ids or ablation pairs.
   */
  encode(input: EncodeInput, options?: EncodeOptions): EncodeResult;
  /**
   * A layer's attention parameter: `in_proj_weight` `[3E, E]` (q, k, v stacked; q is scaled by
   * 1/√hd inside attention), `in_proj_bias` `[3E]`, `out_proj.weight` (W_O) `[out, E]`,
   * `out_proj.bias` `[out]`.
   */
  parameter(layer: number, name: AttentionParameterName): Tensor;
  /** Frees the WebAssembly memory; later calls throw an MhaError with code `'DISPOSED'`. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * Load the pretrained encoder (Universal Sentence Encoder lite): the WebAssembly module and the
 * model folder's files, each checked against the manifest's size and SHA-256. A missing or
 * damaged file rejects with an MhaError with code `'MODEL_FILE'` whose message names the file.
 */
export function loadEncoder(options?: LoadEncoderOptions): Promise<Encoder>;

/** The model folder loadEncoder() reads when given no `modelUrl`. */
export declare const DEFAULT_MODEL_URL: string;

/**
 * The word index of each piece, as {@link Tokens.words} gives it: a piece begins a word when it
 * is the first, when it starts with `"▁"`, when it is all punctuation or symbols (Unicode P* and
 * S*, its leading `"▁"` aside), or when the piece before it is.
 */
export function wordsOfPieces(pieces: readonly string[]): number[];

/** The names {@link Encoder.parameter} takes. */
export declare const ATTENTION_PARAMETERS: readonly AttentionParameterName[];

// ---------------------------------------------------------------------------------------------
// Off the main thread (web/lib/encoder-worker.js)

export interface WorkerEncoderOptions extends Omit<LoadEncoderOptions, 'wasmBinary'> {
  /** Where encoder-worker-entry.js is (default: beside encoder-worker.js). */
  workerUrl?: string | URL;
}

/** The encoder in a Web Worker: the same methods, each returning a promise. */
export interface WorkerEncoder {
  readonly config: EncoderConfig;
  readonly disposed: boolean;
  tokenize(text: string, options?: TokenizeOptions): Promise<Tokens>;
  encode(input: EncodeInput, options?: EncodeOptions): Promise<EncodeResult>;
  parameter(layer: number, name: AttentionParameterName): Promise<Tensor>;
  /** Stops the worker (pending calls reject with code `'DISPOSED'`). */
  dispose(): void;
}

/**
 * Start a module Web Worker that loads the encoder (browsers). Resolves once the model is in;
 * rejects as loadEncoder() does, or with code `'WORKER_ERROR'` if the worker cannot start.
 */
export function createWorkerEncoder(options?: WorkerEncoderOptions): Promise<WorkerEncoder>;
