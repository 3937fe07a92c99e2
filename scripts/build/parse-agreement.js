// How often the tagger's shallow parse (web/sources/tokens.js) gives what the hand annotation of
// web/data/roles/ says: the subject of each verb, the noun of each determiner, adjective and
// possessive, and, for each pronoun, whether its antecedent is among the nouns the parse finds
// agreeing with it. These are the relations the designed heads' features are built from; the
// page quotes the figures beside each check (web/sources/parse-agreement.js, written by
// scripts/build/tag-examples.js; tests/js/parse-limits.test.js checks it is current).
import { analyseTokens } from '../../web/sources/tokens.js';
import { agreeingNouns } from '../../web/sources/label-checks.js';

const MODIFIER_RELATIONS = new Set(['determinerNoun', 'adjectiveNoun', 'possessiveNoun']);

/**
 * @param {(text: string) => { text: string, tags: string[], unknown?: boolean }[]} tag  a text's tagged tokens (tokens.js tagText with compromise)
 * @param {import('../../web/roles/sentences.js').RelationData} relations
 * @param {import('../../web/roles/sentences.js').PronounData} pronouns
 */
export function measureParseAgreement(tag, relations, pronouns) {
  const count = () => ({ right: 0, total: 0 });
  const out = { sentences: 0, skipped: 0, longest: 0, verbSubject: count(), modifierNoun: count(), pronounAgreement: count() };
  const parsed = (/** @type {{ text: string, words: string[] }} */ s) => {
    const raw = tag(s.text);
    if (raw.length !== s.words.length || raw.some((t, i) => t.text.toLowerCase() !== s.words[i].toLowerCase())) {
      out.skipped += 1;
      return null;
    }
    out.sentences += 1;
    out.longest = Math.max(out.longest, raw.length);
    return analyseTokens(raw);
  };
  const score = (/** @type {{ right: number, total: number }} */ c, /** @type {boolean} */ right) => { c.total += 1; if (right) c.right += 1; };
  for (const s of relations.sentences) {
    const tokens = parsed(s);
    if (!tokens) continue;
    for (const [relation, query, key] of s.relations) {
      if (relation === 'verbSubject') score(out.verbSubject, tokens[query].subject === key);
      else if (MODIFIER_RELATIONS.has(relation)) score(out.modifierNoun, tokens[query].modifies === key);
    }
  }
  for (const item of pronouns.items) {
    const tokens = parsed(item);
    if (!tokens) continue;
    const pronoun = tokens[item.pronoun];
    score(out.pronounAgreement, !!pronoun.pronoun && agreeingNouns(pronoun, tokens).includes(item.antecedent));
  }
  return out;
}
