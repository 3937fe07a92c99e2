// The multi-head attention lesson, mounted by the explorer (web/app/main.js) on
// <section id="lesson">. Every number it shows is computed by the WebAssembly core.

import { loadMha } from '../../lib/index.js';
import { nextTask } from '../../lib/next-task.js';
import { el, stylesheet } from './dom.js';
import { prepareMath } from './math.js';
import { buildSection } from './build-section.js';
import { keepScrollersReachable } from '../../views/dom.js';
import { ideaSection } from './idea.js';
import { costSection } from './cost.js';
import { oneHeadSection } from './one-head.js';
import { codeSection } from './code.js';
import { mistakesSection } from './mistakes.js';
import { gqaSection } from './gqa.js';
import { masksSection } from './masks.js';
import { ablationSection } from './ablation.js';
import { interviewSection, practiceSection, takeawaysSection, relatedSection } from './questions.js';
import { attachExport } from './export.js';

/** @type {[string, (mha: import('../../lib/index.js').MhaModule, context: { explorer?: import('../../explorer/controller.js').Explorer }) => HTMLElement][]} */
const SECTIONS = [
  ['The idea and the formula', ideaSection],
  ['Keeping the computation comparable', costSection],
  ['One head, with real numbers', oneHeadSection],
  ['The code', codeSection],
  ['Common mistakes', mistakesSection],
  ['Grouped-query attention', gqaSection],
  ['Masks and sources', masksSection],
  ['Head ablation', ablationSection],
  ['Interview question', interviewSection],
  ['Practice question', practiceSection],
  ['Key takeaways', takeawaysSection],
  ['Related notes', relatedSection],
];

/**
 * Export buttons beside the explorer's own (or a bar of their own in the lesson).
 * @param {HTMLElement} root
 * @param {import('../../explorer/controller.js').Explorer} explorer
 */
function mountExport(root, explorer) {
  const bar = attachExport(explorer);
  if (bar) root.append(el('section', { class: 'lesson-section', id: 'lesson-export-section' }, el('h2', { text: 'Export the selected head' }), bar));
}

/**
 * @param {HTMLElement} root  <section id="lesson">
 * @param {{ explorer?: import('../../explorer/controller.js').Explorer }} context  the explorer's state, for the exports
 */
export async function mount(root, { explorer } = {}) {
  const started = performance.now();
  // KaTeX's stylesheet, fonts and module while the lesson is still empty (math.js says why)
  prepareMath();
  await stylesheet(new URL('./lesson.css', import.meta.url).href);
  const mha = await loadMha();
  root.classList.add('lesson');
  const toc = el('nav', { class: 'lesson-toc', 'aria-label': 'Lesson contents' },
    el('p', { class: 'eyebrow', text: 'The lesson' }),
    el('ol', {}, SECTIONS.map(([title], i) => el('li', {}, el('a', { href: `#lesson-s${i}`, text: title })))));
  root.replaceChildren(el('header', { class: 'lesson-header' },
    el('h2', { class: 'lesson-title', text: 'Multi-head attention, step by step' }),
    el('p', { class: 'lede', text: 'The lesson behind the explorer above. Each claim comes with a control that tries it on the same WebAssembly core, with real weights.' })), toc);
  /** @type {string[]} */
  const failures = [];
  /** @type {string[]} */
  const retried = [];
  for (const [i, [title, build]] of SECTIONS.entries()) {
    // a section a task: the page answers between them
    await nextTask();
    let node;
    try {
      node = buildSection(title, () => build(mha, { explorer }), retried);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failures.push(`${title}: ${message}`);
      console.error(`lesson section "${title}" failed:`, error);
      node = el('section', { class: 'lesson-section error' }, el('h2', { text: title }), el('p', { class: 'error', text: `This section could not be computed: ${message}` }));
    }
    // an anchor per entry of the contents, kept apart from the sections' own ids
    root.append(el('span', { id: `lesson-s${i}`, class: 'lesson-anchor' }), node);
  }
  if (explorer) mountExport(root, explorer);
  // boxes that scroll sideways at this width (tables, strips, code) can be scrolled by keyboard
  keepScrollersReachable(root).check();
  root.dataset.ready = failures.length ? 'error' : 'true';
  const hook = { failures, retried, mountMs: performance.now() - started };
  Object.defineProperty(window, '__mhaLesson', { value: Object.freeze(hook), configurable: true });
}
