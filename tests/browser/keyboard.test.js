// Without a mouse, in each engine: Tab reaches every control of the page and of the embed, in
// reading order, each with a visible focus ring; the selected head's map is entered with Enter
// and walked cell by cell with the arrow keys, each cell's query token, key token and weight
// announced in a live region (and the row followed in the explorer), Escape leaves it;
// prefers-reduced-motion turns the one animation (the element's progress bar) off. All of it
// runs in all three engines (focus, keys and the media query are the engine's).
//
// One lesson page and one embed page serve the tests: the explorer is put back between tests
// (resetExplorer), the element's view and head set by its attributes, as embed.html sets them
// from its query string. Reduced motion is a page of its own (it is set when a page opens).
//
//   MHA_BROWSER=webkit node --test tests/browser/keyboard.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, note, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, resetExplorer, settled } from './page-state.js';

let server;
let browser;
const errors = [];
/** The shared pages, opened by the first test that needs each: name → Promise of a page. */
const pages = {};
const shared = (name, open) => (pages[name] ||= open());

before(async () => {
  ({ server, browser } = await startWeb());
});

after(async () => {
  for (const page of Object.values(pages)) await (await page.catch(() => null))?.close();
  await stopWeb({ server, browser });
});

async function newPage(options = {}) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, ...options });
  page.on('pageError', (message) => errors.push(message));
  return page;
}

async function loadLesson(page) {
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' && document.querySelector('#lesson')?.dataset.ready === 'true', null, { timeout: 60000 });
  await attachExplorer(page);
  await settled(page);
  return page;
}

async function loadEmbed(page, query = '') {
  await page.goto(`${server.url}embed.html${query}`);
  await page.waitForFunction(() => document.querySelector('mha-explorer')?.status === 'ready', null, { timeout: 60000 });
  return page;
}

/** The lesson page, its explorer as it opens. */
async function lesson() {
  const page = await shared('lesson', async () => loadLesson(await newPage()));
  await resetExplorer(page);
  return page;
}

/** The embed page with these attributes on its element (null: none), drawn. */
async function embed(attributes) {
  const page = await shared('embed', async () => loadEmbed(await newPage({ viewport: { width: 1000, height: 700 } }), '?view=compare'));
  await page.evaluate(async (list) => {
    const e = document.querySelector('mha-explorer');
    for (const [name, value] of Object.entries(list)) {
      if (value === null) e.removeAttribute(name); else e.setAttribute(name, value);
    }
    for (let k = 0; k < 3; k += 1) await new Promise((r) => requestAnimationFrame(() => r()));
  }, attributes);
  await page.waitForFunction(() => {
    const e = document.querySelector('mha-explorer');
    return e.status === 'ready' && e.shadowRoot.querySelector(`.content > .${e.view}`);
  });
  return page;
}

/**
 * In the page: the controls a reader can reach with Tab, in document order (the focused
 * element's shadow root included), and a recorder of what gets focus: each focus with whether
 * a focus ring is drawn (an outline or a box shadow on it or on the label around it).
 */
function installFocusRecorder() {
  const deepActive = () => { let a = document.activeElement; while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a; };
  const all = (rootNode) => [...rootNode.querySelectorAll('*')].flatMap((e) => (e.shadowRoot ? [e, ...all(e.shadowRoot)] : [e]));
  const shown = (e) => (e.checkVisibility ? e.checkVisibility({ visibilityProperty: true }) : e.getClientRects().length > 0);
  const name = (e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.dataset.head ? `[head ${e.dataset.head}]` : ''}${e.dataset.value !== undefined ? `[${e.dataset.value}]` : ''}${e.type === 'radio' ? `[${e.value}]` : ''}${e.textContent && e.children.length < 3 ? ` "${e.textContent.trim().slice(0, 24)}"` : ''}`;
  const tabbable = all(document).filter((e) => {
    if (!(e.tabIndex >= 0) || e.disabled || !shown(e) || e.closest('[inert]')) return false;
    const focusableTag = /^(A|BUTTON|INPUT|SELECT|TEXTAREA|SUMMARY|IFRAME)$/.test(e.tagName) || e.hasAttribute('tabindex');
    if (!focusableTag || (e.tagName === 'A' && !e.hasAttribute('href'))) return false;
    // a radio group is one stop: its checked radio (or its first when none is)
    if (e.type === 'radio' && e.name) {
      const group = [...e.getRootNode().querySelectorAll(`input[type="radio"][name="${e.name}"]`)].filter((r) => !r.disabled);
      return group.some((r) => r.checked) ? e.checked : group[0] === e;
    }
    // a summary is focusable only as its details' first summary
    if (e.tagName === 'SUMMARY') return e.parentElement?.tagName === 'DETAILS';
    return true;
  });
  tabbable.forEach((e, k) => { e.dataset.tabOrder = String(k); });
  const ring = (e) => {
    for (let n = e, k = 0; n && k < 3; n = n.parentElement, k += 1) {
      const s = getComputedStyle(n);
      if ((s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1) || (s.boxShadow && s.boxShadow !== 'none')) return 'drawn';
      if (n.tagName !== 'INPUT') break; // a hidden file input shows its ring on the label
    }
    return e.matches(':focus-visible') ? false : ringByRule(e);
  };
  // WebKit does not match :focus-visible for focus moved by WebDriver's keys: then the ring is
  // read from the style sheets, a :focus-visible (or :focus-within) rule that matches the element
  // (or the label around it) without that pseudo-class and draws an outline or a box shadow
  const sheets = (node) => [...(node.styleSheets || []), ...(node.adoptedStyleSheets || [])];
  const rules = (list) => [...list].flatMap((r) => (r.cssRules && r.cssRules.length ? [r, ...rules(r.cssRules)] : [r]));
  const ringByRule = (e) => {
    const rootNode = e.getRootNode();
    for (const rule of sheets(rootNode).flatMap((s) => rules(s.cssRules))) {
      if (!rule.selectorText || !/:focus-(visible|within)/.test(rule.selectorText)) continue;
      // (longhands of a shorthand with var() read as '' in the CSSOM: read the rule's text)
      const text = rule.style.cssText;
      const drawsRing = (/outline(-style)?:/.test(text) && !/outline(-style)?:\s*(none|0)\b/.test(text)) || (/box-shadow:/.test(text) && !/box-shadow:\s*none/.test(text));
      if (!drawsRing) continue;
      for (const selector of rule.selectorText.split(',')) {
        const within = selector.includes(':focus-within');
        const plain = selector.replace(/:focus-(visible|within)/g, '').trim() || '*';
        try {
          if ((within ? e.parentElement : e)?.matches(plain)) return 'rule';
        } catch { /* a selector this engine does not take */ }
      }
    }
    return false;
  };
  const record = [];
  const onFocus = () => {
    const e = deepActive();
    if (!e || e === document.body) { record.push({ name: 'body', order: -1 }); return; }
    const order = e.dataset.tabOrder === undefined ? null : Number(e.dataset.tabOrder);
    record.push({ name: name(e), order, ring: ring(e), scroller: e.scrollHeight > e.clientHeight || e.scrollWidth > e.clientWidth });
  };
  // focus moving inside a shadow root reaches the document as a focusin on its host only when it
  // comes from outside: the shadow roots listen as well, and each focus is recorded once
  let last = null;
  const once = () => { const e = deepActive(); if (e !== last) { last = e; onFocus(); } };
  const roots = [document, ...all(document).filter((e) => e.shadowRoot).map((e) => e.shadowRoot)];
  for (const r of roots) r.addEventListener('focusin', once, true);
  window[Symbol.for('focus-record')] = record;
  // the page is shared with the next test: the recorder goes when the walk is done
  window[Symbol.for('focus-record-stop')] = () => {
    for (const r of roots) r.removeEventListener('focusin', once, true);
    for (const e of tabbable) delete e.dataset.tabOrder;
  };
  return tabbable.map(name);
}

/**
 * Focus in the page itself: in Firefox a walk before on this page may have left it past the
 * last control, in the browser's own toolbar, where the page gets neither keys nor focus events
 * and a click or a script's focus() does not bring it back; Tab from there does. (WebKit's
 * WebDriver gives the page its keys whether or not its window has the focus, which under Xvfb
 * it never has; Chromium's pages keep theirs.)
 */
async function focusPage(page) {
  if (ENGINE !== 'firefox') return;
  for (let k = 0; k < 10 && !(await page.evaluate(() => document.hasFocus())); k += 1) await page.keyboard('Tab');
  assert.ok(await page.evaluate(() => document.hasFocus()), 'the page has the focus');
}

/** Press Tab from the top of the page until focus has been through every control; the record. */
async function tabThrough(page) {
  await focusPage(page);
  const expected = await page.evaluate(installFocusRecorder);
  // Tab starts from the top: focus a mark at the start of the page (no tab stop itself)
  await page.evaluate(() => {
    const mark = document.createElement('span');
    mark.tabIndex = -1;
    mark.id = 'tab-walk-start';
    document.body.prepend(mark);
    mark.focus();
    window[Symbol.for('focus-record')].length = 0;
  });
  for (let k = 0; k < expected.length + 8; k += 1) await page.keyboard('Tab');
  const record = await page.evaluate(() => {
    document.getElementById('tab-walk-start').remove();
    window[Symbol.for('focus-record-stop')]();
    return window[Symbol.for('focus-record')];
  });
  return { expected, record };
}

function checkWalk(label, { expected, record }) {
  const stops = record.filter((r) => r.order !== null && r.order >= 0);
  const extra = record.filter((r) => r.order === null);
  const reached = new Set(stops.map((r) => r.order));
  const missing = expected.filter((_, k) => !reached.has(k));
  console.log(`  [${ENGINE}] ${label}: ${expected.length} controls to reach; ${reached.size} reached with ${record.length} presses of Tab; ${extra.length} other stops${extra.length ? ` (${extra.map((r) => `${r.name}${r.scroller ? ', a scroller' : ''}`).join('; ')})` : ''}`);
  console.log(`    order: ${stops.slice(0, 12).map((r) => r.name).join(' → ')} → …`);
  assert.deepEqual(missing, [], `${label}: controls Tab never reached`);
  // reading order: the first pass through the page visits the controls in document order
  const firstPass = stops.slice(0, expected.length).map((r) => r.order);
  const outOfOrder = firstPass.filter((order, k) => k > 0 && order < firstPass[k - 1]);
  assert.deepEqual(outOfOrder, [], `${label}: Tab went back in the document (${firstPass.join(',')})`);
  const byRule = stops.filter((r) => r.ring === 'rule').length;
  if (byRule) note(`${byRule} focus rings read from their :focus-visible rules (this engine does not match :focus-visible for WebDriver's keys)`);
  if (ENGINE !== 'webkit') assert.equal(byRule, 0, `${label}: focus rings not drawn`);
  const noRing = stops.filter((r) => !r.ring).map((r) => r.name);
  assert.deepEqual([...new Set(noRing)], [], `${label}: focused without a visible focus ring`);
  // stops that are not controls may only be scroll containers the engine makes focusable
  assert.deepEqual(extra.filter((r) => !r.scroller && r.name !== 'body').map((r) => r.name), [], `${label}: Tab stopped on what is not a control`);
}

test('Tab reaches every control of the page in reading order, each with a focus ring', { engines: 'all', why: 'accessibility' }, async () => {
  checkWalk('lesson page', await tabThrough(await lesson()));
});

test('Tab reaches every control of the embed (inside the element\'s shadow root) with a focus ring', { engines: 'all', why: 'accessibility' }, async () => {
  // the views of embed.html?view=compare and embed.html?view=single, one after the other
  checkWalk('embed.html (compare view)', await tabThrough(await embed({ view: 'compare', 'selected-head': null })));
  checkWalk('embed.html (single view)', await tabThrough(await embed({ view: 'single', 'selected-head': null })));
});

/** In the page: the announcer's text and the cell the map shows, for the map canvas. */
function readWalk(where) {
  const rootNode = where === 'element' ? document.querySelector('mha-explorer').shadowRoot : document;
  const canvas = where === 'element' ? rootNode.querySelector('.single canvas') : rootNode.getElementById('main-heatmap');
  const announcer = canvas.parentElement.querySelector('.cell-announcer');
  const active = where === 'element' ? rootNode.activeElement : document.activeElement;
  return { text: announcer.textContent, live: announcer.getAttribute('aria-live'), focused: active === canvas, role: canvas.getAttribute('role'), label: canvas.getAttribute('aria-label') };
}

async function walkMap(page, where, expectedCell) {
  const steps = [['Enter', 0, 0], ['ArrowRight', 0, 1], ['ArrowRight', 0, 2], ['ArrowDown', 1, 2], ['End', 1, -1], ['ArrowLeft', 1, -2], ['Home', 1, 0], ['PageDown', -1, 0], ['ArrowUp', -2, 0]];
  const seen = [];
  for (const [key, row, col] of steps) {
    await page.keyboard(key);
    const walk = await page.evaluate(readWalk, where);
    const cell = await expectedCell(row, col);
    const expected = `Query ${cell.row + 1} “${cell.query}”, key ${cell.col + 1} “${cell.key}”: weight ${cell.value.toFixed(3)}.`;
    seen.push(`${key}: ${walk.text}`);
    assert.equal(walk.focused, true, `${where}: the map keeps focus`);
    assert.equal(walk.live, 'polite');
    assert.equal(walk.text, expected, `${where}, after ${key}`);
    if (cell.check) await cell.check();
  }
  await page.keyboard('Escape');
  const left = await page.evaluate(readWalk, where);
  seen.push(`Escape: ${left.text}`);
  assert.equal(left.text, 'Left the map.');
  assert.equal(left.focused, true, 'Escape leaves the walk, focus stays on the map');
  console.log(`  [${ENGINE}] ${where} (${left.role}, "${left.label.slice(0, 60)}…"):\n    ${seen.join('\n    ')}`);
  return left;
}

test('the selected head\'s map is walked cell by cell with the arrow keys and announced; Escape leaves it', { engines: 'all', why: 'input' }, async () => {
  const page = await lesson();
  await page.click('#head-tab-4');
  await settled(page);
  await focusPage(page);
  await page.focus('#main-heatmap');
  const L = await page.evaluate(() => window.explorer.sentence.tokens.length);
  const at = (v) => (v < 0 ? L + v : v);
  await walkMap(page, 'page', async (row, col) => {
    const cell = await page.evaluate(([i, j]) => {
      const x = window.explorer;
      const labels = x.sentence.tokens.map((t) => t.text);
      return { row: i, col: j, query: labels[i], key: labels[j], value: x.map()[i * labels.length + j], hover: x.hoverToken };
    }, [at(row), at(col)]);
    // the explorer follows the row walked to, as it does under the pointer
    cell.check = async () => assert.equal(await page.evaluate(() => window.explorer.hoverToken), cell.row);
    return cell;
  });
  assert.equal(await page.evaluate(() => window.explorer.hoverToken), -1, 'leaving the map lets go of the row');
});

test('the element\'s map is walked the same way', { engines: 'all', why: 'input' }, async () => {
  // embed.html?view=single&selected-head=5
  const page = await embed({ view: 'single', 'selected-head': '5' });
  await focusPage(page);
  await page.evaluate(() => document.querySelector('mha-explorer').shadowRoot.querySelector('.single canvas').focus());
  const L = await page.evaluate(() => document.querySelector('mha-explorer').result.tokens.length);
  const at = (v) => (v < 0 ? L + v : v);
  await walkMap(page, 'element', (row, col) => page.evaluate(([i, j]) => {
    const { result } = document.querySelector('mha-explorer');
    const n = result.tokens.length;
    return { row: i, col: j, query: result.tokens[i], key: result.tokens[j], value: result.weights.data[4 * n * n + i * n + j] };
  }, [at(row), at(col)]));
});

test('prefers-reduced-motion turns the progress bar\'s animation off', { engines: 'all', why: 'accessibility' }, async () => {
  const animation = (page) => page.evaluate(() => {
    const progress = document.querySelector('mha-explorer').shadowRoot.querySelector('.progress');
    progress.hidden = false;
    const bar = getComputedStyle(progress.querySelector('.bar'), '::after');
    const out = { reduce: matchMedia('(prefers-reduced-motion: reduce)').matches, name: bar.animationName, duration: bar.animationDuration };
    progress.hidden = true;
    return out;
  });
  const normal = await animation(await embed({}));
  // reduced motion is the browser's setting when the page opens: a page of its own, the embed
  // and then the lesson page loaded in it
  const page = await newPage({ viewport: { width: 1000, height: 700 }, reducedMotion: 'reduce' });
  const reduced = await animation(await loadEmbed(page));
  note(`progress bar: ${JSON.stringify(normal)} normally, ${JSON.stringify(reduced)} with reduced motion (${ENGINE === 'chromium' ? 'emulated' : ENGINE === 'firefox' ? 'ui.prefersReducedMotion' : 'GTK gtk-enable-animations=false'})`);
  assert.equal(normal.reduce, false);
  assert.equal(normal.name, 'slide');
  assert.equal(reduced.reduce, true);
  assert.equal(reduced.name, 'none');
  // the page itself: nothing animates or transitions
  await page.setViewport({ width: 1280, height: 900 });
  await loadLesson(page);
  const moving = await page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => {
    const s = getComputedStyle(e);
    return (s.animationName && s.animationName !== 'none') || s.transitionDuration.split(',').some((d) => parseFloat(d) > 0);
  }).map((e) => e.tagName));
  assert.deepEqual(moving, [], 'elements of the page that still animate with reduced motion');
  await page.close();
});

test('no page errors', { engines: 'all', why: 'errors' }, async () => {
  for (const page of Object.values(pages)) await (await page.catch(() => null))?.flushEvents();
  assert.deepEqual(errors, []);
});
