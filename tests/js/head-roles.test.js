// web/sources/head-roles.js, on maps whose answers are known (pieces grouped into words as the
// core's tokenizer groups them: tests/cpp/encoder/tokenizer_test.cpp): the tagger's words lined up with the model's pieces, role shares, word-level maps, relations and
// their fixed-offset baselines, and labels that follow the stated bars.
//
//   node --test tests/js/head-roles.test.js

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  alignTokens, measureHeads, relationsOf, roleShares, wordMap, ROLE_THRESHOLD,
} from '../../web/sources/head-roles.js';
import { analyseTokens } from '../../web/sources/tokens.js';
import { TAGGED_CORPUS } from '../../web/sources/pretrained-corpus.tagged.js';
import { CORPUS } from '../../web/sources/pretrained-corpus.js';

const PIECES = ['▁The', '▁ma', 't', '▁is', '▁red', '.'];
const WORDS = [0, 1, 1, 2, 3, 4];  // the core's words of PIECES

/** A (T, T) map whose every row puts all its weight on key(i). */
function pointMap(T, key) {
  const map = new Float32Array(T * T);
  for (let i = 0; i < T; i += 1) map[i * T + key(i)] = 1;
  return map;
}

test('the tagger\'s words line up with the model\'s pieces, or the sentence is left out', () => {
  const tokens = ['The', 'mat', 'is', 'red', '.'].map((text) => ({ text }));
  assert.deepEqual(alignTokens(PIECES, tokens), [[0], [1, 2], [3], [4], [5]]);
  assert.equal(alignTokens(PIECES, ['The', 'cat', 'is', 'red', '.'].map((text) => ({ text }))), null);
});

test('role shares of maps that do one thing', () => {
  const T = PIECES.length;
  const previous = roleShares(pointMap(T, (i) => Math.max(0, i - 1)), PIECES, WORDS);
  assert.equal(previous.sums.previous / previous.rows.previous, 1);
  assert.equal(previous.sums.self, 1, 'only row 0 stays on itself');
  const self = roleShares(pointMap(T, (i) => i), PIECES, WORDS);
  assert.equal(self.sums.self / self.rows.self, 1);
  assert.equal(self.rows.sameWord, 2, 'only "ma" and "t" share a word');
  const last = roleShares(pointMap(T, () => T - 1), PIECES, WORDS);
  assert.equal(last.sums.finalPunctuation / last.rows.finalPunctuation, 1);
});

test('word-level maps: the query word\'s pieces averaged, the key word\'s summed', () => {
  const T = PIECES.length;
  const groups = [[0], [1, 2], [3], [4], [5]];
  const uniform = new Float32Array(T * T).fill(1 / T);
  const words = wordMap(uniform, T, groups);
  assert.ok(Math.abs(words[0 * 5 + 1] - 2 / T) < 1e-7, 'two pieces of "mat" summed');
  for (let a = 0; a < 5; a += 1) assert.ok(Math.abs(words.slice(a * 5, a * 5 + 5).reduce((s, v) => s + v, 0) - 1) < 1e-6, `row ${a} sums to 1`);
});

test('relations from the tagger and the annotation', () => {
  const item = CORPUS.find((c) => c.text === 'The cat sat on the mat because it was tired.');
  const tokens = analyseTokens(TAGGED_CORPUS[item.text]);
  const found = relationsOf(tokens, item).map((r) => `${r.relation} ${tokens[r.query].text}→${tokens[r.key].text}`);
  assert.ok(found.includes('modifierNoun The→cat'), found.join(', '));
  assert.ok(found.includes('verbSubject sat→cat'), found.join(', '));
  assert.ok(found.includes('pronounAntecedent it→cat'), found.join(', '));
});

test('labels: a previous-piece head is named, a uniform head is broad, the baseline is the best offset', () => {
  const sentences = CORPUS.slice(0, 40).map((item) => {
    const tokens = analyseTokens(TAGGED_CORPUS[item.text]);
    // one piece per tagged word: the words are the pieces
    const pieces = tokens.map((t, i) => (i === 0 || /^[\p{P}\p{S}]+$/u.test(t.text) ? t.text : `▁${t.text}`));
    const T = pieces.length;
    const data = new Float32Array(2 * T * T);
    data.set(pointMap(T, (i) => Math.max(0, i - 1)), 0);
    data.fill(1 / T, T * T);
    return { pieces, words: pieces.map((_, i) => i), tokens, relations: relationsOf(tokens, item), layers: [{ data, shape: [2, T, T] }] };
  });
  const measured = measureHeads(sentences, [[{ normalizedEntropy: 0.3 }, { normalizedEntropy: 1 }]]);
  const [previous, uniform] = measured.heads;
  assert.equal(measured.aligned, 40);
  assert.equal(previous.label, 'previous piece');
  assert.ok(previous.roles.previous === 1 && previous.roles.previous >= ROLE_THRESHOLD);
  assert.equal(uniform.label, 'broad');
  // the verb's subject is often the word before: the previous-piece head's accuracy is that baseline's
  assert.equal(measured.baselines.verbSubject.offset, -1);
  assert.ok(Math.abs(previous.relations.verbSubject - measured.baselines.verbSubject.accuracy) < 1e-12);
  assert.notEqual(previous.label, 'verb → subject', 'matching the baseline is not beating it');
});
