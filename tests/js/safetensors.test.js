// Weights exported from PyTorch (scripts/export/export_weights.py) load from .safetensors and JSON
// and reproduce PyTorch's output; malformed, truncated and mis-shaped files give errors that name
// the tensor and the shapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { loadMha, MhaError, loadStateDictFile, parseSafetensors, toSafetensors } from '../../web/lib/index.js';

const FIXTURES = new URL('./fixtures/weights/', import.meta.url);
const read = (name) => fs.readFileSync(new URL(name, FIXTURES));
const TOLERANCE = 1e-4;

const mha = await loadMha();

function maxAbsDiff(actual, expected) {
  assert.equal(actual.length, expected.length, `lengths differ: ${actual.length} vs ${expected.length}`);
  let worst = 0;
  for (let i = 0; i < actual.length; ++i) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  return worst;
}

function throwsMha(fn, code, patterns) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof MhaError, `expected MhaError, got ${error}`);
    assert.equal(error.code, code, error.message);
    for (const p of patterns) assert.match(error.message, p);
    console.log(`    error as expected: ${error.message}`);
    return true;
  });
}

/** Run the reference input through weights loaded from `file`; compare with PyTorch. */
function reproduce(base, format) {
  const reference = JSON.parse(read(`${base}.reference.json`));
  const bytes = read(`${base}.${format}`);
  const loaded = loadStateDictFile(bytes, { fileName: `${base}.${format}` });
  assert.equal(loaded.format, format);
  assert.equal(loaded.prefix, reference.prefix);
  const c = reference.config;
  assert.deepEqual(
    [loaded.config.embedDim, loaded.config.numHeads, loaded.config.bias, loaded.config.addBiasKv, loaded.config.batchFirst],
    [c.embed_dim, c.num_heads, c.bias, c.add_bias_kv, c.batch_first],
  );
  const attention = new mha.MultiHeadAttention(loaded.config);
  try {
    attention.loadStateDict(loaded.stateDict);
    const { query } = reference.inputs;
    const result = attention.forward({ query: { data: query.data, shape: query.shape }, averageAttnWeights: false });
    assert.deepEqual(result.output.shape, reference.expected.output.shape);
    assert.deepEqual(result.weights.shape, reference.expected.weights.shape);
    const outputError = maxAbsDiff(result.output.data, reference.expected.output.data);
    const weightsError = maxAbsDiff(result.weights.data, reference.expected.weights.data);
    console.log(`  ${base}.${format} (${reference.dtype}, prefix '${loaded.prefix}'): output max |error| ${outputError.toExponential(2)}, weights max |error| ${weightsError.toExponential(2)} (tolerance ${TOLERANCE})`);
    assert.ok(outputError <= TOLERANCE, `output error ${outputError} > ${TOLERANCE}`);
    assert.ok(weightsError <= TOLERANCE, `weights error ${weightsError} > ${TOLERANCE}`);
    return { outputError, weightsError };
  } finally {
    attention.dispose();
  }
}

const CASES = ['mha_e16_h4_f32', 'encoder_layer_e16_h2_f16', 'mha_e8_h2_bias_kv_bf16'];

for (const base of CASES) {
  test(`${base}: the .safetensors file reproduces PyTorch to ${TOLERANCE}`, () => reproduce(base, 'safetensors'));
  test(`${base}: the JSON file reproduces PyTorch to ${TOLERANCE}`, () => reproduce(base, 'json'));
}

test('the .safetensors and JSON exports hold the same values', () => {
  for (const base of CASES) {
    const a = loadStateDictFile(read(`${base}.safetensors`)).stateDict;
    const b = loadStateDictFile(read(`${base}.json`).toString('utf8')).stateDict;
    assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort());
    let worst = 0;
    for (const name of Object.keys(a)) {
      assert.deepEqual(a[name].shape, b[name].shape, name);
      worst = Math.max(worst, maxAbsDiff(a[name].data, b[name].data));
    }
    console.log(`  ${base}: safetensors vs JSON max |difference| ${worst} (expected 0)`);
    assert.equal(worst, 0);
  }
});

test('dtypes: F16 and BF16 bit patterns convert exactly, F64 is rounded to float32', () => {
  const f16 = [0x3c00, 0xc000, 0x7bff, 0x0001, 0x0400, 0x7c00, 0xfc00, 0x8000, 0x3555];
  const f16Expected = [1, -2, 65504, 2 ** -24, 2 ** -14, Infinity, -Infinity, -0, 0.333251953125];
  const bf16 = [0x3f80, 0xc040, 0x7f80, 0x3eab];
  const bf16Expected = [1, -3, Infinity, 0.333984375];
  const f64 = [Math.PI, -1e-3];
  const header = {
    half: { dtype: 'F16', shape: [f16.length], data_offsets: [0, 2 * f16.length] },
    brain: { dtype: 'BF16', shape: [2, 2], data_offsets: [2 * f16.length, 2 * f16.length + 8] },
    double: { dtype: 'F64', shape: [2], data_offsets: [2 * f16.length + 8, 2 * f16.length + 24] },
  };
  const body = new DataView(new ArrayBuffer(2 * f16.length + 24));
  f16.forEach((bits, i) => body.setUint16(2 * i, bits, true));
  bf16.forEach((bits, i) => body.setUint16(2 * f16.length + 2 * i, bits, true));
  f64.forEach((v, i) => body.setFloat64(2 * f16.length + 8 + 8 * i, v, true));
  const file = assemble(JSON.stringify(header), new Uint8Array(body.buffer));
  const { tensors } = parseSafetensors(file);
  assert.deepEqual(Array.from(tensors.half.data), f16Expected);
  assert.ok(Object.is(tensors.half.data[7], -0), '0x8000 is -0');
  assert.deepEqual(Array.from(tensors.brain.data), bf16Expected);
  assert.deepEqual(tensors.brain.shape, [2, 2]);
  assert.deepEqual(Array.from(tensors.double.data), f64.map(Math.fround));
  console.log('  F16, BF16, F64 values as expected');
});

test('toSafetensors writes what parseSafetensors reads (and PyTorch-exported layout: aligned data)', () => {
  const stateDict = loadStateDictFile(read('mha_e16_h4_f32.safetensors')).stateDict;
  const file = toSafetensors(stateDict, { note: 'round trip' });
  const headerLength = new DataView(file.buffer).getUint32(0, true);
  assert.equal((8 + headerLength) % 8, 0, 'data start is 8-byte aligned');
  const { tensors, metadata } = parseSafetensors(file);
  assert.equal(metadata.note, 'round trip');
  for (const [name, t] of Object.entries(stateDict)) {
    assert.deepEqual(tensors[name].shape, t.shape);
    assert.equal(maxAbsDiff(tensors[name].data, t.data), 0, name);
  }
});

/** A .safetensors file from a header string and data bytes. */
function assemble(headerText, data, { lengthField } = {}) {
  const header = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + header.length + data.length);
  new DataView(out.buffer).setUint32(0, lengthField ?? header.length, true);
  out.set(header, 8);
  out.set(data, 8 + header.length);
  return out;
}

test('truncated files: the error says truncated, which tensor, and how many bytes', () => {
  const file = new Uint8Array(read('mha_e16_h4_f32.safetensors'));
  throwsMha(() => loadStateDictFile(file.subarray(0, 5), { fileName: 'cut.safetensors' }), 'INVALID_ARGUMENT', [/cut\.safetensors/, /truncated/, /5 bytes/]);
  throwsMha(() => parseSafetensors(file.subarray(0, 100), { fileName: 'cut.safetensors' }), 'INVALID_ARGUMENT', [/truncated/, /header needs bytes 8 to \d+/, /100 bytes/]);
  throwsMha(() => parseSafetensors(file.subarray(0, file.length - 10), { fileName: 'cut.safetensors' }), 'LENGTH_MISMATCH', [/tensor '[\w.]+'/, /truncated/, /data_offsets \[\d+, \d+\]/]);
});

test('malformed headers: not JSON, unknown or integer dtype, wrong byte count, overlapping tensors', () => {
  throwsMha(() => parseSafetensors(assemble('{"a": {"dtype": "F32", ', new Uint8Array(0))), 'INVALID_ARGUMENT', [/header is not valid UTF-8 JSON/]);
  throwsMha(() => parseSafetensors(assemble('[1, 2]', new Uint8Array(0))), 'INVALID_ARGUMENT', [/must be a JSON object/]);
  throwsMha(() => parseSafetensors(assemble('{"w": {"dtype": "F8", "shape": [2], "data_offsets": [0, 2]}}', new Uint8Array(2))), 'INVALID_DTYPE', [/tensor 'w'/, /unknown dtype "F8"/]);
  throwsMha(() => parseSafetensors(assemble('{"w": {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]}}', new Uint8Array(8))), 'INVALID_DTYPE', [/tensor 'w'/, /I32 is not a floating-point type/]);
  throwsMha(() => parseSafetensors(assemble('{"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}}', new Uint8Array(20))), 'LENGTH_MISMATCH', [/tensor 'w'/, /shape \[2, 3\] of F32 needs 24 bytes/, /hold 20/]);
  throwsMha(() => parseSafetensors(assemble('{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}', new Uint8Array(12))), 'INVALID_ARGUMENT', [/'a' \[0, 8\] and 'b' \[4, 12\] overlap/]);
  throwsMha(() => parseSafetensors(assemble('{}', new Uint8Array(0), { lengthField: 0x7fffffff })), 'INVALID_ARGUMENT', [/not a \.safetensors file/]);
  throwsMha(() => loadStateDictFile(new TextEncoder().encode('{"state_dict": {'), { fileName: 'w.json' }), 'INVALID_ARGUMENT', [/w\.json/, /neither a \.safetensors file nor valid JSON/]);
});

test('mis-shaped state_dicts: the error names the tensor, its shape and the expected shape', () => {
  const good = loadStateDictFile(read('mha_e16_h4_f32.safetensors')).stateDict;
  const withTensor = (name, shape) => {
    const numel = shape.reduce((a, b) => a * b, 1);
    return toSafetensors({ ...good, [name]: { data: new Float32Array(numel), shape } }, { config: JSON.stringify({ num_heads: 4 }) });
  };
  throwsMha(() => loadStateDictFile(withTensor('in_proj_weight', [48, 15]), { fileName: 'bad.safetensors' }), 'SHAPE_MISMATCH',
    [/bad\.safetensors/, /tensor 'in_proj_weight' has shape \[48, 15\], expected \[48, 16\]/]);
  throwsMha(() => loadStateDictFile(withTensor('in_proj_bias', [47])), 'SHAPE_MISMATCH', [/tensor 'in_proj_bias' has shape \[47\], expected \[48\]/]);
  throwsMha(() => loadStateDictFile(withTensor('out_proj.weight', [16, 12])), 'SHAPE_MISMATCH', [/'out_proj.weight' has shape \[16, 12\], expected \[E, E\]/]);
  throwsMha(() => loadStateDictFile(withTensor('conv.weight', [3])), 'UNKNOWN_PARAMETER', [/tensor 'conv\.weight' is not a parameter of nn\.MultiheadAttention/]);
  // The number of heads must divide E and be known.
  const noConfig = toSafetensors(good);
  throwsMha(() => loadStateDictFile(noConfig), 'NUM_HEADS_MISSING', [/number of heads is not in the file/, /numHeads/]);
  assert.equal(loadStateDictFile(noConfig, { numHeads: 2 }).config.numHeads, 2);
  throwsMha(() => loadStateDictFile(noConfig, { numHeads: 5 }), 'INVALID_CONFIG', [/num_heads must be a positive integer dividing embed_dim 16, got 5/]);
});

test('a model with several attention layers: prefix picks one, and without it the error lists them', () => {
  const one = loadStateDictFile(read('mha_e16_h4_f32.safetensors')).stateDict;
  const model = {};
  for (const layer of [0, 1]) for (const [name, t] of Object.entries(one)) model[`encoder.layers.${layer}.self_attn.${name}`] = t;
  model['encoder.layers.0.linear1.weight'] = { data: new Float32Array(4), shape: [2, 2] };
  const file = toSafetensors(model, { num_heads: '4' });
  throwsMha(() => loadStateDictFile(file), 'INVALID_ARGUMENT', [/2 attention layers/, /'encoder\.layers\.0\.self_attn\.'/, /'encoder\.layers\.1\.self_attn\.'/, /option prefix/]);
  const loaded = loadStateDictFile(file, { prefix: 'encoder.layers.1.self_attn.' });
  assert.equal(loaded.config.numHeads, 4);
  assert.deepEqual(Object.keys(loaded.stateDict).sort(), Object.keys(one).sort());
});

test('a state_dict loaded from a file is accepted by MultiHeadAttention.loadStateDict as is', () => {
  const { config, stateDict } = loadStateDictFile(JSON.parse(read('mha_e8_h2_bias_kv_bf16.json')));
  const attention = new mha.MultiHeadAttention(config);
  attention.loadStateDict(stateDict);
  assert.deepEqual(attention.getParameter('bias_k').shape, [1, 1, 8]);
  attention.dispose();
});
