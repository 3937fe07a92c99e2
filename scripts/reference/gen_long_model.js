// The committed model with GPT-2's context of 1,024 positions (the other golden GPT-2s read 32 to
// 128): 3 layers of 4 heads, width 32, weights at GPT-2's initialisation from a fixed seed, and a
// byte-level tokenizer without merges, so that a text of N ASCII characters is N tokens. The
// browser tests open a 1,000-token text with it in every view.
//
//   node scripts/reference/gen_long_model.js     (writes tests/golden/models/gpt2-long/)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRandomCheckpoint } from '../export/random_checkpoint.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const { dir, bytes } = writeRandomCheckpoint('gpt2-long-tiny', 'F32', path.join(root, 'tests', 'golden', 'models', 'gpt2-long'), 1024);
console.log(`${path.relative(root, dir)}: model.safetensors ${bytes} bytes`);
