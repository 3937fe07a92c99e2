// A small HTTP server for the model tests: serves tests/golden/models/<name>/<file> at
// /models/<name>/<file>, each body in chunks of 16 KiB a few milliseconds apart (so that a
// streamed download has several parts), and lets a test answer a file its own way.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODELS_DIR = fileURLToPath(new URL('../golden/models/', import.meta.url));

const TYPES = { '.json': 'application/json', '.safetensors': 'application/octet-stream' };

/**
 * Starts the server. `answer(file, req, res)` may answer a request itself (return true) or
 * leave it to the folder (false). `requests` lists the paths asked for, in order.
 * @param {(file: string, req: http.IncomingMessage, res: http.ServerResponse) => boolean} [answer]
 */
export async function serveModels(answer = () => false) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    requests.push(pathname);
    const file = path.posix.basename(pathname);
    if (answer(file, req, res)) return;
    const match = /^\/models\/([\w-]+)\/([\w.-]+)$/.exec(pathname);
    const where = match && path.join(MODELS_DIR, match[1], match[2]);
    if (!where || !fs.existsSync(where)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const bytes = fs.readFileSync(where);
    res.writeHead(200, { 'content-type': TYPES[path.extname(where)] ?? 'application/octet-stream', 'content-length': bytes.length });
    sendInChunks(res, bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    requests,
    /** The folder URL of a golden model, without the trailing slash. */
    url: (name) => `${base}/models/${name}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** Writes bytes in 16 KiB parts, 2 ms apart, then ends. */
export function sendInChunks(res, bytes, { end = true } = {}) {
  let at = 0;
  const next = () => {
    if (res.destroyed) return;
    if (at >= bytes.length) {
      if (end) res.end();
      return;
    }
    res.write(bytes.subarray(at, at + 16384));
    at += 16384;
    setTimeout(next, 2);
  };
  next();
}
