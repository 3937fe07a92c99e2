// The names JavaScript reads from the Embind tables (cpp/bindings) are the names its types and
// exports promise: the core's status codes are MhaError codes of index.d.ts, the statistics'
// fields those of its HeadStatistics and RowStatistics, and train.js's RELATIONS the training
// core's relations, in order. The JS keeps no other copy of them.
//
//   node --test tests/js/bindings.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { loadMha } from '../../web/lib/index.js';
import { loadTrainCore, RELATIONS } from '../../web/lib/train.js';
import { instantiateWasmModule } from '../../web/lib/wasm-module.js';
import createMhaCore from '../../web/lib/wasm/mha_core.js';

const types = fs.readFileSync(new URL('../../web/lib/index.d.ts', import.meta.url), 'utf8');

/** The string literals of `export type Name = 'A' | 'B' …;` in index.d.ts. */
function unionOf(name) {
  const body = types.match(new RegExp(`export type ${name} =([^;]*);`))[1];
  return [...body.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]);
}

/** The field names of `export interface Name { … }` in index.d.ts. */
function fieldsOf(name) {
  const body = types.match(new RegExp(`export interface ${name} \\{([^}]*)\\}`))[1];
  return [...body.replace(/\/\*\*[\s\S]*?\*\//g, '').matchAll(/^\s*(\w+)\??:/gm)].map((m) => m[1]);
}

const core = await instantiateWasmModule(createMhaCore, new URL('../../web/lib/wasm/mha_core.wasm', import.meta.url));

test("every status code of the core but OK is an MhaErrorCode of index.d.ts, and the train module's codes are the same", async () => {
  const names = (module) => Object.keys(module.StatusCode).filter((k) => typeof module.StatusCode[k]?.value === 'number');
  const codes = names(core);
  console.log(`  StatusCode: ${codes.map((c) => `${c}=${core.StatusCode[c].value}`).join(', ')}`);
  assert.equal(core.StatusCode.OK.value, 0);
  const declared = unionOf('MhaErrorCode');
  assert.deepEqual(codes.filter((c) => c !== 'OK' && !declared.includes(c)), [], 'codes missing from MhaErrorCode');
  const train = await loadTrainCore();
  assert.deepEqual(names(train).map((c) => [c, train.StatusCode[c].value]), codes.map((c) => [c, core.StatusCode[c].value]));
});

test('headStatistics returns the fields index.d.ts declares, named by the core', async () => {
  const mha = await loadMha({ threads: false });
  const weights = { data: new Float32Array([0.5, 0.5, 1, 0, 0.25, 0.75, 0, 1]), shape: [2, 2, 2] };
  const { heads, rows } = mha.headStatistics(weights, { perRow: true });
  assert.equal(heads.length, 2);
  assert.deepEqual(Object.keys(heads[0]).sort(), fieldsOf('HeadStatistics').sort());
  assert.deepEqual(Object.keys(rows).sort(), fieldsOf('RowStatistics').sort());
  assert.deepEqual(rows.shape, [1, 2, 2]);
  assert.ok(rows.argmax instanceof Int32Array && rows.entropy instanceof Float64Array);
});

test("train.js's RELATIONS are the training core's relations, in its order", async () => {
  const train = await loadTrainCore();
  const session = new train.TrainSession();
  try {
    assert.deepEqual(session.relations(), RELATIONS);
  } finally {
    session.delete();
  }
});

test('shapes and head indices reach the core as written: its messages name them', async () => {
  const mha = await loadMha({ threads: false });
  const a = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2 });
  const query = { data: new Float32Array(24), shape: [3, 8] };
  const message = (call) => { try { call(); } catch (error) { return `${error.code}: ${error.message}`; } return 'no error'; };
  for (const h of [-3, 2, 123456789012]) {
    const m = message(() => a.forward({ query, ablateHeads: [0, h] }));
    console.log(`  ablateHeads [0, ${h}]: ${m}`);
    assert.match(m, new RegExp(`^INVALID_ARGUMENT: .*head index ${h} is out of range`));
  }
  const wrong = message(() => a.forward({ query: { data: new Float32Array(2 * 3 * 7), shape: [2, 3, 7] } }));
  assert.match(wrong, /^SHAPE_MISMATCH: .*embedding dimension of 8, but got 7 \(query shape \(2, 3, 7\)\)/);
  a.dispose();
});
