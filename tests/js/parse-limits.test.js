// The tagger's parse as a guess (web/sources/parse-limits.js, parse-agreement.js, designed.js):
// none of the hand-annotated English sentences is said to be outside what the tagger reads, while
// German, French, Spanish and Italian sentences are said to be likely not English, misspelled ones
// to have words the tagger does not know, and a sentence longer than any annotated one to be
// long; the figures of the parse's agreement with the annotation are what the tagger gives now;
// the designed heads' checks on such sentences follow the parse, say so, and carry the limits.
// Prints the margins it measures.
//
//   node --test tests/js/parse-limits.test.js

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import nlp from 'compromise/three';
import { analyseTokens, tagText } from '../../web/sources/tokens.js';
import { ENGLISH_FUNCTION_WORDS, LIMITS, parseLimits } from '../../web/sources/parse-limits.js';
import { PARSE_AGREEMENT } from '../../web/sources/parse-agreement.js';
import { EXAMPLES } from '../../web/sources/examples.js';
import { measureParseAgreement } from '../../scripts/build/parse-agreement.js';

const read = (name) => JSON.parse(fs.readFileSync(new URL(`../../web/data/roles/${name}`, import.meta.url), 'utf8'));
const RELATIONS = read('relations.json');
const PRONOUNS = read('pronouns.json');
const ENGLISH = [...RELATIONS.sentences.map((s) => s.text), ...PRONOUNS.items.map((s) => s.text), ...EXAMPLES.map((e) => e.text)];

/** Each text tagged once: the tagger takes most of this file's time. */
const tagged = new Map();
const tag = (/** @type {string} */ text) => {
  if (!tagged.has(text)) tagged.set(text, tagText(nlp, text));
  return tagged.get(text);
};
const tokensOf = (/** @type {string} */ text) => analyseTokens(tag(text));
const limitsOf = (/** @type {string} */ text) => parseLimits(tokensOf(text));

const GERMAN = 'Die Katze saß auf der Matte, weil sie müde war.';
const MISSPELLED = 'Teh cat sat on teh mat becuase it was tird.';
const NOT_ENGLISH = [
  GERMAN,
  'Der Hund jagte den Ball durch den Garten.',
  'Das Wetter ist heute sehr schön.',
  'Le chat était assis sur le tapis parce qu\'il était fatigué.',
  'Marie a donné un livre à Jean, et elle a souri.',
  'El gato se sentó en la alfombra porque estaba cansado.',
  'Mañana vamos a la playa con mis amigos.',
  'Il gatto si è seduto sul tappeto perché era stanco.',
];
const LONG = 'In the morning, the old farmer walked slowly to the busy market in the village, and after he had sold his apples and his eggs to the baker, he met his old friend, who told him that the prices had risen again.';

test('the parse\'s agreement with the hand annotation is what the tagger gives now', () => {
  const { skipped, ...now } = measureParseAgreement(tag, RELATIONS, PRONOUNS);
  const f = (c) => `${c.right} of ${c.total} (${((100 * c.right) / c.total).toFixed(1)}%)`;
  console.log(`on ${now.sentences} annotated sentences (up to ${now.longest} tokens): verb → subject ${f(now.verbSubject)}, modifier → noun ${f(now.modifierNoun)}, antecedent among the agreeing nouns ${f(now.pronounAgreement)}`);
  assert.equal(skipped, 0, 'every annotated sentence is tagged into its words');
  assert.deepEqual(now, PARSE_AGREEMENT, 'web/sources/parse-agreement.js is stale: run node scripts/build/tag-examples.js');
  assert.equal(LIMITS.longest, Math.max(...[...RELATIONS.sentences, ...PRONOUNS.items].map((s) => s.words.length)));
});

test('no hand-annotated English sentence is said to be outside what the tagger reads', () => {
  let unknownShare = 0;
  let functionShare = 1;
  const flagged = [];
  for (const text of ENGLISH) {
    const tokens = tokensOf(text);
    const words = tokens.filter((t) => !t.isPunct);
    unknownShare = Math.max(unknownShare, words.filter((t) => t.unknown).length / words.length);
    functionShare = Math.min(functionShare, words.filter((t) => ENGLISH_FUNCTION_WORDS.has(t.text.toLowerCase())).length / words.length);
    const limits = parseLimits(tokens);
    if (limits.length) flagged.push(`${text}: ${limits.map((l) => l.id)}`);
  }
  console.log(`${ENGLISH.length} English sentences: largest share of words the tagger does not know ${unknownShare.toFixed(2)} (limit ${LIMITS.unknownShare}); smallest share of common English words ${functionShare.toFixed(2)} (limit: none)`);
  assert.deepEqual(flagged, []);
  assert.ok(unknownShare < LIMITS.unknownShare);
  assert.ok(functionShare > 0);
});

test('German, French, Spanish and Italian are likely not English; misspelled words are unknown; a long sentence is long', () => {
  for (const text of NOT_ENGLISH) {
    const limits = limitsOf(text);
    assert.deepEqual(limits.map((l) => l.id), ['notEnglish'], `${text}: ${JSON.stringify(limits)}`);
    assert.match(limits[0].text, /^Likely not English: the tagger, which reads English only, knew nothing of \d+ of its \d+ words/);
  }
  const german = limitsOf(GERMAN)[0].text;
  console.log(german);
  assert.match(german, /letters English does not use \(ß, ü\)/);
  assert.match(german, /none of the common English words/);

  const misspelled = limitsOf(MISSPELLED);
  console.log(misspelled[0].text);
  assert.deepEqual(misspelled.map((l) => l.id), ['unknownWords']);
  assert.match(misspelled[0].text, /knew nothing of 3 of its 10 words \(Teh, teh, tird\)/);

  const long = limitsOf(LONG);
  assert.equal(tokensOf(LONG).length, 47);
  assert.deepEqual(long.map((l) => l.id), ['long']);
  assert.match(long[0].text, /47 tokens, more than any of the hand-annotated sentences the parse was checked against \(at most 28\)/);

  // a short English text without function words or with one unknown name is no sign
  assert.deepEqual(limitsOf('Dogs chase cats daily.').map((l) => l.id), ['unknownWords'], 'the tagger does not know "Dogs" or "cats": said, as a guess, not as "not English"');
  assert.deepEqual(limitsOf('Zoë met her friend at the café.'), [], 'letters English borrows are no sign where the tagger knows the words');
});

test('the designed heads\' checks follow the parse, say so and show its guess; no tick of approval where the text is outside the tagger', async () => {
  const [{ loadMha }, { DesignedSource }, { headMap }] = await Promise.all([
    import('../../web/lib/index.js'), import('../../web/sources/designed.js'), import('../../web/sources/source.js')]);
  const source = new DesignedSource();
  await source.load(await loadMha());
  try {
    for (const text of [GERMAN, MISSPELLED, EXAMPLES[0].text]) {
      const sentence = await source.sentence(text);
      const { weights, stats } = await source.compute(sentence, { parts: false });
      const checks = stats.map((s, h) => source.check(h, headMap(weights, h), sentence, s));
      // position and statistics heads are checked against what the core gives, not the parse
      for (const h of [0, 1, 6, 7]) assert.ok(!checks[h].followsParse, `head ${h + 1}`);
      for (const h of [2, 3, 4, 5]) {
        const c = checks[h];
        assert.equal(c.followsParse, true, `head ${h + 1}`);
        assert.match(c.title, /tagger's parse/);
        assert.match(c.note, /not that the parse is right/);
        assert.equal(c.limits.length, text === EXAMPLES[0].text ? 0 : 1, `${text}, head ${h + 1}: ${c.limits}`);
      }
      const verb = checks[3];
      console.log(`"${text}" head 4: ${verb.holds === null ? '' : verb.holds ? 'follows: ' : 'does not follow: '}${verb.text} | ${verb.guess} | ${verb.limits.join(' ')}`);
      if (text === GERMAN) {
        assert.equal(verb.holds, null, 'the parse finds no verb with a subject: nothing checked is no verdict');
        assert.match(verb.text, /^Nothing to check: the tagger's parse found no verb with a subject/);
        assert.match(verb.limits[0], /^Likely not English/);
      }
      if (text === MISSPELLED) {
        assert.equal(verb.holds, true);
        assert.match(verb.guess, /The tagger's guess, which this head's features were built from: sat → cat; becuase → cat; was → it\./);
        assert.match(verb.limits[0], /^Words the tagger does not know/);
      }
    }
  } finally {
    source.dispose();
  }
});
