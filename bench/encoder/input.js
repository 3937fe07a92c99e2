// The encoder benchmark's inputs: the ids of the first example sentence (12 tokens) and of the
// golden case of exactly 128 tokens, as the model's own tokenizer gives them
// (tests/golden/encoder/cases.json), so that no engine tokenizes.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../data.js';

const CASES = { 12: 'example_0', 128: 'tokens_128' };
export const ENCODER_TOKENS = [12, 128];

export function encoderInput(tokens) {
  const json = JSON.parse(fs.readFileSync(path.join(repoRoot, 'tests/golden/encoder/cases.json'), 'utf8'));
  const found = json.cases.find((c) => c.name === CASES[tokens]);
  if (!found || found.ids.length !== tokens) throw new Error(`no golden case of ${tokens} tokens (${CASES[tokens]})`);
  return found.ids;
}
