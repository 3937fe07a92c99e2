// web/embed.html: one <mha-explorer> filling the frame, its attributes taken from the query
// string (same names as the element's attributes). Unknown parameters are ignored.
import { MhaExplorerElement } from './mha-explorer.js';

const params = new URLSearchParams(location.search);
const explorer = document.createElement('mha-explorer');
for (const name of MhaExplorerElement.observedAttributes) {
  const value = params.get(name);
  if (value !== null) explorer.setAttribute(name, value);
}
document.body.append(explorer);
