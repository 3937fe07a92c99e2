// loadOnce (web/lib/load-once.js), the one memoised load of web/: a key's load runs once while
// it succeeds or is under way, and is tried again after it failed.
//
//   node --test tests/js/load-once.test.js

import test from 'node:test';
import assert from 'node:assert/strict';
import { loadOnce } from '../../web/lib/load-once.js';

test('one load per key, shared by every call, the arguments of the first one', async () => {
  const calls = [];
  const load = loadOnce(async (key, extra) => { calls.push([key, extra]); return `${key}:${extra}`; });
  const a = load('a', 1);
  assert.equal(load('a', 2), a, 'a call while the load is under way gets its promise');
  assert.equal(await a, 'a:1');
  assert.equal(await load('a', 3), 'a:1');
  assert.equal(await load('b', 4), 'b:4');
  assert.deepEqual(calls, [['a', 1], ['b', 4]]);
});

test('a failed load is forgotten: the next call loads again', async () => {
  let attempts = 0;
  const load = loadOnce(async () => {
    attempts += 1;
    if (attempts === 1) throw new Error('network down');
    return 'loaded';
  });
  const first = load();
  assert.equal(load(), first, 'calls during the failing load share it');
  await assert.rejects(first, /network down/);
  assert.equal(await load(), 'loaded');
  assert.equal(await load(), 'loaded');
  assert.equal(attempts, 2);
});

test('a load that throws before it is asynchronous rejects, and is retried too', async () => {
  let attempts = 0;
  const load = loadOnce(() => {
    attempts += 1;
    if (attempts === 1) throw new TypeError('bad options');
    return 7;
  });
  await assert.rejects(load(), TypeError);
  assert.equal(await load(), 7);
});

test('weak keys: objects as keys, one load each', async () => {
  const load = loadOnce(async (key) => ({ of: key }), { weak: true });
  const k1 = {};
  const k2 = {};
  assert.equal(load(k1), load(k1));
  assert.notEqual(load(k1), load(k2));
  assert.equal((await load(k2)).of, k2);
});
