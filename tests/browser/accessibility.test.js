// axe-core (npm) in each engine: the WCAG 2.0 and 2.1 rules of levels A and AA on the lesson
// page (every section scrolled into view, light and dark; and at 390, 1024 and 1280 px wide), the train view, the iframe embed
// page (light and dark) and the element's example page (its iframe included). Each page must
// have 0 violations; the rules that ran and every violation found are printed.
//
//   MHA_BROWSER=firefox node --test tests/browser/accessibility.test.js

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, limits, note, startWeb, stopWeb } from './driver.js';
import { attachExplorer, settled } from './page-state.js';
import { runAxe } from './axe.js';

let server;
let browser;

before(async () => {
  ({ server, browser } = await startWeb());
});

after(() => stopWeb({ server, browser }));

async function lessonPage(theme, viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage({ viewport });
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' && document.querySelector('#lesson')?.dataset.ready === 'true', null, { timeout: 60000 });
  await attachExplorer(page);
  await settled(page);
  if (theme === 'dark') {
    await page.click('#theme-toggle');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  }
  // every part of the page in view once, so that lazily drawn parts (formulas) are there: the
  // page walked down a screen at a time (a part taller than the screen is seen whole)
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

for (const theme of ['light', 'dark']) {
  test(`the lesson page, every section in view, ${theme} theme: 0 violations`, async () => {
    const page = await lessonPage(theme);
    assert.deepEqual(await runAxe(page, `lesson page (${theme})`), []);
    await page.close();
  });
}

// A phone, a small laptop (WebKitGTK's default window, 1024 × 730) and a desktop: what scrolls
// sideways at one width and not at another must be reachable by keyboard at each.
function viewportAt(width) {
  if (ENGINE === 'webkit' && width < 447) {
    note(`${limits.touch}: checked at 447 px, its narrowest`);
    return { width: 447, height: 900 };
  }
  return { width, height: width === 1024 ? 730 : 900 };
}

test('the lesson page at 390, 1024 and 1280 px wide: 0 violations at each', async () => {
  for (const width of [390, 1024, 1280]) {
    const viewport = viewportAt(width);
    const page = await lessonPage('light', viewport);
    assert.deepEqual(await runAxe(page, `lesson page at ${viewport.width} × ${viewport.height}`), []);
    await page.close();
  }
});

test('the iframe embed at 390, 1024 and 1280 px wide, every view: 0 violations at each', async () => {
  for (const width of [390, 1024, 1280]) {
    const viewport = viewportAt(width);
    const page = await browser.newPage({ viewport });
    await page.goto(`${server.url}embed.html?view=compare`);
    await page.waitForFunction(() => document.querySelector('mha-explorer')?.status === 'ready', null, { timeout: 60000 });
    assert.deepEqual(await runAxe(page, `embed.html at ${viewport.width} × ${viewport.height}, compare view`), []);
    for (const view of ['single', 'grid']) {
      await page.evaluate((v) => { document.querySelector('mha-explorer').view = v; }, view);
      await page.waitForFunction((v) => document.querySelector('mha-explorer').shadowRoot.querySelector(`.${v}`), view);
      assert.deepEqual(await runAxe(page, `embed.html at ${viewport.width} × ${viewport.height}, ${view} view`), []);
    }
    await page.close();
  }
});

test('the train view: 0 violations', async () => {
  const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  await page.goto(new URL('app/train/index.html', server.url).href);
  await page.waitForFunction(() => window[Symbol.for('mha-train-view')]?.trained?.maps || window[Symbol.for('mha-train-view')]?.errors.length, null, { timeout: 100000 });
  assert.deepEqual(await runAxe(page, 'train view'), []);
  await page.close();
});

for (const theme of ['light', 'dark']) {
  test(`the iframe embed page, ${theme} theme: 0 violations`, async () => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    await page.goto(`${server.url}embed.html?view=compare&theme=${theme}`);
    await page.waitForFunction(() => document.querySelector('mha-explorer')?.status === 'ready', null, { timeout: 60000 });
    assert.deepEqual(await runAxe(page, `embed.html (${theme})`), []);
    for (const view of ['single', 'grid']) {
      await page.evaluate((v) => { document.querySelector('mha-explorer').view = v; }, view);
      await page.waitForFunction((v) => document.querySelector('mha-explorer').shadowRoot.querySelector(`.${v}`), view);
      assert.deepEqual(await runAxe(page, `embed.html, ${view} view (${theme})`), []);
    }
    await page.close();
  });
}

test('the element\'s example page (several elements and an iframe embed): 0 violations', async () => {
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
