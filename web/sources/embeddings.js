// Token embeddings for the lesson (d_model = 64): every dimension is a named feature of the
// token, read off the tagger's analysis (tokens.js). Nothing is learned; the designed heads
// (designed-heads.js) are written against this layout.

import { POS_TAGS, SEMANTIC_CLASSES } from './tokens.js';

export const D_MODEL = 64;

/** Angular frequencies of the sinusoidal position code (4 cos/sin pairs). Chosen so that
 *  sum_f cos(w_f d) / 4 stays below 0.48 for every offset 1 <= |d| <= 63: a position matches
 *  itself far better than any other. */
export const POSITION_FREQUENCIES = [2.5318, 3.1003, 0.1819, 1.1249];
/** Frequencies of the chunk-id code (3 pairs): codes of two different chunks (up to 31 apart)
 *  have a dot product of at most 0.44; a chunk's code with itself gives 1. */
export const CHUNK_FREQUENCIES = [2.8185, 2.6581, 2.3092];

/**
 * Where each feature lives: [first dimension, width].
 * @satisfies {Record<string, [number, number]>}
 */
export const LAYOUT = {
  position: [0, 8],
  pos: [8, POS_TAGS.length], // 8..18
  semanticClass: [19, SEMANTIC_CLASSES.length], // 19..26
  nounAgreement: [27, 5], // masc, fem, neut, sg, pl — nouns only
  pronounAgreement: [32, 5], // masc, fem, neut, sg, pl — third-person pronouns only
  firstToken: [37, 1],
  punctuation: [38, 1],
  chunkHead: [39, 1],
  subject: [40, 1],
  nounId: [41, 6], // chunk-id code, on the head noun of each chunk
  subjectId: [47, 6], // verbs: the chunk-id code of their subject
  modifiedId: [53, 6], // modifiers: the chunk-id code of the noun they describe
  unused: [59, 5],
};

export const AGREEMENT_NAMES = ['masc', 'fem', 'neut', 'sg', 'pl'];

/** A short name for every dimension, for tables and tooltips. */
export const DIMENSION_NAMES = (() => {
  const names = new Array(D_MODEL).fill('');
  for (let f = 0; f < 4; f += 1) {
    names[2 * f] = `pos cos ω${f + 1}`;
    names[2 * f + 1] = `pos sin ω${f + 1}`;
  }
  POS_TAGS.forEach((tag, k) => { names[LAYOUT.pos[0] + k] = `POS ${tag}`; });
  SEMANTIC_CLASSES.forEach((cls, k) => { names[LAYOUT.semanticClass[0] + k] = `class ${cls}`; });
  AGREEMENT_NAMES.forEach((a, k) => {
    names[LAYOUT.nounAgreement[0] + k] = `noun ${a}`;
    names[LAYOUT.pronounAgreement[0] + k] = `pronoun ${a}`;
  });
  names[LAYOUT.firstToken[0]] = 'first token';
  names[LAYOUT.punctuation[0]] = 'punctuation';
  names[LAYOUT.chunkHead[0]] = 'chunk head';
  names[LAYOUT.subject[0]] = 'subject';
  for (let k = 0; k < 6; k += 1) {
    const part = `${k % 2 ? 'sin' : 'cos'} ν${(k >> 1) + 1}`;
    names[LAYOUT.nounId[0] + k] = `noun id ${part}`;
    names[LAYOUT.subjectId[0] + k] = `subject id ${part}`;
    names[LAYOUT.modifiedId[0] + k] = `modified id ${part}`;
  }
  for (let k = 0; k < LAYOUT.unused[1]; k += 1) names[LAYOUT.unused[0] + k] = 'unused';
  return names;
})();

/** The chunk-id code of chunk `id`: 3 cos/sin pairs scaled so that code·code = 1. @param {number} id */
export function chunkCode(id) {
  const code = new Float32Array(6);
  const norm = 1 / Math.sqrt(CHUNK_FREQUENCIES.length);
  CHUNK_FREQUENCIES.forEach((w, f) => {
    code[2 * f] = Math.cos(w * id) * norm;
    code[2 * f + 1] = Math.sin(w * id) * norm;
  });
  return code;
}

/**
 * [masc, fem, neut, sg, pl]; no gender (null): any gender.
 * @param {{ m: number, f: number, n: number } | null} gender
 * @param {'sg' | 'pl' | null | undefined} number
 */
function agreementVector(gender, number) {
  const g = gender || { m: 0, f: 0, n: 0 }; // "they": any gender
  return [g.m, g.f, g.n, number === 'sg' ? 1 : 0, number === 'pl' ? 1 : 0];
}

/**
 * Embed analysed tokens: (L, 64) row-major.
 * @param {import('./tokens.js').Token[]} tokens
 * @returns {Float32Array}
 */
export function embedTokens(tokens) {
  const L = tokens.length;
  const x = new Float32Array(L * D_MODEL);
  const set = (/** @type {number} */ i, /** @type {number} */ dim, /** @type {number} */ value) => { x[i * D_MODEL + dim] = value; };
  /** @param {number} i @param {[number, number]} block  [start, width] @param {number[]} values */
  const setBlock = (i, [start], values) => values.forEach((v, k) => set(i, start + k, v));
  tokens.forEach((t, i) => {
    POSITION_FREQUENCIES.forEach((w, f) => {
      set(i, 2 * f, Math.cos(w * i));
      set(i, 2 * f + 1, Math.sin(w * i));
    });
    const posIndex = POS_TAGS.indexOf(t.pos);
    if (posIndex >= 0) set(i, LAYOUT.pos[0] + posIndex, 1);
    set(i, LAYOUT.semanticClass[0] + SEMANTIC_CLASSES.indexOf(t.cls), 1);
    if (t.gender) setBlock(i, LAYOUT.nounAgreement, agreementVector(t.gender, t.number));
    if (t.pronoun && t.pronoun.person === 3) {
      const g = t.pronoun.gender;
      setBlock(i, LAYOUT.pronounAgreement, agreementVector(g ? { m: +(g === 'm'), f: +(g === 'f'), n: +(g === 'n') } : null, t.number));
    }
    if (i === 0) set(i, LAYOUT.firstToken[0], 1);
    if (t.isPunct) set(i, LAYOUT.punctuation[0], 1);
    if (t.isHead) {
      set(i, LAYOUT.chunkHead[0], 1);
      setBlock(i, LAYOUT.nounId, Array.from(chunkCode(t.chunk)));
    }
    if (t.isSubject) set(i, LAYOUT.subject[0], 1);
    if (t.subject >= 0) setBlock(i, LAYOUT.subjectId, Array.from(chunkCode(tokens[t.subject].chunk)));
    if (t.modifies >= 0) setBlock(i, LAYOUT.modifiedId, Array.from(chunkCode(tokens[t.modifies].chunk)));
  });
  return x;
}
