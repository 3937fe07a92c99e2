// The models' module (cpp/bindings/models_bindings.cpp): ModelSession, as web/lib/models.js calls it.
import type { EmbindObject, EmscriptenModule, ModuleFactory, Outcome } from '../wasm-module.js';
import type { ModelConfig } from '../models.js';

export interface ModelSession extends EmbindObject {
  /** A buffer of `bytes` in the module's memory for the safetensors file; load() reads and frees it. */
  weightsBuffer(bytes: number): Uint8Array;
  load(config: string, configFile: string, weightsFile: string, maxFileBytes: number, maxParameters: number): Outcome;
  loadTokenizer(json: string, file: string): Outcome;
  config(): ModelConfig;
  hasTokenizer(): boolean;
  tokenizerKind(): 'bpe' | 'wordpiece';
  token(id: number): string;
  tokenId(token: string): number;
  encode(text: string): Outcome;
  /** The session's ids, resized to `count` first unless it is negative. */
  ids(count: number): Int32Array;
  ablate(count: number): Int32Array;
  run(): Outcome;
  headImportance(): Outcome;
  importance(): Float32Array;
  layerWeights(layer: number): Float32Array;
  layerResidual(layer: number): Float32Array;
  hidden(): Float32Array;
  logits(): Float32Array;
  pooled(): Float32Array;
  dispose(): void;
}

export interface ModelsModule extends EmscriptenModule {
  ModelSession: new () => ModelSession;
}

declare const createMhaModels: ModuleFactory<ModelsModule>;
export default createMhaModels;
