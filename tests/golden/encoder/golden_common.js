// Reading the encoder's golden cases (tests/golden/encoder,
// scripts/reference/gen_encoder_golden.js): cases.json and the float32 values of cases.f32.
import fs from 'node:fs';

const dir = new URL('./', import.meta.url);

export function loadEncoderGolden() {
  const json = JSON.parse(fs.readFileSync(new URL('cases.json', dir), 'utf8'));
  const bytes = fs.readFileSync(new URL(json.floats, dir));
  const floats = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  if (floats.length !== json.float_count) throw new Error(`${json.floats} holds ${floats.length} floats, cases.json says ${json.float_count}`);
  const slice = ({ offset, shape }) => floats.subarray(offset, offset + shape.reduce((a, b) => a * b, 1));
  const cases = json.cases.map((c) => ({
    ...c,
    text: c.text ?? String.fromCodePoint(...c.code_points),
    expectedWeights: c.weights.map((w) => ({ data: slice(w), shape: w.shape })),
    expectedEmbedding: slice(c.embedding),
  }));
  return { cases, tolerances: json.tolerances, maxTokens: json.max_tokens, reference: json.reference };
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}
