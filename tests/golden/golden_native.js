// Runs golden case files (tests/golden/README.md) through the native core: each case becomes a
// call to build/<preset>/mha_golden (golden_native.cpp, which computes and writes back what came
// out), and golden_common.js compares and reports, as for the WebAssembly engines.
//
//   node tests/golden/golden_native.js [--json] [--runner PATH] DIR|FILE...
//
// --runner: the mha_golden to run (default build/native/mha_golden; ctest gives its own build's,
// the asan preset's under the sanitizers). One line per case (engine native) with the largest
// errors beside the tolerances, then "N passed, N failed"; exit status 1 if any failed or the
// runner is missing, 2 on bad usage. --json prints golden_common.js's records instead. A case the
// runner did not answer (it crashed before it) fails, with how the runner ended and its last
// lines of stderr.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goldenMain } from './golden_common.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEFAULT_RUNNER = path.join(repoRoot, 'build/native/mha_golden');

/** A frame of golden_native.cpp's protocol: the header's length, the header, its data. */
function frame(header, data) {
  const text = Buffer.from(JSON.stringify({ ...header, data_bytes: data.length }));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(text.length);
  return Buffer.concat([length, text, data]);
}

/** A loaded case as a call frame: every tensor's bytes after the header, each at its offset. */
function callFrame(loaded) {
  const blocks = [];
  let bytes = 0;
  const place = (t) => {
    if (t === null) return null;
    const data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const at = { shape: t.shape, dtype: t.dtype, offset: bytes };
    blocks.push(data);
    bytes += data.length;
    const pad = (4 - (bytes % 4)) % 4;
    if (pad) {
      blocks.push(Buffer.alloc(pad));
      bytes += pad;
    }
    return at;
  };
  const { inputs } = loaded;
  const header = {
    config: loaded.config,
    parameters: loaded.stateDict.map(([name, t]) => ({ name, ...place(t) })),
    inputs: {
      query: place(inputs.query), key: place(inputs.key), value: place(inputs.value),
      key_padding_mask: place(inputs.keyPaddingMask), attn_mask: place(inputs.attnMask),
    },
    options: { need_weights: loaded.options.needWeights, average_attn_weights: loaded.options.averageAttnWeights, is_causal: loaded.options.isCausal },
  };
  return frame(header, Buffer.concat(blocks));
}

/** The result frames in `bytes`, in order, as outcomes ({ output, weights } or an Error). */
function readResults(bytes) {
  const outcomes = [];
  let at = 0;
  while (at + 4 <= bytes.length) {
    const n = bytes.readUInt32LE(at);
    if (at + 4 + n > bytes.length) break;
    const header = JSON.parse(bytes.subarray(at + 4, at + 4 + n).toString('utf8'));
    const start = at + 4 + n;
    if (start + header.data_bytes > bytes.length) break;
    const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + start + header.data_bytes));
    at = start + header.data_bytes;
    if (header.error !== undefined) {
      outcomes.push(new Error(header.error));
      continue;
    }
    const numel = (shape) => shape.reduce((a, b) => a * b, 1);
    const outputCount = numel(header.output.shape);
    outcomes.push({
      output: { shape: header.output.shape, data: values.subarray(0, outputCount) },
      weights: header.weights ? { shape: header.weights.shape, data: values.subarray(outputCount) } : null,
    });
  }
  return outcomes;
}

/** Every loaded case through the runner in one process; a case it did not answer gets an Error saying how it ended. */
function runNative(runner, loaded) {
  const calls = loaded.filter((c) => !(c instanceof Error));
  const result = spawnSync(runner, [], {
    input: Buffer.concat(calls.map(callFrame)), maxBuffer: 1 << 30, timeout: 20 * 60_000,
  });
  const answers = readResults(result.stdout ?? Buffer.alloc(0));
  const how = result.error ? result.error.message : result.signal ? `killed by ${result.signal}` : `exited with ${result.status}`;
  const stderr = (result.stderr ?? '').toString().trim().split('\n').slice(-3).join(' | ');
  let next = 0;
  return loaded.map((c) => {
    if (c instanceof Error) return c;
    const answer = answers[next++];
    return answer ?? new Error(`not run: ${path.relative(repoRoot, runner)} ${how} before this case${stderr ? `: ${stderr}` : ''}`);
  });
}

function start({ runner = DEFAULT_RUNNER }) {
  if (!fs.existsSync(runner)) throw new Error(`${runner} does not exist; build it with: npm run build -- native`);
  return [{ engine: 'native', run: (loaded) => runNative(path.resolve(runner), loaded) }];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await goldenMain(process.argv.slice(2), { name: 'golden_native', valueOptions: ['--runner'], start });
}
