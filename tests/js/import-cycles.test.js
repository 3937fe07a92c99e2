// No module of web/ imports itself through others: the graph of its static and dynamic imports
// (relative specifiers, as written) has no cycle. Generated and vendored code (web/lib/wasm,
// web/vendor, the embed's bundle web/lib/embed*.js) is left out.
//
//   node --test tests/js/import-cycles.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const web = path.join(root, 'web');
const SKIPPED = new Set([path.join(web, 'lib', 'wasm'), path.join(web, 'vendor')]);

function modules(dir, found = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED.has(full)) modules(full, found);
    } else if (/\.m?js$/.test(entry.name) && !(dir === path.join(web, 'lib') && /^embed[.-]/.test(entry.name))) {
      found.push(full);
    }
  }
  return found.sort();
}

// import … from '…', export … from '…', import '…', import('…')
const IMPORT = /(?:\bimport\s*(?:[\w*{}\s,]+?\s*from\s*)?|\bexport\s*[\w*{}\s,]+?\s*from\s*|\bimport\s*\(\s*)(['"])([^'"\n]+)\1/g;

/** The relative modules a source imports, resolved against its file. */
export function importsOf(file, source) {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"\\])\/\/.*$/gm, '$1');
  const found = new Set();
  for (const match of code.matchAll(IMPORT)) {
    const specifier = match[2];
    if (specifier.startsWith('./') || specifier.startsWith('../')) found.add(path.resolve(path.dirname(file), specifier));
  }
  return [...found];
}

/** Every cycle of a graph (Map: node -> nodes), each once, as a list of nodes. */
export function cycles(graph) {
  const found = [];
  const state = new Map();  // node -> 'open' | 'done'
  const stack = [];
  const visit = (node) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

test('the import scanner reads static, re-export and dynamic imports, not comments', () => {
  const source = [
    "import { a } from './a.js';",
    "import b, { c } from '../b.js';",
    "export { d } from './d.js';",
    "import './side.js';",
    "const e = await import('./e.js');",
    "// import { f } from './f.js';",
    "import x from 'node:fs';",
  ].join('\n');
  const dir = path.join(web, 'lib');
  assert.deepEqual(importsOf(path.join(dir, 'm.js'), source).map((f) => path.relative(web, f)),
    ['lib/a.js', 'b.js', 'lib/d.js', 'lib/side.js', 'lib/e.js']);
  assert.deepEqual(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])), [['a', 'b', 'c', 'a']]);
});

test('no import cycle in web/', () => {
  const graph = new Map();
  for (const file of modules(web)) graph.set(file, importsOf(file, fs.readFileSync(file, 'utf8')));
  const edges = [...graph.values()].reduce((n, next) => n + next.length, 0);
  console.log(`  ${graph.size} modules, ${edges} imports`);
  assert.ok(graph.size > 20 && edges > 20, 'expected the modules of web/ and their imports');
  const found = cycles(graph).map((cycle) => cycle.map((f) => path.relative(root, f)).join(' → '));
  assert.deepEqual(found, [], 'import cycles');
});
