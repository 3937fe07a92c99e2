// What the line-oriented commands share (scripts/commands/encode.js, scripts/commands/model.js):
// their set-up steps, standard input as lines, and weights written as the shortest decimals that
// read back the same.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** A step of the set-up in a child process whose output goes to standard error; exits 1 if it fails. */
export function step(tag, script, args) {
  const r = spawnSync(process.execPath, [path.join(root, script), ...args], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    console.error(`[${tag}] \`node ${script} ${args.join(' ')}\` failed (${r.signal ?? `exit code ${r.status}`}); its messages are above`);
    process.exit(1);
  }
}

/** Standard input as lines (a last newline ends the last line; "\r\n" as "\n"). */
export async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  if (lines.length > 0 && lines[lines.length - 1] === '' && text.endsWith('\n')) lines.pop();
  return text === '' ? [] : lines;
}

/** The shortest decimal that reads back as the same float32. */
export function float32Number(value) {
  for (let digits = 6; digits < 9; ++digits) {
    const shorter = Number(value.toPrecision(digits));
    if (Math.fround(shorter) === value) return shorter;
  }
  return Number(value.toPrecision(9));
}

/** weights { data, shape: [H, T, T] } as nested arrays [head][query][key]. */
export function nested({ data, shape: [H, T, S] }) {
  const heads = [];
  for (let h = 0; h < H; ++h) {
    const rows = [];
    for (let q = 0; q < T; ++q) rows.push(Array.from(data.subarray((h * T + q) * S, (h * T + q + 1) * S), float32Number));
    heads.push(rows);
  }
  return heads;
}
