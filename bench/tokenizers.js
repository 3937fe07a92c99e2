// `node bench/tokenizers.js`: what a model's tokenizer costs (web/lib/tokenizer.js, Hugging Face's
// tokenizer library): on GPT-2's, Llama 2's and Llama 3's tokenizer.json (the @lenml/tokenizer-*
// dev packages), the CPU time to read the file (parse, check, build), to encode a text of 1,000
// words, and to read every piece of the vocabulary (what the page does once per model, for the
// predictions). The median of 5 runs, each in a fresh tokenizer; a Markdown table on stdout.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTokenizer } from '../web/lib/tokenizer.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cases = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/models/tokenizer_cases.json'), 'utf8'));
const sentences = cases.tokenizers.bpe.cases.map((/** @type {{ text: string }} */ c) => c.text);
const words = sentences.join(' ').split(/\s+/);
const text = Array.from({ length: 1000 }, (_, i) => words[i % words.length]).join(' ');
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const median = (/** @type {number[]} */ a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const RUNS = 5;

console.log('| tokenizer.json | bytes | pieces | read the file | encode 1,000 words | ids | read every piece |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const name of ['gpt2', 'llama2', 'llama3']) {
  const file = path.join(root, 'node_modules', '@lenml', `tokenizer-${name}`, 'models', 'tokenizer.json');
  if (!fs.existsSync(file)) {
    console.error(`bench/tokenizers.js: expected ${file} (npm ci installs the @lenml/tokenizer-* dev packages)`);
    process.exit(1);
  }
  const json = fs.readFileSync(file, 'utf8');
  const load = [], encode = [], read = [];
  let ids = 0, pieces = 0, kind = '';
  for (let r = 0; r < RUNS; r += 1) {
    let t0 = cpuMs();
    const tokenizer = await loadTokenizer(json);
    load.push(cpuMs() - t0);
    t0 = cpuMs();
    ids = tokenizer.encode(text).length;  // the library caches words: a fresh tokenizer each run
    encode.push(cpuMs() - t0);
    pieces = tokenizer.info.vocabSize;
    kind = tokenizer.info.name;
    t0 = cpuMs();
    tokenizer.read(Array.from({ length: pieces }, (_, i) => i));
    read.push(cpuMs() - t0);
  }
  const ms = (/** @type {number[]} */ a) => `${median(a).toFixed(0)} ms`;
  console.log(`| ${name} (${kind}) | ${Buffer.byteLength(json).toLocaleString('en')} | ${pieces.toLocaleString('en')} | ${ms(load)} | ${ms(encode)} | ${ids.toLocaleString('en')} | ${ms(read)} |`);
}
console.log(`\nCPU time, median of ${RUNS}; Node.js ${process.version}.`);
