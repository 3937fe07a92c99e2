// scripts/test/browser-crash.js: a browser-test file is run once more only when its failures
// include a crash of the browser's page process, and only when every failing file's do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crashedFiles } from '../../scripts/test/browser-crash.js';

const root = '/repo';
const failure = (n, file, error, name = 'WebDriverError', url = true) => [
  `# Subtest: test ${n}`,
  `not ok ${n} - test ${n}`,
  '  ---',
  '  duration_ms: 20.3',
  `  location: '${url ? 'file://' : ''}${root}/tests/browser/${file}:515:1'`,
  "  failureType: 'testCodeFailure'",
  `  error: '${error}'`,
  `  name: '${name}'`,
  '  ...',
].join('\n');
const pass = (n, file) => `# Subtest: test ${n}\nok ${n} - test ${n}\n  ---\n  duration_ms: 5\n  ...\n# [webkit] a note from ${file}`;
const CRASHED = 'session deleted because of page crash or hang.';

test('a file whose failures follow a page crash is named, once', () => {
  const tap = [
    pass(1, 'explorer.test.js'),
    failure(2, 'explorer.test.js', 'Could not parse script result'),
    failure(3, 'explorer.test.js', CRASHED, 'NoSuchSessionError'),
    pass(4, 'golden.test.js'),
  ].join('\n');
  assert.deepEqual(crashedFiles(tap, root), ['tests/browser/explorer.test.js']);
});

test('the location as Node 20 writes it, a path', () => {
  assert.deepEqual(crashedFiles(failure(1, 'a.test.js', CRASHED, 'NoSuchSessionError', false), root), ['tests/browser/a.test.js']);
});

test('Chromium crash messages count too', () => {
  assert.deepEqual(crashedFiles(failure(1, 'a.test.js', 'Target crashed'), root), ['tests/browser/a.test.js']);
  assert.deepEqual(crashedFiles(failure(1, 'b.test.js', 'Page crashed!'), root), ['tests/browser/b.test.js']);
});

test('nothing is re-run for a failure that is not a crash, or when any failing file has no crash', () => {
  assert.deepEqual(crashedFiles(pass(1, 'a.test.js'), root), []);
  assert.deepEqual(crashedFiles(failure(1, 'a.test.js', 'Expected values to be strictly equal'), root), []);
  const mixed = [failure(1, 'a.test.js', CRASHED), failure(2, 'b.test.js', 'Expected 3 to equal 4')].join('\n');
  assert.deepEqual(crashedFiles(mixed, root), []);
});

test('a failure that names no file stops any re-run', () => {
  const unplaced = `not ok 9 - tests/browser/c.test.js\n  ---\n  error: 'test failed'\n  ...\n`;
  assert.deepEqual(crashedFiles([failure(1, 'a.test.js', CRASHED), unplaced].join('\n'), root), []);
});
