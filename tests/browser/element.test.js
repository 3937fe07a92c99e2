// <mha-explorer> in each engine (tests/browser/driver.js): the numbers it shows are the JS API's for the same weights and
// tokens; attributes, views, events, several independent instances, sizing to its container,
// theme and height, keyboard, and clear errors for bad attributes. Screenshots go to
// build/screenshots/<engine>/ with MHA_SCREENSHOTS=all. What is drawn and laid out (sizing, theme and height, the
// screenshots) runs in all three engines; what only exercises the element's own code (its
// numbers against the API's, its attributes, views and events, its error messages) in Chromium.
// One page (embed.html) for all: each test adds its elements and removes them.
//
//   node --test tests/browser/element.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startWeb, stopWeb, test } from './driver.js';

let server;
let browser;
let page;
const pageErrors = [];

before(async () => {
  ({ server, browser } = await startWeb());
  page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  page.on('pageError', (message) => pageErrors.push(message));
  // embed.html brings the element; the tests add their own instances beside it
  await page.goto(`${server.url}embed.html?view=single`);
  await page.waitForFunction(() => document.querySelector('mha-explorer')?.status === 'ready');
  await page.evaluate(() => {
    document.body.style.height = 'auto';
    // helpers for the tests, kept out of window's own names
    window[Symbol.for('test')] = {
      add(attributes, parent = document.body) {
        const e = document.createElement('mha-explorer');
        for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
        e.computedCount = 0;
        e.events = [];
        e.addEventListener('mha-computed', () => { e.computedCount += 1; });
        e.addEventListener('mha-head-selected', (ev) => e.events.push(ev.detail));
        // the names of 0.1, kept as documented: once per thing, like the prefixed ones
        e.aliases = { computed: 0, 'head-selected': 0 };
        for (const name of Object.keys(e.aliases)) e.addEventListener(name, () => { e.aliases[name] += 1; });
        parent.append(e);
        return e;
      },
      // a view's code loads when the view is first shown: wait until it has drawn
      until: (predicate, ms = 10000) => new Promise((resolve, reject) => {
        const started = performance.now();
        const check = () => (predicate() ? resolve() : performance.now() - started > ms ? reject(new Error(`not drawn within ${ms} ms`)) : setTimeout(check, 20));
        check();
      }),
      settled: (e) => new Promise((resolve) => {
        const check = () => (e.status === 'ready' || e.status === 'error' ? resolve(e.status) : setTimeout(check, 20));
        check();
      }),
    };
  });
});

after(() => stopWeb({ server, browser }));

test('the weights it shows are the JS API\'s: designed heads and a PyTorch-exported file', { engines: 'chromium', why: 'computation' }, async () => {
  const result = await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    const { loadMha, loadStateDictFile } = await import('/lib/index.js');
    const { analyseTokens } = await import('/sources/tokens.js');
    const { embedTokens } = await import('/sources/embeddings.js');
    const { designedStateDict } = await import('/sources/designed-heads.js');
    const { TAGGED_EXAMPLES } = await import('/sources/examples.tagged.js');
    const mha = await loadMha();
    const sentence = 'Mary gave John a book, and she smiled at him.';
    const x = embedTokens(analyseTokens(TAGGED_EXAMPLES[sentence]));
    const L = x.length / 64;
    const maxDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
    const out = {};
    for (const [name, heads, load] of [
      ['designed', 'designed', (a) => a.loadStateDict(designedStateDict())],
      ['file', '/examples/weights/mha_e64_h8_seed7.safetensors', async (a) => {
        const bytes = new Uint8Array(await (await fetch('/examples/weights/mha_e64_h8_seed7.safetensors')).arrayBuffer());
        a.loadStateDict(loadStateDictFile(bytes).stateDict);
      }],
    ]) {
      const e = t.add({ sentence, heads, view: 'grid' });
      await t.settled(e);
      const attention = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true });
      await load(attention);
      const expected = attention.forward({ query: { data: x, shape: [1, L, 64] }, averageAttnWeights: false }).weights;
      const stats = mha.headStatistics({ data: expected.data, shape: [8, L, L] }).heads;
      attention.dispose();
      out[name] = {
        status: e.status, shape: e.result.weights.shape, diff: maxDiff(e.result.weights.data, expected.data),
        entropyDiff: maxDiff(e.result.statistics.map((s) => s.entropy), stats.map((s) => s.entropy)),
        tokens: e.result.tokens.length, source: e.result.source,
      };
      e.remove();
    }
    return out;
  });
  for (const [name, r] of Object.entries(result)) {
    console.log(`  ${name}: weights (${r.shape}) max |element − API| ${r.diff}, entropy max |diff| ${r.entropyDiff} (expected 0)`);
    assert.equal(r.status, 'ready');
    assert.deepEqual(r.shape, [8, 12, 12]);
    assert.equal(r.diff, 0);
    assert.equal(r.entropyDiff, 0);
  }
  assert.equal(result.file.source, 'file');
});

test('views, selected head, head-selected events, keyboard', { engines: 'chromium', why: 'validation' }, async () => {
  const r = await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    const e = t.add({ view: 'grid', 'selected-head': '2' });
    await t.settled(e);
    const root = e.shadowRoot;
    const out = { gridCells: root.querySelectorAll('.grid .multiple').length, pressed: root.querySelector('.multiple[aria-pressed="true"]').dataset.head };
    root.querySelectorAll('.grid .multiple')[6].click();
    out.afterClick = e.getAttribute('selected-head');
    out.event = e.events.at(-1);
    e.view = 'single';
    await t.until(() => !!root.querySelector('.single canvas') && !root.querySelector('.grid'));
    out.single = !!root.querySelector('.single canvas') && !root.querySelector('.grid');
    out.tab = root.querySelector('[role="tab"][aria-selected="true"]').dataset.head;
    root.querySelector('[role="tab"][aria-selected="true"]').focus();
    root.querySelector('.tabs').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    out.afterArrow = e.selectedHead;
    root.querySelector('[data-view="compare"]').click();
    await t.until(() => root.querySelectorAll('.compare canvas.heatmap').length === 4 && root.querySelector('.compare .jsd')?.textContent);
    out.compareMaps = root.querySelectorAll('.compare canvas.heatmap').length;
    out.compareText = root.querySelector('.compare .jsd').textContent;
    out.viewAttribute = e.getAttribute('view');
    out.computedCount = e.computedCount; // view and head changes redraw; they do not recompute
    out.aliases = { ...e.aliases, selected: e.events.length };
    e.remove();
    return out;
  });
  console.log(`  ${JSON.stringify(r)}`);
  assert.equal(r.gridCells, 8);
  assert.equal(r.pressed, '2');
  assert.equal(r.afterClick, '7');
  assert.deepEqual(r.event, { head: 7, index: 6, name: 'Head 7 – No-op: first-token sink' });
  assert.deepEqual(r.aliases, { computed: r.computedCount, 'head-selected': r.aliases.selected, selected: r.aliases.selected }, 'each alias once per event');
  assert.ok(r.single);
  assert.equal(r.tab, '7');
  assert.equal(r.afterArrow, 8);
  assert.equal(r.compareMaps, 4, 'A, B, A − B and the divergence between every pair of heads');
  assert.match(r.compareText, /Jensen–Shannon divergence .* \d\.\d{3} nats/);
  assert.equal(r.viewAttribute, 'compare');
  assert.equal(r.computedCount, 1);
});

test('each element sizes itself to its container', { engines: 'all', why: 'layout' }, async () => {
  const r = await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    const narrow = document.createElement('div');
    narrow.style.width = '380px';
    const wide = document.createElement('div');
    wide.style.width = '900px';
    document.body.append(narrow, wide);
    const a = t.add({ view: 'single', heads: 'random:1' }, narrow);
    const b = t.add({ view: 'single' }, wide);
    await Promise.all([t.settled(a), t.settled(b)]);
    const width = (e) => e.shadowRoot.querySelector('.single canvas').getBoundingClientRect().width;
    const out = { narrow: width(a), wide: width(b) };
    narrow.style.width = '700px';
    // redrawn by its ResizeObserver on a later frame: wait for that (at most 5 s on a busy machine)
    for (let k = 0; k < 250 && width(a) <= out.narrow + 50; k += 1) await new Promise((r2) => setTimeout(r2, 20));
    out.grown = width(a);
    const canvasBox = a.shadowRoot.querySelector('.single canvas').getBoundingClientRect();
    out.infoBeside = a.shadowRoot.querySelector('.single .info').getBoundingClientRect().left >= canvasBox.right;
    a.remove(); b.remove(); narrow.remove(); wide.remove();
    return out;
  });
  console.log(`  ${JSON.stringify(r)}`);
  assert.ok(r.narrow <= 380 - 20, `canvas ${r.narrow}px in a 380px container`);
  assert.ok(r.wide > r.narrow + 100);
  // wider: the map grows and the description moves beside it
  assert.ok(r.grown > r.narrow + 50, `after the container grew the canvas is ${r.grown}px`);
  assert.ok(r.infoBeside, 'the description sits beside the map in a wide container');
});

test('several elements are independent', { engines: 'chromium', why: 'validation' }, async () => {
  const r = await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    const a = t.add({ view: 'single', heads: 'random:1' });
    const b = t.add({ view: 'single' });
    await Promise.all([t.settled(a), t.settled(b)]);
    const out = { aSource: a.result.source, bSource: b.result.source };
    const before = b.computedCount;
    a.sentence = 'The dog chased the cat, and the mouse watched the bird.';
    await new Promise((r2) => a.addEventListener('mha-computed', r2, { once: true }));
    out.bRecomputed = b.computedCount - before;
    out.aTokens = a.result.tokens.length;
    out.bTokens = b.result.tokens.length;
    a.remove(); b.remove();
    return out;
  });
  console.log(`  ${JSON.stringify(r)}`);
  assert.equal(r.aSource, 'random');
  assert.equal(r.bSource, 'designed');
  assert.equal(r.bRecomputed, 0, 'changing one element leaves the other alone');
  assert.equal(r.aTokens, 13);
  assert.equal(r.bTokens, 11);
});

test('theme and height', { engines: 'all', why: 'layout' }, async () => {
  const r = await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    const light = t.add({ theme: 'light', height: '300' });
    const dark = t.add({ theme: 'dark', height: '20rem' });
    await Promise.all([t.settled(light), t.settled(dark)]);
    const bg = (e) => getComputedStyle(e).backgroundColor;
    const out = { light: bg(light), dark: bg(dark), lightHeight: light.getBoundingClientRect().height, darkHeight: dark.getBoundingClientRect().height };
    light.theme = 'dark';
    out.switched = bg(light);
    light.remove(); dark.remove();
    return out;
  });
  console.log(`  ${JSON.stringify(r)}`);
  assert.equal(r.light, 'rgb(255, 255, 255)');
  assert.equal(r.dark, 'rgb(27, 32, 39)');
  assert.equal(r.switched, r.dark);
  assert.equal(r.lightHeight, 300);
  assert.equal(r.darkHeight, 320);
});

test('a fixed height scrolls inside, under a status line nothing is drawn over: the README\'s iframe, a compare element of 520 px, a narrow single view of 430 px', { engines: 'all', why: 'layout' }, async () => {
  const r = await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    const frames = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 50))));
    // the README's snippet, as a course page embeds it
    const iframe = document.createElement('iframe');
    Object.assign(iframe, { src: '/embed.html?sentence=The%20dog%20chased%20the%20cat.&view=compare&selected-head=3', width: '100%', height: '520', title: 'Multi-head attention explorer' });
    const loaded = new Promise((resolve) => iframe.addEventListener('load', resolve, { once: true }));
    document.body.append(iframe);
    const compare = t.add({ view: 'compare', height: '520', sentence: 'The dog chased the cat.', 'selected-head': '3', id: 'fixed-compare' });
    // examples/embed.html's fixed-height demo, in a phone-wide column
    const column = document.createElement('div');
    column.style.width = '380px';
    document.body.append(column);
    const single = t.add({ view: 'single', height: '430', theme: 'dark', 'selected-head': '5', sentence: 'Mary gave John a book, and she smiled at him.', id: 'fixed-single' }, column);
    await loaded;
    const framed = iframe.contentDocument.querySelector('mha-explorer');
    await t.until(() => framed.status === 'ready', 30000);
    await Promise.all([t.settled(compare), t.settled(single)]);
    await frames();
    /** Points across the status line: what is on top at each, in the element's shadow root. */
    const look = (e) => {
      const root = e.shadowRoot;
      const status = root.querySelector('.status');
      const s = status.getBoundingClientRect();
      const host = e.getBoundingClientRect();
      const covered = [];
      for (const fx of [0.02, 0.25, 0.5, 0.75, 0.98]) {
        for (const fy of [0.25, 0.75]) {
          const x = s.left + s.width * fx, y = s.top + s.height * fy;
          const hit = root.elementFromPoint(x, y);
          if (!hit || !(hit === status || status.contains(hit))) covered.push(`${hit ? `${hit.tagName.toLowerCase()}${hit.id ? `#${hit.id}` : ''}.${hit.className}` : 'nothing'} at (${Math.round(x - host.left)}, ${Math.round(y - host.top)})`);
        }
      }
      return { covered, inside: s.top >= host.top - 0.5 && s.bottom <= host.bottom + 0.5, text: status.textContent };
    };
    const out = {};
    for (const [name, e] of [['iframe', framed], ['compare', compare], ['single', single]]) {
      (e.ownerDocument === document ? e : iframe).scrollIntoView({ block: 'center' });
      await frames();
      const box = e.shadowRoot.querySelector('.frame');
      const top = look(e);
      // scrolled to the end: the last of the views passes under the status line, not over it
      box.scrollTop = box.scrollHeight;
      await frames();
      const end = look(e);
      out[name] = { height: e.getBoundingClientRect().height, scrolls: box.scrollHeight > box.clientHeight + 1, content: box.scrollHeight, top, end };
      box.scrollTop = 0;
    }
    iframe.remove();
    return out;
  });
  for (const [name, o] of Object.entries(r)) {
    console.log(`  ${name}: ${o.height} px high, its content ${o.content} px, scrolls inside: ${o.scrolls}; status "${o.top.text}"; covered at the top: ${o.top.covered.length}, at the end: ${o.end.covered.length}`);
    assert.ok(o.scrolls, `${name}: the content (${o.content} px) scrolls inside the ${o.height} px element`);
    for (const [where, seen] of [['top', o.top], ['end', o.end]]) {
      assert.ok(seen.inside, `${name}, scrolled to the ${where}: the status line is inside the element`);
      assert.deepEqual(seen.covered, [], `${name}, scrolled to the ${where}: drawn over the status line`);
    }
  }
  assert.equal(r.iframe.height, 520);
  assert.equal(r.compare.height, 520);
  assert.equal(r.single.height, 430);
  await page.scrollIntoView('#fixed-compare');
  await page.screenshot('element-fixed-height-compare.png', { selector: '#fixed-compare' });
  await page.scrollIntoView('#fixed-single');
  await page.screenshot('element-fixed-height-single.png', { selector: '#fixed-single' });
  await page.evaluate(() => { document.getElementById('fixed-compare').remove(); document.getElementById('fixed-single').parentElement.remove(); });
});

test('bad attributes give clear errors (and an error event); the element recovers', { engines: 'chromium', why: 'faults' }, async () => {
  const r = await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    const cases = {
      designedSize: { heads: 'designed', 'd-model': '32' },
      notDivisible: { heads: 'random:2', 'd-model': '30', 'num-heads': '4' },
      missingFile: { heads: '/examples/weights/missing.safetensors' },
      tooLong: { sentence: Array.from({ length: 70 }, (_, i) => `word${i}`).join(' ') },
    };
    const out = {};
    for (const [name, attributes] of Object.entries(cases)) {
      const e = t.add(attributes);
      let event = null;
      e.addEventListener('mha-error', (ev) => { event = ev.detail.message; });
      // the DOM's own name is not used: an 'error' reaching window's listeners would look like a script error
      e.addEventListener('error', () => { event = 'an unprefixed error event'; });
      await t.settled(e);
      out[name] = { status: e.status, text: e.shadowRoot.querySelector('.status').textContent, event };
      if (name === 'designedSize') {
        e.removeAttribute('d-model');
        await new Promise((r2) => e.addEventListener('mha-computed', r2, { once: true }));
        out.recovered = e.status;
      }
      e.remove();
    }
    return out;
  });
  for (const [k, v] of Object.entries(r)) console.log(`  ${k}: ${JSON.stringify(v)}`);
  assert.match(r.designedSize.text, /designed heads are 8 heads of a 64-wide model \(got d-model 32, num-heads 8\)/);
  assert.match(r.notDivisible.text, /num-heads 4 must divide d-model 30/);
  assert.match(r.missingFile.text, /missing\.safetensors: HTTP 404/);
  assert.match(r.tooLong.text, /sentence has 70 tokens; the explorer takes at most 64/);
  for (const k of ['designedSize', 'notDivisible', 'missingFile', 'tooLong']) {
    assert.equal(r[k].status, 'error');
    assert.ok(r[k].event && r[k].text.includes(r[k].event), `${k}: an error event with the message`);
  }
  assert.equal(r.recovered, 'ready');
});

test('the three views drawn (their screenshots with MHA_SCREENSHOTS=all); no page errors', { engines: 'all', why: 'layout' }, async () => {
  await page.evaluate(async () => {
    const t = window[Symbol.for('test')];
    document.querySelector('body > mha-explorer').remove();
    for (const view of ['single', 'grid', 'compare']) t.add({ view, id: `shot-${view}`, 'selected-head': '5', sentence: 'The cat sat on the mat because it was tired.' });
    await Promise.all([...document.querySelectorAll('mha-explorer')].map((e) => t.settled(e)));
  });
  for (const view of ['single', 'grid', 'compare']) {
    await page.screenshot(`element-${view}.png`, { selector: `#shot-${view}` });
  }
  await page.flushEvents();
  assert.deepEqual(pageErrors, []);
});
