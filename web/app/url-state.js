// The explorer's state in the page's URL, so that a link opens the same view:
//
//   ?source=random&seed=3&sentence=The%20dog%20ran.&head=5&compare=5,2&layer=1&view=compare
//
// source (designed | random | file | trained | … as the page offers), seed (random), layer,
// sentence (an example or typed text), head (the selected head, from 1), compare (heads A and B,
// from 1), view (single | grid | compare | wo: the part of the explorer in view). Each change of
// the explorer's state (its 'change' events) is a new history entry, so back and forward walk
// through them; a parameter that is bad or hostile gives a message and its default.
//
// It drives the page's own controls (the radios, the seed box, the sentence buttons and form,
// the head tabs, the pair selects), so the page's controller needs no other entry points.

const VIEWS = { single: '#head-panel', grid: '#small-multiples', compare: '#compare-view', wo: '#wo-view' };
const KNOWN = ['source', 'seed', 'layer', 'sentence', 'head', 'compare', 'view'];
const MAX_SENTENCE = 600;

const $ = (selector) => document.querySelector(selector);

/** Integer n with min <= n <= max from a parameter, or null. */
function integer(text, min, max) {
  if (!/^\d{1,10}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

/** What is shown now, as URL parameters (defaults left out). */
export function stateToParams(explorer, view) {
  const params = new URLSearchParams();
  const { source, sentence } = explorer;
  if (!source || !sentence) return params;
  if (source.id !== 'designed') params.set('source', source.id);
  if (source.id === 'random') params.set('seed', $('#seed').value);
  if (source.numLayers > 1) params.set('layer', String(source.layer));
  if (sentence.example !== 0) params.set('sentence', sentence.text);
  if (explorer.selectedHead !== 0) params.set('head', String(explorer.selectedHead + 1));
  if (explorer.pair.a !== 0 || explorer.pair.b !== 1) params.set('compare', `${explorer.pair.a + 1},${explorer.pair.b + 1}`);
  if (view) params.set('view', view);
  return params;
}

/** Resolves once nothing is being computed. */
function idle(explorer) {
  if (explorer.busy === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (explorer.busy !== 0) return;
      explorer.removeEventListener('change', check);
      resolve();
    };
    explorer.addEventListener('change', check);
  });
}

/**
 * Keep the explorer's state and the URL in step. Call once the page is ready.
 * @param {import('./explorer-state.js').ExplorerState} explorer
 */
export async function keepStateInUrl(explorer) {
  const note = document.createElement('p');
  note.id = 'url-note';
  note.className = 'error';
  note.setAttribute('role', 'alert');
  note.hidden = true;
  $('#status').after(note);

  let applying = false;
  let view = null;

  /** Show the state the URL names; returns the messages for parameters not used. */
  async function apply(params) {
    const problems = [];
    const bad = (name, expected) => problems.push(`${name}=${JSON.stringify(params.get(name).slice(0, 80))} is not ${expected}; showing the default`);
    for (const name of new Set(params.keys())) if (!KNOWN.includes(name)) problems.push(`the parameter ${JSON.stringify(name.slice(0, 40))} is not one this page reads`);

    // source, with its seed or layer
    const offered = [...document.querySelectorAll('input[name="source"]')].map((r) => r.value);
    let sourceId = params.get('source') ?? 'designed';
    if (!offered.includes(sourceId)) { bad('source', `one of ${offered.join(', ')}`); sourceId = 'designed'; }
    if (sourceId === 'file') { problems.push('a weights file cannot be opened from a link (load it again); showing the designed heads'); sourceId = 'designed'; }
    if (sourceId === 'random') {
      const seed = params.has('seed') ? integer(params.get('seed'), 0, 2147483647) : 0;
      if (seed === null) bad('seed', 'a whole number from 0 to 2147483647');
      if (explorer.source.id !== 'random' || $('#seed').value !== String(seed ?? 0)) {
        $('#seed').value = String(seed ?? 0);
        $('#seed').dispatchEvent(new Event('change'));
      }
    } else if (explorer.source.id !== sourceId) {
      const radio = $(`input[name="source"][value="${sourceId}"]`);
      radio.checked = true;
      radio.dispatchEvent(new Event('change'));
    }
    await idle(explorer);
    if (explorer.source.id !== sourceId) problems.push(`the ${sourceId} heads could not be loaded: ${$('#source-error').textContent}`);
    if (explorer.source.numLayers > 1) {
      const layer = params.has('layer') ? integer(params.get('layer'), 0, explorer.source.numLayers - 1) : 0;
      if (layer === null) bad('layer', `a layer from 0 to ${explorer.source.numLayers - 1}`);
      if (explorer.source.layer !== (layer ?? 0)) {
        $('#layer').value = String(layer ?? 0);
        $('#layer').dispatchEvent(new Event('change'));
        await idle(explorer);
      }
    } else if (params.has('layer') && params.get('layer') !== '0') {
      bad('layer', 'a layer of these heads (they have one)');
    }

    // the sentence: one of the examples, or typed text
    const examples = [...document.querySelectorAll('#sentence-list [role="radio"]')];
    const text = params.get('sentence');
    if (text !== null && text.length > MAX_SENTENCE) bad('sentence', `a sentence of at most ${MAX_SENTENCE} characters`);
    const wanted = text !== null && text.length <= MAX_SENTENCE && text.trim() ? text : null;
    const example = examples.findIndex((b) => b.textContent === (wanted ?? examples[0]?.textContent));
    if (example >= 0 && explorer.sentence.example !== example) {
      examples[example].click();
    } else if (example < 0 && explorer.sentence.text !== wanted) {
      $('#free-text').value = wanted;
      $('#free-text-form').requestSubmit();
    }
    await idle(explorer);
    if (wanted && explorer.sentence.text !== wanted) {
      problems.push(`the sentence could not be shown: ${$('#free-text-error').textContent || $('#source-error').textContent}`);
      if (explorer.sentence.example !== 0) examples[0]?.click();
      await idle(explorer);
    }

    // heads
    const H = explorer.numHeads;
    const head = params.has('head') ? integer(params.get('head'), 1, H) : 1;
    if (head === null) bad('head', `a head from 1 to ${H}`);
    if (explorer.selectedHead !== (head ?? 1) - 1) $(`#head-tab-${(head ?? 1) - 1}`).click();
    let pair = [1, 2];
    if (params.has('compare')) {
      const parts = params.get('compare').split(',');
      const heads = parts.map((p) => integer(p, 1, H));
      if (parts.length !== 2 || heads.includes(null)) bad('compare', `two heads from 1 to ${H}, e.g. compare=1,2`);
      else pair = heads;
    }
    if (explorer.pair.a !== pair[0] - 1 || explorer.pair.b !== pair[1] - 1) {
      for (const [id, h] of [['#pair-a', pair[0]], ['#pair-b', pair[1]]]) {
        $(id).value = String(h - 1);
        $(id).dispatchEvent(new Event('change'));
      }
    }

    // the part of the explorer in view
    view = params.get('view');
    if (view !== null && !VIEWS[view]) { bad('view', `one of ${Object.keys(VIEWS).join(', ')}`); view = null; }
    if (view) $(VIEWS[view]).closest('.panel').scrollIntoView({ block: 'start' });
    return problems;
  }

  async function applyUrl() {
    applying = true;
    try {
      let problems;
      try {
        problems = await apply(new URLSearchParams(location.search));
      } catch (error) {
        problems = [`it could not be followed (${error.message}); showing what it reached`];
      }
      note.textContent = problems.length ? `This link: ${problems.join('; ')}.` : '';
      note.hidden = problems.length === 0;
    } finally {
      applying = false;
    }
    // the URL then says what is shown (the defaults where the link was bad)
    const url = urlOf(stateToParams(explorer, view));
    if (url !== location.pathname + location.search) history.replaceState(null, '', url);
    explorer.dispatchEvent(new CustomEvent('url-applied'));
  }

  const urlOf = (params) => `${location.pathname}${params.size || [...params].length ? `?${params}` : ''}${location.hash}`;
  let pending = 0;
  const record = () => {
    if (applying || explorer.busy !== 0) return;
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      if (applying || explorer.busy !== 0) return;
      const url = urlOf(stateToParams(explorer, view));
      if (url !== location.pathname + location.search + location.hash) history.pushState(null, '', url);
    });
  };
  explorer.addEventListener('change', (event) => {
    if (event.detail.keys.some((k) => ['source', 'sentence', 'selectedHead', 'pair', 'result', 'busy'].includes(k))) record();
  });
  // the part of the explorer a reader works in becomes the view
  for (const [name, selector] of Object.entries(VIEWS)) {
    $(selector).closest('.panel').addEventListener('pointerdown', () => { view = name; record(); });
    $(selector).closest('.panel').addEventListener('keydown', () => { if (view !== name) { view = name; record(); } });
  }
  window.addEventListener('popstate', () => { applyUrl(); });
  await applyUrl();
}
