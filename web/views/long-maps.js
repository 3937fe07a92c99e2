// Maps of long texts (more tokens than the 128 of a lesson's longest source): cells smaller than
// 3 CSS px, down to where the map fits its box, drawn max-pooled where a map has more cells than
// its picture has device pixels; the cell under the pointer, the tables and the exports keep
// every weight. heatmap.js draws with it once a page has called useLongMaps (the lesson page
// does; an embed's first paint has no long text and does without it).

/** Maps with more tokens than this may have cells under 3 CSS px. */
export const LONG_MAP = 128;

/**
 * The least cell, in CSS px, of a map of `cols` tokens in `room` CSS px: 3, or for a long text
 * what fits the room (at least a quarter of a pixel).
 * @param {number} cols @param {number} room
 */
export function leastCell(cols, room) {
  return cols > LONG_MAP ? Math.max(0.25, Math.min(3, room / cols)) : 3;
}

/**
 * A (rows × cols) map max-pooled to (R × C): cell (a, b) the largest of rows [⌊a·rows/R⌋,
 * ⌊(a+1)·rows/R⌋) and columns [⌊b·cols/C⌋, ⌊(b+1)·cols/C⌋), the rule of the core's PoolMaps
 * (cpp/include/mha/models.h), so that a sharp weight stays visible in a picture smaller than
 * its map (a mean would fade it by the block's size). A NaN (a cell not computed) wins.
 * @param {ArrayLike<number>} values  row-major
 * @param {number} rows @param {number} cols @param {number} R @param {number} C
 * @returns {Float32Array}  (R × C), row-major
 */
export function maxPool(values, rows, cols, R, C) {
  const out = new Float32Array(R * C).fill(-Infinity);
  for (let i = 0; i < rows; i += 1) {
    // the block of row i: the largest a with ⌊a·rows/R⌋ <= i
    const a = Math.floor(((i + 1) * R - 1) / rows);
    for (let j = 0; j < cols; j += 1) {
      const k = a * C + Math.floor(((j + 1) * C - 1) / cols);
      out[k] = Math.max(out[k], values[i * cols + j]);
    }
  }
  return out;
}

/**
 * What drawCells paints into w × h device pixels: the map itself, or max-pooled to at most a
 * cell a pixel.
 * @param {ArrayLike<number>} values @param {number} rows @param {number} cols @param {number} w @param {number} h
 * @returns {[ArrayLike<number>, number, number]}  values, rows, cols
 */
export function cellsFor(values, rows, cols, w, h) {
  if (cols <= w && rows <= h) return [values, rows, cols];
  const R = Math.max(1, Math.min(rows, Math.floor(h))), C = Math.max(1, Math.min(cols, Math.floor(w)));
  return [maxPool(values, rows, cols, R, C), R, C];
}
