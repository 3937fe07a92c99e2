// The lesson's sections: a trap of the WebAssembly engine is computed again once and reported;
// a trap that comes again, or any other error, is the section's failure.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSection } from '../../web/app/lesson/build-section.js';

// (module (func (export "trap") unreachable)): calling it raises a real WebAssembly.RuntimeError
const TRAP = new WebAssembly.Instance(new WebAssembly.Module(Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
  0x03, 0x02, 0x01, 0x00, // function 0 of type 0
  0x07, 0x08, 0x01, 0x04, 0x74, 0x72, 0x61, 0x70, 0x00, 0x00, // export "trap"
  0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b, // body: unreachable, end
]))).exports.trap;

function quietly(fn) {
  const warn = console.warn;
  const warnings = [];
  console.warn = (...args) => warnings.push(args.map(String).join(' '));
  try {
    return { value: fn(), warnings };
  } catch (error) {
    return { error, warnings };
  } finally {
    console.warn = warn;
  }
}

test('a trap that does not come again: the section is computed again, with a warning naming it', () => {
  let calls = 0;
  const retried = [];
  const { value, warnings } = quietly(() => buildSection('Common mistakes', () => {
    calls += 1;
    if (calls === 1) TRAP();
    return 'section';
  }, retried));
  assert.equal(value, 'section');
  assert.equal(calls, 2);
  assert.equal(retried.length, 1);
  assert.match(retried[0], /^Common mistakes: /);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /lesson section "Common mistakes": the WebAssembly engine trapped/);
});

test('a trap that comes again is the section\'s failure', () => {
  let calls = 0;
  const { error } = quietly(() => buildSection('Masks', () => { calls += 1; TRAP(); }, []));
  assert.ok(error instanceof WebAssembly.RuntimeError);
  assert.equal(calls, 2);
});

test('any other error is not computed again', () => {
  let calls = 0;
  const retried = [];
  const { error, warnings } = quietly(() => buildSection('The code', () => { calls += 1; throw new TypeError('bad'); }, retried));
  assert.ok(error instanceof TypeError);
  assert.equal(calls, 1);
  assert.deepEqual(retried, []);
  assert.deepEqual(warnings, []);
});
