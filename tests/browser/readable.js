// What a reader can and cannot read, measured in the page (page functions for page.evaluate).
//
// clippedText: what a reader cannot see at the window's width: whether the document is
// wider than the window, and every text that is cut. A text is cut when its element clips it
// (overflow hidden or clip, or an ellipsis) and its content is wider than its box, or when its
// box runs past the visible box of an ancestor that clips (overflow other than visible) without
// that ancestor scrolling sideways to it, or when it is wider than the box of the ancestor that
// scrolls it (a caption as wide as its table, a line of numbers: never seen whole). Not counted:
// what is hidden from view (display none, hidden, the visually-hidden class or a 1 px box that
// clips, as KaTeX's MathML is), and code in a <pre>, which keeps its lines and scrolls in its
// box as code listings do. Shadow roots are walked.

/**
 * A page function: `page.evaluate(clippedText, { within: '#explorer' })` resolves to
 * { innerWidth, scrollWidth, clipped: [{ what, text, why }] }; `skip`: a selector of parts left
 * out (checked elsewhere).
 */
export function clippedText({ within = 'body', skip = null } = {}) {
  const clipped = [];
  const describe = (e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${typeof e.className === 'string' && e.className ? `.${e.className.trim().split(/\s+/).join('.')}` : ''}`;
  const ownText = (e) => [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
  const hiddenFromView = (e) => {
    for (let p = e; p; p = p.parentElement || p.getRootNode()?.host) {
      if (p.classList?.contains('visually-hidden') || p.hidden) return true;
      // the visually-hidden idiom under another name (KaTeX's MathML): a 1 px box that clips
      if (p.nodeType === 1 && p.getBoundingClientRect().width <= 1 && /hidden|clip/.test(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  // an ancestor across shadow roots
  const up = (e) => e.parentElement || (e.getRootNode() instanceof ShadowRoot ? e.getRootNode().host : null);
  const visit = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (skip && e.closest(skip)) continue;
      if (e.shadowRoot) visit(e.shadowRoot);
      const text = ownText(e);
      // code keeps its lines and scrolls in its own box, as code listings do
      if (!text || !e.getClientRects().length || hiddenFromView(e) || e.closest('pre')) continue;
      const style = getComputedStyle(e);
      if (style.visibility === 'hidden') continue;
      // the text's own extent (its line boxes), not its element's, which may be wider
      const range = document.createRange();
      range.selectNodeContents(e);
      const box = [...e.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim()).reduce((acc, n) => {
        range.selectNodeContents(n);
        const r = range.getBoundingClientRect();
        return r.width ? { left: Math.min(acc.left, r.left), right: Math.max(acc.right, r.right), width: Math.max(acc.right, r.right) - Math.min(acc.left, r.left) } : acc;
      }, { left: Infinity, right: -Infinity, width: 0 });
      if (!(box.width > 0)) continue;
      if ((/hidden|clip/.test(style.overflowX) || style.textOverflow === 'ellipsis') && e.scrollWidth > e.clientWidth + 1) {
        clipped.push({ what: describe(e), text: text.slice(0, 60), why: `its text is ${e.scrollWidth} px wide in a ${e.clientWidth} px box that clips it` });
        continue;
      }
      // the part of the text's box that can be brought into view: inside an ancestor that
      // scrolls sideways, as far as that ancestor's own box
      let { left: from, right: to } = box;
      for (let p = up(e); p && p !== document.documentElement; p = up(p)) {
        const overflow = getComputedStyle(p).overflowX;
        if (overflow === 'visible') continue;
        const r = p.getBoundingClientRect();
        const left = r.left + p.clientLeft;
        const right = left + p.clientWidth;
        if (/auto|scroll/.test(overflow) && p.scrollWidth > p.clientWidth) {
          if (to - from > p.clientWidth + 1) {
            clipped.push({ what: describe(e), text: text.slice(0, 60), why: `it is ${Math.round(to - from)} px wide in ${describe(p)}, which scrolls it in a ${p.clientWidth} px box: never seen whole` });
            break;
          }
          from = Math.max(from, left);
          to = Math.min(to, right);
        } else if (to > right + 2 || from < left - 2) {
          // (2 px: clientWidth is whole px while the boxes inside keep their fractions)
          clipped.push({ what: describe(e), text: text.slice(0, 60), why: `it runs from ${Math.round(from)} to ${Math.round(to)} px, past ${describe(p)} (${Math.round(left)} to ${Math.round(right)} px, overflow ${overflow}, not scrolling)` });
          break;
        }
      }
    }
  };
  const scope = document.querySelector(within);
  if (scope) visit(scope);
  return { innerWidth, scrollWidth: document.documentElement.scrollWidth, clipped };
}

/**
 * A page function (the explorer page): every token of the map on canvas `map` (an id) is named
 * on its axes, or is named when its cell is pointed at. The map's drawn labels (drawnOn) are
 * read; for each token whose row or column label is not drawn, a pointer moves to its diagonal
 * cell (pointermove, as the mouse sends it), and once redrawn (at once, or within three frames)
 * the labels drawn must include that row and column, and the element `said` (a selector) must
 * name the token. Resolves to { tokens, rowsDrawn, colsDrawn, pointedAt,
 * unnamed: [{ token, why }] }.
 */
export async function tokensNamed({ map, said }) {
  const { drawnOn } = await import('/views/heatmap.js');
  const canvas = document.getElementById(map);
  const text = () => document.querySelector(said)?.textContent ?? '';
  const frames = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0))));
  const first = drawnOn(canvas);
  const L = first.rows;
  const labels = first.labels;
  const rowsDrawn = new Set(labels.rows);
  const colsDrawn = new Set(labels.cols);
  const tokens = window.explorer.shown().sentence.tokens.map((t) => t.text);
  const unnamed = [];
  let pointedAt = 0;
  const point = (type, i, pointerType = 'mouse') => {
    const { layout } = drawnOn(canvas);
    const r = canvas.getBoundingClientRect();
    const scale = r.width / (parseFloat(canvas.style.width) || r.width);
    const at = (layout.left + (i + 0.5) * layout.cell) * scale;
    const y = (layout.top + (i + 0.5) * layout.cell) * scale;
    canvas.dispatchEvent(new PointerEvent(type, { clientX: r.left + at, clientY: r.top + y, pointerType, bubbles: true }));
  };
  for (let i = 0; i < L; i += 1) {
    if (rowsDrawn.has(i) && colsDrawn.has(i)) continue;
    pointedAt += 1;
    point('pointermove', i);
    const token = tokens[i];
    const problems = () => {
      const now = drawnOn(canvas).labels;
      const why = [];
      if (!now.rows.includes(i)) why.push('its row label is not drawn');
      if (!now.cols.includes(i)) why.push('its column label is not drawn');
      if (!text().includes(`“${token}”`)) why.push(`${said} says "${text()}"`);
      return why;
    };
    // drawn at once, or at the next frames
    let why = problems();
    for (let k = 0; k < 3 && why.length; k += 1) {
      await frames();
      why = problems();
    }
    if (why.length) unnamed.push({ token: `${i}: ${token}`, why: why.join('; ') });
  }
  point('pointerleave', 0);
  await frames();
  return { tokens: L, rowsDrawn: rowsDrawn.size, colsDrawn: colsDrawn.size, fontSize: labels.fontSize, cell: first.layout.cell, pointedAt, unnamed };
}
