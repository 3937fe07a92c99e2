// Debian's Chromium, headless, for the tests that run in a real browser. The flags keep it off
// the network (this machine reaches only package registries) and out of the sandbox (root).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launchChromium() {
  assert.ok(existsSync(CHROMIUM), `expected a chromium binary at ${CHROMIUM} (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The page's browser packages (web/vendor), copied by scripts/build/vendor.js when missing. */
export function ensureVendored() {
  if (existsSync(path.join(repoRoot, 'web', 'vendor', 'compromise-three.mjs'))) return;
  const run = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'build', 'vendor.js')], { encoding: 'utf8' });
  assert.equal(run.status, 0, `scripts/build/vendor.js failed: ${run.stderr}`);
}
