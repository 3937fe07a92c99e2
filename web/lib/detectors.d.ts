// Types of web/lib/detectors.js: previous-token, duplicate-token and induction head detectors.

export type DetectorName = 'previousToken' | 'duplicateToken' | 'induction';

export declare const DETECTORS: readonly DetectorName[];
/** A head is named where its score is at least this (ARENA's head-finding threshold). */
export declare const DETECTOR_THRESHOLD: number;

/** (T, T) row-major 0/1: TransformerLens's detection pattern of the ids. */
export declare function detectionPattern(name: DetectorName, ids: number[] | Int32Array): Uint8Array;
/** sum(A ⊙ P) / sum(A), column 0 (BOS) left out. */
export declare function mulScore(attention: ArrayLike<number>, pattern: ArrayLike<number>, T: number): number;

export type DetectorScores = Record<DetectorName, number>;

/** [layer][head] scores of per-layer weights (H, T, T) against the patterns of patternIds. */
export declare function scoreHeads(layers: Array<{ data: ArrayLike<number>; shape: number[] }>, patternIds: number[] | Int32Array): DetectorScores[][];

/** One head's scores on a text. */
export interface TextHeadScores extends DetectorScores {
  layer: number;
  head: number;
}

/**
 * Every head's scores on one text (its own ids, column 0 left out), and how many cells past
 * column 0 each pattern has on it (0 duplicate-token and induction cells: the text repeats no token).
 */
export declare function scoreText(layers: Array<{ data: ArrayLike<number>; shape: number[] }>, ids: number[] | Int32Array): { heads: TextHeadScores[]; cells: DetectorScores };

/** BOS, r_1..r_N, r_1..r_N; controls: the same tokens shuffled, BOS first. */
export declare function repeatedTokens(options: { ordinary: number[]; bos: number; length?: number; count?: number; seed?: number }): { sequences: number[][]; controls: number[][] };

export interface DetectedHead extends DetectorScores {
  layer: number;
  head: number;
  control: DetectorScores;
  label: DetectorName | null;
}

/** Scores averaged over the sequences, the controls' scores, and each head's label. */
export declare function detectHeads(
  weightsOf: (ids: number[]) => Array<{ data: ArrayLike<number>; shape: number[] }>,
  sequences: number[][],
  controls: number[][],
  options?: { threshold?: number },
): DetectedHead[];

/** detectHeads for runs that are awaited (a model in a Web Worker): one run at a time, progress after each of 2 × sequences. */
export declare function detectHeadsAsync(
  weightsOf: (ids: number[]) => Promise<Array<{ data: ArrayLike<number>; shape: number[] }>>,
  sequences: number[][],
  controls: number[][],
  options?: { threshold?: number; onProgress?: (p: { done: number; total: number }) => void; signal?: AbortSignal },
): Promise<DetectedHead[]>;
