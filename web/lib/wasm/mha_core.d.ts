// The inference core (cpp/bindings/bindings.cpp): Attention and Statistics, as web/lib/index.js
// calls them. The pthreads core (threads/mha_core_threads.*) has the same table.
import type { AttentionConfig } from '../index.js';
import type { EmbindObject, EmscriptenModule, ModuleFactory, Outcome, TensorOutcome } from '../wasm-module.js';

export type Shape = readonly number[];

/** An embind enum value. */
export interface MaskDtypeValue {
  value: number;
}

type Flags = 'bias' | 'addBiasKv' | 'addZeroAttn' | 'batchFirst';

/** The API's config as index.js hands it over: the seed apart (init's own argument), every flag given. */
export type CoreConfig = Omit<AttentionConfig, 'seed' | Flags> & Required<Pick<AttentionConfig, Flags>>;

/** The resolved config: every width filled in. */
export type ResolvedCoreConfig = Required<CoreConfig>;

export interface ForwardOptions {
  needWeights: boolean;
  averageAttnWeights: boolean;
  isCausal: boolean;
  returnHeadOutputs: boolean;
  returnConcat: boolean;
  skipOutProj: boolean;
  fullyMaskedRowsZero: boolean;
}

/** What one forward call takes besides its data (a key or value of null: the query's / key's buffer). */
export interface ForwardCall {
  query: Shape;
  key: Shape | null;
  value: Shape | null;
  keyIsQuery: boolean;
  valueIsKey: boolean;
  keyPaddingMask: Shape | null;
  keyPaddingMaskDtype: MaskDtypeValue;
  attnMask: Shape | null;
  attnMaskDtype: MaskDtypeValue;
  options: ForwardOptions;
  ablateHeads: number[] | null;
}

/** Byte offsets of the buffers prepare() sized (0 for one not used). */
export interface InputBuffers extends Outcome {
  query: number;
  key: number;
  value: number;
  keyPaddingMask: number;
  attnMask: number;
}

/** Byte offsets of forward()'s results (0 for one not asked for). */
export interface ForwardOutputs extends Outcome {
  output: number;
  weights: number;
  headOutputs: number;
  concat: number;
}

export type OutputName = 'output' | 'weights' | 'headOutputs' | 'concat';

/** The shapes of the last forward's results (null for one not asked for). */
export type OutputShapes = Record<OutputName, number[] | null>;

export interface Attention extends EmbindObject {
  init(config: CoreConfig, seed: number): Outcome;
  config(): ResolvedCoreConfig;
  parameterNames(): string[];
  getParameter(name: string): TensorOutcome;
  parameterBuffer(name: string, shape: Shape): Outcome & { data: number };
  checkParameter(name: string, shape: Shape): Outcome;
  setParameter(name: string, shape: Shape): Outcome;
  resetParameters(seed: number): void;
  memoryCap(): number;
  setMemoryCap(bytes: number): void;
  prepare(call: ForwardCall): InputBuffers;
  forward(): ForwardOutputs;
  outputShapes(): OutputShapes;
}

export interface MapBuffers extends Outcome {
  a: number;
  b: number;
}

export interface StatisticsResult extends Outcome {
  /** Head h's fields at h * F, in headStatisticsFields() order (a view of the heap). */
  heads: Float64Array;
  /** Likewise per query row (rowStatisticsFields()), or null unless asked for. */
  rows: Float64Array | null;
  /** (N, H, L) of the rows. */
  rowsShape: number[] | null;
  matrix: Float64Array;
  numHeads: number;
  mean: number;
}

export interface Statistics extends EmbindObject {
  prepareOne(shape: Shape): MapBuffers;
  prepareTwo(a: Shape, b: Shape): MapBuffers;
  headStatistics(options: { sparsityThreshold: number; perRow: boolean }): StatisticsResult;
  headSimilarity(): StatisticsResult;
  jsDivergence(): StatisticsResult;
}

export interface CoreModule extends EmscriptenModule {
  Attention: { new (): Attention };
  Statistics: { new (): Statistics };
  MaskDtype: { none: MaskDtypeValue; bool: MaskDtypeValue; float32: MaskDtypeValue };
  headStatisticsFields(): string[];
  rowStatisticsFields(): string[];
  liveObjects(): number;
  numThreads(): number;
  heapBytes(): number;
  heapInUse(): number;
}

/** The pthreads core's module: its pool of worker threads (Node.js: unref'd so they do not keep the process alive). */
export interface ThreadsCoreModule extends CoreModule {
  PThread: { unusedWorkers: { unref?(): void }[]; runningWorkers: { unref?(): void }[] };
}

declare const createMhaCore: ModuleFactory<CoreModule>;
export default createMhaCore;
