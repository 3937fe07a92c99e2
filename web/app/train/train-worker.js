// The train view's Web Worker: runs training in the WebAssembly core off the main thread and
// reports, every few steps, the loss; every `evalEvery` steps, held-out accuracy, every head's
// scores, the heads' names by the one rule of web/roles/ (on LIVE_SEEDS, fewer sentences than the
// shipped model's table, to keep up with training) and the attention maps of the fixed sentence.
//
// Messages in:  {type: 'start', seed, learningRate, evalEvery?, stepsPerTick?, sentenceSeed?}
//               {type: 'pause'} {type: 'resume'} {type: 'learningRate', value}
// Messages out: {type: 'ready', vocabulary, sentence, maps} {type: 'loss', step, loss, seconds}
//               {type: 'eval', step, seconds, evaluation, roles, maps} {type: 'error', message}
import { loadTrainer } from '../../lib/train.js';
import { TRAINED_SEEDS, trainedRoles } from '../../roles/measure.js';

export const LIVE_SEEDS = { first: TRAINED_SEEDS.first, count: 200 };

/** @typedef {Awaited<ReturnType<typeof loadTrainer>>} Trainer */
/** @typedef {{ seed: number, learningRate: number, evalEvery: number, stepsPerTick: number, sentenceSeed: number }} Config */

/** @type {Trainer | null} */
let trainer = null;
let running = false;
let generation = 0;  // a new start invalidates the previous loop
/** @type {Config | null} */
let config = null;
/** @type {ReturnType<Trainer['sentence']> | null} */
let sentence = null;
let trainedMs = 0;

/** @param {object} message */
function post(message) {
  self.postMessage(message);
}

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * The maps of the fixed sentence, with held-out scores and the heads' names ('eval') or the
 * vocabulary ('ready').
 * @param {'eval' | 'ready'} type
 * @param {Trainer} trainer
 * @param {ReturnType<Trainer['sentence']>} sentence
 */
async function snapshot(type, trainer, sentence) {
  const maps = trainer.attention(sentence);
  if (type === 'eval') {
    const { evidence, ...roles } = await trainedRoles(trainer, { seeds: LIVE_SEEDS });
    post({ type, step: trainer.stepsDone, seconds: trainedMs / 1000, evaluation: trainer.evaluate(), roles, maps });
  } else {
    post({ type, vocabulary: trainer.vocabulary, sentence, maps, step: 0 });
  }
}

/** @param {number} myGeneration */
async function tick(myGeneration) {
  if (myGeneration !== generation || !running || !trainer || !config || !sentence) return;
  try {
    const started = performance.now();
    const loss = trainer.step(config.stepsPerTick);
    trainedMs += performance.now() - started;
    post({ type: 'loss', step: trainer.stepsDone, loss, seconds: trainedMs / 1000, learningRate: trainer.learningRate });
    if (trainer.stepsDone % config.evalEvery < config.stepsPerTick) await snapshot('eval', trainer, sentence);
  } catch (error) {
    running = false;
    post({ type: 'error', message: messageOf(error) });
    return;
  }
  setTimeout(() => tick(myGeneration), 0);  // lets pause / learning-rate messages in
}

self.onmessage = async (event) => {
  const message = event.data;
  try {
    if (message.type === 'start') {
      generation += 1;
      running = false;
      if (trainer) trainer.dispose();
      const started = { evalEvery: 25, stepsPerTick: 5, sentenceSeed: 5, ...message };
      config = started;
      const loaded = await loadTrainer({ seed: started.seed, learningRate: started.learningRate, heldOut: 200 });
      trainer = loaded;
      sentence = loaded.sentence(started.sentenceSeed);
      trainedMs = 0;
      await snapshot('ready', loaded, sentence);
      running = true;
      const mine = generation;
      setTimeout(() => tick(mine), 0);
    } else if (message.type === 'pause') {
      running = false;
    } else if (message.type === 'resume') {
      if (trainer && !running) {
        running = true;
        const mine = generation;
        setTimeout(() => tick(mine), 0);
      }
    } else if (message.type === 'learningRate') {
      if (trainer) trainer.setLearningRate(message.value);
    }
  } catch (error) {
    post({ type: 'error', message: messageOf(error) });
  }
};
