// A model on the Hugging Face Hub by its repository id: `loadModel('hf:openai-community/gpt2')`
// (models.js) asks here for its files. The Hub's models API first
// ({endpoint}/api/models/{repo}/revision/{revision}?blobs=true: the commit it resolves to as
// `sha`, every file as `siblings: [{ rfilename, size, lfs? }]`), then each file from
// {endpoint}/{repo}/resolve/{commit}/{file}, redirects followed (the Hub sends large files to a
// storage host). Only config.json, tokenizer.json, tokenizer_config.json, model.safetensors or
// model.safetensors.index.json and the shards it names are ever fetched: a repository is data,
// never code. Nothing is sent but these GETs (no token, no cookie).
//
// Files are kept by repository and commit: in a page or worker in Cache Storage (CACHE_NAME),
// in Node.js in a folder laid out as huggingface_hub's cache (hubCacheDir()):
//   models--{owner}--{name}/refs/{revision}            the commit the revision resolved to
//   models--{owner}--{name}/snapshots/{commit}/{file}  the files
//   models--{owner}--{name}/info/{commit}.json         the file list and sizes the API gave
// A repository whose revision and files are all kept opens with no request at all (offline).
//
// A sharded checkpoint becomes one safetensors stream for the core: one header made of the
// shards' headers (each tensor's offsets moved by the data of the shards before it), then each
// shard's data in turn, read as it arrives; no file is held whole.
import { MhaError } from './errors.js';
import { isNode } from './wasm-module.js';

export const HUB_ENDPOINT = 'https://huggingface.co';
export const HUB_PREFIX = 'hf:';
/** The Cache Storage of a page or worker that keeps the Hub's files. */
export const CACHE_NAME = 'mha-explorer-hub';
/** Keys of Cache Storage entries: a host that never resolves (RFC 2606), so no key is fetchable. */
const CACHE_KEY_BASE = 'https://hub-cache.invalid/';

const CONFIG_FILE = 'config.json';
const TOKENIZER_FILE = 'tokenizer.json';
const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
const WEIGHTS_FILE = 'model.safetensors';
const INDEX_FILE = 'model.safetensors.index.json';
/** Formats of weights the core does not read, and what a repository holding only them can do. */
const OTHER_WEIGHTS = /^(pytorch_model.*\.bin|tf_model\.h5|flax_model\.msgpack|model\.ckpt.*|.*\.onnx|.*\.gguf|.*\.pt|.*\.pth)$/;
/** Largest text file read (tokenizer.json of Llama 3 is 9 MB). */
const MAX_TEXT_BYTES = 64 << 20;
/** Largest safetensors header read (a header of 100 MB is what the safetensors format itself refuses). */
const MAX_HEADER_BYTES = 100_000_000;
const CHUNK_BYTES = 4 << 20;

/** A repository id: `owner/name` (or a canonical `name` such as `gpt2`); no `..`, no leading `.` or `-`. */
const REPO_PATTERN = /^(?:[A-Za-z0-9][\w.-]{0,95}\/)?[A-Za-z0-9][\w.-]{0,95}$/;
/** A revision: a branch, tag or commit (`refs/pr/1` too). */
const REVISION_PATTERN = /^[\w.][\w./-]{0,199}$/;
const COMMIT_PATTERN = /^[0-9a-f]{40}$/;

/** Node.js's environment variables ({} elsewhere). @returns {Record<string, string | undefined>} */
const environment = () => /** @type {{ process?: { env?: Record<string, string | undefined> } }} */ (/** @type {unknown} */ (globalThis)).process?.env ?? {};

/** @param {string} message */
const hubError = (message) => new MhaError('MODEL_FILE', message);
/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * @typedef {{ size: number, chunks: AsyncIterable<Uint8Array> }} ChunkSource
 * @typedef {{ read: () => Promise<unknown>, where: string, open?: () => Promise<ChunkSource>, planBytes?: number }} ModelFileEntry
 * @typedef {{ file: string, loaded: number, total: number }} HubProgress
 * @typedef {{ file: string, bytes: number, cached: boolean }} PlannedFile
 * @typedef {{ repo: string, revision: string, commit: string, endpoint: string, files: PlannedFile[], bytes: number, downloadBytes: number }} HubPlan
 * @typedef {{ revision?: string, endpoint?: string, cache?: boolean, cacheDir?: string, signal?: AbortSignal,
 *             onProgress?: (progress: HubProgress) => void, maxFileBytes?: number }} HubOptions
 * @typedef {{ rfilename: string, size?: number, lfs?: { size?: number } }} Sibling
 * @typedef {{ sha: string, files: Record<string, number | null> }} RepoInfo  size null: the API gave none
 */

/**
 * Whether a model argument names a Hub repository (`hf:owner/name`).
 * @param {unknown} value
 * @returns {value is string}
 */
export function isHubId(value) {
  return typeof value === 'string' && value.startsWith(HUB_PREFIX);
}

/**
 * The repository and revision of `hf:owner/name` (or `owner/name`); a revision may follow `@`.
 * @param {string} id
 * @param {string} [revision]  overrides one given after `@`
 * @returns {{ repo: string, revision: string }}
 */
export function parseHubId(id, revision) {
  if (typeof id !== 'string') throw new MhaError('INVALID_ARGUMENT', `expected a Hub repository id such as hf:openai-community/gpt2, got ${typeof id}`);
  let text = id.startsWith(HUB_PREFIX) ? id.slice(HUB_PREFIX.length) : id;
  let rev = 'main';
  const at = text.indexOf('@');
  if (at >= 0) {
    rev = text.slice(at + 1);
    text = text.slice(0, at);
  }
  if (revision !== undefined && revision !== null) {
    if (typeof revision !== 'string') throw new MhaError('INVALID_ARGUMENT', `revision: expected a branch, tag or commit, got ${typeof revision}`);
    rev = revision;
  }
  if (!REPO_PATTERN.test(text) || text.includes('..')) {
    throw new MhaError('INVALID_ARGUMENT', `${JSON.stringify(id)} is not a Hub repository id: expected owner/name (letters, digits, '-', '_', '.'), e.g. openai-community/gpt2`);
  }
  if (!REVISION_PATTERN.test(rev) || rev.includes('..')) {
    throw new MhaError('INVALID_ARGUMENT', `revision ${JSON.stringify(rev)}: expected a branch, tag or commit such as main`);
  }
  return { repo: text, revision: rev };
}

/**
 * The Hub's address: the option, else HF_ENDPOINT in Node.js (the convention of Hugging Face's
 * own clients), else https://huggingface.co; without a trailing '/'.
 * @param {unknown} [endpoint]
 * @returns {string}
 */
export function hubEndpoint(endpoint) {
  const env = isNode() ? environment().HF_ENDPOINT : undefined;
  const given = endpoint ?? (env || undefined) ?? HUB_ENDPOINT;
  let url;
  try {
    url = new URL(String(given));
  } catch {
    throw new MhaError('INVALID_ARGUMENT', `endpoint: expected an http(s) URL such as ${HUB_ENDPOINT}, got ${JSON.stringify(given)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new MhaError('INVALID_ARGUMENT', `endpoint: expected an http(s) URL such as ${HUB_ENDPOINT}, got ${url.href}`);
  }
  return url.href.replace(/\/+$/, '');
}

/** @param {string} repo */
const encodeRepo = (repo) => repo.split('/').map(encodeURIComponent).join('/');

/** @param {string} endpoint @param {string} repo @param {string} revision */
export const modelsApiUrl = (endpoint, repo, revision) => `${endpoint}/api/models/${encodeRepo(repo)}/revision/${encodeURIComponent(revision)}?blobs=true`;
/** @param {string} endpoint @param {string} repo @param {string} commit @param {string} file */
export const resolveUrl = (endpoint, repo, commit, file) => `${endpoint}/${encodeRepo(repo)}/resolve/${encodeURIComponent(commit)}/${encodeURIComponent(file)}`;

// ---------------------------------------------------------------------------------------------
// HTTP

/** fetch() causes that mean the connection went away under the request, not that it failed. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * A fetch() that failed: the signal's reason when aborted, else a message with fetch's cause
 * (refused, reset, DNS, TLS) and what that means here.
 * @param {unknown} error @param {string} url @param {AbortSignal | undefined} signal @param {string} what
 */
function networkFailure(error, url, signal, what) {
  if (signal?.aborted) return signal.reason;
  const reason = /** @type {{ cause?: { code?: string, message?: string } } | null} */ (error)?.cause;
  const cause = reason ? ` (${[reason.code, reason.message].filter(Boolean).join(': ')})` : '';
  return hubError(`${url}: ${what}: ${messageOf(error)}${cause}`);
}

/**
 * The message of an HTTP error from the Hub, by its status and X-Error-Code.
 * @param {Response} response @param {string} repo @param {string} revision @param {string} what  the file, or '' for the repository
 */
function statusError(response, repo, revision, what) {
  const code = response.headers.get('x-error-code') ?? '';
  const name = what ? `${what} of ${repo}` : repo;
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${response.url || 'the Hub'}`;
  const fetchThere = `download ${CONFIG_FILE}, ${WEIGHTS_FILE} and ${TOKENIZER_FILE} there and open the folder`;
  // the Hub answers an anonymous caller 401 RepoNotFound for a private repository and for one that is not there
  if (code === 'RepoNotFound' || (response.status === 404 && !what && code !== 'RevisionNotFound' && code !== 'EntryNotFound')) {
    return hubError(`no repository ${repo} on the Hub${response.status === 401 ? ', or it is private' : ''} (${status}): check the id (owner/name, as in the address of its page)`);
  }
  if (response.status === 401 || response.status === 403 || code === 'GatedRepo') {
    return hubError(`${repo} is ${code === 'GatedRepo' ? 'gated' : 'gated or private'} (${status}): the explorer sends no token, so it opens public repositories only; ` +
      `if you have access, accept its terms on the Hub, ${fetchThere}`);
  }
  if (response.status === 404) {
    if (code === 'RevisionNotFound') return hubError(`${repo} has no revision ${JSON.stringify(revision)} (${status})`);
    return hubError(`${name}: not found (${status})`);
  }
  return hubError(`${name}: ${status}`);
}

/**
 * GET a URL of the Hub, redirects followed; the response checked to be 2xx.
 * @param {string} url @param {AbortSignal | undefined} signal
 * @param {(response: Response) => Error} failed
 */
async function get(url, signal, failed) {
  signal?.throwIfAborted();
  /** @type {Response} */
  let response;
  try {
    response = await fetch(url, { signal, redirect: 'follow', credentials: 'omit' }).catch((error) => {
      // a kept-alive connection closed by the server just as the request went out: sent again once
      if (signal?.aborted || !RESET_CODES.has(error?.cause?.code)) throw error;
      return fetch(url, { signal, redirect: 'follow', credentials: 'omit' });
    });
  } catch (error) {
    throw networkFailure(error, url, signal, 'could not be fetched');
  }
  if (!response.ok) {
    response.body?.cancel().catch(() => {});
    throw failed(response);
  }
  return response;
}

/**
 * A response's body in chunks, counted: progress per chunk, the size checked against the one
 * the API gave (a body that ends early or runs long is an error naming both).
 * @param {Response} response @param {string} file @param {string} url @param {number | null} expected
 * @param {HubOptions} options
 * @returns {AsyncGenerator<Uint8Array>}
 */
async function* responseChunks(response, file, url, expected, { signal, onProgress, maxFileBytes = Infinity }) {
  const length = Number(response.headers.get('content-length') ?? NaN);
  const total = expected ?? (Number.isSafeInteger(length) ? length : 0);
  let loaded = 0;
  onProgress?.({ file, loaded, total });
  if (!response.body) throw hubError(`${url}: the response has no body`);
  const reader = response.body.getReader();
  let done = false;
  try {
    for (;;) {
      /** @type {ReadableStreamReadResult<Uint8Array>} */
      let part;
      try {
        part = await reader.read();
      } catch (error) {
        throw networkFailure(error, url, signal, `the download broke off after ${loaded} of ${total || '?'} bytes (open the model again to retry)`);
      }
      if (part.done) break;
      loaded += part.value.byteLength;
      if (loaded > (expected ?? maxFileBytes)) {
        throw hubError(`${url}: more than the ${expected ?? maxFileBytes} bytes ${expected === null ? 'loadModel takes (option maxFileBytes)' : 'the Hub listed for it'}`);
      }
      if (loaded < total) onProgress?.({ file, loaded, total });
      yield part.value;
    }
    done = true;
  } finally {
    if (!done) reader.cancel().catch(() => {});
  }
  if (expected !== null && loaded !== expected) {
    throw hubError(`${url}: the download ended after ${loaded} of the ${expected} bytes the Hub listed for it (the connection was cut); open the model again to retry`);
  }
  onProgress?.({ file, loaded, total: loaded });
}

/**
 * The repository's commit and files from the models API.
 * @param {string} endpoint @param {string} repo @param {string} revision @param {AbortSignal | undefined} signal
 * @returns {Promise<RepoInfo>}
 */
async function fetchRepoInfo(endpoint, repo, revision, signal) {
  const url = modelsApiUrl(endpoint, repo, revision);
  const response = await get(url, signal, (r) => statusError(r, repo, revision, ''));
  /** @type {unknown} */
  let info;
  try {
    info = await response.json();
  } catch (error) {
    throw networkFailure(error, url, signal, 'not the JSON of the models API');
  }
  const { sha, siblings } = /** @type {{ sha?: unknown, siblings?: unknown }} */ (info ?? {});
  if (typeof sha !== 'string' || !COMMIT_PATTERN.test(sha) || !Array.isArray(siblings)) {
    throw hubError(`${url}: expected the models API's { sha: commit, siblings: [{ rfilename, size }] }, got another answer (is ${endpoint} a Hub or a mirror of it?)`);
  }
  /** @type {Record<string, number | null>} */
  const files = {};
  for (const s of /** @type {Sibling[]} */ (siblings)) {
    if (!s || typeof s.rfilename !== 'string') continue;
    const size = s.lfs?.size ?? s.size;
    files[s.rfilename] = Number.isSafeInteger(size) && /** @type {number} */ (size) >= 0 ? /** @type {number} */ (size) : null;
  }
  return { sha, files };
}

// ---------------------------------------------------------------------------------------------
// The cache: one interface, two stores (Cache Storage in a page or worker, a folder in Node.js)

/**
 * @typedef {{
 *   getRef(repo: string, revision: string): Promise<string | null>,
 *   setRef(repo: string, revision: string, commit: string): Promise<void>,
 *   getInfo(repo: string, commit: string): Promise<RepoInfo | null>,
 *   setInfo(repo: string, commit: string, info: RepoInfo): Promise<void>,
 *   size(repo: string, commit: string, file: string): Promise<number | null>,
 *   write(repo: string, commit: string, file: string, chunks: AsyncIterable<Uint8Array>, size: number | null): Promise<void>,
 *   open(repo: string, commit: string, file: string): Promise<ChunkSource>,
 *   list(): Promise<CachedModel[]>,
 *   remove(repo: string): Promise<number>,
 *   where: string,
 * }} Store
 * @typedef {{ repo: string, commit: string, revisions: string[], files: Record<string, number>, bytes: number }} CachedModel
 */

/**
 * The folder the Hub's files are kept in, in Node.js: the option, else MHA_HUB_CACHE, else
 * $HF_HOME/mha-explorer (HF_HOME: ~/.cache/huggingface by default, as Hugging Face's clients).
 * @param {string} [cacheDir]
 */
export async function hubCacheDir(cacheDir) {
  const [path, os] = await Promise.all(['node:path', 'node:os'].map((n) => import(/* @vite-ignore */ n)));
  const env = environment();
  if (cacheDir) return path.resolve(cacheDir);
  if (env.MHA_HUB_CACHE) return path.resolve(env.MHA_HUB_CACHE);
  const hfHome = env.HF_HOME || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'huggingface');
  return path.join(hfHome, 'mha-explorer');
}

/** @param {string} repo */
const repoFolder = (repo) => `models--${repo.replaceAll('/', '--')}`;
/** @param {string} folder */
const repoOfFolder = (folder) => folder.slice('models--'.length).replaceAll('--', '/');

/**
 * A folder on disk (Node.js).
 * @param {string} root
 * @returns {Promise<Store>}
 */
async function diskStore(root) {
  const [fs, path] = /** @type {[any, any]} */ (await Promise.all(['node:fs/promises', 'node:path'].map((n) => import(/* @vite-ignore */ n))));
  /** @param {string} repo @param {...string} parts */
  const at = (repo, ...parts) => path.join(root, repoFolder(repo), ...parts);
  /** @param {string} file */
  const readText = async (file) => {
    try {
      return await fs.readFile(file, 'utf8');
    } catch {
      return null;
    }
  };
  /** @param {string} file @param {string} text */
  const writeText = async (file, text) => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(`${file}.incomplete`, text);
    await fs.rename(`${file}.incomplete`, file);
  };
  /** @type {Store} */
  const store = {
    where: root,
    async getRef(repo, revision) {
      if (COMMIT_PATTERN.test(revision)) return revision;
      const text = await readText(at(repo, 'refs', encodeURIComponent(revision)));
      return text && COMMIT_PATTERN.test(text.trim()) ? text.trim() : null;
    },
    async setRef(repo, revision, commit) {
      if (!COMMIT_PATTERN.test(revision)) await writeText(at(repo, 'refs', encodeURIComponent(revision)), commit);
    },
    async getInfo(repo, commit) {
      const text = await readText(at(repo, 'info', `${commit}.json`));
      try {
        return text ? JSON.parse(text) : null;
      } catch {
        return null;
      }
    },
    async setInfo(repo, commit, info) {
      await writeText(at(repo, 'info', `${commit}.json`), JSON.stringify(info));
    },
    async size(repo, commit, file) {
      try {
        return (await fs.stat(at(repo, 'snapshots', commit, file))).size;
      } catch {
        return null;
      }
    },
    async write(repo, commit, file, chunks) {
      const target = at(repo, 'snapshots', commit, file);
      await fs.mkdir(path.dirname(target), { recursive: true });
      const partial = `${target}.incomplete`;
      const handle = await fs.open(partial, 'w');
      let ok = false;
      try {
        for await (const chunk of chunks) await handle.write(chunk);
        ok = true;
      } finally {
        await handle.close();
        if (!ok) await fs.rm(partial, { force: true });
      }
      await fs.rename(partial, target);
    },
    async open(repo, commit, file) {
      const where = at(repo, 'snapshots', commit, file);
      const { size } = await fs.stat(where);
      async function* chunks() {
        const handle = await fs.open(where, 'r');
        try {
          for (;;) {
            const buffer = new Uint8Array(Math.min(CHUNK_BYTES, Math.max(size, 1)));
            const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
            if (bytesRead === 0) break;
            yield buffer.subarray(0, bytesRead);
          }
        } finally {
          await handle.close();
        }
      }
      return { size, chunks: chunks() };
    },
    async list() {
      /** @type {CachedModel[]} */
      const found = [];
      /** @type {string[]} */
      let folders = [];
      try {
        folders = (await fs.readdir(root)).filter((/** @type {string} */ f) => f.startsWith('models--'));
      } catch {
        return found;
      }
      for (const folder of folders.sort()) {
        const repo = repoOfFolder(folder);
        /** @type {string[]} */
        let commits = [];
        try {
          commits = await fs.readdir(path.join(root, folder, 'snapshots'));
        } catch { /* no files yet */ }
        /** @type {string[]} */
        let refs = [];
        try {
          refs = await fs.readdir(path.join(root, folder, 'refs'));
        } catch { /* none */ }
        for (const commit of commits) {
          /** @type {Record<string, number>} */
          const files = {};
          for (const file of await fs.readdir(path.join(root, folder, 'snapshots', commit))) {
            if (!file.endsWith('.incomplete')) files[file] = (await fs.stat(path.join(root, folder, 'snapshots', commit, file))).size;
          }
          const revisions = [];
          for (const ref of refs) if ((await readText(path.join(root, folder, 'refs', ref)))?.trim() === commit) revisions.push(decodeURIComponent(ref));
          found.push({ repo, commit, revisions, files, bytes: Object.values(files).reduce((a, b) => a + b, 0) });
        }
      }
      return found;
    },
    async remove(repo) {
      const listed = (await store.list()).filter((m) => m.repo === repo);
      await fs.rm(path.join(root, repoFolder(repo)), { recursive: true, force: true });
      return listed.reduce((sum, m) => sum + m.bytes, 0);
    },
  };
  return store;
}

/**
 * Cache Storage (a page or worker).
 * @param {Cache} cache
 * @returns {Store}
 */
function cacheStore(cache) {
  /** @param {string} repo @param {...string} parts */
  const key = (repo, ...parts) => `${CACHE_KEY_BASE}${encodeRepo(repo)}/${parts.map(encodeURIComponent).join('/')}`;
  /** @param {string} k */
  const text = async (k) => {
    const hit = await cache.match(k).catch(() => undefined);
    return hit ? hit.text() : null;
  };
  /** @type {Store} */
  const store = {
    where: `Cache Storage "${CACHE_NAME}"`,
    async getRef(repo, revision) {
      if (COMMIT_PATTERN.test(revision)) return revision;
      const commit = (await text(key(repo, 'refs', revision)))?.trim() ?? null;
      return commit && COMMIT_PATTERN.test(commit) ? commit : null;
    },
    async setRef(repo, revision, commit) {
      if (!COMMIT_PATTERN.test(revision)) await cache.put(key(repo, 'refs', revision), new Response(commit));
    },
    async getInfo(repo, commit) {
      const t = await text(key(repo, 'info', commit));
      try {
        return t ? JSON.parse(t) : null;
      } catch {
        return null;
      }
    },
    async setInfo(repo, commit, info) {
      await cache.put(key(repo, 'info', commit), new Response(JSON.stringify(info), { headers: { 'content-type': 'application/json' } }));
    },
    async size(repo, commit, file) {
      const hit = await cache.match(key(repo, 'snapshots', commit, file)).catch(() => undefined);
      if (!hit) return null;
      const size = Number(hit.headers.get('x-size') ?? NaN);
      hit.body?.cancel().catch(() => {});
      return Number.isSafeInteger(size) ? size : null;
    },
    async write(repo, commit, file, chunks, size) {
      // the body is streamed into the cache: a body that fails (cut, longer or shorter than the
      // listing says: responseChunks) fails the put, and nothing is kept
      const iterator = chunks[Symbol.asyncIterator]();
      let written = 0;
      /** @type {unknown} */
      let failure = null;
      const body = new ReadableStream({
        async pull(controller) {
          try {
            const { value, done } = await iterator.next();
            if (done) controller.close();
            else {
              written += value.byteLength;
              controller.enqueue(value);
            }
          } catch (error) {
            failure = error;
            controller.error(error);
          }
        },
        async cancel() {
          await iterator.return?.();
        },
      });
      const k = key(repo, 'snapshots', commit, file);
      // the put's own error says less than the body's (a cut connection, a size)
      /** @param {unknown} error */
      const rethrow = (error) => { throw failure ?? error; };
      if (size !== null) {
        // the size in a header of the entry, so that listing the cache reads no body
        await cache.put(k, new Response(body, { headers: { 'x-size': String(size) } })).catch(rethrow);
        return;
      }
      await cache.put(`${k}.incomplete`, new Response(body)).catch(rethrow);
      const kept = await cache.match(`${k}.incomplete`);
      if (!kept || !kept.body) throw hubError(`${file}: the browser's Cache Storage did not keep it`);
      await cache.put(k, new Response(kept.body, { headers: { 'x-size': String(written) } }));
      await cache.delete(`${k}.incomplete`).catch(() => {});
    },
    async open(repo, commit, file) {
      const hit = await cache.match(key(repo, 'snapshots', commit, file));
      if (!hit || !hit.body) throw hubError(`${file} of ${repo}: no longer in the browser's Cache Storage`);
      const size = Number(hit.headers.get('x-size') ?? 0);
      const body = hit.body;
      async function* chunks() {
        const reader = body.getReader();
        let done = false;
        try {
          for (;;) {
            const part = await reader.read();
            if (part.done) break;
            yield part.value;
          }
          done = true;
        } finally {
          if (!done) reader.cancel().catch(() => {});
        }
      }
      return { size, chunks: chunks() };
    },
    async list() {
      /** @type {Map<string, CachedModel>} */
      const byCommit = new Map();
      /** @type {Array<[string, string, string]>} */
      const refs = [];
      for (const request of await cache.keys()) {
        if (!request.url.startsWith(CACHE_KEY_BASE)) continue;
        const parts = request.url.slice(CACHE_KEY_BASE.length).split('/').map(decodeURIComponent);
        const kind = parts.length >= 3 ? parts.findIndex((p) => p === 'snapshots' || p === 'refs') : -1;
        if (kind < 1) continue;
        const repo = parts.slice(0, kind).join('/');
        if (parts[kind] === 'refs') {
          const hit = await cache.match(request);
          refs.push([repo, parts.slice(kind + 1).join('/'), (await hit?.text())?.trim() ?? '']);
          continue;
        }
        const [commit, file] = parts.slice(kind + 1);
        if (!commit || !file || file.endsWith('.incomplete')) continue;
        const hit = await cache.match(request);
        const size = Number(hit?.headers.get('x-size') ?? 0);
        hit?.body?.cancel().catch(() => {});
        const k = `${repo}@${commit}`;
        const entry = byCommit.get(k) ?? { repo, commit, revisions: [], files: {}, bytes: 0 };
        entry.files[file] = size;
        entry.bytes += size;
        byCommit.set(k, entry);
      }
      for (const [repo, revision, commit] of refs) byCommit.get(`${repo}@${commit}`)?.revisions.push(revision);
      return [...byCommit.values()].sort((a, b) => a.repo.localeCompare(b.repo));
    },
    async remove(repo) {
      let bytes = 0;
      const prefix = `${CACHE_KEY_BASE}${encodeRepo(repo)}/`;
      for (const request of await cache.keys()) {
        if (!request.url.startsWith(prefix)) continue;
        const rest = request.url.slice(prefix.length);
        if (!/^(refs|snapshots|info)\//.test(rest)) continue;  // another repository under this one's name
        if (rest.startsWith('snapshots/')) {
          const hit = await cache.match(request);
          bytes += Number(hit?.headers.get('x-size') ?? 0);
          hit?.body?.cancel().catch(() => {});
        }
        await cache.delete(request);
      }
      return bytes;
    },
  };
  return store;
}

/**
 * The store of this place: Cache Storage where there is one, a folder in Node.js; null when
 * caching is off or not possible (storage disabled).
 * @param {{ cache?: boolean, cacheDir?: string }} options
 * @returns {Promise<Store | null>}
 */
export async function openHubCache({ cache = true, cacheDir } = {}) {
  if (cache === false) return null;
  if (isNode()) return diskStore(await hubCacheDir(cacheDir));
  if (typeof caches !== 'object' || caches === null) return null;
  try {
    return cacheStore(await caches.open(CACHE_NAME));
  } catch {
    return null;
  }
}

/**
 * The models kept: repository, commit, the revisions that resolved to it, files and sizes.
 * @param {{ cacheDir?: string }} [options]
 */
export async function listCachedModels(options = {}) {
  const store = await openHubCache(options);
  return store ? store.list() : [];
}

/**
 * Deletes every kept file of a repository; gives the bytes freed.
 * @param {string} id  `hf:owner/name` or `owner/name`
 * @param {{ cacheDir?: string }} [options]
 */
export async function deleteCachedModel(id, options = {}) {
  const { repo } = parseHubId(id);
  const store = await openHubCache(options);
  return store ? store.remove(repo) : 0;
}

// ---------------------------------------------------------------------------------------------
// Which files, and opening them

/**
 * The files to fetch from a repository's listing: config.json, the weights (model.safetensors,
 * or the index of a sharded checkpoint), the tokenizer's files where there are.
 * @param {string} repo @param {RepoInfo} info
 */
function pickFiles(repo, info) {
  const names = Object.keys(info.files);
  if (!names.includes(CONFIG_FILE)) {
    throw hubError(`${repo} has no ${CONFIG_FILE} at its top level: it is not a transformers model in Hugging Face layout (its files: ${names.slice(0, 8).join(', ')}${names.length > 8 ? ', …' : ''})`);
  }
  const weights = names.includes(WEIGHTS_FILE) ? WEIGHTS_FILE : names.includes(INDEX_FILE) ? INDEX_FILE : null;
  if (!weights) {
    const other = names.filter((n) => OTHER_WEIGHTS.test(n));
    throw hubError(`${repo} has no ${WEIGHTS_FILE}${other.length ? ` (its weights are ${other.slice(0, 3).join(', ')}, which the explorer does not read: a pickle may run code, and it reads safetensors only)` : ''}: ` +
      'pick a repository with model.safetensors (many have a safetensors copy, e.g. under refs/pr/… from the Hub\'s conversion bot: give that as the revision), ' +
      'or convert it where your PyTorch is (model.save_pretrained(folder, safe_serialization=True)) and open the folder');
  }
  const optional = [TOKENIZER_FILE, TOKENIZER_CONFIG_FILE].filter((n) => names.includes(n));
  return { weights, optional };
}

/**
 * One safetensors file's header: the JSON and the bytes it takes (8 + its length).
 * @param {ChunkSource} source @param {string} file
 */
async function readHeader(source, file) {
  const iterator = source.chunks[Symbol.asyncIterator]();
  /** @type {Uint8Array} */
  let bytes = new Uint8Array(0);
  /** @param {number} n */
  const gather = async (n) => {
    while (bytes.byteLength < n) {
      const { value, done } = await iterator.next();
      if (done) throw hubError(`${file}: ends inside its safetensors header (${bytes.byteLength} bytes)`);
      const grown = new Uint8Array(bytes.byteLength + value.byteLength);
      grown.set(bytes);
      grown.set(value, bytes.byteLength);
      bytes = grown;
    }
  };
  try {
    await gather(8);
    const length = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
    if (length > MAX_HEADER_BYTES || (source.size && 8 + length > source.size)) {
      throw hubError(`${file}: its safetensors header says ${length} bytes, more than the file${length > MAX_HEADER_BYTES ? ' format allows' : ' holds'}`);
    }
    await gather(8 + length);
    /** @type {unknown} */
    let header;
    try {
      header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
    } catch (error) {
      throw hubError(`${file}: its safetensors header is not JSON (${messageOf(error)})`);
    }
    if (!header || typeof header !== 'object' || Array.isArray(header)) throw hubError(`${file}: its safetensors header is not a JSON object`);
    return { header: /** @type {Record<string, any>} */ (header), headerBytes: 8 + length };
  } finally {
    await iterator.return?.();
  }
}

/**
 * A source's chunks with its first `skip` bytes left out and the rest counted to `expected`.
 * @param {ChunkSource} source @param {number} skip @param {number} expected @param {string} file
 */
async function* dataOf(source, skip, expected, file) {
  let seen = 0;
  let given = 0;
  for await (const chunk of source.chunks) {
    const from = Math.max(0, Math.min(chunk.byteLength, skip - seen));
    seen += chunk.byteLength;
    if (from < chunk.byteLength) {
      given += chunk.byteLength - from;
      yield chunk.subarray(from);
    }
  }
  if (given !== expected) throw hubError(`${file}: ${given} bytes of data, its size says ${expected}`);
}

/**
 * The shards of a sharded checkpoint as one safetensors stream (see the top of this file).
 * @param {string[]} shards  in the order of the index's first mention
 * @param {(file: string) => Promise<ChunkSource>} open  a shard's bytes (opened twice: header, then data)
 * @param {Record<string, string>} weightMap  the index's tensor → shard
 * @returns {Promise<ChunkSource>}
 */
async function joinShards(shards, open, weightMap) {
  /** @type {Record<string, any>} */
  const joined = {};
  /** @type {Array<{ shard: string, headerBytes: number, dataBytes: number }>} */
  const parts = [];
  let base = 0;
  for (const shard of shards) {
    const source = await open(shard);
    const { header, headerBytes } = await readHeader(source, shard);
    const dataBytes = source.size - headerBytes;
    if (!source.size || dataBytes < 0) throw hubError(`${shard}: its size is not known or is less than its header`);
    for (const [name, entry] of Object.entries(header)) {
      if (name === '__metadata__') continue;
      const offsets = entry?.data_offsets;
      if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0 && o <= dataBytes) || offsets[0] > offsets[1]) {
        throw hubError(`${shard}: tensor '${name}': expected data_offsets [begin, end] within its ${dataBytes} bytes of data`);
      }
      if (name in joined) throw hubError(`${shard}: tensor '${name}' is in another shard too`);
      if (weightMap[name] !== undefined && weightMap[name] !== shard) throw hubError(`${INDEX_FILE}: says tensor '${name}' is in ${weightMap[name]}, it is in ${shard}`);
      joined[name] = { ...entry, data_offsets: [offsets[0] + base, offsets[1] + base] };
    }
    parts.push({ shard, headerBytes, dataBytes });
    base += dataBytes;
  }
  for (const [name, shard] of Object.entries(weightMap)) {
    if (!(name in joined)) throw hubError(`${INDEX_FILE}: lists tensor '${name}' in ${shard}, which has no such tensor`);
  }
  let text = JSON.stringify(joined);
  text += ' '.repeat((8 - ((text.length + 8) % 8)) % 8);  // the data 8-aligned, as safetensors writes it
  const headerText = new TextEncoder().encode(text);
  const prefix = new Uint8Array(8 + headerText.byteLength);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(headerText.byteLength), true);
  prefix.set(headerText, 8);
  async function* chunks() {
    yield prefix;
    for (const { shard, headerBytes, dataBytes } of parts) yield* dataOf(await open(shard), headerBytes, dataBytes, shard);
  }
  return { size: prefix.byteLength + base, chunks: chunks() };
}

/** @param {ChunkSource} source */
async function gatherBytes(source) {
  const bytes = new Uint8Array(source.size);
  let at = 0;
  for await (const chunk of source.chunks) {
    if (at + chunk.byteLength > bytes.byteLength) throw hubError('a file grew while it was read');
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes.subarray(0, at);
}

/**
 * What opening a Hub repository will fetch: its commit, each file with its size and whether it
 * is kept already. Asks the models API unless the revision and its listing are kept.
 * @param {string} id  `hf:owner/name` or `owner/name`
 * @param {HubOptions} [options]
 * @returns {Promise<HubPlan>}
 */
export async function hubModelInfo(id, options = {}) {
  return (await resolveRepo(id, options)).plan;
}

/**
 * @param {string} id @param {HubOptions} options
 */
async function resolveRepo(id, options) {
  const { repo, revision } = parseHubId(id, options.revision);
  const endpoint = hubEndpoint(options.endpoint);
  const { signal } = options;
  const store = await openHubCache(options).catch(() => null);
  let commit = store ? await store.getRef(repo, revision).catch(() => null) : null;
  let info = store && commit ? await store.getInfo(repo, commit).catch(() => null) : null;
  let fromApi = false;
  if (!info) {
    try {
      info = await fetchRepoInfo(endpoint, repo, revision, signal);
    } catch (error) {
      if (error instanceof MhaError && /could not be fetched/.test(error.message)) {
        throw hubError(`${error.message}; ${repo} is not in this ${isNode() ? 'machine\'s' : 'browser\'s'} cache (${store?.where ?? 'caching is off'}), so it cannot be opened offline`);
      }
      throw error;
    }
    commit = info.sha;
    fromApi = true;
  }
  const sha = /** @type {string} */ (commit);
  const picked = pickFiles(repo, info);
  /** @param {string} file */
  const sizeOf = (file) => info?.files[file] ?? null;
  /** @param {string} file */
  const cachedSize = async (file) => (store ? store.size(repo, sha, file).catch(() => null) : null);
  /** @param {string} file */
  const isCached = async (file) => {
    const kept = await cachedSize(file);
    return kept !== null && (sizeOf(file) === null || kept === sizeOf(file));
  };
  const plan = { repo, revision, commit: sha, endpoint, files: /** @type {PlannedFile[]} */ ([]), bytes: 0, downloadBytes: 0 };
  /** @param {string} file */
  const addToPlan = async (file) => {
    const bytes = sizeOf(file) ?? 0;
    const cached = await isCached(file);
    plan.files.push({ file, bytes, cached });
    plan.bytes += bytes;
    if (!cached) plan.downloadBytes += bytes;
  };
  // a sharded checkpoint's shards are named by its index, read only when it opens: until then
  // the listing's safetensors files stand for them, so that the plan's size is the download's
  const listedShards = picked.weights === INDEX_FILE ? Object.keys(info.files).filter((f) => /^[\w.-]+\.safetensors$/.test(f)).sort() : [];
  for (const file of [CONFIG_FILE, picked.weights, ...listedShards, ...picked.optional]) await addToPlan(file);
  return { repo, revision, endpoint, store, info, commit: sha, picked, fromApi, plan, sizeOf, isCached };
}

/**
 * A Hub repository's files for loadModel: entries by name as models.js reads them, the
 * weights' entry with planBytes (the sizes the API gave, for the memory plan before any of
 * them is fetched), and the plan. Files are fetched when read, into the cache first where there
 * is one.
 * @param {string} id
 * @param {HubOptions} options
 * @returns {Promise<{ files: Map<string, ModelFileEntry>, plan: HubPlan }>}
 */
export async function hubFiles(id, options) {
  const { repo, revision, endpoint, store, info, commit, picked, fromApi, plan, sizeOf, isCached } = await resolveRepo(id, options);
  const { signal } = options;
  const maxFileBytes = options.maxFileBytes ?? Infinity;
  for (const { file, bytes } of plan.files) {
    const limit = file === WEIGHTS_FILE ? maxFileBytes : MAX_TEXT_BYTES;
    if (bytes > limit) throw new MhaError('TOO_LARGE', `${file} of ${repo}: ${bytes} bytes (the Hub's listing), more than the ${limit} loadModel takes${file === WEIGHTS_FILE ? ' (option maxFileBytes)' : ''}`);
  }
  if (store && fromApi) {
    await store.setInfo(repo, commit, info).catch(() => {});
    await store.setRef(repo, revision, commit).catch(() => {});
  }

  /**
   * A file's bytes as a stream: from the cache, fetched into it first if it is not there; or,
   * without a cache, from the network as it arrives.
   * @param {string} file
   * @returns {Promise<ChunkSource>}
   */
  const open = async (file) => {
    signal?.throwIfAborted();
    const expected = sizeOf(file);
    const url = resolveUrl(endpoint, repo, commit, file);
    const limit = file.endsWith('.json') ? MAX_TEXT_BYTES : maxFileBytes;
    if (store && await isCached(file)) return store.open(repo, commit, file);
    const response = await get(url, signal, (r) => statusError(r, repo, revision, file));
    const chunks = responseChunks(response, file, url, expected, { ...options, maxFileBytes: limit });
    if (!store) return { size: expected ?? 0, chunks };
    try {
      await store.write(repo, commit, file, chunks, expected);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof MhaError) throw error;
      // the store refused (quota, storage cleared): the file from the network instead
      const again = await get(url, signal, (r) => statusError(r, repo, revision, file));
      return { size: expected ?? 0, chunks: responseChunks(again, file, url, expected, { ...options, maxFileBytes: limit }) };
    }
    return store.open(repo, commit, file);
  };
  /** @param {string} file */
  const where = (file) => `${resolveUrl(endpoint, repo, commit, file)}`;
  /** @param {string} file */
  const readText = async (file) => {
    const source = await open(file);
    const bytes = await gatherBytes(source.size ? source : { size: MAX_TEXT_BYTES, chunks: source.chunks });
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw hubError(`${where(file)}: is not UTF-8 text`);
    }
  };

  /** @type {Map<string, ModelFileEntry>} */
  const files = new Map();
  const config = await readText(CONFIG_FILE);
  files.set(CONFIG_FILE, { read: async () => config, where: where(CONFIG_FILE) });
  if (picked.weights === WEIGHTS_FILE) {
    files.set(WEIGHTS_FILE, { read: () => { throw hubError('read the weights as a stream'); }, where: where(WEIGHTS_FILE), open: () => open(WEIGHTS_FILE), planBytes: sizeOf(WEIGHTS_FILE) ?? 0 });
  } else {
    const indexText = await readText(INDEX_FILE);
    /** @type {any} */
    let index;
    try {
      index = JSON.parse(indexText);
    } catch (error) {
      throw hubError(`${where(INDEX_FILE)}: not valid JSON (${messageOf(error)})`);
    }
    const weightMap = index?.weight_map;
    if (!weightMap || typeof weightMap !== 'object' || Object.values(weightMap).some((v) => typeof v !== 'string')) {
      throw hubError(`${where(INDEX_FILE)}: expected { "weight_map": { tensor: shard file } }`);
    }
    const shards = [...new Set(/** @type {string[]} */ (Object.values(weightMap)))];
    for (const shard of shards) {
      if (!/^[\w.-]+\.safetensors$/.test(shard)) throw hubError(`${where(INDEX_FILE)}: names ${JSON.stringify(shard)} as a shard; expected a .safetensors file beside it`);
      if (!(shard in info.files)) throw hubError(`${where(INDEX_FILE)}: names ${shard}, which ${repo} does not have`);
      if ((sizeOf(shard) ?? 0) > maxFileBytes) throw new MhaError('TOO_LARGE', `${shard} of ${repo}: ${sizeOf(shard)} bytes, more than the ${maxFileBytes} loadModel takes (option maxFileBytes)`);
    }
    // the plan lists the shards the index names after it (in place of the listing's safetensors files)
    plan.files = plan.files.filter((f) => !f.file.endsWith('.safetensors'));
    const at = plan.files.findIndex((f) => f.file === INDEX_FILE);
    const shardPlan = [];
    for (const shard of shards) shardPlan.push({ file: shard, bytes: sizeOf(shard) ?? 0, cached: await isCached(shard) });
    plan.files.splice(at + 1, 0, ...shardPlan);
    plan.bytes = plan.files.reduce((sum, f) => sum + f.bytes, 0);
    plan.downloadBytes = plan.files.reduce((sum, f) => sum + (f.cached ? 0 : f.bytes), 0);
    const planBytes = shards.reduce((sum, s) => sum + (sizeOf(s) ?? 0), 0);
    files.set(WEIGHTS_FILE, {
      read: () => { throw hubError('read the weights as a stream'); },
      where: `${where(INDEX_FILE)} (${shards.length} shards)`,
      // every shard is fetched (into the cache) before the headers are read: the joined header needs them all
      open: async () => {
        if (store) for (const shard of shards) await open(shard);  // opened lazily: nothing is read
        return joinShards(shards, open, weightMap);
      },
      planBytes,
    });
  }
  for (const file of picked.optional) files.set(file, { read: () => readText(file), where: where(file) });
  return { files, plan };
}
