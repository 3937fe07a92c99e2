// Soak: 10,000 lesson-size forward passes (E=64, H=8, L=10; `npm run soak`: 100,000) with objects created and
// disposed along the way leave the heap flat; objects never disposed are freed by the
// FinalizationRegistry once collected.
//
// The heap is watched two ways: heapBytes() (WebAssembly memory, which only grows) and
// heapInUse() (bytes malloc has handed out and not taken back), plus liveObjects().
import assert from 'node:assert/strict';
import test from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { setImmediate as tick } from 'node:timers/promises';
import { loadMha } from '../../web/lib/index.js';
import { referenceForward, maxAbsDiff } from './reference-mha.js';
import { rng, uniform } from './property-helpers.js';

// `node --expose-gc` without asking for it on the command line.
v8.setFlagsFromString('--expose-gc');
const gc = globalThis.gc ?? vm.runInNewContext('gc');

const mha = await loadMha();
// npm test: 10,000 forwards; `npm run soak`: 100,000
const FORWARDS = Number(process.env.SOAK_FORWARDS ?? 10_000);
const FORWARDS_PER_OBJECT = 10;
const CHECKPOINT = FORWARDS / 10;
const WARM_UP = Math.min(1_000, CHECKPOINT / 2);

test(`${FORWARDS} lesson-size forwards with objects created and disposed leave the heap flat`, () => {
  const random = rng(64);
  const x = { data: uniform(random, 10 * 64, -1, 1), shape: [1, 10, 64] };
  const mask = { data: new Uint8Array(100).map((_, i) => (i % 10 > Math.floor(i / 10) ? 1 : 0)), shape: [10, 10], dtype: 'bool' };
  let attention = null;
  const samples = [];
  let checksum = 0;
  const started = Date.now();
  for (let i = 0; i < FORWARDS; ++i) {
    if (i % FORWARDS_PER_OBJECT === 0) {
      attention?.dispose();
      // Sampled between objects (none alive), so that no object's reusable buffers are counted.
      if (i === WARM_UP || (i > 0 && i % CHECKPOINT === 0)) {
        samples.push({ forwards: i, heapBytes: mha.heapBytes(), inUse: mha.heapInUse(), live: mha.liveObjects() });
      }
      attention = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true, seed: i % 7 });
    }
    // The lesson's calls: weights per head for the maps, sometimes a causal mask, sometimes head outputs.
    const result = attention.forward({
      query: x,
      averageAttnWeights: false,
      attnMask: i % 3 === 0 ? mask : null,
      returnHeadOutputs: i % 5 === 0,
      ablateHeads: i % 7 === 0 ? [i % 8] : [],
    });
    checksum += result.output.data[i % 640];
  }
  attention.dispose();
  samples.push({ forwards: FORWARDS, heapBytes: mha.heapBytes(), inUse: mha.heapInUse(), live: mha.liveObjects() });
  const seconds = (Date.now() - started) / 1000;
  for (const s of samples) console.log(`after ${String(s.forwards).padStart(6)} forwards: WebAssembly memory ${s.heapBytes} B, in use ${s.inUse} B, live objects ${s.live}`);
  console.log(`${FORWARDS} forwards (${FORWARDS / FORWARDS_PER_OBJECT} objects created and disposed) in ${seconds.toFixed(1)} s; checksum ${checksum.toFixed(3)}`);
  assert.ok(Number.isFinite(checksum));
  const first = samples[0];
  for (const s of samples.slice(1)) {
    assert.equal(s.heapBytes, first.heapBytes, `WebAssembly memory grew by ${s.heapBytes - first.heapBytes} B by forward ${s.forwards}`);
    assert.equal(s.inUse, first.inUse, `bytes in use changed by ${s.inUse - first.inUse} B by forward ${s.forwards}`);
    assert.equal(s.live, 0);
  }

  // And the module still computes what the reference does.
  const check = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true, seed: 5 });
  const got = check.forward({ query: x, attnMask: mask });
  const want = referenceForward(check.config, check.stateDict(), { query: x, attnMask: mask });
  check.dispose();
  const error = maxAbsDiff(got.output.data, want.output.data);
  console.log(`after the soak: output max error ${error.toExponential(2)} against the reference (tolerance 1e-4)`);
  assert.ok(error <= 1e-4);
});

/** Collects garbage and lets the FinalizationRegistry run until `done()` or `rounds` pass. */
async function collectUntil(done, rounds = 200) {
  for (let i = 0; i < rounds; ++i) {
    gc();
    await tick();
    if (done()) return i + 1;
  }
  return -1;
}

test('objects never disposed are freed by the FinalizationRegistry once collected', async () => {
  await collectUntil(() => false, 5);
  const baseLive = mha.liveObjects();
  const baseInUse = mha.heapInUse();
  const ROUNDS = 5;
  const PER_ROUND = 500;
  const x = { data: uniform(rng(1), 10 * 64, -1, 1), shape: [1, 10, 64] };
  const afterRounds = [];
  for (let round = 0; round < ROUNDS; ++round) {
    (() => {
      for (let i = 0; i < PER_ROUND; ++i) {
        const attention = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true, seed: i });
        attention.forward({ query: x });  // grow its buffers too; then drop it without dispose()
      }
    })();
    const created = mha.liveObjects() - baseLive;
    const rounds = await collectUntil(() => mha.liveObjects() === baseLive);
    afterRounds.push({ created, rounds, live: mha.liveObjects(), inUse: mha.heapInUse() });
  }
  for (const [i, r] of afterRounds.entries()) {
    console.log(`round ${i + 1}: ${PER_ROUND} objects dropped (${r.created} still alive before gc); ` +
      `after ${r.rounds} gc passes: live ${r.live} (baseline ${baseLive}), in use ${r.inUse} B (baseline ${baseInUse} B)`);
  }
  for (const r of afterRounds) {
    assert.ok(r.rounds > 0, 'the finalizer did not free every dropped object within 200 gc passes');
    assert.equal(r.live, baseLive);
  }
  // Once every object is freed, the heap is back where it started: it stops growing.
  const last = afterRounds[afterRounds.length - 1];
  assert.ok(last.inUse - baseInUse <= 4096, `bytes in use grew by ${last.inUse - baseInUse} B over ${ROUNDS} rounds`);
  assert.equal(afterRounds[1].inUse, last.inUse, 'bytes in use after round 2 and after the last round differ');
});
