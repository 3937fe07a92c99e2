// A phone: 390 × 844 CSS px with touch (Chromium's mobile emulation; WebKit's touch pointer
// actions in a window of that size). The page never scrolls sideways; a tap on a token follows
// it, a tap on a head selects it, a tap picks a source; the heatmaps stay readable: each map
// either fits its box or scrolls inside it, with cells of at least 3 px and labels that do not
// overlap. Firefox has no touch emulation here: it says so, and the small screen is checked
// with the mouse instead. A sentence of 64 tokens (the most the explorer takes): each token is
// named on the axes of the single head's map and of the compared maps, or named when its cell is
// tapped or pointed at (the labels drawn are read back with drawnOn). Screenshots:
// build/screenshots/<engine>/phone-*.png with MHA_SCREENSHOTS=all. The tests run in all three engines (layout and touch
// are the engine's), on one phone page opened first (a touch screen is set when a page opens);
// the explorer is put back between them (resetExplorer).
//
//   MHA_BROWSER=webkit node --test tests/browser/touch.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, limits, note, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, resetExplorer, settled, waitForExplorer } from './page-state.js';
import { tokensNamed } from './readable.js';

const PHONE = { width: 390, height: 844 };
// WebKitGTK under Xvfb has no touch screen (navigator.maxTouchPoints 0, touch actions give no
// click) and MiniBrowser's window is at least 447 px wide: it says so and is checked like Firefox
const touch = ENGINE === 'chromium';

let server;
let browser;
let page;
const errors = [];

before(async () => {
  ({ server, browser } = await startWeb());
  page = await browser.newPage({ viewport: PHONE, touch, mobile: touch, deviceScaleFactor: ENGINE === 'chromium' ? 3 : undefined });
  page.on('pageError', (message) => errors.push(message));
  if (!touch) note(`${limits.touch}: the small layout is checked, and taps are mouse clicks`);
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok', null, { timeout: 60000 });
  await attachExplorer(page);
  await settled(page);
});

after(() => stopWeb({ server, browser }));

const tap = (selector, options) => (touch ? page.tap(selector, options) : page.click(selector, options));

/** Whether the page scrolls sideways, and how each heatmap sits in its box. */
const layout = () => page.evaluate(async () => {
  const { drawnOn } = await import('/views/heatmap.js');
  const maps = [...document.querySelectorAll('#main-heatmap, #small-multiples canvas, #pair-map-a, #pair-map-b, #pair-map-diff')].map((c) => {
    const shown = drawnOn(c);
    const box = c.parentElement;
    const r = c.getBoundingClientRect();
    const scrolls = (e) => e && /(auto|scroll)/.test(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth;
    let scroller = null;
    for (let e = c.parentElement; e && e !== document.body; e = e.parentElement) if (scrolls(e)) { scroller = e; break; }
    return { id: c.id || 'multiple', cell: shown?.layout?.cell ?? null, right: r.right, fits: r.right <= innerWidth + 0.5, scrolls: !!scroller, box: box.className };
  });
  return {
    innerWidth, scrollWidth: document.documentElement.scrollWidth, bodyScroll: document.body.scrollWidth,
    touchPoints: navigator.maxTouchPoints, coarse: matchMedia('(pointer: coarse)').matches, maps,
  };
});

test('390 × 844: the page does not scroll sideways and every map fits or scrolls in its own box', { engines: 'all', why: 'layout' }, async () => {
  await resetExplorer(page);
  const shortText = await layout();
  await page.fill('#free-text', Array.from({ length: 40 }, (_, k) => (k % 3 ? 'cat' : 'the')).join(' ').concat('.'));
  await page.press('#free-text', 'Enter');
  await waitForExplorer(page, () => window.explorer.sentence.tokens.length === 41);
  const longText = await layout();
  for (const [label, l] of [['11 tokens', shortText], ['41 tokens', longText]]) {
    const cells = l.maps.map((m) => m.cell).filter((c) => c !== null);
    console.log(`  [${ENGINE}] ${label}: inner width ${l.innerWidth}, document ${l.scrollWidth} px wide; touch points ${l.touchPoints}, coarse pointer ${l.coarse}; `
      + `main map cell ${l.maps[0].cell} px, smallest cell ${Math.min(...cells)} px; maps beyond the window: ${l.maps.filter((m) => !m.fits).length}, of which scroll in their box: ${l.maps.filter((m) => !m.fits && m.scrolls).length}`);
    assert.ok(l.scrollWidth <= l.innerWidth, `${label}: the page is ${l.scrollWidth} px wide in a ${l.innerWidth} px window`);
    assert.ok(l.maps.every((m) => m.fits || m.scrolls), `${label}: a map sticks out of the window without its own scroll box: ${JSON.stringify(l.maps.filter((m) => !m.fits && !m.scrolls))}`);
    assert.ok(cells.every((c) => c >= 3), `${label}: cells of ${Math.min(...cells)} px`);
  }
  if (touch) assert.ok(longText.touchPoints > 0, 'the page sees a touch screen');
  await page.screenshot('phone-explorer.png');
});

// 64 tokens: words and punctuation marks each count as one
const LONG_SENTENCE = 'The old farmer who lived near the river walked slowly to the market because he wanted to sell the apples that his daughter '
  + 'had picked in the orchard, and when he arrived there, the merchants who knew him greeted him warmly and asked him about the harvest, '
  + 'the weather, the roads and the price of bread in the town.';

test('64 tokens on a phone: every token is named on the map\'s axes or when its cell is tapped, single head and compared heads', { engines: 'all', why: 'input', timeout: 120_000 }, async () => {
  await resetExplorer(page);
  await page.fill('#free-text', LONG_SENTENCE);
  await page.press('#free-text', 'Enter');
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, LONG_SENTENCE);
  assert.equal(await page.evaluate(() => window.explorer.sentence.tokens.length), 64);
  for (const [map, said] of [['main-heatmap', '#tooltip'], ['pair-map-a', '#pair-cell']]) {
    // a tap (a click where there is no touch screen) on the map's middle names that cell's query and key
    await page.scrollIntoView(`#${map}`);
    await tap(`#${map}`);
    const tapped = await page.evaluate(async ([id, selector]) => {
      const { drawnOn } = await import('/views/heatmap.js');
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      const { named } = drawnOn(document.getElementById(id)).labels;
      const tokens = window.explorer.shown().sentence.tokens.map((t) => t.text);
      // the hovered cell's row is named last (after a highlighted row), its column alone
      const row = named.rows.at(-1);
      const [col] = named.cols;
      return { row, col, query: tokens[row], key: tokens[col], said: document.querySelector(selector).textContent };
    }, [map, said]);
    console.log(`  [${ENGINE}] ${map}: tapped cell (${tapped.row}, ${tapped.col}): "${tapped.said}"`);
    assert.ok(tapped.row >= 0 && tapped.col >= 0, `${map}: the tapped cell's row and column are named on its axes`);
    assert.ok(tapped.said.includes(`“${tapped.query}”`) && tapped.said.includes(`“${tapped.key}”`), `${map}: "${tapped.said}" names “${tapped.query}” and “${tapped.key}”`);
    const named = await page.evaluate(tokensNamed, { map, said });
    console.log(`  [${ENGINE}] ${map}: ${named.tokens} tokens in ${named.cell} px cells; labels drawn: ${named.rowsDrawn} rows, ${named.colsDrawn} columns at ${named.fontSize} px; `
      + `${named.pointedAt} more pointed at, unnamed: ${named.unnamed.length}`);
    assert.equal(named.tokens, 64);
    assert.deepEqual(named.unnamed, [], `${map}: tokens not named`);
  }
  await page.scrollIntoView('#main-heatmap');
  await page.screenshot('phone-64-tokens.png');
  await page.scrollIntoView('#pair-map-a');
  await page.screenshot('phone-64-tokens-compared.png');
});

test('tap a token to follow it, tap a head, pick a source', { engines: 'all', why: 'input' }, async () => {
  await resetExplorer(page);
  // the first sentence opens following token 7 ("it"): another token followed first, so that
  // only the tap can bring it back
  await page.evaluate(() => window.explorer.setFocusToken(0));
  await page.waitForFunction(() => !/“it”/.test(document.getElementById('wo-formula')?.textContent ?? ''));
  await tap('#token-strip button[data-index="7"]');
  await page.waitForFunction(() => window.explorer.focusToken === 7);
  const followed = await page.evaluate(() => document.getElementById('wo-formula')?.textContent ?? '');
  assert.match(followed, /“it”/, 'the W_O view follows the tapped token');
  await tap('#head-tab-4');
  await waitForExplorer(page, () => window.explorer.selectedHead === 4);
  await tap('input[name="source"][value="random"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'random');
  await tap('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'designed');
  const state = await page.evaluate(() => ({ focus: window.explorer.focusToken, head: window.explorer.selectedHead, source: window.explorer.source.id, width: document.documentElement.scrollWidth }));
  console.log(`  [${ENGINE}] after taps: ${JSON.stringify(state)}`);
  assert.equal(state.head, 4);
  assert.ok(state.width <= await page.evaluate(() => innerWidth), 'still no sideways scrolling');
  await page.scrollIntoView('#head-tabs');
  await page.screenshot('phone-head.png');
  await page.flushEvents();
  assert.deepEqual(errors, []);
});
