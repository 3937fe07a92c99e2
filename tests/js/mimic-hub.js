// A local stand-in for the Hugging Face Hub, for the tests (no test reaches the real Hub): the
// committed golden model folders served as repositories, with the Hub's layout and manners.
//
//   GET /api/models/{repo}/revision/{revision}[?blobs=true]   the models API: { id, sha, siblings:
//       [{ rfilename, blobId, size?, lfs? }] } (sizes with blobs=true, as the Hub gives them)
//   GET /{repo}/resolve/{revision}/{file}   small files from here; safetensors (LFS files on the
//       Hub) as a 302 to a second origin, the storage host, that serves the bytes
//   CORS as the Hub sends it: the Hub's origin reflects the page's Origin and exposes its headers
//   (X-Repo-Commit, X-Error-Code, …); the storage host allows any origin.
//   401 with X-Error-Code GatedRepo for a gated repository, 404 RepoNotFound / RevisionNotFound /
//   EntryNotFound for what is not there.
//
// Repositories (REPOS): GPT-2, BERT and Llama (grouped-query) golden folders under Hub-like ids, a sharded copy of the
// GPT-2 (two shards and model.safetensors.index.json, made here from its model.safetensors), a
// gated one, one with pytorch_model.bin only, one whose weights' connection drops midway, and a
// slow one (the weights in small parts far apart: progress and abort), and one whose
// tokenizer.json backtracks without end on a run of a's (slowTokenizer). `requests` lists every
// request, `{ origin: 'hub' | 'storage', path }`, in order.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';

export const MODELS_DIR = fileURLToPath(new URL('../golden/models/', import.meta.url));
const FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];

/** @param {string} name */
const read = (name, file) => fs.readFileSync(path.join(MODELS_DIR, name, file));

/** A safetensors file's header and data. */
function parseSafetensors(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')), data: bytes.subarray(8 + n) };
}

/** A safetensors file from a header's entries and their data. */
function writeSafetensors(entries, metadata) {
  const header = metadata ? { __metadata__: metadata } : {};
  const parts = [];
  let at = 0;
  for (const [name, { dtype, shape, bytes }] of entries) {
    header[name] = { dtype, shape, data_offsets: [at, at + bytes.length] };
    parts.push(bytes);
    at += bytes.length;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - ((text.length + 8) % 8)) % 8);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  return Buffer.concat([prefix, Buffer.from(text), ...parts]);
}

/**
 * A model.safetensors split in `count` shards, as save_pretrained writes a sharded checkpoint:
 * model-0000i-of-0000n.safetensors and model.safetensors.index.json.
 */
export function shard(bytes, count = 2) {
  const { header, data } = parseSafetensors(bytes);
  const names = Object.keys(header).filter((n) => n !== '__metadata__').reverse();  // another order than the file's
  const files = {};
  const weightMap = {};
  const per = Math.ceil(names.length / count);
  for (let i = 0; i < count; ++i) {
    const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.safetensors`;
    const mine = names.slice(i * per, (i + 1) * per);
    files[file] = writeSafetensors(mine.map((n) => {
      const [b, e] = header[n].data_offsets;
      weightMap[n] = file;
      return [n, { dtype: header[n].dtype, shape: header[n].shape, bytes: data.subarray(b, e) }];
    }), { format: 'pt' });
  }
  files['model.safetensors.index.json'] = Buffer.from(JSON.stringify({ metadata: { total_size: data.length }, weight_map: weightMap }, null, 2));
  return files;
}

/**
 * A tokenizer.json as a stranger may publish it: the given one with a Split pre-tokenizer
 * (a+)+b put first. On a run of n a's with no b a backtracking regular expression tries about
 * 2^n ways (40 a's: hours); texts without long runs of a's tokenize as before.
 * @param {Buffer | string} text  tokenizer.json
 */
export function slowTokenizer(text) {
  const json = JSON.parse(String(text));
  json.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [{ type: 'Split', pattern: { Regex: '(a+)+b' }, behavior: 'Isolated', invert: false }, json.pre_tokenizer],
  };
  return Buffer.from(JSON.stringify(json));
}

/** @param {string} folder  a golden model */
const folderFiles = (folder) => Object.fromEntries(FILES.filter((f) => fs.existsSync(path.join(MODELS_DIR, folder, f))).map((f) => [f, read(folder, f)]));

/** The repositories: id → { files, gated?, fault? }. */
export function makeRepos() {
  const gpt2 = folderFiles('gpt2-trained');
  const { 'model.safetensors': weights, ...gpt2Rest } = gpt2;
  return {
    'openai-community/gpt2': { files: gpt2 },
    'google-bert/bert-base-uncased': { files: folderFiles('bert-mlm') },
    'distilbert/distilgpt2': { files: folderFiles('gpt2-tied') },
    'HuggingFaceTB/SmolLM2-135M': { files: folderFiles('llama-gqa') },
    'test/gpt2-sharded': { files: { ...gpt2Rest, ...shard(weights, 2) } },
    'test/gated': { files: gpt2, gated: true },
    'test/pytorch-only': { files: { 'config.json': gpt2['config.json'], 'pytorch_model.bin': Buffer.alloc(1024), 'tokenizer.json': gpt2['tokenizer.json'] } },
    'test/gpt2-dropped': { files: gpt2, fault: 'drop' },
    'test/gpt2-slow': { files: gpt2, fault: 'slow' },
    'test/slow-tokenizer': { files: { ...gpt2, 'tokenizer.json': slowTokenizer(gpt2['tokenizer.json']) } },
    // the listing says GPT-2 small's size (its files are the small GPT-2's): a link to it asks first
    'test/large-listing': { files: gpt2, listed: { 'model.safetensors': 548105171 } },
  };
}

/** A commit id for a repository's files: 40 hex digits. */
const commitOf = (repo, files) => {
  const h = crypto.createHash('sha1').update(repo);
  for (const [name, bytes] of Object.entries(files).sort()) h.update(name).update(bytes);
  return h.digest('hex');
};
const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
const isLfs = (file) => /\.(safetensors|bin)$/.test(file);

const EXPOSED = 'X-Repo-Commit,X-Request-Id,X-Error-Code,X-Error-Message,X-Total-Count,ETag,Link,Accept-Ranges,Content-Range,X-Linked-Size,X-Linked-ETag,X-Xet-Hash';

/** Writes bytes in parts of `part` bytes, `delay` ms apart; `stopAt`: the connection is destroyed there. */
function sendSlowly(res, bytes, { part = 16384, delay = 2, stopAt = Infinity } = {}) {
  let at = 0;
  const next = () => {
    if (res.destroyed) return;
    if (at >= stopAt) {
      res.destroy();
      return;
    }
    if (at >= bytes.length) {
      res.end();
      return;
    }
    const end = Math.min(at + part, bytes.length, stopAt);
    res.write(bytes.subarray(at, end));
    at = end;
    setTimeout(next, delay);
  };
  next();
}

/**
 * Starts the Hub and its storage host on two ports of 127.0.0.1.
 * @param {{ repos?: ReturnType<typeof makeRepos> }} [options]
 */
export async function startMimicHub({ repos = makeRepos() } = {}) {
  const requests = [];
  const commits = Object.fromEntries(Object.entries(repos).map(([id, r]) => [id, commitOf(id, r.files)]));
  /** blob key → bytes and how to send them, for the storage host */
  const blobs = new Map();
  let storageBase = '';

  const hubCors = (req) => ({
    'access-control-allow-origin': req.headers.origin ?? '*',
    'access-control-expose-headers': EXPOSED,
    vary: 'Origin',
  });
  const fail = (req, res, status, code, message) => {
    res.writeHead(status, { ...hubCors(req), 'content-type': 'application/json', 'x-error-code': code, 'x-error-message': message });
    res.end(JSON.stringify({ error: message }));
  };

  const hub = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const pathname = decodeURIComponent(url.pathname);
    requests.push({ origin: 'hub', path: `${url.pathname}${url.search}` });
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...hubCors(req), 'access-control-allow-methods': 'GET,HEAD', 'access-control-allow-headers': '*' }).end();
      return;
    }
    const api = /^\/api\/models\/(.+)\/revision\/([^/]+)$/.exec(pathname);
    const resolve = api ? null : /^\/(.+)\/resolve\/([^/]+)\/([^/]+)$/.exec(pathname);
    const repoId = api?.[1] ?? resolve?.[1];
    const revision = api?.[2] ?? resolve?.[2];
    const repo = repos[repoId];
    if (!api && !resolve) return fail(req, res, 404, 'EntryNotFound', 'Not found');
    // the Hub answers 401 for a repository it will not show an anonymous caller, gated or not there
    if (!repo) return fail(req, res, 404, 'RepoNotFound', 'Repository not found');
    if (repo.gated) return fail(req, res, 401, 'GatedRepo', `Access to model ${repoId} is restricted. You must have access to it and be authenticated to access it. Please log in.`);
    const commit = commits[repoId];
    if (revision !== 'main' && revision !== commit) return fail(req, res, 404, 'RevisionNotFound', `Invalid rev id: ${revision}`);
    if (api) {
      const blobsWanted = url.searchParams.get('blobs') === 'true';
      const siblings = Object.entries(repo.files).map(([file, bytes]) => {
        const size = repo.listed?.[file] ?? bytes.length;
        return {
          rfilename: file,
          ...(blobsWanted ? {
            blobId: crypto.createHash('sha1').update(bytes).digest('hex'),
            size,
            ...(isLfs(file) ? { lfs: { sha256: sha256(bytes), size, pointerSize: 134 } } : {}),
          } : {}),
        };
      });
      const body = JSON.stringify({ _id: commit.slice(0, 24), id: repoId, modelId: repoId, private: false, gated: false, sha: commit, siblings, library_name: 'transformers' });
      res.writeHead(200, { ...hubCors(req), 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const file = resolve[3];
    const bytes = repo.files[file];
    if (!bytes) return fail(req, res, 404, 'EntryNotFound', `${file} does not exist on "${revision}"`);
    const common = { ...hubCors(req), 'x-repo-commit': commit, etag: `"${crypto.createHash('sha1').update(bytes).digest('hex')}"` };
    if (isLfs(file)) {
      const key = `${sha256(bytes)}-${repoId.replace('/', '_')}`;
      blobs.set(key, { bytes, fault: repo.fault });
      res.writeHead(302, { ...common, 'x-linked-size': bytes.length, 'x-linked-etag': `"${sha256(bytes)}"`, location: `${storageBase}/repos/${key}?X-Amz-Expires=3600` });
      res.end();
      return;
    }
    res.writeHead(200, { ...common, 'content-type': 'application/octet-stream', 'content-length': bytes.length });
    sendSlowly(res, bytes);
  });

  const storage = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    requests.push({ origin: 'storage', path: url.pathname });
    const blob = blobs.get(url.pathname.replace(/^\/repos\//, ''));
    const cors = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Content-Length,ETag' };
    if (!blob) {
      res.writeHead(403, { ...cors, 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    res.writeHead(200, { ...cors, 'content-type': 'application/octet-stream', 'content-length': blob.bytes.length, 'accept-ranges': 'bytes' });
    if (blob.fault === 'drop') sendSlowly(res, blob.bytes, { stopAt: blob.bytes.length >> 1 });
    else if (blob.fault === 'slow') sendSlowly(res, blob.bytes, { part: 4096, delay: 40 });
    else sendSlowly(res, blob.bytes);
  });

  for (const server of [hub, storage]) await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${hub.address().port}`;
  storageBase = `http://127.0.0.1:${storage.address().port}`;
  return {
    endpoint,
    storage: storageBase,
    repos,
    commits,
    requests,
    close: () => Promise.all([hub, storage].map((s) => new Promise((resolve) => { s.closeAllConnections(); s.close(resolve); }))),
  };
}

// `node tests/js/mimic-hub.js`: serve it until stopped (for trying the page against it by hand)
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const hub = await startMimicHub();
  console.log(`mimic Hub at ${hub.endpoint} (storage ${hub.storage}); repositories: ${Object.keys(hub.repos).join(', ')}`);
}
