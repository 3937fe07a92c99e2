// `npm run encode -- --json`: the pretrained encoder (Universal Sentence Encoder lite) on the
// sentences of standard input, one per line, computed by the WebAssembly core in Node.js with
// float32 weights. Builds what it needs first, as `npm start` does (npm dependencies, the
// WebAssembly modules, the model files); their messages go to standard error.
//
//   echo 'The cat sat on the mat.' | npm run encode -- --json
//     {"text": …, "pieces": [..], "ids": [..], "layers": [{"weights": [[[..]]]}, ..], "embedding": [..]}
//     one line per sentence, in order; weights per layer as [head][query][key]
//   npm run encode                    the pieces of each sentence, one line each
//   npm run encode -- --json --truncate   longer than 128 tokens: the first 128 (else an error line)
//   npm run encode -- --json --float16    the float16 weights instead
//   npm run encode -- --no-build          no build steps: the modules and model files are there
// A sentence that cannot be encoded gives {"text", "error": {"code", "message"}} on its line,
// and the exit code is 1 at the end.
import { float32Number, nested, readStdin, step } from './cli.js';

function usage(message) {
  console.error(`${message}\nusage: npm run encode -- [--json] [--truncate] [--float16] [--no-build]  (sentences on standard input, one per line)`);
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  for (const a of args) if (!['--json', '--truncate', '--float16', '--no-build'].includes(a)) usage(`unknown option ${a}`);
  const json = args.includes('--json');
  if (!args.includes('--no-build')) {
    step('encode', 'scripts/build/setup.js', ['start']);
    step('encode', 'scripts/build/build.js', ['--wasm']);
    step('encode', 'scripts/build/build-model.js', []);
  }
  const { loadEncoder } = await import('../../web/lib/encoder.js');
  const encoder = await loadEncoder({ dtype: args.includes('--float16') ? 'float16' : 'float32' });
  const lines = await readStdin();
  let failed = 0;
  const out = [];
  for (const text of lines) {
    let line;
    try {
      const r = encoder.encode(text, { truncate: args.includes('--truncate') });
      line = json
        ? JSON.stringify({
          text, pieces: r.pieces, ids: r.ids, ...(r.truncated ? { truncated: true, totalTokens: r.totalTokens } : {}),
          layers: r.layers.map((layer) => ({ weights: nested(layer.weights) })),
          embedding: Array.from(r.embedding, float32Number),
        })
        : `${r.ids.length} tokens${r.truncated ? ` (of ${r.totalTokens})` : ''}: ${r.pieces.join(' ')}`;
    } catch (error) {
      if (error?.name !== 'MhaError') throw error;
      failed += 1;
      line = json ? JSON.stringify({ text, error: { code: error.code, message: error.message } }) : `error: ${error.message}`;
    }
    out.push(line);
    if (out.length >= 64) process.stdout.write(`${out.splice(0).join('\n')}\n`);
  }
  if (out.length) process.stdout.write(`${out.join('\n')}\n`);
  encoder.dispose();
  if (failed) console.error(`[encode] ${failed} of ${lines.length} sentences could not be encoded (their lines say why)`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.error(`[encode] ${error?.message ?? error}`);
  process.exit(1);
});
