// The PyTorch golden cases (tests/golden/cases, tests/golden/README.md) through the WebAssembly
// module inside this engine's page (loadMha() from web/lib/index.js, the single-thread core):
// each case's output and weights are compared with PyTorch's (largest error beside the
// tolerance, printed per case), and with what the same module computes in Node.js, bit for bit.
// Every engine matches Node.js's bits, so the engines match one another; build/golden-<engine>.txt
// holds the digest of all the bits. In every engine: that they agree is what it shows.
//
//   MHA_BROWSER=webkit node --test tests/browser/golden.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BLANK_PAGE, ENGINE, startWeb, stopWeb, test } from './driver.js';
import { collectCaseFiles, compareTensor, readCase, readTensor, sci, tolerances } from '../golden/golden_common.js';
import { loadModule } from '../golden/golden_wasm.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

let server;
let browser;
let page;

before(async () => {
  ({ server, browser } = await startWeb());
  page = await browser.newPage();
  // a blank page of the origin: the test imports the API itself
  await page.goto(`${server.url}${BLANK_PAGE}`);
});

after(() => stopWeb({ server, browser }));

function configOf(cfg) {
  const config = {
    embedDim: cfg.embed_dim, numHeads: cfg.num_heads, numKvHeads: cfg.num_kv_heads, kdim: cfg.kdim, vdim: cfg.vdim,
    bias: cfg.bias, addBiasKv: cfg.add_bias_kv, addZeroAttn: cfg.add_zero_attn, batchFirst: cfg.batch_first, seed: 0,
  };
  for (const key of Object.keys(config)) if (config[key] === null || config[key] === undefined) delete config[key];
  return config;
}

/** A case as plain data for the page: config, parameters, inputs and options. */
function planOf(c) {
  const tensor = (t) => (t === null ? null : { shape: t.shape, dtype: t.dtype, data: Array.from(t.data) });
  const query = readTensor(c.inputs, 'query', 'inputs', true);
  const key = readTensor(c.inputs, 'key', 'inputs', false) ?? query;
  const value = readTensor(c.inputs, 'value', 'inputs', false) ?? key;
  const options = c.options && typeof c.options === 'object' ? c.options : {};
  const flag = (v, fallback) => (typeof v === 'boolean' ? v : fallback);
  return {
    config: configOf(c.config),
    parameters: Object.keys(c.state_dict).filter((n) => c.state_dict[n] !== null).map((n) => [n, tensor(readTensor(c.state_dict, n, 'state_dict', true))]),
    inputs: {
      query: tensor(query), key: tensor(key), value: tensor(value),
      keyPaddingMask: tensor(readTensor(c.inputs, 'key_padding_mask', 'inputs', false)), attnMask: tensor(readTensor(c.inputs, 'attn_mask', 'inputs', false)),
    },
    options: { needWeights: flag(options.need_weights, true), averageAttnWeights: flag(options.average_attn_weights, true), isCausal: flag(options.is_causal, false) },
  };
}

/** Runs plans with a module (in Node.js, or in the page: the function is sent there as is). */
async function runPlans(plans, mha = null) {
  if (!mha) mha = await (await import('/lib/index.js')).loadMha({ threads: false });
  const typed = (t) => (t === null ? null : { shape: t.shape, dtype: t.dtype, data: t.dtype === 'bool' ? Uint8Array.from(t.data) : Float32Array.from(t.data) });
  return plans.map((plan) => {
    let attention = null;
    try {
      attention = new mha.MultiHeadAttention(plan.config);
      for (const [name, t] of plan.parameters) attention.setParameter(name, typed(t));
      const i = plan.inputs;
      const r = attention.forward({
        query: typed(i.query), key: typed(i.key), value: typed(i.value), keyPaddingMask: typed(i.keyPaddingMask), attnMask: typed(i.attnMask), ...plan.options,
      });
      // the float32 bits, as base64 (JSON, and so WebDriver, would turn NaN into null)
      const bits = (t) => {
        const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
        let binary = '';
        for (let k = 0; k < bytes.length; k += 0x8000) binary += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
        return { shape: t.shape, base64: btoa(binary) };
      };
      return { output: bits(r.output), weights: r.weights ? bits(r.weights) : null };
    } catch (error) {
      return { error: `${error.code || error.name}: ${error.message}` };
    } finally {
      if (attention) attention.dispose();
    }
  });
}

const bitsOf = (t) => Buffer.from(t.base64, 'base64');

test('every golden case in the page: PyTorch within tolerance, and the bits of Node.js', { engines: 'all', why: 'golden' }, async () => {
  const files = collectCaseFiles([path.join(root, 'tests/golden/cases')]);
  assert.ok(files.length >= 50, `expected the golden cases, found ${files.length}`);
  const cases = files.map((file) => ({ file, c: readCase(file) }));
  const plans = cases.map(({ c }) => planOf(c));
  const inNode = await runPlans(plans, await loadModule({ threads: false }));
  const started = Date.now();
  const inPage = await page.evaluate(`(${runPlans})(${JSON.stringify(plans)})`);
  const ms = Date.now() - started;
  const digest = createHash('sha256');
  let worstOutput = 0;
  let worstWeights = 0;
  const failures = [];
  cases.forEach(({ file, c }, k) => {
    const name = path.basename(file, '.json');
    const page = inPage[k];
    const node = inNode[k];
    if (page.error || node.error) {
      failures.push(`${name}: page ${page.error ?? 'ok'}, Node.js ${node.error ?? 'ok'}`);
      return;
    }
    const tol = tolerances(c);
    const asTensor = (t) => { const b = bitsOf(t); return { shape: t.shape, data: new Float32Array(b.buffer, b.byteOffset, b.length / 4) }; };
    const output = compareTensor('output', asTensor(page.output), readTensor(c.expected, 'output', 'expected', true), tol.atol, tol.rtol);
    const expectedWeights = readTensor(c.expected, 'weights', 'expected', false);
    const weights = expectedWeights && page.weights ? compareTensor('weights', asTensor(page.weights), expectedWeights, tol.weightsAtol, tol.weightsRtol) : null;
    worstOutput = Math.max(worstOutput, output.maxAbsErr);
    if (weights) worstWeights = Math.max(worstWeights, weights.maxAbsErr);
    const sameOutput = bitsOf(page.output).equals(bitsOf(node.output));
    const sameWeights = (page.weights === null) === (node.weights === null) && (!page.weights || bitsOf(page.weights).equals(bitsOf(node.weights)));
    digest.update(bitsOf(page.output));
    if (page.weights) digest.update(bitsOf(page.weights));
    console.log(`  [${ENGINE}] ${name}: output max |err| ${sci(output.maxAbsErr)} (atol ${tol.atol}), weights ${weights ? `${sci(weights.maxAbsErr)} (atol ${tol.weightsAtol})` : 'not compared'}; bits ${sameOutput && sameWeights ? 'equal' : 'DIFFER'} to Node.js`);
    if (!output.pass) failures.push(`${name}: ${output.message}`);
    if (weights && !weights.pass) failures.push(`${name}: ${weights.message}`);
    if (!sameOutput || !sameWeights) failures.push(`${name}: the page's bits differ from Node.js's (output ${sameOutput ? 'same' : 'differs'}, weights ${sameWeights ? 'same' : 'differ'})`);
  });
  const hex = digest.digest('hex');
  mkdirSync(path.join(root, 'build'), { recursive: true });
  writeFileSync(path.join(root, 'build', `golden-${ENGINE}.txt`), `${hex}\n`);
  console.log(`  [${ENGINE}] ${cases.length} cases in ${ms} ms: largest error against PyTorch output ${sci(worstOutput)}, weights ${sci(worstWeights)}; sha256 of every output and weight ${hex}`);
  assert.deepEqual(failures, []);
});
