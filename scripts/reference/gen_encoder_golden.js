// Writes the encoder's golden cases, tests/golden/encoder/cases.json and cases.f32, from the
// model's own TF.js tokenizer and graph (scripts/reference/use_lite_reference.js):
//   - the sentences of tests/golden/encoder/sentences.json, the seven example sentences of
//     web/sources/examples.js, a text of exactly 128 tokens and one longer than 128 (whose graph
//     output covers its first 128 tokens: the graph cuts there, as encode({ truncate }) does);
//   - per case: the text (code_points where it holds a lone surrogate), its NFKC form where
//     that differs (nfkc, nfkc_code_points), the reference tokenizer's ids, and from the graph each layer's attention
//     weights [H, T, T] and the 512-d embedding, as float32 in cases.f32 (offsets in floats).
// For the empty text the graph attends over one padding position that is no token; the case
// keeps weights of shape [H, 0, 0] and the graph's embedding. `npm test` only reads these files.
//
//   node scripts/reference/gen_encoder_golden.js
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLES } from '../../web/sources/examples.js';
import { MODEL_PACKAGE, MODEL_PACKAGE_VERSION, readModelPackage } from '../build/use-lite/package-files.js';
import { loadReferenceGraph, NUM_LAYERS, referenceTokenizer, TOKENIZER_PACKAGE, TOKENIZER_VERSION } from './use_lite_reference.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = path.join(root, 'tests/golden/encoder');
const MAX_TOKENS = 128;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Words appended one at a time until the text has exactly `count` tokens. */
function textOfTokens(tokenizer, count) {
  const words = EXAMPLES.map((e) => e.text).join(' ').split(' ');
  let text = '';
  for (let i = 0; ; ++i) {
    const next = text ? `${text} ${words[i % words.length]}` : words[0];
    const n = tokenizer.encode(next).length;
    if (n === count) return next;
    if (n > count) {
      // one word too many: try the other words until one fits exactly
      const fit = words.map((w) => `${text} ${w}`).find((t) => tokenizer.encode(t).length === count);
      if (fit) return fit;
    }
    text = next;
    if (n > count) throw new Error(`no text of exactly ${count} tokens found`);
  }
}

async function main() {
  const modelPackage = readModelPackage();
  const tokenizer = referenceTokenizer(modelPackage.vocab);
  const graph = await loadReferenceGraph({ backend: 'cpu', modelPackage });
  const sentences = JSON.parse(fs.readFileSync(path.join(dir, 'sentences.json'), 'utf8'));
  const inputs = EXAMPLES.map((e, i) => ({ name: `example_${i}`, group: 'examples', text: e.text }));
  for (const [group, texts] of Object.entries(sentences.groups)) {
    texts.forEach((text, i) => inputs.push({ name: `${group}_${i}`, group, text }));
  }
  const exact = textOfTokens(tokenizer, MAX_TOKENS);
  inputs.push({ name: 'tokens_128', group: 'length', text: exact });
  inputs.push({ name: 'tokens_over_128', group: 'length', text: `${exact} ${EXAMPLES[1].text} ${EXAMPLES[2].text}` });

  const floats = [];
  let offset = 0;
  const push = (data) => {
    floats.push(Float32Array.from(data));
    const at = offset;
    offset += data.length;
    return at;
  };
  const cases = [];
  for (const input of inputs) {
    const ids = tokenizer.encode(input.text);
    if (ids.some((id) => id >= modelPackage.vocab.length)) throw new Error(`${input.name}: an id past the vocabulary`);
    const kept = ids.slice(0, MAX_TOKENS);
    const out = await graph.run(kept);
    const T = kept.length;
    const weights = out.weights.map((w, layer) => {
      const [, H, L, S] = out.weightShapes[layer];
      if (T === 0) return { offset: push([]), shape: [H, 0, 0] };
      if (L !== T || S !== T) throw new Error(`${input.name}: layer ${layer} weights are ${L}×${S} for ${T} tokens`);
      return { offset: push(w), shape: [H, T, T] };
    });
    const entry = { name: input.name, group: input.group };
    if (LONE_SURROGATE.test(input.text)) entry.code_points = Array.from(input.text, (c) => c.codePointAt(0));
    else entry.text = input.text;
    // the text after NFKC, the reference tokenizer's first step (String.prototype.normalize),
    // where it differs: the core's tokenizer takes normalised text
    const nfkc = input.text.normalize('NFKC');
    if (nfkc !== input.text) {
      if (LONE_SURROGATE.test(nfkc)) entry.nfkc_code_points = Array.from(nfkc, (c) => c.codePointAt(0));
      else entry.nfkc = nfkc;
    }
    entry.ids = ids;
    if (ids.length > MAX_TOKENS) entry.truncated_to = MAX_TOKENS;
    entry.weights = weights;
    entry.embedding = { offset: push(out.embedding), shape: [out.embedding.length] };
    cases.push(entry);
  }
  graph.dispose();
  const all = new Float32Array(offset);
  let at = 0;
  for (const f of floats) {
    all.set(f, at);
    at += f.length;
  }
  fs.writeFileSync(path.join(dir, 'cases.f32'), Buffer.from(all.buffer));
  const json = {
    description: 'Golden cases of the pretrained encoder (Universal Sentence Encoder lite): the reference tokenizer\'s ids and the TF.js graph\'s attention weights and embedding. Written by scripts/reference/gen_encoder_golden.js; floats are little-endian float32 in cases.f32, offsets and shapes in floats.',
    reference: {
      model: `${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}`,
      tokenizer: `${TOKENIZER_PACKAGE}@${TOKENIZER_VERSION} (Tokenizer, dist/tokenizer)`,
      graph: '@tensorflow/tfjs-converter@4.22.0 on @tensorflow/tfjs-backend-cpu@4.22.0',
      node: process.version,
      attention_nodes: `…/TransformerStack/Layer_{0..${NUM_LAYERS - 1}}/TransformerLayer/MultiheadAttention/DotProductAttention/BaseDotProductAttention/attention_weights`,
    },
    tolerances: { weights: 1e-5, embedding: 1e-4 },
    max_tokens: MAX_TOKENS,
    floats: 'cases.f32',
    float_count: offset,
    cases,
  };
  fs.writeFileSync(path.join(dir, 'cases.json'), `${JSON.stringify(json, null, 0).replace(/\},\{"name"/g, '},\n{"name"')}\n`);
  console.log(`wrote tests/golden/encoder/cases.json (${cases.length} cases) and cases.f32 (${(4 * offset / 1e6).toFixed(2)} MB)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
