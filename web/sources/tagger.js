// The lesson's sentences as tagged tokens: the example sentences were tagged at build time
// (examples.tagged.js); other text loads the compromise part-of-speech tagger, once, when first
// needed (about 137 KB gzipped).
import { TAGGED_EXAMPLES } from './examples.tagged.js';
import { tagText } from './tokens.js';

let taggerPromise = null;

/** compromise's default export. */
export function loadTagger() {
  if (!taggerPromise) {
    taggerPromise = import('../vendor/compromise-three.mjs').then((m) => m.default).catch((error) => {
      taggerPromise = null;
      throw new Error(`The part-of-speech tagger (web/vendor/compromise-three.mjs; run "node scripts/vendor.js") could not be loaded: ${error.message}`);
    });
  }
  return taggerPromise;
}

/** Raw tagged tokens of a text: pre-tagged for the examples, else from the tagger. */
export async function tagSentence(text) {
  const stored = TAGGED_EXAMPLES[text];
  if (stored) return stored;
  return tagText(await loadTagger(), text);
}
