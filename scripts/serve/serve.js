// A small static file server for web/ (Node.js built-ins only), with the MIME types a browser
// needs to stream-compile WebAssembly (application/wasm) and to run ES modules.
//
//   node scripts/serve/serve.js [ROOT]          serves ROOT (default web/) at http://localhost:$PORT/ (8080)
//
// As a module: `startServer({ root, port, host, headers })` resolves to `{ server, url, close }`;
// `port: 0` picks a free port (for tests); `headers` are added to every response (e.g. a CSP).
// Run as a script (and by `npm start`) it sends SERVE_HEADERS: the page cross-origin isolated.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream',
  '.bin': 'application/octet-stream',
};

export function mimeType(file) {
  return MIME_TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream';
}

/** The file a URL path names inside root, or null when it would leave root. */
function resolveInside(root, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const file = path.resolve(root, `.${path.posix.normalize(`/${decoded}`)}`);
  return file === root || file.startsWith(root + path.sep) ? file : null;
}

function handler(root, extraHeaders) {
  return (req, res) => {
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...extraHeaders, ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, 'Method not allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    const urlPath = (req.url || '/').split(/[?#]/)[0];
    let file = resolveInside(root, urlPath);
    if (!file) {
      send(400, 'Bad request\n');
      return;
    }
    fs.stat(file, (error, stat) => {
      if (!error && stat.isDirectory()) {
        if (!urlPath.endsWith('/')) {
          send(301, '', { Location: `${urlPath}/` });
          return;
        }
        file = path.join(file, 'index.html');
        stat = fs.existsSync(file) ? fs.statSync(file) : null;
      }
      if (error || !stat || !stat.isFile()) {
        send(404, `Not found: ${urlPath}\n`);
        return;
      }
      res.writeHead(200, {
        'Content-Type': mimeType(file),
        'Content-Length': stat.size,
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        ...extraHeaders,
      });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      fs.createReadStream(file)
        .on('error', () => res.destroy())
        .pipe(res);
    });
  };
}

/** Serve `root` over HTTP. Resolves once listening. */
export function startServer({ root = path.join(repoRoot, 'web'), port = 8080, host, headers = {} } = {}) {
  const absoluteRoot = path.resolve(root);
  const server = http.createServer(handler(absoluteRoot, headers));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const onListening = () => {
      server.off('error', reject);
      const address = server.address();
      const url = `http://localhost:${address.port}/`;
      resolve({ server, url, port: address.port, close: () => new Promise((done) => server.close(done)) });
    };
    if (host) server.listen(port, host, onListening);
    else server.listen(port, onListening);
  });
}

/**
 * What `npm start` sends with every response. The page is cross-origin isolated (COOP and COEP:
 * SharedArrayBuffer exists, so the cores and the models run on their pthreads modules); every
 * file may be read from any origin (CORS for fetches and modules, CORP for what a
 * cross-origin-isolated page on another origin loads without CORS), as a CDN serving the
 * package does, so that a course page elsewhere can load the element from here.
 */
export const SERVE_HEADERS = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'cross-origin',
  'Access-Control-Allow-Origin': '*',
});

/** PORT from the environment, checked. */
export function portFromEnv(env = process.env) {
  if (env.PORT === undefined || env.PORT === '') return 8080;
  const port = Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer from 0 to 65535, got ${JSON.stringify(env.PORT)}`);
  }
  return port;
}

/**
 * Start serving and keep the process alive; prints the URL. Used by `npm start`, with
 * SERVE_HEADERS on every response: the page is cross-origin isolated (threads), and a course
 * page on another local port can load the element from here.
 */
export async function serveForever(root = path.join(repoRoot, 'web')) {
  let port;
  try {
    port = portFromEnv();
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  try {
    const { url } = await startServer({ root, port, host: process.env.HOST || undefined, headers: SERVE_HEADERS });
    console.log(`Serving ${path.relative(process.cwd(), root) || '.'} at ${url}  (Ctrl+C to stop; PORT=… to change the port)`);
  } catch (error) {
    if (error.code === 'EADDRINUSE') {
      console.error(`Port ${port} is already in use. Start on another port with: PORT=8081 npm start`);
    } else {
      console.error(`Could not serve on port ${port}: ${error.message}`);
    }
    process.exit(1);
  }
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await serveForever(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
}
