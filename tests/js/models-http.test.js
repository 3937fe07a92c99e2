// loadModel(url): a model folder served over HTTP (a node:http server on 127.0.0.1 serving
// tests/golden/models) opens to the same model as the folder on disk, bit for bit; a missing
// tokenizer.json is no tokenizer; a missing model.safetensors, a sharded checkpoint, HTTP
// errors, a refused connection, an HTML fallback page and a Content-Length over the limit are
// refused with the URL named; progress is monotone per file and ends at its size; a signal
// aborts the load.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModel } from '../../web/lib/models.js';
import { MODELS_DIR, serveModels, sendInChunks } from './model-server.js';

const sizeOf = (name, file) => fs.statSync(path.join(MODELS_DIR, name, file)).size;

/** Everything run() and headImportance() give, as plain numbers, to compare exactly. */
function outputs(model, text) {
  const ids = model.tokenizer ? model.encode(text) : text;
  const r = model.run(ids);
  return {
    config: model.config,
    tokenizer: model.tokenizer,
    ids: r.ids,
    weights: r.layers.map((l) => Array.from(l.weights.data)),
    residual: r.layers.map((l) => Array.from(l.residual.data)),
    hidden: Array.from(r.hidden.data),
    logits: r.logits && Array.from(r.logits.data),
    pooled: r.pooled && Array.from(r.pooled.data),
    importance: model.config.task === 'next-token' ? Array.from(model.headImportance(ids).data) : null,
  };
}

/** Asserts an MhaError with `code` whose message matches every pattern; prints it. */
function refusedWith(code, ...patterns) {
  return (error) => {
    assert.equal(error.name, 'MhaError', String(error));
    assert.equal(error.code, code, error.message);
    for (const pattern of patterns) assert.match(error.message, pattern);
    console.log(`    refused as expected: ${error.message}`);
    return true;
  };
}

const server = await serveModels((file, req, res) => {
  const { pathname } = new URL(req.url, 'http://localhost');
  if (pathname.startsWith('/sharded/')) {
    if (file === 'config.json') res.writeHead(200).end(fs.readFileSync(path.join(MODELS_DIR, 'gpt2-tied', 'config.json')));
    else if (file === 'model.safetensors.index.json') res.writeHead(200).end('{"weight_map": {}}');
    else res.writeHead(404).end();
    return true;
  }
  if (pathname.startsWith('/no-tokenizer/')) {
    if (file === 'tokenizer.json') res.writeHead(404).end();
    else return redirectTo('gpt2-trained', file, res);
    return true;
  }
  if (pathname.startsWith('/tokenizer-500/')) {
    if (file === 'tokenizer.json') res.writeHead(500, 'Internal Server Error').end();
    else return redirectTo('gpt2-trained', file, res);
    return true;
  }
  if (pathname.startsWith('/no-weights/')) {
    if (file === 'config.json') return redirectTo('gpt2-tied', file, res);
    res.writeHead(404).end();
    return true;
  }
  if (pathname.startsWith('/html/')) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title>');
    return true;
  }
  if (pathname.startsWith('/bad-config/')) {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"model_type": "gpt2",');
    return true;
  }
  if (pathname.startsWith('/huge/') && file === 'model.safetensors') {
    // claims a gigabyte and sends a few bytes, then nothing: a client that read on would hang
    res.writeHead(200, { 'content-length': 1_000_000_000 });
    res.write(Buffer.alloc(16));
    return true;
  }
  if (pathname.startsWith('/chunked/') && file === 'model.safetensors') {
    // no Content-Length (chunked): the limit is found on the bytes
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    sendInChunks(res, fs.readFileSync(path.join(MODELS_DIR, 'gpt2-trained', 'model.safetensors')));
    return true;
  }
  if (pathname.startsWith('/slow/') && file === 'model.safetensors') {
    // half the weights, then a pause until the client goes
    const bytes = fs.readFileSync(path.join(MODELS_DIR, 'gpt2-trained', 'model.safetensors'));
    res.writeHead(200, { 'content-length': bytes.length });
    res.write(bytes.subarray(0, bytes.length >> 1));
    return true;
  }
  if (/^\/(huge|chunked|slow)\//.test(pathname)) return redirectTo('gpt2-trained', file, res);
  return false;
});
after(() => server.close());

/** Serves a golden model's file under another folder's path. */
function redirectTo(name, file, res) {
  const where = path.join(MODELS_DIR, name, file);
  if (!fs.existsSync(where)) {
    res.writeHead(404).end();
  } else {
    const bytes = fs.readFileSync(where);
    res.writeHead(200, { 'content-length': bytes.length });
    sendInChunks(res, bytes);
  }
  return true;
}

test('a folder over HTTP opens to the same model as the folder on disk: GPT-2 and BERT, folder or config.json URL (and file: URLs)', { timeout: 60_000 }, async () => {
  for (const [name, text] of [['gpt2-trained', 'the king follows himself.'], ['bert-mlm', 'the [MASK] follows himself.']]) {
    const direct = await loadModel(path.join(MODELS_DIR, name));
    const expected = outputs(direct, text);
    direct.dispose();
    const onDisk = pathToFileURL(path.join(MODELS_DIR, name));
    for (const location of [server.url(name), `${server.url(name)}/`, new URL(`${server.url(name)}/config.json`), onDisk, `${onDisk.href}/config.json`]) {
      const model = await loadModel(location);
      assert.deepEqual(outputs(model, text), expected, `${name} from ${location}`);
      model.dispose();
    }
    console.log(`    ${name}: ${expected.weights.length} layers' weights, hidden${expected.logits ? ', logits' : ''}${expected.importance ? ', head importance' : ''} identical from 3 URL forms and 2 file: URLs`);
  }
});

test('progress: per file, from 0 and monotone, the last event at the file size; the weights arrive in parts', { timeout: 60_000 }, async () => {
  const events = [];
  const model = await loadModel(server.url('gpt2-trained'), { onProgress: (p) => events.push({ ...p }) });
  model.dispose();
  const files = [...new Set(events.map((e) => e.file))];
  assert.deepEqual(files, ['config.json', 'model.safetensors', 'tokenizer.json']);
  for (const file of files) {
    const mine = events.filter((e) => e.file === file);
    const size = sizeOf('gpt2-trained', file);
    assert.deepEqual(mine[0], { file, loaded: 0, total: size }, `${file}: the first event`);
    assert.deepEqual(mine.at(-1), { file, loaded: size, total: size }, `${file}: the last event`);
    for (let i = 1; i < mine.length; ++i) {
      assert.ok(mine[i].loaded >= mine[i - 1].loaded && mine[i].total === size, `${file}: event ${i} ${JSON.stringify(mine[i])} after ${JSON.stringify(mine[i - 1])}`);
    }
  }
  const partial = events.filter((e) => e.file === 'model.safetensors' && e.loaded > 0 && e.loaded < e.total);
  console.log(`    ${events.length} events; model.safetensors (${sizeOf('gpt2-trained', 'model.safetensors')} bytes) in ${partial.length + 1} parts`);
  assert.ok(partial.length >= 2, 'the weights are streamed, not read in one piece');
});

test('no tokenizer.json (404) opens a model that runs on ids', { timeout: 60_000 }, async () => {
  const model = await loadModel(`${server.base}/no-tokenizer/`);
  assert.equal(model.tokenizer, null);
  const direct = await loadModel(path.join(MODELS_DIR, 'gpt2-trained'));
  const ids = direct.encode('the king follows himself.');
  assert.deepEqual(Array.from(model.run(ids).logits.data), Array.from(direct.run(ids).logits.data));
  assert.throws(() => model.run('a text'), /a text needs tokenizer\.json, which this model has not; pass ids/);
  assert.throws(() => model.read(ids), /read needs tokenizer\.json, which this model has not$/);
  model.dispose();
  direct.dispose();
});

test('a missing or sharded model.safetensors, HTTP errors, an HTML page, a bad config and a refused connection name the URL', { timeout: 60_000 }, async () => {
  await assert.rejects(loadModel(`${server.base}/models/nothing-here/`), refusedWith('MODEL_FILE', /\/models\/nothing-here\/config\.json: HTTP 404/));
  const before = server.requests.length;
  await assert.rejects(loadModel(`${server.base}/sharded/`), refusedWith('MODEL_FILE',
    new RegExp(`${server.base}/sharded/model\\.safetensors: not found \\(HTTP 404\\)`), /sharded checkpoints are not supported/));
  assert.deepEqual(server.requests.slice(before), ['/sharded/config.json', '/sharded/model.safetensors', '/sharded/model.safetensors.index.json']);
  await assert.rejects(loadModel(`${server.base}/no-weights/`), refusedWith('MODEL_FILE',
    new RegExp(`${server.base}/no-weights/model\\.safetensors: not found \\(HTTP 404\\): a Hugging Face model folder has model\\.safetensors`)));
  await assert.rejects(loadModel(`${server.base}/tokenizer-500/`), refusedWith('MODEL_FILE',
    new RegExp(`${server.base}/tokenizer-500/tokenizer\\.json: HTTP 500 Internal Server Error`)));
  await assert.rejects(loadModel(`${server.base}/html/`), refusedWith('MODEL_FILE', /\/html\/config\.json: the server answered with an HTML page/));
  const badConfigAt = server.requests.length;
  await assert.rejects(loadModel(`${server.base}/bad-config/`), refusedWith('INVALID_CONFIG', /\/bad-config\/config\.json: not valid JSON/));
  assert.deepEqual(server.requests.slice(badConfigAt), ['/bad-config/config.json'], 'the weights are not fetched for a config that is not JSON');

  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address();
  await new Promise((resolve) => closed.close(resolve));
  await assert.rejects(loadModel(`http://127.0.0.1:${port}/model/`), refusedWith('MODEL_FILE',
    new RegExp(`http://127\\.0\\.0\\.1:${port}/model/config\\.json: could not be fetched: .*ECONNREFUSED`)));
  await assert.rejects(loadModel('ftp://example.com/model/'), refusedWith('INVALID_ARGUMENT', /has the scheme ftp:; expected http: or https:/));

  const model = await loadModel(server.url('gpt2-tied'));  // still works after all that
  assert.equal(model.config.name, 'GPT-2');
  model.dispose();
});

test('the size limit: a Content-Length above it is refused before the body is read; without one, on the bytes', { timeout: 60_000 }, async () => {
  const started = performance.now();
  await assert.rejects(loadModel(`${server.base}/huge/`, { maxFileBytes: 1_000_000 }), refusedWith('TOO_LARGE',
    new RegExp(`${server.base}/huge/model\\.safetensors: 1000000000 bytes \\(its Content-Length\\), more than the 1000000`)));
  console.log(`    refused after ${(performance.now() - started).toFixed(0)} ms (the server sent 16 of 1e9 bytes and waits)`);
  const size = sizeOf('gpt2-trained', 'model.safetensors');
  await assert.rejects(loadModel(`${server.base}/chunked/`, { maxFileBytes: 50_000 }), refusedWith('TOO_LARGE',
    /\/chunked\/model\.safetensors: \d+ bytes at least \(no Content-Length\), more than the 50000/));
  const events = [];
  const model = await loadModel(`${server.base}/chunked/`, { onProgress: (p) => events.push(p) });
  const weights = events.filter((e) => e.file === 'model.safetensors');
  assert.ok(weights.length > 2 && weights.slice(0, -1).every((e) => e.total === 0), 'no Content-Length: total 0 while downloading');
  assert.deepEqual(weights.at(-1), { file: 'model.safetensors', loaded: size, total: size });
  model.dispose();
});

test('a signal aborts the load, before it starts or during the download', { timeout: 60_000 }, async () => {
  await assert.rejects(loadModel(server.url('gpt2-trained'), { signal: AbortSignal.abort() }), { name: 'AbortError' });
  const controller = new AbortController();
  const loading = loadModel(`${server.base}/slow/`, {
    signal: controller.signal,
    onProgress: (p) => { if (p.file === 'model.safetensors' && p.loaded > 0) controller.abort(); },
  });
  await assert.rejects(loading, { name: 'AbortError' });
  await assert.rejects(loadModel(server.url('gpt2-trained'), { signal: 'soon' }), refusedWith('INVALID_ARGUMENT', /signal must be an AbortSignal/));
});
