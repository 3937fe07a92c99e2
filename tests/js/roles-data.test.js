// web/data/roles/: the hand-annotated evaluation data for head roles (pronouns.json: pronoun →
// antecedent; relations.json: six word-to-word relations). Checks everything a program can check:
// the word convention, tags, the annotation rules, the counts and shares the data promises, the
// resolvedBy values recomputed from the nouns' gender and number, and the dev/test balance.
// Prints the counts it checks.
//
//   node --test tests/js/roles-data.test.js

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';

const DIR = new URL('../../web/data/roles/', import.meta.url);
const read = (name) => JSON.parse(fs.readFileSync(new URL(name, DIR), 'utf8'));
const PRONOUNS = read('pronouns.json');
const RELATIONS = read('relations.json');
const FORMAT = 'mha-explorer roles data 1';

const TAGS = new Set(['DET', 'ADJ', 'NOUN', 'PROPN', 'PRON', 'VERB', 'AUX', 'ADP', 'ADV', 'CCONJ', 'SCONJ', 'PART', 'NUM', 'PUNCT']);
const PUNCT = new Set([',', '.', '?']);
const NOMINAL = new Set(['NOUN', 'PROPN']);
const NOMINAL_OR_PRON = new Set(['NOUN', 'PROPN', 'PRON']);
const POSSESSIVES = ['my', 'your', 'his', 'her', 'its', 'our', 'their'];
const DETERMINERS = new Set(['the', 'a', 'an', 'this', 'that', 'these', 'those', 'every', 'each', 'some', 'no', 'any', 'another', 'all', 'both', 'either', 'neither', 'which', 'what']);
const RELATIVE_OR_WH = new Set(['who', 'whom', 'which', 'that', 'what', 'whose']);
const PERSONAL = ['he', 'she', 'it', 'they', 'him', 'her', 'them'];
const SUBJECT_PRONOUNS = new Set(['i', 'he', 'she', 'we', 'they']);
const PERSONAL_FORMS = new Set(['i', 'you', 'he', 'she', 'it', 'we', 'they', 'me', 'him', 'her', 'us', 'them']);
const ROLES = ['subject', 'object', 'prepositionObject'];
const RESOLVED = ['agreement', 'meaning', 'only'];
const REL_IDS = ['determinerNoun', 'adjectiveNoun', 'verbSubject', 'objectVerb', 'prepositionObject', 'possessiveNoun'];
const CONSTRUCTIONS = ['relativeClause', 'prepositionalPhraseSubject', 'question', 'passive', 'auxiliary', 'adverbBetween', 'inversion', 'doubleObject'];
const BE = new Set(['am', 'is', 'are', 'was', 'were', 'be', 'been', 'being']);

const lower = (w) => w.toLowerCase();
const share = (n, d) => (d ? n / d : 0);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const countBy = (list, key) => list.reduce((m, x) => { const k = key(x); m[k] = (m[k] || 0) + 1; return m; }, {});
const textOf = (words) => words.join(' ').replace(/ ([,.?])/g, '$1');

/** Words, tags and text of one sentence follow the convention; returns problems. */
function sentenceProblems(s, minWords) {
  const out = [];
  if (typeof s.text !== 'string' || !/^[A-Z][A-Za-z]*(?:,? [A-Za-z]+)*[.?]$/.test(s.text)) out.push('text uses only letters, spaces, commas and a final . or ?');
  if (!Array.isArray(s.words) || !Array.isArray(s.pos) || s.words.length !== s.pos.length) return [...out, 'words and pos of equal length'];
  if (textOf(s.words) !== s.text) out.push('words reproduce the text');
  s.words.forEach((w, i) => {
    if (!(PUNCT.has(w) || /^[A-Za-z]+$/.test(w))) out.push(`word ${i} "${w}"`);
    if (!TAGS.has(s.pos[i])) out.push(`tag ${i} ${s.pos[i]}`);
    if (PUNCT.has(w) !== (s.pos[i] === 'PUNCT')) out.push(`PUNCT exactly on punctuation (${i})`);
    const l = lower(w);
    if (['the', 'a', 'an'].includes(l) && s.pos[i] !== 'DET') out.push(`"${w}" is DET`);
    if (['my', 'your', 'his', 'its', 'our', 'their', 'her'].includes(l) && s.pos[i] !== 'PRON') out.push(`"${w}" is PRON`);
    if (l === 'to' && !['PART', 'ADP'].includes(s.pos[i])) out.push('"to" is PART or ADP');
    if (l === 'not' && s.pos[i] !== 'PART') out.push('"not" is PART');
    if (s.pos[i] === 'DET' && !DETERMINERS.has(l)) out.push(`"${w}" is not a determiner`);
  });
  const n = s.words.filter((w) => !PUNCT.has(w)).length;
  if (n < minWords || n > 30) out.push(`${n} words (${minWords} to 30)`);
  return out;
}

/** A sentence with its proper nouns replaced, to catch two items that differ only in a name. */
const shape = (s) => s.words.map((w, i) => (s.pos[i] === 'PROPN' ? '#' : lower(w))).join(' ');

function agrees(pronoun, [gender, number]) {
  if (pronoun === 'they' || pronoun === 'them') return number === 'pl';
  if (number !== 'sg') return false;
  if (pronoun === 'he' || pronoun === 'him') return gender === 'm' || gender === 'mf';
  if (pronoun === 'she' || pronoun === 'her') return gender === 'f' || gender === 'mf';
  return gender === 'n';
}

/** What the nouns' features say about an item: other agreeing nouns, disagreeing nouns between. */
function features(item) {
  const pw = lower(item.words[item.pronoun]);
  const before = Object.keys(item.nouns).map(Number).filter((i) => i < item.pronoun && i !== item.antecedent);
  const others = before.filter((i) => agrees(pw, item.nouns[i]));
  const disagreeBetween = before.filter((i) => i > item.antecedent && !agrees(pw, item.nouns[i]));
  const resolvedBy = others.length ? 'meaning' : disagreeBetween.length ? 'agreement' : 'only';
  const nounIdx = item.pos.map((p, i) => (NOMINAL.has(p) ? i : -1)).filter((i) => i >= 0);
  return { pw, others, disagreeBetween, resolvedBy, firstNoun: nounIdx[0] === item.antecedent };
}

function table(title, rows) {
  console.log(`\n${title}`);
  for (const r of rows) console.log('  ' + r.map((c, i) => String(c).padEnd(i ? 10 : 30)).join(''));
}

function splitRows(list, key, values) {
  return values.map((v) => {
    const g = list.filter((x) => key(x) === v);
    const d = g.filter((x) => x.split === 'dev').length;
    return [v, g.length, d, g.length - d];
  });
}

// ---------------------------------------------------------------- pronouns.json

const items = PRONOUNS.items;

test('pronouns: format and fields', () => {
  assert.equal(PRONOUNS.format, FORMAT);
  assert.equal(PRONOUNS.relation, 'pronounAntecedent');
  assert.equal(typeof PRONOUNS.description, 'string');
  assert.ok(PRONOUNS.description.length > 100, 'a one-paragraph description');
  assert.ok(Array.isArray(items));
  assert.ok(items.length >= 300, `${items.length} items, at least 300`);
  const ids = new Set();
  for (const it of items) {
    assert.match(it.id, /^p\d{4}$/);
    assert.ok(!ids.has(it.id), `id ${it.id} unique`); ids.add(it.id);
    assert.ok(['dev', 'test'].includes(it.split), `${it.id} split`);
    assert.deepEqual(sentenceProblems(it, 6), [], `${it.id} ${it.text}`);
    assert.ok(Number.isInteger(it.pronoun) && Number.isInteger(it.antecedent), it.id);
    assert.ok(ROLES.includes(it.antecedentRole), `${it.id} antecedentRole`);
    assert.ok(RESOLVED.includes(it.resolvedBy), `${it.id} resolvedBy`);
  }
});

test('pronouns: texts are all different, also up to the names', () => {
  const seen = new Map();
  for (const it of items) {
    const k = shape(it);
    assert.ok(!seen.has(k), `${it.id} repeats ${seen.get(k)}`);
    seen.set(k, it.id);
  }
});

test('pronouns: nouns, pronoun and antecedent follow the rules', () => {
  for (const it of items) {
    const label = `${it.id} ${it.text}`;
    const nounIdx = it.pos.map((p, i) => (NOMINAL.has(p) ? String(i) : null)).filter(Boolean);
    assert.deepEqual(Object.keys(it.nouns).sort((a, b) => a - b), nounIdx, `${label}: nouns lists exactly the NOUN/PROPN words`);
    for (const [g, n] of Object.values(it.nouns)) {
      assert.ok(['m', 'f', 'n', 'mf'].includes(g), `${label}: gender ${g}`);
      assert.ok(['sg', 'pl'].includes(n), `${label}: number ${n}`);
    }
    const pw = lower(it.words[it.pronoun] ?? '');
    assert.ok(PERSONAL.includes(pw), `${label}: pronoun word ${pw}`);
    assert.equal(it.pos[it.pronoun], 'PRON', `${label}: pronoun is PRON`);
    assert.ok(NOMINAL.has(it.pos[it.antecedent]), `${label}: antecedent is a NOUN/PROPN`);
    assert.ok(it.antecedent < it.pronoun, `${label}: antecedent before pronoun`);
    assert.ok(agrees(pw, it.nouns[it.antecedent]), `${label}: antecedent agrees with the pronoun`);
    const aw = lower(it.words[it.antecedent]);
    assert.equal(it.words.findIndex((w) => lower(w) === aw), it.antecedent, `${label}: antecedent is the first "${aw}"`);
    assert.equal(it.words.findIndex((w) => lower(w) === pw), it.pronoun, `${label}: pronoun is the first "${pw}" (none before the antecedent either)`);
  }
});

test('pronouns: resolvedBy follows from the nouns\' gender and number', () => {
  for (const it of items) {
    const f = features(it);
    assert.equal(it.resolvedBy, f.resolvedBy, `${it.id} ${it.text}: other agreeing nouns [${f.others.map((i) => it.words[i])}], disagreeing between [${f.disagreeBetween.map((i) => it.words[i])}]`);
  }
});

test('pronouns: counts and shares', () => {
  const N = items.length;
  const byPronoun = countBy(items, (it) => lower(it.words[it.pronoun]));
  const byRole = countBy(items, (it) => it.antecedentRole);
  const byRes = countBy(items, (it) => it.resolvedBy);
  const feats = items.map(features);
  const firstNoun = feats.filter((f) => f.firstNoun).length;
  const disagree = feats.filter((f) => f.disagreeBetween.length > 0).length;
  const otherAgree = feats.filter((f) => f.others.length > 0).length;
  const dist = items.map((it) => it.pronoun - it.antecedent);
  const distCount = countBy(dist, (d) => d);
  const ante = countBy(items, (it) => it.antecedent);
  const maxDistShare = Math.max(...Object.values(distCount)) / N;
  table(`pronouns.json: ${N} items`, [
    ['', 'items', 'share'],
    ...PERSONAL.map((p) => [`pronoun ${p}`, byPronoun[p] || 0, pct(share(byPronoun[p] || 0, N))]),
    ...ROLES.map((r) => [`role ${r}`, byRole[r] || 0, pct(share(byRole[r] || 0, N))]),
    ...RESOLVED.map((r) => [`resolvedBy ${r}`, byRes[r] || 0, pct(share(byRes[r] || 0, N))]),
    ['antecedent is first noun', firstNoun, pct(share(firstNoun, N))],
    ['disagreeing noun between', disagree, pct(share(disagree, N))],
    ['other agreeing noun before', otherAgree, pct(share(otherAgree, N))],
    ['antecedent at index 1', ante[1] || 0, pct(share(ante[1] || 0, N))],
    ['antecedent indices', `${Object.keys(ante).length} kinds`, `max ${Math.max(...items.map((it) => it.antecedent))}`],
    ['distance', `${Math.min(...dist)} to ${Math.max(...dist)}`, `mean ${(dist.reduce((a, b) => a + b, 0) / N).toFixed(1)}`],
    ['distance <= 3', dist.filter((d) => d <= 3).length, pct(share(dist.filter((d) => d <= 3).length, N))],
    ['distance >= 10', dist.filter((d) => d >= 10).length, pct(share(dist.filter((d) => d >= 10).length, N))],
    ['distance >= 15', dist.filter((d) => d >= 15).length, pct(share(dist.filter((d) => d >= 15).length, N))],
    ['most common distance', pct(maxDistShare), ''],
  ]);
  for (const p of PERSONAL) assert.ok((byPronoun[p] || 0) >= 30, `at least 30 items with ${p}`);
  for (const r of ROLES) assert.ok(share(byRole[r] || 0, N) >= 0.27 && share(byRole[r] || 0, N) <= 0.40, `role ${r} about a third`);
  assert.ok(share(firstNoun, N) >= 0.4 && share(firstNoun, N) <= 0.6, 'antecedent is the first noun in close to half');
  assert.ok(share(disagree, N) >= 0.4, 'a disagreeing noun between in at least 40%');
  assert.ok(share(byRes.meaning || 0, N) >= 0.3, 'meaning decides in at least 30%');
  assert.ok(share(byRes.only || 0, N) < 0.3, 'only-agreeing items under 30%');
  assert.ok(share(ante[1] || 0, N) <= 0.3, 'antecedent at index 1 in at most 30%');
  assert.ok(Object.keys(ante).length >= 12 && Math.max(...items.map((it) => it.antecedent)) >= 10, 'antecedent positions vary');
  assert.ok(Math.min(...dist) <= 2, 'distances from 2');
  assert.ok(dist.filter((d) => d >= 15).length >= 5, 'some distances of 15 or more');
  assert.ok(dist.filter((d) => d >= 10).length >= 0.1 * N, 'at least 10% at distance 10 or more');
  assert.ok(maxDistShare <= 0.2, 'no one distance in more than 20% of items');
});

test('pronouns: dev and test are balanced, also within each pronoun, role and resolvedBy', () => {
  const groups = [
    ['all', items],
    ...PERSONAL.map((p) => [p, items.filter((it) => lower(it.words[it.pronoun]) === p)]),
    ...ROLES.map((r) => [r, items.filter((it) => it.antecedentRole === r)]),
    ...RESOLVED.map((r) => [r, items.filter((it) => it.resolvedBy === r)]),
  ];
  table('pronouns.json: split', [['', 'items', 'dev', 'test'], ...groups.map(([name, g]) => {
    const d = g.filter((x) => x.split === 'dev').length;
    return [name, g.length, d, g.length - d];
  })]);
  for (const [name, g] of groups) {
    const d = g.filter((x) => x.split === 'dev').length;
    assert.ok(Math.abs(d - (g.length - d)) <= 2, `${name}: dev ${d}, test ${g.length - d}`);
  }
});

// ---------------------------------------------------------------- relations.json

const sentences = RELATIONS.sentences;
const all = sentences.flatMap((s) => s.relations.map(([rel, q, k]) => ({ s, rel, q, k })));

test('relations: format and fields', () => {
  assert.equal(RELATIONS.format, FORMAT);
  assert.equal(typeof RELATIONS.description, 'string');
  assert.deepEqual(Object.keys(RELATIONS.relations).sort(), [...REL_IDS].sort());
  for (const v of Object.values(RELATIONS.relations)) assert.ok(typeof v === 'string' && v.includes('->'));
  assert.ok(Array.isArray(sentences) && sentences.length >= 380, `${sentences.length} sentences`);
  const ids = new Set();
  for (const s of sentences) {
    assert.match(s.id, /^r\d{4}$/);
    assert.ok(!ids.has(s.id), `id ${s.id} unique`); ids.add(s.id);
    assert.ok(['dev', 'test'].includes(s.split), `${s.id} split`);
    assert.deepEqual(sentenceProblems(s, 5), [], `${s.id} ${s.text}`);
    assert.ok(Array.isArray(s.relations) && Array.isArray(s.constructions), s.id);
    for (const r of s.relations) {
      assert.ok(Array.isArray(r) && r.length === 3 && REL_IDS.includes(r[0]), `${s.id} relation ${JSON.stringify(r)}`);
      assert.ok(Number.isInteger(r[1]) && Number.isInteger(r[2]) && r[1] !== r[2] && r[1] >= 0 && r[2] >= 0 && r[1] < s.words.length && r[2] < s.words.length, `${s.id} ${JSON.stringify(r)}`);
    }
    for (const c of s.constructions) assert.ok(CONSTRUCTIONS.includes(c), `${s.id} construction ${c}`);
    assert.equal(new Set(s.constructions).size, s.constructions.length, `${s.id} constructions listed once`);
  }
  const seen = new Map();
  for (const s of sentences) {
    assert.ok(!seen.has(shape(s)), `${s.id} repeats ${seen.get(shape(s))}`);
    seen.set(shape(s), s.id);
  }
  const texts = new Set(items.map((it) => it.text));
  for (const s of sentences) assert.ok(!texts.has(s.text), `${s.id} is also a pronoun item`);
});

test('relations: each instance has the tags its relation needs', () => {
  const between = (s, a, b) => s.pos.slice(Math.min(a, b) + 1, Math.max(a, b));
  for (const { s, rel, q, k } of all) {
    const label = `${s.id} ${rel} ${s.words[q]} -> ${s.words[k]} (${s.text})`;
    const qp = s.pos[q], kp = s.pos[k], qw = lower(s.words[q]), kw = lower(s.words[k]);
    const mid = between(s, q, k);
    const only = (allowed) => mid.every((p) => allowed.includes(p));
    if (rel === 'determinerNoun') {
      assert.ok(qp === 'DET' && DETERMINERS.has(qw), `${label}: query is a determiner`);
      assert.ok(NOMINAL.has(kp) && k > q, `${label}: key is a noun after it`);
      assert.ok(only(['ADJ', 'ADV', 'NOUN', 'PROPN', 'NUM', 'CCONJ', 'PUNCT', ...(['all', 'both'].includes(qw) ? ['DET', 'PRON'] : [])]), `${label}: only modifiers between`);
    } else if (rel === 'adjectiveNoun') {
      assert.equal(qp, 'ADJ', `${label}: query is ADJ`);
      assert.ok(NOMINAL.has(kp) && k > q, `${label}: key is a noun after it`);
      assert.ok(only(['ADJ', 'ADV', 'NOUN', 'PROPN', 'CCONJ', 'PUNCT']), `${label}: only modifiers between`);
    } else if (rel === 'verbSubject') {
      assert.equal(qp, 'VERB', `${label}: query is VERB`);
      assert.ok(NOMINAL_OR_PRON.has(kp) && !RELATIVE_OR_WH.has(kw) && !POSSESSIVES.filter((p) => p !== 'her').includes(kw), `${label}: key is a noun or personal pronoun`);
      assert.ok(!(q > 0 && lower(s.words[q - 1]) === 'to' && s.pos[q - 1] === 'PART'), `${label}: not an infinitive`);
    } else if (rel === 'objectVerb') {
      assert.ok(NOMINAL_OR_PRON.has(qp) && !RELATIVE_OR_WH.has(qw) && !POSSESSIVES.filter((p) => p !== 'her').includes(qw), `${label}: query is a noun or pronoun`);
      assert.equal(kp, 'VERB', `${label}: key is VERB`);
    } else if (rel === 'prepositionObject') {
      assert.equal(qp, 'ADP', `${label}: query is ADP`);
      assert.ok(NOMINAL_OR_PRON.has(kp) && k > q && !RELATIVE_OR_WH.has(kw), `${label}: key is a noun or pronoun after it`);
      assert.ok(only(['DET', 'ADJ', 'ADV', 'NOUN', 'PROPN', 'NUM', 'PRON', 'CCONJ', 'PUNCT']), `${label}: only its noun phrase between`);
    } else if (rel === 'possessiveNoun') {
      assert.ok(qp === 'PRON' && POSSESSIVES.includes(qw), `${label}: query is a possessive`);
      assert.ok(NOMINAL.has(kp) && k > q, `${label}: key is a noun after it`);
      assert.ok(only(['ADJ', 'ADV', 'NOUN', 'PROPN', 'NUM', 'CCONJ', 'PUNCT']), `${label}: only modifiers between`);
    }
  }
});

test('relations: the annotation is complete where a program can tell', () => {
  for (const s of sentences) {
    const has = (rel, q) => s.relations.some(([r, a]) => r === rel && a === q);
    const label = (i) => `${s.id} "${s.words[i]}" (${i}) in: ${s.text}`;
    for (const rel of REL_IDS) {
      const qs = s.relations.filter(([r]) => r === rel).map(([, q]) => q);
      assert.equal(new Set(qs).size, qs.length, `${s.id}: one ${rel} per query word`);
    }
    const asQuery = s.relations.map(([, q]) => q);
    assert.equal(new Set(asQuery).size, asQuery.length, `${s.id}: a word is the query of one relation at most`);
    s.words.forEach((w, i) => {
      const l = lower(w), p = s.pos[i];
      if (p === 'DET') assert.ok(has('determinerNoun', i), `${label(i)}: every determiner has its noun`);
      if (p === 'ADP') assert.ok(has('prepositionObject', i), `${label(i)}: every preposition has its object`);
      if (p === 'PRON' && POSSESSIVES.includes(l) && l !== 'her') assert.ok(has('possessiveNoun', i), `${label(i)}: every possessive has its noun`);
      if (p === 'ADJ' && NOMINAL.has(s.pos[i + 1])) assert.ok(has('adjectiveNoun', i), `${label(i)}: an adjective before a noun modifies a noun`);
      if (p === 'PRON' && SUBJECT_PRONOUNS.has(l) && s.pos[i + 1] === 'VERB') {
        assert.ok(s.relations.some(([r, q, k]) => r === 'verbSubject' && q === i + 1 && k === i), `${label(i)}: a subject pronoun before its verb`);
      }
      if (p === 'PRON' && l === 'her') assert.ok(!(has('possessiveNoun', i) && has('objectVerb', i)), `${label(i)}: her is possessive or object, not both`);
    });
  }
});

/** Construction tests a program can compute from the annotation. */
function computed(s) {
  const subj = s.relations.filter(([r]) => r === 'verbSubject');
  const between = (a, b) => s.pos.slice(a + 1, b);
  return {
    question: s.text.endsWith('?'),
    inversion: subj.some(([, q, k]) => k > q),
    auxiliary: subj.some(([, q, k]) => k < q && between(k, q).includes('AUX')),
    adverbBetween: subj.some(([, q, k]) => k < q && between(k, q).includes('ADV')),
    relativeClause: s.words.some((w, i) => i > 0 && s.pos[i] === 'PRON' && ['who', 'whom', 'which', 'that'].includes(lower(w))),
  };
}

test('relations: subjects that are pronouns are personal or the indefinite ones README.md names', () => {
  const found = new Set();
  for (const s of sentences) {
    for (const [r, , k] of s.relations) {
      if (r === 'verbSubject' && s.pos[k] === 'PRON' && !PERSONAL_FORMS.has(lower(s.words[k]))) found.add(lower(s.words[k]));
    }
  }
  assert.deepEqual([...found].sort(), ['anyone', 'everyone', 'nobody', 'somebody']);
});

test('relations: constructions agree with the sentence', () => {
  for (const s of sentences) {
    const c = computed(s);
    for (const [name, value] of Object.entries(c)) {
      assert.equal(s.constructions.includes(name), value, `${s.id} ${name} (${s.text})`);
    }
    const subj = s.relations.filter(([r]) => r === 'verbSubject');
    if (s.constructions.includes('prepositionalPhraseSubject')) {
      assert.ok(subj.some(([, q, k]) => k < q && s.pos.slice(k + 1, q).includes('ADP')), `${s.id}: a preposition between a subject and its verb`);
    }
    // README: a prepositional phrase inside a relative clause between a subject and its verb is
    // not marked, so an unmarked preposition between them comes with a relative clause
    if (!s.constructions.includes('prepositionalPhraseSubject') && subj.some(([, q, k]) => k < q && s.pos.slice(k + 1, q).includes('ADP'))) {
      assert.ok(s.constructions.includes('relativeClause'), `${s.id}: a preposition between a subject and its verb, unmarked, only inside a relative clause`);
    }
    if (s.constructions.includes('passive')) {
      const be = (j) => s.pos[j] === 'AUX' && BE.has(lower(s.words[j]));
      assert.ok(subj.some(([, q, k]) => {
        let j = q - 1;
        while (j >= 0 && (s.pos[j] === 'ADV' || lower(s.words[j]) === 'not')) j -= 1;
        // "was eaten", or a question: "Were these pictures painted ...?"
        return (j >= 0 && be(j)) || (k < q && s.pos.slice(0, k).some((_, i) => be(i)));
      }), `${s.id}: a passive verb after a form of be`);
    }
    if (s.constructions.includes('doubleObject')) {
      const roles = new Set(s.relations.flatMap(([r, q, k]) => (r === 'prepositionObject' ? [k] : [q])));
      assert.ok(s.relations.some(([r, q, k]) => r === 'objectVerb' && k < q
        && s.pos.slice(k + 1, q).some((p, j) => NOMINAL_OR_PRON.has(p) && !roles.has(k + 1 + j))), `${s.id}: an indirect object between a verb and its object`);
    }
  }
});

test('relations: counts, distances and shares', () => {
  const rows = [['relation', 'instances', 'dev', 'test', 'not next', 'distances']];
  const stats = {};
  for (const rel of REL_IDS) {
    const r = all.filter((x) => x.rel === rel);
    const d = r.filter((x) => x.s.split === 'dev').length;
    const off = r.map((x) => x.k - x.q);
    const dist = countBy(off.map(Math.abs), (v) => v);
    // not next: the key is not the word right after the query (right before it, for a verb's
    // subject); for an object and its verb, not next to each other
    const notNext = off.filter((o) => (rel === 'verbSubject' ? o !== -1 : rel === 'objectVerb' ? Math.abs(o) !== 1 : o !== 1)).length;
    stats[rel] = { n: r.length, d, t: r.length - d, notNext: share(notNext, r.length), maxDist: Math.max(...Object.values(dist)) / r.length, far: share(off.filter((o) => Math.abs(o) >= 3).length, r.length) };
    rows.push([rel, r.length, d, r.length - d, pct(stats[rel].notNext), `${Math.min(...off.map(Math.abs))}..${Math.max(...off.map(Math.abs))}`]);
  }
  table(`relations.json: ${sentences.length} sentences`, rows);
  const poss = countBy(all.filter((x) => x.rel === 'possessiveNoun'), (x) => lower(x.s.words[x.q]));
  table('possessives', POSSESSIVES.map((p) => [p, poss[p] || 0]));
  const cons = CONSTRUCTIONS.map((c) => {
    const g = sentences.filter((s) => s.constructions.includes(c));
    const d = g.filter((s) => s.split === 'dev').length;
    return [c, g.length, d, g.length - d];
  });
  const d = sentences.filter((s) => s.split === 'dev').length;
  table('relations.json: split and constructions', [['', 'sentences', 'dev', 'test'], ['all', sentences.length, d, sentences.length - d], ...cons]);

  for (const rel of REL_IDS) assert.ok(stats[rel].n >= 330, `${rel}: ${stats[rel].n} instances, at least 330`);
  assert.ok(stats.verbSubject.notNext >= 0.5, 'verbSubject: the subject is not the word before the verb in at least half');
  assert.ok(stats.determinerNoun.notNext >= 0.4, 'determinerNoun: the noun is not the next word in at least 40%');
  assert.ok(stats.adjectiveNoun.notNext >= 0.4, 'adjectiveNoun: the noun is not the next word in at least 40%');
  assert.ok(stats.possessiveNoun.notNext >= 0.35, 'possessiveNoun: the noun is often not the next word');
  for (const rel of ['objectVerb', 'prepositionObject']) {
    assert.ok(stats[rel].maxDist <= 0.5, `${rel}: no one distance in more than half`);
    assert.ok(stats[rel].far >= 0.2, `${rel}: at least 20% at distance 3 or more`);
  }
  for (const p of POSSESSIVES) assert.ok((poss[p] || 0) >= 20, `possessive ${p}: ${poss[p] || 0}`);
  for (const rel of REL_IDS) {
    const { d: dv, t } = stats[rel];
    assert.ok(Math.abs(dv - t) <= 0.1 * Math.max(dv, t), `${rel}: dev ${dv} and test ${t} within 10%`);
  }
  assert.ok(Math.abs(d - (sentences.length - d)) <= 2, `sentences: dev ${d}, test ${sentences.length - d}`);
  for (const [c, n, dv, t] of cons) {
    assert.ok(n >= 10, `construction ${c}: ${n} sentences`);
    assert.ok(Math.abs(dv - t) <= Math.max(2, 0.1 * n), `construction ${c}: dev ${dv}, test ${t}`);
  }
});
