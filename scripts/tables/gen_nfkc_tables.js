// Writes cpp/src/encoder/nfkc_tables.cpp: the data NFKC needs, read off this Node.js's own
// String.prototype.normalize (ICU), so that the C++ tokenizer normalises as the reference
// tokenizer does in Node.js. Run once per Unicode version and commit the output:
//
//   node scripts/tables/gen_nfkc_tables.js            (writes the file; checks the tables first)
//
// Three tables, each derived from normalize() alone:
//  1. the full compatibility decomposition (NFKD) of every code point it changes, Hangul
//     syllables excepted (they decompose by formula);
//  2. the canonical combining class of every mark, as a rank: NFD reorders two adjacent marks
//     exactly when the first has the higher class, so sorting the marks with that test gives
//     their classes in order (ranks keep every comparison and which ones are 0);
//  3. the pairs canonical composition joins: for every composite NFC keeps, a (first, second)
//     pair that NFC joins back into it.
// Before writing, an NFKC written here from the tables (the algorithm cpp/src/encoder/nfkc.cpp
// follows) is compared with normalize('NFKC') on every code point alone, on every code point
// followed by each mark of a sample, and on 200,000 random strings of marks, composites, jamo
// and letters; any difference stops the script.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const OUT = fileURLToPath(new URL('../../cpp/src/encoder/nfkc_tables.cpp', import.meta.url));
const MAX = 0x10ffff;
const isSurrogate = (cp) => cp >= 0xd800 && cp <= 0xdfff;
const S_BASE = 0xac00, L_BASE = 0x1100, V_BASE = 0x1161, T_BASE = 0x11a7;
const L_COUNT = 19, V_COUNT = 21, T_COUNT = 28, N_COUNT = V_COUNT * T_COUNT, S_COUNT = L_COUNT * N_COUNT;
const isHangulSyllable = (cp) => cp >= S_BASE && cp < S_BASE + S_COUNT;
const str = (...cps) => String.fromCodePoint(...cps);
const cpsOf = (s) => Array.from(s, (c) => c.codePointAt(0));

function decompositions() {
  const table = new Map();
  for (let cp = 0; cp <= MAX; ++cp) {
    if (isSurrogate(cp) || isHangulSyllable(cp)) continue;
    const s = str(cp);
    const d = s.normalize('NFKD');
    if (d !== s) table.set(cp, cpsOf(d));
  }
  return table;
}

/** Ranks of the nonzero canonical combining classes, by code point. */
function combiningRanks(decomposed) {
  const ACUTE = 0x301;        // class 230
  const TILDE_OVERLAY = 0x334; // class 1
  const marks = [];
  for (let cp = 0; cp <= MAX; ++cp) {
    if (isSurrogate(cp) || decomposed.has(cp) || isHangulSyllable(cp)) continue;
    const higherThanOne = str(cp, TILDE_OVERLAY).normalize('NFD') !== str(cp, TILDE_OVERLAY);
    const nonzeroBelow230 = str(ACUTE, cp).normalize('NFD') !== str(ACUTE, cp);
    if (higherThanOne || nonzeroBelow230) marks.push(cp);
  }
  // a before b when NFD(b a) puts a first (class(a) < class(b)); equal classes never swap
  const compare = (a, b) => (str(a, b).normalize('NFD') !== str(a, b) ? 1 : str(b, a).normalize('NFD') !== str(b, a) ? -1 : 0);
  marks.sort((a, b) => compare(a, b) || a - b);
  const ranks = new Map();
  let rank = 1;
  for (let i = 0; i < marks.length; ++i) {
    if (i > 0 && compare(marks[i - 1], marks[i]) !== 0) ++rank;
    ranks.set(marks[i], rank);
  }
  if (rank > 255) throw new Error(`${rank} combining classes: more than a byte holds`);
  return ranks;
}

function compositions() {
  const pairs = [];
  for (let cp = 0; cp <= MAX; ++cp) {
    if (isSurrogate(cp) || isHangulSyllable(cp)) continue;
    const s = str(cp);
    const d = cpsOf(s.normalize('NFD'));
    if (d.length < 2 || s.normalize('NFC') !== s) continue;
    let found = null;
    for (let k = d.length - 1; k >= 1 && !found; --k) {
      const first = cpsOf(str(...d.slice(0, k), ...d.slice(k + 1)).normalize('NFC'));
      if (first.length === 1 && str(first[0], d[k]).normalize('NFC') === s) found = [first[0], d[k], cp];
    }
    if (!found) throw new Error(`U+${cp.toString(16)}: no pair composes into it`);
    pairs.push(found);
  }
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (let i = 1; i < pairs.length; ++i) {
    if (pairs[i][0] === pairs[i - 1][0] && pairs[i][1] === pairs[i - 1][1]) throw new Error('two composites from one pair');
  }
  return pairs;
}

/** NFKC from the tables: decompose, reorder marks by class (stable), compose. */
function makeNfkc(decomposed, ranks, pairs) {
  const pairMap = new Map(pairs.map(([a, b, c]) => [`${a},${b}`, c]));
  const rankOf = (cp) => ranks.get(cp) ?? 0;
  const compose = (a, b) => {
    if (a >= L_BASE && a < L_BASE + L_COUNT && b >= V_BASE && b < V_BASE + V_COUNT) {
      return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
    }
    if (isHangulSyllable(a) && (a - S_BASE) % T_COUNT === 0 && b > T_BASE && b < T_BASE + T_COUNT) return a + (b - T_BASE);
    return pairMap.get(`${a},${b}`) ?? -1;
  };
  return (input) => {
    const out = [];
    for (const cp of input) {
      if (isHangulSyllable(cp)) {
        const s = cp - S_BASE;
        out.push(L_BASE + Math.floor(s / N_COUNT), V_BASE + Math.floor((s % N_COUNT) / T_COUNT));
        if (s % T_COUNT) out.push(T_BASE + (s % T_COUNT));
      } else if (decomposed.has(cp)) {
        out.push(...decomposed.get(cp));
      } else {
        out.push(cp);
      }
    }
    for (let i = 0; i < out.length;) {
      if (rankOf(out[i]) === 0) { ++i; continue; }
      let j = i;
      while (j < out.length && rankOf(out[j]) !== 0) ++j;
      const run = out.slice(i, j).map((cp, k) => [rankOf(cp), k, cp]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      for (let k = 0; k < run.length; ++k) out[i + k] = run[k][2];
      i = j;
    }
    const result = [];
    let starter = -1;
    let lastRank = 0;
    for (const cp of out) {
      const rank = rankOf(cp);
      if (starter >= 0 && (lastRank < rank || (lastRank === 0 && result.length - 1 === starter))) {
        const c = compose(result[starter], cp);
        if (c >= 0) { result[starter] = c; continue; }
      }
      if (rank === 0) starter = result.length;
      lastRank = rank;
      result.push(cp);
    }
    return result;
  };
}

function check(nfkc, decomposed, ranks, pairs) {
  let compared = 0;
  const same = (cps) => {
    ++compared;
    const expected = str(...cps).normalize('NFKC');
    const got = str(...nfkc(cps));
    if (got !== expected) {
      const hex = (s) => cpsOf(s).map((c) => `U+${c.toString(16).toUpperCase()}`).join(' ');
      throw new Error(`the tables' NFKC differs from normalize('NFKC') on ${hex(str(...cps))}: ${hex(got)}, expected ${hex(expected)}`);
    }
  };
  for (let cp = 0; cp <= MAX; ++cp) if (!isSurrogate(cp)) same([cp]);
  const marks = [...ranks.keys()];
  const sampleMarks = marks.filter((_, i) => i % 7 === 0).concat([0x301, 0x300, 0x308, 0x323, 0x327, 0x334, 0x345, 0x3099, 0x309a]);
  const firsts = [...new Set(pairs.map((p) => p[0]))];
  for (const a of firsts) for (const m of sampleMarks) same([a, m]);
  for (let cp = 0; cp <= 0x2fff; ++cp) if (!isSurrogate(cp)) for (const m of [0x301, 0x323, 0x308]) same([cp, m]);
  const pool = [...marks, ...firsts, ...pairs.map((p) => p[2]), ...decomposed.keys(), 0x1100, 0x1161, 0x11a8, 0xac00, 0xac01,
    0x1112, 0x1175, 0x11c2, 0xd7a3, 0x41, 0x61, 0x20, 0x3b1, 0x5d0, 0x915, 0x93c, 0x94d, 0xe01, 0x1d400];
  let seed = 12345;
  const random = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  for (let i = 0; i < 200_000; ++i) {
    const length = 1 + random(8);
    same(Array.from({ length }, () => pool[random(pool.length)]));
  }
  return compared;
}

function hexList(values, perLine, width) {
  const lines = [];
  for (let i = 0; i < values.length; i += perLine) {
    lines.push(`    ${values.slice(i, i + perLine).map((v) => `0x${v.toString(16).toUpperCase().padStart(width, '0')}`).join(', ')},`);
  }
  return lines.join('\n');
}

function write(decomposed, ranks, pairs, compared) {
  const codePoints = [...decomposed.keys()].sort((a, b) => a - b);
  const offsets = [0];
  const poolValues = [];
  for (const cp of codePoints) {
    poolValues.push(...decomposed.get(cp));
    offsets.push(poolValues.length);
  }
  if (poolValues.length > 0xffff) throw new Error('the decomposition pool outgrew 16-bit offsets');
  const ranges = [];
  for (const cp of [...ranks.keys()].sort((a, b) => a - b)) {
    const last = ranges[ranges.length - 1];
    if (last && last[1] === cp - 1 && last[2] === ranks.get(cp)) last[1] = cp;
    else ranges.push([cp, cp, ranks.get(cp)]);
  }
  const rankCount = Math.max(...ranks.values());
  const text = `// Generated by scripts/tables/gen_nfkc_tables.js from String.prototype.normalize of Node.js ${process.version}
// (ICU ${process.versions.icu}, Unicode ${process.versions.unicode}). Do not edit: run the script again.
// Checked there against normalize('NFKC') on ${compared.toLocaleString('en')} strings.
#include "encoder/nfkc_tables.h"

namespace mha::encoder::nfkc {

const char* const kUnicodeVersion = "${process.versions.unicode}";

// Code points NFKD changes (Hangul syllables aside), ascending; code point i decomposes into
// kDecompositionPool[kDecompositionOffsets[i] .. kDecompositionOffsets[i + 1]).
const size_t kNumDecompositions = ${codePoints.length};
const char32_t kDecomposedCodePoints[] = {
${hexList(codePoints, 10, 4)}
};
const uint16_t kDecompositionOffsets[] = {
${offsets.map((o) => String(o)).reduce((lines, o, i) => { if (i % 16 === 0) lines.push([]); lines[lines.length - 1].push(o); return lines; }, []).map((l) => `    ${l.join(', ')},`).join('\n')}
};
const char32_t kDecompositionPool[] = {
${hexList(poolValues, 10, 4)}
};

// Canonical combining classes as ranks 1..${rankCount} (0 for every code point not listed), in
// ranges of consecutive code points of one rank.
const size_t kNumCombiningRanges = ${ranges.length};
const CombiningRange kCombiningRanges[] = {
${ranges.map(([a, b, r]) => `    {0x${a.toString(16).toUpperCase()}, 0x${b.toString(16).toUpperCase()}, ${r}},`).join('\n')}
};

// Canonical composition: first + second -> composite, sorted by (first, second).
const size_t kNumCompositions = ${pairs.length};
const Composition kCompositions[] = {
${pairs.map(([a, b, c]) => `    {0x${a.toString(16).toUpperCase()}, 0x${b.toString(16).toUpperCase()}, 0x${c.toString(16).toUpperCase()}},`).join('\n')}
};

}  // namespace mha::encoder::nfkc
`;
  fs.writeFileSync(OUT, text);
  console.log(`wrote ${path.relative(process.cwd(), OUT)}: ${codePoints.length} decompositions (${poolValues.length} code points), ${ranges.length} combining-class ranges (${rankCount} classes), ${pairs.length} compositions; ${text.length} bytes`);
}

const started = Date.now();
const decomposed = decompositions();
const ranks = combiningRanks(decomposed);
const pairs = compositions();
// nfkc.cpp skips its lookups below these code points.
if (Math.min(...decomposed.keys()) < 0xa0) throw new Error('a code point below U+00A0 decomposes');
if (Math.min(...ranks.keys(), ...pairs.map((p) => p[1])) < 0x300) throw new Error('a mark or a second of a pair below U+0300');
const compared = check(makeNfkc(decomposed, ranks, pairs), decomposed, ranks, pairs);
write(decomposed, ranks, pairs, compared);
console.log(`in ${((Date.now() - started) / 1000).toFixed(1)} s`);
