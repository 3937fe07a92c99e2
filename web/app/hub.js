// The page's box for models on the Hugging Face Hub: a repository id typed or picked among a few
// suggestions (their sizes from the Hub's models API, asked only once the box is opened), the
// models kept in this browser's Cache Storage with their sizes and a button to delete each, and
// the Hub's address (a mirror), and how long a model's tokenizer may take on one text (every model
// the page opens: a stranger's tokenizer.json may backtrack without end). Opening goes through the
// explorer like every source; a link that names a model larger than ASK_ABOVE_BYTES asks before
// downloading it (askBeforeLinkDownload).
import { el, showError } from '../views/dom.js';
import { hubRepoOf, hubSpec } from '../explorer/sources.js';
import { tokenizeTimeLimitOf } from '../explorer/tokenize-limit.js';
import { sizeText } from '../explorer/present.js';
import { explorer } from './explorer.js';

export { sizeText };

export const HUB_DEFAULT = 'https://huggingface.co';
/** A link that would download more than this asks first. */
export const ASK_ABOVE_BYTES = 100e6;
/** A few models a course means, each one repository of a family the core runs. */
export const SUGGESTED = ['openai-community/gpt2', 'distilbert/distilgpt2', 'google-bert/bert-base-uncased', 'HuggingFaceTB/SmolLM2-135M', 'Qwen/Qwen2.5-0.5B'];

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** Why the Hub gave no size, in a few words (the whole message in the title). @param {unknown} error */
function noSize(error) {
  const message = error instanceof Error ? error.message : String(error);
  return /HTTP 404/.test(message) ? 'not on this Hub' : /HTTP 40[13]/.test(message) ? 'gated or private' : /has no model\.safetensors|no config\.json/.test(message) ? 'no safetensors weights' : 'size not known (offline?)';
}

/** The Hub's address in the box, or undefined for the default. */
function endpointOf() {
  const value = /** @type {HTMLInputElement} */ ($('hub-endpoint')).value.trim();
  return value && value.replace(/\/+$/, '') !== HUB_DEFAULT ? value : undefined;
}

const models = () => import('../lib/models.js');

/** The library's limit, which a spec leaves out. */
const DEFAULT_LIMIT_MS = 5000;
/** What the page's messages call its control. */
const LIMIT_NAME = 'The tokenizer time limit';

/**
 * The tokenizer's time limit set in the page, in ms (undefined: the default); an Error with
 * what was expected when the box holds something else.
 */
export function pageTokenizeTimeLimit() {
  const limit = tokenizeTimeLimitOf(/** @type {HTMLInputElement} */ ($('tokenize-time-limit')).value, LIMIT_NAME);
  return limit === DEFAULT_LIMIT_MS ? undefined : limit;
}

/**
 * A model spec with the page's time limit on its tokenizer.
 * @param {{ id: 'model', url: string, endpoint?: string, tokenizeTimeLimit?: number }} spec
 * @returns {import('../explorer/sources.js').SourceSpec}
 */
export function withPageLimit(spec) {
  const limit = pageTokenizeTimeLimit();
  const { tokenizeTimeLimit, ...rest } = spec;
  return limit === undefined ? rest : { ...rest, tokenizeTimeLimit: limit };
}

/** The page's time limit changed: the fetched model shown is opened again with it (from the cache). */
function limitChanged() {
  let limit;
  try {
    limit = pageTokenizeTimeLimit();
  } catch (error) {
    showError($('source-error'), /** @type {Error} */ (error));
    return;
  }
  if ($('source-error').textContent?.startsWith(`${LIMIT_NAME}:`)) $('source-error').hidden = true;
  const { spec } = explorer;
  if (spec?.id !== 'model' || !spec.url || spec.tokenizeTimeLimit === limit) return;
  explorer.useSource(withPageLimit(/** @type {{ id: 'model', url: string }} */ (spec)));
}

/** Open a repository through the explorer; a bad id or address is said where the source's errors are. @param {string} id */
async function open(id) {
  let spec;
  try {
    spec = hubSpec(id, endpointOf(), pageTokenizeTimeLimit() ?? null);
  } catch (error) {
    const node = $('source-error');
    node.textContent = error instanceof Error ? error.message : String(error);
    node.hidden = false;
    return;
  }
  await explorer.useSource(spec);
  refreshCached();
}

/** The suggestions, each with its size from the models API (or why there is none). */
async function showSuggested() {
  const list = $('hub-suggested');
  const { hubModelInfo } = await models();
  const endpoint = endpointOf();
  list.replaceChildren(...SUGGESTED.map((repo) => {
    const size = el('span', { class: 'note' }, ['…']);
    const button = el('button', { type: 'button', 'data-repo': repo }, [repo]);
    button.addEventListener('click', () => open(repo));
    hubModelInfo(repo, { endpoint }).then(
      (plan) => { size.textContent = `${sizeText(plan.bytes)}${plan.downloadBytes === 0 ? ', kept' : ''}`; },
      (error) => {
        size.textContent = noSize(error);
        size.title = error instanceof Error ? error.message : String(error);
      },
    );
    return el('li', {}, [button, size]);
  }));
}

/** The models kept in this browser, with their sizes and a delete button each. */
export async function refreshCached() {
  const list = $('hub-cached');
  if (!list || !(/** @type {HTMLDetailsElement} */ ($('hub-box'))).open) return;
  const { listCachedModels, deleteCachedModel } = await models();
  const kept = await listCachedModels().catch(() => []);
  if (!kept.length) {
    list.replaceChildren(el('li', { class: 'note' }, ['none yet']));
    return;
  }
  list.replaceChildren(...kept.map((m) => {
    const openButton = el('button', { type: 'button', 'data-repo': m.repo }, [m.repo]);
    openButton.addEventListener('click', () => open(m.repo));
    const remove = el('button', { type: 'button', 'aria-label': `Delete ${m.repo} from this browser` }, ['Delete']);
    remove.addEventListener('click', async () => {
      await deleteCachedModel(m.repo);
      refreshCached();
    });
    return el('li', { 'data-cached': m.repo }, [openButton, el('span', { class: 'note' }, [`${sizeText(m.bytes)} (commit ${m.commit.slice(0, 7)})`]), remove]);
  }));
}

export function wireHubBox() {
  const box = /** @type {HTMLDetailsElement} */ ($('hub-box'));
  box.addEventListener('toggle', () => {
    if (!box.open) return;
    showSuggested();
    refreshCached();
  });
  $('hub-form').addEventListener('submit', (event) => {
    event.preventDefault();
    open(/** @type {HTMLInputElement} */ ($('hub-id')).value);
  });
  $('hub-endpoint').addEventListener('change', () => { if (box.open) showSuggested(); });
  const limit = /** @type {HTMLInputElement} */ ($('tokenize-time-limit'));
  limit.addEventListener('change', limitChanged);
  explorer.addEventListener('change', (event) => {
    if (!/** @type {CustomEvent<{ keys: string[] }>} */ (event).detail.keys.includes('source')) return;
    const { spec } = explorer;
    // a link's limit and mirror show in the box
    if (spec?.id === 'model' && spec.url) limit.value = String(spec.tokenizeTimeLimit ?? DEFAULT_LIMIT_MS);
    if (hubRepoOf(spec)) {
      /** @type {HTMLInputElement} */ ($('hub-endpoint')).value = /** @type {{ endpoint?: string }} */ (spec).endpoint ?? HUB_DEFAULT;
      refreshCached();
    }
  });
}

/**
 * Before a link opens a model on the Hub: asks, in the page, when it would download more than
 * ASK_ABOVE_BYTES; resolves to whether to go on. What the Hub cannot say (offline, not there)
 * goes on: opening it gives the message.
 * @param {import('../explorer/sources.js').SourceSpec} spec
 * @returns {Promise<boolean>}
 */
export async function askBeforeLinkDownload(spec) {
  const repo = hubRepoOf(spec);
  if (!repo) return true;
  let plan;
  try {
    plan = await (await models()).hubModelInfo(repo, { endpoint: /** @type {{ endpoint?: string }} */ (spec).endpoint });
  } catch {
    return true;
  }
  if (plan.downloadBytes <= ASK_ABOVE_BYTES) return true;
  const ask = el('div', { id: 'hub-ask', class: 'hub-ask', role: 'alertdialog', 'aria-labelledby': 'hub-ask-text' }, [
    el('p', { id: 'hub-ask-text' }, [`This link opens ${repo} from ${plan.endpoint}: ${sizeText(plan.downloadBytes)} to download (kept in this browser afterwards).`]),
  ]);
  const yes = el('button', { type: 'button', id: 'hub-ask-yes' }, [`Download ${sizeText(plan.downloadBytes)}`]);
  const no = el('button', { type: 'button', id: 'hub-ask-no' }, ['Not now']);
  ask.append(el('div', { class: 'row' }, [yes, no]));
  $('status').after(ask);
  yes.focus();
  const answer = await new Promise((resolve) => {
    yes.addEventListener('click', () => resolve(true), { once: true });
    no.addEventListener('click', () => resolve(false), { once: true });
  });
  ask.remove();
  return /** @type {boolean} */ (answer);
}
