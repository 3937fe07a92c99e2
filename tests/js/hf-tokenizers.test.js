// The committed tokenizer cases (tests/golden/models/tokenizer_cases.json), whose ids the models'
// tokenizer (web/lib/tokenizer.js) is tested against (tests/js/models.test.js), are what the
// reference tokenizer gives today: @huggingface/tokenizers (pure JavaScript, offline) re-encodes every
// text of every tokenizer.json, and the model folders carry those same tokenizer.json files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { CASES_FILE, MODELS_DIR, TEXTS, buildCases } from '../../scripts/reference/hf_tokenizer_cases.js';

const committed = JSON.parse(fs.readFileSync(CASES_FILE, 'utf8'));

test('the reference gives the committed ids for every case', () => {
  const fresh = buildCases();
  const names = Object.keys(committed.tokenizers).sort();
  assert.deepEqual(Object.keys(fresh.tokenizers).sort(), names);
  assert.ok(names.length >= 4, `expected the BPE and WordPiece tokenizers, got ${names}`);
  let count = 0;
  for (const name of names) {
    const cases = committed.tokenizers[name].cases;
    assert.deepEqual(cases.map((c) => c.text), TEXTS, `${name}: the committed texts are the script's`);
    for (let i = 0; i < cases.length; ++i) {
      assert.deepEqual(fresh.tokenizers[name].cases[i].ids, cases[i].ids, `${name} on ${JSON.stringify(cases[i].text)}`);
      count += 1;
    }
  }
  console.log(`    ${count} cases of ${names.length} tokenizers match`);
});

test('the cases exercise what tokenizers get wrong', () => {
  const bpe = committed.tokenizers.bpe.cases;
  const wordpiece = committed.tokenizers['wordpiece-uncased'].cases;
  const json = JSON.parse(fs.readFileSync(path.join(MODELS_DIR, 'tokenizers', 'wordpiece-uncased', 'tokenizer.json'), 'utf8'));
  const unk = json.model.vocab['[UNK]'];
  // some text falls back to [UNK], some does not; the empty text is [CLS] [SEP] alone
  assert.ok(wordpiece.some((c) => c.ids.includes(unk)));
  assert.ok(wordpiece.some((c) => c.ids.length > 2 && !c.ids.includes(unk)));
  assert.deepEqual(wordpiece.find((c) => c.text === '').ids, [json.model.vocab['[CLS]'], json.model.vocab['[SEP]']]);
  assert.deepEqual(bpe.find((c) => c.text === '').ids, []);
  // every byte of an emoji is its own BPE piece or merged: more ids than code points there
  const emoji = bpe.find((c) => c.text.startsWith('emoji'));
  assert.ok(emoji.ids.length > Array.from(emoji.text).length / 2);
});

test('each model folder carries its tokenizer.json, and the reference loads it', () => {
  for (const name of fs.readdirSync(MODELS_DIR)) {
    const dir = path.join(MODELS_DIR, name);
    if (name === 'tokenizers' || !fs.statSync(dir).isDirectory()) continue;
    // the detectors' models (tests/js/detectors.test.js) and the long-context one (random weights,
    // for the browser tests of 1,000 tokens) have no golden runs: their tokenizer still loads
    const goldenFile = path.join(MODELS_DIR, `${name}.golden.json`);
    const golden = fs.existsSync(goldenFile) || !(name.startsWith('gpt2-induction') || name === 'gpt2-long')
      ? JSON.parse(fs.readFileSync(goldenFile, 'utf8')) : { dtypes: {} };
    const tokenizerJson = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
    const tokenizer = new Tokenizer(tokenizerJson, {});
    // the runs, and a trained model's held-out sentences
    for (const run of [...Object.values(golden.dtypes).flatMap((d) => d.runs), ...(golden.training?.held_out ?? [])]) {
      assert.deepEqual(tokenizer.encode(run.text).ids, run.ids, `${name}: ${run.text}`);
    }
  }
});
