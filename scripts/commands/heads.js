// `npm run heads -- --json --model DIR [--seed S]`: previous-token, duplicate-token and
// induction heads of a causal language model (web/lib/detectors.js), on 10 sequences of
// repeated random tokens (BOS, r_1..r_N, r_1..r_N; N = 50, or less where the model's context
// is shorter: 2N + 1 < max positions, as TransformerLens asks) and their shuffled controls.
//
//   npm run heads -- --json --model tests/golden/models/gpt2-induction
//     {"sequences": [[ids]…], "controls": [[ids]…], "heads": [{"layer", "head", "previousToken",
//      "duplicateToken", "induction", "control": {…}, "label"}…]}
//   npm run heads -- --model DIR      a table: one line per head
//   --seed S     the sequences' seed (default 0)
//   --length N   N tokens repeated (default 50)
//   --count K    K sequences (default 10)
//   --bos ID     the token the sequences begin with
// BOS is --bos, else config.json's bos_token_id, else its eos_token_id (GPT-2's are one token); the tokens are drawn from the vocabulary's ordinary tokens
// (not the tokenizer's special or added tokens). A masked model is refused (exit code 1).
import fs from 'node:fs';
import path from 'node:path';
import { step } from './cli.js';

function usage(message) {
  console.error(`${message}\nusage: npm run heads -- [--json] [--seed S] [--length N] [--count K] [--bos ID] --model DIR`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { json: false, model: null, build: true, seed: 0, length: 50, count: 10, bos: null };
  const whole = (name, value, min) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) usage(`${name}: expected a whole number >= ${min}, got ${value}`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--json') options.json = true;
    else if (a === '--no-build') options.build = false;
    else if (a === '--model') options.model = argv[++i];
    else if (a === '--seed') options.seed = whole('--seed', argv[++i], 0);
    else if (a === '--length') options.length = whole('--length', argv[++i], 1);
    else if (a === '--bos') options.bos = whole('--bos', argv[++i], 0);
    else if (a === '--count') options.count = whole('--count', argv[++i], 1);
    else usage(`unknown option ${a}`);
  }
  if (!options.model) usage('--model DIR is required');
  return options;
}

function fail(message) {
  console.error(`[heads] ${message}`);
  process.exit(1);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.build) {
    step('heads', 'scripts/build/setup.js', ['start']);
    step('heads', 'scripts/build/build.js', ['--wasm']);
  }
  const { loadModel, repeatedTokens, detectHeads } = await import('../../web/lib/models.js');
  const dir = path.resolve(options.model);
  let model;
  try {
    model = await loadModel(dir);
  } catch (error) {
    if (error?.name !== 'MhaError') throw error;
    fail(error.message);
  }
  const { config } = model;
  if (!config.causal || config.task !== 'next-token') {
    fail(`the detectors need a causal language model (a GPT-2-style decoder); ${options.model} is a ${config.name} model (task '${config.task}'), whose heads also read later tokens`);
  }
  let bos = options.bos;
  if (bos === null) {
    let file = {};
    try {
      file = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    } catch { /* loadModel read it already */ }
    bos = [file.bos_token_id, file.eos_token_id].find(Number.isInteger) ?? null;
  }
  if (bos === null) fail('config.json has neither bos_token_id nor eos_token_id; give the token the sequences begin with: --bos ID');
  if (bos >= config.vocabSize) fail(`--bos: expected an id below the vocabulary's ${config.vocabSize}, got ${bos}`);
  if (!model.tokenizer) fail('the ordinary vocabulary is read from tokenizer.json, which this model has not');
  const all = Array.from({ length: config.vocabSize }, (_, i) => i);
  const { special } = model.read(all);
  const names = model.tokens(all);
  const ordinary = all.filter((id) => !special[id] && names[id] !== '' && id !== bos);
  const length = Math.min(options.length, Math.floor((config.maxPositions - 2) / 2));
  if (length < 1) fail(`the model reads ${config.maxPositions} positions; a repeated sequence needs at least 4`);
  if (length < options.length) console.error(`[heads] N = ${length}: the model reads ${config.maxPositions} positions, and BOS + 2N must be fewer`);
  let result;
  try {
    const { sequences, controls } = repeatedTokens({ ordinary, bos, length, count: options.count, seed: options.seed });
    const heads = detectHeads((ids) => model.run(ids).layers.map((l) => l.weights), sequences, controls);
    result = { sequences, controls, heads };
  } catch (error) {
    if (error?.name !== 'MhaError') throw error;
    fail(error.message);
  }
  model.dispose();
  if (options.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const f = (/** @type {number} */ x) => x.toFixed(3);
  const lines = ['layer.head  previous  duplicate  induction   (control: previous duplicate induction)  label'];
  for (const h of result.heads) {
    lines.push(`${`${h.layer}.${h.head}`.padEnd(10)}  ${f(h.previousToken)}     ${f(h.duplicateToken)}      ${f(h.induction)}       (${f(h.control.previousToken)} ${f(h.control.duplicateToken)} ${f(h.control.induction)})                ${h.label ?? '-'}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  console.error(`[heads] ${error?.message ?? error}`);
  process.exit(1);
});
