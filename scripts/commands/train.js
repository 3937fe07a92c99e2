// npm run train -- [--seed S] [--steps N] [--batch B] [--lr X] [--warmup W] [--eval N]
//                  [--log-every K] [--out FILE] [--json]
//   (mha_trainer's usage lists the options for other set-ups: initialisation, AdamW, ...)
//
// Builds the trainer if it is out of date (build/train/mha_trainer: the train preset), then
// trains the 2-layer decoder on the grammar and prints the loss, held-out accuracy and the
// heads x relations table; with --json the last line is one JSON object:
//   {"seed", "steps", "cpu_seconds", "seconds", "loss", "accuracy": {"agreement", "pronoun", "copy"},
//    "heads": [{"layer", "head", "relation", "at", "mean_weight", "argmax_share"}]}  (measurements; the heads
//    are named by `npm run roles -- --source trained`, the rule every source goes through)
// The shipped weights were written with: npm run train -- --seed 1 --out web/sources/weights/trained-seed1.bin
//
// The train preset compiles with -march=native (AVX2 or AVX-512 where there is one): training
// spends 70% of its time in Eigen's matrix products, which run 2.2 times faster with AVX-512
// than with the SSE2 of build/native. Sums are then taken in another order, so a seed's figures
// belong to the CPU's vector width.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build, BuildError } from '../build/build.js';
import { ensureSystemPackages, repoRoot, SetupError } from '../build/setup.js';

const args = process.argv.slice(2);
const trainer = path.join(repoRoot, 'build/train/mha_trainer');
try {
  // Set-up and build output go to stderr, so that stdout stays the trainer's (its last line the JSON).
  const log = console.log;
  console.log = (...parts) => console.error(...parts);
  try {
    ensureSystemPackages('train');  // cmake, make, g++ and Eigen (installed when root)
    build(['train'], { stdio: 'stderr' });
  } finally {
    console.log = log;
  }
} catch (error) {
  if (!(error instanceof BuildError || error instanceof SetupError)) throw error;
  console.error(error instanceof BuildError ? `[train] ${error.message}` : error.message);
  process.exit(1);
}
if (!fs.existsSync(trainer)) {
  console.error(`[train] ${path.relative(repoRoot, trainer)} was not built (is the CMake target mha_trainer there?)`);
  process.exit(1);
}
const result = spawnSync(trainer, args, { cwd: repoRoot, stdio: 'inherit' });
if (result.error) {
  console.error(`[train] could not run ${trainer}: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
