// Hugging Face checkpoints in WebAssembly (web/lib/models.js, mha_models.wasm): the golden
// models of scripts/reference/hf_reference.py give PyTorch's attention weights (within 1e-5) and
// logits (within 1e-4) for every dtype's file, and GPT-2's head importance (within 1e-4); the
// model's tokenizer (web/lib/tokenizer.js) gives the committed ids
// (tests/golden/models/tokenizer_cases.json) on every case; bad files, tokenizer.json among them,
// are refused with messages naming the file and the field; npm run model prints one JSON object
// per line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, loadModelsCore, MODEL_LIMITS } from '../../web/lib/models.js';
import { toSafetensors } from '../../web/lib/safetensors.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIR = path.join(ROOT, 'tests', 'golden', 'models');
const NAMES = ['gpt2-tied', 'gpt2-untied', 'gpt2-one-head', 'gpt2-trained', 'bert-mlm', 'bert-base-model', 'bert-untied', 'nanogpt-char',
  'llama-gqa', 'llama-mqa-llama3', 'llama-linear-bias', 'llama-dynamic-v5', 'mistral-window', 'qwen2-bias-window'];
const read = (...parts) => fs.readFileSync(path.join(DIR, ...parts));

function maxError(got, expected) {
  assert.equal(got.length, expected.length);
  let worst = 0;
  for (let i = 0; i < got.length; ++i) {
    const e = Math.abs(got[i] - expected[i]);
    worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
  }
  return worst;
}

test('every golden model and dtype matches PyTorch in WebAssembly, on the single-thread and the pthreads module', async () => {
  for (const threads of [false, true]) for (const name of NAMES) {
    const golden = JSON.parse(read(`${name}.golden.json`));
    for (const [dtype, entry] of Object.entries(golden.dtypes)) {
      const files = { 'config.json': read(name, 'config.json'), [entry.file]: read(name, entry.file), 'tokenizer.json': read(name, 'tokenizer.json') };
      const model = await loadModel(files, { threads });
      assert.equal(model.threads, threads ? 2 : 1, `threads: ${threads}`);
      let worstWeights = 0, worstLogits = 0, worstImportance = -1;
      for (const run of entry.runs) {
        assert.deepEqual(model.encode(run.text), run.ids, `${name}: the ids of ${run.text}`);
        const r = model.run(run.text);
        assert.equal(r.layers.length, run.attentions.length);
        r.layers.forEach((layer, l) => {
          assert.deepEqual(layer.weights.shape, [model.config.numHeads, run.ids.length, run.ids.length]);
          const e = maxError(layer.weights.data, run.attentions[l]);
          assert.ok(e <= 1e-5, `${name} ${dtype} layer ${l}: attention weights off by ${e}`);
          worstWeights = Math.max(worstWeights, e);
        });
        if (run.head_importance) {
          const importance = model.headImportance(run.ids);
          assert.deepEqual(importance.shape, [model.config.numLayers, model.config.numHeads]);
          const e = maxError(importance.data, run.head_importance);
          assert.ok(e <= 1e-4, `${name} ${dtype}: head importance off by ${e}`);
          worstImportance = Math.max(worstImportance, e);
        }
        if (run.logits) {
          const V = model.config.vocabSize;
          const rows = run.logit_positions.flatMap((p) => Array.from(r.logits.data.subarray(p * V, (p + 1) * V)));
          const e = maxError(rows, run.logits);
          assert.ok(e <= 1e-4, `${name} ${dtype}: logits off by ${e}`);
          worstLogits = Math.max(worstLogits, e);
        } else {
          assert.equal(r.logits, null);
          const e = Math.max(maxError(r.hidden.data, run.last_hidden_state), maxError(r.pooled.data, run.pooler_output));
          assert.ok(e <= 1e-4, `${name} ${dtype}: outputs off by ${e}`);
          worstLogits = Math.max(worstLogits, e);
        }
      }
      console.log(`    ${threads ? 'threads' : 'single '} ${name} ${dtype}: attention weights max error ${worstWeights.toExponential(2)}, logits/outputs ${worstLogits.toExponential(2)}${worstImportance >= 0 ? `, head importance ${worstImportance.toExponential(2)}` : ''}`);
      model.dispose();
    }
  }
});

test('the model\'s tokenizer gives the committed ids on every case', async () => {
  const cases = JSON.parse(read('tokenizer_cases.json'));
  let total = 0, matched = 0;
  for (const [name, { cases: list }] of Object.entries(cases.tokenizers)) {
    // any model's config and weights; the tokenizer under test
    const model = await loadModel({
      'config.json': read('gpt2-one-head', 'config.json'), 'model.safetensors': read('gpt2-one-head', 'model.safetensors'),
      'tokenizer.json': read('tokenizers', name, 'tokenizer.json'),
    });
    for (const c of list) {
      total += 1;
      const ids = model.encode(c.text);
      if (JSON.stringify(ids) === JSON.stringify(c.ids)) matched += 1;
      else assert.fail(`${name} on ${JSON.stringify(c.text)}: ${model.tokens(ids).join('|')} vs ${model.tokens(c.ids).join('|')}`);
    }
    model.dispose();
  }
  console.log(`    ${matched} of ${total} cases match the committed ids`);
  assert.ok(total >= 80);
});

test('a folder on disk opens, and run() takes ids, ablation and gives top-k', async () => {
  const model = await loadModel(path.join(DIR, 'gpt2-tied'));
  assert.equal(model.config.name, 'GPT-2');
  assert.equal(model.config.causal, true);
  assert.equal(model.config.task, 'next-token');
  assert.deepEqual(model.tokenizer, { kind: 'bpe', name: 'byte-level BPE', vocabSize: 377, maskId: null });
  const ids = model.encode('the king follows himself.');
  const plain = model.run(ids);
  const top = model.top(plain, 5);
  assert.equal(top.length, 5);
  assert.ok(top.every(([id, p], i) => Number.isInteger(id) && p > 0 && p < 1 && (i === 0 || p <= top[i - 1][1])));
  const ablated = model.run(ids, { ablate: [[1, 2]] });
  assert.ok(maxError(ablated.logits.data, plain.logits.data) > 1e-3, 'switching a head off changes the logits');
  // the weights in the kernels' layout: every parameter once, float32 (a tied head adds nothing;
  // each packed matrix's rows padded to a multiple of 8)
  const { moduleBytes, weightBytes } = model.memory();
  const c = model.config;
  const pad = (n) => Math.ceil(n / 8) * 8;
  const E = c.hidden, I = c.intermediate;
  const floats = pad(c.vocabSize) * E + c.maxPositions * E + 2 * E
    + c.numLayers * (pad(3 * E) * E + 3 * E + pad(E) * E + E + 4 * E + pad(I) * E + I + pad(E) * I + E);
  assert.equal(weightBytes, 4 * floats);
  assert.ok(moduleBytes > weightBytes && moduleBytes % 65536 === 0, `module ${moduleBytes} bytes`);
  model.dispose();
  assert.throws(() => model.run(ids), /disposed/);
  assert.throws(() => model.memory(), /disposed/);
});

test('the memory is planned from config.json: a model that will not fit is refused with the numbers before its weights are read', async () => {
  const config = JSON.parse(read('gpt2-tied', 'config.json').toString('utf8'));
  let reads = 0;
  const weights = { size: 10 ** 9, slice: () => { reads += 1; return new Blob([]); }, arrayBuffer: async () => { reads += 1; return new ArrayBuffer(0); } };
  await assert.rejects(loadModel({ 'config.json': JSON.stringify({ ...config, n_embd: 1024, n_head: 16, n_layer: 24, vocab_size: 50257, n_positions: 1024 }), 'model.safetensors': weights },
    { maxMemoryBytes: 10 ** 9 }), (error) => {
    assert.equal(error.code, 'TOO_LARGE');
    assert.match(error.message, /^config\.json: the model needs \d+ MB \(354823168 parameters: weights 1420 MB, a run of 128 tokens \d+ MB\), more than the 1000 MB it may take$/);
    console.log(`    refused as expected: ${error.message}`);
    return true;
  });
  assert.equal(reads, 0, 'no byte of the weights was read');
});

test('tokenizer_config.json is read with tokenizer.json: its mask_token is the mask the CLI and the page fill in', async () => {
  const files = { 'config.json': read('bert-mlm', 'config.json'), 'model.safetensors': read('bert-mlm', 'model.safetensors'), 'tokenizer.json': read('bert-mlm', 'tokenizer.json') };
  const vocab = JSON.parse(read('bert-mlm', 'tokenizer.json')).model.vocab;
  const plain = await loadModel(files);
  assert.deepEqual(plain.tokenizer, { kind: 'wordpiece', name: 'WordPiece', vocabSize: 208, maskId: vocab['[MASK]'] });
  plain.dispose();
  const withConfig = await loadModel({ ...files, 'tokenizer_config.json': JSON.stringify({ mask_token: '[UNK]' }) });
  assert.equal(withConfig.tokenizer.maskId, vocab['[UNK]']);
  withConfig.dispose();
});

test('bad files are refused with the file and the field named', async () => {
  const config = JSON.parse(read('gpt2-tied', 'config.json'));
  const weights = read('gpt2-tied', 'model.safetensors');
  const refused = async (files, code, pattern, options) => {
    await assert.rejects(loadModel(files, options), (error) => {
      assert.equal(error.name, 'MhaError');
      assert.equal(error.code, code, error.message);
      assert.match(error.message, pattern);
      console.log(`    refused as expected: ${error.message}`);
      return true;
    });
  };
  await refused({ 'model.safetensors': weights }, 'MODEL_FILE', /config\.json: is missing/);
  await refused({ 'config.json': JSON.stringify(config) }, 'MODEL_FILE', /model\.safetensors: is missing/);
  await refused({ 'config.json': JSON.stringify({ ...config, model_type: 'gemma' }), 'model.safetensors': weights },
    'INVALID_CONFIG', /config\.json: field 'model_type' is 'gemma'/);
  await refused({ 'config.json': JSON.stringify({ ...config, scale_attn_by_inverse_layer_idx: true }), 'model.safetensors': weights },
    'INVALID_CONFIG', /config\.json: field 'scale_attn_by_inverse_layer_idx'/);
  await refused({ 'config.json': JSON.stringify({ ...config, n_embd: 32 }), 'model.safetensors': weights },
    'SHAPE_MISMATCH', /model\.safetensors: tensor 'transformer\.wte\.weight' has shape \[377, 24\], expected \[377, 32\]/);
  await refused({ 'config.json': JSON.stringify(config), 'model.safetensors': weights.subarray(0, weights.length - 64) },
    'INVALID_ARGUMENT', /model\.safetensors: tensor '.*': data_offsets .* run past/);
  const nan = Buffer.from(weights);
  const header = Number(nan.readBigUInt64LE(0));
  nan.writeFloatLE(NaN, 8 + header + 4 * 3);  // the first tensor's fourth value
  await refused({ 'config.json': JSON.stringify(config), 'model.safetensors': nan }, 'INVALID_ARGUMENT', /value 3 is NaN/);
  await refused({ 'config.json': JSON.stringify(config), 'model.safetensors': weights }, 'TOO_LARGE', /model\.safetensors: \d+ bytes, more than the 1000/,
    { maxFileBytes: 1000 });
  const tokenizer = read('gpt2-tied', 'tokenizer.json').toString('utf8');
  await refused({ 'config.json': JSON.stringify(config), 'model.safetensors': weights, 'tokenizer.json': tokenizer.slice(0, 500) },
    'INVALID_CONFIG', /tokenizer\.json: not valid JSON/);
  // a damaged tokenizer.json: the field, what was expected and what came
  const damaged = async (change, pattern, name = 'gpt2-tied') => {
    const json = JSON.parse(read(name, 'tokenizer.json'));
    change(json);
    await refused({ 'config.json': JSON.stringify(config), 'model.safetensors': weights, 'tokenizer.json': JSON.stringify(json) }, 'INVALID_CONFIG', pattern);
  };
  await damaged((j) => { j.model.type = 'Nope'; }, /tokenizer\.json: field 'model\.type' is "Nope"; expected BPE, WordPiece, Unigram/);
  await damaged((j) => { delete j.model.vocab; }, /tokenizer\.json: field 'model\.vocab' is undefined; expected an object of piece: id/);
  await damaged((j) => { j.model.vocab['Ġthe'] = 'seven'; }, /field 'model\.vocab' entry "Ġthe" is "seven"; expected an id/);
  await damaged((j) => { j.model.merges[3] = 'nospace'; }, /field 'model\.merges' entry 3 is "nospace"; expected "left right"/);
  await damaged((j) => { j.added_tokens = 5; }, /field 'added_tokens' is 5; expected an array/);
  await damaged((j) => { j.pre_tokenizer = { type: 'Whatever' }; }, /tokenizer\.json: the tokenizer library cannot read it: .*Whatever/);
  await damaged((j) => { j.model.vocab = [['a', 0]]; }, /field 'model\.vocab' is an array; expected an object/, 'bert-mlm');
  await damaged((j) => { j.model.unk_token = '[NOPE]'; }, /field 'model\.unk_token' is "\[NOPE\]"; expected a piece of model\.vocab/, 'bert-mlm');
  await refused({ 'config.json': JSON.stringify(config), 'model.safetensors': weights, 'tokenizer.json': tokenizer, 'tokenizer_config.json': '[1]' },
    'INVALID_CONFIG', /tokenizer_config\.json: expected a JSON object, got an array/);
  assert.ok(MODEL_LIMITS.maxMemoryBytes >= 2 ** 31, 'GPT-2 small fits the limits');
});

test('the module speaks boundary.h: results carry their shapes, a bad call returns an outcome and the module goes on', async () => {
  const core = await loadModelsCore();
  const INVALID = core.StatusCode.INVALID_ARGUMENT.value;
  const session = new core.ModelSession();
  try {
    for (const result of [session.layerWeights(0), session.hidden(), session.headImportance(), session.chunkBuffer(-1), session.feed(1), session.finish(), session.run([0, 1], false, -1, 0),
      session.layerHeadOutputs(0), session.attentionParameter(0, 'out_proj.weight')]) {
      assert.equal(result.code, INVALID, result.message);
      assert.match(result.message, /no model is loaded|no hidden|layer 0: the last run has 0 layers|expected a whole number|no load is under way/);
    }
    assert.ok(core.heapBytes() > 0 && core.heapInUse() > 0);
  } finally {
    session.delete();
  }
  const model = await loadModel(path.join(DIR, 'gpt2-tied'));
  const r = model.run([1, 2, 3]);
  assert.deepEqual(r.layers[0].weights.shape, [model.config.numHeads, 3, 3]);
  assert.deepEqual(r.logits.shape, [3, model.config.vocabSize]);
  assert.throws(() => model.run([1, 2], { ablate: [[0, 99]] }), /ablate: \(layer 0, head 99\) is out of range/);
  assert.equal(model.run([1, 2, 3]).logits.data.length, 3 * model.config.vocabSize, 'the module works after an error');
  model.dispose();
});

/** A random GPT-2 checkpoint (config.json, model.safetensors in float32) of the given sizes. */
function randomGpt2({ E, H, L, V, P, seed = 1 }) {
  const values = (n) => Float32Array.from({ length: n }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.2);
  const tensors = { 'transformer.wte.weight': { data: values(V * E), shape: [V, E] }, 'transformer.wpe.weight': { data: values(P * E), shape: [P, E] } };
  const norm = (name) => {
    tensors[`${name}.weight`] = { data: Float32Array.from(values(E), (v) => 1 + v), shape: [E] };
    tensors[`${name}.bias`] = { data: values(E), shape: [E] };
  };
  for (let l = 0; l < L; ++l) {
    norm(`transformer.h.${l}.ln_1`);
    norm(`transformer.h.${l}.ln_2`);
    for (const [name, rows, cols] of [['attn.c_attn', E, 3 * E], ['attn.c_proj', E, E], ['mlp.c_fc', E, 4 * E], ['mlp.c_proj', 4 * E, E]]) {
      tensors[`transformer.h.${l}.${name}.weight`] = { data: values(rows * cols), shape: [rows, cols] };
      tensors[`transformer.h.${l}.${name}.bias`] = { data: values(cols), shape: [cols] };
    }
  }
  norm('transformer.ln_f');
  const config = { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
    n_positions: P, n_embd: E, n_head: H, n_layer: L, n_inner: null, vocab_size: V };
  return { 'config.json': JSON.stringify(config), 'model.safetensors': toSafetensors(tensors) };
}

test('the pthreads module gives the single-thread module\'s numbers, bit for bit, on a model wide enough to split', async () => {
  // width 256 at 96 tokens: every projection, the MLP and the LM head are over the size at which
  // the GEMMs split their column panels between the threads; the attention splits its rows
  const files = randomGpt2({ E: 256, H: 4, L: 2, V: 3000, P: 128 });
  const ids = Array.from({ length: 96 }, (_, i) => (i * 37 + 11) % 3000);
  const runs = [];
  for (const threads of [false, true]) {
    const model = await loadModel(files, { threads });
    assert.equal(model.threads, threads ? 2 : 1);
    runs.push(model.run(ids, { headOutputs: true }));
    runs[runs.length - 1].importance = model.headImportance(ids).data;
    model.dispose();
  }
  const [single, multi] = runs;
  const worst = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
  const diffs = {
    weights: Math.max(...single.layers.map((l, i) => worst(l.weights.data, multi.layers[i].weights.data))),
    residual: Math.max(...single.layers.map((l, i) => worst(l.residual.data, multi.layers[i].residual.data))),
    logits: worst(single.logits.data, multi.logits.data),
    importance: worst(single.importance, multi.importance),
  };
  console.log(`    max |threads - single|: ${JSON.stringify(diffs)}`);
  assert.ok(single.logits.data.every(Number.isFinite));
  assert.deepEqual(diffs, { weights: 0, residual: 0, logits: 0, importance: 0 });
});

test('threads: true insists on the pthreads module, false keeps to one thread; anything else is refused', async () => {
  const { MhaError } = await import('../../web/lib/errors.js');
  const files = randomGpt2({ E: 32, H: 2, L: 1, V: 50, P: 8 });
  assert.equal((await loadModel(files)).threads, 2, 'Node.js: the pthreads module by default');
  assert.equal((await loadModel(files, { threads: false })).threads, 1);
  await assert.rejects(loadModel(files, { threads: 'yes' }), (e) => e instanceof MhaError && e.code === 'INVALID_ARGUMENT' && /threads must be 'auto', true or false, got string/.test(e.message));
});

test('weights larger than the module\'s memory so far load (the memory grows under the buffer they go into)', async () => {
  // one layer, width 32, a vocabulary of 500000: a 64 MB file, more than any model before it here
  const E = 32, V = 500_000, P = 8;
  const core = await loadModelsCore();
  const before = core.heapBytes();
  let seed = 1;
  const values = (n) => Float32Array.from({ length: n }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.04);
  const tensors = { 'transformer.wte.weight': { data: values(V * E), shape: [V, E] }, 'transformer.wpe.weight': { data: values(P * E), shape: [P, E] } };
  const norm = (name) => {
    tensors[`${name}.weight`] = { data: new Float32Array(E).fill(1), shape: [E] };
    tensors[`${name}.bias`] = { data: new Float32Array(E), shape: [E] };
  };
  norm('transformer.h.0.ln_1');
  norm('transformer.h.0.ln_2');
  norm('transformer.ln_f');
  for (const [name, rows, cols] of [['attn.c_attn', E, 3 * E], ['attn.c_proj', E, E], ['mlp.c_fc', E, 4 * E], ['mlp.c_proj', 4 * E, E]]) {
    tensors[`transformer.h.0.${name}.weight`] = { data: values(rows * cols), shape: [rows, cols] };
    tensors[`transformer.h.0.${name}.bias`] = { data: new Float32Array(cols), shape: [cols] };
  }
  const config = { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
    n_positions: P, n_embd: E, n_head: 4, n_layer: 1, n_inner: null, vocab_size: V };
  const bytes = toSafetensors(tensors);
  assert.ok(bytes.length > before, `the file (${bytes.length} bytes) is larger than the memory before (${before})`);
  const model = await loadModel({ 'config.json': JSON.stringify(config), 'model.safetensors': bytes });
  const r = model.run([1, 2, 3]);
  assert.deepEqual(r.logits.shape, [3, V]);
  assert.ok(r.logits.data.every(Number.isFinite));
  model.dispose();
});

test('npm run model -- --json prints one object per text', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'commands', 'model.js'), '--json', '--no-build', '--model', path.join(DIR, 'gpt2-tied')], {
    input: 'the king follows himself.\nAt dawn each woman helps herself.\n', encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const golden = JSON.parse(read('gpt2-tied.golden.json')).dtypes.F32.runs;
  assert.equal(lines.length, 2);
  lines.forEach((line, i) => {
    assert.equal(line.text, golden[i].text);
    assert.deepEqual(line.ids, golden[i].ids);
    assert.equal(line.layers.length, 2);
    assert.equal(line.layers[0].weights.length, 4);
    assert.equal(line.layers[0].weights[0].length, golden[i].ids.length);
    assert.ok(maxError(line.layers[1].weights.flat(2), golden[i].attentions[1]) <= 1e-5);
    assert.equal(line.next.length, 5);
    // the first guess is the arg-max of the golden logits at the last position
    const V = 377, last = golden[i].logits.slice(2 * V, 3 * V);
    assert.equal(line.next[0][0], last.indexOf(Math.max(...last)));
  });
  const stats = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'commands', 'model.js'), '--json', '--stats', '--no-build', '--model', path.join(DIR, 'gpt2-tied')], {
    input: 'the king follows himself.\n', encoding: 'utf8',
  });
  assert.equal(stats.status, 0, stats.stderr);
  const statsLines = stats.stdout.trim().split('\n');
  assert.equal(statsLines.length, 2);
  assert.deepEqual(JSON.parse(statsLines[0]), lines[0], '--stats adds a line and changes none');
  const { stats: s } = JSON.parse(statsLines[1]);
  assert.deepEqual(Object.keys(s), ['moduleBytes', 'weightBytes', 'loadMs', 'runMs']);
  assert.ok(s.moduleBytes > s.weightBytes && s.weightBytes > 0 && s.loadMs >= 0 && s.runMs >= 0, JSON.stringify(s));
  const bert = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'commands', 'model.js'), '--json', '--no-build', '--model', path.join(DIR, 'bert-mlm')], {
    input: 'the [MASK] follows himself.\n', encoding: 'utf8',
  });
  assert.equal(bert.status, 0, bert.stderr);
  const b = JSON.parse(bert.stdout);
  assert.equal(b.masked.length, 1);
  assert.equal(b.masked[0].position, 2);
  assert.equal(b.next, undefined);
});
