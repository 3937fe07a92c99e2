// Set-up that `npm start` and `npm test` do before anything else, on a fresh Debian machine:
// system tools from Debian's packages (installed when running as root, otherwise the exact
// apt-get command is printed) and npm dependencies (`npm ci` when node_modules is missing or
// does not match package-lock.json).
//
// Node.js built-ins only: this runs before `npm ci`, and on Debian 12's Node 18.
//
//   node scripts/build/setup.js [start|test|build|train|fuzz]     check (and install) what that command needs

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** True when an executable of that name is on PATH. */
export function which(command) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

const exists = (file) => fs.existsSync(file);

/** Files matching `<dir>/<any entry>/<rest>`, for paths with a version or triplet in them. */
function existsUnderAny(dir, rest) {
  let entries;
  try {
    entries = fs.readdirSync(dir);
  } catch {
    return false;
  }
  return entries.some((entry) => exists(path.join(dir, entry, rest)));
}

function anyFileMatching(dir, pattern) {
  try {
    return fs.readdirSync(dir).some((name) => pattern.test(name));
  } catch {
    return false;
  }
}

/** CMakePresets.json version 6 (workflow presets) needs CMake 3.25: Debian 12 has 3.25.1. */
function cmakeIsRecentEnough() {
  const result = spawnSync('cmake', ['--version'], { encoding: 'utf8' });
  const [major, minor] = (/cmake version (\d+)\.(\d+)/.exec(result.stdout ?? '') ?? []).slice(1).map(Number);
  return major > 3 || (major === 3 && minor >= 25);
}

/**
 * What each command needs, as Debian packages, each with a check that does not depend on
 * dpkg (so that tools installed another way are accepted too). `for`: which commands need it
 * ('fuzz': the asan preset, for `npm run fuzz` and `npm run build -- asan`).
 */
export const requirements = [
  {
    pkg: 'emscripten',
    for: ['start', 'test', 'build'],
    what: 'emcc, em++, emcmake (WebAssembly build)',
    present: () => Boolean(which('emcc') && which('em++') && which('emcmake')),
  },
  {
    pkg: 'libeigen3-dev',
    for: ['start', 'test', 'build', 'train', 'fuzz'],
    what: 'Eigen 3.4 headers',
    present: () =>
      exists('/usr/include/eigen3/Eigen/Core') || exists('/usr/local/include/eigen3/Eigen/Core'),
  },
  {
    pkg: 'cmake',
    for: ['start', 'test', 'build', 'train', 'fuzz'],
    what: 'cmake and ctest, 3.25 or newer (CMakePresets.json)',
    present: () => Boolean(which('cmake') && which('ctest')) && cmakeIsRecentEnough(),
  },
  { pkg: 'make', for: ['start', 'test', 'build', 'train', 'fuzz'], what: 'make', present: () => Boolean(which('make')) },
  { pkg: 'g++', for: ['test', 'build', 'train'], what: 'the native C++ compiler', present: () => Boolean(which('g++')) },
  {
    pkg: 'googletest',
    for: ['test', 'build', 'fuzz'],
    what: 'GoogleTest sources',
    present: () => exists('/usr/src/googletest') || exists('/usr/include/gtest/gtest.h'),
  },
  {
    pkg: 'libgtest-dev',
    for: ['test', 'build', 'fuzz'],
    what: 'GoogleTest headers, libraries and CMake package',
    present: () =>
      exists('/usr/include/gtest/gtest.h') &&
      (existsUnderAny('/usr/lib', 'cmake/GTest/GTestConfig.cmake') ||
        exists('/usr/lib/cmake/GTest/GTestConfig.cmake') ||
        exists('/usr/local/lib/cmake/GTest/GTestConfig.cmake')),
  },
  {
    pkg: 'nlohmann-json3-dev',
    for: ['test', 'build', 'fuzz'],
    what: 'nlohmann/json.hpp (the native golden-case runner reads JSON)',
    present: () =>
      exists('/usr/include/nlohmann/json.hpp') || exists('/usr/local/include/nlohmann/json.hpp'),
  },
  { pkg: 'clang', for: ['test', 'fuzz'], what: 'clang++ (sanitizer and fuzz builds)', present: () => Boolean(which('clang++')) },
  {
    pkg: 'libclang-rt-14-dev',
    for: ['test', 'fuzz'],
    what: "clang 14's sanitizer and libFuzzer runtimes",
    present: () =>
      ['/usr/lib/llvm-14/lib/clang', '/usr/lib/clang'].some((dir) => {
        let versions = [];
        try {
          versions = fs.readdirSync(dir);
        } catch {
          return false;
        }
        return versions.some((v) => anyFileMatching(path.join(dir, v, 'lib/linux'), /^libclang_rt\.asan-/));
      }),
  },
  {
    pkg: 'chromium',
    for: ['test'],
    what: '/usr/bin/chromium (browser tests, headless)',
    present: () => exists('/usr/bin/chromium'),
  },
  {
    pkg: 'firefox-esr',
    for: ['test'],
    what: '/usr/bin/firefox-esr (browser tests, headless, WebDriver BiDi)',
    present: () => exists('/usr/bin/firefox-esr'),
  },
  {
    pkg: 'webkit2gtk-driver',
    for: ['test'],
    what: 'WebKitWebDriver and WebKitGTK\'s MiniBrowser (browser tests in WebKit)',
    present: () => Boolean(which('WebKitWebDriver')) && existsUnderAny('/usr/lib', 'webkit2gtk-4.1/MiniBrowser'),
  },
  { pkg: 'xvfb', for: ['test'], what: 'Xvfb, the display WebKit draws on', present: () => Boolean(which('Xvfb')) },
  { pkg: 'npm', for: ['start', 'test', 'build'], what: 'npm', present: () => Boolean(which('npm')) },
  {
    pkg: 'ccache',
    for: ['test', 'build', 'fuzz'],
    what: 'a compiler cache: a build of a source compiled before takes its objects from it (never required)',
    present: () => Boolean(which('ccache')),
    optional: true,
  },
];

/** The packages `command` needs that are missing; `optional` ones too when asked. */
export function missingPackages(command, { optional = false } = {}) {
  return requirements
    .filter((r) => r.for.includes(command) && (optional || !r.optional) && !r.present())
    .map((r) => r.pkg);
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (result.error) return { ok: false, message: `${cmd}: ${result.error.message}` };
  if (result.status !== 0) {
    const how = result.signal ? `was killed by ${result.signal}` : `exited with ${result.status}`;
    return { ok: false, message: `${[cmd, ...args].join(' ')} ${how}` };
  }
  return { ok: true };
}

export class SetupError extends Error {}

/**
 * Make sure the system tools `command` needs are present: install them as root, otherwise
 * throw a SetupError whose message holds the exact command to run.
 */
export function ensureSystemPackages(command) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const canInstall = isRoot && Boolean(which('apt-get'));
  const required = missingPackages(command);
  // an optional package is installed along with required ones, or alone as root; never demanded
  const missing = canInstall ? missingPackages(command, { optional: true }) : required;
  if (missing.length === 0) return;
  const install = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (!canInstall) {
    const lines = [
      `Missing system packages: ${missing.join(' ')}`,
      ...requirements.filter((r) => missing.includes(r.pkg)).map((r) => `  ${r.pkg}: ${r.what}`),
      which('apt-get')
        ? 'Install them as root (npm start / npm test do this themselves when run as root):'
        : 'This machine has no apt-get; install the equivalents of these Debian 12 packages:',
      `  apt-get update && ${install}`,
    ];
    throw new SetupError(lines.join('\n'));
  }
  console.log(`[setup] installing from Debian: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const [cmd, args] of [
    ['apt-get', ['update']],
    ['apt-get', ['install', '-y', '--no-install-recommends', ...missing]],
  ]) {
    const result = run(cmd, args, { env });
    if (!result.ok) {
      if (required.length === 0) {
        console.log(`[setup] ${result.message}; going on without ${missing.join(' ')} (optional)`);
        return;
      }
      throw new SetupError(`[setup] ${result.message}; the command was: apt-get update && ${install}`);
    }
  }
  const stillMissing = missingPackages(command);
  if (stillMissing.length > 0) {
    throw new SetupError(`[setup] still missing after apt-get install: ${stillMissing.join(' ')}`);
  }
}

/** Packages package-lock.json wants that node_modules lacks (or holds at another version). */
export function staleNodeModules() {
  const lockFile = path.join(repoRoot, 'package-lock.json');
  if (!exists(lockFile)) return [];
  const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
  const wanted = Object.entries(lock.packages || {}).filter(
    // optional packages for other platforms are in the lock but never installed
    ([key, meta]) => key.startsWith('node_modules/') && !meta.link && !meta.optional,
  );
  if (wanted.length === 0) return [];
  // npm keeps a copy of the lock of what it installed in node_modules/.package-lock.json.
  let installed = {};
  try {
    installed = JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules/.package-lock.json'), 'utf8')).packages || {};
  } catch {
    return ['node_modules (not installed)'];
  }
  const stale = [];
  for (const [key, meta] of wanted) {
    const have = installed[key];
    if (!have || have.version !== meta.version || !exists(path.join(repoRoot, key, 'package.json'))) {
      stale.push(`${key.slice('node_modules/'.length)}@${meta.version}`);
    }
  }
  return stale;
}

/** `npm ci` when node_modules is missing or does not match package-lock.json. */
export function ensureNodeModules() {
  const stale = staleNodeModules();
  if (stale.length === 0) return;
  const shown = stale.length > 5 ? `${stale.slice(0, 5).join(', ')} and ${stale.length - 5} more` : stale.join(', ');
  console.log(`[setup] npm ci (node_modules does not match package-lock.json: ${shown})`);
  const result = run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: repoRoot });
  if (!result.ok) throw new SetupError(`[setup] ${result.message}`);
}

/** Copies the page's browser packages into web/vendor/ (scripts/build/vendor.js). */
export function vendorBrowserPackages() {
  const script = path.join(repoRoot, 'scripts/build/vendor.js');
  if (!exists(script)) return;
  const result = run(process.execPath, [script], { cwd: repoRoot });
  if (!result.ok) throw new SetupError(`[setup] copying the page's browser packages failed: ${result.message}`);
}

/** Everything `command` ('start', 'test' or 'build') needs before it builds. */
export function setup(command) {
  ensureSystemPackages(command);
  ensureNodeModules();
  vendorBrowserPackages();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const command = process.argv[2] || 'test';
  try {
    setup(command);
    console.log(`[setup] everything \`npm ${command}\` needs is installed`);
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}
