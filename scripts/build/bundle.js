// The iframe embed's script as minified modules (web/lib/embed.min.js and its chunks
// web/lib/embed-*.js, built, not committed): web/element/embed-page.js and all it imports, so
// that an embed makes a few requests of compact code instead of thirty of commented source;
// what the element imports only when needed (a view, a source of heads) stays a chunk of its
// own. They sit in web/lib/ beside index.js, so the URLs the API builds from import.meta.url
// (./wasm/…, ./worker.js) hold unchanged; the core's Emscripten glue, the worker and the
// tagger stay files of their own.
// Node.js built-ins only (esbuild is run as a program).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pagePaletteCss } from '../../web/views/palette.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const EMBED_BUNDLE = 'web/lib/embed.min.js';
const EXTERNAL = ['./wasm/*', '../vendor/*', '../lib/worker.js', './worker.js', '../lib/encoder.js'];

/** esbuild's record of the last bundle: its inputs and outputs. */
const METAFILE = path.join(repoRoot, 'build', 'embed-meta.json');

/** Whether the last bundle's outputs are all there and newer than every input it read. */
function bundleIsCurrent() {
  try {
    const meta = JSON.parse(fs.readFileSync(METAFILE, 'utf8'));
    const mtime = (f) => fs.statSync(path.join(repoRoot, f)).mtimeMs;
    const oldestOutput = Math.min(...Object.keys(meta.outputs).map(mtime));
    return Object.keys(meta.inputs).every((f) => mtime(f) < oldestOutput);
  } catch {
    return false; // no bundle yet, or one of its files is gone
  }
}

/** Write web/lib/embed.min.js and its chunks, unless they are newer than all they are made from;
 *  throws with esbuild's message if it fails. */
export function bundleEmbed() {
  if (bundleIsCurrent()) return;
  const esbuild = path.join(repoRoot, 'node_modules', 'esbuild', 'bin', 'esbuild');
  if (!fs.existsSync(esbuild)) throw new Error(`bundle: ${esbuild} is missing (npm ci installs it)`);
  const lib = path.join(repoRoot, 'web', 'lib');
  for (const name of fs.readdirSync(lib)) if (/^embed[.-].*\.js$/.test(name)) fs.rmSync(path.join(lib, name));
  fs.mkdirSync(path.dirname(METAFILE), { recursive: true });
  const args = ['web/element/embed-page.js', '--bundle', '--splitting', '--format=esm', '--minify', '--target=es2022',
    '--outdir=web/lib', '--entry-names=embed.min', '--chunk-names=embed-[hash]', '--log-level=warning',
    `--metafile=${METAFILE}`, ...EXTERNAL.map((e) => `--external:${e}`)];
  // bin/esbuild is the native program once npm has installed it, or a Node.js launcher of it
  const native = fs.readFileSync(esbuild).subarray(0, 4).toString('latin1') === '\x7fELF';
  const run = native ? spawnSync(esbuild, args, { cwd: repoRoot, encoding: 'utf8' })
    : spawnSync(process.execPath, [esbuild, ...args], { cwd: repoRoot, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`bundle: esbuild failed: ${run.stderr || run.stdout}`);
  console.log(`[build] embed: ${EMBED_BUNDLE} (${fs.statSync(path.join(repoRoot, EMBED_BUNDLE)).size} bytes)`);
}

export const PAGE_PALETTE = 'web/app/palette.css';

/** Write web/app/palette.css, the page's colours, from web/views/palette.js (the element's are the same). */
export function writePalette() {
  const text = `/* Written by the build from web/views/palette.js; do not edit. */\n${pagePaletteCss()}`;
  const file = path.join(repoRoot, PAGE_PALETTE);
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) fs.writeFileSync(file, text);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  writePalette();
  bundleEmbed();
}
