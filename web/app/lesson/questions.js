// Sections: the interview question, the practice question (an answer box that checks), the key
// takeaways of the chapter and the related notes.

import { el, section } from './dom.js';
import { math } from './math.js';

export function interviewSection() {
  return section('lesson-interview', 'Interview question',
    el('blockquote', { class: 'question', text: '“Why does the Transformer use multi-head attention instead of a single attention computation over the full model width?”' }),
    el('details', { class: 'answer', id: 'interview-answer' },
      el('summary', { text: 'Show a strong answer' }),
      el('p', { text: 'A single softmax row is one weighted average: it has to split its weight among everything the token needs to know. Several heads give the model several independent averages at the same time, each with its own learned W_Q, W_K and W_V, so one head can track short-range syntax (the previous word, the subject of a verb) while another tracks long-range meaning (what a pronoun refers to).' }),
      el('p', {}, 'It costs about the same: with ', math(String.raw`d_k = d_{\text{model}}/h`),
        ' the projections are the same matrices and the score computation is ', math(String.raw`h \cdot L^2 d_k = L^2 d_{\text{model}}`),
        ' either way; only the number of softmaxes grows. W_O then learns how to combine the heads. The trade-off is per-head capacity: each head works in fewer dimensions, so the number of heads is tuned, not maximised.')));
}

/** Check an answer to "d_model = 512, h = 8: d_k = ?": { correct, message }. @param {string} text */
export function checkDkAnswer(text) {
  const cleaned = String(text).trim().replace(/^d_?k\s*=\s*/i, '');
  if (cleaned === '') return { correct: false, message: 'Type a number first.' };
  if (!/^[+-]?\d+(\.\d+)?$/.test(cleaned)) return { correct: false, message: `“${String(text).trim()}” is not a number. d_k is a count of dimensions, a whole number.` };
  const value = Number(cleaned);
  if (value === 64) return { correct: true, message: 'Correct: d_k = d_model / h = 512 / 8 = 64. Each head projects the 512-dimensional input down to 64 dimensions, and 8 × 64 = 512 brings the concatenation back to d_model.' };
  if (value === 512) return { correct: false, message: 'Not quite: 512 is d_model, the full width. Each head gets a slice of it, d_model / h.' };
  if (value === 8) return { correct: false, message: 'Not quite: 8 is the number of heads h. The width of each head is d_model divided by h.' };
  if (value === 4096) return { correct: false, message: 'Not quite: 4096 = 512 × 8 would give every head more than the whole model width. Divide instead: d_model / h.' };
  if (Math.abs(value - Math.sqrt(64)) < 1e-9 || Math.abs(value - Math.sqrt(512)) < 0.01) return { correct: false, message: 'Not quite: √d_k is the scaling factor of the scores, not d_k itself. d_k = d_model / h.' };
  return { correct: false, message: `Not quite: ${cleaned} × 8 heads = ${value * 8}, not 512. Find the width that 8 heads share equally: d_model / h.` };
}

export function practiceSection() {
  const input = el('input', { type: 'text', inputMode: 'numeric', id: 'practice-answer', autocomplete: 'off', 'aria-label': 'd_k, the width of each head', 'aria-describedby': 'practice-feedback', placeholder: 'd_k' });
  const feedback = el('p', { id: 'practice-feedback', class: 'feedback', 'aria-live': 'polite' });
  const form = el('form', { class: 'practice-form', id: 'practice-form' },
    el('label', { for: 'practice-answer' }, math('d_k ='), ' '), input, el('button', { type: 'submit', class: 'button', text: 'Check' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const { correct, message } = checkDkAnswer(input.value);
    feedback.textContent = `${correct ? '✓' : '✗'} ${message}`;
    feedback.className = `feedback ${correct ? 'ok' : 'bad'}`;
    feedback.dataset.correct = String(correct);
    input.setAttribute('aria-invalid', String(!correct));
  });
  return section('lesson-practice', 'Practice question',
    el('p', {}, 'A Transformer layer has ', math(String.raw`d_{\text{model}} = 512`), ' and 8 attention heads. What is ', math('d_k'), ' for each head?'),
    form, feedback);
}

export function takeawaysSection() {
  const items = [
    ['The bottleneck.', 'A basic encoder–decoder squeezes the whole input into one fixed-size context vector, and quality drops as inputs get longer.'],
    ['Teacher forcing.', 'Feeding the true previous token during training makes sequence-to-sequence training fast, but creates exposure bias: at inference the model conditions on its own, possibly wrong, outputs, which it never saw in training.'],
    ['Queries, keys, values.', 'Attention removes the bottleneck by letting the decoder reach every encoder position directly: a query is compared with keys, and the matching values are averaged, as in a soft lookup.'],
    ['Scaling by √d_k.', 'The dot product of two d_k-dimensional vectors with unit-variance entries has a spread of about √d_k; dividing by √d_k keeps the softmax out of saturation so that its gradients stay useful at any width.'],
    ['Self- and cross-attention.', 'Self-attention relates the positions of one sequence directly, with no distance penalty such as an RNN\'s step-by-step path; cross-attention lets one sequence read from another.'],
    ['Multiple heads.', 'Multi-head attention runs several attentions in parallel, each in d_model / h dimensions, so several kinds of relation are captured at once for about the cost of one; W_O combines them.'],
  ];
  return section('lesson-takeaways', 'Key takeaways: sequence-to-sequence and attention',
    el('ul', { class: 'takeaways' }, items.map(([lead, text]) => el('li', {}, el('strong', { text: `${lead} ` }), text))),
    el('p', { class: 'note', text: 'Next: the Transformer puts self-attention and multi-head attention together with positional encoding, residual connections and feed-forward blocks into one layer, the building block of today\'s large language models.' }));
}

export function relatedSection() {
  /** @param {string} title @param {string} text @param {string} href @param {string} linkText */
  const card = (title, text, href, linkText) => el('article', { class: 'related-card' },
    el('h3', { text: title }), el('p', { text }), el('a', { href, text: linkText }));
  const node = section('lesson-related', 'Related notes',
    el('div', { class: 'related-grid' },
      card('Scaled dot-product attention', 'One head\'s computation: scores Q·Kᵀ, divided by √d_k, a softmax per row, a weighted sum of V. Followed number by number above.', '#lesson-one-head', 'One head, followed with real numbers'),
      card('Self-attention', 'Queries, keys and values all from the same sequence; with a causal mask for decoders, and its sibling cross-attention.', '#lesson-masks', 'Masks and sources'),
      card('Transformer architecture', 'Multi-head attention plus positional encoding, residual connections, normalisation and a feed-forward block make one Transformer layer; the page\'s “Where are we?” lists the steps.', '#learning-context', 'Where this lesson sits')));
  // the explorer's learning context is a <details>: open it when a link leads there
  node.querySelectorAll('a[href="#learning-context"]').forEach((a) => a.addEventListener('click', () => {
    const details = document.getElementById('learning-context');
    if (details && 'open' in details) details.open = true;
  }));
  return node;
}
