// The train view (tests/browser/driver.js), one page for the file. In every engine: the view
// loads the shipped trained model and draws it (its tables' shape and agreement as a light check),
// and live training starts in the Web Worker, reports its first loss and evaluation, and pauses.
// In Chromium only (the numbers do not depend on the engine): the shipped model's best pronoun
// head, the learning-rate box against the core's default, a typed sentence and an unknown word;
// the training run continued until the loss falls and a head's score on its relation rises.
//
//   node --test tests/browser/train.test.js
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startWeb, stopWeb, test } from './driver.js';

const VIEW = 'mha-train-view';

let server;
let browser;
let page;
const errors = [];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_train.js', 'web/lib/wasm/mha_train.wasm'] }));
  page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  page.on('pageError', (message) => errors.push(message));
  await page.goto(new URL('app/train/index.html', server.url).href);
  await page.waitForFunction((key) => window[Symbol.for(key)]?.trained?.maps || window[Symbol.for(key)]?.errors.length, VIEW, { timeout: 100_000 });
});

after(() => stopWeb({ server, browser }));

const readView = (expression) => page.evaluate(`(() => { const view = window[Symbol.for('${VIEW}')]; return ${expression}; })()`);

const readShipped = () => readView(`({ errors: view.errors, heads: view.trained.evaluation.heads, accuracy: view.trained.evaluation.accuracy,
  shape: view.trained.maps.shape, labels: view.trained.labels.map((l) => l.name) })`);

const best = (heads, relation) => Math.max(...heads.filter((h) => h.relation === relation).map((h) => h.meanWeight));

test('the view loads the shipped model: every head scored on every relation, its maps drawn', { engines: 'all', why: 'end-to-end', timeout: 120_000 }, async () => {
  const trained = await readShipped();
  assert.deepEqual(trained.errors, []);
  assert.equal(trained.heads.length, 2 * 8 * 5, 'one score per layer, head and relation');
  console.log(`shipped model: agreement ${trained.accuracy.agreement.toFixed(3)}, pronoun ${trained.accuracy.pronoun.toFixed(3)}, ` +
    `copy ${trained.accuracy.copy.toFixed(3)}; labels ${trained.labels.join(' | ')}`);
  assert.ok(trained.accuracy.agreement >= 0.95, `agreement ${trained.accuracy.agreement} (expected >= 0.95)`);
  assert.equal(trained.shape[0], 2);
  assert.equal(trained.shape[1], 8);
  await page.screenshot('train-shipped.png', { fullPage: true });
  await page.flushEvents();
  assert.deepEqual(errors, []);
});

test('the shipped model: its pronoun head, the learning rate the core sets, a typed sentence and an unknown word', { engines: 'chromium', why: 'computation', timeout: 60_000 }, async () => {
  const trained = await readShipped();
  console.log(`best pronoun head ${best(trained.heads, 'pronounAntecedent').toFixed(3)}`);
  assert.ok(best(trained.heads, 'pronounAntecedent') >= 0.5, `best pronoun head ${best(trained.heads, 'pronounAntecedent')} (expected >= 0.5)`);
  // The learning-rate box shows the core's default set-up (TrainSession.defaults), not a copy of it.
  const rates = await page.evaluate(async () => {
    const { loadTrainer } = await import(new URL('../../lib/train.js', location.href).href);
    const reference = await loadTrainer({ heldOut: 1 });
    const learningRate = reference.settings.learningRate;
    reference.dispose();
    return { box: document.getElementById('learning-rate').value, learningRate };
  });
  console.log(`learning-rate box: "${rates.box}", the core's default ${rates.learningRate}`);
  assert.ok(rates.learningRate > 0);
  assert.equal(Number(rates.box), rates.learningRate);
  // A sentence typed in the vocabulary, and one that is not
  await page.fill('#trained-text', 'these old dogs like a cat because they are hungry.');
  await page.click('#trained-show');
  const typed = await readView('view.trained.sentence.words.length');
  assert.equal(typed, 12, '<bos> and 11 words');
  await page.fill('#trained-text', 'some dogs like a cat');
  await page.click('#trained-show');
  const message = await page.text('#trained-error');
  console.log(`unknown word: ${message}`);
  assert.match(message, /unknown word "some"/);
  await page.flushEvents();
  assert.deepEqual(errors, []);
});

// The live run: seed 2 at a learning rate of 0.003 (the best pronoun head reaches 0.8 within
// 60 s of training on an idle machine).
const readRun = (since) => readView(`({ errors: view.errors.slice(${since}), losses: view.losses,
  evals: view.evaluations.map((e) => ({ step: e.step, seconds: e.seconds,
    pronoun: Math.max(...e.evaluation.heads.filter((h) => h.relation === 'pronounAntecedent').map((h) => h.meanWeight)),
    accuracy: e.evaluation.accuracy })), series: view.scoreSeries,
  legend: [...document.querySelectorAll('#score-legend li')].map((li) => li.textContent),
  thresholds: [...document.querySelectorAll('.threshold')].map((n) => n.textContent),
  pause: document.getElementById('pause').disabled, resume: document.getElementById('resume').disabled })`);

/** The score chart plots, per evaluation, the best head's score on each relation. */
function checkChart(run) {
  assert.deepEqual(run.legend, ['previous', 'verbSubject', 'pronounAntecedent', 'nounModifier', 'induction']);
  assert.equal(run.series.length, run.evals.length, 'one point of the score chart per evaluation');
  run.series.forEach((p, i) => {
    assert.equal(p.step, run.evals[i].step);
    assert.equal(p.best.pronounAntecedent, run.evals[i].pronoun);
  });
  assert.equal(run.thresholds.length, 0, 'no threshold of its own: heads are named by the one rule');
}

test('live training in the worker: losses and an evaluation come, and it pauses', { engines: 'all', why: 'workers', timeout: 120_000 }, async () => {
  // view.errors keeps every message shown; the unknown word above is one
  const since = await readView('view.errors.length');
  await page.fill('#seed', '2');
  await page.fill('#learning-rate', '0.003');
  await page.click('#start');
  // the first evaluation comes after 25 steps (evalEvery)
  await page.waitForFunction(({ key, since: n }) => {
    const view = window[Symbol.for(key)];
    return view.errors.length > n || view.evaluations.length >= 1;
  }, { key: VIEW, since }, { timeout: 100_000 });
  await page.click('#pause');
  const run = await readRun(since);
  assert.deepEqual(run.errors, []);
  const lastLoss = run.losses.at(-1);
  console.log(`worker: ${run.losses.length} losses (step ${lastLoss.step}, loss ${lastLoss.loss.toFixed(3)}), ${run.evals.length} evaluation(s), best pronoun head ${run.evals[0].pronoun.toFixed(3)}`);
  assert.ok(run.losses.length >= 2 && run.losses.every((p) => Number.isFinite(p.loss) && p.loss > 0), 'losses from the worker');
  assert.ok(run.evals[0].step >= 25);
  checkChart(run);
  assert.equal(run.pause, true, 'paused');
  assert.equal(run.resume, false, 'it can resume');
  await page.flushEvents();
  assert.deepEqual(errors, []);
});

test('live training: the loss falls and the pronoun head rises', { engines: 'chromium', why: 'computation', timeout: 420_000 }, async () => {
  const since = await readView('view.errors.length');
  // the run the test above started and paused, resumed (or started here when that one did not run)
  if (await readView('view.losses.length') > 0) await page.click('#resume');
  else {
    await page.fill('#seed', '2');
    await page.fill('#learning-rate', '0.003');
    await page.click('#start');
  }
  const started = Date.now();
  // Until the best pronoun head reaches 0.8, or 6 minutes on a busy machine.
  await page.waitForFunction(({ key, since: n }) => {
    const view = window[Symbol.for(key)];
    if (view.errors.length > n) return true;
    const evals = view.evaluations;
    if (evals.length < 3) return false;
    const best = (e) => Math.max(...e.evaluation.heads.filter((h) => h.relation === 'pronounAntecedent').map((h) => h.meanWeight));
    return best(evals[evals.length - 1]) >= 0.8;
  }, { key: VIEW, since }, { timeout: 380_000 }).catch(() => {});
  await page.click('#pause');
  const run = await readRun(since);
  assert.deepEqual(run.errors, []);
  checkChart(run);
  assert.ok(run.evals.length >= 2, `expected at least two evaluations, got ${run.evals.length}`);
  const first = run.losses.slice(0, 3).reduce((a, p) => a + p.loss, 0) / 3;
  const last = run.losses.slice(-3).reduce((a, p) => a + p.loss, 0) / 3;
  const e0 = run.evals[0];
  const e1 = run.evals[run.evals.length - 1];
  const reached = run.evals.find((e) => e.pronoun >= 0.8);
  console.log(`live training: ${run.losses.at(-1).step} steps in ${run.losses.at(-1).seconds.toFixed(1)} s of training ` +
    `(${((Date.now() - started) / 1000).toFixed(0)} s wall here); loss ${first.toFixed(3)} -> ${last.toFixed(3)}; ` +
    `best pronoun head ${e0.pronoun.toFixed(3)} (step ${e0.step}) -> ${e1.pronoun.toFixed(3)} (step ${e1.step}, ${e1.seconds.toFixed(1)} s); ` +
    `pronoun accuracy ${e1.accuracy.pronoun.toFixed(3)}; first >= 0.8 at ${reached ? `step ${reached.step}, ${reached.seconds.toFixed(1)} s of training` : 'never'}`);
  assert.ok(last < first - 0.5, `loss should fall: ${first} -> ${last}`);
  assert.ok(e1.pronoun > e0.pronoun + 0.2, `pronoun head should rise: ${e0.pronoun} -> ${e1.pronoun}`);
  await page.screenshot('train-live.png', { fullPage: true });
  await page.flushEvents();
  assert.deepEqual(errors, []);
});
