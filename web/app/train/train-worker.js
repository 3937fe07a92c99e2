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

let trainer = null;
let running = false;
let generation = 0;  // a new start invalidates the previous loop
let config = null;
let sentence = null;
let trainedMs = 0;

function post(message) {
  self.postMessage(message);
}

async function snapshot(type) {
  const maps = trainer.attention(sentence);
  if (type === 'eval') {
    const { evidence, ...roles } = await trainedRoles(trainer, { seeds: LIVE_SEEDS });
    post({ type, step: trainer.stepsDone, seconds: trainedMs / 1000, evaluation: trainer.evaluate(), roles, maps });
  } else {
    post({ type, vocabulary: trainer.vocabulary, sentence, maps, step: 0 });
  }
}

async function tick(myGeneration) {
  if (myGeneration !== generation || !running) return;
  try {
    const started = performance.now();
    const loss = trainer.step(config.stepsPerTick);
    trainedMs += performance.now() - started;
    post({ type: 'loss', step: trainer.stepsDone, loss, seconds: trainedMs / 1000, learningRate: trainer.learningRate });
    if (trainer.stepsDone % config.evalEvery < config.stepsPerTick) await snapshot('eval');
  } catch (error) {
    running = false;
    post({ type: 'error', message: error.message });
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
      config = { evalEvery: 25, stepsPerTick: 5, sentenceSeed: 5, ...message };
      trainer = await loadTrainer({ seed: config.seed, learningRate: config.learningRate, heldOut: 200 });
      sentence = trainer.sentence(config.sentenceSeed);
      trainedMs = 0;
      await snapshot('ready');
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
    post({ type: 'error', message: error.message });
  }
};
