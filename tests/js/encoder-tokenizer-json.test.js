// The pretrained model's vocabulary as a tokenizer.json (scripts/build/use-lite/convert.js
// tokenizerJson, written by build-model.js beside vocab.txt), read by Hugging Face's tokenizer
// library (web/lib/tokenizer.js), against the model's own tokenizer: the committed ids of its
// TF.js tokenizer (tests/golden/encoder) and the encoder's tokenizer (mha_encoder.wasm, which
// gives those ids on every committed case) on seeded random texts of pieces, spaces, colons,
// control characters, combining marks, compatibility forms, unassigned, astral code points and
// lone surrogates. Every difference must be one of the two choices of the model's tokenizer
// that a Unigram model of the library cannot make (docs/pretrained.md, "As a tokenizer.json"):
//   tie:        two paths of equal score (or equal but for the rounding of their sums): the
//               model's tokenizer keeps the later one, the library the first;
//   zero start: the text begins with pieces of score 0 ("▁:", "▁:)", "▁:(", "▁:-)", then ":",
//               "):", ":00", "://"): the model's tokenizer takes a best score of exactly 0 for
//               "unset" and lets any later path replace it.
// Needs web/models/use-lite (node scripts/build/build-model.js) and the WebAssembly build.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadEncoder } from '../../web/lib/encoder.js';
import { loadTokenizer } from '../../web/lib/tokenizer.js';
import { loadEncoderGolden } from '../golden/encoder/golden_common.js';

const MODEL_DIR = fileURLToPath(new URL('../../web/models/use-lite/', import.meta.url));
const golden = loadEncoderGolden();
const RANDOM_TEXTS = Number(process.env.TOKENIZER_JSON_TEXTS ?? 20000);

let encoder;
let library;
let scores;

before(async () => {
  encoder = await loadEncoder();
  const text = fs.readFileSync(path.join(MODEL_DIR, 'tokenizer.json'), 'utf8');
  library = await loadTokenizer(text);
  scores = JSON.parse(text).model.vocab.map(([, score]) => score);
});

after(() => encoder?.dispose());

/** A path's score as the model's tokenizer sums it: an unknown piece scores 0. */
const pathScore = (ids) => ids.reduce((sum, id) => sum + (id === 0 ? 0 : scores[id]), 0);

/** Why the library's ids differ from the model's, or null when neither rule explains it. */
function explain(model, lib) {
  if (lib.length > 0 && scores[lib[0]] === 0 && model[0] !== lib[0]) return 'zero start';
  const a = pathScore(model);
  const b = pathScore(lib);
  if (Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a))) return 'tie';
  return null;
}

test('tokenizer.json: a Unigram model over the whole text, NFKC, "▁" before it and for each space', () => {
  const json = JSON.parse(fs.readFileSync(path.join(MODEL_DIR, 'tokenizer.json'), 'utf8'));
  assert.equal(json.model.type, 'Unigram');
  assert.equal(json.pre_tokenizer, null, 'one lattice over the whole text, as the model\'s tokenizer walks it');
  assert.equal(json.model.vocab.length, encoder.config.vocabSize);
  assert.equal(library.info.kind, 'unigram');
  // the reserved pieces keep their ids but are never matched: "<s>" in a text is cut into pieces
  assert.deepEqual(library.encode('<s>'), encoder.tokenize('<s>').ids);
  assert.deepEqual(library.encode('The cat sat on the mat because it was tired.'), golden.cases[0].ids);
});

test('the committed cases: the ids of the model\'s TF.js tokenizer in all but one, a tie', () => {
  const differ = [];
  let tokens = 0;
  for (const c of golden.cases) {
    const lib = library.encode(c.text);
    tokens += c.ids.length;
    if (JSON.stringify(lib) !== JSON.stringify(c.ids)) differ.push({ name: c.name, text: c.text, model: c.ids, lib, why: explain(c.ids, lib) });
  }
  for (const d of differ) console.log(`    ${d.name} ${JSON.stringify(d.text)}: model ${d.model.join(' ')}, library ${d.lib.join(' ')} (${d.why})`);
  console.log(`    ${golden.cases.length - differ.length} of ${golden.cases.length} cases (${tokens} ids) the same`);
  // "--- *** ___ ===": "__" "_" and "_" "__" score the same; the model's tokenizer keeps the later path
  assert.deepEqual(differ.map((d) => [d.name, d.why]), [['punctuation_15', 'tie']]);
  const [tie] = differ;
  assert.deepEqual(tie.model.map((id) => library.token(id)).slice(5, 7), ['__', '_']);
  assert.deepEqual(tie.lib.map((id) => library.token(id)).slice(5, 7), ['_', '__']);
});

test('the two choices the library cannot make, each on a text of its own', () => {
  // a text that starts with ":" (an emoticon): "▁:-)" scores 0, which the model's tokenizer takes for "unset"
  assert.deepEqual(encoder.tokenize(':-)').ids.map((id) => library.token(id)), ['▁', ':', '-', ')']);
  assert.deepEqual(library.encode(':-)').map((id) => library.token(id)), ['▁:-)']);
  // inside a text the same piece is a best path like any other, and both agree
  assert.deepEqual(library.encode('ok :-)'), encoder.tokenize('ok :-)').ids);
  // two ways of equal score: "▁:)" ":" and "▁:" "):" both score 0
  assert.deepEqual(encoder.tokenize('ok :):').ids.slice(-2).map((id) => library.token(id)), ['▁:)', ':']);
  assert.deepEqual(library.encode('ok :):').slice(-2).map((id) => library.token(id)), ['▁:', '):']);
});

test(`${RANDOM_TEXTS} random texts: the encoder's tokenizer and the library differ only by those two choices`, () => {
  let seed = 20261204;
  const random = () => { // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (list) => list[Math.floor(random() * list.length)];
  const pieces = Array.from({ length: encoder.config.vocabSize }, (_, id) => library.token(id));
  const ranges = [[0x20, 0x7e], [0, 0x1f], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x4ff], [0x600, 0x6ff], [0x900, 0x97f],
    [0x1100, 0x11ff], [0x2000, 0x218f], [0x2460, 0x24ff], [0x3000, 0x30ff], [0x3130, 0x318f], [0x4e00, 0x4fff], [0xac00, 0xad00],
    [0xfb00, 0xfb4f], [0xfe30, 0xfe4f], [0xff00, 0xffef], [0xd800, 0xdfff], [0x1d400, 0x1d7ff], [0x1f300, 0x1f9ff], [0xe0000, 0xe007f]];
  const char = () => {
    const [a, b] = pick(ranges);
    const c = a + Math.floor(random() * (b - a + 1));
    return c >= 0xd800 && c <= 0xdfff ? String.fromCharCode(c) : String.fromCodePoint(c);
  };
  const odd = [':', '://', ':)', ':(', ':-)', ':00', ':30', ' ', '  ', '\uFFFD', '<s>', '</s>', 'extra_token_id_1', '”5', '\u00a0', '\u3000', '\t', '\n', '...', '--'];
  const text = () => {
    let s = '';
    for (let n = 1 + Math.floor(random() * 12); n > 0; --n) {
      const r = random();
      s += r < 0.45 ? pick(pieces).replaceAll('▁', random() < 0.8 ? ' ' : '▁') : r < 0.7 ? char() : r < 0.85 ? pick(odd) : ' ';
    }
    return s;
  };
  const counts = { same: 0, tie: 0, 'zero start': 0 };
  const unexplained = [];
  for (let i = 0; i < RANDOM_TEXTS; ++i) {
    const s = text();
    const model = encoder.tokenize(s).ids;
    const lib = library.encode(s);
    if (JSON.stringify(model) === JSON.stringify(lib)) { ++counts.same; continue; }
    const why = explain(model, lib);
    if (why) ++counts[why];
    else unexplained.push({ text: s, model, lib });
  }
  console.log(`    ${RANDOM_TEXTS} texts: ${counts.same} the same; ${counts['zero start']} differ at a start of score 0, ${counts.tie} at a tie; ${unexplained.length} otherwise`);
  assert.deepEqual(unexplained.slice(0, 5), [], 'differences neither rule explains');
  assert.ok(counts['zero start'] > 0 && counts.tie > 0, 'the random texts reach both choices');
});
