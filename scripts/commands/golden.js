// npm run golden -- [DIR|FILE ...] [--no-build]
//
// Every golden case file (default: tests/golden/cases) through each engine's runner: the native
// one (tests/golden/golden_native.js over build/native/mha_golden) and the WebAssembly one
// (tests/golden/golden_wasm.js: the wasm and wasm-threads cores); both compare with
// tests/golden/golden_common.js, this script merges their records. One line per case and engine
// with the largest errors beside the tolerances, then "N passed, N failed" (one count per case
// and engine); exit status 1 if any failed or there was nothing to run. It first builds the
// native and wasm presets (scripts/build/build.js), unless --no-build.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build, BuildError } from '../build/build.js';
import { repoRoot } from '../build/setup.js';
import { collectCaseFiles, formatResult } from '../../tests/golden/golden_common.js';

const RUNNERS = [
  { engines: ['native'], cmd: process.execPath, args: [path.join(repoRoot, 'tests/golden/golden_native.js')] },
  { engines: ['wasm', 'wasm-threads'], cmd: process.execPath, args: [path.join(repoRoot, 'tests/golden/golden_wasm.js')] },
];
const USAGE = 'usage: npm run golden -- [DIR|FILE ...] [--no-build]';

/** A runner's --json records by file and engine; a case it did not report fails with the reason. */
function run(runner, files) {
  const result = spawnSync(runner.cmd, [...runner.args, '--json', ...files], {
    cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 20 * 60_000,
  });
  const records = new Map();
  for (const line of (result.stdout ?? '').split('\n')) {
    let record = null;
    try {
      record = line.startsWith('{') ? JSON.parse(line) : null;
    } catch {
      // a line cut short by a crash: its case counts as not run
    }
    if (record?.engine && record.file) records.set(`${record.file}\n${record.engine}`, record);
  }
  const how = result.error ? result.error.message : result.signal ? `killed by ${result.signal}` : `exited with ${result.status}`;
  const stderr = (result.stderr ?? '').trim().split('\n').slice(-3).join(' | ');
  return (file, engine) => records.get(`${file}\n${engine}`) ?? {
    engine, name: path.basename(file, '.json'), file, pass: false,
    message: `not run: ${path.relative(repoRoot, runner.args[0] ?? runner.cmd)} ${how} before this case${stderr ? `: ${stderr}` : ''}`,
  };
}

function main(argv) {
  const unknown = argv.filter((a) => a.startsWith('-') && a !== '--no-build');
  if (unknown.length > 0) {
    console.error(`golden: unknown option ${unknown.join(' ')}\n${USAGE}`);
    return 2;
  }
  const targets = argv.filter((a) => !a.startsWith('-'));
  if (targets.length === 0) targets.push(path.join(repoRoot, 'tests/golden/cases'));
  const absent = targets.filter((t) => !fs.existsSync(t));
  if (absent.length > 0) {
    console.error(`golden: ${absent.join(', ')} does not exist`);
    return 1;
  }
  const files = collectCaseFiles(targets).map((f) => path.resolve(f));
  if (files.length === 0) {
    console.error(`golden: no case files (*.json) in ${targets.join(', ')}`);
    return 1;
  }
  if (!argv.includes('--no-build')) {
    try {
      build(['native', 'wasm']);
    } catch (error) {
      if (!(error instanceof BuildError)) throw error;
      console.error(`golden: ${error.message}`);
      return 1;
    }
  }
  const results = RUNNERS.map((runner) => ({ engines: runner.engines, recordOf: run(runner, files) }));
  let passed = 0;
  let failed = 0;
  for (const file of files) {
    for (const { engines, recordOf } of results) {
      for (const engine of engines) {
        const record = recordOf(file, engine);
        if (record.pass) passed++;
        else failed++;
        console.log(formatResult(record));
      }
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
