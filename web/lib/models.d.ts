// Types of web/lib/models.js: checkpoints in Hugging Face layout (the families of docs/models.md).
export * from "./detectors.js";

/** A float tensor, row-major. */
export interface ModelTensor {
  data: Float32Array;
  shape: number[];
}

/** config.json as the core read it, normalised: the same fields for every family. */
export interface ModelConfig {
  /** The family as people write it ('GPT-2', 'BERT'): for display only; code asks `causal` and `task`. */
  name: string;
  architecture: string;
  /** Each position attends to itself and the positions before it (a decoder). */
  causal: boolean;
  /** What the head predicts: the next token, the token at each position (masked LM), or nothing (hidden states only). */
  task: 'next-token' | 'masked' | 'none';
  /** Each sublayer's norm comes before it (GPT-2), else after its residual add (BERT). */
  preNorm: boolean;
  /** The file stores linear weights [in, out] (a Conv1D layer), not nn.Linear's (out, in). */
  conv1d: boolean;
  /** W_O's name in the file, '{l}' standing for the layer: 'h.{l}.attn.c_proj'. */
  attentionOutputName: string;
  vocabSize: number;
  maxPositions: number;
  hidden: number;
  numLayers: number;
  numHeads: number;
  /** Key/value heads G (grouped-query attention: query head h reads key/value head h / (numHeads / G)); numHeads when every head has its own. */
  numKvHeads: number;
  /** Each head's width (hidden / numHeads unless the config sets head_dim). */
  headDim: number;
  intermediate: number;
  layerNormEps: number;
  activation: string;
  tieWordEmbeddings: boolean;
  /** task is not 'none': run() gives logits */
  lmHead: boolean;
  pooler: boolean;
  parameters: number;
}

/** W: a layer's weights; ModelTensor | null where run's weightsLayer may leave a layer's out. */
export interface ModelRunResult<W = ModelTensor> {
  ids: number[];
  /** per layer: weights (H, T, T) (null for a layer weightsLayer leaves out), with pooledSize the weights max-pooled (H, S, S), and the residual stream after the layer (T, E); with headOutputs also each head's output (H, T, hd), their concatenation (T, E) and the attention output after W_O (T, E) */
  layers: Array<{ weights: W; residual: ModelTensor; pooled?: ModelTensor; headOutputs?: ModelTensor; concat?: ModelTensor; attentionOutput?: ModelTensor }>;
  /** GPT-2 after ln_f; BERT the last layer's output: (T, E) */
  hidden: ModelTensor;
  /** (T, vocab) with an LM head, else null */
  logits: ModelTensor | null;
  /** (E) with a BERT pooler, else null */
  pooled: ModelTensor | null;
}

export interface ModelRunOptions {
  /** (layer, head) pairs switched off */
  ablate?: Array<[number, number]>;
  /** Also each layer's head outputs, their concatenation and the attention output (default false). */
  headOutputs?: boolean;
  /**
   * Which layer keeps its weights (H, T, T), and with headOutputs its head outputs: 'all'
   * (default), one layer, or 'none'. GPT-2 small's
   * maps at 1,024 tokens are 604 MB for all 12 layers, 50 MB for one.
   */
  weightsLayer?: number | 'all' | 'none';
  /**
   * S > 0: every layer's weights also max-pooled to (H, S', S'), S' = min(T, S): cell (a, b) the
   * largest weight of rows [⌊aT/S'⌋, ⌊(a+1)T/S'⌋) and columns [⌊bT/S'⌋, ⌊(b+1)T/S'⌋). Default 0.
   */
  pooledSize?: number;
}

/** The model's tokenizer (tokenizer.json, read by Hugging Face's tokenizer library). */
export interface TokenizerInfo {
  /** tokenizer.json's model type, in lower case */
  kind: 'bpe' | 'wordpiece' | 'unigram';
  /** as a reader knows it: 'byte-level BPE' (GPT-2, Llama 3), 'WordPiece' (BERT), 'BPE with byte fallback' (Llama 2), 'Unigram', 'BPE' */
  name: string;
  /** the vocabulary with the added tokens */
  vocabSize: number;
  /** the token a masked LM fills in (tokenizer_config.json's mask_token, else the special token [MASK] or <mask>), or null */
  maskId: number | null;
}

/**
 * How the pieces of ids read, from the tokenizer's own decoder: a piece whose decoded text
 * begins with white space starts a word; punctuation and special tokens are words of their own.
 */
export interface TokenReading {
  /** the vocabulary's strings, as tokenizer.json spells them ('Ġcat', '##s', '▁cat') */
  pieces: string[];
  /** what each piece shows: the decoder's text of it (' cat', 's'); pieces that split a character's bytes (Llama 2's '<0xF0>', byte-level BPE's 'ðŁ'), that character each; bytes that spell no whole character, as spelled */
  texts: string[];
  /** the word of each piece, 0, 1, … */
  words: number[];
  /** each piece in SentencePiece's convention: '▁' where a word starts, then the characters that begin in it, without white space */
  marked: string[];
  /** which pieces are special tokens ([CLS], <|endoftext|>, <s>) */
  special: boolean[];
}

/** A download's progress: bytes of `file` so far; `total` its Content-Length, 0 while not known (as in a ProgressEvent). */
export interface ModelProgress {
  /** 'config.json', 'model.safetensors' or 'tokenizer.json' */
  file: string;
  loaded: number;
  /** the last event of each file has loaded === total */
  total: number;
}

export interface LoadModelOptions {
  /** Refused above this, each file (default MODEL_LIMITS.maxFileBytes); over HTTP checked on the Content-Length before the body is read, and on the bytes. */
  maxFileBytes?: number;
  /** Refused when the weights and one run of 128 tokens would take more (default MODEL_LIMITS.maxMemoryBytes, 2 GiB): planned from config.json before the weights are read, the message giving the numbers. */
  maxMemoryBytes?: number;
  /** Called while files download (a folder URL): per file, from loaded 0 to loaded === total. */
  onProgress?: (progress: ModelProgress) => void;
  /** Aborts the load: it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** A Hub repository (`hf:owner/name`): the branch, tag or commit (default main). */
  revision?: string;
  /** A Hub repository: the Hub or a mirror (default HF_ENDPOINT in Node.js, else https://huggingface.co). */
  endpoint?: string;
  /** A Hub repository: keep its files (Cache Storage in a browser, a folder in Node.js; default true). */
  cache?: boolean;
  /** Node.js: the cache folder (default MHA_HUB_CACHE, else $HF_HOME/mha-explorer). */
  cacheDir?: string;
  /** A Hub repository: what will be fetched, once the memory plan has passed and before any weight is. */
  onPlan?: (plan: HubPlan & { fits: true }) => void;
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where mha_models.wasm is, if not beside models.js. */
  wasmUrl?: string | URL;
  /**
   * Which module: `'auto'` (default) the pthreads module (2 threads) in Node.js and in pages and
   * workers that are crossOriginIsolated with this package on their origin (see
   * {@link modelThreadsAvailable}), the single-thread module elsewhere, or when it cannot start,
   * or with wasmBinary / wasmUrl (the single-thread module's bytes); `true` insists on threads,
   * `false` keeps to one. Both give the same results.
   */
  threads?: 'auto' | boolean;
}

export interface HubOptions {
  revision?: string;
  endpoint?: string;
  cache?: boolean;
  cacheDir?: string;
  signal?: AbortSignal;
}

export interface PlannedFile {
  file: string;
  /** from the Hub's listing (0: not listed) */
  bytes: number;
  cached: boolean;
}

/** What opening a Hub repository fetches. */
export interface HubPlan {
  repo: string;
  revision: string;
  /** the commit the revision resolved to */
  commit: string;
  endpoint: string;
  files: PlannedFile[];
  bytes: number;
  /** bytes not in the cache */
  downloadBytes: number;
}

export interface CachedModel {
  repo: string;
  commit: string;
  /** the revisions that resolved to this commit */
  revisions: string[];
  files: Record<string, number>;
  bytes: number;
}

export declare function hubModelInfo(id: string, options?: HubOptions): Promise<HubPlan>;
export declare function listCachedModels(options?: { cacheDir?: string }): Promise<CachedModel[]>;
export declare function deleteCachedModel(id: string, options?: { cacheDir?: string }): Promise<number>;

export interface LoadWorkerModelOptions extends LoadModelOptions {
  /** models-worker-entry.js, if not beside models-worker.js (a bundler finds it without help). */
  workerUrl?: string | URL;
  /**
   * The most ms one text may take to tokenize (default 5000): texts are tokenized in a worker of
   * their own (tokenizer-worker-entry.js), ended and started again when a text takes longer;
   * encode(), run(text) and headImportance(text) then reject with TIMEOUT, and the model stays usable.
   */
  tokenizeTimeLimit?: number;
  /** How a TIMEOUT's message names what sets the limit (default 'the option tokenizeTimeLimit'; null: not named). */
  tokenizeTimeLimitSetting?: string | null;
}

export interface ExtendOptions {
  /** Write after the cached text's first `from` positions (0: a new text), dropping the rest. Default: after all of it. */
  from?: number;
}

/** What extend() computed for R new tokens at positions first .. first + R - 1. */
export interface ModelExtendResult {
  ids: number[];
  first: number;
  /** per layer: the new rows of attention (H, R, S), S = first + R: every position so far */
  layers: Array<{ weights: ModelTensor }>;
  /** (R, vocab) with an LM head, else null */
  logits: ModelTensor | null;
}

/**
 * How generate() picks each token: the most probable (greedy, the default when neither
 * temperature nor topK is given), or drawn from softmax(logits / temperature) over the topK
 * most probable tokens (all when absent) with mulberry32(seed) (seed 0 when absent).
 */
export interface GenerateOptions {
  greedy?: boolean;
  /** > 0 */
  temperature?: number;
  /** a whole number >= 1; 1 is greedy */
  topK?: number;
  /** 0 .. 2^32 - 1: the same seed gives the same text (the token at each position drawn from a stream of its own, so step by step or at once alike) */
  seed?: number;
  /** A text or ids to write after, starting the cached text again; absent: after the cached text. */
  prompt?: string | number[] | Int32Array;
}

export interface GenerateStep {
  id: number;
  /** the model's probability of it (softmax of the logits at temperature 1) */
  probability: number;
  position: number;
  /** per layer: the new token's attention row (H, 1, position + 1) */
  layers: Array<{ weights: ModelTensor }>;
}

export interface GenerateResult {
  /** the n ids written */
  ids: number[];
  /** the position of the first */
  first: number;
  steps: GenerateStep[];
}

export interface HeadImportance {
  ids: number[];
  /** (layers, heads) */
  data: Float32Array;
  shape: [number, number];
}

/** Memory in bytes: the models' WebAssembly module (it only grows; the models of a page or worker share it) and this model's weights in it. */
export interface ModelMemory {
  moduleBytes: number;
  weightBytes: number;
  /** what the last run's results hold in the module (maps, streams, logits) */
  resultBytes: number;
}

/** A file's content: text, bytes or a File / Blob. */
export type ModelFileContent = string | ArrayBuffer | ArrayBufferView | Blob;

export declare const MODEL_LIMITS: Readonly<{ maxFileBytes: number; maxMemoryBytes: number }>;

/** What loadModel() and loadWorkerModel() open: a folder URL or path, Files, a Map or an object of file name to content. */
export type ModelFiles = string | URL | Iterable<File> | Map<string, ModelFileContent> | Record<string, ModelFileContent>;

export declare class Model {
  readonly config: Readonly<ModelConfig>;
  /** Threads the model computes with: 2 on the pthreads module, 1 on the single-thread one. */
  readonly threads: number;
  /** null without tokenizer.json */
  readonly tokenizer: Readonly<TokenizerInfo> | null;
  /** Whether dispose() has been called (every method throws DISPOSED then). */
  readonly disposed: boolean;
  /** The ids of a text, with the post-processor's special tokens. */
  encode(text: string): number[];
  /** The vocabulary's strings for ids ('' for an id it has not). */
  tokens(ids: number[] | Int32Array): string[];
  /** The module's memory and the weights' share of it. */
  memory(): ModelMemory;
  /** How the pieces of ids read: what each shows, the word of each. */
  read(ids: number[] | Int32Array): TokenReading;
  run(input: string | number[] | Int32Array, options?: ModelRunOptions & { weightsLayer?: 'all' }): ModelRunResult;
  run(input: string | number[] | Int32Array, options: ModelRunOptions): ModelRunResult<ModelTensor | null>;
  /** GPT-2: per layer and head, the mean drop in log p(actual next token) with that head switched off: (L, H) */
  headImportance(input: string | number[] | Int32Array): HeadImportance;
  /**
   * A causal model writing on: appends a text or ids to the text held in the key/value cache and
   * computes the new positions only (each layer's keys and values of the text so far are kept).
   * A model that attends both ways (BERT) throws INVALID_ARGUMENT; past maxPositions TOO_LARGE.
   */
  extend(input: string | number[] | Int32Array, options?: ExtendOptions): ModelExtendResult;
  /** The positions the key/value cache holds. */
  cachedLength(): number;
  /** Writes n tokens, one cached step each, after options.prompt or the cached text. */
  generate(n: number, options?: GenerateOptions): GenerateResult;
  /** The k most probable tokens at a position (the last by default): [[id, probability], …] */
  top(result: Pick<ModelRunResult, 'logits'>, k?: number, position?: number): Array<[number, number]>;
  /** A parameter of a layer's attention in nn.MultiheadAttention's names and layout: 'in_proj_weight' (3E, E), 'in_proj_bias', 'out_proj.weight' (E, E), 'out_proj.bias' (GPT-2's Conv1D weights transposed). */
  attentionParameter(layer: number, name: string): ModelTensor;
  /**
   * The tokenizer in a worker of its own (a worker_threads thread in Node.js), with a time limit
   * per text (default 5000 ms): encode() and run(text) here tokenize on the calling thread, which
   * nothing can stop while a stranger's tokenizer.json backtracks. setting: how the message
   * names what sets the limit (default 'the option timeLimit').
   */
  tokenizerWorker(options?: { timeLimit?: number; setting?: string }): TokenizerWorker;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** How long one text may take to tokenize in a worker, in ms (5000), unless tokenizeTimeLimit says. */
export declare const TOKENIZE_TIME_LIMIT: number;

/**
 * A model's tokenizer in a worker, texts tokenized one after another. A text that takes longer
 * than timeLimit ms rejects with an MhaError 'TIMEOUT' naming the tokenizer and the text's
 * length; that worker is ended and a new one started, and the model stays usable.
 */
export interface TokenizerWorker {
  readonly timeLimit: number;
  encode(text: string): Promise<number[]>;
  dispose(): void;
}

/**
 * Opens config.json, model.safetensors (or the only *.safetensors) and tokenizer.json (optional,
 * with tokenizer_config.json where there is one, from a folder or Files):
 * an http(s) URL of a folder or of its config.json (a relative URL in a page is the page's), a
 * folder path or file: URL in Node.js, Files (a folder picked or dropped), a Map or an object of
 * file name to content. Over HTTP a 404 of tokenizer.json means none; any other failure is an
 * MhaError 'MODEL_FILE' naming the URL. Sharded checkpoints (model.safetensors.index.json) are
 * not supported.
 */
export declare function loadModel(files: ModelFiles, options?: LoadModelOptions): Promise<Model>;

/** Model's members with every method answered by a Web Worker (top() is computed here, from the logits). */
export interface WorkerModel {
  readonly config: Readonly<ModelConfig>;
  /** Threads the worker's model computes with (2 when the page is crossOriginIsolated). */
  readonly threads: number;
  readonly tokenizer: Readonly<TokenizerInfo> | null;
  readonly disposed: boolean;
  encode(text: string): Promise<number[]>;
  tokens(ids: number[] | Int32Array): Promise<string[]>;
  /** The worker's module's memory and the weights' share of it. */
  memory(): Promise<ModelMemory>;
  read(ids: number[] | Int32Array): Promise<TokenReading>;
  run(input: string | number[] | Int32Array, options?: ModelRunOptions & { weightsLayer?: 'all' }): Promise<ModelRunResult>;
  run(input: string | number[] | Int32Array, options: ModelRunOptions): Promise<ModelRunResult<ModelTensor | null>>;
  headImportance(input: string | number[] | Int32Array): Promise<HeadImportance>;
  extend(input: string | number[] | Int32Array, options?: ExtendOptions): Promise<ModelExtendResult>;
  cachedLength(): Promise<number>;
  generate(n: number, options?: GenerateOptions): Promise<GenerateResult>;
  top(result: Pick<ModelRunResult, 'logits'>, k?: number, position?: number): Promise<Array<[number, number]>>;
  attentionParameter(layer: number, name: string): Promise<ModelTensor>;
  /** Ends the worker, and with it the model's memory; later calls reject with DISPOSED. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * loadModel() in a module worker (models-worker-entry.js): the page stays responsive while the
 * weights download and parse and while the model runs. ArrayBuffers and typed arrays that own
 * their buffer are moved to the worker (the caller's become empty); Files and Blobs are cloned.
 * Needs Web Workers.
 */
export declare function loadWorkerModel(files: ModelFiles, options?: LoadWorkerModelOptions): Promise<WorkerModel>;

export declare function loadModelsCore(options?: { wasmBinary?: ArrayBuffer | Uint8Array; wasmUrl?: string | URL; threads?: 'auto' | boolean }): Promise<unknown>;

/**
 * Whether the models' pthreads module can run here: Node.js, or a page (or its workers) served
 * crossOriginIsolated (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy:
 * require-corp) with this package on the page's origin.
 */
export declare function modelThreadsAvailable(): boolean;
