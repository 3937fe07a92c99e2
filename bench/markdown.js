// Prints a bench report (the JSON `npm run bench` leaves in build/bench/last.json, or the
// output of `npm run bench -- --json`) as the Markdown tables the README shows:
//   node bench/markdown.js [build/bench/last.json]
import fs from 'node:fs';
import { SHAPES } from './shapes.js';

const file = process.argv[2] ?? 'build/bench/last.json';
const report = JSON.parse(fs.readFileSync(file, 'utf8'));
const engines = ['wasm', 'wasm-threads', 'native-sse2', 'native-march', 'onnxruntime-web', 'onnxruntime-web-2t', 'tfjs-wasm', 'js'];
const got = (e, s, nw) => report.results.find((r) => r.engine === e && r.shape === s && r.need_weights === nw && r.ms != null);
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const peak = report.results.find((r) => r.engine === 'wasm-simd-peak');

const cols = engines.filter((e) => report.results.some((r) => r.engine === e && r.ms != null));
console.log(`| shape | ${cols.join(' | ')} |`);
console.log(`|---|${cols.map(() => '---:').join('|')}|`);
for (const s of Object.keys(SHAPES)) {
  for (const nw of [false, true]) {
    if (!cols.some((e) => got(e, s, nw))) continue;
    const { L, E, H } = SHAPES[s];
    const cells = cols.map((e) => {
      const r = got(e, s, nw);
      return r ? `${ms(r.ms)} (${r.gflops.toFixed(1)})` : '';
    });
    console.log(`| ${s} L=${L} E=${E} H=${H}${nw ? ', weights' : ''} | ${cells.join(' | ')} |`);
  }
}
console.log(`\nwasm-simd-peak: ${peak ? peak.gflops.toFixed(1) : '—'} GFLOP/s. Cells: median ms per forward (GFLOP/s, ${'8·L·E² + 4·L²·E'} per forward).\n`);
console.log('| shape | onnxruntime-web / wasm | tfjs-wasm / wasm | js / wasm | wasm % of SIMD peak | wasm / wasm-threads | onnxruntime-web-2t / wasm-threads | wasm heap MB |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const s of Object.keys(SHAPES)) {
  const w = got('wasm', s, false);
  if (!w) continue;
  const ratio = (e, base = w) => {
    const r = got(e, s, false);
    return r && base ? `${(r.ms / base.ms).toFixed(2)}×` : '';
  };
  const t = got('wasm-threads', s, false);
  console.log(`| ${s} | ${ratio('onnxruntime-web')} | ${ratio('tfjs-wasm')} | ${ratio('js')} | ${peak ? `${((100 * w.gflops) / peak.gflops).toFixed(0)}%` : ''} | ${t ? `${(w.ms / t.ms).toFixed(2)}×` : ''} | ${t ? ratio('onnxruntime-web-2t', t) : ''} | ${w.peak_heap_mb?.toFixed(1) ?? ''} |`);
}
if (report.goals) {
  console.log('\n| goal | measured | met |');
  console.log('|---|---:|:---:|');
  for (const g of report.goals) {
    const v = g.value == null ? 'not measured' : g.goal.includes('µs') ? `${g.value.toFixed(1)} µs` : g.goal.includes('MB') ? `${g.value.toFixed(1)} MB` : g.goal.includes('%') ? `${(100 * g.value).toFixed(0)}%` : `${g.value.toFixed(2)}×`;
    console.log(`| ${g.goal} | ${v} | ${g.met == null ? '—' : g.met ? 'yes' : 'no'} |`);
  }
}
