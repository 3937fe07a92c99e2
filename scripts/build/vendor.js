// Copy the npm packages the page loads in the browser into web/vendor/ (gitignored), so the
// page needs no bundler and no CDN: `node scripts/build/vendor.js` (setup.js runs it).
import { copyFileSync, cpSync, mkdirSync, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const vendorDir = join(root, 'web', 'vendor');

// [package file, name in web/vendor]
const FILES = [
  // the tagger with its chunker; an ES module (export default nlp)
  ['compromise/builds/three/compromise-three.mjs', 'compromise-three.mjs'],
  // KaTeX for the lesson's formulas (loaded only where a formula is shown): the ES module,
  // its stylesheet and the fonts the stylesheet names (relative url(fonts/...)).
  ['katex/dist/katex.mjs', 'katex/katex.mjs'],
  ['katex/dist/katex.min.css', 'katex/katex.min.css'],
  ['katex/dist/fonts', 'katex/fonts'],
  // Hugging Face's tokenizer library (an ES module, no dependencies; Apache-2.0, its licence
  // beside it), loaded only where a model's tokenizer.json is read (web/lib/tokenizer.js)
  ['@huggingface/tokenizers/dist/tokenizers.min.mjs', 'tokenizers.mjs'],
  ['@huggingface/tokenizers/LICENSE', 'tokenizers.LICENSE'],
];

mkdirSync(vendorDir, { recursive: true });
for (const [from, to] of FILES) {
  const source = join(root, 'node_modules', from);
  if (!existsSync(source)) {
    console.error(`vendor: expected ${from} in node_modules (run npm install), not found at ${source}`);
    process.exit(1);
  }
  mkdirSync(dirname(join(vendorDir, to)), { recursive: true });
  if (statSync(source).isDirectory()) cpSync(source, join(vendorDir, to), { recursive: true });
  else copyFileSync(source, join(vendorDir, to));
  console.log(`vendor: ${from} -> web/vendor/${to}`);
}
