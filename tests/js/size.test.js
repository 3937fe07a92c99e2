// What an embed downloads, measured in Chromium: every response the iframe embed
// (web/embed.html) and a page with one <mha-explorer> fetch (HTML, JS, WASM, CSS, fonts), gzip -9
// compressed. The total must stay within tests/size-budget.json. The tagger (compromise) must
// not load for the example sentences, only when free text is typed; its size is reported apart.
//
//   node --test tests/js/size.test.js

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../chromium.js';
import { startServer } from '../../scripts/serve/serve.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const budget = JSON.parse(fs.readFileSync(path.join(root, 'tests/size-budget.json'), 'utf8'));

let server;
let browser;

before(async () => {
  for (const file of ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm', 'web/vendor/compromise-three.mjs']) {
    assert.ok(fs.existsSync(path.join(root, file)), `expected ${file}: run "npm run build" first`);
  }
  server = await startServer({ root: path.join(root, 'web'), port: 0 });
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

const KIND = { '.js': 'JS', '.mjs': 'JS', '.wasm': 'WASM', '.css': 'CSS', '.html': 'HTML', '.woff2': 'fonts', '.woff': 'fonts', '.ttf': 'fonts' };

/** Load a URL, wait for every element to be ready, and size every same-origin file fetched. */
async function measure(urlPath, action) {
  const page = await browser.newPage();
  const urls = new Set();
  page.on('request', (request) => urls.add(request.url()));
  await page.goto(`${server.url}${urlPath}`);
  const ready = () => [...document.querySelectorAll('mha-explorer')].every((e) => e.status === 'ready');
  await page.waitForFunction(ready, null, { timeout: 60_000 });
  if (action) {
    await action(page);
    await page.waitForFunction(ready, null, { timeout: 60_000 });
  }
  await page.close();
  const files = [];
  for (const url of urls) {
    const { pathname } = new URL(url);
    if (pathname === '/favicon.ico') continue;
    const file = path.join(root, 'web', decodeURIComponent(pathname));
    assert.ok(fs.existsSync(file), `fetched ${url}, which is not a file under web/`);
    const raw = fs.readFileSync(file);
    files.push({
      path: pathname, kind: KIND[path.extname(file)] || 'other', raw: raw.length,
      gzip: zlib.gzipSync(raw, { level: 9 }).length,
      brotli: zlib.brotliCompressSync(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    });
  }
  files.sort((a, b) => b.gzip - a.gzip);
  return files;
}

function report(title, files) {
  const sum = (key, list = files) => list.reduce((a, f) => a + f[key], 0);
  console.log(`  ${title}: ${files.length} files, ${sum('raw')} bytes, gzip ${sum('gzip')} bytes (${(sum('gzip') / 1024).toFixed(1)} KiB), brotli ${sum('brotli')} bytes`);
  const kinds = [...new Set(files.map((f) => f.kind))];
  console.log(`    by kind (gzip): ${kinds.map((k) => `${k} ${sum('gzip', files.filter((f) => f.kind === k))}`).join(', ')}`);
  for (const f of files) console.log(`    ${String(f.gzip).padStart(7)} gz ${String(f.raw).padStart(8)} raw  ${f.path}`);
  return sum('gzip');
}

test(`the iframe embed downloads at most ${budget.embedGzipBytes} bytes gzipped, and no tagger for an example sentence`, async () => {
  const files = await measure('embed.html?view=grid');
  const total = report('iframe embed (embed.html?view=grid)', files);
  assert.ok(!files.some((f) => f.path.includes('compromise')), 'the tagger is not loaded for an example sentence');
  assert.ok(files.some((f) => f.kind === 'WASM'), 'the measure includes the .wasm');
  assert.ok(total <= budget.embedGzipBytes, `embed downloads ${total} bytes gzipped, over the budget of ${budget.embedGzipBytes} in tests/size-budget.json`);
});

test('typing free text loads the tagger then, and only then', async () => {
  const files = await measure('embed.html?view=single', async (page) => {
    await page.evaluate(() => { document.querySelector('mha-explorer').sentence = 'A tagger reads this new sentence.'; });
    await page.waitForFunction(() => document.querySelector('mha-explorer').result?.tokens.length === 7, null, { timeout: 60_000 });
  });
  const tagger = files.filter((f) => f.path.includes('compromise'));
  assert.equal(tagger.length, 1, 'the tagger was fetched for free text');
  console.log(`  the tagger, loaded on free text: gzip ${tagger[0].gzip} bytes (raw ${tagger[0].raw}); not part of the budget`);
  assert.ok(tagger[0].gzip <= budget.taggerGzipBytes, `the tagger is ${tagger[0].gzip} bytes gzipped, over ${budget.taggerGzipBytes}`);
});
