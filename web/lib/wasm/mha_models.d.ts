// The models' module (cpp/bindings/models_bindings.cpp): ModelSession, as web/lib/models.js calls it.
import type { EmbindObject, EmscriptenModule, ModuleFactory, Outcome, TensorOutcome } from '../wasm-module.js';
import type { ModelConfig } from '../models.js';

export interface ModelSession extends EmbindObject {
  /** Parses config.json and plans the memory (refused with the numbers past maxMemoryBytes), before any weight; fileBytes 0 when not known. */
  begin(config: string, configFile: string, weightsFile: string, fileBytes: number, maxFileBytes: number, maxMemoryBytes: number): Outcome;
  /** A buffer of `bytes` in the module's memory for the next chunk of the safetensors file (`data`: its byte offset); feed() reads it. */
  chunkBuffer(bytes: number): TensorOutcome;
  /** Reads `bytes` of the chunk into the weights (the kernels' layout). */
  feed(bytes: number): Outcome;
  /** Ends the load: every tensor arrived. */
  finish(): Outcome;
  /** Bytes the weights take in the module. */
  weightBytes(): number;
  config(): ModelConfig;
  /** A buffer of `count` int32 ids (`data`: its byte offset) that run() and headImportance() read (the tokenizer is web/lib/tokenizer.js). */
  idsBuffer(count: number): TensorOutcome;
  /** Runs the ids with the heads of `ablate` ([layer, head, layer, head, …]) switched off; headOutputs: keep each layer's head outputs, concatenation and attention output; weightsLayer: the layer whose weights are kept (-1 every one, -2 none); pooledSize S > 0: every layer's weights max-pooled to (H, S, S) too. */
  run(ablate: number[], headOutputs: boolean, weightsLayer: number, pooledSize: number): Outcome;
  /** (layers, heads) */
  headImportance(): TensorOutcome;
  /** Appends the ids to the text held in the key/value cache (from >= 0: after its first `from` positions), computing the new positions only. */
  extend(from: number): Outcome;
  /** The positions the key/value cache holds. */
  cachedLength(): number;
  /** (H, R, S): the last extend's new rows of attention in a layer */
  extendWeights(layer: number): TensorOutcome;
  /** (R, vocab) */
  extendLogits(): TensorOutcome;
  /** (H, T, T) */
  layerWeights(layer: number): TensorOutcome;
  /** (T, E) */
  layerResidual(layer: number): TensorOutcome;
  /** (H, S, S), after run(…, S) */
  layerPooled(layer: number): TensorOutcome;
  /** Bytes the last run's results hold in the module. */
  resultBytes(): number;
  /** (H, T, hd), after run(…, true) */
  layerHeadOutputs(layer: number): TensorOutcome;
  /** (T, E), after run(…, true) */
  layerConcat(layer: number): TensorOutcome;
  /** (T, E), after run(…, true) */
  layerAttentionOutput(layer: number): TensorOutcome;
  /** A parameter of a layer's attention, in nn.MultiheadAttention's names. */
  attentionParameter(layer: number, name: string): TensorOutcome;
  hidden(): TensorOutcome;
  logits(): TensorOutcome;
  pooled(): TensorOutcome;
  dispose(): void;
}

export interface ModelsModule extends EmscriptenModule {
  ModelSession: new () => ModelSession;
  /** Threads the kernels split their work over: 2 in the pthreads module, else 1. */
  numThreads(): number;
  /** The WebAssembly memory in bytes. */
  heapBytes(): number;
  /** Bytes malloc has handed out and not taken back. */
  heapInUse(): number;
}

declare const createMhaModels: ModuleFactory<ModelsModule>;
export default createMhaModels;
