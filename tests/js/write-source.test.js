// The model source writing on (web/sources/model.js, web/sources/write-state.js) over the example
// model opened in Node.js: write appends the tokens model.generate writes and runs the longer
// text whole (its layers are the model's run of those ids); the same text keeps what was written
// (a layer shown again), another text or null drops it; a bad value, too many tokens or a model
// that does not write on give a writeError and the text without writing; the element's
// attributes read as the controller's object; nextWrite adds to the same sampling and starts
// again with another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/lib/models.js';
import { loadMha } from '../../web/lib/index.js';
import { ModelSource } from '../../web/sources/model.js';
import { checkedWrite } from '../../web/sources/write-state.js';
import { nextWrite } from '../../web/explorer/write.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = `${root}web/examples/models/gpt2-lesson`;
const TEXT = 'the king follows';

test('the model source writes on, keeps it for the same text and says what it cannot write', async () => {
  const model = await loadModel(EXAMPLE);
  const source = new ModelSource({ opened: { name: 'gpt2-lesson', stamp: '1', model } });
  await source.load(await loadMha());
  assert.equal(source.writes, true);
  const plain = await source.sentence(TEXT);
  const write = { steps: 6, temperature: 1.3, topK: 20, seed: 5 };
  const written = await source.sentence(TEXT, write);
  const expected = model.generate(6, { prompt: plain.ids, temperature: 1.3, topK: 20, seed: 5 }).ids;
  assert.deepEqual(written.ids, [...plain.ids, ...expected]);
  assert.equal(written.written, 6);
  assert.deepEqual(written.write, write);
  assert.deepEqual(written.tokens.map((t) => !!t.written), [...plain.ids.map(() => false), ...expected.map(() => true)]);
  assert.equal(written.focus, written.ids.length - 1);
  const run = model.run(written.ids);
  assert.deepEqual(Array.from(written.run.layers[1].weights.data), Array.from(run.layers[1].weights.data), 'the longer text run whole');

  assert.deepEqual((await source.sentence(TEXT)).ids, written.ids, 'the same text keeps what was written');
  assert.equal((await source.sentence('the queen follows')).written, 0, 'another text does not');
  assert.equal((await source.sentence(TEXT)).written, 0, 'and it is not kept after another text');
  assert.equal((await source.sentence(TEXT, write)).written, 6);
  assert.equal((await source.sentence(TEXT, null)).written, 0, 'null clears it');

  for (const [bad, message] of [
    [{ steps: 0 }, /steps: expected a number of tokens from 1 to 4096, got 0/],
    [{ steps: 2, temperature: -1 }, /temperature: expected a temperature above 0, at most 100, got -1/],
    [{ steps: 2, topK: 1.5 }, /topK: expected a whole number from 1, got 1.5/],
    [{ steps: 2, seed: 2 ** 32 }, /seed: expected a whole number from 0 to 4294967295/],
    [{ steps: 500 }, /Writing 500 tokens after the text's 4 makes 504; the explorer shows at most 64: write at most 60/],
    ['twenty', /expected \{ steps, temperature\?, topK\?, seed\? \}, got twenty/],
  ]) {
    const s = await source.sentence(TEXT, bad);
    assert.match(String(s.writeError), message);
    assert.deepEqual(s.ids, plain.ids, 'the text is shown without writing');
  }
  assert.deepEqual((await source.sentence(TEXT, write)).ids, written.ids, 'and writes on after each');
  source.dispose();
  model.dispose();
});

test('the element\'s attributes read as the controller\'s object; nextWrite adds to the same sampling, and starts again with another', () => {
  const attributes = (values) => (name) => values[name] ?? null;
  assert.deepEqual(checkedWrite(attributes({ write: '20', temperature: '0.8', 'top-k': '40', 'write-seed': '7' })),
    { write: { steps: 20, temperature: 0.8, topK: 40, seed: 7 } });
  assert.deepEqual(checkedWrite(attributes({ write: '3' })), { write: { steps: 3 } });
  assert.deepEqual(checkedWrite(attributes({ write: 'many' })), { error: 'write: expected a number of tokens from 1 to 4096, got "many"' });
  assert.deepEqual(checkedWrite(attributes({ write: '3', 'top-k': '-2' })), { error: 'top-k: expected a whole number from 1, got "-2"' });
  assert.deepEqual(nextWrite(null, 1, {}), { steps: 1 });
  assert.deepEqual(nextWrite({ steps: 4 }, 1, {}), { steps: 5 });
  assert.deepEqual(nextWrite({ steps: 4, temperature: 0.8, topK: 40, seed: 1 }, 2, { temperature: 0.8, topK: 40, seed: 1 }), { steps: 6, temperature: 0.8, topK: 40, seed: 1 });
  assert.deepEqual(nextWrite({ steps: 4 }, 3, { temperature: 0.8, topK: 40, seed: 1 }), { steps: 3, temperature: 0.8, topK: 40, seed: 1 });
});

test('a bidirectional model does not write on: its sentence says so and is shown without writing', async () => {
  const model = await loadModel(`${root}tests/golden/models/bert-mlm`);
  const source = new ModelSource({ opened: { name: 'bert', stamp: '2', model } });
  await source.load(await loadMha());
  assert.equal(source.writes, false);
  const s = await source.sentence('the king follows', { steps: 3 });
  assert.match(String(s.writeError), /does not write on: that needs a causal model that predicts the next token/);
  assert.equal(s.written, 0);
  source.dispose();
  model.dispose();
});
