// Runs test files with node:test, several files at a time, on Node 18 and Node 20 alike
// (`node --test` has no --test-concurrency before Node 20.10: its files then run one by one
// on a 2-core machine). Each file is a process of its own, as with `node --test`.
//
//   node scripts/test/run-node-tests.js [--concurrency N] [--tap FILE] FILE...
//
// TAP goes to standard output (and to FILE with --tap); the exit code is 1 when a test failed.
// Node.js built-ins only: scripts/test/test.js runs it.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { run } from 'node:test';
import { tap } from 'node:test/reporters';

function parseArgs(argv) {
  const options = { concurrency: Math.max(1, (os.availableParallelism?.() ?? os.cpus().length)), tap: null, files: [] };
  for (let k = 0; k < argv.length; k += 1) {
    const arg = argv[k];
    if (arg === '--concurrency') options.concurrency = Number(argv[++k]);
    else if (arg === '--tap') options.tap = argv[++k];
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}; usage: node scripts/test/run-node-tests.js [--concurrency N] [--tap FILE] FILE...`);
    else options.files.push(path.resolve(arg));
  }
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new Error(`--concurrency: expected a whole number >= 1, got ${options.concurrency}`);
  if (options.files.length === 0) throw new Error('no test files given');
  return options;
}

const options = parseArgs(process.argv.slice(2));
let failed = 0;
const stream = run({ files: options.files, concurrency: options.concurrency });
stream.on('test:fail', (event) => {
  // a failing test inside a file is also reported as its file failing: count each once
  if (event.nesting === 0 || event.data?.nesting === 0) failed += 1;
});
const text = stream.compose(tap);
const outputs = [process.stdout];
if (options.tap) {
  fs.mkdirSync(path.dirname(options.tap), { recursive: true });
  outputs.push(fs.createWriteStream(options.tap));
}
const copy = new PassThrough();
text.pipe(copy);
for (const out of outputs) copy.pipe(out, out === process.stdout ? { end: false } : undefined);
copy.on('end', () => {
  process.exitCode = failed > 0 ? 1 : 0;
});
