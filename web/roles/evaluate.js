// What a head does, said only where a test could have refuted it. One rule for every source with
// learned heads (the pretrained model, the trained model): measured on annotated sentences split
// into a dev half (to choose baselines' offsets and the roles' thresholds) and a test half (for
// every figure shown), as Clark et al. (2019, "What Does BERT Look At?") measured BERT's heads.
//
//   relations: a query word picks the key word its row weights most (a query word's pieces
//     averaged, a key word's pieces summed; the query word itself excluded); the score is the
//     share of instances where that is a right key. Set against baselines on the same instances:
//     the best fixed offset and the best absolute position (both chosen on dev), the first noun,
//     the nearest noun before the query and, for pronouns, the nearest noun before it that agrees
//     in gender and number. A head is named by a relation only where the low end of its 95%
//     interval beats the strongest baseline's test score.
//   roles: a mean share of the rows on a place (previous piece, nouns, ...; vocabulary.js). A head
//     is named by a role only where the low end of its interval clears the role's threshold:
//     max(ROLE_FLOOR, ROLE_UNIFORM_FACTOR × the share uniform attention gives), on dev.
//   the others: broad (mean normalised row entropy above BROAD_ENTROPY) or mixed.
//
// Causal models (a decoder's mask: a row sees its own token and the ones before it): an instance
// counts only where one of its keys comes before its query. The others are not visible to the
// model, not failures: they are counted apart, and a relation with no visible instance at all
// (determiner → noun, adjective → noun, preposition → object: the key always comes after) is
// listed as not visible instead of scored.
//
// Intervals: a percentile bootstrap over test sentences (RESAMPLES resamples from a seeded
// PRNG; the same resamples for every head and figure).
import { ROLES, RELATIONS, labelName } from './vocabulary.js';
import { mulberry32 } from '../lib/random.js';

/** @typedef {import('../sources/source.js').HeadRoles} HeadRoles */
/** @typedef {import('../sources/source.js').HeadRoleEntry} HeadRoleEntry */
/** @typedef {HeadRoleEntry['roles']} HeadRoleFigures */
/** @typedef {HeadRoleEntry['relations']} HeadRelationFigures */
/** @typedef {ReturnType<typeof measureHead>} Measured */

export const RESAMPLES = 1000;
export const SEED = 1;
export const ROLE_FLOOR = 0.5;
export const ROLE_UNIFORM_FACTOR = 2;
export const BROAD_ENTROPY = 0.8;
export const MAX_OFFSET = 8;
export const MAX_POSITION = 24;
const PREVIOUS_FEW = 3;
const PIECE_ROLES = ['previous', 'next', 'self', 'first', 'finalPunctuation', 'sameWord'];
const WORD_ROLES = ['previousFew', 'nouns', 'subject'];

/** A seeded PRNG (mulberry32): uniform numbers in [0, 1). */
export const prng = mulberry32;

/** `resamples` lists of n indices drawn with replacement from 0..n-1. @param {number} n @param {number} [resamples] @param {number} [seed] */
export function bootstrapIndices(n, resamples = RESAMPLES, seed = SEED) {
  const random = prng(seed);
  return Array.from({ length: resamples }, () => {
    const pick = new Int32Array(n);
    for (let i = 0; i < n; i += 1) pick[i] = Math.floor(random() * n);
    return pick;
  });
}

/**
 * The 95% percentile interval of a ratio Σ num / Σ den over resampled units.
 * @param {ArrayLike<number>} num per unit  @param {ArrayLike<number>} den per unit
 * @param {Int32Array[]} resamples  bootstrapIndices
 * @returns {[number, number]}
 */
export function ratioInterval(num, den, resamples) {
  /** @type {number[]} */
  const values = [];
  for (const pick of resamples) {
    let a = 0;
    let b = 0;
    for (let i = 0; i < pick.length; i += 1) { a += num[pick[i]]; b += den[pick[i]]; }
    if (b > 0) values.push(a / b);
  }
  if (!values.length) return [0, 0];
  values.sort((x, y) => x - y);
  const R = values.length;
  return [values[Math.floor(0.025 * R)], values[Math.ceil(0.975 * R) - 1]];
}

const isPunctuation = (/** @type {string} */ text) => /^[\p{P}\p{S}]+$/u.test(text);
/** A piece that is all punctuation or symbols, its leading "▁" aside (a bare "▁" is not). */
const punctuationPiece = (/** @type {string} */ piece) => isPunctuation(piece.replace(/^▁/, ''));

/** The text of a piece as shown: SentencePiece's word marker "▁" dropped. */
export const pieceText = (/** @type {string} */ piece) => piece.replace(/^▁/, '') || piece;

/**
 * Each word's text, from its pieces (the "▁" markers dropped). `words`: the word of each piece,
 * as the encoder's tokenizer groups them (its tokenize/encode result's `words`).
 * @param {string[]} pieces @param {number[]} words
 */
export function wordTexts(pieces, words) {
  /** @type {string[]} */
  const out = [];
  pieces.forEach((piece, i) => { out[words[i]] = (out[words[i]] ?? '') + piece.replace(/▁/g, ''); });
  return out;
}

/**
 * A sentence to measure heads on.
 * @typedef {{ id: string, split: 'dev'|'test', text: string, words: string[], tokens: string[],
 *   tokenWord: number[], nominal: boolean[], subjects: number[] | null,
 *   instances: { relation: string, query: number, keys: number[], agreeing?: number[] }[] }} Sentence
 *   tokens: the model's tokens (pieces); tokenWord: the word of each token (non-decreasing);
 *   nominal: per word, a noun or proper noun; subjects: the words that are a verb's subject
 *   (null where the sentence is not annotated for them); agreeing: for a pronoun, the nouns before
 *   it that agree with it in gender and number
 */

/** Per token, the keys a row may weigh: all of them, or (causal) those up to the row. */
const allowedCount = (/** @type {number} */ i, /** @type {number} */ T, /** @type {boolean} */ causal) => (causal ? i + 1 : T);

/**
 * A head's measurements on one sentence, from its (T, T) map: role sums, the key word each
 * instance's query picks, and the row entropy.
 * @returns {{ roles: Record<string, [number, number, number]>, chosen: Int32Array, entropy: [number, number] }}
 *   roles[id]: [Σ share, rows, Σ share uniform attention gives]
 * @param {Float32Array} map
 * @param {Pick<Sentence, 'tokens' | 'tokenWord' | 'words' | 'nominal' | 'subjects' | 'instances'>} s  what it reads of a sentence
 * @param {boolean} [causal]
 */
export function measureHead(map, s, causal = false) {
  const T = s.tokens.length;
  const W = s.words.length;
  /** @type {Record<string, [number, number, number]>} */
  const roles = {};
  const add = (/** @type {string} */ id, /** @type {number} */ share, /** @type {number} */ uniform) => {
    const r = roles[id] ?? (roles[id] = [0, 0, 0]);
    r[0] += share; r[1] += 1; r[2] += uniform;
  };
  const last = T - 1;
  const endsInPunctuation = T > 1 && punctuationPiece(s.tokens[last]);
  let entropySum = 0;
  let entropyRows = 0;
  for (let i = 0; i < T; i += 1) {
    const row = map.subarray(i * T, (i + 1) * T);
    const n = allowedCount(i, T, causal);
    if (i > 0) add('previous', row[i - 1], 1 / n);
    if (i < last && !causal) add('next', row[i + 1], 1 / n);
    add('self', row[i], 1 / n);
    if (i > 0) add('first', row[0], 1 / n);
    if (endsInPunctuation && i !== last && !causal) add('finalPunctuation', row[last], 1 / n);
    let same = 0;
    let others = 0;
    for (let j = 0; j < n; j += 1) if (j !== i && s.tokenWord[j] === s.tokenWord[i]) { same += row[j]; others += 1; }
    if (others) add('sameWord', same, others / n);
    if (n > 1) {
      let h = 0;
      for (let j = 0; j < n; j += 1) if (row[j] > 0) h -= row[j] * Math.log(row[j]);
      entropySum += h / Math.log(n);
      entropyRows += 1;
    }
  }
  // word-level map M and what uniform attention gives U, both (W, W)
  const groups = Array.from({ length: W }, () => /** @type {number[]} */ ([]));
  s.tokenWord.forEach((w, i) => groups[w].push(i));
  const M = new Float64Array(W * W);
  const U = new Float64Array(W * W);
  for (let a = 0; a < W; a += 1) {
    for (const i of groups[a]) {
      const n = allowedCount(i, T, causal);
      for (let j = 0; j < n; j += 1) {
        const b = s.tokenWord[j];
        M[a * W + b] += map[i * T + j] / groups[a].length;
        U[a * W + b] += 1 / n / groups[a].length;
      }
    }
  }
  const wordRole = (/** @type {string} */ id, /** @type {number} */ a, /** @type {number[]} */ targets) => {
    let share = 0;
    let uniform = 0;
    for (const b of targets) if (b !== a && U[a * W + b] > 0) { share += M[a * W + b]; uniform += U[a * W + b]; }
    if (uniform > 0) add(id, share, uniform);
  };
  const nouns = s.nominal.flatMap((yes, b) => (yes ? [b] : []));
  for (let a = 0; a < W; a += 1) {
    /** @type {number[]} */
    const before = [];
    for (let b = Math.max(0, a - PREVIOUS_FEW); b < a; b += 1) before.push(b);
    wordRole('previousFew', a, before);
    wordRole('nouns', a, nouns);
    if (s.subjects) wordRole('subject', a, s.subjects);
  }
  const chosen = new Int32Array(s.instances.length);
  s.instances.forEach((inst, k) => {
    const a = inst.query;
    let best = -1;
    for (let b = 0; b < W; b += 1) {
      if (b === a || U[a * W + b] === 0) continue;
      if (best < 0 || M[a * W + b] > M[a * W + best]) best = b;
    }
    chosen[k] = best;
  });
  return { roles, chosen, entropy: /** @type {[number, number]} */ ([entropySum, entropyRows]) };
}

/**
 * Whether a causal model can see an instance at all: one of its keys comes before its query.
 * @param {Sentence['instances'][number]} inst
 */
export const visibleToCausal = (inst) => inst.keys.some((k) => k < inst.query);

/** Whether key word b may be picked for a query word a. */
const pickable = (/** @type {number} */ b, /** @type {number} */ a, /** @type {number} */ W, /** @type {boolean} */ causal) => b >= 0 && b < W && b !== a && (!causal || b < a);

/**
 * The baselines' picks for one instance (-1: no pick).
 * @param {Sentence} s
 * @param {Sentence['instances'][number]} inst
 * @param {boolean} causal
 * @returns {{ firstNoun: number, nearestNoun: number, nearestAgreeingNoun?: number }}
 */
function baselinePicks(s, inst, causal) {
  const W = s.words.length;
  const a = inst.query;
  let firstNoun = -1;
  for (let b = 0; b < W; b += 1) if (s.nominal[b] && pickable(b, a, W, causal)) { firstNoun = b; break; }
  let nearestNoun = -1;
  for (let b = a - 1; b >= 0; b -= 1) if (s.nominal[b]) { nearestNoun = b; break; }
  /** @type {{ firstNoun: number, nearestNoun: number, nearestAgreeingNoun?: number }} */
  const picks = { firstNoun, nearestNoun };
  if (inst.agreeing) picks.nearestAgreeingNoun = inst.agreeing.filter((b) => b < a).reduce((x, b) => Math.max(x, b), -1);
  return picks;
}

export const BASELINE_NAMES = {
  offset: (/** @type {number} */ k) => `always the word ${k > 0 ? `${k} after` : `${-k} before`}`,
  position: (/** @type {number} */ p) => `always word ${p + 1} of the sentence`,
  firstNoun: 'the first noun',
  nearestNoun: 'the nearest noun before',
  nearestAgreeingNoun: 'the nearest agreeing noun before',
};

const round = (/** @type {number} */ x) => Math.round(x * 10000) / 10000;

/**
 * Every head's figures and label.
 * @param {Sentence[]} sentences
 * @param {{ layer: number, head: number, measured: ReturnType<typeof measureHead>[] }[]} heads
 *   measured[i]: measureHead on sentences[i]
 * @param {{ causal?: boolean, resamples?: number, seed?: number, evidence?: boolean }} [options]
 *   evidence: also return, per relation, the test instances and the word each head picked
 * @returns {HeadRoles}
 */
export function evaluateHeads(sentences, heads, options = {}) {
  const { causal = false, resamples: R = RESAMPLES, seed = SEED, evidence = false } = options;
  /** @type {number[]} */
  const dev = [];
  /** @type {number[]} */
  const test = [];
  sentences.forEach((s, i) => (s.split === 'test' ? test : dev).push(i));
  const resamples = bootstrapIndices(test.length, R, seed);

  // relations present, their instances on each half (causal: those it can see), and the baselines
  const present = Object.keys(RELATIONS).filter((r) => sentences.some((s) => s.instances.some((x) => x.relation === r)));
  /** @typedef {{ si: number, k: number, inst: Sentence['instances'][number] }} Item  instance k of sentence si */
  const on = (/** @type {string} */ r, /** @type {number[]} */ half) => half.flatMap((si) => sentences[si].instances.map((inst, k) => ({ si, k, inst })).filter((x) => x.inst.relation === r));
  const seen = (/** @type {Item[]} */ items) => (causal ? items.filter((x) => visibleToCausal(x.inst)) : items);
  /** @type {Record<string, { n: number, nDev: number }>} instances a causal model cannot see, per relation */
  const hidden = {};
  for (const r of present) {
    const n = on(r, test).length - seen(on(r, test)).length;
    const nDev = on(r, dev).length - seen(on(r, dev)).length;
    if (n || nDev) hidden[r] = { n, nDev };
  }
  const relationIds = present.filter((r) => seen(on(r, [...dev, ...test])).length > 0);
  /**
   * @type {Record<string, { n: number, nDev: number, baselines: { id: string, name: string, dev: number, score: number }[],
   *                          strongest: { name: string, score: number }, testItems: Item[] }>}
   */
  const relations = {};
  for (const r of relationIds) {
    const devItems = seen(on(r, dev));
    const testItems = seen(on(r, test));
    const hit = (/** @type {Item} */ x, /** @type {number} */ b) => b >= 0 && x.inst.keys.includes(b);
    const accuracy = (/** @type {Item[]} */ items, /** @type {(x: Item) => number} */ pick) => (items.length ? items.filter((x) => hit(x, pick(x))).length / items.length : 0);
    const W = (/** @type {Item} */ x) => sentences[x.si].words.length;
    let offset = { k: -1, dev: -1 };
    for (let k = -MAX_OFFSET; k <= MAX_OFFSET; k += 1) {
      if (k === 0 || (causal && k > 0)) continue;
      const value = accuracy(devItems, (x) => (pickable(x.inst.query + k, x.inst.query, W(x), causal) ? x.inst.query + k : -1));
      if (value > offset.dev || (value === offset.dev && Math.abs(k) < Math.abs(offset.k))) offset = { k, dev: value };
    }
    let position = { p: 0, dev: -1 };
    for (let p = 0; p <= MAX_POSITION; p += 1) {
      const value = accuracy(devItems, (x) => (pickable(p, x.inst.query, W(x), causal) ? p : -1));
      if (value > position.dev) position = { p, dev: value };
    }
    const picks = (/** @type {Item} */ x) => baselinePicks(sentences[x.si], x.inst, causal);
    /** @type {{ id: string, name: string, offset?: number, position?: number, pick: (x: Item) => number }[]} */
    const candidates = [
      { id: 'offset', name: BASELINE_NAMES.offset(offset.k), offset: offset.k, pick: (x) => (pickable(x.inst.query + offset.k, x.inst.query, W(x), causal) ? x.inst.query + offset.k : -1) },
      { id: 'position', name: BASELINE_NAMES.position(position.p), position: position.p, pick: (x) => (pickable(position.p, x.inst.query, W(x), causal) ? position.p : -1) },
      { id: 'firstNoun', name: BASELINE_NAMES.firstNoun, pick: (x) => picks(x).firstNoun },
      { id: 'nearestNoun', name: BASELINE_NAMES.nearestNoun, pick: (x) => picks(x).nearestNoun },
      ...(testItems.length && testItems.every((x) => x.inst.agreeing) ? [{ id: 'nearestAgreeingNoun', name: BASELINE_NAMES.nearestAgreeingNoun, pick: (/** @type {Item} */ x) => picks(x).nearestAgreeingNoun ?? -1 }] : []), // -1: no pick, as before
    ];
    const baselines = candidates.map(({ pick, ...b }) => ({ ...b, dev: round(accuracy(devItems, pick)), score: round(accuracy(testItems, pick)) }));
    const strongest = baselines.reduce((x, y) => (y.score > x.score ? y : x));
    relations[r] = { n: testItems.length, nDev: devItems.length, baselines, strongest: { name: strongest.name, score: strongest.score }, testItems };
  }

  // roles present, the share uniform attention gives, and the thresholds (dev)
  const roleIds = Object.keys(ROLES).filter((r) => heads.length && sentences.some((_, i) => heads[0].measured[i].roles[r]));
  /** @type {HeadRoles['rule']['roles']} */
  const roles = {};
  for (const r of roleIds) {
    const uniform = (/** @type {number[]} */ half) => {
      let u = 0;
      let n = 0;
      for (const i of half) { const x = heads[0].measured[i].roles[r]; if (x) { u += x[2]; n += x[1]; } }
      return n ? u / n : 0;
    };
    const devUniform = uniform(dev);
    roles[r] = { threshold: round(Math.max(ROLE_FLOOR, ROLE_UNIFORM_FACTOR * devUniform)), uniform: { dev: round(devUniform), test: round(uniform(test)) } };
  }

  const table = heads.map(({ layer, head, measured }) => {
    const perTest = (/** @type {(m: Measured) => number} */ f) => Float64Array.from(test, (i) => f(measured[i]));
    /** @type {HeadRoleFigures} */
    const headRoles = {};
    for (const r of roleIds) {
      const num = perTest((m) => m.roles[r]?.[0] ?? 0);
      const den = perTest((m) => m.roles[r]?.[1] ?? 0);
      const total = den.reduce((x, y) => x + y, 0);
      const score = total ? num.reduce((x, y) => x + y, 0) / total : 0;
      headRoles[r] = { score: round(score), ci: ratioInterval(num, den, resamples).map(round) };
    }
    /** @type {HeadRelationFigures} */
    const headRelations = {};
    for (const r of relationIds) {
      const hits = new Float64Array(test.length);
      const counts = new Float64Array(test.length);
      const position = new Map(test.map((si, t) => [si, t]));
      for (const x of relations[r].testItems) {
        const t = /** @type {number} */ (position.get(x.si)); // every test item's sentence is a test sentence
        counts[t] += 1;
        if (x.inst.keys.includes(measured[x.si].chosen[x.k])) hits[t] += 1;
      }
      const n = relations[r].n;
      headRelations[r] = {
        score: round(n ? hits.reduce((a, b) => a + b, 0) / n : 0), ci: ratioInterval(hits, counts, resamples).map(round),
        n, baseline: relations[r].strongest,
      };
    }
    let es = 0;
    let er = 0;
    for (const i of test) { es += measured[i].entropy[0]; er += measured[i].entropy[1]; }
    const entropy = round(er ? es / er : 0);
    return { layer, head, ...labelOf(headRoles, headRelations, roles, entropy), roles: headRoles, relations: headRelations, normalizedEntropy: entropy };
  });

  /** @type {HeadRoles} */
  const out = {
    corpus: {
      sentences: sentences.length,
      split: { dev: dev.length, test: test.length },
    },
    rule: {
      resamples: R, seed, interval: 0.95, roleFloor: ROLE_FLOOR, roleUniformFactor: ROLE_UNIFORM_FACTOR, broadEntropy: BROAD_ENTROPY,
      roles: Object.fromEntries(roleIds.map((r) => [r, roles[r]])),
      relations: Object.fromEntries(relationIds.map((r) => [r, {
        n: relations[r].n, nDev: relations[r].nDev, strongest: relations[r].strongest,
        baselines: relations[r].baselines.map(({ name, dev: d, score }) => ({ name, dev: d, score })),
        ...(hidden[r] ? { notVisible: hidden[r] } : {}),
      }])),
      ...(present.length > relationIds.length
        ? { notVisible: Object.fromEntries(present.filter((r) => !relationIds.includes(r)).map((r) => [r, hidden[r]])) }
        : {}),
    },
    heads: table,
  };
  if (evidence) {
    const used = [...new Set(relationIds.flatMap((r) => relations[r].testItems.map((x) => x.si)))].sort((a, b) => a - b);
    const index = new Map(used.map((si, k) => [si, k]));
    out.evidence = {
      sentences: used.map((si) => ({ id: sentences[si].id, words: sentences[si].words })),
      relations: Object.fromEntries(relationIds.map((r) => [r, {
        items: relations[r].testItems.map((x) => [/** @type {number} */ (index.get(x.si)), x.inst.query, ...x.inst.keys]),
        chosen: Object.fromEntries(heads.map(({ layer, head, measured }) => [`${layer}.${head}`, relations[r].testItems.map((x) => measured[x.si].chosen[x.k])])),
      }])),
    };
  }
  return out;
}

/**
 * A head's label: the role or relation it clears by the widest margin (the low end of its
 * interval over the bar), else broad or mixed.
 * @param {HeadRoleFigures} headRoles
 * @param {HeadRelationFigures} headRelations
 * @param {HeadRoles['rule']['roles']} roles
 * @param {number} normalizedEntropy
 * @returns {Pick<HeadRoleEntry, 'label' | 'kind'>}
 */
export function labelOf(headRoles, headRelations, roles, normalizedEntropy) {
  /** @type {{ id: string, kind: 'role' | 'relation', margin: number }[]} */
  const candidates = [];
  for (const [r, v] of Object.entries(headRoles)) {
    const bar = roles[r].threshold;
    if (v.ci[0] >= bar) candidates.push({ id: r, kind: 'role', margin: v.ci[0] - bar });
  }
  for (const [r, v] of Object.entries(headRelations)) {
    if (v.n && v.ci[0] > v.baseline.score) candidates.push({ id: r, kind: 'relation', margin: v.ci[0] - v.baseline.score });
  }
  if (candidates.length) {
    const best = candidates.reduce((a, b) => (b.margin > a.margin ? b : a));
    return { label: best.id, kind: best.kind };
  }
  return normalizedEntropy > BROAD_ENTROPY ? { label: 'broad', kind: 'broad' } : { label: 'mixed', kind: 'mixed' };
}

/** Every label a head clears, for the table (the label is the first). @param {HeadRoleEntry} entry @param {HeadRoles['rule']} rule */
export function clearedBars(entry, rule) {
  /** @type {string[]} */
  const out = [];
  for (const [r, v] of Object.entries(entry.roles)) if (v.ci[0] >= rule.roles[r].threshold) out.push(r);
  for (const [r, v] of Object.entries(entry.relations)) if (v.n && v.ci[0] > v.baseline.score) out.push(r);
  return out;
}

/**
 * Measure every head of every layer on every sentence. layersOf(i) gives sentence i's [{ data, shape: [H, T, T] }] per layer.
 * @param {Sentence[]} sentences
 * @param {(i: number) => Promise<{ data: Float32Array, shape: number[] }[]> | { data: Float32Array, shape: number[] }[]} layersOf
 * @param {{ causal?: boolean, onProgress?: import('../sources/source.js').MeasureProgress }} [options]
 */
export async function measureAll(sentences, layersOf, { causal = false, onProgress } = {}) {
  /** @type {{ layer: number, head: number, measured: Measured[] }[] | null} */
  let heads = null;
  for (let i = 0; i < sentences.length; i += 1) {
    const layers = await layersOf(i);
    if (!heads) heads = layers.flatMap((w, layer) => Array.from({ length: w.shape[0] }, (_, head) => ({ layer, head, measured: [] })));
    for (const entry of heads) {
      const w = layers[entry.layer];
      const T = w.shape[1];
      entry.measured.push(measureHead(w.data.subarray(entry.head * T * T, (entry.head + 1) * T * T), sentences[i], causal));
    }
    onProgress?.({ done: i + 1, total: sentences.length });
  }
  return heads ?? [];
}

export { labelName };
