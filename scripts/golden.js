// npm run golden -- [DIR|FILE ...] [--native-only | --wasm-only] [--no-build]
//
// Runs every golden case file (default: tests/golden/cases) through the native build
// (build/native/mha_golden) and through the WebAssembly module in Node.js
// (tests/golden/golden_wasm.js, by way of web/lib/index.js). Prints one line per case and engine
// with the largest errors beside the tolerances, closes with "N passed, N failed" (one count per
// case and engine) and exits non-zero if any failed, or if there was nothing to run.
//
// It builds nothing itself: when scripts/build.js is there it asks it to bring build/native and
// web/lib/wasm up to date first (unless --no-build).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { collectCaseFiles, formatResult } from '../tests/golden/golden_common.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NATIVE_RUNNER = path.join(repoRoot, 'build/native/mha_golden');
const WASM_RUNNER = path.join(repoRoot, 'tests/golden/golden_wasm.js');
const WASM_FILES = {
  wasm: ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm'],
  'wasm-threads': ['web/lib/wasm/threads/mha_core_threads.js', 'web/lib/wasm/threads/mha_core_threads.wasm'],
};
const USAGE = 'usage: npm run golden -- [DIR|FILE ...] [--native-only | --wasm-only] [--no-build]';

/** Asks scripts/build.js (when it is there) to bring the engines up to date; an error message or null. */
async function ensureBuilt(engines) {
  engines = [...new Set(engines.map((e) => (e === 'wasm-threads' ? 'wasm' : e)))];
  const buildScript = path.join(repoRoot, 'scripts/build.js');
  if (!fs.existsSync(buildScript)) return null;
  const { build, BuildError } = await import(pathToFileURL(buildScript).href);
  try {
    build({ targets: engines });
  } catch (error) {
    if (BuildError && error instanceof BuildError) return error.message;
    throw error;
  }
  return null;
}

/** Why an engine cannot run here, with what to do about it; null when it can. */
function missingEngine(engine) {
  if (engine === 'native') {
    if (fs.existsSync(NATIVE_RUNNER)) return null;
    return 'build/native/mha_golden is missing: build it with `node scripts/build.js --native` ' +
      '(or `cmake -S . -B build/native && cmake --build build/native -j2`); it needs the Debian ' +
      'package nlohmann-json3-dev (apt-get install nlohmann-json3-dev)';
  }
  const absent = WASM_FILES[engine].map((f) => path.join(repoRoot, f)).filter((f) => !fs.existsSync(f));
  if (absent.length === 0) return null;
  return `${absent.map((f) => path.relative(repoRoot, f)).join(' and ')} missing: build the ` +
    'WebAssembly module with `node scripts/build.js --wasm`';
}

/**
 * Runs one engine over the files (its --json mode), and returns a record per file. A crash
 * fails the case it was running; the files after it run again in a fresh process.
 */
function runEngine(engine, files) {
  const records = new Map();
  let remaining = files;
  while (remaining.length > 0) {
    const [cmd, args] = engine === 'native'
      ? [NATIVE_RUNNER, ['--json', ...remaining]]
      : [process.execPath, [WASM_RUNNER, '--json', ...(engine === 'wasm-threads' ? ['--threads'] : []), ...remaining]];
    const run = spawnSync(cmd, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 20 * 60_000 });
    for (const line of (run.stdout ?? '').split('\n')) {
      if (!line.startsWith('{')) continue;
      let record;
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      if (record.file !== undefined) records.set(record.file, record);
    }
    const notRun = remaining.filter((f) => !records.has(f));
    if (notRun.length === 0) break;
    const how = run.error
      ? run.error.message
      : run.signal ? `killed by ${run.signal}` : `exited with ${run.status}`;
    const stderr = (run.stderr ?? '').trim().split('\n').slice(-3).join(' | ');
    records.set(notRun[0], {
      engine, name: path.basename(notRun[0], '.json'), file: notRun[0], pass: false,
      message: `the ${engine} runner stopped on this case (${how})${stderr ? `: ${stderr}` : ''}`,
    });
    remaining = notRun.slice(1);
  }
  return records;
}

async function main(argv) {
  const flags = new Set(argv.filter((a) => a.startsWith('-')));
  for (const flag of flags) {
    if (!['--native-only', '--wasm-only', '--no-build', '-h', '--help'].includes(flag)) {
      console.error(`golden: unknown option ${flag}\n${USAGE}`);
      return 2;
    }
  }
  if (flags.has('-h') || flags.has('--help')) {
    console.log(USAGE);
    return 0;
  }
  let engines = ['native', 'wasm', 'wasm-threads'];
  if (flags.has('--native-only')) engines = ['native'];
  if (flags.has('--wasm-only')) engines = ['wasm', 'wasm-threads'];
  const targets = argv.filter((a) => !a.startsWith('-'));
  if (targets.length === 0) targets.push(path.join(repoRoot, 'tests/golden/cases'));
  for (const target of targets) {
    if (!fs.existsSync(target)) {
      console.error(`golden: ${target} does not exist`);
      return 1;
    }
  }
  const files = collectCaseFiles(targets).map((f) => path.resolve(f));
  if (files.length === 0) {
    console.error(`golden: no case files (*.json) in ${targets.join(', ')}`);
    return 1;
  }

  if (!flags.has('--no-build')) {
    const buildError = await ensureBuilt(engines);
    if (buildError) {
      console.error(`golden: ${buildError}`);
      return 1;
    }
  }

  const results = {};
  for (const engine of engines) {
    const missing = missingEngine(engine);
    if (missing) console.error(`golden: ${engine}: ${missing}`);
    results[engine] = missing
      ? new Map(files.map((f) => [f, {
        engine, name: path.basename(f, '.json'), file: f, pass: false, message: `not run: the ${engine} engine is not built (see above)`,
      }]))
      : runEngine(engine, files);
  }

  let passed = 0;
  let failed = 0;
  for (const file of files) {
    for (const engine of engines) {
      const record = results[engine].get(file);
      if (record.pass) passed++;
      else failed++;
      console.log(formatResult(record));
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
