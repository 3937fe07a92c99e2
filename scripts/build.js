// Builds the C++ core natively (build/native: library, unit tests) and to WebAssembly
// (build/wasm), then copies the modules the JS API loads to web/lib/wasm/:
//   mha_core.js   Emscripten's MODULARIZE output with `export default createMhaCore;` appended
//   mha_core.wasm (the inference core: what every page and embed loads)
//   mha_train.js, mha_train.wasm (the training core, `createMhaTrain`: the train view only)
//   mha_encoder.js, mha_encoder.wasm (the pretrained encoder, `createMhaEncoder`)
// A build runs only when a C++/CMake source changed since the last successful one (a hash of
// every CMakeLists.txt, *.cmake and C/C++ file outside build/, node_modules/ and web/ is kept in
// build/<target>/.sources-hash), or when its outputs are missing.
//
// Node.js built-ins only (it runs before `npm ci`).
//
//   node scripts/build.js [--native] [--wasm] [--asan] [--train] [--force]   (default: native and wasm)
//   --asan: build/asan, the sanitizer and fuzzing build (clang++; see buildAsan)
//   --train: build/train, mha_trainer for this machine's widest SIMD (see buildTrain)

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSystemPackages, repoRoot, SetupError, which } from './setup.js';
import { bundleEmbed } from './bundle.js';

export class BuildError extends Error {}

const JOBS = '2';
const SOURCE_EXTENSIONS = new Set(['.c', '.cc', '.cpp', '.cxx', '.h', '.hh', '.hpp', '.inl', '.cmake']);
const SKIPPED_DIRS = new Set(['build', 'node_modules', 'web', 'docs']);

/** Every file that can change a native or WASM build, sorted, relative to the repo. */
function sourceFiles(dir = repoRoot, found = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (dir === repoRoot && SKIPPED_DIRS.has(entry.name)) continue;
      sourceFiles(full, found);
    } else if (entry.name === 'CMakeLists.txt' || SOURCE_EXTENSIONS.has(path.extname(entry.name))) {
      found.push(path.relative(repoRoot, full));
    }
  }
  return found.sort();
}

export function sourcesHash() {
  const hash = crypto.createHash('sha256');
  for (const file of sourceFiles()) {
    hash.update(file).update('\0').update(fs.readFileSync(path.join(repoRoot, file))).update('\0');
  }
  return hash.digest('hex');
}

function run(label, cmd, args, env = process.env) {
  console.log(`[build] ${cmd} ${args.join(' ')}`);
  const result = spawnSync(cmd, args, { cwd: repoRoot, stdio: 'inherit', env });
  if (result.error) throw new BuildError(`${label} failed: ${cmd}: ${result.error.message}`);
  if (result.status !== 0) {
    const how = result.signal ? `was killed by ${result.signal}` : `exited with ${result.status}`;
    throw new BuildError(`${label} failed: \`${cmd} ${args.join(' ')}\` ${how} (the compiler's messages are above)`);
  }
}

/** One build at a time in this checkout: a second `npm test` waits for the first's build. */
function withLock(fn) {
  const lockDir = path.join(repoRoot, 'build', '.lock');
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  const started = Date.now();
  let announced = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let holder = NaN;
      try {
        holder = Number(fs.readFileSync(path.join(lockDir, 'pid'), 'utf8'));
      } catch {
        // being created or removed right now
      }
      let alive = true;
      if (Number.isInteger(holder) && holder > 0) {
        try {
          process.kill(holder, 0);
        } catch (e) {
          alive = e.code === 'EPERM';
        }
      } else if (Date.now() - started > 10_000) {
        alive = false; // a lock without a pid for 10 s: left by a crash
      }
      if (!alive) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() - started > 30 * 60_000) throw new BuildError(`another build (pid ${holder}) has held ${lockDir} for 30 minutes`);
      if (!announced) {
        console.log(`[build] waiting for another build in this checkout (pid ${holder}) to finish`);
        announced = true;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

function readStamp(buildDir) {
  try {
    return fs.readFileSync(path.join(buildDir, '.sources-hash'), 'utf8').trim();
  } catch {
    return null;
  }
}

function configured(buildDir) {
  return fs.existsSync(path.join(buildDir, 'CMakeCache.txt')) && fs.existsSync(path.join(buildDir, 'Makefile'));
}

/**
 * One CMake build in build/<name>: skipped when its stamp matches the sources' hash, else
 * configured (with its options given every time, so that the cache of a directory made with
 * other options does not keep them) and built, then stamped.
 */
function cmakeBuild(name, { force, hash }, configureArgs, targets = []) {
  const dir = `build/${name}`;
  const buildDir = path.join(repoRoot, dir);
  if (!force && readStamp(buildDir) === hash) {
    console.log(`[build] ${name}: up to date`);
    return false;
  }
  run(`${name} configure`, 'cmake', ['-S', '.', '-B', dir, ...configureArgs]);
  run(`${name} build`, 'cmake', ['--build', dir, '-j', JOBS, ...(targets.length ? ['--target', ...targets] : [])]);
  fs.writeFileSync(path.join(buildDir, '.sources-hash'), `${hash}\n`);
  return true;
}

function buildNative(options) {
  return cmakeBuild('native', options, ['-DCMAKE_BUILD_TYPE=Release']);
}

/**
 * build/asan: clang++ with AddressSanitizer + UndefinedBehaviorSanitizer (MHA_SANITIZE) and the
 * libFuzzer harness (MHA_FUZZ): the unit tests, mha_golden and mha_fuzz, for `npm test`'s
 * sanitizer steps and `npm run fuzz`. Not part of the default targets.
 */
function buildAsan(options) {
  if (!which('clang++')) throw new BuildError('asan build failed: clang++ not found (install the Debian packages clang and libclang-rt-14-dev)');
  return cmakeBuild('asan', options, ['-DCMAKE_CXX_COMPILER=clang++', '-DCMAKE_BUILD_TYPE=RelWithDebInfo',
    '-DMHA_SANITIZE=ON', '-DMHA_FUZZ=ON'], ['mha_unit_tests', 'mha_encoder_tests', 'mha_golden', 'mha_fuzz']);
}

/**
 * build/train: mha_trainer alone, compiled for this machine's CPU (-march=native: AVX2 or
 * AVX-512 where there is one), for `npm run train`. Training spends 70% of its time in Eigen's
 * matrix products, which run 2.2 times faster with AVX-512 than with the SSE2 of build/native.
 * Sums are then taken in another order than with SSE2, so a seed's figures belong to the CPU's
 * vector width (the README's were measured with AVX-512).
 */
function buildTrain(options) {
  return cmakeBuild('train', options, ['-DCMAKE_BUILD_TYPE=Release', '-DMHA_NATIVE_ARCH=native',
    '-DMHA_BUILD_TESTS=OFF'], ['mha_trainer']);
}

/** The environment for Emscripten's tools, never the user's shell. */
function emscriptenEnv() {
  const env = { ...process.env };
  // Debian's emscripten runs its JS optimizer with /usr/bin/node and finds acorn only here.
  if (fs.existsSync('/usr/share/nodejs')) {
    env.NODE_PATH = ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(path.delimiter);
  }
  // A cache Emscripten may write to: Debian's is frozen (prebuilt, read-only, fine for any user);
  // an unfrozen cache that is not ours to write goes to build/ instead.
  if (!env.EM_CACHE) {
    const query = (key) => {
      const r = spawnSync('em-config', [key], { env, encoding: 'utf8' });
      return r.status === 0 ? r.stdout.trim() : null;
    };
    const cache = query('CACHE');
    if (cache && query('FROZEN_CACHE') !== 'True') {
      let writable = true;
      try {
        fs.accessSync(fs.existsSync(cache) ? cache : path.dirname(cache), fs.constants.W_OK);
      } catch {
        writable = false;
      }
      if (!writable) env.EM_CACHE = path.join(repoRoot, 'build/emscripten-cache');
    }
  }
  return env;
}

const WASM_OUT = path.join(repoRoot, 'web/lib/wasm');

// The modules the WebAssembly build makes: the core (what every page and embed loads), the
// training core (loaded only by the train view) and the pretrained encoder (loaded only where
// the pretrained model is used). Each: [file stem, its MODULARIZE export name].
const WASM_MODULES = [['mha_core', 'createMhaCore'], ['mha_train', 'createMhaTrain'], ['mha_encoder', 'createMhaEncoder']];
const WASM_FILES = WASM_MODULES.flatMap(([stem]) => [`${stem}.js`, `${stem}.wasm`]);
// The pthreads core, installed in web/lib/wasm/threads/: the classic script (what its worker
// threads load, and what Node.js requires: the folder's package.json says commonjs), the same
// as an ES module for the page's own import (.mjs), the worker script and the .wasm.
const THREADS_STEM = 'mha_core_threads';
const THREADS_FILES = [`${THREADS_STEM}.js`, `${THREADS_STEM}.worker.js`, `${THREADS_STEM}.wasm`];

function installWasm(buildDir) {
  for (const file of [...WASM_FILES, ...THREADS_FILES]) {
    if (!fs.existsSync(path.join(buildDir, file))) {
      throw new BuildError(`the WebAssembly build did not produce ${path.relative(repoRoot, path.join(buildDir, file))}`);
    }
  }
  fs.mkdirSync(WASM_OUT, { recursive: true });
  for (const [stem, exportName] of WASM_MODULES) {
    // -sEXPORT_ES6 does not load in Node's ESM with Emscripten 3.1.6: wrap the classic output.
    const source = fs.readFileSync(path.join(buildDir, `${stem}.js`), 'utf8');
    const wrapped = `${source.trimEnd()}\nexport default ${exportName};\n`;
    // Write then rename, so that a test running meanwhile never sees half a file.
    for (const [name, data] of [[`${stem}.wasm`, fs.readFileSync(path.join(buildDir, `${stem}.wasm`))], [`${stem}.js`, wrapped]]) {
      const tmp = path.join(WASM_OUT, `.${name}.${process.pid}`);
      fs.writeFileSync(tmp, data);
      fs.renameSync(tmp, path.join(WASM_OUT, name));
    }
    console.log(`[build] wasm: installed web/lib/wasm/${stem}.js and ${stem}.wasm (${fs.statSync(path.join(buildDir, `${stem}.wasm`)).size} bytes)`);
  }
  const threadsOut = path.join(WASM_OUT, 'threads');
  fs.mkdirSync(threadsOut, { recursive: true });
  const classic = fs.readFileSync(path.join(buildDir, `${THREADS_STEM}.js`), 'utf8');
  const threadFiles = [
    ...THREADS_FILES.map((f) => [f, fs.readFileSync(path.join(buildDir, f))]),
    [`${THREADS_STEM}.mjs`, `${classic.trimEnd()}\nexport default createMhaCore;\n`],
    ['package.json', '{ "type": "commonjs" }\n'],
  ];
  for (const [name, data] of threadFiles) {
    const tmp = path.join(threadsOut, `.${name}.${process.pid}`);
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, path.join(threadsOut, name));
  }
  console.log(`[build] wasm: installed web/lib/wasm/threads/ (the pthreads core, ${fs.statSync(path.join(buildDir, `${THREADS_STEM}.wasm`)).size} bytes of wasm)`);
}

function buildWasm({ force, hash }) {
  const buildDir = path.join(repoRoot, 'build/wasm');
  const installed = WASM_FILES.every((f) => fs.existsSync(path.join(WASM_OUT, f))) &&
    THREADS_FILES.every((f) => fs.existsSync(path.join(WASM_OUT, 'threads', f)));
  if (!force && readStamp(buildDir) === hash) {
    if (!installed) installWasm(buildDir);
    console.log('[build] wasm: up to date');
    return false;
  }
  if (!which('emcmake')) throw new BuildError('wasm build failed: emcmake not found (install the Debian package emscripten)');
  const env = emscriptenEnv();
  // (A build folder configured before the pthreads module was built by default is configured again.)
  const cache = path.join(buildDir, 'CMakeCache.txt');
  if (!configured(buildDir) || !fs.readFileSync(cache, 'utf8').includes('MHA_WASM_THREADS:BOOL=ON')) {
    run('wasm configure', 'emcmake', ['cmake', '-S', '.', '-B', 'build/wasm', '-DCMAKE_BUILD_TYPE=Release', '-DMHA_WASM_THREADS=ON'], env);
  }
  run('wasm build', 'cmake', ['--build', 'build/wasm', '-j', JOBS], env);
  installWasm(buildDir);
  fs.writeFileSync(path.join(buildDir, '.sources-hash'), `${hash}\n`);
  return true;
}

/**
 * Build what is out of date. targets: subset of ['native', 'wasm', 'asan', 'train'].
 * Throws BuildError with a message saying which step failed.
 */
export function build({ targets = ['native', 'wasm'], force = false } = {}) {
  return withLock(() => {
    const hash = sourcesHash();
    const built = {};
    for (const target of targets) {
      const started = Date.now();
      const builder = { native: buildNative, wasm: buildWasm, asan: buildAsan, train: buildTrain }[target];
      if (!builder) throw new BuildError(`unknown build target '${target}' (native, wasm, asan or train)`);
      const didBuild = builder({ force, hash });
      if (target === 'wasm') bundleEmbed();
      if (didBuild) console.log(`[build] ${target}: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      built[target] = didBuild;
    }
    return built;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => !['--native', '--wasm', '--asan', '--train', '--force'].includes(a));
  if (unknown.length > 0) {
    console.error(`usage: node scripts/build.js [--native] [--wasm] [--asan] [--train] [--force]; unknown: ${unknown.join(' ')}`);
    process.exit(2);
  }
  const targets = ['native', 'wasm', 'asan', 'train'].filter((t) => args.includes(`--${t}`));
  try {
    ensureSystemPackages(targets.length === 1 && targets[0] === 'wasm' ? 'start' : 'build');
    build({ targets: targets.length ? targets : ['native', 'wasm'], force: args.includes('--force') });
  } catch (error) {
    if (!(error instanceof BuildError || error instanceof SetupError)) throw error;
    console.error(error instanceof BuildError ? `[build] ${error.message}` : error.message);
    process.exit(1);
  }
}
