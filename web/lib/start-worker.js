// Starting a module worker whose script may be on another origin than the page (the package
// served by a CDN to a course site). A browser starts a worker only from a script of the page's
// own origin; for one elsewhere, a blob: module of the page's origin imports the real entry by
// its absolute URL (`import "https://cdn…/worker-entry.js";`), which the browser fetches with
// CORS like any module. A script of the page's origin starts as it is, so that a page with
// `worker-src 'self'` and no `blob:` keeps working.

/** The page's (or this worker's) origin; null where there is none (Node.js). */
function ownOrigin() {
  const location = /** @type {{ location?: { href?: string } }} */ (globalThis).location;
  if (!location || typeof location.href !== 'string') return null;
  // a blob: worker's location is blob:https://site/…; its origin is the site's
  return new URL(location.href).origin;
}

/**
 * Whether a script at `url` is on another origin than the page (or the worker) running this.
 * @param {string | URL} url  absolute
 */
export function onOtherOrigin(url) {
  const origin = ownOrigin();
  return origin !== null && new URL(url).origin !== origin;
}

/**
 * How errors name a worker's script: its file, and for one on another origin what the page and
 * that origin must allow.
 * @param {string | URL} url  absolute
 */
export function workerScriptName(url) {
  const href = new URL(url).href;
  const file = href.slice(href.lastIndexOf('/') + 1);
  return onOtherOrigin(href)
    ? `${file} from ${href}, started through a blob: module of this page: that server must send Access-Control-Allow-Origin, and a Content-Security-Policy must allow it in script-src and worker-src, with blob:`
    : file;
}

/**
 * A module worker running the script at `url`: started from its URL on the page's origin,
 * through a blob: module that imports it elsewhere. The blob's URL is let go once the worker
 * has answered or failed.
 * @param {string | URL} url  absolute
 * @param {WorkerOptions} [options]
 * @returns {Worker}
 */
export function startModuleWorker(url, options = {}) {
  const href = new URL(url).href;
  if (!onOtherOrigin(href)) return new Worker(href, { ...options, type: 'module' });
  const trampoline = URL.createObjectURL(new Blob([`import ${JSON.stringify(href)};\n`], { type: 'text/javascript' }));
  const worker = new Worker(trampoline, { ...options, type: 'module' });
  const revoke = () => {
    URL.revokeObjectURL(trampoline);
    worker.removeEventListener('message', revoke);
    worker.removeEventListener('error', revoke);
  };
  worker.addEventListener('message', revoke);
  worker.addEventListener('error', revoke);
  return worker;
}
