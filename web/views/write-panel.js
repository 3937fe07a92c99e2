// "The model writes on": the panel of a causal model that predicts the next token, in the page and
// in <mha-explorer> alike, loaded only when such a model is shown. It is given the state and says
// what was asked (onWrite, onClear); the controller writes and every view then draws the longer
// text. Its controls (how many tokens, most probable or sampled, temperature, top-k, seed) keep
// what was typed across updates.
import { el } from './dom.js';

/** @typedef {import('../sources/source.js').WriteState} WriteState */
/**
 * @typedef {{ onWrite: (steps: number, sampling: { temperature?: number, topK?: number, seed?: number }) => void,
 *             onClear: () => void, idPrefix?: string }} WritePanelHandlers
 * @typedef {{ write: WriteState | null, busy: boolean, error: string | null, tokens: Array<{ text: string, word?: number, written?: unknown }>,
 *             maxSteps: number }} WritePanelState
 */

let panels = 0;

/**
 * Build the panel's controls in `container`; update() draws a state into them.
 * @param {HTMLElement} container
 * @param {WritePanelHandlers} handlers
 * @returns {{ update: (state: WritePanelState) => void }}
 */
export function mountWritePanel(container, { onWrite, onClear, idPrefix = `write-${++panels}` }) {
  const id = (/** @type {string} */ name) => `${idPrefix}-${name}`;
  const number = (/** @type {string} */ name, /** @type {Record<string, unknown>} */ props) => el('input', { type: 'number', id: id(name), class: 'write-number', ...props });
  const steps = number('steps', { min: 1, max: 100, step: 1, value: '20' });
  const temperature = number('temperature', { min: 0.05, max: 100, step: 0.05, value: '0.8' });
  const topK = number('top-k', { min: 1, step: 1, value: '40' });
  const seed = number('seed', { min: 0, max: 4294967295, step: 1, value: '0' });
  const greedy = el('input', { type: 'radio', name: id('how'), id: id('greedy'), value: 'greedy', checked: true });
  const sampled = el('input', { type: 'radio', name: id('how'), id: id('sampled'), value: 'sampled' });
  const label = (/** @type {HTMLElement} */ input, /** @type {string} */ text) => el('label', { for: input.id, text });
  const sampling = el('span', { class: 'write-sampling' },
    label(temperature, 'temperature '), temperature, ' ', label(topK, 'top-k '), topK, ' ', label(seed, 'seed '), seed);
  const status = el('span', { class: 'note write-status', role: 'status' });
  const error = el('p', { class: 'error write-error', role: 'alert', hidden: true });
  const text = el('p', { class: 'write-text', 'aria-label': 'The text with what the model wrote' });

  /** The sampling the controls say, or a message naming the bad one. */
  const chosen = () => {
    if (greedy.checked) return {};
    const t = Number(temperature.value);
    const k = Number(topK.value);
    const s = Number(seed.value);
    if (!(t > 0 && t <= 100)) throw new Error(`The temperature must be above 0 and at most 100, not ${JSON.stringify(temperature.value)}.`);
    if (!(Number.isInteger(k) && k >= 1)) throw new Error(`Top-k must be a whole number from 1, not ${JSON.stringify(topK.value)}.`);
    if (!(Number.isInteger(s) && s >= 0 && s < 2 ** 32)) throw new Error(`The seed must be a whole number from 0 to 4294967295, not ${JSON.stringify(seed.value)}.`);
    return { temperature: t, topK: k, seed: s };
  };
  /** @param {number} n */
  const ask = (n) => {
    try {
      error.hidden = true;
      onWrite(n, chosen());
    } catch (e) {
      error.textContent = e instanceof Error ? e.message : String(e);
      error.hidden = false;
    }
  };
  const next = el('button', { type: 'button', id: id('next'), text: 'Add the next token', onclick: () => ask(1) });
  const many = el('button', { type: 'button', id: id('many'), text: 'Write', onclick: () => {
    const n = Number(steps.value);
    if (Number.isInteger(n) && n >= 1) ask(n);
    else { error.textContent = `Write a whole number of tokens from 1, not ${JSON.stringify(steps.value)}.`; error.hidden = false; }
  } });
  const clear = el('button', { type: 'button', id: id('clear'), text: 'Clear', onclick: () => onClear() });
  const syncSampling = () => { sampling.hidden = greedy.checked; };
  greedy.addEventListener('change', syncSampling);
  sampled.addEventListener('change', syncSampling);
  syncSampling();

  container.replaceChildren(
    el('h3', { text: 'The model writes on' }),
    el('p', { class: 'note', text: 'A causal model adds one token at a time: each step computes only the new token, on the keys and values the model keeps of the text so far (its key/value cache). The longer text is then shown in every view, the new tokens\' rows among the others. The same settings write the same tokens, so a link gives them again.' }),
    el('div', { class: 'row write-row' }, next, ' or ', many, ' ', steps, ' ', label(steps, 'tokens'), ' ', clear),
    el('div', { class: 'row write-row', role: 'radiogroup', 'aria-label': 'Which token' },
      greedy, label(greedy, ' the most probable token'), ' ', sampled, label(sampled, ' sampled: '), sampling),
    el('div', { class: 'row' }, status),
    error,
    text,
  );

  return {
    update({ write, busy, error: message, tokens, maxSteps }) {
      for (const b of [next, many]) b.disabled = busy || maxSteps < 1;
      clear.disabled = busy || !write;
      steps.max = String(Math.max(1, maxSteps));
      if (write) {
        greedy.checked = write.temperature === undefined && write.topK === undefined;
        sampled.checked = !greedy.checked;
        if (write.temperature !== undefined) temperature.value = String(write.temperature);
        if (write.topK !== undefined) topK.value = String(write.topK);
        if (write.seed !== undefined) seed.value = String(write.seed);
        syncSampling();
      }
      const how = !write ? '' : write.temperature === undefined && write.topK === undefined
        ? 'each the most probable'
        : `sampled at temperature ${write.temperature ?? 1}${write.topK !== undefined ? `, top-k ${write.topK}` : ''}, seed ${write.seed ?? 0}`;
      status.textContent = busy ? 'Writing…' : write ? `The model wrote ${write.steps} token${write.steps === 1 ? '' : 's'}, ${how}.` : maxSteps < 1 ? 'The text is as long as the explorer shows: shorten it to write on.' : 'Nothing written yet.';
      if (message) { error.textContent = message; error.hidden = false; } else if (!busy) error.hidden = true;
      // the pieces of one word joined, as the token strip shows them; what was written marked
      const spelled = tokens.map((t, i) => `${i > 0 && (t.word === undefined || t.word !== tokens[i - 1].word) ? ' ' : ''}${t.text}`);
      const first = tokens.findIndex((t) => t.written);
      text.replaceChildren(first < 0 ? spelled.join('') : spelled.slice(0, first).join(''),
        first < 0 ? '' : el('mark', { class: 'written', text: spelled.slice(first).join('') }));
      text.hidden = !write;
    },
  };
}
