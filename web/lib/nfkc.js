// text.normalize('NFKC') in time linear in the length of a run of combining marks.
//
// String.prototype.normalize puts a run of combining marks in canonical order by insertion: a
// run of n marks out of order costs n² steps (a megabyte of alternating marks: minutes of CPU).
// A long run is put in canonical order here first, which normalize then has nothing left to
// reorder in; the string is canonically equivalent, so its NFKC is the same string:
//   1. each mark of the run is replaced by its canonical decomposition (NFD of the mark alone);
//   2. the characters of the run between starters (combining class 0) are sorted, stably, by
//      combining class. The classes are not exposed to JavaScript; normalize itself orders two
//      marks: NFD(b + a) === a + b exactly when 0 < ccc(a) < ccc(b).
// A stable sort of a part of a run of non-starters keeps their NFD, so this holds for any run
// the pattern below finds, whatever comes before or after it.

/** Runs of marks long enough for insertion to cost more than the sort. */
const LONG_RUN = /\p{M}{32,}/gu;

/** NFD of one code point, and whether it is a starter, by code point (it depends on nothing else). */
/** @type {Map<string, string>} */
const decomposed = new Map();
/** @type {Map<string, boolean>} */
const starters = new Map();
/** Rank of a non-starter's combining class among the marks met so far, recomputed when a new one comes. */
/** @type {Map<string, number>} */
let ranks = new Map();

/** @param {string} c one code point */
function isStarter(c) {
  let s = starters.get(c);
  if (s === undefined) {
    // U+0301 has class 230, U+0334 class 1: c moves before the first unless its class is 0 or ≥ 230,
    // and after the second unless its class is 0 or 1
    s = `\u0301${c}`.normalize('NFD') === `\u0301${c}` && `${c}\u0334`.normalize('NFD') === `${c}\u0334`;
    starters.set(c, s);
  }
  return s;
}

/** -1, 0 or 1 as ccc(a) is below, equal to or above ccc(b); both non-starters. */
function compareClasses(/** @type {string} */ a, /** @type {string} */ b) {
  if (a === b) return 0;
  if (`${b}${a}`.normalize('NFD') === `${a}${b}`) return -1;
  if (`${a}${b}`.normalize('NFD') === `${b}${a}`) return 1;
  return 0;
}

/** Ranks for every non-starter of `marks` (and those ranked before), equal classes equal ranks. */
function rankAll(/** @type {Set<string>} */ marks) {
  if ([...marks].every((m) => ranks.has(m))) return;
  const all = [...new Set([...ranks.keys(), ...marks])].sort(compareClasses);
  ranks = new Map();
  let rank = 0;
  all.forEach((m, i) => {
    if (i > 0 && compareClasses(all[i - 1], m) !== 0) rank += 1;
    ranks.set(m, rank);
  });
}

/** A run of marks, decomposed and in canonical order. */
function canonicalOrder(/** @type {string} */ run) {
  /** @type {string[]} */
  const chars = [];
  for (const c of run) {
    let d = decomposed.get(c);
    if (d === undefined) {
      d = c.normalize('NFD');
      decomposed.set(c, d);
    }
    for (const part of d) chars.push(part);
  }
  const marks = new Set(chars.filter((c) => !isStarter(c)));
  rankAll(marks);
  /** @type {string[]} */
  const out = [];
  let start = 0;
  const flush = (/** @type {number} */ end) => {
    // a stable counting sort of chars[start, end) by rank
    /** @type {string[][]} */
    const buckets = [];
    for (let i = start; i < end; ++i) {
      const r = /** @type {number} */ (ranks.get(chars[i]));
      (buckets[r] ??= []).push(chars[i]);
    }
    for (const bucket of buckets) if (bucket) for (const c of bucket) out.push(c);
  };
  for (let i = 0; i < chars.length; ++i) {
    if (isStarter(chars[i])) {
      flush(i);
      out.push(chars[i]);
      start = i + 1;
    }
  }
  flush(chars.length);
  return out.join('');
}

/**
 * The same string as text.normalize('NFKC'), without its quadratic time on long runs of marks.
 * @param {string} text
 */
export function nfkc(text) {
  LONG_RUN.lastIndex = 0;
  if (!LONG_RUN.test(text)) return text.normalize('NFKC');
  return text.replace(LONG_RUN, canonicalOrder).normalize('NFKC');
}
