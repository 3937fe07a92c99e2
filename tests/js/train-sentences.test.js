// The WebAssembly training core draws the same sentences as the native trainer: for each seed
// 0-99, TrainSession.sentence(seed) (what the page's examples and the train view use) against
// tests/golden/train/sentences.txt, the list the native unit tests check too
// (TrainGrammar.SentencesMatchTheCommittedList). The grammar once drew two numbers as one call's
// arguments, which g++ and clang evaluate in different orders, so the page's held-out sentences
// were not `npm run train`'s.
//
//   node --test tests/js/train-sentences.test.js

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { loadTrainer } from '../../web/lib/train.js';

const listed = fs.readFileSync(new URL('../golden/train/sentences.txt', import.meta.url), 'utf8')
  .split('\n').filter((line) => line && !line.startsWith('#'))
  .map((line) => {
    const [seed, text] = line.split('\t');
    return { seed: Number(seed), text };
  });

// Grammar::to_text: the words after <bos>, spaces between them, "." against the word before it.
const toText = (words) => words.filter((w) => w !== '<bos>').join(' ').replace(/ \./g, '.');

test('every seed draws the sentence of the committed list', async () => {
  assert.equal(listed.length, 100, 'expected seeds 0-99 in tests/golden/train/sentences.txt');
  const trainer = await loadTrainer({ seed: 1, heldOut: 1 });
  try {
    const differ = [];
    for (const { seed, text } of listed) {
      const drawn = toText(trainer.sentence(seed).words);
      if (drawn !== text) differ.push(`seed ${seed}: drew "${drawn}", listed "${text}"`);
    }
    assert.deepEqual(differ, []);
  } finally {
    trainer.dispose();
  }
});
