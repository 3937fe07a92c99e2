// `npm run fuzz -- SECONDS`: the libFuzzer harness (tests/fuzz/fuzz_attention.cpp, built with
// -fsanitize=fuzzer,address,undefined in build/asan) for SECONDS (default 600).
//
// First every input in tests/fuzz/regressions/ (inputs that once found a bug) is run once;
// then the fuzzer starts from the committed corpus (tests/fuzz/corpus, read only) and keeps
// what it learns in build/fuzz/corpus. A finding is written to build/fuzz/ (crash-*, leak-*,
// timeout-*, oom-*) and the exit code is 1. The last line is a summary:
//   fuzz: N executions in S s (E exec/s), 0 findings; corpus C inputs
// and the figures are kept in build/fuzz/last-run.json.
//
//   node scripts/commands/fuzz.js [SECONDS] [--no-build] [--merge-corpus]
//   --no-build       use build/asan/mha_fuzz as it is (npm test builds it first; else the asan preset is built)
//   --merge-corpus   afterwards, minimise what was learnt into tests/fuzz/corpus (to commit)
//
// Node.js built-ins only.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, BuildError } from '../build/build.js';
import { ensureSystemPackages, SetupError } from '../build/setup.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FUZZER = path.join(repoRoot, 'build/asan/mha_fuzz');
const COMMITTED_CORPUS = path.join(repoRoot, 'tests/fuzz/corpus');
const REGRESSIONS = path.join(repoRoot, 'tests/fuzz/regressions');
const WORK = path.join(repoRoot, 'build/fuzz');
const LEARNT_CORPUS = path.join(WORK, 'corpus');

const SANITIZER_ENV = {
  ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1:symbolize=1:allocator_may_return_null=0',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
};

function usage(message) {
  console.error(`${message}\nusage: npm run fuzz -- [SECONDS] [--no-build] [--merge-corpus]`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { seconds: 600, build: true, merge: false };
  for (const arg of argv) {
    if (arg === '--no-build') options.build = false;
    else if (arg === '--merge-corpus') options.merge = true;
    else if (/^\d+$/.test(arg) && Number(arg) > 0) options.seconds = Number(arg);
    else usage(`unknown argument '${arg}' (SECONDS must be a positive whole number)`);
  }
  return options;
}

function files(dir) {
  try {
    return fs.readdirSync(dir).filter((name) => fs.statSync(path.join(dir, name)).isFile()).map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

function runRegressions() {
  const inputs = files(REGRESSIONS).sort();
  if (inputs.length === 0) {
    console.log('fuzz: no regression inputs in tests/fuzz/regressions (expected the committed ones)');
    return false;
  }
  const result = spawnSync(FUZZER, ['-runs=1', ...inputs], {
    cwd: repoRoot, env: { ...process.env, ...SANITIZER_ENV }, encoding: 'utf8', maxBuffer: 1 << 26,
  });
  if (result.status !== 0) {
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    console.log(`fuzz: a regression input failed again (tests/fuzz/regressions, ${inputs.length} inputs)`);
    return false;
  }
  console.log(`fuzz: ${inputs.length} regression inputs pass (tests/fuzz/regressions)`);
  return true;
}

/** Runs the fuzzer, echoing its status lines sparsely and collecting its final stats. */
function fuzz(seconds) {
  fs.mkdirSync(LEARNT_CORPUS, { recursive: true });
  const args = [
    LEARNT_CORPUS, COMMITTED_CORPUS,
    `-max_total_time=${seconds}`,
    '-max_len=4096',
    '-timeout=10',
    '-rss_limit_mb=2048',
    '-print_final_stats=1',
    `-artifact_prefix=${WORK}${path.sep}`,
  ];
  console.log(`$ build/asan/mha_fuzz ${args.map((a) => path.relative(repoRoot, a) || a).join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(FUZZER, args, { cwd: repoRoot, env: { ...process.env, ...SANITIZER_ENV } });
    const stats = {};
    let log = '';
    let lastEcho = 0;
    const onLine = (line) => {
      const stat = /^stat::(\w+):\s+(\d+)/.exec(line);
      if (stat) stats[stat[1]] = Number(stat[2]);
      // libFuzzer's own progress lines: one every ~10 s is enough in a test log.
      if (/^#\d+\s+(pulse|NEW|REDUCE|INITED|DONE)/.test(line)) {
        if (Date.now() - lastEcho > 10_000 || /INITED|DONE/.test(line)) {
          console.log(`  ${line}`);
          lastEcho = Date.now();
        }
      } else if (!/^(INFO|\s*NEW_FUNC|stat::|"|###)/.test(line) && line.trim() !== '') {
        console.log(`  ${line}`);
      }
    };
    let pending = '';
    const onData = (chunk) => {
      const text = pending + chunk.toString();
      log += chunk.toString();
      const lines = text.split('\n');
      pending = lines.pop();
      lines.forEach(onLine);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code, signal) => {
      if (pending) onLine(pending);
      resolve({ code, signal, stats, log });
    });
  });
}

function findings(since) {
  return files(WORK).filter((file) => /^(crash|leak|timeout|oom|slow-unit)-/.test(path.basename(file)) &&
    fs.statSync(file).mtimeMs >= since);
}

function mergeCorpus() {
  // Minimise the committed corpus plus what was learnt into a fresh directory, then replace.
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-fuzz-corpus-'));
  const result = spawnSync(FUZZER, ['-merge=1', '-max_len=4096', fresh, COMMITTED_CORPUS, LEARNT_CORPUS], {
    cwd: repoRoot, env: { ...process.env, ...SANITIZER_ENV }, encoding: 'utf8', maxBuffer: 1 << 26,
  });
  if (result.status !== 0) {
    process.stderr.write(result.stderr);
    throw new Error('corpus merge failed');
  }
  fs.rmSync(COMMITTED_CORPUS, { recursive: true, force: true });
  fs.mkdirSync(COMMITTED_CORPUS, { recursive: true });
  for (const file of files(fresh)) fs.copyFileSync(file, path.join(COMMITTED_CORPUS, path.basename(file)));
  fs.rmSync(fresh, { recursive: true, force: true });
  console.log(`fuzz: tests/fuzz/corpus now holds ${files(COMMITTED_CORPUS).length} inputs`);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.build) {
    try {
      ensureSystemPackages('fuzz');
      build(['asan']);
    } catch (error) {
      if (!(error instanceof BuildError || error instanceof SetupError)) throw error;
      console.log(`fuzz: ${error.message}`);
      return 1;
    }
  }
  if (!fs.existsSync(FUZZER)) {
    console.log('fuzz: build/asan/mha_fuzz is missing: run `npm run build -- asan` (needs clang and libclang-rt-14-dev)');
    return 1;
  }
  if (!runRegressions()) return 1;

  const started = Date.now();
  const { code, signal, stats, log } = await fuzz(options.seconds);
  const seconds = (Date.now() - started) / 1000;
  const found = findings(started - 1000);
  const executions = stats.number_of_executed_units ?? 0;
  const summary = {
    date: new Date().toISOString(),
    requestedSeconds: options.seconds,
    seconds: Number(seconds.toFixed(1)),
    executions,
    execPerSecond: seconds > 0 ? Math.round(executions / seconds) : 0,
    newUnits: stats.new_units_added ?? 0,
    peakRssMb: stats.peak_rss_mb ?? 0,
    corpusInputs: files(LEARNT_CORPUS).length,
    committedCorpusInputs: files(COMMITTED_CORPUS).length,
    findings: found.map((f) => path.relative(repoRoot, f)),
    exitCode: code,
    signal,
  };
  fs.writeFileSync(path.join(WORK, 'last-run.json'), `${JSON.stringify(summary, null, 2)}\n`);

  const failed = code !== 0 || found.length > 0 || !/Done \d+ runs/.test(log);
  if (failed) {
    for (const f of found) console.log(`fuzz: finding written to ${path.relative(repoRoot, f)} (reproduce: build/asan/mha_fuzz ${path.relative(repoRoot, f)})`);
    if (found.length === 0) console.log(`fuzz: the fuzzer exited with ${signal ?? code} and no summary`);
  }
  console.log(`fuzz: ${executions} executions in ${summary.seconds} s (${summary.execPerSecond} exec/s), ` +
    `${found.length} findings; corpus ${summary.corpusInputs} inputs`);
  if (!failed && options.merge) mergeCorpus();
  return failed ? 1 : 0;
}

process.exitCode = await main();
