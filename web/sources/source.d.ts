// Where heads come from. Every source of heads (designed, random, a weights file, the trained
// model, the pretrained encoder) implements HeadSource, and the page and the element show any of
// them with the same views (web/views). A source asks the JS API; it knows nothing of the views.
// This file also declares the helpers of source.js beside it (its module's types).

import type { HeadStatistics, MhaModule, MultiHeadAttention, Tensor, TensorInput, WorkerMhaModule, WorkerMultiHeadAttention } from '../lib/index.js';

/** The JS API a source loads its weights into: the page's core (loadMha) or a worker's (createWorkerMha). */
export type AnyMhaModule = MhaModule | WorkerMhaModule;
/** A MultiHeadAttention of either. */
export type AnyAttention = MultiHeadAttention | WorkerMultiHeadAttention;

/** A token as the views show it, plus whatever the source needs to compute. */
export interface Token {
  text: string;
  /** A short tag under the token (part of speech, category, "piece"). */
  tag: string;
  /** The parse in words, shown as a tooltip. */
  details?: string[];
  /** A class for the token strip (its colour). */
  className?: string;
  /** The word a subword piece belongs to: pieces of one word are shown joined. */
  word?: number;
  [field: string]: unknown;
}

/** A sentence as a source read it; T: its tokens, with what the source keeps of each. */
export interface Sentence<T extends Token = Token> {
  text: string;
  /** The index of the example sentence, or -1 for typed text. */
  example: number;
  tokens: T[];
  /** What the source read in the sentence, in words (the parse, the grammar's links). */
  summary?: string;
  /** The token the W_O view follows first. */
  focus: number;
  [field: string]: unknown;
}

/** What the core computed for a sentence, for the layer shown. */
export interface HeadResult {
  /** Per-head attention weights, shape [H, L, L]. */
  weights: Tensor;
  /** The core's statistics of each head. */
  stats: HeadStatistics[];
  /** The core's Jensen–Shannon divergence between every pair of heads, H × H. */
  similarity: Float64Array | number[];
  /** Each head's output before concatenation, [H, L, hd]; null where the source has none. */
  headOutputs?: Tensor | null;
  /** Concat(head_1 … head_H), [L, E]. */
  concat?: Tensor | null;
  /** The attention output after W_O, [L, out]. */
  output?: Tensor | null;
  /** out_proj.weight, [out, E]. */
  wo?: Tensor | null;
  /** Every layer's weights [H, L, L], for a source with several layers (the model view). */
  layers?: Tensor[];
}

/** How far each token moves with some heads switched off: ‖a_t − b_t‖ and ‖a_t‖ per token. */
export interface TokenDifference {
  difference: number;
  baseline: number;
}

/** A sentence with heads switched off: per token, how far what `what` names moves. */
export interface AblationResult {
  rows: TokenDifference[];
  /** What moves, in words: "output", "final hidden state". */
  what: string;
  /** A model's run with the heads off (its logits: the predictions with them off). */
  run?: { logits: Tensor | null };
}

/** A token a model predicts, with its probability. */
export interface Prediction {
  id: number;
  text: string;
  probability: number;
}

/** Two sentences' embeddings compared, and again with each head switched off in turn. */
export interface SimilarityResult {
  /** Cosine similarity of the two embeddings. */
  similarity: number;
  heads: { layer: number; head: number; similarity: number; change: number }[];
}

/** A head's figure on a role: its mean share on the test half, with its 95% interval [low, high]. */
export interface RoleFigure {
  score: number;
  ci: number[];
}

/** A head's figure on a relation: its accuracy on n test instances, and the strongest baseline's. */
export interface RelationFigure extends RoleFigure {
  n: number;
  baseline: { name: string; score: number };
}

/** One head measured by the rule of web/roles/evaluate.js. */
export interface HeadRoleEntry {
  layer: number;
  head: number;
  /** The role or relation it is named by, or 'broad' or 'mixed'. */
  label: string;
  kind: 'role' | 'relation' | 'broad' | 'mixed';
  roles: Record<string, RoleFigure>;
  relations: Record<string, RelationFigure>;
  normalizedEntropy: number;
}

/** What each head does (web/roles/evaluate.js evaluateHeads): the roles table. */
export interface HeadRoles {
  /** Which source measured it (the table files and the page say). */
  source?: 'pretrained' | 'trained' | 'file' | 'model';
  /** skipped: the ids of sentences whose tokens did not line up with their words. */
  corpus: { sentences: number; split: { dev: number; test: number }; skipped?: string[] };
  rule: {
    resamples: number;
    seed: number;
    interval: number;
    roleFloor: number;
    roleUniformFactor: number;
    broadEntropy: number;
    roles: Record<string, { threshold: number; uniform: { dev: number; test: number } }>;
    relations: Record<string, {
      n: number;
      nDev: number;
      strongest: { name: string; score: number };
      baselines: { name: string; dev: number; score: number }[];
      /** A causal model's: the instances whose keys all come after the query, left out (test and dev). */
      notVisible?: { n: number; nDev: number };
    }>;
    /** A causal model's: relations whose keys always come after the query, which its mask hides; not scored. */
    notVisible?: Record<string, { n: number; nDev: number }>;
  };
  heads: HeadRoleEntry[];
  /** The trained model's table only: the core's mean weight of each head on each relation over held-out sentences (Trainer.evaluate). */
  heldOut?: { sentences: number; heads: import('../lib/wasm/mha_train.js').HeadScore[] };
  /** Per relation, the test instances ([sentence, query, ...keys]) and the word each head picked. */
  evidence?: {
    sentences: { id: string; words: string[] }[];
    relations: Record<string, { items: number[][]; chosen: Record<string, number[]> }>;
  };
}

/** How far a measurement has gone: sentences done of total. */
export type MeasureProgress = (progress: { done: number; total: number }) => void;

/** What the free-text box says while a source is shown. */
export interface TextHelp {
  help: string;
  placeholder: string;
}

export interface HeadSource {
  readonly id: 'designed' | 'random' | 'file' | 'trained' | 'pretrained' | 'model';
  /** "designed heads", for status lines. */
  readonly name: string;
  readonly numLayers: number;
  /** The layer shown, 0-based; settable when numLayers > 1. */
  layer: number;
  readonly numHeads: number;
  /** Key/value heads, where query heads share them (grouped-query attention); numHeads or absent where each head has its own. */
  readonly numKvHeads?: number;
  /** Rows see only earlier tokens. */
  readonly causal: boolean;
  readonly maxTokens: number;
  /** d_model of the layer shown: the width of its input. */
  readonly embedDim: number;
  /** Which sentences it takes: sources with the same set keep the sentence shown when switched. */
  readonly sentenceSet: 'lesson' | 'grammar';
  /** Whether its forward passes may run in a Web Worker's core (one attention layer). */
  readonly runsInWorker: boolean;
  /**
   * For a source that opens its own work in a worker of its own (a model fetched from a URL):
   * whether it did. The explorer loads it again when its `worker` option asks for the other place.
   */
  readonly ownWorker?: boolean | null;
  /** The MultiHeadAttention holding its weights, for a download; null before load. */
  readonly attention?: AnyAttention | null;
  /** Its heads measured over a corpus; null before load. */
  readonly roles?: HeadRoles | null;
  /** Set up the weights in a JS API module, direct (loadMha) or a worker's; rejects with a clear message. */
  load(mha: AnyMhaModule): Promise<void>;
  /** The sentences offered. */
  examples(): { text: string; shows: string }[];
  /** A typed text or an example's index; rejects with a message (too long, unknown words). */
  /** write: what a model that writes on writes after the text (the model source; others leave it). */
  sentence(input: string | number, write?: unknown): Promise<Sentence>;
  /** The layer shown, computed by the core. `parts`: head outputs, concatenation and output too. */
  compute(sentence: Sentence, options?: { parts?: boolean }): Promise<HeadResult>;
  /** "Head 3 – previous token". */
  title(head: number): string;
  /** "previous". */
  short(head: number): string;
  /** What the head does, in words: focus (from its statistics, its design and its map on this sentence), typical, how. */
  describe(head: number, stats: HeadStatistics, sentence: Sentence, map: Float32Array): { focus: string; typical?: string; how?: string };
  /**
   * Whether the head's label holds on this sentence; holds is null where there is nothing to
   * check. followsParse: checked against the tagger's parse its features come from (then guess:
   * the parse's relations on the rows checked; limits: why the text is likely outside what the
   * tagger reads; note: how far the parse is right); title: the question the check answers.
   */
  check(head: number, map: Float32Array, sentence: Sentence, stats: HeadStatistics): {
    holds: boolean | null; text: string; title?: string; followsParse?: boolean; guess?: string; limits?: string[]; note?: string;
  } | undefined;
  /** What these heads are, in a sentence or two. */
  note(): string;
  dispose(): void;
  /** What loading does, shown while it loads. */
  loadingNote?(): string;
  /** Stops a load under way (a download): load() then rejects with a message saying so. */
  stop?(): void;
  /** The note under the sentence list on the sentence shown. */
  sentenceNote?(sentence: Sentence): string;
  /** The free-text box's help and placeholder, in place of the page's own. */
  textHelp?(): TextHelp;
  /** How far each token moves with `heads` (of the layer shown) switched off. */
  ablation?(sentence: Sentence, heads: number[]): Promise<AblationResult>;
  /** out_proj.weight of the layer shown, [out, E]. */
  outProjectionWeight?(): Promise<Tensor>;
  /** Head h's rows of W_Q, W_K and W_V (hd × E each), as [name, rows] blocks. */
  headWeightRows?(h: number): Promise<[string, Float32Array][]>;
  /** What the W_O view says of this source's W_O. */
  woNote?(): string;
  /** Why the W_O view is empty, for a source without head outputs. */
  woMissing?(): string;
  /** Measure the heads (a source whose heads are named only on demand); sets roles. */
  measureRoles?(onProgress?: MeasureProgress): Promise<HeadRoles>;
  /** Measure the heads again in the page, by the code that made the shipped table. */
  remeasure?(onProgress?: MeasureProgress): Promise<HeadRoles>;
  /** Two texts' embedding similarity, and how each head switched off moves it. */
  similarity?(textA: string, textB: string): Promise<SimilarityResult>;
  /** Whether predictions() has an LM head to read. */
  readonly predicts?: boolean;
  /** The k most probable tokens at a position of a run (GPT-2: the next token; BERT: the token there). */
  predictions?(run: { logits: Tensor | null }, position: number, k?: number): Prediction[];
  /** Each head's importance on the model's own task over the sentence, (layers, heads). */
  headImportance?(sentence: Sentence): Promise<{ data: Float32Array; shape: [number, number] }>;
  /** Whether the head detectors apply (a causal language model with a tokenizer). */
  readonly detects?: boolean;
  /** Previous-token, duplicate-token and induction scores of every head on repeated random tokens (web/lib/detectors.js). */
  detectHeads?(options?: { seed?: number; count?: number; length?: number; onProgress?: (p: { done: number; total: number }) => void }): Promise<DetectorResult>;
  /** Whether the model writes on (a causal model that predicts the next token). */
  readonly writes?: boolean;
  /** The sentence with `steps` tokens the model writes after it (its `written` of them marked, `write` set), run whole. */
  write?(sentence: Sentence, write: WriteState): Promise<Sentence>;
}

/** What the model writes after the text: steps tokens, the most probable or drawn with a temperature and top-k from a seed. */
export interface WriteState {
  steps: number;
  temperature?: number;
  topK?: number;
  seed?: number;
}

/** The head detectors' result: the sequences, their controls, every head's scores, the BOS id and N. */
export interface DetectorResult {
  sequences: number[][];
  controls: number[][];
  heads: import('../lib/detectors.js').DetectedHead[];
  bos: number;
  length: number;
}

// source.js

/** The core's statistics and head-to-head divergences for per-head weights (H, L, L). */
export function analyseHeads(mha: AnyMhaModule, weights: TensorInput): Promise<{ stats: HeadStatistics[]; similarity: Float64Array }>;
/** Head h's (L, L) map: a view into per-head weights { data, shape: [H, L, L] }. */
export function headMap(weights: Tensor, h: number): Float32Array;
/** Every head's map, in order. */
export function headMaps(weights: Tensor): Float32Array[];
/** Per token t: ‖a_t − b_t‖ and ‖a_t‖ for two (L, E) outputs. */
export function tokenDifferences(a: ArrayLike<number>, b: ArrayLike<number>, L: number, E: number): TokenDifference[];
/** A clear message when a sentence has more tokens than a source takes. */
export function tooManyTokens(count: number, max: number, unit?: string, what?: string): Error;
