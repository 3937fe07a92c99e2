// axe-core (npm) in a page of any engine: the WCAG 2.0 and 2.1 rules of levels A and AA, every
// frame included; what ran and every violation found are printed.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ENGINE } from './driver.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * axe.run in the page (axe added to every frame first); a summary of what it found. `exclude`:
 * selectors of parts of the page checked elsewhere, left out of this run.
 */
export async function runAxe(page, label, { exclude = [] } = {}) {
  for (const frame of await page.frames()) {
    await frame.evaluate((source) => {
      if (window.axe) return;
      const script = document.createElement('script');
      script.textContent = source;
      document.head.append(script);
    }, AXE_SOURCE);
  }
  const started = Date.now();
  const result = await page.evaluate(async ({ tags, exclude: left }) => {
    // every rule with one of these tags, the experimental ones too (label-content-name-mismatch)
    const rules = window.axe.getRules(tags).map((rule) => rule.ruleId);
    const context = left.length ? { include: [['html']], exclude: left.map((selector) => [selector]) } : document;
    const r = await window.axe.run(context, { runOnly: { type: 'rule', values: rules }, resultTypes: ['violations'] });
    return {
      rules: r.passes.length + r.violations.length + r.incomplete.length + r.inapplicable.length,
      violations: r.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => `${n.target.join(' ')}${n.failureSummary ? `: ${n.failureSummary.replace(/\s+/g, ' ').slice(0, 160)}` : ''}`),
      })),
    };
  }, { tags: WCAG_TAGS, exclude });
  const count = result.violations.reduce((n, v) => n + v.nodes.length, 0);
  console.log(`  [${ENGINE}] ${label}${exclude.length ? ` (${exclude.join(', ')} left out)` : ''}: ${result.rules} WCAG 2.0/2.1 A/AA rules, ${result.violations.length} violated (${count} nodes), ${Date.now() - started} ms`);
  for (const v of result.violations) {
    console.log(`    ${v.id} (${v.impact}): ${v.help}; ${v.nodes.length} node(s)`);
    for (const node of v.nodes.slice(0, 6)) console.log(`      ${node}`);
  }
  return result.violations.map((v) => `${v.id}: ${v.nodes.length} node(s), e.g. ${v.nodes[0]}`);
}
