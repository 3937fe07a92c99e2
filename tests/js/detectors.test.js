// Head detectors (web/lib/detectors.js): scores worked out by hand on small weight maps,
// `npm run heads` against `npm run model -- --ids` weights scored here, and the committed
// models: gpt2-induction (trained on repeated random tokens, scripts/reference/train_induction.py)
// has an induction head the detector names; gpt2-induction-random, its untrained twin, has none.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { detectionPattern, mulScore, scoreHeads, scoreText, repeatedTokens, detectHeads, detectHeadsAsync, DETECTOR_THRESHOLD } from '../../web/lib/models.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const close = (a, b, tol = 1e-12) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

/** (T, T) attention whose row i puts all its weight on column to(i). */
function oneHot(T, to) {
  const a = new Float32Array(T * T);
  for (let i = 0; i < T; ++i) a[i * T + to(i)] = 1;
  return a;
}

function uniform(T) {
  const a = new Float64Array(T * T);
  for (let i = 0; i < T; ++i) for (let j = 0; j <= i; ++j) a[i * T + j] = 1 / (i + 1);
  return a;
}

const ids = [9, 1, 2, 3, 1, 2, 3];  // BOS 9, then 1 2 3 twice
const T = ids.length;

test('detection patterns are TransformerLens\'s for 9 1 2 3 1 2 3', () => {
  const cells = (name) => {
    const p = detectionPattern(name, ids);
    return [...p.keys()].filter((k) => p[k]).map((k) => [Math.floor(k / T), k % T]);
  };
  assert.deepEqual(cells('previousToken'), [[1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5]]);
  assert.deepEqual(cells('duplicateToken'), [[4, 1], [5, 2], [6, 3]]);
  assert.deepEqual(cells('induction'), [[4, 2], [5, 3], [6, 4]]);
});

test('mul scores by hand: an induction head, a previous-token head, uniform attention', () => {
  const score = (a, name) => mulScore(a, detectionPattern(name, ids), T);
  // rows 0-3 on BOS (left out), rows 4-6 on the token after the earlier copy: 3 of 3
  const induction = oneHot(T, (i) => (i >= 4 ? i - 2 : 0));
  assert.equal(score(induction, 'induction'), 1);
  assert.equal(score(induction, 'previousToken'), 0);
  assert.equal(score(induction, 'duplicateToken'), 0);
  // row i on i-1: row 1's weight is on BOS, so 5 of 5 on the previous token
  const previous = oneHot(T, (i) => Math.max(i - 1, 0));
  assert.equal(score(previous, 'previousToken'), 1);
  assert.equal(score(previous, 'induction'), 0);
  // uniform: the past-BOS total is sum i/(i+1), i = 1..6
  const all = 1 / 2 + 2 / 3 + 3 / 4 + 4 / 5 + 5 / 6 + 6 / 7;
  const u = uniform(T);
  close(score(u, 'previousToken'), (1 / 3 + 1 / 4 + 1 / 5 + 1 / 6 + 1 / 7) / all);
  close(score(u, 'duplicateToken'), (1 / 5 + 1 / 6 + 1 / 7) / all);
  close(score(u, 'induction'), (1 / 5 + 1 / 6 + 1 / 7) / all);
  // half on the duplicate, half on BOS, in rows 4-6 only: the BOS half is not counted
  const half = new Float32Array(T * T);
  for (let i = 0; i < T; ++i) half[i * T] = 1;
  for (const i of [4, 5, 6]) { half[i * T] = 0.5; half[i * T + i - 3] = 0.5; }
  assert.equal(score(half, 'duplicateToken'), 1);
});

test('scoreHeads reads (H, T, T) per layer; bad shapes are named', () => {
  const data = new Float32Array(2 * T * T);
  data.set(oneHot(T, (i) => (i >= 4 ? i - 2 : 0)), 0);
  data.set(oneHot(T, (i) => Math.max(i - 1, 0)), T * T);
  const [[h0, h1]] = scoreHeads([{ data, shape: [2, T, T] }], ids);
  assert.deepEqual(h0, { previousToken: 0, duplicateToken: 0, induction: 1 });
  assert.deepEqual(h1, { previousToken: 1, duplicateToken: 0, induction: 0 });
  assert.throws(() => scoreHeads([{ data, shape: [2, T, T - 1] }], ids), /expected weights \(H, 7, 7\), got shape \[2,7,6\]/);
  assert.throws(() => detectionPattern('induction', [1]), /at least 2 token ids, got 1/);
  assert.throws(() => detectionPattern('copy', ids), /expected one of previousToken, duplicateToken, induction/);
  assert.throws(() => mulScore([1], [1, 0], 1), /pattern of 1 values, got 2/);
});

test('scoreText by hand: a text of its own ids, column 0 its first token, and the cells each pattern has', () => {
  // 5 1 2 3 1 2: no BOS added; the text's first token (5) is column 0, left out as BOS is
  const text = [5, 1, 2, 3, 1, 2];
  const n = text.length;
  const data = new Float32Array(2 * n * n);
  // head 0: rows 4 and 5 on the token after the earlier copy (2, 3), the others on column 0
  data.set(oneHot(n, (i) => (i >= 4 ? i - 2 : 0)), 0);
  data.set(uniform(n), n * n);
  const { heads, cells } = scoreText([{ data, shape: [2, n, n] }], text);
  // past column 0: previous (2,1) (3,2) (4,3) (5,4); duplicate (4,1) (5,2); induction (4,2) (5,3)
  assert.deepEqual(cells, { previousToken: 4, duplicateToken: 2, induction: 2 });
  assert.deepEqual(heads.map((h) => [h.layer, h.head]), [[0, 0], [0, 1]]);
  // head 0: 2 of its 2 past column 0 on induction cells
  assert.deepEqual({ ...heads[0] }, { layer: 0, head: 0, previousToken: 0, duplicateToken: 0, induction: 1 });
  // uniform: row i has 1/(i+1) on each of its i columns past 0
  const all = 1 / 2 + 2 / 3 + 3 / 4 + 4 / 5 + 5 / 6;
  close(heads[1].previousToken, (1 / 3 + 1 / 4 + 1 / 5 + 1 / 6) / all, 1e-7);
  close(heads[1].duplicateToken, (1 / 5 + 1 / 6) / all, 1e-7);
  close(heads[1].induction, (1 / 5 + 1 / 6) / all, 1e-7);
  // a text that repeats no token: no duplicate or induction cell, those scores 0
  const plain = scoreText([{ data: uniform(4), shape: [1, 4, 4] }], [7, 8, 9, 10]);
  assert.deepEqual(plain.cells, { previousToken: 2, duplicateToken: 0, induction: 0 });
  assert.equal(plain.heads[0].duplicateToken, 0);
  assert.equal(plain.heads[0].induction, 0);
  close(plain.heads[0].previousToken, (1 / 3 + 1 / 4) / (1 / 2 + 2 / 3 + 3 / 4));
  // all attention on column 0: no share to take, NaN (the page shows a dash)
  assert.ok(Number.isNaN(scoreText([{ data: oneHot(3, () => 0), shape: [1, 3, 3] }], [1, 2, 1]).heads[0].induction));
  assert.throws(() => scoreText([{ data, shape: [2, n, n] }], [5]), /at least 2 token ids, got 1/);
  assert.throws(() => scoreText([{ data, shape: [2, n, n] }], [5, 1, 2, 1]), /expected weights \(H, 4, 4\), got shape \[2,6,6\]/);
});

test('repeatedTokens: BOS, r, r; seeded; the control shuffles the same tokens', () => {
  const ordinary = Array.from({ length: 300 }, (_, i) => i);
  const a = repeatedTokens({ ordinary, bos: 500, length: 50, count: 10, seed: 3 });
  const b = repeatedTokens({ ordinary, bos: 500, length: 50, count: 10, seed: 3 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, repeatedTokens({ ordinary, bos: 500, length: 50, count: 10, seed: 4 }));
  assert.equal(a.sequences.length, 10);
  for (const [k, s] of a.sequences.entries()) {
    assert.equal(s.length, 101);
    assert.equal(s[0], 500);
    assert.deepEqual(s.slice(1, 51), s.slice(51));
    assert.equal(new Set(s.slice(1, 51)).size, 50);
    const c = a.controls[k];
    assert.equal(c[0], 500);
    assert.deepEqual([...c.slice(1)].sort((x, y) => x - y), [...s.slice(1)].sort((x, y) => x - y));
    for (let i = 1; i <= 50; ++i) assert.notEqual(c[50 + i], c[i], 'a control token stands where the repeat put it');
  }
  assert.throws(() => repeatedTokens({ ordinary: [1, 2], bos: 0, length: 3 }), /need as many ordinary tokens; the vocabulary has 2/);
  assert.throws(() => repeatedTokens({ ordinary, bos: 'x' }), /expected 'bos' as a token id, got string x/);
});

test('detectHeads labels a head only above the threshold and above its control; detectHeadsAsync gives the same', async () => {
  const ordinary = Array.from({ length: 40 }, (_, i) => i);
  const { sequences, controls } = repeatedTokens({ ordinary, bos: 99, length: 5, count: 3, seed: 1 });
  const L = 11;
  // head 0: true induction (looks up the earlier copy of its token); head 1: a fixed offset back
  // (i - 4), which is the induction target on the sequences and on the controls alike;
  // head 2: uniform
  const weightsOf = (s) => {
    const data = new Float32Array(3 * L * L);
    data.set(oneHot(L, (i) => {
      const j = s.indexOf(s[i]);
      return j < i && j + 1 < i ? j + 1 : 0;
    }), 0);
    data.set(oneHot(L, (i) => (i >= 6 ? i - 4 : 0)), L * L);
    data.set(uniform(L), 2 * L * L);
    return [{ data, shape: [3, L, L] }];
  };
  const heads = detectHeads(weightsOf, sequences, controls);
  assert.equal(heads.length, 3);
  assert.equal(heads[0].induction, 1);
  assert.ok(heads[0].control.induction < 0.5, `control ${heads[0].control.induction}`);
  assert.equal(heads[0].label, 'induction');
  assert.equal(heads[1].induction, 1);
  assert.equal(heads[1].control.induction, 1);
  assert.equal(heads[1].label, null, 'a fixed offset does as well on the control: not named');
  assert.ok(heads[2].induction < DETECTOR_THRESHOLD);
  assert.equal(heads[2].label, null);
  assert.throws(() => detectHeads(weightsOf, sequences, controls.slice(1)), /one control per sequence \(3\)/);
  const progress = [];
  const awaited = await detectHeadsAsync(async (ids) => weightsOf(ids), sequences, controls, { onProgress: (p) => progress.push(`${p.done}/${p.total}`) });
  assert.deepEqual(awaited, heads);
  assert.deepEqual(progress, ['1/6', '2/6', '3/6', '4/6', '5/6', '6/6']);
  await assert.rejects(detectHeadsAsync(async (ids) => weightsOf(ids), sequences, controls.slice(1)), /one control per sequence \(3\)/);
});

function cli(script, args, input) {
  const r = spawnSync(process.execPath, [`scripts/commands/${script}.js`, '--no-build', ...args], { cwd: root, input, encoding: 'utf8', maxBuffer: 1 << 28 });
  return r;
}

/**
 * `npm run heads -- --json` on a model, and every head's scores worked out here from the weights
 * `npm run model -- --json --ids` gives for the same sequences and controls: equal to 1e-6.
 * Returns what `npm run heads` printed.
 */
function headsAgreeWithWeights(model, args) {
  const r = cli('heads', ['--json', '--model', model, ...args]);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  const m = cli('model', ['--json', '--ids', '--model', model], [...out.sequences, ...out.controls].map((s) => JSON.stringify(s)).join('\n'));
  assert.equal(m.status, 0, m.stderr);
  const runs = m.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(runs[0].ids, out.sequences[0], 'ids are used as they are');
  const n = out.sequences.length;
  for (const h of out.heads) {
    const sums = { previousToken: 0, duplicateToken: 0, induction: 0 };
    const controlSums = { previousToken: 0, duplicateToken: 0, induction: 0 };
    for (let k = 0; k < 2 * n; ++k) {
      const s = out.sequences[k % n];
      const a = runs[k].layers[h.layer].weights[h.head];
      let all = 0; let prev = 0; let dup = 0; let ind = 0;
      for (let i = 0; i < s.length; ++i) {
        for (let j = 1; j <= i; ++j) {
          all += a[i][j];
          if (j === i - 1) prev += a[i][j];
          if (j < i && s[j] === s[i]) dup += a[i][j];
          if (s[j - 1] === s[i]) ind += a[i][j];
        }
      }
      const into = k < n ? sums : controlSums;
      into.previousToken += prev / all; into.duplicateToken += dup / all; into.induction += ind / all;
    }
    for (const name of Object.keys(sums)) {
      close(h[name], sums[name] / n, 1e-6);
      close(h.control[name], controlSums[name] / n, 1e-6);
    }
  }
  return out;
}

test('npm run heads agrees with npm run model -- --ids weights scored here', () => {
  const out = headsAgreeWithWeights('tests/golden/models/gpt2-tied', ['--seed', '7', '--count', '3']);
  assert.equal(out.sequences.length, 3);
});

test('npm run model -- --ids: bad lines say what was expected and what came', () => {
  const m = cli('model', ['--json', '--ids', '--model', 'tests/golden/models/gpt2-tied'], '[376,1,2]\n[1,"a"]\nnope\n{"a":1}\n');
  assert.equal(m.status, 1);
  const lines = m.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(lines[0].ids, [376, 1, 2]);
  assert.match(lines[1].error.message, /expected token ids \(integers >= 0\), got "a" at index 1/);
  assert.match(lines[2].error.message, /expected a JSON array of token ids, got "nope" \(not JSON\)/);
  assert.match(lines[3].error.message, /expected a JSON array of token ids, got object/);
});

test('npm run heads refuses a masked model', () => {
  const r = cli('heads', ['--json', '--model', 'tests/golden/models/bert-mlm']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /need a causal language model.*BERT/);
});

test('the model trained on repeated tokens names its induction head in layer 1 (and the previous-token head it reads in layer 0); its random twin names nothing', () => {
  // the default sequences (seed 0, 10 of N = 50), each head checked against its weights
  const trained = headsAgreeWithWeights('tests/golden/models/gpt2-induction', []);
  assert.equal(trained.sequences.length, 10);
  assert.equal(trained.sequences[0].length, 101);
  const config = JSON.parse(readFileSync(path.join(root, 'tests/golden/models/gpt2-induction/config.json'), 'utf8'));
  assert.equal(trained.heads.length, config.n_layer * config.n_head);
  const show = (heads) => heads.map((h) => `${h.layer}.${h.head} prev ${h.previousToken.toFixed(3)} dup ${h.duplicateToken.toFixed(3)} ind ${h.induction.toFixed(3)} (ctrl ind ${h.control.induction.toFixed(3)}) ${h.label ?? '-'}`).join('\n');
  console.log(`gpt2-induction:\n${show(trained.heads)}`);
  const induction = trained.heads.filter((h) => h.label === 'induction');
  assert.ok(induction.length >= 1, 'an induction head is named');
  for (const h of induction) {
    assert.equal(h.layer, 1, 'an induction head reads what a layer-0 head wrote');
    assert.ok(h.induction >= DETECTOR_THRESHOLD && h.induction > h.control.induction);
  }
  // where it has a previous-token head, that head is in layer 0, where an induction head reads it
  for (const h of trained.heads.filter((e) => e.label === 'previousToken')) assert.equal(h.layer, 0);
  assert.deepEqual(trained.heads.filter((h) => h.label && h.label !== 'induction' && h.label !== 'previousToken'), []);

  const random = headsAgreeWithWeights('tests/golden/models/gpt2-induction-random', []);
  const twin = JSON.parse(readFileSync(path.join(root, 'tests/golden/models/gpt2-induction-random/config.json'), 'utf8'));
  assert.deepEqual(twin, config, 'the same shape');
  assert.deepEqual(random.sequences, trained.sequences, 'the same sequences');
  console.log(`gpt2-induction-random:\n${show(random.heads)}`);
  assert.deepEqual(random.heads.filter((h) => h.label), []);
});

test('the explorer asked to detect heads before it shows anything says so, and stays usable', async () => {
  const { Explorer } = await import('../../web/explorer/controller.js');
  const explorer = new Explorer();
  await explorer.detectHeads();
  assert.equal(explorer.errors.detectors, 'Open a model first: the head detectors run on the model shown.');
  assert.equal(explorer.detecting, null);
  assert.equal(explorer.busy, 0);
});
