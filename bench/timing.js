// The timing loop of every benchmark job: at least 2 warm-up runs (and a fifth of the budget),
// then timed runs until the budget is spent (at least 5, at most 2000); an engine that takes
// over 2 s per run gets 1 warm-up and 3 timed runs. Returns the median, the fastest and the count.
export async function timeRuns(run, budgetMs) {
  const firstStart = performance.now();
  await run();
  const slow = performance.now() - firstStart > 2000;
  const warmStart = performance.now();
  for (let r = 0; r < (slow ? 0 : 1) || performance.now() - warmStart < budgetMs / 5; r++) await run();
  const times = [];
  const start = performance.now();
  while (times.length < (slow ? 3 : 5) || (performance.now() - start < budgetMs && times.length < 2000)) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { ms: times[times.length >> 1], min_ms: times[0], runs: times.length };
}

/**
 * The main of a job process (node FILE '<job JSON>'): runs the job and prints one JSON line, the
 * result or {"error", "mismatch"}, exiting 0 or 1.
 */
export function runAsJobProcess(runJob) {
  runJob(JSON.parse(process.argv[2])).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error) => {
      process.stdout.write(`${JSON.stringify({ error: String(error?.message ?? error), mismatch: Boolean(error?.mismatch) })}\n`);
      process.exit(1);
    },
  );
}
