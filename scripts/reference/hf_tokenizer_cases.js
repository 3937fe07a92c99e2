// Writes tests/golden/models/tokenizer_cases.json: the ids of the committed texts under each
// small tokenizer.json (tests/golden/models/tokenizers/*/, written by
// scripts/reference/hf_reference.py), as the reference tokenizer, @huggingface/tokenizers (pure JS,
// the tokenizers of transformers.js), encodes them. The models' tokenizer (web/lib/tokenizer.js,
// the same library, vendored) is tested against these ids (tests/js/models.test.js);
// tests/js/hf-tokenizers.test.js checks that the library in node_modules still gives them.
//
//   node scripts/reference/hf_tokenizer_cases.js          (writes the file)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MODELS_DIR = path.join(ROOT, 'tests', 'golden', 'models');
export const CASES_FILE = path.join(MODELS_DIR, 'tokenizer_cases.json');

// Texts for every tokenizer: plain sentences first (the model cases take their first ones),
// then what tokenizers get wrong: contractions, digits, runs of spaces, tabs and newlines,
// accents (composed and decomposed), other scripts, emoji (astral, joined, with modifiers),
// punctuation runs, the special tokens written in the text, and the empty text.
export const TEXTS = [
  'the king follows himself.',
  'At dawn each woman helps herself.',
  'a big cat that those girls like sees the queens.',
  "It's what we'll do; they'd've known, I'm sure, you're right.",
  "Don't SHOUT: IT'S LOUD'S",
  'In 2024 we had 3.14159 and 1,000,000 people; ½ and ² and ٣ and 四.',
  'two  spaces,   three,    four     and trailing   ',
  '  leading spaces\tand a tab\nand a newline\r\n\n  and  more',
  'Café naïve résumé Ångström façade — “quotes” and ‘single’',
  'Cafe\u0301 nai\u0308ve (decomposed accents)',
  'ΟΔΟΣ ὁδός Привет мир שלום مرحبا',
  '日本語のテキスト and 中文字符 mixed with English',
  'emoji 😀👍🏽 family 👨‍👩‍👧 flag 🇫🇷 and ❤️',
  'punctuation!!! ??? ... --- (brackets) [square] {curly} <angle> @#$%^&*_+=|\\/~`',
  'the [MASK] follows himself. [CLS] and [SEP] in text',
  'end of text <|endoftext|> and after',
  'ÀÉÎÕÜ ß ẞ İstanbul ǅ ﬁ ℌ',
  '\u00a0no-break\u2009thin\u3000ideographic\ufefffeff',
  'zero\u200bwidth\u200djoiner and soft\u00adhyphen',
  'a',
  '',
  'x'.repeat(120) + ' a long word',
];

export function referenceIds(tokenizerJson, text) {
  return new Tokenizer(tokenizerJson, {}).encode(text).ids;
}

export function buildCases() {
  const dir = path.join(MODELS_DIR, 'tokenizers');
  const tokenizers = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const json = JSON.parse(fs.readFileSync(path.join(dir, name, 'tokenizer.json'), 'utf8'));
    const tokenizer = new Tokenizer(json, {});
    tokenizers[name] = { cases: TEXTS.map((text) => ({ text, ids: tokenizer.encode(text).ids })) };
  }
  return {
    description: 'ids of each text under each tokenizer.json of tokenizers/, as @huggingface/tokenizers encodes them (scripts/reference/hf_tokenizer_cases.js)',
    reference: '@huggingface/tokenizers',
    tokenizers,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cases = buildCases();
  fs.writeFileSync(CASES_FILE, JSON.stringify(cases, null, 1) + '\n');
  const counts = Object.entries(cases.tokenizers).map(([name, t]) => `${name} ${t.cases.length}`);
  console.log(`wrote ${path.relative(ROOT, CASES_FILE)}: ${counts.join(', ')}`);
}
