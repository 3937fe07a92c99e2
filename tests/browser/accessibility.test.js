// axe-core (npm) in each engine: the WCAG 2.0 and 2.1 rules of levels A and AA on the lesson
// page (every section scrolled into view: light at 1280, 1024 and 390 px wide, dark at 1280),
// the iframe embed page (every view at 390, 1024 and 1280 px wide; light and dark at 1000 px),
// the train view and the element's example page (its iframe included). Each page must have 0
// violations; the rules that ran and every violation found are printed. Everything here runs in
// all three engines (the accessibility tree and what scrolls at each width are the engine's).
//
// One lesson page and one embed page serve every check of their kind: resized
// (page.setViewport) and re-themed between checks, and walked down again, not reloaded (axe
// reads the page as it is). The train view and the example page are pages of their own.
//
//   MHA_BROWSER=firefox node --test tests/browser/accessibility.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, limits, note, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, settled } from './page-state.js';
import { runAxe } from './axe.js';

let server;
let browser;
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

/** Animation frames drawn: what a resize or a new attribute schedules has been drawn. */
const frames = (page, n = 3) => page.evaluate(async (count) => {
  for (let k = 0; k < count; k += 1) await new Promise((r) => requestAnimationFrame(() => r()));
}, n);

async function openLesson() {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' && document.querySelector('#lesson')?.dataset.ready === 'true', null, { timeout: 60000 });
  await attachExplorer(page);
  await settled(page);
  return page;
}

/** The lesson page at this size and theme, every part of it drawn. */
async function lessonAs(theme, viewport) {
  const page = await shared('lesson', openLesson);
  await page.setViewport(viewport);
  if (await page.evaluate(() => document.documentElement.dataset.theme) !== theme) await page.click('#theme-toggle');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme);
  assert.deepEqual(await page.evaluate(() => [innerWidth, innerHeight]), [viewport.width, viewport.height]);
  // every part of the page in view once at this size, so that lazily drawn parts (formulas) are
  // there: the page walked down a screen at a time (a part taller than the screen is seen whole)
  await page.evaluate(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
    for (let y = 0; y < document.documentElement.scrollHeight; y += Math.round(innerHeight * 0.8)) {
      window.scrollTo(0, y);
      await frame();
      await frame();
    }
  });
  // formulas that came on screen are typeset (those in closed <details> wait until opened, those
  // scrolled out of a sideways-scrolling box until it is scrolled)
  await page.waitForFunction(() => [...document.querySelectorAll('#lesson .math:not(.math-rendered):not(.math-failed)')]
    .every((m) => {
      if (!m.getClientRects().length || (m.checkVisibility && !m.checkVisibility())) return true;
      const r = m.getBoundingClientRect();
      for (let box = m.parentElement; box && box !== document.body; box = box.parentElement) {
        const style = getComputedStyle(box);
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const b = box.getBoundingClientRect();
        if (r.right <= b.left || r.left >= b.right || r.bottom <= b.top || r.top >= b.bottom) return true;
      }
      return false;
    }), null, { timeout: 30000 });
  await settled(page);
  return page;
}

// A phone, a small laptop (WebKitGTK's default window, 1024 × 730) and a desktop: what scrolls
// sideways at one width and not at another must be reachable by keyboard at each.
function viewportAt(width) {
  if (ENGINE === 'webkit' && width < 447) {
    note(`${limits.touch}: checked at 447 px, its narrowest`);
    return { width: 447, height: 900 };
  }
  return { width, height: width === 1024 ? 730 : width === 1000 ? 700 : 900 };
}

test('the lesson page, every section in view, light theme, at 1280, 1024 and 390 px wide: 0 violations at each', { engines: 'all', why: 'accessibility' }, async () => {
  for (const width of [1280, 1024, 390]) {
    const viewport = viewportAt(width);
    const page = await lessonAs('light', viewport);
    assert.deepEqual(await runAxe(page, `lesson page (light) at ${viewport.width} × ${viewport.height}`), []);
  }
});

test('the lesson page, every section in view, dark theme: 0 violations', { engines: 'all', why: 'accessibility' }, async () => {
  const page = await lessonAs('dark', viewportAt(1280));
  assert.deepEqual(await runAxe(page, 'lesson page (dark)'), []);
});

const VIEWS = ['compare', 'single', 'grid'];

async function openEmbed() {
  const page = await browser.newPage({ viewport: viewportAt(1280) });
  await page.goto(`${server.url}embed.html?view=compare`);
  await page.waitForFunction(() => document.querySelector('mha-explorer')?.status === 'ready', null, { timeout: 60000 });
  return page;
}

/**
 * The embed page at this size, with the theme of `embed.html?theme=…` (null: none given, as
 * `embed.html?view=compare` opens), each view in turn checked: the labels of the checks.
 */
async function checkEmbed(viewport, theme, label) {
  const page = await shared('embed', openEmbed);
  await page.setViewport(viewport);
  // embed.html sets the element's attributes from its query string: the same attribute set here
  await page.evaluate((t) => {
    const e = document.querySelector('mha-explorer');
    if (t === null) e.removeAttribute('theme'); else e.setAttribute('theme', t);
  }, theme);
  for (const view of VIEWS) {
    await page.evaluate((v) => { document.querySelector('mha-explorer').view = v; }, view);
    await page.waitForFunction((v) => document.querySelector('mha-explorer').shadowRoot.querySelector(`.${v}`), view);
    await frames(page);
    assert.deepEqual(await page.evaluate(() => [innerWidth, document.querySelector('mha-explorer').classList.contains('dark')]), [viewport.width, theme === 'dark']);
    assert.deepEqual(await runAxe(page, label(view)), []);
  }
}

test('the iframe embed at 390, 1024 and 1280 px wide, every view: 0 violations at each', { engines: 'all', why: 'accessibility' }, async () => {
  for (const width of [390, 1024, 1280]) {
    const viewport = viewportAt(width);
    await checkEmbed(viewport, null, (view) => `embed.html at ${viewport.width} × ${viewport.height}, ${view} view`);
  }
});

for (const theme of ['light', 'dark']) {
  test(`the iframe embed page, ${theme} theme: 0 violations`, { engines: 'all', why: 'accessibility' }, async () => {
    await checkEmbed(viewportAt(1000), theme, (view) => `embed.html, ${view} view (${theme})`);
  });
}

test('the train view: 0 violations', { engines: 'all', why: 'accessibility' }, async () => {
  const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  await page.goto(new URL('app/train/index.html', server.url).href);
  await page.waitForFunction(() => window[Symbol.for('mha-train-view')]?.trained?.maps || window[Symbol.for('mha-train-view')]?.errors.length, null, { timeout: 100000 });
  assert.deepEqual(await runAxe(page, 'train view'), []);
  await page.close();
});

test('the element\'s example page (several elements and an iframe embed): 0 violations', { engines: 'all', why: 'accessibility' }, async () => {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(`${server.url}examples/embed.html`);
  const allReady = () => [...document.querySelectorAll('mha-explorer')].length > 0 &&
    [...document.querySelectorAll('mha-explorer')].every((e) => e.status === 'ready');
  await page.waitForFunction(allReady, null, { timeout: 60000 });
  const frame = (await page.frames()).find((f) => f.url.includes('/embed.html?'));
  assert.ok(frame, 'the iframe embed loaded');
  await frame.waitForFunction(allReady, null, { timeout: 60000 });
  assert.deepEqual(await runAxe(page, 'examples/embed.html'), []);
  await page.close();
});
