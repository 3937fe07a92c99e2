// bench/markdown.js writes a bench report's tables into docs/performance.md between its two
// marker lines, and leaves the rest of the page as it is.
//
//   node --test tests/js/bench-markdown.test.js

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BEGIN, END, MODEL_BEGIN, MODEL_END, modelMarkdown, replaceTables, reportMarkdown } from '../../bench/markdown.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const report = {
  machine: 'Test CPU, 2 cores, linux, Node.js v20',
  load_average: { start: 0.5, end: 1.2 },
  command: 'npm run bench --',
  seconds: 12.3,
  rounds: 2,
  results: [
    { engine: 'wasm-simd-peak', shape: null, need_weights: null, ms: null, gflops: 50, peak_heap_mb: null },
    { engine: 'wasm', shape: 'C', need_weights: false, ms: 80, gflops: 40.3, peak_heap_mb: 39.8, round_ms: [80, 82] },
    { engine: 'wasm', shape: 'C', need_weights: true, ms: 84, gflops: 38.4, peak_heap_mb: 41, round_ms: [84, 85] },
    { engine: 'onnxruntime-web', shape: 'C', need_weights: false, ms: 120, gflops: 26.9, peak_heap_mb: null, round_ms: [120, 121] },
  ],
  goals: [
    { goal: 'onnxruntime-web / wasm at C >= 1.25', value: 1.5, met: true },
    { goal: 'wasm heap at E (need_weights false) <= 64 MB', value: null, met: null },
  ],
  skipped: [],
};

test('the tables of a report: the run, one row per shape, the ratios, the goals', () => {
  const md = reportMarkdown(report);
  console.log(md.split('\n').map((l) => `    ${l}`).join('\n'));
  assert.match(md, /^`npm run bench` \(2 rounds, 6 timed jobs, 12 s\) on Test CPU/);
  assert.match(md, /^\| shape \| wasm \| onnxruntime-web \|$/m);
  assert.match(md, /^\| C L=512 E=768 H=12 \| 80\.0 \(40\.3\) \| 120 \(26\.9\) \|$/m);
  assert.match(md, /^\| C L=512 E=768 H=12, weights \| 84\.0 \(38\.4\) \|  \|$/m);
  assert.match(md, /^\| C \| 1\.50× \|  \|  \| 81% \|/m);
  assert.match(md, /^\| wasm heap at E \(need_weights false\) <= 64 MB \| not measured \| — \|$/m);
  assert.match(md, /This run met 1 of 2 goals\./);
  assert.throws(() => reportMarkdown({ machine: 'x' }), /expected a bench report with a "results" array/);
});

test('replacing the tables keeps the page around them, and twice is the same as once', () => {
  const page = `# Title\n\nbefore\n\n${BEGIN}\nold rows\n${END}\n\nafter\n`;
  const once = replaceTables(page, reportMarkdown(report));
  assert.ok(once.startsWith(`# Title\n\nbefore\n\n${BEGIN}\n\`npm run bench\``));
  assert.ok(once.endsWith(`|\n\nThis run met 1 of 2 goals.\n${END}\n\nafter\n`));
  assert.ok(!once.includes('old rows'));
  assert.equal(replaceTables(once, reportMarkdown(report)), once);
  assert.throws(() => replaceTables('# no markers\n', 'x', 'page.md'), /page\.md: expected the marker lines/);
});

test('docs/performance.md has the markers, and the command writes a report into a copy of it', () => {
  const doc = fs.readFileSync(path.join(root, 'docs/performance.md'), 'utf8');
  assert.ok(doc.indexOf(BEGIN) >= 0 && doc.indexOf(END) > doc.indexOf(BEGIN), 'docs/performance.md lacks the bench markers');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-md-'));
  try {
    fs.writeFileSync(path.join(dir, 'last.json'), JSON.stringify(report));
    fs.writeFileSync(path.join(dir, 'performance.md'), doc);
    const r = spawnSync(process.execPath, ['bench/markdown.js', path.join(dir, 'last.json'), '--doc', path.join(dir, 'performance.md')], { cwd: root, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const written = fs.readFileSync(path.join(dir, 'performance.md'), 'utf8');
    assert.equal(written.slice(0, written.indexOf(BEGIN)), doc.slice(0, doc.indexOf(BEGIN)));
    assert.equal(written.slice(written.indexOf(END)), doc.slice(doc.indexOf(END)));
    assert.match(written, /\| C L=512 E=768 H=12 \| 80\.0 \(40\.3\) \| 120 \(26\.9\) \|/);
    const missing = spawnSync(process.execPath, ['bench/markdown.js', path.join(dir, 'none.json'), '--doc', path.join(dir, 'performance.md')], { cwd: root, encoding: 'utf8' });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /none\.json does not exist: run `npm run bench` first/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the model section: one row per model, ratios to wasm, the cross-check; only between its own markers', () => {
  const withModel = {
    ...report,
    model: [
      { engine: 'wasm', case: 'gpt2-small', tokens: 128, ms: 800, gflops: 39.6, max_err: null, max_err_attention: null, round_ms: [800, 810] },
      { engine: 'onnxruntime-web', case: 'gpt2-small', tokens: 128, ms: 1200, gflops: 26.4, max_err: 3.1e-6, max_err_attention: 3e-7, round_ms: [1200] },
    ],
  };
  const md = modelMarkdown(withModel);
  console.log(md.split('\n').map((l) => `    ${l}`).join('\n'));
  assert.match(md, /^\| model \| tokens \| wasm \| onnxruntime-web \|$/m);
  assert.match(md, /^\| gpt2-small \| 128 \| 800 \(39\.6\) \| 1200 \(26\.4\) \[1\.50×\] \|$/m);
  assert.match(md, /logits agreed with `wasm`'s to at most 3\.1e-6, its attention weights to 3\.0e-7/);
  assert.equal(modelMarkdown(report), null);
  const page = `${BEGIN}\nold\n${END}\n\n## GPT-2 small\n\n${MODEL_BEGIN}\nold model\n${MODEL_END}\n`;
  const once = replaceTables(page, md, 'page.md', MODEL_BEGIN, MODEL_END);
  assert.ok(once.startsWith(`${BEGIN}\nold\n${END}\n`), 'the attention tables are left alone');
  assert.ok(once.includes(`${MODEL_BEGIN}\n\`npm run bench\``) && !once.includes('old model'));
  assert.equal(replaceTables(once, md, 'page.md', MODEL_BEGIN, MODEL_END), once);
});
