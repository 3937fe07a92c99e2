// No C++ function in cpp/ (core, kernels, training, bindings) is longer than 150 lines: a
// driver reads as a list of steps, each a function of its own. Lines are counted as clang-tidy's
// readability-function-size counts them, from the line of the opening brace to the line of the
// closing one; a lambda counts toward the function it is written in.
//
//   node --test tests/js/cpp-function-size.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINES = 150;

function sourceFiles(dir, found = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(full, found);
    else if (/\.(cpp|cc|h|hpp)$/.test(entry.name)) found.push(full);
  }
  return found.sort();
}

/** The source with comments, string and character literals and preprocessor lines blanked
 * (newlines kept, so that offsets keep their line numbers). */
export function blankNonCode(source) {
  let out = '';
  let i = 0;
  const n = source.length;
  let lineStart = true;
  while (i < n) {
    const c = source[i];
    const next = source[i + 1];
    if (lineStart && /[ \t]/.test(c)) { out += c; i += 1; continue; }
    if (lineStart && c === '#') {  // a directive, with its continuation lines
      while (i < n && source[i] !== '\n') {
        if (source[i] === '\\' && source[i + 1] === '\n') { out += ' \n'; i += 2; continue; }
        out += ' ';
        i += 1;
      }
      continue;
    }
    lineStart = false;
    if (c === '/' && next === '/') {
      while (i < n && source[i] !== '\n') { out += ' '; i += 1; }
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === 'R' && next === '"') {  // raw string R"delim( ... )delim"
      const open = source.indexOf('(', i);
      const delimiter = source.slice(i + 2, open);
      const end = source.indexOf(`)${delimiter}"`, open);
      const stop = end < 0 ? n : end + delimiter.length + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '"' || (c === '\'' && !/[0-9a-fA-F]/.test(source[i - 1] ?? ''))) {  // 1'000 is a digit separator
      let j = i + 1;
      while (j < n && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      out += ' '.repeat(j + 1 - i);
      i = j + 1;
    } else {
      out += c;
      if (c === '\n') lineStart = true;
      i += 1;
    }
  }
  return out;
}

const SCOPE_HEAD = /^\s*(?:template\s*<[^{]*>\s*)?(?:namespace|class|struct|union|enum)\b|^\s*extern\s*$/;

/** Every function body of a C++ source: { name, line, lines }. */
export function functionBodies(source) {
  const code = blankNonCode(source);
  const lineOf = [];
  let line = 1;
  for (let i = 0; i < code.length; i += 1) {
    lineOf.push(line);
    if (code[i] === '\n') line += 1;
  }
  const bodies = [];
  const stack = [];  // { kind: 'scope' | 'function' | 'block', at, name }
  let headStart = 0;
  for (let i = 0; i < code.length; i += 1) {
    const c = code[i];
    if (c === ';') {
      headStart = i + 1;
    } else if (c === '{') {
      const head = code.slice(headStart, i);
      const inFunction = stack.some((s) => s.kind === 'function' || s.kind === 'block');
      // A member's brace initialiser in a constructor's list, `: w_{v} {`, continues the head.
      if (!inFunction && /\)\s*:/.test(head) && /[\w>]\s*$/.test(head)) {
        stack.push({ kind: 'initializer', at: i, name: '' });
        continue;
      }
      let kind = 'block';
      let name = '';
      if (!inFunction) {
        const beforeParen = head.split('(')[0];
        if (SCOPE_HEAD.test(head)) kind = 'scope';
        else if (head.includes('(') && /\)[^()]*$|\)\s*:[\s\S]*$/.test(head) && !/=/.test(beforeParen.replace(/operator\s*\S+/, ''))) {
          kind = 'function';
          name = (beforeParen.trim().split(/\s+/).pop() || '').replace(/^[*&]+/, '');
        }
      }
      stack.push({ kind, at: i, name });
      headStart = i + 1;
    } else if (c === '}') {
      const open = stack.pop();
      if (open && open.kind === 'initializer') continue;
      if (open && open.kind === 'function') {
        bodies.push({ name: open.name, line: lineOf[open.at], lines: lineOf[i] - lineOf[open.at] });
      }
      headStart = i + 1;
    }
  }
  return bodies;
}

test('the function counter finds functions, lambdas inside them, and not classes or initialisers', () => {
  const source = [
    'namespace a {',
    'struct S {',
    '  int f(int x) const {',
    '    auto g = [&](int y) {',
    '      return "}" [0] + y; // }',
    '    };',
    '    return g(x);',
    '  }',
    '  Init init = [] { Init i; return i; }();',
    '};',
    'S::S(int v) : v_(v), w_{v} {',
    '  /* { */',
    '}',
    '}  // namespace a',
    'EMSCRIPTEN_BINDINGS(m) {',
    '  x();',
    '}',
  ].join('\n');
  const found = functionBodies(source).map((b) => `${b.name}:${b.line}:${b.lines}`);
  assert.deepEqual(found, ['f:3:5', 'S::S:11:2', 'EMSCRIPTEN_BINDINGS:15:2']);
});

test(`no C++ function in cpp/ is longer than ${MAX_LINES} lines`, () => {
  const all = [];
  for (const file of sourceFiles(path.join(root, 'cpp'))) {
    for (const body of functionBodies(fs.readFileSync(file, 'utf8'))) {
      all.push({ ...body, file: path.relative(root, file) });
    }
  }
  all.sort((a, b) => b.lines - a.lines);
  assert.ok(all.length > 50, `expected the functions of cpp/, found ${all.length}`);
  console.log(`  ${all.length} functions; the longest:`);
  for (const f of all.slice(0, 5)) console.log(`    ${String(f.lines).padStart(4)} lines  ${f.file}:${f.line}  ${f.name}`);
  const tooLong = all.filter((f) => f.lines > MAX_LINES).map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
  assert.deepEqual(tooLong, [], `functions over ${MAX_LINES} lines`);
});
