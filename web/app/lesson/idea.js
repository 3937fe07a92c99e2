// Section: the idea, the formula (KaTeX) and a diagram of the heads.

import { el, section, svg } from './dom.js';
import { math } from './math.js';

/**
 * SVG diagram: X -> h heads (own W_Q, W_K, W_V) -> Concat -> W_O -> output.
 * @param {number} h
 * @param {{ dModel?: number }} [options]
 */
export function headsDiagram(h, { dModel = 64 } = {}) {
  const dk = dModel / h;
  const width = 720;
  const shown = Math.min(h, 8);
  const headW = Math.min(74, (width - 40) / shown - 10);
  const gap = (width - shown * headW) / (shown + 1);
  const cx = width / 2;
  /**
   * @param {number} x @param {number} y @param {number} w @param {number} hgt
   * @param {string} label @param {string} sub @param {string} cls
   */
  const box = (x, y, w, hgt, label, sub, cls) => svg('g', { class: cls },
    svg('rect', { x, y, width: w, height: hgt, rx: 8 }),
    svg('text', { x: x + w / 2, y: y + (sub ? hgt / 2 - 2 : hgt / 2 + 5), 'text-anchor': 'middle', class: 'diagram-label', text: label }),
    sub ? svg('text', { x: x + w / 2, y: y + hgt / 2 + 14, 'text-anchor': 'middle', class: 'diagram-sub', text: sub }) : null);
  const nodes = [];
  nodes.push(box(cx - 110, 8, 220, 44, 'X', `${'L'} × ${dModel}`, 'diagram-io'));
  const headY = 104;
  const headH = 86;
  for (let i = 0; i < shown; i += 1) {
    const x = gap + i * (headW + gap);
    const last = h > shown && i === shown - 1;
    nodes.push(svg('path', { d: `M ${cx} 52 C ${cx} 80, ${x + headW / 2} 76, ${x + headW / 2} ${headY}`, class: 'diagram-edge' }));
    nodes.push(svg('path', { d: `M ${x + headW / 2} ${headY + headH} C ${x + headW / 2} ${headY + headH + 26}, ${cx} ${headY + headH + 18}, ${cx} ${headY + headH + 44}`, class: 'diagram-edge' }));
    nodes.push(svg('g', { class: 'diagram-head' },
      svg('rect', { x, y: headY, width: headW, height: headH, rx: 8 }),
      svg('text', { x: x + headW / 2, y: headY + 20, 'text-anchor': 'middle', class: 'diagram-label', text: last ? `… head ${h}` : `head ${i + 1}` }),
      svg('text', { x: x + headW / 2, y: headY + 42, 'text-anchor': 'middle', class: 'diagram-sub', text: 'Wq Wk Wv' }),
      svg('text', { x: x + headW / 2, y: headY + 60, 'text-anchor': 'middle', class: 'diagram-sub', text: 'softmax·V' }),
      svg('text', { x: x + headW / 2, y: headY + 77, 'text-anchor': 'middle', class: 'diagram-sub', text: `L × ${dk}` })));
  }
  const concatY = headY + headH + 44;
  nodes.push(box(cx - 150, concatY, 300, 44, 'Concat(head₁, …, headₕ)', `L × ${h}·${dk} = L × ${dModel}`, 'diagram-concat'));
  nodes.push(svg('path', { d: `M ${cx} ${concatY + 44} L ${cx} ${concatY + 66}`, class: 'diagram-edge' }));
  nodes.push(box(cx - 110, concatY + 66, 220, 40, '× W_O', `${dModel} × ${dModel}, mixes the heads`, 'diagram-wo'));
  nodes.push(svg('path', { d: `M ${cx} ${concatY + 106} L ${cx} ${concatY + 126}`, class: 'diagram-edge' }));
  nodes.push(box(cx - 110, concatY + 126, 220, 40, 'Output', `L × ${dModel}`, 'diagram-io'));
  const height = concatY + 170;
  return svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'heads-diagram', role: 'img',
    'aria-label': `Diagram: the input X (L × ${dModel}) goes to ${h} heads, each with its own W_Q, W_K, W_V and an output of L × ${dk}; the heads' outputs are concatenated (L × ${dModel}) and multiplied by W_O to give the output (L × ${dModel}).` }, nodes);
}

export function ideaSection() {
  return section('lesson-idea', 'The idea: several attentions side by side',
    el('p', { text: 'One attention computation gives every token one weighted average of the sequence: one view. A sentence holds several relations at once, though: which noun a verb belongs to, what a pronoun points back to, which word came just before. One softmax row cannot put its weight on all of them.' }),
    el('p', {}, 'Multi-head attention runs ', math('h'), ' attention computations, the ', el('em', { text: 'heads' }),
      ', in parallel. Each head has its own learned projections ', math('W_i^Q, W_i^K, W_i^V'),
      ', so each can learn to look for a different kind of relation. Their outputs are concatenated and passed through one more learned matrix, ',
      math('W^O'), ', which combines them into a single output of the same width as the input.'),
    el('div', { class: 'formula-card', id: 'lesson-formula' },
      math(String.raw`\operatorname{MultiHead}(Q,K,V) = \operatorname{Concat}(\text{head}_1,\dots,\text{head}_h)\,W^O`, { display: true }),
      math(String.raw`\text{head}_i = \operatorname{Attention}(Q W_i^Q,\; K W_i^K,\; V W_i^V)`, { display: true }),
      math(String.raw`\operatorname{Attention}(Q,K,V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V`, { display: true }),
      el('p', { class: 'note' }, 'Shapes, for a sequence of ', math('L'), ' tokens: ', math(String.raw`W_i^Q, W_i^K, W_i^V \in \mathbb{R}^{d_{\text{model}} \times d_k}`),
        ', each head\'s output is ', math(String.raw`L \times d_k`), ', the concatenation is ', math(String.raw`L \times h d_k`), ' and ',
        math(String.raw`W^O \in \mathbb{R}^{h d_k \times d_{\text{model}}}`), '. In self-attention Q, K and V are all the same sequence X.')),
    el('figure', { class: 'diagram-figure' }, headsDiagram(8),
      el('figcaption', { class: 'note', text: 'The page\'s model: d_model = 64 split into 8 heads of d_k = 8. Every head reads the whole input X, but works in its own 8-dimensional space.' })));
}
