// The training module (cpp/bindings/train_bindings.cpp): TrainSession, as web/lib/train.js calls it.
import type { EmbindObject, EmscriptenModule, ModuleFactory, Outcome, TensorOutcome } from '../wasm-module.js';

export interface TrainSettings {
  seed: number;
  learningRate: number;
  steps: number;
  batchSize: number;
  warmup: number;
  heldOut: number;
}

/** One head's score on one relation over the held-out sentences. */
export interface HeadScore {
  layer: number;
  head: number;
  relation: string;
  /** Where it is measured: at the link's query, or the token before it. */
  at: string;
  meanWeight: number;
  argmaxShare: number;
}

export interface Evaluation extends Outcome {
  loss: number;
  agreement: number;
  pronoun: number;
  copy: number;
  sentences: number;
  heads: HeadScore[];
}

/** A ground-truth link of the grammar: the query token attends to the key token. */
export interface Link {
  relation: string;
  query: number;
  key: number;
}

export interface SentenceResult extends Outcome {
  tokens: number[];
  links: Link[];
}

export interface TrainSession extends EmbindObject {
  init(settings: TrainSettings): Outcome;
  vocabulary(): string[];
  categories(): string[];
  relations(): string[];
  context(): number;
  numLayers(): number;
  numHeads(): number;
  labelThreshold(): number;
  step(n: number): Outcome & { loss: number };
  stepsDone(): number;
  learningRate(): number;
  setLearningRate(peak: number): void;
  evaluate(): Evaluation;
  sentence(seed: number): SentenceResult;
  parse(text: string): SentenceResult;
  attention(): TensorOutcome;
  predictions(): TensorOutcome;
  weightsBuffer(bytes: number): TensorOutcome;
  loadWeights(): Outcome;
  saveWeights(): TensorOutcome;
}

export interface TrainModule extends EmscriptenModule {
  TrainSession: {
    new (): TrainSession;
    defaults(): { learningRate: number; steps: number; batchSize: number; warmup: number };
  };
}

declare const createMhaTrain: ModuleFactory<TrainModule>;
export default createMhaTrain;
