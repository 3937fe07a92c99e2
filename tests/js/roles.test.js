// The rule that names heads (web/roles/): synthetic maps that must not be named by a relation
// (a head on the first noun, a head on the previous word) and maps that must (a head on the
// true antecedent); a causal model's relations whose key comes after the query are listed as not
// visible, not scored; the bootstrap is seeded and reproducible; `npm run roles` prints one JSON
// object of the promised shape, for the pretrained model, the trained model, a model folder and a
// corpus file, and refuses bad input by name; the committed tables (the page reads them) and the
// docs' tables are what the command computes.
//
//   node --test tests/js/roles.test.js

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootstrapIndices, evaluateHeads, labelOf, measureHead, prng, ratioInterval, wordTexts } from '../../web/roles/evaluate.js';
import { dataSentences, onPieces } from '../../web/roles/sentences.js';
import { LABELS, ROLES, RELATIONS } from '../../web/roles/vocabulary.js';
import { docsTable, markdownTables, textTable } from '../../web/roles/table.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (name) => JSON.parse(fs.readFileSync(path.join(root, 'web/data/roles', name), 'utf8'));
const PRONOUNS = read('pronouns.json');
const RELATION_DATA = read('relations.json');

/** The annotated sentences with one token per word (a word's piece: "▁" and the word). */
function wordSentences() {
  return dataSentences(PRONOUNS, RELATION_DATA).map((s) => onPieces(s, {
    pieces: s.words.map((w) => (/^[,.?]$/.test(w) ? w : `▁${w}`)), words: s.words.map((_, i) => i),
  }));
}

/** A (T, T) map whose row i is target(i) (one index, or null for uniform). */
function mapOf(T, target) {
  const map = new Float32Array(T * T);
  for (let i = 0; i < T; i += 1) {
    const j = target(i);
    if (j === null) for (let k = 0; k < T; k += 1) map[i * T + k] = 1 / T;
    else map[i * T + j] = 1;
  }
  return map;
}

/** Evaluate synthetic heads, each a function (sentence) => map. */
function evaluateSynthetic(sentences, makers) {
  const heads = makers.map((make, h) => ({ layer: 0, head: h, measured: sentences.map((s) => measureHead(make(s), s)) }));
  return evaluateHeads(sentences, heads);
}

const sentences = wordSentences();

const PIECES = ['▁The', '▁ma', 't', '▁is', '▁red', '.'];
// the words as the encoder's tokenizer groups these pieces (tests/js/encoder.test.js checks its rule)
const few = { tokens: PIECES, tokenWord: [0, 1, 1, 2, 3, 4], words: ['The', 'mat', 'is', 'red', '.'], nominal: [false, true, false, false, false], subjects: [1], instances: [] };

test('words\' texts: a word\'s pieces joined, the "▁" markers dropped', () => {
  assert.deepEqual(wordTexts(PIECES, few.tokenWord), ['The', 'mat', 'is', 'red', '.']);
  assert.deepEqual(wordTexts(['▁My', '▁', 'aunt', '▁cried'], [0, 1, 1, 2]), ['My', 'aunt', 'cried']);
});

test('role shares of maps that do one thing; a word\'s pieces: the query\'s averaged, the key\'s summed', () => {
  const T = PIECES.length;
  const share = (m, id) => m.roles[id][0] / m.roles[id][1];
  const previous = measureHead(mapOf(T, (i) => Math.max(0, i - 1)), few);
  assert.equal(share(previous, 'previous'), 1);
  assert.equal(previous.roles.self[0], 1, 'only row 0 stays on itself');
  const self = measureHead(mapOf(T, (i) => i), few);
  assert.equal(share(self, 'self'), 1);
  assert.equal(self.roles.sameWord[1], 2, 'only "ma" and "t" share a word');
  assert.equal(share(measureHead(mapOf(T, () => T - 1), few), 'finalPunctuation'), 1);
  const uniform = measureHead(mapOf(T, () => null), few);
  // the nouns role: "mat" (2 of 6 pieces) from the 4 other words' rows, uniform share 2/6 each
  assert.ok(Math.abs(share(uniform, 'nouns') - 2 / T) < 1e-6);
  assert.ok(Math.abs(uniform.roles.nouns[2] / uniform.roles.nouns[1] - 2 / T) < 1e-9, 'what uniform attention gives');
  const onMat = measureHead(mapOf(T, (i) => (i === 1 ? 0 : 2)), { ...few, instances: [{ relation: 'determinerNoun', query: 0, keys: [1] }] });
  assert.equal(onMat.chosen[0], 1, 'the word whose pieces weigh most, summed');
});

test('every annotated sentence has one token per word', () => {
  assert.equal(sentences.filter((s) => s === null).length, 0);
  assert.equal(sentences.length, PRONOUNS.items.length + RELATION_DATA.sentences.length);
});

test('synthetic heads: the first noun, the previous word and uniform attention are not named by a relation; the true antecedent is', () => {
  const firstNoun = (s) => mapOf(s.tokens.length, (i) => {
    const j = s.nominal.findIndex((yes, b) => yes && b !== i);
    return j >= 0 ? j : null;
  });
  const previous = (s) => mapOf(s.tokens.length, (i) => (i > 0 ? i - 1 : null));
  const uniform = (s) => mapOf(s.tokens.length, () => null);
  const antecedent = (s) => mapOf(s.tokens.length, (i) => {
    const inst = s.instances.find((x) => x.query === i && x.relation === 'pronounAntecedent');
    return inst ? inst.keys[0] : null;
  });
  const result = evaluateSynthetic(sentences, [firstNoun, previous, uniform, antecedent]);
  const [first, prev, flat, right] = result.heads;
  const strongest = result.rule.relations.pronounAntecedent.strongest;
  console.log(`pronoun → antecedent: first-noun head ${first.relations.pronounAntecedent.score} [${first.relations.pronounAntecedent.ci}], strongest baseline ${strongest.score} (${strongest.name}); ` +
    `previous-word head on verb → subject ${prev.relations.verbSubject.score}, baseline ${prev.relations.verbSubject.baseline.score} (${prev.relations.verbSubject.baseline.name})`);
  // the data is balanced: the first noun is the antecedent in under 60% of items
  assert.ok(first.relations.pronounAntecedent.score < 0.6);
  assert.notEqual(first.label, 'pronounAntecedent');
  assert.ok(first.relations.pronounAntecedent.ci[0] <= strongest.score);
  assert.notEqual(prev.label, 'verbSubject');
  assert.ok(prev.relations.verbSubject.ci[0] <= prev.relations.verbSubject.baseline.score);
  assert.equal(prev.label, 'previous', 'a head on the previous token is named by that role');
  assert.equal(flat.label, 'broad', 'uniform attention is broad');
  assert.equal(right.label, 'pronounAntecedent');
  assert.equal(right.relations.pronounAntecedent.score, 1);
  // no head is named by a relation it does not beat the strongest baseline on
  for (const e of result.heads) {
    if (e.kind === 'relation') assert.ok(e.relations[e.label].ci[0] > e.relations[e.label].baseline.score);
    if (e.kind === 'role') assert.ok(e.roles[e.label].ci[0] >= result.rule.roles[e.label].threshold);
  }
});

test('baselines: offsets and positions are chosen on dev and scored on test', () => {
  const only = (split) => sentences.map((s) => ({ ...s, split }));
  const onDev = evaluateSynthetic(sentences, [(s) => mapOf(s.tokens.length, () => null)]).rule.relations.determinerNoun.baselines;
  assert.equal(onDev[0].name, 'always the word 1 after');
  // moving every sentence to test leaves no dev items to choose on: the choice falls back, the scores change
  const noDev = evaluateSynthetic(only('test'), [(s) => mapOf(s.tokens.length, () => null)]).rule.relations.determinerNoun.baselines;
  assert.notDeepEqual(noDev, onDev);
});

test('the bootstrap is seeded and reproducible', () => {
  const a = prng(1);
  const b = prng(1);
  const c = prng(2);
  const x = [a(), a(), a()];
  assert.deepEqual(x, [b(), b(), b()]);
  assert.notDeepEqual(x, [c(), c(), c()]);
  assert.deepEqual(bootstrapIndices(20, 50, 7), bootstrapIndices(20, 50, 7));
  assert.notDeepEqual(bootstrapIndices(20, 50, 7), bootstrapIndices(20, 50, 8));
  const num = Float64Array.from({ length: 40 }, (_, i) => i % 3);
  const den = Float64Array.from({ length: 40 }, () => 2);
  const r = bootstrapIndices(40, 1000, 1);
  const [lo, hi] = ratioInterval(num, den, r);
  assert.deepEqual(ratioInterval(num, den, r), [lo, hi]);
  assert.ok(lo < 39 / 80 && 39 / 80 < hi, `the interval [${lo}, ${hi}] holds the estimate ${39 / 80}`);
  const heads = () => [{ layer: 0, head: 0, measured: sentences.map((s) => measureHead(mapOf(s.tokens.length, (i) => (i > 0 ? i - 1 : null)), s)) }];
  assert.deepEqual(evaluateHeads(sentences, heads()), evaluateHeads(sentences, heads()));
});

test('a causal model: relations whose key comes after the query are not visible to it, not failures; the rest is measured on what it sees', () => {
  // a decoder's head that weighs the first word before each row, masked as a decoder is
  const causalMap = (s) => {
    const T = s.tokens.length;
    const map = new Float32Array(T * T);
    for (let i = 0; i < T; i += 1) map[i * T + (i > 0 ? i - 1 : 0)] = 1;
    return map;
  };
  const heads = [{ layer: 0, head: 0, measured: sentences.map((s) => measureHead(causalMap(s), s, true)) }];
  const result = evaluateHeads(sentences, heads, { causal: true });
  const later = (relation, split) => sentences.filter((s) => s.split === split)
    .flatMap((s) => s.instances.filter((x) => x.relation === relation && x.keys.every((k) => k > x.query))).length;
  const all = (relation) => sentences.flatMap((s) => s.instances.filter((x) => x.relation === relation)).length;
  // the key always after the query: listed as not visible, with its instances, and not scored
  const hidden = ['determinerNoun', 'adjectiveNoun', 'prepositionObject', 'possessiveNoun'];
  assert.deepEqual(Object.keys(result.rule.notVisible), hidden);
  for (const r of hidden) {
    assert.ok(!(r in result.rule.relations) && !(r in result.heads[0].relations), `${r} is not scored`);
    assert.deepEqual(result.rule.notVisible[r], { n: later(r, 'test'), nDev: later(r, 'dev') });
    assert.equal(result.rule.notVisible[r].n + result.rule.notVisible[r].nDev, all(r), `every ${r} instance has its key after the query`);
  }
  // the key before the query, mostly: scored on the instances it can see, the others counted
  assert.deepEqual(result.rule.relations.verbSubject.notVisible, { n: later('verbSubject', 'test'), nDev: later('verbSubject', 'dev') });
  assert.equal(result.rule.relations.verbSubject.n + later('verbSubject', 'test'), sentences.filter((s) => s.split === 'test')
    .flatMap((s) => s.instances.filter((x) => x.relation === 'verbSubject')).length);
  assert.ok(!('notVisible' in result.rule.relations.pronounAntecedent), 'every antecedent comes before its pronoun');
  // said in words, apart from what the heads do not do
  const summary = markdownTables(result).split('\n')[0];
  console.log(summary);
  assert.match(summary, /Not visible to a causal model: determiner → noun, adjective → noun, preposition → object, possessive → noun\./);
  assert.doesNotMatch(summary.split('Not visible')[0], /determiner → noun|adjective → noun|preposition → object/);
  assert.match(summary, new RegExp(`${later('verbSubject', 'test')} of verb → subject`));
  // an encoder sees them all: the same maps measured without the mask's reading list nothing as hidden
  const encoder = evaluateHeads(sentences, [{ layer: 0, head: 0, measured: sentences.map((s) => measureHead(causalMap(s), s)) }]);
  assert.equal(encoder.rule.notVisible, undefined);
  assert.ok(hidden.every((r) => r in encoder.rule.relations));
  assert.doesNotMatch(markdownTables(encoder), /Not visible/);
});

test('labelOf: the widest margin wins; nothing cleared is broad or mixed', () => {
  const roles = { self: { threshold: 0.5 } };
  const rel = (lo, base) => ({ score: lo + 0.05, ci: [lo, lo + 0.1], n: 10, baseline: { name: 'b', score: base } });
  assert.equal(labelOf({ self: { score: 0.7, ci: [0.6, 0.8] } }, { verbSubject: rel(0.9, 0.5) }, roles, 0.1).label, 'verbSubject');
  assert.equal(labelOf({ self: { score: 0.9, ci: [0.85, 0.95] } }, { verbSubject: rel(0.52, 0.5) }, roles, 0.1).label, 'self');
  assert.equal(labelOf({ self: { score: 0.4, ci: [0.3, 0.5] } }, { verbSubject: rel(0.5, 0.5) }, roles, 0.9).label, 'broad');
  assert.equal(labelOf({ self: { score: 0.4, ci: [0.3, 0.5] } }, { verbSubject: rel(0.5, 0.5) }, roles, 0.5).label, 'mixed');
});

function roles(args) {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts/commands/roles.js'), ...args], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function checkShape(result, source) {
  assert.equal(result.source, source);
  assert.ok(Number.isInteger(result.corpus.sentences) && result.corpus.sentences > 0);
  assert.equal(result.corpus.split.dev + result.corpus.split.test, result.corpus.sentences);
  assert.ok(result.heads.length > 0);
  for (const e of result.heads) {
    assert.ok(Number.isInteger(e.layer) && e.layer >= 0 && Number.isInteger(e.head) && e.head >= 0, '0-based layer and head');
    assert.ok(LABELS.includes(e.label), `label ${e.label} is an id of the vocabulary`);
    for (const [id, v] of Object.entries(e.roles)) {
      assert.ok(id in ROLES);
      assert.equal(typeof v.score, 'number');
      assert.ok(v.ci.length === 2 && v.ci[0] <= v.ci[1]);
    }
    for (const [id, v] of Object.entries(e.relations)) {
      assert.ok(id in RELATIONS);
      assert.ok(v.ci.length === 2 && v.ci[0] <= v.score + 1e-9 && v.score <= v.ci[1] + 1e-9);
      assert.ok(Number.isInteger(v.n) && v.n > 0);
      assert.equal(typeof v.baseline.name, 'string');
      assert.equal(typeof v.baseline.score, 'number');
    }
    // the label follows from the figures by the one rule
    assert.equal(labelOf(e.roles, e.relations, result.rule.roles, e.normalizedEntropy).label, e.label);
    if (e.kind === 'relation') assert.ok(e.relations[e.label].ci[0] > e.relations[e.label].baseline.score);
  }
  assert.ok(!('evidence' in result), '--json prints the table without the page\'s item lists');
}

test('npm run roles -- --json: the pretrained model; the committed table and docs/pretrained.md are what it computes', { timeout: 300_000 }, () => {
  const r = roles(['--json']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, 'exactly one JSON object');
  const result = JSON.parse(lines[0]);
  checkShape(result, 'pretrained');
  assert.equal(result.heads.length, 8);
  const { evidence, ...committed } = JSON.parse(fs.readFileSync(path.join(root, 'web/data/roles/pretrained-roles.json'), 'utf8'));
  assert.ok(evidence.relations.pronounAntecedent.items.length === result.rule.relations.pronounAntecedent.n);
  assert.deepEqual(committed, result, 'web/data/roles/pretrained-roles.json is stale: run npm run roles -- --write');
  const docs = docsTable(fs.readFileSync(path.join(root, 'docs/pretrained.md'), 'utf8'));
  assert.equal(docs, markdownTables(result).trim(), 'docs/pretrained.md\'s table is stale: run npm run roles -- --write');
});

test('npm run roles -- --source trained --json: the trained model by the same rule; the committed table and docs/training.md are what it computes', { timeout: 300_000 }, async () => {
  const r = roles(['--source', 'trained', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  checkShape(result, 'trained');
  assert.equal(result.heads.length, 16);
  const stale = 'web/data/roles/trained-roles.json is stale: run npm run roles -- --source trained --write';
  const { evidence, heldOut, ...committed } = JSON.parse(fs.readFileSync(path.join(root, 'web/data/roles/trained-roles.json'), 'utf8'));
  assert.deepEqual(committed, result, stale);
  for (const [relation, { n }] of Object.entries(result.rule.relations)) {
    assert.equal(evidence.relations[relation].items.length, n, `the items behind ${relation}: one per test instance`);
    for (const e of result.heads) assert.equal(evidence.relations[relation].chosen[`${e.layer}.${e.head}`].length, n);
  }
  // the mean weights the page shows: the core's evaluation of the shipped weights on the held-out sentences
  const [{ loadTrainer }, { TRAINED_HELD_OUT }] = await Promise.all([import('../../web/lib/train.js'), import('../../web/roles/measure.js')]);
  const trainer = await loadTrainer({ seed: 1, heldOut: TRAINED_HELD_OUT });
  trainer.loadWeights(new Uint8Array(fs.readFileSync(path.join(root, 'web/sources/weights/trained-seed1.bin'))));
  const { sentences, heads } = trainer.evaluate();
  trainer.dispose();
  console.log(`trained table: ${result.corpus.sentences} sentences, ${heads.length} head × relation mean weights on ${sentences} held-out sentences`);
  assert.equal(sentences, TRAINED_HELD_OUT);
  assert.deepEqual(heldOut, { sentences, heads }, stale);
  const docs = docsTable(fs.readFileSync(path.join(root, 'docs/training.md'), 'utf8'));
  assert.equal(docs, markdownTables(result).trim(), 'docs/training.md\'s table is stale: run npm run roles -- --write --source trained');
});

test('npm run roles -- --corpus FILE: pronoun → antecedent on JSON lines, with the baselines on them', { timeout: 300_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roles-'));
  const file = path.join(dir, 'corpus.jsonl');
  const items = PRONOUNS.items.slice(0, 24).map((p) => ({ text: p.text, pronoun: p.words[p.pronoun], antecedent: p.words[p.antecedent] }));
  fs.writeFileSync(file, `${items.map((x) => JSON.stringify(x)).join('\n')}\n`);
  const r = roles(['--json', '--corpus', file]);
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  checkShape(result, 'pretrained');
  assert.equal(result.corpus.sentences, 24);
  assert.deepEqual(result.corpus.split, { dev: 12, test: 12 });
  assert.deepEqual(Object.keys(result.rule.relations), ['pronounAntecedent']);
  const names = result.rule.relations.pronounAntecedent.baselines.map((b) => b.name);
  assert.ok(names.includes('the first noun') && names.includes('the nearest noun before'), names.join(', '));
  // bad input is named: the line, what was expected, what came
  fs.writeFileSync(file, `${JSON.stringify(items[0])}\n{"text": "The cat slept.", "pronoun": 3}\n`);
  const bad = roles(['--json', '--corpus', file]);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /line 2: expected "pronoun" to be a non-empty string, got 3/);
  fs.writeFileSync(file, '{"text": "The dog barked.", "pronoun": "it", "antecedent": "dog"}\n');
  const missing = roles(['--json', '--corpus', file]);
  assert.match(missing.stderr, /line 1: expected the pronoun "it" after the antecedent "dog"/);
  fs.writeFileSync(file, 'not json\n');
  assert.match(roles(['--json', '--corpus', file]).stderr, /line 1: expected a JSON object \{"text", "pronoun", "antecedent"\}, got "not json"/);
  fs.rmSync(dir, { recursive: true });
});

test('npm run roles -- --model DIR: a GPT-2 read as the page reads it, by the same rule; its later-key relations are not visible', { timeout: 300_000 }, () => {
  const r = roles(['--json', '--model', path.join(root, 'tests/golden/models/gpt2-trained')]);
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  checkShape(result, 'model');
  assert.equal(result.heads.length, 8, 'two layers of four heads');
  console.log(`gpt2-trained: ${result.corpus.sentences} sentences; not visible: ${Object.entries(result.rule.notVisible).map(([k, v]) => `${k} (${v.n} test items)`).join(', ')}; labels ${result.heads.map((e) => e.label).join(' ')}`);
  assert.deepEqual(Object.keys(result.rule.notVisible), ['determinerNoun', 'adjectiveNoun', 'prepositionObject', 'possessiveNoun']);
  assert.ok(['verbSubject', 'objectVerb', 'pronounAntecedent'].every((id) => id in result.rule.relations));
  // the table it prints without --json says so under its first line
  assert.match(textTable(result).split('\n')[1], /^Not visible to a causal model: determiner → noun/);
  // what it cannot take
  const both = roles(['--model', 'x', '--source', 'trained']);
  assert.equal(both.status, 2);
  assert.match(both.stderr, /--model: measures the model in x; expected no --source with it, got --source trained/);
  const missing = roles(['--model', path.join(root, 'tests/golden/models/no-such-model')]);
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /--model: expected a model folder \(config\.json, model\.safetensors, tokenizer\.json\), got .*no-such-model/);
});

test('npm run roles: an unknown source or option is named', () => {
  const r = roles(['--source', 'designed']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--source: expected one of pretrained, trained, got "designed"/);
  const o = roles(['--bogus']);
  assert.equal(o.status, 2);
  assert.match(o.stderr, /unknown option "--bogus"/);
});

test('weights from a file: its heads named by the same rule on the annotated sentences the page tags; random weights are named by nothing', { timeout: 120_000 }, async () => {
  const [{ loadMha }, { RandomSource }, { FileSource, readWeightsFile, stateDictToJson }, { tokenFeatureRoles }] = await Promise.all([
    import('../../web/lib/index.js'), import('../../web/sources/random.js'), import('../../web/sources/file.js'), import('../../web/roles/measure.js')]);
  const mha = await loadMha();
  const random = new RandomSource({ seed: 5 });
  await random.load(mha);
  const bytes = new TextEncoder().encode(await stateDictToJson(random.attention, 'random seed 5'));
  random.dispose();
  const source = new FileSource({ file: { name: 'random.json', ...readWeightsFile(bytes, 'random.json') } });
  await source.load(mha);
  // a slice of the data, both halves, to keep the tagger's time short
  const subset = async (name) => {
    const data = read(name);
    return name === 'pronouns.json' ? { ...data, items: data.items.slice(0, 60) } : { ...data, sentences: data.sentences.slice(0, 60) };
  };
  const result = await tokenFeatureRoles(source, subset, { evidence: false });
  source.dispose();
  console.log(`file weights: ${result.corpus.sentences} sentences (${result.corpus.skipped.length} left out), labels ${result.heads.map((e) => e.label).join(' ')}`);
  checkShape(result, 'file');
  assert.equal(result.heads.length, 8);
  assert.ok(result.corpus.sentences >= 110, 'the tagger\'s tokens are the data\'s words');
  for (const e of result.heads) assert.ok(e.kind === 'broad' || e.kind === 'mixed', `random head ${e.head + 1}: ${e.label}`);
});
