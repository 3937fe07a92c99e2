// The benchmark's shapes (batch 1, self-attention, batch_first) and its FLOP count.

/** A: the lesson; B: a short sequence; C: a BERT-base layer; D: long; E: very long. */
export const SHAPES = {
  A: { L: 10, E: 64, H: 8 },
  B: { L: 128, E: 512, H: 8 },
  C: { L: 512, E: 768, H: 12 },
  D: { L: 1024, E: 512, H: 8 },
  E: { L: 4096, E: 512, H: 8 },
};

/** Shapes at which this project's engines are also timed with need_weights = true. */
export const WEIGHTS_SHAPES = new Set(['A', 'B', 'C', 'D']);

/** Floating-point operations of one forward: 8·L·E² (projections) + 4·L²·E (scores, P·V). */
export function flops({ L, E }) {
  return 8 * L * E * E + 4 * L * L * E;
}
