// scripts/export/nanogpt_data.py writes nanoGPT's character-level dataset as
// data/shakespeare_char/prepare.py does: ids in sorted-character order, the first 90% of the
// text in train.bin and the rest in val.bin (uint16, little-endian), and meta.pkl's vocab_size,
// itos and stoi; the repo's annotated JSON gives the 'text' of each entry, one a line; bad
// input names what was expected. Needs python3 (standard library only); skipped without it.
//
//   node --test tests/js/nanogpt-data.test.js
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = spawnSync('python3', ['--version']).status === 0 ? 'python3' : null;
const dir = mkdtempSync(path.join(tmpdir(), 'nanogpt-data-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args) => spawnSync(python, [path.join(root, 'scripts', 'export', 'nanogpt_data.py'), ...args], { encoding: 'utf8' });
const ids = (file) => { const b = readFileSync(file); return Array.from({ length: b.length / 2 }, (_, i) => b.readUInt16LE(2 * i)); };
const meta = (file) => JSON.parse(spawnSync(python, ['-c',
  'import json, pickle, sys; m = pickle.load(open(sys.argv[1], "rb")); print(json.dumps([m["vocab_size"], sorted(m["itos"].items()), sorted(m["stoi"].items())]))',
  file], { encoding: 'utf8' }).stdout);

test('a text file: the ids, the 90/10 split and meta.pkl of prepare.py', { skip: !python && 'no python3' }, () => {
  const text = 'The queen sees herself, é and ß.\nWho helps them?\n'.repeat(40);
  const file = path.join(dir, 'in.txt');
  writeFileSync(file, text);
  const r = run(file, '--out', path.join(dir, 'a'));
  assert.equal(r.status, 0, r.stderr);
  const chars = [...new Set(text)].sort();   // BMP only: code-unit order is code-point order
  const expected = [...text].map((c) => chars.indexOf(c));
  const n = Math.floor(expected.length * 0.9);
  assert.deepEqual(ids(path.join(dir, 'a', 'train.bin')), expected.slice(0, n));
  assert.deepEqual(ids(path.join(dir, 'a', 'val.bin')), expected.slice(n));
  const [vocabSize, itos, stoi] = meta(path.join(dir, 'a', 'meta.pkl'));
  assert.equal(vocabSize, chars.length);
  assert.deepEqual(itos, chars.map((c, i) => [i, c]));
  assert.deepEqual(stoi, chars.map((c, i) => [c, i]).sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  assert.match(r.stdout, new RegExp(`vocab size ${chars.length}: train ${n.toLocaleString('en-US')} tokens`));
});

test('the repo\'s annotated sentences: one text a line', { skip: !python && 'no python3' }, () => {
  const file = path.join(root, 'web', 'data', 'roles', 'relations.json');
  const r = run(file, '--out', path.join(dir, 'b'));
  assert.equal(r.status, 0, r.stderr);
  const text = `${JSON.parse(readFileSync(file, 'utf8')).sentences.map((s) => s.text).join('\n')}\n`;
  const [vocabSize, itos] = meta(path.join(dir, 'b', 'meta.pkl'));
  const decoded = [...ids(path.join(dir, 'b', 'train.bin')), ...ids(path.join(dir, 'b', 'val.bin'))].map((i) => itos[i][1]).join('');
  assert.equal(decoded, text);
  assert.equal(vocabSize, new Set(text).size);
});

test('bad input names what was expected', { skip: !python && 'no python3' }, () => {
  const json = path.join(dir, 'bad.json');
  writeFileSync(json, '{"sentences": [{"words": []}]}');
  let r = run(json, '--out', path.join(dir, 'c'));
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /bad\.json: expected an object with 'sentences' or 'items', a list of objects with a 'text' string/);
  const short = path.join(dir, 'short.txt');
  writeFileSync(short, 'too short');
  r = run(short, '--out', path.join(dir, 'c'));
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /10 characters: expected at least 1000/);
  r = run(path.join(dir, 'missing.txt'), '--out', path.join(dir, 'c'));
  assert.match(r.stderr, /missing\.txt: could not be read as UTF-8 text/);
});
