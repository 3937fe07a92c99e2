// The golden runners must fail what is wrong: broken copies of committed cases go through
// `npm run golden` (scripts/commands/golden.js: the native runner and the WebAssembly runner with
// both cores) and each must FAIL, while the untouched copy passes. npm test has built the engines.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const casesDir = path.join(repoRoot, 'tests/golden/cases');
// scripts/commands/golden.js runs every case on the native core and on both WebAssembly cores.
const ENGINES = ['native', 'wasm', 'wasm-threads'];

function loadCase(name) {
  return JSON.parse(fs.readFileSync(path.join(casesDir, `${name}.json`), 'utf8'));
}

function runGolden(dir) {
  const run = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/commands/golden.js'), '--no-build', dir], {
    cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 26, timeout: 15 * 60_000,
  });
  const lines = run.stdout.split('\n').filter((l) => /^(PASS|FAIL) /.test(l));
  const verdicts = {};
  for (const line of lines) {
    const [verdict, engine, name] = line.split(/\s+/);
    verdicts[`${name}/${engine}`] = { verdict, line };
  }
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, verdicts };
}

/** Index of the element with the largest |value| that is a number (not NaN/null). */
function firstNumberIndex(data) {
  return data.findIndex((v) => typeof v === 'number');
}

test('broken cases fail on every engine; the untouched case passes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'golden-broken-'));
  const write = (name, c) => fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify({ ...c, name }));
  const expectations = {};

  const base = loadCase('mask_bool_2d');
  write('control', base);
  expectations.control = 'PASS';

  // Output off by 2e-4: beyond atol 1e-4.
  const outputOff = structuredClone(base);
  outputOff.expected.output.data[3] += 2e-4;
  write('output_off_2e-4', outputOff);
  expectations['output_off_2e-4'] = 'FAIL';

  // Output off by 3e-5: within 1e-4, must still pass (the tolerance is the case's).
  const outputNear = structuredClone(base);
  outputNear.expected.output.data[3] += 3e-5;
  write('output_off_3e-5', outputNear);
  expectations['output_off_3e-5'] = 'PASS';

  // A weight off by 3e-5: within the output tolerance but not the 1e-5 weights get.
  const weightOff = structuredClone(base);
  weightOff.expected.weights.data[firstNumberIndex(weightOff.expected.weights.data)] += 3e-5;
  write('weight_off_3e-5', weightOff);
  expectations['weight_off_3e-5'] = 'FAIL';

  // The same with no weights_atol: weights default to min(atol, 1e-5).
  const weightOffDefault = structuredClone(weightOff);
  delete weightOffDefault.tolerance.weights_atol;
  write('weight_off_default_tol', weightOffDefault);
  expectations.weight_off_default_tol = 'FAIL';

  // Expected weights null although the case asks for weights: the engine returns some.
  const weightsNull = structuredClone(base);
  weightsNull.expected.weights = null;
  write('weights_unexpected', weightsNull);
  expectations.weights_unexpected = 'FAIL';

  // Wrong expected shape (same number of values).
  const shapeOff = structuredClone(base);
  const [n, l, e] = shapeOff.expected.output.shape;
  shapeOff.expected.output.shape = [n, e, l];
  write('shape_off', shapeOff);
  expectations.shape_off = 'FAIL';

  // NaN positions: a fully masked row's null replaced by a number, and a number by null.
  const nanCase = loadCase('fully_masked_row_per_head');
  write('nan_control', nanCase);
  expectations.nan_control = 'PASS';
  const nanToNumber = structuredClone(nanCase);
  const nullAt = nanToNumber.expected.output.data.indexOf(null);
  assert.ok(nullAt >= 0, 'fully_masked_row_per_head has a NaN (null) in its expected output');
  nanToNumber.expected.output.data[nullAt] = 0;
  write('nan_expected_number', nanToNumber);
  expectations.nan_expected_number = 'FAIL';
  const numberToNan = structuredClone(nanCase);
  numberToNan.expected.output.data[firstNumberIndex(numberToNan.expected.output.data)] = null;
  write('number_expected_nan', numberToNan);
  expectations.number_expected_nan = 'FAIL';

  // A wrong option (averaged instead of per-head weights) changes the result's shape.
  const optionOff = structuredClone(nanCase);
  optionOff.options.average_attn_weights = true;
  write('option_off', optionOff);
  expectations.option_off = 'FAIL';

  // Python's bare NaN token instead of null is read as NaN.
  fs.writeFileSync(path.join(dir, 'nan_token.json'),
    JSON.stringify({ ...nanCase, name: 'nan_token' }).replace(/null/g, 'NaN').replace('"key_padding_mask":NaN', '"key_padding_mask":null'));
  expectations.nan_token = 'PASS';

  // Other writers' spellings: bool data as true/false, nested (tolist()) data, a null
  // state_dict entry, no tolerance (defaults), no key/value (self-attention needs none, but this
  // is cross-attention: they stay). Must pass.
  const foreign = loadCase('unbatched_cross_masks');
  foreign.inputs.key_padding_mask.data = foreign.inputs.key_padding_mask.data.map((v) => v === 1);
  const [rows, cols] = foreign.expected.output.shape;
  const flatOut = foreign.expected.output.data;
  foreign.expected.output.data = Array.from({ length: rows }, (_, i) => flatOut.slice(i * cols, (i + 1) * cols));
  foreign.state_dict = { in_proj_weight: null, ...foreign.state_dict };
  delete foreign.tolerance;
  write('foreign_spellings', foreign);
  expectations.foreign_spellings = 'PASS';

  // A file that is not a case.
  fs.writeFileSync(path.join(dir, 'not_a_case.json'), '{"name": "not_a_case"}');
  expectations.not_a_case = 'FAIL';

  const result = runGolden(dir);
  console.log(result.stdout.split('\n').filter((l) => /^(PASS|FAIL) |passed,/.test(l)).join('\n'));
  const names = Object.keys(expectations);
  for (const name of names) {
    for (const engine of ENGINES) {
      const got = result.verdicts[`${name}/${engine}`];
      assert.ok(got, `no result line for ${name} on ${engine}\n${result.stdout}\n${result.stderr}`);
      assert.equal(got.verdict, expectations[name], got.line);
    }
  }
  const failures = names.filter((n) => expectations[n] === 'FAIL').length * ENGINES.length;
  assert.match(result.stdout, new RegExp(`^${names.length * ENGINES.length - failures} passed, ${failures} failed$`, 'm'));
  assert.notEqual(result.status, 0, 'scripts/commands/golden.js must exit non-zero when a case fails');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the untouched committed cases pass and the exit status is 0', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'golden-clean-'));
  for (const name of ['gqa_kv2', 'causal_cross', 'masks_float_bool3d', 'need_weights_false']) {
    fs.copyFileSync(path.join(casesDir, `${name}.json`), path.join(dir, `${name}.json`));
  }
  const result = runGolden(dir);
  console.log(result.stdout.split('\n').filter((l) => /^(PASS|FAIL) |passed,/.test(l)).join('\n'));
  assert.match(result.stdout, new RegExp(`^${4 * ENGINES.length} passed, 0 failed$`, 'm'));
  assert.equal(result.status, 0);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('an empty directory is an error, not a pass', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'golden-empty-'));
  const result = runGolden(dir);
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /no case files/);
  fs.rmSync(dir, { recursive: true, force: true });
});
