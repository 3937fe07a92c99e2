// The pretrained encoder's module (cpp/bindings/encoder_bindings.cpp): EncoderSession, as
// web/lib/encoder.js calls it. Typed arrays it returns are views of the heap, valid until the
// next call into the module.
import type { EmbindObject, EmscriptenModule, ModuleFactory, Outcome, TensorOutcome } from '../wasm-module.js';

type Shape = readonly number[];

export interface EncoderLayerConfig {
  embedDim: number;
  numHeads: number;
  outDim: number;
  ffnDim: number;
}

export interface EncoderModelConfig {
  vocabSize: number;
  embeddingRows: number;
  maxTokens: number;
  layerNormEps: number;
  outputDim: number;
}

/** How many tokens the text has, and how many of them the session keeps (truncate: at most maxTokens). */
export interface TokenCount extends Outcome {
  count: number;
  kept: number;
}

/** An embind vector of layer configs (configure's second argument). */
export interface EncoderLayerConfigList extends EmbindObject {
  push_back(layer: EncoderLayerConfig): void;
}

export interface EncoderSession extends EmbindObject {
  configure(model: EncoderModelConfig, layers: EncoderLayerConfigList): Outcome;
  vocabularyBuffer(bytes: number): Outcome & { data: number };
  loadVocabulary(reserved: number): Outcome;
  parameterNames(): string[];
  missingParameters(): string[];
  parameterBuffer(name: string, shape: Shape): Outcome & { data: number };
  setParameter(name: string, shape: Shape): Outcome;
  attentionParameter(layer: number, name: string): TensorOutcome;
  releaseStaging(): void;
  /** A buffer for `units` code points of text (tokenize's input). */
  textBuffer(units: number): Outcome & { data: number };
  tokenize(count: number, truncate: boolean): TokenCount;
  idsBuffer(count: number): Outcome & { data: number };
  fromIds(count: number, truncate: boolean): TokenCount;
  tokenIds(): Int32Array;
  tokenBegins(): Int32Array;
  tokenEnds(): Int32Array;
  /** The normalised text's code points, which tokenBegins/tokenEnds index. */
  tokenText(): Uint32Array;
  /** ablate: [layer, head, layer, head, …]. */
  encode(ablate: number[], truncate: boolean): Outcome;
  /** A layer's result by name (layerResultNames()), or null for a name it does not have. */
  layerResult(layer: number, name: string): Float32Array | null;
  layerShape(layer: number, name: string): number[] | null;
  embedding(): Float32Array;
}

export interface EncoderModule extends EmscriptenModule {
  EncoderSession: { new (): EncoderSession };
  EncoderLayerConfigList: { new (): EncoderLayerConfigList };
  layerResultNames(): string[];
}

declare const createMhaEncoder: ModuleFactory<EncoderModule>;
export default createMhaEncoder;
