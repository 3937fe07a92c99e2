// A model's tokenizer (web/lib/tokenizer.js: Hugging Face's tokenizer library, vendored) on real
// tokenizer.json files: GPT-2's (byte-level BPE), Llama 2's (SentencePiece's BPE with byte
// fallback) and Llama 3's (byte-level BPE with a Unicode-class regex), read from the
// @lenml/tokenizer-* packages in node_modules, and the golden models' WordPiece and character
// vocabularies. Their ids are those of @lenml/tokenizers (another JavaScript implementation, the
// packages' own) on every committed text and more; how their pieces read (the text each shows,
// the words they make, the special tokens) comes from each tokenizer's own decoder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTokenizer } from '../../web/lib/tokenizer.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODELS = path.join(ROOT, 'tests', 'golden', 'models');
const REAL = ['gpt2', 'llama2', 'llama3'];
const realDir = (name) => path.join(ROOT, 'node_modules', '@lenml', `tokenizer-${name}`, 'models');
const readIf = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null);
/** A folder's tokenizer.json with its tokenizer_config.json, and the vocabulary as parsed. */
async function open(dir) {
  const text = fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8');
  return { tokenizer: await loadTokenizer(text, readIf(path.join(dir, 'tokenizer_config.json'))), vocab: JSON.parse(text).model.vocab };
}
/** The text of each word: its pieces' texts joined, without the white space around it. */
const wordTexts = ({ words, texts }) => {
  const out = [];
  words.forEach((w, i) => { out[w] = (out[w] ?? '') + texts[i]; });
  return out.map((t) => t.trim());
};

const committed = JSON.parse(fs.readFileSync(path.join(MODELS, 'tokenizer_cases.json'), 'utf8'));
const TEXTS = [...committed.tokenizers.bpe.cases.map((c) => c.text), 'Hello world', ' leading space', 'naïve café’s 日本語 😀', 'a\n\nb\tc', '<s> and </s> as text'];

test('real tokenizers give the ids of @lenml/tokenizers on every committed text and more', async () => {
  for (const name of REAL) {
    const { tokenizer } = await open(realDir(name));
    const { fromPreTrained } = await import(`@lenml/tokenizer-${name}`);
    const other = fromPreTrained();
    let tokens = 0;
    for (const text of TEXTS) {
      const ids = tokenizer.encode(text);
      assert.deepEqual(ids, other.encode(text), `${name} on ${JSON.stringify(text)}`);
      tokens += ids.length;
    }
    console.log(`    ${name} (${tokenizer.info.name}, ${tokenizer.info.vocabSize} pieces): ${TEXTS.length} texts, ${tokens} ids, the same`);
  }
  const { tokenizer } = await open(realDir('gpt2'));
  assert.deepEqual(tokenizer.encode('Hello world'), [15496, 995], 'GPT-2\'s ids for "Hello world", as published');
});

test('what a piece shows is its decoder\'s text; a piece that ends inside a character, as spelled', async () => {
  const gpt2 = await open(realDir('gpt2'));
  const shown = (t, pieces) => t.tokenizer.read(pieces.map((p) => t.vocab[p])).texts;
  // U+2019 is two pieces in GPT-2's vocabulary, its first two bytes and its third: each shown as spelled
  assert.deepEqual(shown(gpt2, ['Ġcat', 'Ċ', 'âĢ', 'Ļ', 'Ġ']), [' cat', '\n', 'âĢ', 'Ļ', ' ']);
  const llama2 = await open(realDir('llama2'));
  assert.deepEqual(shown(llama2, ['▁cat', '▁', '<0x0A>', '<0xE2>']), [' cat', ' ', '\n', '<0xE2>']);
  const llama3 = await open(realDir('llama3'));
  assert.deepEqual(shown(llama3, ['ĠcafÃ©', 'Ġ'.repeat(3), 'âĢĻ']), [' café', '   ', '’']);
  const bert = await open(path.join(MODELS, 'bert-mlm'));
  const some = Object.keys(bert.vocab).find((p) => p.startsWith('##') && p.length > 2);
  assert.deepEqual(shown(bert, [some, '[CLS]']), [some.slice(2), ' [CLS]']);
});

test('pieces make the same words under every tokenizer; special tokens and punctuation stand alone', async () => {
  const text = 'The quick brown fox jumps over the lazy dog, again.';
  const words = ['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog', ',', 'again', '.'];
  const expected = {
    gpt2: words, llama2: ['<s>', ...words], llama3: words,
    'wordpiece-uncased': ['[CLS]', ...words.map((w) => w.toLowerCase()), '[SEP]'], char: words,
  };
  for (const [name, want] of Object.entries(expected)) {
    const dir = REAL.includes(name) ? realDir(name) : path.join(MODELS, 'tokenizers', name);
    const { tokenizer } = await open(dir);
    const reading = tokenizer.read(tokenizer.encode(text));
    assert.deepEqual(wordTexts(reading), want, name);
    // the roles rule's convention: "▁" on the first piece of each word, and nowhere else
    reading.marked.forEach((m, i) => assert.equal(m.startsWith('▁'), i === 0 || reading.words[i] !== reading.words[i - 1], `${name} piece ${i} ${m}`));
    const special = reading.special.flatMap((s, i) => (s ? [reading.pieces[i]] : []));
    assert.deepEqual(special, want.filter((w) => /^(<s>|\[CLS\]|\[SEP\])$/.test(w)), `${name}: the special tokens`);
    console.log(`    ${name}: ${reading.pieces.length} pieces, ${want.length} words`);
  }
  // a word split into pieces stays one word: WordPiece's "##", byte-level BPE's pieces without a space
  const { tokenizer } = await open(path.join(MODELS, 'tokenizers', 'wordpiece-uncased'));
  const split = tokenizer.read(tokenizer.encode('jumps'));
  assert.ok(split.pieces.length > 3 && split.pieces.slice(2, -1).every((p) => p.startsWith('##')), split.pieces.join(' '));
  assert.deepEqual(wordTexts(split), ['[CLS]', 'jumps', '[SEP]']);
  const gpt2 = (await open(realDir('gpt2'))).tokenizer;
  const end = gpt2.read(gpt2.encode("tokenizers' words<|endoftext|>"));
  assert.deepEqual(wordTexts(end), ['tokenizers', "'", 'words', '<|endoftext|>']);
  assert.ok(end.pieces.length > 4, 'tokenizers is more than one piece');
});

test('the mask token: tokenizer_config.json\'s mask_token, else the special token [MASK]', async () => {
  const dir = path.join(MODELS, 'bert-mlm');
  const text = fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8');
  const { vocab } = JSON.parse(text).model;
  assert.equal((await loadTokenizer(text)).info.maskId, vocab['[MASK]']);
  assert.equal((await loadTokenizer(text, JSON.stringify({ mask_token: { content: '[UNK]' } }))).info.maskId, vocab['[UNK]']);
  assert.equal((await open(realDir('gpt2'))).tokenizer.info.maskId, null);
  const tokenizer = await loadTokenizer(text);
  const ids = tokenizer.encode('the [MASK] sat');
  assert.equal(ids.filter((id) => id === tokenizer.info.maskId).length, 1);
  assert.throws(() => tokenizer.encode(42), { name: 'MhaError', code: 'INVALID_ARGUMENT', message: /encode: expected a string, got 42/ });
  await assert.rejects(loadTokenizer('{"model": 3}', null, { tokenizerFile: 'x/tokenizer.json' }),
    { name: 'MhaError', code: 'INVALID_CONFIG', message: /^x\/tokenizer\.json: field 'model' is 3; expected an object/ });
});

test('tokenizer.json damaged at random: every load and encoding gives ids or an MhaError naming the file', async () => {
  let seed = 12345;
  const next = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const VALUES = [null, 5, -1, 'x', '', [], {}, true, { type: 'Nope' }, [1, 2], 1.5];
  // every field's path; of a large object (a vocabulary), 5 of its entries
  const paths = (value, at = [], out = []) => {
    if (value === null || typeof value !== 'object') return out;
    const keys = Object.keys(value);
    for (const key of keys.length > 50 ? Array.from({ length: 5 }, () => keys[next(keys.length)]) : keys) {
      out.push([...at, key]);
      paths(value[key], [...at, key], out);
    }
    return out;
  };
  let read = 0, refused = 0;
  for (const name of ['tokenizers/bpe', 'tokenizers/wordpiece-uncased', 'nanogpt-char']) {
    const text = fs.readFileSync(path.join(MODELS, name, 'tokenizer.json'), 'utf8');
    for (let round = 0; round < 300; round += 1) {
      const json = JSON.parse(text);
      const all = paths(json);
      const field = all[next(all.length)];
      let parent = json;
      for (const key of field.slice(0, -1)) parent = parent[key];
      parent[field.at(-1)] = VALUES[next(VALUES.length)];
      try {
        const tokenizer = await loadTokenizer(JSON.stringify(json));
        tokenizer.read(tokenizer.encode("It's 2024: Café 😀 [MASK] <|endoftext|>  ok"));
        read += 1;
      } catch (error) {
        assert.equal(error.name, 'MhaError', `${name}: ${field.join('.')} = ${JSON.stringify(parent[field.at(-1)])}: ${error.stack}`);
        assert.match(error.message, /^tokenizer\.json: /);
        refused += 1;
      }
    }
  }
  console.log(`    900 damaged tokenizer.json files: ${read} read, ${refused} refused`);
  assert.ok(read > 0 && refused > 0);
});
