// Where each browser test runs, and why. A test says it where it is written:
//
//   test('name', { engines: 'all', why: 'layout' }, async () => { … })
//   test('name', { engines: 'chromium', why: 'computation', timeout: 120_000 }, async () => { … })
//
// (`test` from ./driver.js). What an engine does its own way runs in all three; what only
// exercises our own code on the same WebAssembly runs in Chromium, since the golden cases
// already show, bit for bit, that the three engines compute the same numbers. The rule and the
// list of every test are in tests/browser/README.md, written from these marks by
// `node tests/browser/marks.js --readme` (and checked by tests/js/browser-marks.test.js).
//
// Read statically, from the files' text: scripts/test/test.js picks each engine's files with it
// before any browser starts, and it runs before `npm ci` (Node.js built-ins only).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What can differ between engines: such a test runs in Chromium, Firefox and WebKit. */
export const EVERY_ENGINE = {
  layout: 'drawing, layout and text at each width and pixel ratio',
  accessibility: 'the accessibility tree (axe) and focus',
  input: 'keyboard, pointer and touch events',
  workers: 'Web Workers, threads and SharedArrayBuffer',
  wasm: 'loading and instantiating WebAssembly, the Cache API',
  csp: 'Content-Security-Policy',
  files: 'file pickers and drag and drop',
  downloads: 'downloads',
  golden: 'the golden cases, bit for bit against Node.js',
  'end-to-end': 'one end-to-end pass of a source or a model',
  navigation: 'links, history and the URL',
  network: 'requests across origins, CORS',
  errors: 'the engine\'s console and page errors',
};

/** What only exercises our code on the same WebAssembly: such a test runs in Chromium only. */
export const CHROMIUM_ONLY = {
  computation: 'a computation whose numbers do not depend on the engine (the goldens show the engines agree)',
  faults: 'every fault of a file or an input, read by our own code (one such fault per source runs everywhere)',
  validation: 'our own parsing and validation of text, links and attributes',
  timing: 'a timing of our own code (reported, not a pass mark)',
};

/** The marks of the tests in a file's text: [{ name, engines, why }], and the calls left unmarked. */
export function marksOf(source) {
  const marks = [];
  const unmarked = [];
  // test('…' or `…`, { engines: '…', why: '…'
  const call = /(?<![.\w])test\(\s*(['`])((?:\\.|(?!\1)[\s\S])*?)\1\s*,\s*(\{\s*engines:\s*'(\w+)'\s*,\s*why:\s*'([\w-]+)')?/g;
  for (const m of source.matchAll(call)) {
    const name = m[2].replace(/\\(.)/g, '$1');
    if (m[3]) marks.push({ name, engines: m[4], why: m[5] });
    else unmarked.push(name);
  }
  return { marks, unmarked };
}

/** Why `mark` is wrong, or null. */
export function markProblem({ engines, why }) {
  if (engines === 'all') return why in EVERY_ENGINE ? null : `why '${why}' is not a reason to run in every engine (${Object.keys(EVERY_ENGINE).join(', ')})`;
  if (engines === 'chromium') return why in CHROMIUM_ONLY ? null : `why '${why}' is not a reason to run in Chromium only (${Object.keys(CHROMIUM_ONLY).join(', ')})`;
  return `engines must be 'all' or 'chromium', got '${engines}'`;
}

/**
 * Whether a test so marked runs in `engine` when `set` is run: 'all' (the engine-dependent tests in
 * every engine, the rest in Chromium), 'engine' (the engine-dependent tests only) or 'every'
 * (every test in every engine).
 */
export function runsIn({ engines }, engine, set = 'all') {
  return set === 'every' || engines === 'all' || (engine === 'chromium' && set !== 'engine');
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** Every browser test file (sorted) with its marks. */
export function browserTests(dir = here) {
  return fs.readdirSync(dir).filter((n) => /\.test\.m?js$/.test(n)).sort().map((name) => {
    const { marks, unmarked } = marksOf(fs.readFileSync(path.join(dir, name), 'utf8'));
    return { file: name, marks, unmarked };
  });
}

/** The files with at least one test that runs in `engine` for `set`. */
export function filesFor(engine, set = 'all', dir = here) {
  return browserTests(dir).filter((f) => f.marks.some((m) => runsIn(m, engine, set)) || f.unmarked.length > 0).map((f) => f.file);
}

const BEGIN = '<!-- tests: written by node tests/browser/marks.js --readme -->';
const END = '<!-- end of tests -->';

/** The README's list of tests, from the marks. */
export function testsTable(dir = here) {
  const lines = [BEGIN, '', '| file | test | runs in | why |', '|---|---|---|---|'];
  for (const { file, marks } of browserTests(dir)) {
    for (const m of marks) {
      const where = m.engines === 'all' ? 'all three' : 'Chromium';
      lines.push(`| ${file} | ${m.name.replace(/\|/g, '\\|')} | ${where} | ${m.why} |`);
    }
  }
  lines.push('', END);
  return lines.join('\n');
}

/** The README's text with its list of tests made anew. */
export function readmeWithTable(readme, dir = here) {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`tests/browser/README.md has no "${BEGIN}" … "${END}" block`);
  return readme.slice(0, start) + testsTable(dir) + readme.slice(end + END.length);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const readmePath = path.join(here, 'README.md');
  if (process.argv.includes('--readme')) {
    fs.writeFileSync(readmePath, readmeWithTable(fs.readFileSync(readmePath, 'utf8')));
    console.log(`wrote the list of tests into ${path.relative(process.cwd(), readmePath)}`);
  } else {
    for (const { file, marks, unmarked } of browserTests()) {
      for (const m of marks) console.log(`${m.engines.padEnd(8)} ${m.why.padEnd(12)} ${file}: ${m.name}`);
      for (const name of unmarked) console.log(`UNMARKED              ${file}: ${name}`);
    }
  }
}
