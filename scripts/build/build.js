// Builds CMake workflow presets (CMakePresets.json): `cmake --workflow --preset P` configures
// build/P with P's options and builds P's targets; make rebuilds only what changed. The wasm
// workflow also installs the modules in web/lib/wasm/ (cmake/install_web_module.cmake); after
// it, the page's palette is written and the iframe embed's minified modules are bundled with
// esbuild (scripts/build/bundle.js).
//
//   node scripts/build/build.js [PRESET ...]   (default: native wasm; --native and --wasm work too)
//
// Node.js built-ins only (it runs before `npm ci`).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleEmbed, writePalette } from './bundle.js';
import { ensureSystemPackages, repoRoot, SetupError } from './setup.js';

export class BuildError extends Error {}

export const PRESETS = JSON.parse(fs.readFileSync(path.join(repoRoot, 'CMakePresets.json'), 'utf8'))
  .workflowPresets.map((p) => p.name);

// The set-up (scripts/build/setup.js) each preset needs: asan needs clang, the others g++ or
// Emscripten.
const SETUP_FOR = { wasm: 'start', 'wasm-threads': 'start', 'wasm-models': 'start', asan: 'fuzz', train: 'train', 'bench-sse2': 'train', 'bench-march': 'train' };

/**
 * Configures and builds each preset in turn; throws a BuildError naming the one that failed.
 * stdio 'stderr' sends CMake's output to stderr (for commands whose stdout is data).
 */
export function build(presets, { stdio = 'inherit' } = {}) {
  for (const preset of presets) {
    if (!PRESETS.includes(preset)) throw new BuildError(`unknown preset '${preset}' (CMakePresets.json has ${PRESETS.join(', ')})`);
    // configured before with these presets: `cmake --build` (make configures again if a
    // CMakeLists.txt changed); else the whole workflow, configure then build
    const cache = path.join(repoRoot, 'build', preset, 'CMakeCache.txt');
    const configured = fs.existsSync(cache) && fs.statSync(cache).mtimeMs > fs.statSync(path.join(repoRoot, 'CMakePresets.json')).mtimeMs;
    const args = configured ? ['--build', '--preset', preset] : ['--workflow', '--preset', preset];
    console.log(`[build] cmake ${args.join(' ')}`);
    const result = spawnSync('cmake', args, { cwd: repoRoot, stdio: stdio === 'stderr' ? ['inherit', 2, 2] : 'inherit' });
    if (result.error) throw new BuildError(`${preset} build failed: cmake: ${result.error.message}`);
    if (result.status !== 0) {
      const how = result.signal ? `was killed by ${result.signal}` : `exited with ${result.status}`;
      throw new BuildError(`${preset} build failed: \`cmake ${args.join(' ')}\` ${how} (CMake's and the compiler's messages are above)`);
    }
    if (preset === 'wasm') {
      try {
        writePalette();
        bundleEmbed();
      } catch (error) {
        throw new BuildError(error.message);
      }
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const presets = process.argv.slice(2).map((a) => a.replace(/^--/, ''));
  const unknown = presets.filter((p) => !PRESETS.includes(p));
  if (unknown.length > 0) {
    console.error(`usage: node scripts/build/build.js [${PRESETS.join(' | ')}] ...; unknown: ${unknown.join(' ')}`);
    process.exit(2);
  }
  if (presets.length === 0) presets.push('native', 'wasm');
  try {
    for (const command of new Set(presets.map((p) => SETUP_FOR[p] ?? 'build'))) ensureSystemPackages(command);
    build(presets);
  } catch (error) {
    if (!(error instanceof BuildError || error instanceof SetupError)) throw error;
    console.error(error instanceof BuildError ? `[build] ${error.message}` : error.message);
    process.exit(1);
  }
}
