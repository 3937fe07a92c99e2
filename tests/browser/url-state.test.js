// A link opens the same view (web/explorer/url.js, through the page's explorer), in each engine: the URL holds the source,
// seed, layer, sentence, selected and compared heads and the part in view; a link opened in a
// new page shows that state; every change is a history entry that back and forward return to;
// bad and hostile parameters give a message and the default, and the page keeps working.
// The links, history and the shared link run in every engine; the bad and hostile parameters,
// our own parsing and validation, in Chromium. One page for the file: each test opens its link
// in it, a new document each time.
//
//   MHA_BROWSER=firefox node --test tests/browser/url-state.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, settled } from './page-state.js';
import { EXAMPLES } from '../../web/sources/examples.js';

let server;
let browser;
let page;
const errors = [];

before(async () => {
  ({ server, browser } = await startWeb());
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageError', (message) => errors.push(message));
  page.on('dialog', (text) => errors.push(`dialog ${text}`));
});

after(() => stopWeb({ server, browser }));

/** The file's page opened anew at the link `query`; resolves once it shows what the link names. */
async function open(query) {
  await page.goto(`${server.url}${query}`);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'ok');
  await attachExplorer(page);
  await settled(page, 60000);
  return page;
}

const shown = (p) => p.evaluate(() => {
  const x = window.explorer;
  const note = document.getElementById('url-note');
  return {
    source: x.source.id, seed: document.getElementById('seed').value, layer: x.source.layer, sentence: x.sentence.text,
    head: x.selectedHead + 1, compare: [x.pair.a + 1, x.pair.b + 1], search: location.search,
    note: note && !note.hidden ? note.textContent : '', pwned: window.__pwned ?? null,
  };
});

test('a link opens the view it names, and the page writes its state back into the URL', { engines: 'all', why: 'navigation' }, async () => {
  const query = `?source=random&seed=3&sentence=${encodeURIComponent('The dog chased the cat.')}&head=5&compare=5,2&view=compare`;
  await open(query);
  const s = await shown(page);
  console.log(`  [${ENGINE}] ${query} -> ${JSON.stringify(s)}`);
  assert.deepEqual({ ...s, search: undefined }, { source: 'random', seed: '3', layer: 0, sentence: 'The dog chased the cat.', head: 5, compare: [5, 2], search: undefined, note: '', pwned: null });
  const params = new URLSearchParams(s.search);
  assert.deepEqual(Object.fromEntries(params), { source: 'random', seed: '3', sentence: 'The dog chased the cat.', head: '5', compare: '5,2', view: 'compare' });
  // the compare panel is the one in view
  const top = await page.evaluate(() => document.getElementById('compare-view').closest('.panel').getBoundingClientRect().top);
  assert.ok(Math.abs(top) < 40, `the compare panel starts ${top}px from the top of the window`);
  // the drawn map is the selected head's, for that sentence
  const drawn = await page.evaluate(async () => {
    const { drawnOn } = await import('/views/heatmap.js');
    const values = Array.from(drawnOn(document.getElementById('main-heatmap')).values);
    return values.every((v, k) => v === window.explorer.map()[k]) && values.length === window.explorer.sentence.tokens.length ** 2;
  });
  assert.ok(drawn, 'the main map shows head 5 of the linked sentence');
});

test('each change is a history entry: back and forward walk through them, and a copied link reopens it', { engines: 'all', why: 'navigation' }, async () => {
  await open('');
  assert.equal((await shown(page)).search, '', 'the default view has a plain URL');
  // the page's history already holds the links opened before in it: entries are counted from here
  const entries = await page.evaluate(() => history.length);
  await page.click('#head-tab-3');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('head') === '4');
  await page.click('#sentence-list [role="radio"]', { index: 2 });
  await page.waitForFunction((t) => new URLSearchParams(location.search).get('sentence') === t, EXAMPLES[2].text);
  await page.check('input[name="source"][value="trained"]');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('source') === 'trained', null, { timeout: 60000 });
  await settled(page, 60000);
  await page.selectOption('#layer', '1');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('layer') === '1', null, { timeout: 60000 });
  await settled(page, 60000);
  const last = await shown(page);
  console.log(`  [${ENGINE}] after four changes: ${last.search}`);
  assert.equal(last.source, 'trained');
  assert.equal(last.layer, 1);
  const added = await page.evaluate(() => history.length) - entries;
  assert.ok(added >= 4, `one history entry per change: ${added} entries for four changes`);

  const back = async () => {
    await page.evaluate(() => {
      window.urlApplied = false;
      document.addEventListener('mha-link-applied', () => { window.urlApplied = true; }, { once: true });
      history.back();
    });
    await page.waitForFunction(() => window.urlApplied, null, { timeout: 60000 });
    await settled(page, 60000);
    return shown(page);
  };
  const b1 = await back();
  assert.equal(b1.source, 'trained');
  assert.equal(b1.layer, 0);
  const b2 = await back();
  assert.equal(b2.source, 'designed');
  assert.equal(b2.sentence, EXAMPLES[2].text);
  assert.equal(b2.head, 4);
  const b3 = await back();
  assert.equal(b3.sentence, EXAMPLES[0].text);
  assert.equal(b3.head, 4);
  console.log(`  [${ENGINE}] back ×3: ${[b1, b2, b3].map((s) => s.search || '(plain)').join(' | ')}`);
  await page.evaluate(() => {
    window.urlApplied = false;
    document.addEventListener('mha-link-applied', () => { window.urlApplied = true; }, { once: true });
    history.forward();
  });
  await page.waitForFunction(() => window.urlApplied, null, { timeout: 60000 });
  await settled(page, 60000);
  const f1 = await shown(page);
  assert.equal(f1.sentence, EXAMPLES[2].text);
  assert.equal(f1.head, 4);

  // the link as a student would share it, opened anew: a new document that has only the link
  await open(f1.search);
  const again = await shown(page);
  assert.deepEqual({ ...again, note: undefined }, { ...f1, note: undefined });
});

test('bad and hostile parameters give a message and the default; nothing is injected; the page keeps working', { engines: 'chromium', why: 'validation' }, async () => {
  const long = Array.from({ length: 70 }, (_, k) => `word${k}`).join(' ');
  const cases = [
    { query: '?head=99', message: /head=.*99.*from 1 to 8/ },
    { query: '?head=-1&compare=1', message: /head=.*compare=/ },
    { query: `?source=${encodeURIComponent('<script>window.__pwned=1</script>')}`, message: /source=/ },
    { query: '?source=random&seed=-5', message: /seed=/, source: 'random' },
    { query: '?source=random&seed=1e400', message: /seed=/, source: 'random' },
    { query: `?view=${encodeURIComponent('javascript:window.__pwned=2')}`, message: /view=/ },
    { query: '?source=file', message: /file cannot be opened from a link/ },
    { query: '?source=designed&layer=3', message: /layer=/ },
    { query: `?sentence=${encodeURIComponent(long)}`, message: /sentence could not be shown.*70 tokens/ },
    { query: `?sentence=${encodeURIComponent('x'.repeat(5000))}`, message: /sentence=.*at most 600/ },
    { query: '?colour=red&head=2', message: /"colour" is not one/, head: 2 },
    { query: '?compare=2,2,2', message: /compare=/ },
    { query: '?head=%E0%A4%A', message: /head=/ },
  ];
  for (const c of cases) {
    await open(c.query);
    const s = await shown(page);
    console.log(`  [${ENGINE}] ${c.query.slice(0, 70)} -> ${s.source}, head ${s.head}, "${s.sentence.slice(0, 30)}"; ${s.note.slice(0, 150)}`);
    assert.match(s.note, c.message, `${c.query}: the message`);
    assert.equal(s.pwned, null, `${c.query}: something ran`);
    assert.equal(s.source, c.source ?? 'designed', `${c.query}: source`);
    assert.equal(s.head, c.head ?? 1, `${c.query}: head`);
    if (!c.source) assert.equal(s.sentence, EXAMPLES[0].text, `${c.query}: the default sentence`);
    // the URL now names what is shown
    const params = new URLSearchParams(s.search);
    assert.ok(!params.has('view') && !params.has('colour'), `${c.query}: the URL still holds the bad parameter (${s.search})`);
  }
  // typed markup in a link stays text
  await open(`?sentence=${encodeURIComponent('The <img src=x onerror="window.__pwned=3"> cat <b>sat</b>.')}`);
  const markup = await shown(page);
  assert.equal(markup.pwned, null);
  assert.equal(await page.count('#token-strip img, #token-strip b'), 0, 'markup in a link became elements');
  assert.match(markup.sentence, /<img/);
  // and it still works
  await page.click('#head-tab-6');
  await page.waitForFunction(() => window.explorer.selectedHead === 6 && new URLSearchParams(location.search).get('head') === '7');
});

test('no page errors or dialogs', { engines: 'all', why: 'errors' }, async () => {
  await page.flushEvents();
  assert.deepEqual(errors, []);
});
