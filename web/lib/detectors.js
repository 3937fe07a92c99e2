// Head detectors: previous-token, duplicate-token and induction heads, scored as TransformerLens's
// head_detector.py scores them, on repeated random tokens (Olsson et al. 2022).
//
// Detection patterns (T, T), lower triangular, from the token ids t:
//   previousToken[i][j]  = 1 where j = i - 1
//   duplicateToken[i][j] = 1 where j < i and t[j] = t[i]
//   induction[i][j]      = 1 where 1 <= j <= i and t[j - 1] = t[i]   (the duplicate pattern one column right)
// The "mul" score of a head's attention A (T, T) with column 0 (BOS) set to 0:
//   score = sum(A ⊙ P) / sum(A)
// Sequences: BOS, r_1..r_N, r_1..r_N (r drawn without repeats from the ordinary vocabulary);
// the control is the same 2N tokens shuffled (BOS kept first), scored against the repeated
// sequence's patterns: where the repeat put a match, the control has unrelated tokens.
//
//   import { repeatedTokens, detectHeads } from 'mha-explorer/models';
//   const { sequences, controls } = repeatedTokens({ ordinary, bos, length: 50, count: 10, seed: 0 });
//   const heads = detectHeads((ids) => model.run(ids).layers.map((l) => l.weights), sequences, controls);
import { MhaError } from './errors.js';
import { mulberry32 as random } from './random.js';

/** The detectors, in the order of their result fields. */
export const DETECTORS = Object.freeze(['previousToken', 'duplicateToken', 'induction']);

/**
 * A head is named where its score is at least this: the fraction of its attention (past BOS)
 * that lands on the pattern. ARENA's head-finding exercises name heads at 0.4.
 */
export const DETECTOR_THRESHOLD = 0.4;

function invalid(message) { return new MhaError('INVALID_ARGUMENT', message); }

function describe(value) {
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (value === null) return 'null';
  return typeof value === 'object' ? `a ${value.constructor?.name ?? 'object'}` : `${typeof value} ${String(value)}`;
}

/**
 * @param {unknown} ids
 * @returns {number[]}
 */
function checkIds(ids) {
  if (!Array.isArray(ids) && !(ids instanceof Int32Array)) throw invalid(`expected an array of token ids, got ${describe(ids)}`);
  const out = Array.from(/** @type {ArrayLike<unknown>} */ (ids));
  for (const [i, id] of out.entries()) {
    if (!Number.isInteger(id)) throw invalid(`token id ${i} is ${describe(id)}; expected an integer`);
  }
  if (out.length < 2) throw invalid(`expected at least 2 token ids, got ${out.length}`);
  return /** @type {number[]} */ (out);
}

/**
 * The detection pattern of a detector for token ids, row-major (T, T) of 0 and 1.
 * @param {'previousToken' | 'duplicateToken' | 'induction'} name
 * @param {number[] | Int32Array} ids
 * @returns {Uint8Array}
 */
export function detectionPattern(name, ids) {
  const t = checkIds(ids);
  const T = t.length;
  const p = new Uint8Array(T * T);
  if (name === 'previousToken') {
    for (let i = 1; i < T; ++i) p[i * T + i - 1] = 1;
  } else if (name === 'duplicateToken') {
    for (let i = 0; i < T; ++i) for (let j = 0; j < i; ++j) if (t[j] === t[i]) p[i * T + j] = 1;
  } else if (name === 'induction') {
    for (let i = 0; i < T; ++i) for (let j = 1; j <= i; ++j) if (t[j - 1] === t[i] && j - 1 !== i) p[i * T + j] = 1;
  } else {
    throw invalid(`detector: expected one of ${DETECTORS.join(', ')}, got ${describe(name)}`);
  }
  return p;
}

/**
 * The "mul" score: sum(A ⊙ P) / sum(A) over one head's attention A (T, T), column 0 left out.
 * NaN when the head puts all its attention on column 0.
 * @param {ArrayLike<number>} attention  (T, T) row-major
 * @param {ArrayLike<number>} pattern    (T, T) row-major
 * @param {number} T
 */
export function mulScore(attention, pattern, T) {
  if (!Number.isInteger(T) || T < 1) throw invalid(`mulScore: expected a length T >= 1, got ${describe(T)}`);
  if (attention.length !== T * T) throw invalid(`mulScore: expected attention of ${T}x${T} = ${T * T} values, got ${attention.length}`);
  if (pattern.length !== T * T) throw invalid(`mulScore: expected a pattern of ${T * T} values, got ${pattern.length}`);
  let hit = 0;
  let all = 0;
  for (let i = 0; i < T; ++i) {
    for (let j = 1; j < T; ++j) {
      const a = attention[i * T + j];
      all += a;
      if (pattern[i * T + j]) hit += a * pattern[i * T + j];
    }
  }
  return hit / all;
}

/**
 * Every head's three scores on one sequence.
 * @param {Array<{ data: ArrayLike<number>, shape: number[] }>} layers  per layer the weights (H, T, T)
 * @param {number[] | Int32Array} patternIds  the ids the patterns are built from
 * @returns {Array<Array<Record<string, number>>>}  [layer][head] { previousToken, duplicateToken, induction }
 */
export function scoreHeads(layers, patternIds) {
  const ids = checkIds(patternIds);
  const T = ids.length;
  const patterns = DETECTORS.map((name) => detectionPattern(name, ids));
  if (!Array.isArray(layers)) throw invalid(`scoreHeads: expected per-layer weights, got ${describe(layers)}`);
  return layers.map((w, l) => {
    const [H, Tq, Tk] = w?.shape ?? [];
    if (Tq !== T || Tk !== T || w.data.length !== H * T * T) {
      throw invalid(`scoreHeads: layer ${l}: expected weights (H, ${T}, ${T}), got shape ${JSON.stringify(w?.shape)}`);
    }
    return Array.from({ length: H }, (_, h) => {
      const a = w.data instanceof Float32Array || Array.isArray(w.data)
        ? w.data.slice(h * T * T, (h + 1) * T * T) : Array.from(w.data).slice(h * T * T, (h + 1) * T * T);
      return Object.fromEntries(DETECTORS.map((name, k) => [name, mulScore(a, patterns[k], T)]));
    });
  });
}

/**
 * Every head's three scores on one text as the model read it: its own ids, nothing added, so
 * column 0 (left out, as BOS is) is the text's first token, where many heads park their
 * attention. cells: how many cells past column 0 each pattern has on the text; a text that
 * repeats no token has none for duplicate-token and induction, whose scores are then 0.
 * @param {Array<{ data: ArrayLike<number>, shape: number[] }>} layers  per layer the weights (H, T, T)
 * @param {number[] | Int32Array} ids  the text's T token ids
 * @returns {{ heads: Array<{ layer: number, head: number } & Record<string, number>>, cells: Record<string, number> }}
 */
export function scoreText(layers, ids) {
  const t = checkIds(ids);
  const T = t.length;
  const heads = scoreHeads(layers, t).flatMap((scores, layer) => scores.map((s, head) => ({ layer, head, ...s })));
  const cells = Object.fromEntries(DETECTORS.map((name) => {
    const p = detectionPattern(name, t);
    let n = 0;
    for (let i = 0; i < T; ++i) for (let j = 1; j < T; ++j) n += p[i * T + j];
    return [name, n];
  }));
  return { heads, cells };
}


/**
 * Repeated random tokens and their controls.
 * sequence k: [bos, r_1..r_N, r_1..r_N], r drawn without repeats from `ordinary`;
 * control k: [bos, the same 2N tokens shuffled], reshuffled (up to 100 times) until no token
 * stands where the repeat put it (control[N + i] differs from control[i]).
 * @param {{ ordinary: number[], bos: number, length?: number, count?: number, seed?: number }} options
 * @returns {{ sequences: number[][], controls: number[][] }}
 */
export function repeatedTokens({ ordinary, bos, length = 50, count = 10, seed = 0 }) {
  if (!Array.isArray(ordinary) || !ordinary.every(Number.isInteger)) throw invalid(`repeatedTokens: expected 'ordinary' as an array of token ids, got ${describe(ordinary)}`);
  if (!Number.isInteger(bos)) throw invalid(`repeatedTokens: expected 'bos' as a token id, got ${describe(bos)}`);
  if (!Number.isInteger(length) || length < 1) throw invalid(`repeatedTokens: expected 'length' N >= 1, got ${describe(length)}`);
  if (!Number.isInteger(count) || count < 1) throw invalid(`repeatedTokens: expected 'count' >= 1, got ${describe(count)}`);
  if (!Number.isInteger(seed)) throw invalid(`repeatedTokens: expected an integer 'seed', got ${describe(seed)}`);
  const pool = [...new Set(ordinary)];
  if (pool.length < length) throw invalid(`repeatedTokens: N = ${length} tokens without repeats need as many ordinary tokens; the vocabulary has ${pool.length}`);
  const next = random(seed);
  const shuffle = (/** @type {number[]} */ a) => {
    for (let i = a.length - 1; i > 0; --i) {
      const j = Math.floor(next() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  };
  const sequences = [];
  const controls = [];
  for (let k = 0; k < count; ++k) {
    // a partial Fisher–Yates: the first N of a shuffled pool
    const p = pool.slice();
    for (let i = 0; i < length; ++i) {
      const j = i + Math.floor(next() * (p.length - i));
      [p[i], p[j]] = [p[j], p[i]];
    }
    const r = p.slice(0, length);
    sequences.push([bos, ...r, ...r]);
    let c = shuffle([...r, ...r]);
    for (let tries = 0; tries < 100 && c.slice(0, length).some((id, i) => c[length + i] === id); ++tries) c = shuffle(c);
    controls.push([bos, ...c]);
  }
  return { sequences, controls };
}

/** @param {unknown} weightsOf @param {unknown} sequences @param {unknown} controls */
function checkRuns(weightsOf, sequences, controls) {
  if (typeof weightsOf !== 'function') throw invalid(`detectHeads: expected a function from ids to per-layer weights, got ${describe(weightsOf)}`);
  if (!Array.isArray(sequences) || sequences.length < 1) throw invalid(`detectHeads: expected at least one sequence, got ${describe(sequences)}`);
  if (!Array.isArray(controls) || controls.length !== sequences.length) throw invalid(`detectHeads: expected one control per sequence (${sequences.length}), got ${describe(controls)}`);
  sequences.forEach((ids, n) => {
    if (!Array.isArray(controls[n]) || controls[n].length !== ids.length) throw invalid(`detectHeads: control ${n} has ${describe(controls[n])}; expected ${ids.length} ids like its sequence`);
  });
}

/**
 * Sums of scores, [layer][head][detector], and what detectHeads makes of them.
 * @param {number} threshold
 */
function tally(threshold) {
  /** @type {number[][][]} */
  const sums = [];
  /** @type {number[][][]} */
  const controlSums = [];
  let count = 0;
  const add = (/** @type {number[][][]} */ into, /** @type {Array<Array<Record<string, number>>>} */ scores) => {
    scores.forEach((heads, l) => heads.forEach((s, h) => {
      into[l] ??= [];
      into[l][h] ??= DETECTORS.map(() => 0);
      DETECTORS.forEach((name, k) => { into[l][h][k] += s[name]; });
    }));
  };
  return {
    /** One sequence's scores and its control's. @param {Array<Array<Record<string, number>>>} scores @param {Array<Array<Record<string, number>>>} control */
    add(scores, control) { add(sums, scores); add(controlSums, control); count += 1; },
    heads() {
      /** @type {import('./detectors.js').DetectedHead[]} */
      const heads = [];
      sums.forEach((layer, l) => layer.forEach((s, h) => {
        const mean = /** @type {Record<import('./detectors.js').DetectorName, number>} */ (Object.fromEntries(DETECTORS.map((name, k) => [name, s[k] / count])));
        const control = /** @type {Record<import('./detectors.js').DetectorName, number>} */ (Object.fromEntries(DETECTORS.map((name, k) => [name, controlSums[l][h][k] / count])));
        const named = DETECTORS.filter((name) => mean[name] >= threshold && (name === 'previousToken' || mean[name] > control[name]));
        named.sort((a, b) => mean[b] - mean[a]);
        heads.push({ layer: l, head: h, ...mean, control, label: named[0] ?? null });
      }));
      return heads;
    },
  };
}

/**
 * Every head's scores averaged over the sequences, the same on the controls (scored against the
 * sequences' patterns), and a label: the detector with the highest score among those where the
 * score is at least DETECTOR_THRESHOLD and above the control's; previousToken, whose pattern is
 * the same for every sequence of a length, is named on the threshold alone (its control is kept).
 * @param {(ids: number[]) => Array<{ data: ArrayLike<number>, shape: number[] }>} weightsOf  per layer (H, T, T)
 * @param {number[][]} sequences
 * @param {number[][]} controls  one per sequence, of its length
 * @param {{ threshold?: number }} [options]
 */
export function detectHeads(weightsOf, sequences, controls, options = {}) {
  checkRuns(weightsOf, sequences, controls);
  const t = tally(options.threshold ?? DETECTOR_THRESHOLD);
  sequences.forEach((ids, n) => t.add(scoreHeads(weightsOf(ids), ids), scoreHeads(weightsOf(controls[n]), ids)));
  return t.heads();
}

/**
 * detectHeads for a model whose runs are awaited (a model in a Web Worker): one run at a time,
 * only its scores kept; onProgress after each run, of 2 × sequences.
 * @param {(ids: number[]) => Promise<Array<{ data: ArrayLike<number>, shape: number[] }>>} weightsOf  per layer (H, T, T)
 * @param {number[][]} sequences
 * @param {number[][]} controls
 * @param {{ threshold?: number, onProgress?: (p: { done: number, total: number }) => void, signal?: AbortSignal }} [options]
 */
export async function detectHeadsAsync(weightsOf, sequences, controls, options = {}) {
  checkRuns(weightsOf, sequences, controls);
  const t = tally(options.threshold ?? DETECTOR_THRESHOLD);
  const total = 2 * sequences.length;
  for (const [n, ids] of sequences.entries()) {
    options.signal?.throwIfAborted();
    const scores = scoreHeads(await weightsOf(ids), ids);
    options.onProgress?.({ done: 2 * n + 1, total });
    const control = scoreHeads(await weightsOf(controls[n]), ids);
    options.onProgress?.({ done: 2 * n + 2, total });
    t.add(scores, control);
  }
  return t.heads();
}
