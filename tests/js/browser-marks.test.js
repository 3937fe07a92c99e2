// Every browser test says where it runs and why (tests/browser/marks.js), and
// tests/browser/README.md lists them as the marks say; the engines' file lists follow the marks.
//
//   node --test tests/js/browser-marks.test.js
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { browserTests, filesFor, markProblem, marksOf, readmeWithTable, runsIn } from '../browser/marks.js';

const readmePath = fileURLToPath(new URL('../browser/README.md', import.meta.url));

test('every browser test is marked with where it runs and a reason from the list', () => {
  const files = browserTests();
  assert.ok(files.length > 10, `browser test files found: ${files.length}`);
  let count = 0;
  for (const { file, marks, unmarked } of files) {
    assert.deepEqual(unmarked, [], `${file}: tests without { engines, why }`);
    for (const mark of marks) {
      assert.equal(markProblem(mark), null, `${file}: "${mark.name}"`);
      count += 1;
    }
  }
  console.log(`  ${count} browser tests in ${files.length} files: ${files.flatMap((f) => f.marks).filter((m) => m.engines === 'all').length} in every engine`);
});

test('tests/browser/README.md lists every test as marked (node tests/browser/marks.js --readme)', () => {
  const readme = readFileSync(readmePath, 'utf8');
  assert.equal(readme, readmeWithTable(readme), 'the README\'s list is out of date: run node tests/browser/marks.js --readme');
});

test('the marks are read as written, and each engine gets the files it has tests for', () => {
  const { marks, unmarked } = marksOf(`
    test('one', { engines: 'all', why: 'layout' }, () => {});
    test(\`two \${x}\`, { engines: 'chromium', why: 'computation', timeout: 5 }, () => {});
    test('it\\'s three', async () => {});
    node.test('not a test call', {});`);
  assert.deepEqual(marks, [{ name: 'one', engines: 'all', why: 'layout' }, { name: 'two ${x}', engines: 'chromium', why: 'computation' }]);
  assert.deepEqual(unmarked, ['it\'s three']);
  assert.match(markProblem({ engines: 'all', why: 'computation' }), /not a reason to run in every engine/);
  assert.match(markProblem({ engines: 'firefox', why: 'layout' }), /'all' or 'chromium'/);
  assert.ok(runsIn({ engines: 'chromium' }, 'chromium', 'all'));
  assert.ok(!runsIn({ engines: 'chromium' }, 'chromium', 'engine'));
  assert.ok(!runsIn({ engines: 'chromium' }, 'webkit', 'all'));
  assert.ok(runsIn({ engines: 'chromium' }, 'webkit', 'every'));
  assert.ok(!runsIn({ engines: 'chromium' }, 'firefox', 'engine'));
  const all = browserTests();
  for (const engine of ['firefox', 'webkit']) {
    const expected = all.filter((f) => f.marks.some((m) => m.engines === 'all')).map((f) => f.file);
    assert.deepEqual(filesFor(engine), expected, engine);
  }
  assert.deepEqual(filesFor('chromium'), all.map((f) => f.file));
});
