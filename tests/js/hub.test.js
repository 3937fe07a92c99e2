// loadModel('hf:owner/name') against a local stand-in for the Hub (mimic-hub.js: the models API,
// resolve URLs, large files redirected to a storage host, a sharded checkpoint and the faults):
// what opens by name is what opens from the folder on disk, bit for bit; the plan comes before
// any weight; a second open makes no request and works with the Hub gone; each fault gives its
// message, keeps nothing half-written, and the module opens a model after it. npm run model opens
// the three families by name; tokenize-time-limit, as a link and an element give it, is checked.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadModel, listCachedModels, deleteCachedModel, hubModelInfo } from '../../web/lib/models.js';
import { parseHubId } from '../../web/lib/hub.js';
import { MODELS_DIR, startMimicHub } from './mimic-hub.js';

const hub = await startMimicHub();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-hub-'));
after(async () => {
  await hub.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
let folders = 0;
const freshCache = () => path.join(tmp, `cache-${++folders}`);
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
    hidden: Array.from(r.hidden.data),
    logits: r.logits && Array.from(r.logits.data),
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

const since = (at) => hub.requests.slice(at).map((r) => `${r.origin} ${r.path.replace(/\/resolve\/[0-9a-f]{40}\//, '/resolve/COMMIT/').replace(/\/repos\/.*/, '/repos/BLOB')}`);

test('repository ids: hf:owner/name, a revision after @ or as an option; bad ids are refused by what they are', () => {
  assert.deepEqual(parseHubId('hf:openai-community/gpt2'), { repo: 'openai-community/gpt2', revision: 'main' });
  assert.deepEqual(parseHubId('hf:gpt2@v1.0'), { repo: 'gpt2', revision: 'v1.0' });
  assert.deepEqual(parseHubId('hf:a/b@main', 'refs/pr/1'), { repo: 'a/b', revision: 'refs/pr/1' });
  for (const bad of ['hf:', 'hf:a/b/c', 'hf:../etc', 'hf:a/..', 'hf:a b/c', 'hf:-a/b']) {
    assert.throws(() => parseHubId(bad), /is not a Hub repository id: expected owner\/name/, bad);
  }
  assert.throws(() => parseHubId('hf:a/b@x?y'), /revision "x\?y": expected a branch, tag or commit/);
});

test('GPT-2, BERT and Llama by name: the plan first, every file with its size; what opens is what opens from the folder', { timeout: 60_000 }, async () => {
  for (const [repo, folder, text] of [
    ['openai-community/gpt2', 'gpt2-trained', 'the king follows himself.'],
    ['google-bert/bert-base-uncased', 'bert-mlm', 'the [MASK] follows himself.'],
    ['HuggingFaceTB/SmolLM2-135M', 'llama-gqa', 'the king follows himself.'],
  ]) {
    const direct = await loadModel(path.join(MODELS_DIR, folder));
    const expected = outputs(direct, text);
    direct.dispose();
    const at = hub.requests.length;
    const plans = [];
    const events = [];
    const model = await loadModel(`hf:${repo}`, { endpoint: hub.endpoint, cacheDir: freshCache(), onPlan: (p) => plans.push(p), onProgress: (p) => events.push(p) });
    assert.deepEqual(outputs(model, text), expected, repo);
    model.dispose();
    assert.equal(plans.length, 1);
    const files = ['config.json', 'model.safetensors', 'tokenizer.json'];
    assert.deepEqual(plans[0], {
      repo, revision: 'main', commit: hub.commits[repo], endpoint: hub.endpoint, fits: true,
      files: files.map((file) => ({ file, bytes: sizeOf(folder, file), cached: false })),
      bytes: files.reduce((s, f) => s + sizeOf(folder, f), 0), downloadBytes: files.reduce((s, f) => s + sizeOf(folder, f), 0),
    });
    const r = repo;
    assert.deepEqual(since(at), [
      `hub /api/models/${r}/revision/main?blobs=true`, `hub /${r}/resolve/COMMIT/config.json`,
      `hub /${r}/resolve/COMMIT/model.safetensors`, 'storage /repos/BLOB', `hub /${r}/resolve/COMMIT/tokenizer.json`,
    ], 'the API, then each file by the commit, the weights through the storage host');
    for (const file of files) {
      const mine = events.filter((e) => e.file === file);
      assert.deepEqual(mine[0], { file, loaded: 0, total: sizeOf(folder, file) });
      assert.deepEqual(mine.at(-1), { file, loaded: sizeOf(folder, file), total: sizeOf(folder, file) });
    }
    console.log(`    ${repo}: identical to ${folder} on disk; ${events.length} progress events; requests: ${since(at).length}`);
  }
});

test('a second open makes no request, and opens with the Hub gone (offline); HF_ENDPOINT is read', { timeout: 60_000 }, async () => {
  const cacheDir = freshCache();
  process.env.HF_ENDPOINT = hub.endpoint;
  try {
    const first = await loadModel('hf:openai-community/gpt2', { cacheDir });
    const expected = outputs(first, 'the cat sat.');
    first.dispose();
    const at = hub.requests.length;
    const plans = [];
    const again = await loadModel('hf:openai-community/gpt2', { cacheDir, onPlan: (p) => plans.push(p) });
    assert.deepEqual(outputs(again, 'the cat sat.'), expected);
    again.dispose();
    assert.deepEqual(since(at), [], 'no request on the second open');
    assert.equal(plans[0].downloadBytes, 0);
    assert.ok(plans[0].files.every((f) => f.cached));

    // the Hub unreachable: a port nothing listens on
    const closed = http.createServer();
    await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gone = `http://127.0.0.1:${closed.address().port}`;
    await new Promise((resolve) => closed.close(resolve));
    process.env.HF_ENDPOINT = gone;
    const offline = await loadModel('hf:openai-community/gpt2', { cacheDir });
    assert.deepEqual(outputs(offline, 'the cat sat.'), expected);
    offline.dispose();
    await assert.rejects(loadModel('hf:google-bert/bert-base-uncased', { cacheDir }), refusedWith('MODEL_FILE',
      new RegExp(`${gone}/api/models/google-bert/bert-base-uncased/revision/main\\?blobs=true: could not be fetched: .*ECONNREFUSED.*not in this machine's cache .*so it cannot be opened offline`)));
    // the revision by its commit opens from the cache too
    const byCommit = await loadModel('hf:openai-community/gpt2', { cacheDir, revision: hub.commits['openai-community/gpt2'] });
    byCommit.dispose();
  } finally {
    delete process.env.HF_ENDPOINT;
  }
  const cached = await listCachedModels({ cacheDir });
  assert.deepEqual(cached.map(({ repo, commit, revisions, bytes }) => ({ repo, commit, revisions, bytes })), [{
    repo: 'openai-community/gpt2', commit: hub.commits['openai-community/gpt2'], revisions: ['main'],
    bytes: ['config.json', 'model.safetensors', 'tokenizer.json'].reduce((s, f) => s + sizeOf('gpt2-trained', f), 0),
  }]);
  assert.equal(await deleteCachedModel('hf:openai-community/gpt2', { cacheDir }), cached[0].bytes);
  assert.deepEqual(await listCachedModels({ cacheDir }), []);
  const at = hub.requests.length;
  (await loadModel('hf:openai-community/gpt2', { cacheDir, endpoint: hub.endpoint })).dispose();
  assert.equal(since(at).length, 5, 'deleted: fetched again');
});

test('a sharded checkpoint (index and two shards) opens to the model of the single file', { timeout: 60_000 }, async () => {
  const direct = await loadModel(path.join(MODELS_DIR, 'gpt2-trained'));
  const expected = outputs(direct, 'the king follows himself.');
  direct.dispose();
  for (const cacheDir of [freshCache(), undefined]) {
    const plans = [];
    const model = await loadModel('hf:test/gpt2-sharded', { endpoint: hub.endpoint, cacheDir, cache: cacheDir !== undefined, onPlan: (p) => plans.push(p) });
    assert.deepEqual(outputs(model, 'the king follows himself.'), expected);
    model.dispose();
    assert.deepEqual(plans[0].files.map((f) => f.file), ['config.json', 'model.safetensors.index.json',
      'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'tokenizer.json']);
    console.log(`    ${cacheDir ? 'through the cache' : 'no cache (streamed)'}: identical to gpt2-trained; ${plans[0].bytes} bytes in the plan`);
  }
});

test('faults: gated (401), missing (404), no such revision, pytorch_model.bin only; nothing is fetched after', { timeout: 60_000 }, async () => {
  const options = { endpoint: hub.endpoint, cacheDir: freshCache() };
  let at = hub.requests.length;
  await assert.rejects(loadModel('hf:test/gated', options), refusedWith('MODEL_FILE', /test\/gated is gated \(HTTP 401/, /sends no token/));
  assert.equal(since(at).length, 1);
  at = hub.requests.length;
  await assert.rejects(loadModel('hf:nobody/nothing', options), refusedWith('MODEL_FILE', /no repository nobody\/nothing on the Hub \(HTTP 404/));
  assert.equal(since(at).length, 1);
  await assert.rejects(loadModel('hf:openai-community/gpt2', { ...options, revision: 'v9' }), refusedWith('MODEL_FILE', /openai-community\/gpt2 has no revision "v9" \(HTTP 404/));
  at = hub.requests.length;
  await assert.rejects(loadModel('hf:test/pytorch-only', options), refusedWith('MODEL_FILE',
    /test\/pytorch-only has no model\.safetensors \(its weights are pytorch_model\.bin, which the explorer does not read/, /safe_serialization=True/));
  assert.equal(since(at).length, 1, 'refused from the listing: not a file fetched');
  const model = await loadModel('hf:openai-community/gpt2', options);
  assert.equal(model.config.name, 'GPT-2');
  model.dispose();
});

test('the memory plan refuses a model before any weight is fetched', { timeout: 60_000 }, async () => {
  const at = hub.requests.length;
  const plans = [];
  await assert.rejects(loadModel('hf:openai-community/gpt2', { endpoint: hub.endpoint, cacheDir: freshCache(), maxMemoryBytes: 100_000, onPlan: (p) => plans.push(p) }),
    refusedWith('TOO_LARGE', /the model needs \d+ MB .*more than the 1 MB it may take/));
  assert.deepEqual(since(at), ['hub /api/models/openai-community/gpt2/revision/main?blobs=true', 'hub /openai-community/gpt2/resolve/COMMIT/config.json']);
  assert.deepEqual(plans, []);
  await assert.rejects(loadModel('hf:openai-community/gpt2', { endpoint: hub.endpoint, cacheDir: freshCache(), maxFileBytes: 1000 }),
    refusedWith('TOO_LARGE', /model\.safetensors of openai-community\/gpt2: 160960 bytes \(the Hub's listing\), more than the 1000/));
});

test('a connection dropped mid-file: a message, nothing kept half-written, and the next open works', { timeout: 60_000 }, async () => {
  const cacheDir = freshCache();
  for (const cache of [true, false]) {
    await assert.rejects(loadModel('hf:test/gpt2-dropped', { endpoint: hub.endpoint, cacheDir, cache }), refusedWith('MODEL_FILE',
      /model\.safetensors: (the download ended after 80480 of the 160960 bytes|the download broke off after \d+ of 160960 bytes)/));
  }
  const kept = (await listCachedModels({ cacheDir })).find((m) => m.repo === 'test/gpt2-dropped');
  assert.deepEqual(Object.keys(kept.files).sort(), ['config.json'], 'only the whole files are kept');
  const model = await loadModel('hf:openai-community/gpt2', { endpoint: hub.endpoint, cacheDir });
  assert.equal(model.run('the cat').ids.length > 0, true);
  model.dispose();
});

test('a slow download: progress as it comes, and abort stops it; nothing kept of it', { timeout: 60_000 }, async () => {
  const cacheDir = freshCache();
  const controller = new AbortController();
  const events = [];
  const started = performance.now();
  const load = loadModel('hf:test/gpt2-slow', {
    endpoint: hub.endpoint, cacheDir, signal: controller.signal,
    onProgress: (p) => {
      events.push(p);
      if (p.file === 'model.safetensors' && p.loaded >= 40_000) controller.abort(new Error('stopped by the reader'));
    },
  });
  await assert.rejects(load, /stopped by the reader/);
  const weights = events.filter((e) => e.file === 'model.safetensors');
  console.log(`    aborted after ${weights.at(-1).loaded} of ${weights.at(-1).total} bytes, ${weights.length} progress events, ${(performance.now() - started).toFixed(0)} ms`);
  // the server sends 4 KB parts 40 ms apart; a loaded machine reads some of them together, so
  // progress is several events as the bytes come (never one at the end), the abort well before it
  assert.ok(weights.length >= 3, `${weights.length} progress events before the abort`);
  assert.ok(weights.every((e, i) => i === 0 || e.loaded > weights[i - 1].loaded), 'each event reports more bytes');
  assert.ok(weights.at(-1).loaded < weights.at(-1).total);
  const kept = (await listCachedModels({ cacheDir })).find((m) => m.repo === 'test/gpt2-slow');
  assert.equal(kept.files['model.safetensors'], undefined);
  const dir = path.join(cacheDir, 'models--test--gpt2-slow', 'snapshots', hub.commits['test/gpt2-slow']);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['config.json'], 'no .incomplete file left');
});

test('hubModelInfo: the files and sizes without fetching them; what is cached', { timeout: 60_000 }, async () => {
  const cacheDir = freshCache();
  const info = await hubModelInfo('openai-community/gpt2', { endpoint: hub.endpoint, cacheDir });
  assert.equal(info.commit, hub.commits['openai-community/gpt2']);
  assert.equal(info.downloadBytes, 634 + 160960 + 5077);
  (await loadModel('hf:openai-community/gpt2', { endpoint: hub.endpoint, cacheDir })).dispose();
  const at = hub.requests.length;
  const again = await hubModelInfo('hf:openai-community/gpt2', { endpoint: hub.endpoint, cacheDir });
  assert.equal(again.downloadBytes, 0);
  assert.deepEqual(since(at), []);
  // a sharded checkpoint: its shards counted before the index is read
  const sharded = await hubModelInfo('test/gpt2-sharded', { endpoint: hub.endpoint, cacheDir });
  const listed = Object.values(hub.repos['test/gpt2-sharded'].files).reduce((sum, bytes) => sum + bytes.length, 0);
  assert.deepEqual(sharded.files.map((f) => f.file), ['config.json', 'model.safetensors.index.json',
    'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'tokenizer.json']);
  assert.equal(sharded.downloadBytes, listed);
});

/** Runs a script with Node.js (asynchronously: the mimic Hub answers from this process). */
function run(args, { input = '', env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

test('npm run model -- --model hf:openai-community/gpt2: the same lines as the folder, HF_ENDPOINT read, the second run from the cache', { timeout: 120_000 }, async () => {
  const script = fileURLToPath(new URL('../../scripts/commands/model.js', import.meta.url));
  const input = 'the king follows himself.\nthe cat sat.\n';
  const env = { HF_ENDPOINT: hub.endpoint, MHA_HUB_CACHE: freshCache() };
  const fromFolder = await run([script, '--json', '--no-build', '--model', path.join(MODELS_DIR, 'gpt2-trained')], { input });
  assert.equal(fromFolder.status, 0, fromFolder.stderr);
  const at = hub.requests.length;
  const first = await run([script, '--json', '--no-build', '--model', 'hf:openai-community/gpt2'], { input, env });
  assert.equal(first.status, 0, first.stderr);
  assert.equal(first.stdout, fromFolder.stdout);
  assert.match(first.stderr, /\[model\] openai-community\/gpt2 at main \(commit [0-9a-f]{12}\) from http:\/\/127\.0\.0\.1:\d+: 3 files, 166\.7 kB; 166\.7 kB to download \(config\.json, model\.safetensors, tokenizer\.json\); fits in memory/);
  assert.match(first.stderr, /\[model\] model\.safetensors: 161\.0 kB downloaded/);
  assert.equal(since(at).length, 5);
  const second = await run([script, '--json', '--no-build', '--model', 'hf:openai-community/gpt2'], { input, env });
  assert.equal(second.stdout, fromFolder.stdout);
  assert.match(second.stderr, /3 files, 166\.7 kB; all cached/);
  assert.equal(since(at).length, 5, 'the second run makes no request');
  const gated = await run([script, '--no-build', '--model', 'hf:test/gated'], { env });
  assert.equal(gated.status, 1);
  assert.match(gated.stderr, /^\[model\] test\/gated is gated \(HTTP 401/m);
  console.log(`    ${first.stderr.trim().split('\n').join('\n    ')}`);
});

test('npm run model -- --model hf:…: a BERT and a Llama-family model (grouped-query) by name give the lines of their folders', { timeout: 120_000 }, async () => {
  const script = fileURLToPath(new URL('../../scripts/commands/model.js', import.meta.url));
  const input = 'the king follows himself.\nthe cat sat.\n';
  for (const [repo, name, type] of [['google-bert/bert-base-uncased', 'bert-mlm', 'bert'], ['HuggingFaceTB/SmolLM2-135M', 'llama-gqa', 'llama']]) {
    const fromFolder = await run([script, '--json', '--no-build', '--model', path.join(MODELS_DIR, name)], { input });
    assert.equal(fromFolder.status, 0, fromFolder.stderr);
    const byName = await run([script, '--json', '--no-build', '--model', `hf:${repo}`], { input, env: { HF_ENDPOINT: hub.endpoint, MHA_HUB_CACHE: freshCache() } });
    assert.equal(byName.status, 0, byName.stderr);
    assert.equal(byName.stdout, fromFolder.stdout);
    const lines = byName.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const config = JSON.parse(fs.readFileSync(path.join(MODELS_DIR, name, 'config.json'), 'utf8'));
    assert.equal(config.model_type, type);
    if (type === 'llama') assert.ok(config.num_key_value_heads < config.num_attention_heads, 'grouped-query attention');
    assert.equal(lines.length, 2);
    assert.equal(lines[0].layers.length, config.num_hidden_layers);
    assert.equal(lines[0].layers[0].weights.length, config.num_attention_heads);
    assert.match(byName.stderr, new RegExp(`\\[model\\] ${repo.replace(/[.]/g, '\\.')} at main \\(commit [0-9a-f]{12}\\) from http://127\\.0\\.0\\.1:\\d+: 3 files, [\\d.]+ kB; [\\d.]+ kB to download \\(config\\.json, model\\.safetensors, tokenizer\\.json\\); fits in memory`));
    console.log(`    ${repo}: ${lines.length} lines, ${lines[0].layers.length} layers, as from ${name}/`);
  }
});

test('tokenize-time-limit in a link and an attribute: milliseconds from 100 to 600000, else a message saying so', async () => {
  const { hubSpec, specFromAttributes, createSource } = await import('../../web/explorer/sources.js');
  const { tokenizeTimeLimitOf } = await import('../../web/explorer/tokenize-limit.js');
  const { readLink } = await import('../../web/explorer/url.js');
  assert.equal(tokenizeTimeLimitOf(null), undefined);
  assert.equal(tokenizeTimeLimitOf(' '), undefined);
  assert.equal(tokenizeTimeLimitOf('100'), 100);
  assert.equal(tokenizeTimeLimitOf('2500.5'), 2500.5);
  assert.equal(tokenizeTimeLimitOf('600000'), 600000);
  for (const bad of ['99', '600001', '0', '-5', 'abc', '5s', '1e4', 'Infinity', '1,000']) {
    assert.throws(() => tokenizeTimeLimitOf(bad), { message: `tokenize-time-limit: expected a number of milliseconds from 100 to 600000 (5000 unless set), got ${JSON.stringify(bad)}` });
  }
  assert.deepEqual(hubSpec('openai-community/gpt2', null, 2000), { id: 'model', url: 'hf:openai-community/gpt2', tokenizeTimeLimit: 2000 });
  assert.deepEqual(hubSpec('openai-community/gpt2', 'http://127.0.0.1:9/'), { id: 'model', url: 'hf:openai-community/gpt2', endpoint: 'http://127.0.0.1:9' });

  const link = readLink(new URLSearchParams('model=openai-community/gpt2&tokenize-time-limit=20000'));
  assert.deepEqual(link.problems, []);
  assert.deepEqual(link.want.source, { id: 'model', url: 'hf:openai-community/gpt2', tokenizeTimeLimit: 20000 });
  const badLink = readLink(new URLSearchParams('model=openai-community/gpt2&tokenize-time-limit=fast'));
  assert.deepEqual(badLink.want.source, { id: 'designed' });
  assert.deepEqual(badLink.problems, ['tokenize-time-limit: expected a number of milliseconds from 100 to 600000 (5000 unless set), got "fast"; showing the default']);
  assert.deepEqual(readLink(new URLSearchParams('source=random&tokenize-time-limit=2000')).problems, ['tokenize-time-limit= is read only with model=']);

  const attributes = (a) => (name) => a[name] ?? null;
  // an attribute's text is checked when the model's source is made (an embed without a model does not load the check)
  const hubModel = await createSource(specFromAttributes(attributes({ model: 'HuggingFaceTB/SmolLM2-135M', 'tokenize-time-limit': '10000' })));
  assert.equal(hubModel.tokenizeTimeLimit, 10000);
  assert.equal(hubModel.url, 'hf:HuggingFaceTB/SmolLM2-135M');
  const folderModel = await createSource(specFromAttributes(attributes({ 'model-url': 'https://models.example/gpt2/', 'tokenize-time-limit': '750' })));
  assert.equal(folderModel.tokenizeTimeLimit, 750);
  assert.equal((await createSource(specFromAttributes(attributes({ model: 'openai-community/gpt2' })))).tokenizeTimeLimit, undefined);
  await assert.rejects(createSource(specFromAttributes(attributes({ model: 'openai-community/gpt2', 'tokenize-time-limit': '5 s' }))), { message: /^tokenize-time-limit: expected a number of milliseconds from 100 to 600000 \(5000 unless set\), got "5 s"$/ });
});
