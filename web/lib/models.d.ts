// Types of web/lib/models.js: GPT-2- and BERT-family checkpoints in Hugging Face layout.

/** A float tensor, row-major. */
export interface ModelTensor {
  data: Float32Array;
  shape: number[];
}

/** config.json as the core read it. */
export interface ModelConfig {
  family: 'gpt2' | 'bert';
  architecture: string;
  vocabSize: number;
  maxPositions: number;
  hidden: number;
  numLayers: number;
  numHeads: number;
  intermediate: number;
  layerNormEps: number;
  activation: string;
  tieWordEmbeddings: boolean;
  /** GPT-2's LM head or BERT's masked-LM head */
  lmHead: boolean;
  pooler: boolean;
  parameters: number;
}

export interface ModelRunResult {
  ids: number[];
  /** per layer: weights (H, T, T) and the residual stream after the layer (T, E) */
  layers: Array<{ weights: ModelTensor; residual: ModelTensor }>;
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
}

export interface LoadModelOptions {
  maxFileBytes?: number;
  maxParameters?: number;
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** A file's content: text, bytes or a File / Blob. */
export type ModelFileContent = string | ArrayBuffer | ArrayBufferView | Blob;

export declare const MODEL_LIMITS: Readonly<{ maxFileBytes: number; maxParameters: number }>;

export declare class Model {
  readonly config: Readonly<ModelConfig>;
  /** 'bpe', 'wordpiece', or null without tokenizer.json */
  readonly tokenizer: 'bpe' | 'wordpiece' | null;
  encode(text: string): number[];
  tokens(ids: number[]): string[];
  run(input: string | number[] | Int32Array, options?: ModelRunOptions): ModelRunResult;
  /** GPT-2: per layer and head, the mean drop in log p(actual next token) with that head switched off: (L, H) */
  headImportance(input: string | number[] | Int32Array): { ids: number[]; data: Float32Array; shape: [number, number] };
  /** The k most probable tokens at a position (the last by default): [[id, probability], …] */
  top(result: Pick<ModelRunResult, 'logits'>, k?: number, position?: number): Array<[number, number]>;
  dispose(): void;
}

/**
 * Opens config.json, model.safetensors (or the only *.safetensors) and tokenizer.json (optional):
 * a folder path or file: URL in Node.js, Files (a folder picked or dropped), a Map or an object of
 * file name to content.
 */
export declare function loadModel(
  files: string | URL | Iterable<File> | Map<string, ModelFileContent> | Record<string, ModelFileContent>,
  options?: LoadModelOptions,
): Promise<Model>;

export declare function loadModelsCore(options?: { wasmBinary?: ArrayBuffer | Uint8Array }): Promise<unknown>;
