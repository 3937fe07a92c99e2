// The lesson's inputs: the explorer's example sentences (tagged at build time) embedded with the
// explorer's 64-dimensional token features, and the weights the demos run.

import { EXAMPLES } from '../../sources/examples.js';
import { TAGGED_EXAMPLES } from '../../sources/examples.tagged.js';
import { analyseTokens } from '../../sources/tokens.js';
import { embedTokens, D_MODEL } from '../../sources/embeddings.js';
import { designedStateDict, HEADS, NUM_HEADS } from '../../sources/designed-heads.js';
import { prng } from '../../roles/evaluate.js';

export { EXAMPLES, D_MODEL, HEADS, NUM_HEADS };

/** Example sentence `index`: { text, tokens, labels, x: (L, 64) Float32Array, L }. @param {number} index */
export function exampleInput(index) {
  const { text } = EXAMPLES[index];
  const tokens = analyseTokens(/** @type {Record<string, { text: string, tags: string[] }[]>} */ (TAGGED_EXAMPLES)[text]);
  const x = embedTokens(tokens);
  return { text, tokens, labels: tokens.map((t) => t.text), x, L: tokens.length };
}

/** nn.MultiheadAttention(64, 8) with the explorer's designed heads. Caller disposes. @param {import('../../lib/index.js').MhaModule} mha */
export function designedAttention(mha) {
  const attention = new mha.MultiHeadAttention({ embedDim: D_MODEL, numHeads: NUM_HEADS });
  attention.loadStateDict(designedStateDict());
  return attention;
}

/** Head names for the designed heads: "H1 · Previous token". @param {number} h */
export function designedHeadLabel(h) {
  return `H${h + 1} · ${HEADS[h].short}`;
}

/**
 * Standard-normal numbers from a seed (mulberry32 + Box–Muller), for inputs where no sentence
 * makes sense (timings at a chosen width).
 * @param {number} count
 * @param {number} [seed]
 */
export function randomNormal(count, seed = 1) {
  const uniform = prng(seed);
  const out = new Float32Array(count);
  for (let k = 0; k < count; k += 2) {
    const u = Math.max(uniform(), 1e-12);
    const v = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    out[k] = r * Math.cos(2 * Math.PI * v);
    if (k + 1 < count) out[k + 1] = r * Math.sin(2 * Math.PI * v);
  }
  return out;
}
