// `npm start`: install what is missing (Debian packages as root, npm dependencies), copy the
// page's browser packages into web/vendor/, build the WebAssembly cores (the wasm preset:
// make rebuilds what changed), convert the pretrained model into web/models/use-lite/ when it
// is missing (scripts/build/build-model.js), and serve the page at http://localhost:8080/ (PORT to
// change it).
// Node.js built-ins only: it runs before `npm ci` on a fresh clone.

import { build, BuildError } from '../build/build.js';
import { buildModel } from '../build/build-model.js';
import { serveForever } from '../serve/serve.js';
import { setup, SetupError } from '../build/setup.js';

try {
  setup('start');
  build(['wasm']);
} catch (error) {
  if (!(error instanceof SetupError || error instanceof BuildError)) throw error;
  console.error(error instanceof BuildError ? `[build] ${error.message}` : error.message);
  process.exit(1);
}
try {
  buildModel();
} catch (error) {
  // The page works without it: only the pretrained source needs these files.
  console.error(`[model] ${error.message}; the pretrained model will not load until \`node scripts/build/build-model.js\` succeeds`);
}
await serveForever();
