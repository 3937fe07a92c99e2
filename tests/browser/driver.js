// One small page API over three browser drivers, so that every browser test is written once and
// runs in the engine named by MHA_BROWSER (chromium, the default; firefox; webkit):
//
//   chromium  Debian's /usr/bin/chromium through playwright-core (CDP)
//   firefox   Debian's /usr/bin/firefox-esr through puppeteer-core (WebDriver BiDi)
//   webkit    Debian's WebKitGTK MiniBrowser through WebKitWebDriver and selenium-webdriver
//             (classic WebDriver), under an Xvfb display this module starts
//
// A page: goto, evaluate, waitForFunction, click, tap, hover, fill, press, keyboard, focus,
// check, selectOption, setInputFiles, text/count/attribute readers, screenshot, download,
// frames, addInitScript, and its console errors, page errors, dialogs and requests. What an
// engine's driver cannot do is said in `engine.limits` and by the method itself (an Error
// naming the engine), so that a test says what it checks instead.
//
// WebDriver classic (webkit) has no init scripts, console or request events: the test server
// from serve() puts one same-origin <script src="/__driver/probe.js"> first in every HTML page
// it serves to that engine; the probe runs the page's init scripts and records console.error,
// uncaught errors, dialogs and downloads under a Symbol key (no new global names).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as nodeTest } from 'node:test';
import { SERVE_HEADERS, startServer } from '../../scripts/serve/serve.js';
import { CRASH } from '../../scripts/test/browser-crash.js';
import { CHROMIUM_ONLY, markProblem, runsIn } from './marks.js';

export const ENGINES = ['chromium', 'firefox', 'webkit'];
export const ENGINE = process.env.MHA_BROWSER || 'chromium';
assert.ok(ENGINES.includes(ENGINE), `MHA_BROWSER must be one of ${ENGINES.join(', ')}, got "${ENGINE}"`);

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Which tests run: 'all' (npm test), 'engine', the ones whose result can differ between engines
 * (npm test -- --quick), or 'every', each test in this engine whatever its mark.
 */
export const TEST_SET = process.env.MHA_BROWSER_TESTS || 'all';
assert.ok(['all', 'engine', 'every'].includes(TEST_SET), `MHA_BROWSER_TESTS must be all, engine or every, got "${TEST_SET}"`);

/**
 * node:test's test, marked with where it runs (tests/browser/marks.js):
 * test(name, { engines: 'all' | 'chromium', why, ...node:test options }, fn). Elsewhere it is
 * listed as skipped, saying where it runs.
 */
export function test(name, options, fn) {
  const { engines, why, ...rest } = options || {};
  const problem = markProblem({ engines, why });
  if (problem) throw new Error(`test "${name}": ${problem}`);
  if (runsIn({ engines }, ENGINE, TEST_SET)) return nodeTest(name, rest, fn);
  const skip = ENGINE === 'chromium' ? 'engine-independent: in the full npm test' : `runs in Chromium only: ${CHROMIUM_ONLY[why]}`;
  return nodeTest(name, { ...rest, skip }, fn);
}

export const BINARIES = {
  chromium: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  firefox: process.env.FIREFOX_PATH || '/usr/bin/firefox-esr',
  webkit: process.env.MINIBROWSER_PATH || '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser',
};
const WEBKIT_DRIVER = process.env.WEBKIT_WEBDRIVER_PATH || '/usr/bin/WebKitWebDriver';

/** What each engine's driver can and cannot do here; the tests print these where they matter. */
export const LIMITS = {
  chromium: {},
  firefox: {
    touch: 'Firefox under WebDriver BiDi has no touch emulation (puppeteer setViewport hasTouch is ignored)',
    workerConsole: 'puppeteer over WebDriver BiDi does not report a worker\'s console',
  },
  webkit: {
    console: 'WebDriver classic has no console events: the probe script records console.error, uncaught errors and rejections',
    requests: 'WebDriver classic has no network events: requests are read from the page\'s Resource Timing entries',
    downloads: 'WebDriver classic cannot see downloads: the file is taken at the page\'s <a download> click by the probe',
    workerConsole: 'WebDriver classic does not report a worker\'s console',
    dialogs: 'WebDriver classic stops at a dialog: the probe records alert/confirm/prompt calls instead',
    touch: 'WebKitGTK under Xvfb has no touch screen (maxTouchPoints 0) and MiniBrowser\'s window is at least 447 px wide',
  },
};
export const limits = LIMITS[ENGINE];

/** Names the driver itself adds to every frame's window (puppeteer's ARIA query bindings). */
export const DRIVER_GLOBALS = { chromium: [], firefox: ['__ariaQuerySelector', '__ariaQuerySelectorAll'], webkit: [] }[ENGINE];

/** Screenshots of this engine: build/screenshots/<engine>/. */
export const SHOTS = path.join(repoRoot, 'build', 'screenshots', ENGINE);

/**
 * Which screenshots are taken: by default those a page of docs/ shows (a call says so with
 * `shown: 'docs/…'`); with MHA_SCREENSHOTS=all every one, to look at each view in each engine.
 * A picture costs WebKit under Xvfb a grown window and a PNG made twice on the CPU.
 */
export const SCREENSHOTS = process.env.MHA_SCREENSHOTS || 'shown';
assert.ok(['shown', 'all'].includes(SCREENSHOTS), `MHA_SCREENSHOTS must be shown or all, got "${SCREENSHOTS}"`);

const debug = (...args) => { if (process.env.MHA_DRIVER_DEBUG) console.error('[driver]', ...args); };

/** A page function that has not settled in this long has hung the page (no frame comes, a call
 *  never returns): the test fails saying so, rather than the run waiting for ever. */
export const EVALUATE_LIMIT_MS = 300_000;

/** How long a click waits for a disabled element to be enabled (playwright's default timeout). */
const ENABLED_WITHIN_MS = 30_000;

/** `promise`, or an Error naming `what` when it has not settled in `ms`. */
export function within(promise, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`[${ENGINE}] ${what} did not settle in ${ms / 1000} s: the page stopped answering`)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

const evaluated = (fn) => `page.evaluate(${String(fn).replace(/\s+/g, ' ').slice(0, 100)})`;

/** Say what an engine cannot do, in the test's output, and whether it is so. */
export function note(what) {
  console.log(`  [${ENGINE}] ${what}`);
}

/** The page's browser packages (web/vendor), copied by scripts/build/vendor.js when missing. */
export function ensureVendored() {
  if (['compromise-three.mjs', 'katex/katex.mjs', 'tokenizers.mjs'].every((f) => existsSync(path.join(repoRoot, 'web', 'vendor', f)))) return;
  const run = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'build', 'vendor.js')], { encoding: 'utf8' });
  assert.equal(run.status, 0, `scripts/build/vendor.js failed: ${run.stderr}`);
}

// ---------------------------------------------------------------------------------------------
// The test server: scripts/serve/serve.js, plus the probe for engines that need it.

const PROBE_PATH = '/__driver/probe.js';
/** A blank page of the test server's origin (with the probe in WebKit), for tests that need only
 *  the origin and import the API themselves: a page of the site would load and draw it first. */
export const BLANK_PAGE = '__driver/blank.html';
/** Init scripts for the next WebKit page load (WebDriver classic drives one page at a time per session). */
let pendingInitScripts = [];

/**
 * Serve root like scripts/serve/serve.js ({ root, port: 0, headers }), and BLANK_PAGE; resolves to { url, close }.
 * `faults: { '/path': 'missing' | 'damaged' }` answers 404, or the file with its middle byte
 * flipped, for those paths (a server of its own is an origin of its own: an empty cache).
 */
export async function serve(options) {
  const served = await startServer({ port: 0, ...options });
  const faults = options.faults || {};
  const [original] = served.server.listeners('request');
  served.server.removeAllListeners('request');
  const root = path.resolve(options.root);
  const headers = options.headers || {};
  served.server.on('request', (req, res) => {
    const urlPath = (req.url || '/').split(/[?#]/)[0];
    if (urlPath === `/${BLANK_PAGE}`) {
      const probe = ENGINE === 'webkit' ? `<script src="${PROBE_PATH}"></script>` : '';
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
      res.end(`<!doctype html><html lang="en"><head>${probe}<meta charset="utf-8"><title>blank</title></head><body></body></html>`);
      return;
    }
    if (faults[urlPath] === 'missing') {
      res.writeHead(404, { 'Content-Type': 'text/plain', ...headers });
      res.end('not here');
      return;
    }
    if (faults[urlPath] === 'damaged') {
      const body = readFileSync(path.join(root, urlPath));
      body[body.length >> 1] ^= 0xff;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length, ...headers });
      res.end(body);
      return;
    }
    if (ENGINE !== 'webkit') {
      original(req, res);
      return;
    }
    if (urlPath === PROBE_PATH) {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
      res.end(probeSource(pendingInitScripts));
      return;
    }
    let file = null;
    try {
      const decoded = decodeURIComponent(urlPath);
      file = path.join(root, decoded.endsWith('/') ? `${decoded}index.html` : decoded);
    } catch { /* the server's own handler answers */ }
    if (file && file.startsWith(root) && /\.html?$/.test(file) && existsSync(file) && statSync(file).isFile() && req.method === 'GET') {
      const html = readFileSync(file, 'utf8').replace(/<head[^>]*>/i, (m) => `${m}<script src="${PROBE_PATH}"></script>`);
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache', ...headers });
      res.end(html);
      return;
    }
    original(req, res);
  });
  return served;
}

const PROBE_KEY = 'mha-driver-probe';

/** The probe (WebKit): records errors, dialogs and downloads, then runs the init scripts. */
function probeSource(initScripts) {
  const probe = (key) => {
    if (window[Symbol.for(key)]) return;
    const record = { consoleErrors: [], pageErrors: [], dialogs: [], downloads: [], blobs: new Map() };
    Object.defineProperty(window, Symbol.for(key), { value: record });
    const consoleError = console.error.bind(console);
    console.error = (...args) => { record.consoleErrors.push({ text: args.map(String).join(' '), url: location.href }); consoleError(...args); };
    window.addEventListener('error', (event) => {
      if (event instanceof ErrorEvent) record.pageErrors.push(event.message || String(event.error));
      else if (event.target && event.target !== window && (event.target.src || event.target.href)) {
        record.consoleErrors.push({ text: `failed to load ${event.target.src || event.target.href}`, url: event.target.src || event.target.href });
      }
    }, true);
    window.addEventListener('unhandledrejection', (event) => record.pageErrors.push(`unhandled rejection: ${event.reason && event.reason.message ? event.reason.message : event.reason}`));
    for (const name of ['alert', 'confirm', 'prompt']) {
      window[name] = (message) => { record.dialogs.push(`${name}: ${message}`); return name === 'confirm' ? false : null; };
    }
    const createObjectURL = URL.createObjectURL.bind(URL);
    URL.createObjectURL = (object) => { const url = createObjectURL(object); if (object instanceof Blob) record.blobs.set(url, object); return url; };
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function clickAnchor() {
      if (this.hasAttribute('download') && record.blobs.has(this.href)) {
        record.downloads.push({ name: this.getAttribute('download'), blob: record.blobs.get(this.href) });
        return undefined;
      }
      return click.call(this);
    };
  };
  return [`(${probe})(${JSON.stringify(PROBE_KEY)});`, ...initScripts].join('\n');
}

/**
 * The headers startWeb adds to every response: none, or with MHA_SERVE_HEADERS=start those of
 * `npm start` (scripts/serve/serve.js SERVE_HEADERS: the page cross-origin isolated, on threads).
 */
export const WEB_HEADERS = { '': {}, start: SERVE_HEADERS }[process.env.MHA_SERVE_HEADERS || ''];
assert.ok(WEB_HEADERS, `MHA_SERVE_HEADERS must be start or unset, got "${process.env.MHA_SERVE_HEADERS}"`);

/**
 * What a test file starts with: the built files it needs are there (a missing one names the
 * command that makes it), the page's vendored packages are copied, web/ is served (with
 * WEB_HEADERS and the test's own `headers`) and this engine launched. Resolves to
 * { server, browser }; stopWeb closes them.
 */
export async function startWeb({ needs = ['web/lib/wasm/mha_core.wasm'], headers } = {}) {
  for (const file of needs) {
    const command = file.startsWith('web/models/') ? 'node scripts/build/build-model.js' : 'npm run build';
    assert.ok(existsSync(path.join(repoRoot, file)), `expected ${file}: run "${command}" first`);
  }
  ensureVendored();
  const all = { ...WEB_HEADERS, ...headers };
  const server = await serve({ root: path.join(repoRoot, 'web'), ...(Object.keys(all).length ? { headers: all } : {}) });
  try {
    return { server, browser: await launch() };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** Closes what startWeb opened (either may be missing after a failed start). */
export async function stopWeb({ server, browser } = {}) {
  if (browser) await browser.close();
  if (server) await server.close();
}

// ---------------------------------------------------------------------------------------------
// Launching

/** Launch this engine's browser; resolves to a Browser with newPage(options) and close(). */
export async function launch(options = {}) {
  assert.ok(existsSync(BINARIES[ENGINE]), `expected the ${ENGINE} binary at ${BINARIES[ENGINE]} (node scripts/build/setup.js test installs it as root)`);
  if (ENGINE === 'chromium') return launchChromium(options);
  if (ENGINE === 'firefox') return launchFirefox(options);
  return launchWebKit(options);
}

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function launchChromium() {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: BINARIES.chromium, headless: true, args: CHROMIUM_ARGS });
  return {
    engine: ENGINE,
    async newPage(o = {}) {
      const context = await browser.newContext({
        viewport: o.viewport || { width: 1280, height: 900 }, deviceScaleFactor: o.deviceScaleFactor, hasTouch: !!o.touch,
        isMobile: !!o.mobile, reducedMotion: o.reducedMotion, acceptDownloads: true,
      });
      return new ChromiumPage(await within(context.newPage(), 60_000, 'opening a page'), context);
    },
    close: () => browser.close(),
  };
}

/**
 * A copy of a Firefox profile made once (build/firefox-profile-<binary's size and time>): a new
 * profile costs Firefox about 2 s of CPU at start-up, every launch of every test file. The first
 * launch anywhere makes it (the others wait for it); each launch then starts from a copy.
 */
async function firefoxProfile(puppeteer) {
  const binary = statSync(BINARIES.firefox);
  const template = path.join(repoRoot, 'build', `firefox-profile-${binary.size}-${Math.round(binary.mtimeMs)}`);
  const ready = path.join(template, 'mha-ready');
  const lock = `${template}.lock`;
  for (let waited = 0; !existsSync(ready); waited += POLL_MS) {
    mkdirSync(path.dirname(template), { recursive: true });
    let mine = false;
    try {
      mkdirSync(lock);
      mine = true;
    } catch {
      // another test file is making it; a lock older than a minute was left by a killed run
      if (waited > 60_000 || Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > 60_000) rmSync(lock, { recursive: true, force: true });
    }
    if (mine) {
      try {
        rmSync(template, { recursive: true, force: true });
        const first = await puppeteer.launch({ browser: 'firefox', executablePath: BINARIES.firefox, headless: true, userDataDir: template });
        await first.close();
        for (const name of ['lock', '.parentlock', 'parent.lock']) rmSync(path.join(template, name), { force: true });
        writeFileSync(ready, '');
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
      break;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const copy = mkdtempSync(path.join(os.tmpdir(), 'mha-firefox-profile-'));
  cpSync(template, copy, { recursive: true, filter: (from) => path.basename(from) !== 'mha-ready' });
  return copy;
}

async function launchFirefox() {
  const { default: puppeteer } = await import('puppeteer-core');
  const downloads = mkdtempSync(path.join(os.tmpdir(), 'mha-firefox-downloads-'));
  const profiles = [];
  const start = async (prefs = {}) => puppeteer.launch({
    browser: 'firefox', executablePath: BINARIES.firefox, headless: true,
    userDataDir: profiles[profiles.push(await firefoxProfile(puppeteer)) - 1],
    extraPrefsFirefox: {
      'browser.download.dir': downloads, 'browser.download.folderList': 2, 'browser.download.useDownloadDir': true,
      'browser.download.always_ask_before_handling_new_types': false, 'network.proxy.type': 0,
      // no downloads panel: it would take the focus from the page
      'browser.download.alwaysOpenPanel': false, 'browser.download.manager.showWhenStarting': false, ...prefs,
    },
  });
  const browser = await start();
  let reduced = null; // a second Firefox, with prefers-reduced-motion set by its preference
  return {
    engine: ENGINE,
    async newPage(o = {}) {
      let owner = browser;
      if (o.reducedMotion === 'reduce') owner = reduced || (reduced = await start({ 'ui.prefersReducedMotion': 1 }));
      const context = o.freshContext ? await owner.createBrowserContext() : null;
      const page = await (context || owner).newPage();
      const viewport = o.viewport || { width: 1280, height: 900 };
      await page.setViewport({ ...viewport, deviceScaleFactor: o.deviceScaleFactor || 1 });
      return new FirefoxPage(page, context, downloads, o.deviceScaleFactor || 1);
    },
    async close() {
      await browser.close();
      if (reduced) await reduced.close();
      for (const dir of [downloads, ...profiles]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Xvfb on a free display, shared by every WebKit page of this process. */
let xvfb = null;
async function startXvfb() {
  if (xvfb) return xvfb.display;
  const child = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '2560x1600x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'pipe', process.env.MHA_DRIVER_DEBUG ? 'inherit' : 'ignore'] });
  child.on('exit', (code, signal) => debug('Xvfb exited', code, signal));
  const display = await new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`Xvfb could not start (${error.message}); apt-get install xvfb`)));
    let text = '';
    // Xvfb writes the display number and a newline, maybe in two writes; keep reading after it
    child.stdout.on('data', (data) => { text += data; if (text.includes('\n')) resolve(text.trim()); });
  });
  child.stdout.unref();
  child.unref();
  xvfb = { child, display };
  process.once('exit', () => child.kill());
  return display;
}

async function freePort() {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/**
 * Xvfb has no GPU, so WebKitGTK's GL runs on Mesa's llvmpipe: Skia then paints on the CPU
 * (WEBKIT_SKIA_ENABLE_CPU_RENDERING) and llvmpipe composites on the calling thread
 * (LP_NUM_THREADS=0). That takes about a fifth less CPU than painting through llvmpipe too
 * (docs/browsers.md); what the page draws is the same.
 */
const WEBKIT_ENV = { WEBKIT_SKIA_ENABLE_CPU_RENDERING: '1', LP_NUM_THREADS: '0' };

async function launchWebKit() {
  assert.ok(existsSync(WEBKIT_DRIVER), `expected ${WEBKIT_DRIVER} (apt-get install webkit2gtk-driver)`);
  const { Builder } = await import('selenium-webdriver');
  const display = await startXvfb();
  const pages = new Set();
  const config = mkdtempSync(path.join(os.tmpdir(), 'mha-webkit-'));
  return {
    engine: ENGINE,
    async newPage(o = {}) {
      // One WebKitWebDriver (one session, one MiniBrowser) per page; GDK_SCALE sets its device
      // pixel ratio. Starting a session now and
      // then never answers here: after 30 s that driver is ended and another started.
      const xdg = path.join(config, o.reducedMotion === 'reduce' ? 'reduced' : 'default');
      // prefers-reduced-motion follows GTK's gtk-enable-animations setting
      mkdirSync(path.join(xdg, 'gtk-3.0'), { recursive: true });
      writeFileSync(path.join(xdg, 'gtk-3.0', 'settings.ini'),
        `[Settings]\ngtk-enable-animations=${o.reducedMotion === 'reduce' ? 'false' : 'true'}\n`);
      let driver = null;
      let driverProcess = null;
      for (let attempt = 1; !driver; attempt += 1) {
        const port = await freePort();
        debug('WebKitWebDriver on port', port, 'attempt', attempt);
        const scale = o.deviceScaleFactor ? { GDK_SCALE: String(Math.round(o.deviceScaleFactor)) } : {};
        driverProcess = spawn(WEBKIT_DRIVER, [`--port=${port}`], { env: { ...process.env, ...WEBKIT_ENV, DISPLAY: `:${display}`, XDG_CONFIG_HOME: xdg, ...scale }, stdio: ['ignore', 'ignore', process.env.MHA_DRIVER_DEBUG ? 'inherit' : 'ignore'] });
        driverProcess.unref();
        const child = driverProcess;
        process.once('exit', () => child.kill());
        const url = `http://127.0.0.1:${port}`;
        for (let k = 0; k < 100; k += 1) {
          try { if ((await fetch(`${url}/status`)).ok) break; } catch { /* not up yet */ }
          await new Promise((r) => setTimeout(r, 50));
        }
        const session = new Builder().usingServer(url).withCapabilities({
          browserName: 'MiniBrowser', 'webkitgtk:browserOptions': { binary: BINARIES.webkit, args: ['--automation'] },
        }).build();
        let timer;
        driver = await Promise.race([session, new Promise((resolve) => { timer = setTimeout(() => resolve(null), 30000); })]);
        clearTimeout(timer);
        if (!driver) {
          session.catch(() => {});
          child.kill('SIGKILL');
          assert.ok(attempt < 3, '[webkit] WebKitWebDriver did not start a MiniBrowser session in three tries of 30 s');
        }
      }
      debug('session started');
      await driver.manage().setTimeouts({ script: 600_000, pageLoad: 120_000 });
      const page = new WebKitPage(driver, driverProcess, o);
      await page.setViewport(o.viewport || { width: 1280, height: 900 });
      pages.add(page);
      page.closed = () => pages.delete(page);
      return page;
    },
    async close() {
      for (const page of [...pages]) await page.close();
      rmSync(config, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Pages

/** The longest a poll waits between two looks (tests wait on the page's own events where it has them). */
const POLL_MS = 50;
const pollEvery = (polling) => (typeof polling === 'number' ? Math.min(polling, POLL_MS) : polling);

const toSource = (fn) => (typeof fn === 'function' ? fn.toString() : `() => (${fn})`);

class BasePage {
  constructor() {
    this.engine = ENGINE;
    this.listeners = { console: [], consoleError: [], pageError: [], dialog: [], request: [] };
  }

  /** on('console', (type, text, url) => …) (every message; not in webkit), on('consoleError', (text, url) => …), on('pageError', (message) => …), on('dialog', (text) => …), on('request', (url) => …) */
  on(event, fn) {
    assert.ok(this.listeners[event], `no page event "${event}"`);
    this.listeners[event].push(fn);
    return this;
  }

  emit(event, ...args) {
    for (const fn of this.listeners[event]) fn(...args);
  }

  /** Deliver events gathered in the page (webkit); the other engines deliver them as they come. */
  async flushEvents() {}

  async waitForSelector(selector, { timeout = 30000 } = {}) {
    await this.waitForFunction((s) => {
      const e = document.querySelector(s);
      return !!e && !e.hidden && e.getClientRects().length > 0;
    }, selector, { timeout });
  }

  text(selector) { return this.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector); }
  texts(selector) { return this.evaluate((s) => [...document.querySelectorAll(s)].map((e) => e.textContent), selector); }
  count(selector) { return this.evaluate((s) => document.querySelectorAll(s).length, selector); }
  attribute(selector, name) { return this.evaluate(([s, n]) => document.querySelector(s)?.getAttribute(n) ?? null, [selector, name]); }
  checked(selector, index = 0) { return this.evaluate(([s, i]) => document.querySelectorAll(s)[i].checked, [selector, index]); }
  visible(selector) {
    return this.evaluate((s) => {
      const e = document.querySelector(s);
      if (!e) return false;
      if (typeof e.checkVisibility === 'function') return e.checkVisibility({ visibilityProperty: true });
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
    }, selector);
  }
  focus(selector, index = 0) { return this.evaluate(([s, i]) => document.querySelectorAll(s)[i].focus(), [selector, index]); }
  /** Scroll to the element and let two frames be drawn there (so that what watches the viewport,
   *  an IntersectionObserver, sees it as a reader scrolling would). */
  scrollIntoView(selector) {
    return this.evaluate(async (s) => {
      document.querySelector(s).scrollIntoView({ block: 'center' });
      for (let k = 0; k < 2; k += 1) await new Promise((r) => requestAnimationFrame(() => r()));
    }, selector);
  }
  dispatchEvent(selector, type) { return this.evaluate(([s, t]) => document.querySelector(s).dispatchEvent(new Event(t, { bubbles: true })), [selector, type]); }
  /** The element's box in CSS px relative to the document. */
  box(selector) {
    return this.evaluate((s) => {
      const r = document.querySelector(s).getBoundingClientRect();
      return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height };
    }, selector);
  }
  /** Scroll the element into view, wait until it stops moving (two animation frames with the
   *  same box) and until it is enabled, as playwright does before it clicks: lazily typeset
   *  formulas shift the layout, and a button is disabled while the explorer computes. */
  stable(selector, index = 0) {
    return this.evaluate(async ([s, i, enabledWithin]) => {
      const e = document.querySelectorAll(s)[i];
      if (!e) throw new Error(`no element ${s} #${i}`);
      e.scrollIntoView({ block: 'center', inline: 'nearest' });
      const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
      const box = () => { const r = e.getBoundingClientRect(); return `${r.left},${r.top},${r.width},${r.height}`; };
      let last = box();
      for (let k = 0, same = 0; k < 60 && same < 2; k += 1) {
        await frame();
        const now = box();
        same = now === last ? same + 1 : 0;
        last = now;
      }
      const until = performance.now() + enabledWithin;
      while (e.matches(':disabled')) {
        if (performance.now() > until) throw new Error(`${s} #${i} stayed disabled for ${enabledWithin} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }, [selector, index, ENABLED_WITHIN_MS]);
  }

  /**
   * Click the element as `press()` does (a real pointer click), then check that the click reached
   * it: the driver reads the element's position before it presses, and a layout shift in between
   * (a formula typeset as it comes near the screen) sends the click to whatever moved under that
   * point. Playwright checks the hit target itself; here a click seen landing outside the element
   * is tried again, from a stable position, at most twice.
   */
  async checkedClick(selector, index, press) {
    for (let attempt = 1; ; attempt += 1) {
      await this.stable(selector, index);
      await this.evaluate(([s, i]) => {
        const e = document.querySelectorAll(s)[i];
        const seen = { missed: null };
        window[Symbol.for('mha-driver-click')] = seen;
        document.addEventListener('click', (event) => {
          const target = /** @type {Node} */ (event.composedPath()[0] ?? event.target);
          seen.missed = e.contains(target) || event.composedPath().includes(e) ? null
            : `${target.nodeName.toLowerCase()}${target.id ? `#${target.id}` : ''}${target.className && typeof target.className === 'string' ? `.${target.className.split(' ').join('.')}` : ''}`;
        }, { capture: true, once: true });
      }, [selector, index]);
      await press();
      // a click that navigated, or none seen (a disabled element, an <option>): nothing to check
      const missed = await this.evaluate(() => window[Symbol.for('mha-driver-click')]?.missed ?? null).catch(() => null);
      if (!missed) return;
      debug(`the click on ${selector} #${index} landed on ${missed} (attempt ${attempt})`);
      if (attempt === 3) throw new Error(`three clicks on ${selector} #${index} landed elsewhere (the last on ${missed}): the layout kept moving`);
    }
  }

  async check(selector, index = 0) {
    if (!(await this.checked(selector, index))) await this.click(selector, { index });
  }
  async uncheck(selector, index = 0) {
    if (await this.checked(selector, index)) await this.click(selector, { index });
  }
  /** Press a key with the element focused. */
  async press(selector, key) {
    await this.focus(selector);
    await this.keyboard(key);
  }
  async timeout(ms) { await new Promise((r) => setTimeout(r, ms)); }
  /**
   * A picture of the page, an element (`selector`) or a `clip`, written to SHOTS/name; resolves
   * to its path, or to null when it is not taken (not `shown` in docs/, and MHA_SCREENSHOTS is not all).
   */
  async screenshot(name, options = {}) {
    if (SCREENSHOTS !== 'all' && !options.shown) return null;
    return this.capture(name, options);
  }
  /** Where screenshot(name) writes. */
  shotPath(name) {
    mkdirSync(SHOTS, { recursive: true });
    return path.join(SHOTS, name);
  }
}

/** Write files for <input type=file> into a temporary folder: each { name, buffer } or a path. */
function filesOnDisk(files) {
  const list = Array.isArray(files) ? files : [files];
  let dir = null;
  return list.map((f) => {
    if (typeof f === 'string') return f;
    dir = dir || mkdtempSync(path.join(os.tmpdir(), 'mha-upload-'));
    const file = path.join(dir, f.name);
    writeFileSync(file, f.buffer);
    return file;
  });
}

class ChromiumPage extends BasePage {
  constructor(page, context) {
    super();
    this.page = page;
    this.context = context;
    page.on('console', (m) => {
      this.emit('console', m.type(), m.text(), m.location().url || '');
      if (m.type() === 'error') this.emit('consoleError', m.text(), m.location().url || '');
    });
    page.on('pageerror', (e) => this.emit('pageError', e.message));
    page.on('dialog', async (d) => { this.emit('dialog', `${d.type()}: ${d.message()}`); await d.dismiss(); });
    page.on('request', (r) => this.emit('request', r.url()));
  }
  get raw() { return this.page; }
  url() { return this.page.url(); }
  /** The window's inner size in CSS px, without a reload. */
  setViewport({ width, height }) { return this.page.setViewportSize({ width, height }); }
  goto(url) { return this.page.goto(url); }
  evaluate(fn, arg) { return within(this.page.evaluate(fn, arg), EVALUATE_LIMIT_MS, evaluated(fn)); }
  $$eval(selector, fn) { return this.page.$$eval(selector, fn); }
  async waitForFunction(fn, arg, { timeout = 30000, polling } = {}) {
    await this.page.waitForFunction(fn, arg, { timeout, ...(polling ? { polling: pollEvery(polling) } : {}) });
  }
  addInitScript(fn, arg) { return this.page.addInitScript(fn, arg); }
  click(selector, { index = 0 } = {}) { return this.page.locator(selector).nth(index).click(); }
  tap(selector, { index = 0 } = {}) { return this.page.locator(selector).nth(index).tap(); }
  hover(selector, { index = 0 } = {}) { return this.page.locator(selector).nth(index).hover(); }
  mouseMove(x, y) { return this.page.mouse.move(x, y); }
  fill(selector, text) { return this.page.fill(selector, text); }
  keyboard(key) { return this.page.keyboard.press(key); }
  selectOption(selector, value) { return this.page.selectOption(selector, value); }
  setInputFiles(selector, files) { return this.page.setInputFiles(selector, filesOnDisk(files)); }
  async capture(name, { fullPage = false, clip, selector } = {}) {
    const file = this.shotPath(name);
    if (selector) await this.page.locator(selector).screenshot({ path: file });
    else await this.page.screenshot({ path: file, fullPage, clip });
    return file;
  }
  async download(selector) {
    const [file] = await Promise.all([this.page.waitForEvent('download'), this.click(selector)]);
    return { name: file.suggestedFilename(), bytes: readFileSync(await file.path()), how: 'the browser\'s download' };
  }
  /** Every frame: { url, evaluate(fn, arg), waitForFunction(fn, arg, o) }. */
  async frames() {
    return this.page.frames().map((f) => ({
      url: f.url(), evaluate: (fn, arg) => f.evaluate(fn, arg),
      waitForFunction: (fn, arg, { timeout = 30000 } = {}) => f.waitForFunction(fn, arg, { timeout }),
    }));
  }
  onWorkerConsole(fn) {
    this.page.on('worker', (worker) => worker.on('console', (m) => fn(m.text())));
    return true;
  }
  async requests() { return null; }
  async close() { await this.context.close(); }
}

const FIREFOX_KEYS = { ' ': 'Space' };
/** The Firefox tab in front: Firefox holds back focus events in a tab behind another one. */
let frontFirefoxPage = null;

/**
 * WebDriver BiDi sends an object met twice in a result as a reference to the first, and
 * puppeteer returns nothing in its place ({ a: x, b: x } comes back as { a: x, b: {} }): the
 * page function's result is copied into a tree first, so every place holds its own copy.
 */
function treeResult(fn) {
  if (typeof fn !== 'function') return `(${fn})`;
  const copy = function tree(value, path = []) {
    if (value === null || typeof value !== 'object' || path.includes(value)) return value;
    if (ArrayBuffer.isView(value)) return value.slice();
    if (Array.isArray(value)) return value.map((v) => tree(v, [...path, value]));
    if (Object.getPrototypeOf(value) !== Object.prototype) return value;
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = tree(v, [...path, value]);
    return out;
  };
  // eslint-disable-next-line no-new-func -- built here, sent to the page as a function's text
  return new Function('arg', `return Promise.resolve((${fn.toString()})(arg)).then((v) => (${copy.toString()})(v));`);
}

class FirefoxPage extends BasePage {
  constructor(page, context, downloads, deviceScaleFactor) {
    super();
    this.page = page;
    this.deviceScaleFactor = deviceScaleFactor;
    this.context = context;
    this.downloads = downloads;
    page.on('console', (m) => {
      this.emit('console', m.type(), m.text(), m.location()?.url || '');
      if (m.type() === 'error') this.emit('consoleError', m.text(), m.location()?.url || '');
    });
    page.on('pageerror', (e) => this.emit('pageError', e.message));
    page.on('dialog', async (d) => { this.emit('dialog', `${d.type()}: ${d.message()}`); await d.dismiss(); });
    page.on('request', (r) => this.emit('request', r.url()));
    frontFirefoxPage = this;
  }
  get raw() { return this.page; }
  url() { return this.page.url(); }
  /** The window's inner size in CSS px, without a reload. */
  setViewport({ width, height }) { return this.page.setViewport({ width, height, deviceScaleFactor: this.deviceScaleFactor }); }
  async front() {
    if (frontFirefoxPage === this) return;
    await this.page.bringToFront();
    frontFirefoxPage = this;
  }
  async goto(url) { await this.front(); return this.page.goto(url); }
  async focus(selector, index = 0) { await this.front(); return super.focus(selector, index); }
  evaluate(fn, arg) { return within(this.page.evaluate(treeResult(fn), arg), EVALUATE_LIMIT_MS, evaluated(fn)); }
  $$eval(selector, fn) { return this.page.$$eval(selector, fn); }
  // polling on animation frames by default, as playwright does
  async waitForFunction(fn, arg, { timeout = 30000, polling = 'raf' } = {}) {
    await this.page.waitForFunction(fn, { timeout, polling: pollEvery(polling) }, arg);
  }
  addInitScript(fn, arg) { return this.page.evaluateOnNewDocument(fn, arg); }
  async handle(selector, index) {
    const all = await this.page.$$(selector);
    assert.ok(all[index], `[firefox] no element ${selector} #${index}`);
    return all[index];
  }
  async click(selector, { index = 0 } = {}) {
    await this.front();
    await this.checkedClick(selector, index, async () => (await this.handle(selector, index)).click());
  }
  async tap() { throw new Error(LIMITS.firefox.touch); }
  async hover(selector, { index = 0 } = {}) { await (await this.handle(selector, index)).hover(); }
  mouseMove(x, y) { return this.page.mouse.move(x, y); }
  async fill(selector, text) {
    await this.evaluate(([s, t]) => { const e = document.querySelector(s); e.focus(); e.select?.(); }, [selector, text]);
    await this.page.keyboard.press('Backspace');
    if (text) await this.page.keyboard.type(text);
  }
  async keyboard(key) {
    await this.front();
    const keys = key.split('+').map((k) => FIREFOX_KEYS[k] || k);
    if (keys.length === 1) return this.page.keyboard.press(keys[0]);
    return (async () => {
      for (const k of keys.slice(0, -1)) await this.page.keyboard.down(k);
      await this.page.keyboard.press(keys.at(-1));
      for (const k of keys.slice(0, -1).reverse()) await this.page.keyboard.up(k);
    })();
  }
  async selectOption(selector, value) { await this.page.select(selector, String(value)); }
  async setInputFiles(selector, files) { await (await this.handle(selector, 0)).uploadFile(...filesOnDisk(files)); }
  async capture(name, { fullPage = false, clip, selector } = {}) {
    const file = this.shotPath(name);
    if (selector) await (await this.handle(selector, 0)).screenshot({ path: file });
    else if (clip) await this.page.screenshot({ path: file, clip, captureBeyondViewport: true });
    else await this.page.screenshot({ path: file, fullPage });
    return file;
  }
  async download(selector) {
    const before = new Set(readdirSync(this.downloads));
    await this.click(selector);
    const started = Date.now();
    // Firefox may first write the bytes under a temporary name and then rename the file: a file
    // is taken once the folder has held the same names and sizes for 300 ms
    let previous = '';
    let since = Date.now();
    for (;;) {
      const names = readdirSync(this.downloads);
      const fresh = names.filter((n) => !before.has(n) && !n.endsWith('.part'));
      const partial = names.some((n) => n.endsWith('.part'));
      const seen = JSON.stringify(names.map((n) => [n, statSync(path.join(this.downloads, n), { throwIfNoEntry: false })?.size]));
      if (seen !== previous) since = Date.now();
      const steady = Date.now() - since >= 300;
      previous = seen;
      if (fresh.length && !partial && steady) {
        const name = fresh[0];
        const bytes = readFileSync(path.join(this.downloads, name));
        rmSync(path.join(this.downloads, name));
        return { name, bytes, how: 'the browser\'s download (to its download folder)' };
      }
      assert.ok(Date.now() - started < 30000, `[firefox] no download from ${selector} within 30 s`);
      await this.timeout(50);
    }
  }
  async frames() {
    return this.page.frames().map((f) => ({
      url: f.url(), evaluate: (fn, arg) => f.evaluate(treeResult(fn), arg),
      waitForFunction: (fn, arg, { timeout = 30000 } = {}) => f.waitForFunction(fn, { timeout, polling: POLL_MS }, arg),
    }));
  }
  onWorkerConsole() { return false; }
  async requests() { return null; }
  async close() {
    if (frontFirefoxPage === this) frontFirefoxPage = null;
    await this.page.close();
    if (this.context) await this.context.close();
  }
}

let seleniumModules = null;
async function selenium() {
  if (!seleniumModules) {
    const webdriver = await import('selenium-webdriver');
    const command = await import('selenium-webdriver/lib/command.js');
    seleniumModules = { By: webdriver.By, Key: webdriver.Key, Command: command.Command, Name: command.Name };
  }
  return seleniumModules;
}

const SELENIUM_KEYS = {
  ArrowRight: 'ARROW_RIGHT', ArrowLeft: 'ARROW_LEFT', ArrowUp: 'ARROW_UP', ArrowDown: 'ARROW_DOWN', Home: 'HOME', End: 'END',
  Enter: 'ENTER', Escape: 'ESCAPE', Tab: 'TAB', Shift: 'SHIFT', Space: 'SPACE', ' ': 'SPACE', Backspace: 'BACK_SPACE',
  PageDown: 'PAGE_DOWN', PageUp: 'PAGE_UP',
};

/** How long one WebDriver call of a WebKit waitForFunction polls in the page before it answers. */
const WAIT_CALL_MS = 5000;

class WebKitPage extends BasePage {
  constructor(driver, driverProcess, options) {
    super();
    this.driver = driver;
    this.driverProcess = driverProcess;
    this.options = options;
    this.initScripts = [];
    this.frame = null; // the child frame index commands run in, or null for the top document
  }
  get raw() { return this.driver; }
  url() { return this.currentUrl; }

  async setViewport({ width, height }) {
    // the window's size includes MiniBrowser's own chrome: set it, measure the inside, correct
    // (setRect can return before the page has its new size: read it once it has)
    const win = this.driver.manage().window();
    const sizes = () => this.driver.executeScript('return [innerWidth, innerHeight, outerWidth, outerHeight]');
    const resized = async (done) => {
      const started = Date.now();
      let last = await sizes();
      for (;;) {
        if (done(last) || Date.now() - started > 5000) return last;
        await new Promise((resolve) => setTimeout(resolve, 25));
        const now = await sizes();
        if (now.join() === last.join() && Date.now() - started > 500) return now;
        last = now;
      }
    };
    // each look corrects the window by what the inside still lacks, so a look taken before a
    // busy machine applied the last size is mended by the next
    const rect = { width, height };
    for (let attempt = 0; attempt < 4; ++attempt) {
      await win.setRect({ ...rect, x: 0, y: 0 });
      const inner = await resized((n) => n[0] === width && n[1] === height);
      if (inner[0] === width && inner[1] === height) break;
      rect.width += width - inner[0];
      rect.height += height - inner[1];
    }
    this.viewport = { width, height, chrome: [rect.width - width, rect.height - height] };
  }

  addInitScript(fn, arg) {
    this.initScripts.push(`(${fn})(${JSON.stringify(arg ?? null)});`);
  }

  async goto(url) {
    await this.flushEvents().catch(() => {});
    pendingInitScripts = this.initScripts;
    await this.driver.get(url);
    this.currentUrl = url;
  }

  run(fn, arg) { return this.runSource(toSource(fn), arg); }

  async runSource(source, arg) {
    const script = `const done = arguments[arguments.length - 1];
      Promise.resolve().then(() => (${source})(arguments[0])).then(
        (value) => done({ value: value === undefined ? null : value, undefined: value === undefined }),
        (error) => done({ error: String(error && error.stack ? error.message + '\\n' + error.stack : error) }));`;
    let r;
    try {
      r = await this.driver.executeAsyncScript(script, arg === undefined ? null : arg);
    } catch (error) {
      throw await this.crashNamed(error);
    }
    if (r && r.error !== undefined) throw new Error(`[webkit] evaluate: ${r.error}`);
    return r.undefined ? undefined : r.value;
  }

  /** WebKitWebDriver answers a script during which the page process died with "Could not parse
   *  script result"; the session's next command names the crash, the words
   *  scripts/test/browser-crash.js knows. Any other error is returned as it came. */
  async crashNamed(error) {
    if (!/Could not parse script result/.test(error?.message ?? '')) return error;
    try {
      await this.driver.executeScript('return 1');
    } catch (next) {
      if (CRASH.test(next?.message ?? '')) return new Error(`[webkit] ${next.message} (the script that was running: ${error.message})`);
    }
    return error;
  }

  evaluate(fn, arg) { return within(this.run(fn, arg), EVALUATE_LIMIT_MS, evaluated(fn)); }
  $$eval(selector, fn) { return this.runSource(`(s) => (${fn})([...document.querySelectorAll(s)])`, selector); }

  /** Polls after an animation frame (as playwright does), or every `polling` ms (at most 50).
   *  The polling runs in the page, a few seconds per WebDriver call: each call crosses
   *  WebKitWebDriver and MiniBrowser's automation, which costs more CPU than the predicate.
   *  Only the predicate's truth crosses WebDriver: serialising what it returns (a large object)
   *  costs WebKit seconds of CPU per poll. */
  async waitForFunction(fn, arg, { timeout = 30000, polling = 'raf' } = {}) {
    const started = Date.now();
    const every = typeof polling === 'number' ? Math.min(polling, POLL_MS) : POLL_MS;
    const frame = polling === 'raf' ? 'await new Promise((r) => requestAnimationFrame(() => r()));' : '';
    const predicate = `async ([arg, ms]) => {
      const until = performance.now() + ms;
      for (;;) {
        ${frame}
        if (await (${toSource(fn)})(arg)) return true;
        if (performance.now() >= until) return false;
        await new Promise((r) => setTimeout(r, ${every}));
      }
    }`;
    for (;;) {
      const left = timeout - (Date.now() - started);
      try {
        if (await this.runSource(predicate, [arg === undefined ? null : arg, Math.max(0, Math.min(left, WAIT_CALL_MS))])) return;
      } catch (error) {
        // the page navigated while it polled: the next call polls the new document
        if (!/before the unload event/.test(error.message)) throw error;
      }
      if (Date.now() - started > timeout) throw new Error(`[webkit] waitForFunction timed out after ${timeout} ms: ${toSource(fn).slice(0, 200)}`);
    }
  }

  async element(selector, index = 0) {
    const { By } = await selenium();
    const all = await this.driver.findElements(By.css(selector));
    assert.ok(all[index], `[webkit] no element ${selector} #${index}`);
    return all[index];
  }

  async click(selector, { index = 0 } = {}) {
    await this.checkedClick(selector, index, async () => (await this.element(selector, index)).click());
  }

  /** Raw W3C actions (selenium's own builder has no touch pointer for this driver). */
  async actions(sources) {
    const { Command, Name } = await selenium();
    await this.driver.execute(new Command(Name.ACTIONS).setParameter('actions', sources));
  }

  async centre(selector, index) {
    await this.stable(selector, index);
    return this.evaluate(([s, i]) => {
      const e = document.querySelectorAll(s)[i];
      const r = e.getBoundingClientRect();
      return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) };
    }, [selector, index]);
  }

  async tap(selector, { index = 0 } = {}) {
    const { x, y } = await this.centre(selector, index);
    await this.actions([{ type: 'pointer', id: 'finger', parameters: { pointerType: 'touch' }, actions: [
      { type: 'pointerMove', x, y, origin: 'viewport', duration: 0 }, { type: 'pointerDown', button: 0 },
      { type: 'pause', duration: 50 }, { type: 'pointerUp', button: 0 }] }]);
  }

  async hover(selector, { index = 0 } = {}) {
    const { x, y } = await this.centre(selector, index);
    await this.mouseMove(x, y);
  }

  async mouseMove(x, y) {
    await this.actions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [
      { type: 'pointerMove', x: Math.round(x), y: Math.round(y), origin: 'viewport', duration: 0 }] }]);
  }

  /** Focus, select what is there, and type over it with key actions (WebKit's element clear
   *  refuses some inputs that are in view as not interactable). */
  async fill(selector, text) {
    await this.evaluate((s) => { const e = document.querySelector(s); e.scrollIntoView({ block: 'center' }); e.focus(); e.select?.(); }, selector);
    const { Key } = await selenium();
    const keys = [Key.BACK_SPACE, ...[...text]];
    await this.actions([{ type: 'key', id: 'keyboard', actions: keys.flatMap((k) => [{ type: 'keyDown', value: k }, { type: 'keyUp', value: k }]) }]);
  }

  async keyboard(key) {
    const { Key } = await selenium();
    const keys = key.split('+').map((k) => (SELENIUM_KEYS[k] ? Key[SELENIUM_KEYS[k]] : k));
    const down = keys.slice(0, -1);
    const actions = [...down.map((k) => ({ type: 'keyDown', value: k })), { type: 'keyDown', value: keys.at(-1) }, { type: 'keyUp', value: keys.at(-1) },
      ...down.reverse().map((k) => ({ type: 'keyUp', value: k }))];
    await this.actions([{ type: 'key', id: 'keyboard', actions }]);
  }

  async selectOption(selector, value) {
    await this.click(`${selector} option[value="${value}"]`);
  }

  async setInputFiles(selector, files) {
    await (await this.element(selector)).sendKeys(filesOnDisk(files).join('\n'));
  }

  async capture(name, { fullPage = false, selector, clip } = {}) {
    const file = this.shotPath(name);
    // WebKit draws only what is in the window: grow the window to the element or page, then restore
    const target = selector || (fullPage || clip ? 'html' : null);
    let restore = null;
    if (target) {
      // a clip needs the window down to its bottom edge only
      const height = clip && !selector ? Math.ceil(clip.y + clip.height)
        : await this.evaluate((s) => Math.ceil(s === 'html' ? document.documentElement.scrollHeight : document.querySelector(s).getBoundingClientRect().height), target);
      if (height > this.viewport.height) {
        restore = { ...this.viewport };
        const win = this.driver.manage().window();
        const grown = Math.min(height + 40, 16000);
        await win.setRect({ width: this.viewport.width + this.viewport.chrome[0], height: grown + this.viewport.chrome[1], x: 0, y: 0 });
        // the page has grown once innerHeight says so (setRect can return before the resize reaches it)
        await this.waitForFunction((h) => innerHeight > h, this.viewport.height, { polling: POLL_MS, timeout: 10_000 });
      }
      // the whole element in the window, drawn (what was above the old window is painted anew)
      await this.evaluate(async (s) => {
        if (s === 'html') window.scrollTo(0, 0); else document.querySelector(s).scrollIntoView({ block: 'start' });
        for (let k = 0; k < 3; k += 1) await new Promise((r) => requestAnimationFrame(() => r()));
      }, target);
    }
    let png = await this.driver.takeScreenshot();
    // the element: cut from the window's picture (WebKitWebDriver's element screenshot is
    // shifted by MiniBrowser's toolbar)
    if (selector) {
      clip = await this.evaluate((s) => {
        const r = document.querySelector(s).getBoundingClientRect();
        const x = Math.max(0, r.left), y = Math.max(0, r.top);
        return { x: x * devicePixelRatio, y: y * devicePixelRatio, width: (Math.min(innerWidth, r.right) - x) * devicePixelRatio, height: (Math.min(innerHeight, r.bottom) - y) * devicePixelRatio };
      }, selector);
    }
    if (clip) {
      // crop in the page itself (WebDriver has no clip): draw the PNG on a canvas
      png = await this.evaluate(async ([data, c]) => {
        const image = new Image();
        image.src = `data:image/png;base64,${data}`;
        await image.decode();
        const canvas = document.createElement('canvas');
        canvas.width = Math.round(c.width);
        canvas.height = Math.round(c.height);
        canvas.getContext('2d').drawImage(image, -Math.round(c.x), -Math.round(c.y));
        return canvas.toDataURL('image/png').split(',')[1];
      }, [png, clip]);
    }
    writeFileSync(file, Buffer.from(png, 'base64'));
    if (restore) {
      const win = this.driver.manage().window();
      await win.setRect({ width: restore.width + restore.chrome[0], height: restore.height + restore.chrome[1], x: 0, y: 0 });
    }
    return file;
  }

  async download(selector) {
    const before = await this.evaluate((key) => window[Symbol.for(key)].downloads.length, PROBE_KEY);
    await this.click(selector);
    await this.waitForFunction(([key, n]) => window[Symbol.for(key)].downloads.length > n, [PROBE_KEY, before]);
    const got = await this.evaluate(async ([key, n]) => {
      const d = window[Symbol.for(key)].downloads[n];
      const bytes = new Uint8Array(await d.blob.arrayBuffer());
      let binary = '';
      for (let k = 0; k < bytes.length; k += 0x8000) binary += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
      return { name: d.name, base64: btoa(binary) };
    }, [PROBE_KEY, before]);
    return { name: got.name, bytes: Buffer.from(got.base64, 'base64'), how: 'the page\'s <a download> click, taken by the probe (WebDriver cannot see downloads)' };
  }

  async frames() {
    const count = await this.driver.executeScript('return window.frames.length');
    const inFrame = (k) => async (work) => {
      if (k !== null) await this.driver.switchTo().frame(k);
      try { return await work(); } finally { if (k !== null) await this.driver.switchTo().defaultContent(); }
    };
    const list = [null, ...Array.from({ length: count }, (_, k) => k)];
    const out = [];
    for (const k of list) {
      const inThisFrame = inFrame(k);
      const url = await inThisFrame(() => this.driver.executeScript('return location.href'));
      out.push({
        url,
        evaluate: (fn, arg) => inThisFrame(() => this.run(fn, arg)),
        waitForFunction: async (fn, arg, { timeout = 30000 } = {}) => {
          const started = Date.now();
          const predicate = `async (arg) => !!(await (${toSource(fn)})(arg))`;
          while (!(await inThisFrame(() => this.runSource(predicate, arg)))) {
            if (Date.now() - started > timeout) throw new Error(`[webkit] frame waitForFunction timed out after ${timeout} ms`);
            await this.timeout(POLL_MS);
          }
        },
      });
    }
    return out;
  }

  onWorkerConsole() { return false; }

  /** The URLs the page fetched, from Resource Timing (this engine has no request events). */
  async requests() {
    return this.evaluate(() => [location.href, ...performance.getEntriesByType('resource').map((e) => e.name)]);
  }

  async flushEvents() {
    let got = null;
    try {
      got = await this.driver.executeScript(`const r = window[Symbol.for(${JSON.stringify(PROBE_KEY)})];
        if (!r) return null;
        const out = { consoleErrors: r.consoleErrors.splice(0), pageErrors: r.pageErrors.splice(0), dialogs: r.dialogs.splice(0) };
        return out;`);
    } catch { return; }
    if (!got) return;
    for (const c of got.consoleErrors) this.emit('consoleError', c.text, c.url);
    for (const e of got.pageErrors) this.emit('pageError', e);
    for (const d of got.dialogs) this.emit('dialog', d);
  }

  async close() {
    await this.flushEvents().catch(() => {});
    try { await this.driver.quit(); } catch { /* gone already */ }
    this.driverProcess.kill();
    this.closed?.();
  }
}
