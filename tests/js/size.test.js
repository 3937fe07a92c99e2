// What an embed downloads, measured in Chromium: every response the iframe embed
// (web/embed.html) fetches (HTML, JS, WASM, CSS, fonts), gzip -9 compressed. The total must stay
// within tests/size-budget.json. The tagger (compromise) must not load for the example
// sentences, only when free text is typed; its size is measured apart. The figures measured are
// written to tests/size-measured.json, the one place they are kept; README.md and
// docs/element.md quote them, and the last test fails when a page quotes another figure.
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
const MEASURED = path.join(root, 'tests/size-measured.json');

/** The figures measured so far (this run's, or the last run's where this run did not measure them). */
const readMeasured = () => JSON.parse(fs.readFileSync(MEASURED, 'utf8'));
/** Keep a measured figure: `part` of tests/size-measured.json replaced. */
function writeMeasured(part) {
  const { description, ...previous } = readMeasured();
  const measured = {
    description: 'Gzip (-9) bytes measured by tests/js/size.test.js in Chromium, written by it: the iframe embed with every file it fetches, by kind, and the tagger loaded for free text. README.md and docs/element.md quote these figures; the test fails when they quote others.',
    ...previous,
    ...part,
  };
  fs.writeFileSync(MEASURED, `${JSON.stringify(measured, null, 2)}\n`);
}

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
  const kind = (...kinds) => files.filter((f) => kinds.includes(f.kind)).reduce((a, f) => a + f.gzip, 0);
  writeMeasured({ embed: { page: 'embed.html?view=grid', files: files.length, gzipBytes: total, wasm: kind('WASM'), js: kind('JS'), htmlCss: kind('HTML', 'CSS') } });
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
  writeMeasured({ tagger: { gzipBytes: tagger[0].gzip } });
  assert.ok(tagger[0].gzip <= budget.taggerGzipBytes, `the tagger is ${tagger[0].gzip} bytes gzipped, over ${budget.taggerGzipBytes}`);
});

/** Bytes as the pages write them: 108,971. */
const bytes = (n) => n.toLocaleString('en');
/** Kilobytes (1,000 bytes) as the pages write them in prose: 109 KB. */
const kb = (n) => `${Math.round(n / 1000)} KB`;

test('README.md and docs/element.md quote the sizes measured (tests/size-measured.json) and budgeted, and no other', () => {
  const { embed, tagger } = readMeasured();
  const read = (page) => fs.readFileSync(path.join(root, page), 'utf8');
  /** Each quote the page must hold, found by the words around it: [what, pattern whose groups are the figures, the figures expected]. */
  const quotes = {
    'README.md': [
      ['the embed, in prose', /an embed downloads (\d+ KB) gzipped/, [kb(embed.gzipBytes)]],
      ['the embed and its budget, in the numbers at a glance', /\| the iframe embed, gzipped \| ([\d,]+) bytes \(budget ([\d,]+)\)/, [bytes(embed.gzipBytes), bytes(budget.embedGzipBytes)]],
    ],
    'docs/element.md': [
      ['the .wasm', /\| the `\.wasm` \| ([\d,]+) \|/, [bytes(embed.wasm)]],
      ['the JavaScript', /\| JavaScript[^|]*\| ([\d,]+) \|/, [bytes(embed.js)]],
      ['HTML and CSS', /\| HTML and CSS \| ([\d,]+) \|/, [bytes(embed.htmlCss)]],
      ['the embed', /\| \*\*the embed, measured\*\* \| \*\*([\d,]+)\*\* \|/, [bytes(embed.gzipBytes)]],
      ['its budget', /\| budget \(`tests\/size-budget\.json`\) \| ([\d,]+) \|/, [bytes(budget.embedGzipBytes)]],
      ['the tagger and its budget', /tagger \((\d+ KB) gzipped, loaded only when free text is typed; its budget is ([\d,]+) bytes\)/, [kb(tagger.gzipBytes), bytes(budget.taggerGzipBytes)]],
    ],
  };
  const wrong = [];
  for (const [page, list] of Object.entries(quotes)) {
    const text = read(page);
    for (const [what, pattern, expected] of list) {
      const m = pattern.exec(text);
      if (!m) wrong.push(`${page}: no quote of ${what} (${pattern})`);
      else if (m.slice(1).join(' ') !== expected.join(' ')) wrong.push(`${page}: ${what} quoted as ${m.slice(1).join(', ')}, measured/budgeted ${expected.join(', ')}`);
    }
  }
  // anywhere else in the pages, a size "gzipped" is one of these two
  const known = new Set([kb(embed.gzipBytes), kb(tagger.gzipBytes)]);
  const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  for (const page of pages) {
    for (const m of read(page).matchAll(/(\d+(?:\.\d+)? KB) gzipped/g)) if (!known.has(m[1])) wrong.push(`${page}: "${m[0]}" is neither the embed's ${kb(embed.gzipBytes)} nor the tagger's ${kb(tagger.gzipBytes)}`);
  }
  console.log(`  measured: the embed ${bytes(embed.gzipBytes)} bytes gzipped (${kb(embed.gzipBytes)}), the tagger ${bytes(tagger.gzipBytes)} (${kb(tagger.gzipBytes)}); budgets ${bytes(budget.embedGzipBytes)}, ${bytes(budget.taggerGzipBytes)}`);
  assert.deepEqual(wrong, [], 'quote the figures of tests/size-measured.json (written by this test) and tests/size-budget.json');
});
