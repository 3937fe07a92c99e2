// Where heads come from. Every source of heads (designed, random, a weights file, the trained
// model, the pretrained encoder) implements HeadSource, and the page and the element show any of
// them with the same views (web/views). A source asks the JS API; it knows nothing of the views.

import type { HeadStatistics, Tensor } from '../lib/index.js';

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

export interface Sentence {
  text: string;
  /** The index of the example sentence, or -1 for typed text. */
  example: number;
  tokens: Token[];
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
}

export interface HeadSource {
  readonly id: 'designed' | 'random' | 'file' | 'trained' | 'pretrained';
  /** "designed heads", for status lines. */
  readonly name: string;
  readonly numLayers: number;
  /** The layer shown, 0-based; settable when numLayers > 1. */
  layer: number;
  readonly numHeads: number;
  /** Rows see only earlier tokens. */
  readonly causal: boolean;
  readonly maxTokens: number;
  /** Set up the weights in a JS API module, direct (loadMha) or a worker's; rejects with a clear message. */
  load(mha: unknown): Promise<void>;
  /** The sentences offered. */
  examples(): { text: string; shows: string }[];
  /** A typed text or an example's index; rejects with a message (too long, unknown words). */
  sentence(input: string | number): Promise<Sentence>;
  /** The layer shown, computed by the core. `parts`: head outputs, concatenation and output too. */
  compute(sentence: Sentence, options?: { parts?: boolean }): Promise<HeadResult>;
  /** "Head 3 – previous token". */
  title(head: number): string;
  /** "previous". */
  short(head: number): string;
  /** What the head does, in words: focus (from its statistics or its design), typical, how. */
  describe(head: number, stats: HeadStatistics, sentence: Sentence): { focus: string; typical?: string; how?: string };
  /** Whether the head's label holds on this sentence; holds is null where there is nothing to check. */
  check(head: number, map: Float32Array, sentence: Sentence, stats: HeadStatistics): { holds: boolean | null; text: string } | undefined;
  /** What these heads are, in a sentence or two. */
  note(): string;
  dispose(): void;
}
