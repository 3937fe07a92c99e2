// A model's tokenizer (web/lib/tokenizer.js: Hugging Face's tokenizer library, vendored) on real
// tokenizer.json files: GPT-2's (byte-level BPE), Llama 2's (SentencePiece's BPE with byte
// fallback) and Llama 3's (byte-level BPE with a Unicode-class regex), read from the
// @lenml/tokenizer-* packages in node_modules, and the golden models' WordPiece and character
// vocabularies. Their ids are those of @lenml/tokenizers (another JavaScript implementation, the
// packages' own) on every committed text and more, and Llama 2's and Llama 3's (as shipped and in
// the forms later checkpoints ship them) those of @huggingface/tokenizers' own encode; how their
// pieces read (the text each shows, a split character's on each of its pieces, the words they
// make, the special tokens) comes from each tokenizer's own decoder.
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
/** Each folder opened so far: a tokenizer is only read, so the tests share one (Llama 3's takes seconds to load). */
const opened = new Map();
/** A folder's tokenizer.json with its tokenizer_config.json, and the vocabulary as parsed. */
function open(dir) {
  if (!opened.has(dir)) {
    opened.set(dir, (async () => {
      const text = fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8');
      return { tokenizer: await loadTokenizer(text, readIf(path.join(dir, 'tokenizer_config.json'))), vocab: JSON.parse(text).model.vocab };
    })());
  }
  return opened.get(dir);
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

test('what a piece shows is its decoder\'s text; pieces that split a character, the character; bytes that spell none, as spelled', async () => {
  const gpt2 = await open(realDir('gpt2'));
  const shown = (t, pieces) => t.tokenizer.read(pieces.map((p) => t.vocab[p])).texts;
  // U+2019 is two pieces in GPT-2's vocabulary, its first two bytes and its third: each shows it
  assert.deepEqual(shown(gpt2, ['Ġcat', 'Ċ', 'âĢ', 'Ļ', 'Ġ']), [' cat', '\n', '’', '’', ' ']);
  // its first two bytes alone spell nothing: shown as the vocabulary spells it
  assert.deepEqual(shown(gpt2, ['Ġcat', 'âĢ', 'Ġ']), [' cat', 'âĢ', ' ']);
  const llama2 = await open(realDir('llama2'));
  assert.deepEqual(shown(llama2, ['▁cat', '▁', '<0x0A>', '<0xE2>']), [' cat', ' ', '\n', '<0xE2>']);
  assert.deepEqual(shown(llama2, ['▁', '<0xE2>', '<0x80>', '<0x99>', '<0xF0>', '<0x9F>', '<0x8D>', '<0x95>']), [' ', '’', '’', '’', '🍕', '🍕', '🍕', '🍕']);
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

// The two ways Llama-family checkpoints ship their tokenizer: Llama 3's (and SmolLM's, Qwen2's)
// byte-level BPE after a Split regex, with ignore_merges; Llama 2's (and TinyLlama's)
// SentencePiece BPE, "▁" for spaces and <0xNN> pieces for bytes it has no piece for. The texts
// cover English, accented Latin, CJK and emoji (one of which Llama 2 spells byte by byte).
const LLAMA_TEXTS = [
  'The quick brown fox jumps over the lazy dog.', 'Hello world, how are you?', ' leading space',
  'naïve café déjà vu', 'Zoë and Chloé in Malmö', '日本語のテキスト', '中文 和 한국어', 'I ❤️ 😀 pizza 🍕',
  'family: 👨‍👩‍👧 and 👍🏽', 'x² ≤ π · 𝔘', 'a\n\nb\tc',
];
/** Each variant: a tokenizer.json changed as later checkpoints ship it. */
const VARIANTS = {
  llama2: {
    // TinyLlama's and later SentencePiece exports: a Metaspace pre-tokeniser instead of the normaliser's Prepend and Replace
    metaspace: (j) => ({ ...j, normalizer: null, pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false },
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] } }),
  },
  llama3: {
    // Llama 3.1's and SmolLM's: the post-processor puts <|begin_of_text|> first
    bos: (j) => ({ ...j, post_processor: { type: 'Sequence', processors: [
      { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
        special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } } }] } }),
    // Qwen2's: NFC first
    nfc: (j) => ({ ...j, normalizer: { type: 'NFC' } }),
    // merges applied to words the vocabulary has whole
    noIgnoreMerges: (j) => ({ ...j, model: { ...j.model, ignore_merges: false } }),
  },
};

test('Llama 2 and Llama 3 tokenizer.json, and the forms later checkpoints ship: ids exactly those of @huggingface/tokenizers\' own encode', async () => {
  const { Tokenizer } = await import('@huggingface/tokenizers');
  const decomposed = 'cafe\u0301 naï\u0308ve'.normalize('NFD');
  for (const name of ['llama2', 'llama3']) {
    const dir = realDir(name);
    assert.ok(fs.existsSync(path.join(dir, 'tokenizer.json')), `${dir}/tokenizer.json: expected in node_modules (npm ci)`);
    const base = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
    const ids = {};
    const loaded = {};
    for (const [variant, change] of [['as shipped', (j) => j], ...Object.entries(VARIANTS[name])]) {
      const json = change(structuredClone(base));
      // as shipped: the folder's files as open() reads them
      const ours = variant === 'as shipped' ? (await open(dir)).tokenizer : await loadTokenizer(JSON.stringify(json), JSON.stringify(config));
      loaded[variant] = ours;
      const reference = new Tokenizer(json, config);
      let count = 0;
      ids[variant] = [];
      for (const text of [...LLAMA_TEXTS, decomposed]) {
        const got = ours.encode(text);
        assert.deepEqual(got, reference.encode(text).ids, `${name} (${variant}) on ${JSON.stringify(text)}`);
        ids[variant].push(got);
        count += got.length;
      }
      console.log(`    ${name} ${variant}: ${LLAMA_TEXTS.length + 1} texts, ${count} ids, the same as @huggingface/tokenizers`);
    }
    if (name === 'llama2') {
      // BOS <s> from the post-processor; the Metaspace form reads every text as Prepend + Replace does
      assert.ok(ids['as shipped'].every((i) => i[0] === 1 && i.indexOf(1, 1) < 0));
      const differ = LLAMA_TEXTS.filter((t, k) => ids.metaspace[k].join() !== ids['as shipped'][k].join());
      console.log(`    llama2: Metaspace and Prepend + Replace differ on ${JSON.stringify(differ)}`);
      // byte fallback: 🍕 has no piece, its four bytes <0xF0> <0x9F> <0x8D> <0x95> are ids 3 + byte
      assert.deepEqual(ids['as shipped'][LLAMA_TEXTS.indexOf('I ❤️ 😀 pizza 🍕')].slice(-4), [0xF0, 0x9F, 0x8D, 0x95].map((b) => b + 3));
    } else {
      assert.ok(ids['as shipped'].every((i) => i[0] !== 128000), 'the shipped post-processor adds no BOS');
      assert.ok(ids.bos.every((i, k) => i[0] === 128000 && i.slice(1).join() === ids['as shipped'][k].join()), 'the template adds <|begin_of_text|> first');
      // NFC: the decomposed text reads as the composed one; without it, it does not
      const last = LLAMA_TEXTS.length;
      const composed = loaded.nfc.encode(decomposed.normalize('NFC'));
      assert.deepEqual(ids.nfc[last], composed);
      assert.notDeepEqual(ids['as shipped'][last], composed);
    }
  }
});

test('Llama 2 and Llama 3: every piece shows text, a byte-fallback or split byte the character it helps spell; pieces make words', async () => {
  const expected = {
    'The quick brown fox jumps over the lazy dog.': ['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog', '.'],
    'naïve café déjà vu': ['naïve', 'café', 'déjà', 'vu'],
    'Zoë and Chloé in Malmö': ['Zoë', 'and', 'Chloé', 'in', 'Malmö'],
    '日本語のテキスト': ['日本語のテキスト'],
    '中文 和 한국어': ['中文', '和', '한국어'],
    'I ❤️ 😀 pizza 🍕': ['I', '❤️', '😀', 'pizza', '🍕'],
  };
  const shownPieces = {};
  for (const name of ['llama2', 'llama3']) {
    const { tokenizer } = await open(realDir(name));
    for (const [text, words] of Object.entries(expected)) {
      const reading = tokenizer.read(tokenizer.encode(text));
      const bos = name === 'llama2' ? ['<s>'] : [];
      // the words, from each piece's own characters (the roles rule's reading): "▁" on each word's
      // first piece only, and each character once (a character split over pieces is shown on each)
      const marked = [];
      reading.marked.forEach((m, i) => { marked[reading.words[i]] = (marked[reading.words[i]] ?? '') + m.replace(/^▁/, ''); });
      assert.deepEqual(marked, [...bos, ...words], `${name}: the words of ${JSON.stringify(text)}`);
      reading.marked.forEach((m, i) => assert.equal(m.startsWith('▁'), i === 0 || reading.words[i] !== reading.words[i - 1], `${name} piece ${i} ${m}`));
      // no piece shows a byte: every text is characters of the text
      for (const [i, t] of reading.texts.entries()) {
        if (reading.special[i]) continue;
        assert.ok(!/<0x|\uFFFD/.test(t), `${name}: piece ${reading.pieces[i]} shows ${JSON.stringify(t)}`);
        assert.ok(t.trim() === '' || text.includes(t.trim()), `${name}: piece ${reading.pieces[i]} shows ${JSON.stringify(t)}, not in the text`);
      }
      shownPieces[`${name} ${text}`] = reading.pieces.map((p, i) => `${p}=${reading.texts[i]}`);
    }
  }
  // 🍕 in Llama 2 is four byte-fallback pieces, each showing 🍕; in Llama 3 three byte-level pieces
  const pizza = (name) => shownPieces[`${name} I ❤️ 😀 pizza 🍕`].slice(-4);
  assert.deepEqual(pizza('llama2'), ['<0xF0>=🍕', '<0x9F>=🍕', '<0x8D>=🍕', '<0x95>=🍕']);
  assert.deepEqual(pizza('llama3'), ['Ġpizza= pizza', 'ĠðŁ= 🍕', 'į=🍕', 'ķ=🍕']);
  for (const [k, v] of Object.entries(shownPieces)) if (/🍕|日本/.test(k)) console.log(`    ${k}: ${v.join(' | ')}`);
});
