// `npm run encode -- --json` (scripts/commands/encode.js) on sentences of the golden cases, through
// its standard input and output as a user runs it: one JSON line per sentence, in order, with the
// ids of the reference tokenizer, each layer's weights as [head][query][key] within 1e-5 of the
// TF.js graph and the embedding within 1e-4. (scripts/reference/check_encode.js runs the same
// comparison against the live reference on any sentences.)
//
//   node --test tests/js/encode-cli.test.js
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadEncoderGolden } from '../golden/encoder/golden_common.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const golden = loadEncoderGolden();

function encodeCli(lines, args = ['--json']) {
  const r = spawnSync(process.execPath, ['scripts/commands/encode.js', ...args], {
    cwd: root, input: lines.map((l) => `${l}\n`).join(''), encoding: 'utf8', maxBuffer: 1 << 28, timeout: 10 * 60_000,
  });
  return { status: r.status, lines: r.stdout.split('\n').filter(Boolean), stderr: r.stderr };
}

test('one JSON line per sentence, in order, as the TF.js graph and tokenizer give', () => {
  // every tenth case that a line of UTF-8 can carry (no line breaks, no lone surrogates), and the 128-token text
  const chosen = golden.cases.filter((c, i) => (i % 10 === 0 || c.name === 'tokens_128' || c.name === 'empty_0') &&
    !c.code_points && !/[\n\r]/.test(c.text) && !c.truncated_to);
  const { status, lines, stderr } = encodeCli(chosen.map((c) => c.text));
  assert.equal(status, 0, stderr);
  assert.equal(lines.length, chosen.length);
  let worstWeights = 0;
  let worstEmbedding = 0;
  chosen.forEach((c, i) => {
    const out = JSON.parse(lines[i]);
    assert.deepEqual(Object.keys(out), ['text', 'pieces', 'ids', 'layers', 'embedding']);
    assert.equal(out.text, c.text);
    assert.deepEqual(out.ids, c.ids, `${c.name}: ids`);
    assert.equal(out.pieces.length, c.ids.length);
    assert.equal(out.layers.length, 2);
    out.layers.forEach((layer, l) => {
      const [H, T] = c.expectedWeights[l].shape;
      assert.equal(layer.weights.length, H, `${c.name}: heads`);
      const flat = layer.weights.flat(2);
      assert.equal(flat.length, H * T * T);
      flat.forEach((v, k) => { worstWeights = Math.max(worstWeights, Math.abs(v - c.expectedWeights[l].data[k])); });
      if (T > 0) assert.equal(layer.weights[0][0].length, T, `${c.name}: [head][query][key]`);
    });
    out.embedding.forEach((v, k) => { worstEmbedding = Math.max(worstEmbedding, Math.abs(v - c.expectedEmbedding[k])); });
  });
  console.log(`  ${chosen.length} sentences: weights max |diff| ${worstWeights.toExponential(2)} (tolerance ${golden.tolerances.weights}), ` +
    `embedding max |diff| ${worstEmbedding.toExponential(2)} (tolerance ${golden.tolerances.embedding})`);
  assert.ok(worstWeights <= golden.tolerances.weights);
  assert.ok(worstEmbedding <= golden.tolerances.embedding);
});

// The first run above built what was missing; these take it as built.
test('a sentence over 128 tokens: an error line naming the limit, the others still encoded; --truncate takes the first 128', () => {
  const long = golden.cases.find((c) => c.truncated_to);
  const { status, lines } = encodeCli(['Hello.', long.text, 'Bye.'], ['--json', '--no-build']);
  assert.equal(status, 1);
  assert.equal(lines.length, 3);
  const error = JSON.parse(lines[1]);
  assert.equal(error.error.code, 'TOO_LARGE');
  assert.match(error.error.message, /at most 128/);
  assert.deepEqual(JSON.parse(lines[2]).pieces, ['▁By', 'e', '.']);
  const cut = encodeCli([long.text], ['--json', '--truncate', '--no-build']);
  assert.equal(cut.status, 0, cut.stderr);
  const out = JSON.parse(cut.lines[0]);
  assert.equal(out.truncated, true);
  assert.deepEqual(out.ids, long.ids.slice(0, 128));
  const flat = out.layers[1].weights.flat(2);
  let worst = 0;
  flat.forEach((v, k) => { worst = Math.max(worst, Math.abs(v - long.expectedWeights[1].data[k])); });
  assert.ok(worst <= golden.tolerances.weights, `truncated: weights max |diff| ${worst}`);
});
