// Line charts on canvas (the train view's loss and head scores by step).

/**
 * A cleared chart with its frame, the value labels at the top and bottom of the y axis and, when
 * given, the last step; returns the context, the frame's x range and the maps from step and from
 * a 0..1 fraction of the y range to pixels.
 * @param {HTMLCanvasElement} canvas
 * @param {string} topLabel
 * @param {string} bottomLabel
 * @param {number} [maxStep]
 */
export function chartFrame(canvas, topLabel, bottomLabel, maxStep) {
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  const { width, height } = canvas;
  const left = 30;
  const top = 5;
  const w = width - left - 5;
  const h = height - 25;
  ctx.clearRect(0, 0, width, height);
  ctx.strokeStyle = '#999';
  ctx.setLineDash([]);
  ctx.strokeRect(left, top, w, h);
  ctx.fillStyle = '#333';
  ctx.font = '11px sans-serif';
  ctx.fillText(topLabel, 4, top + 9);
  ctx.fillText(bottomLabel, 4, top + h);
  if (maxStep !== undefined) ctx.fillText(`step ${maxStep}`, width - 70, height - 6);
  return {
    ctx,
    xRange: [left, left + w],
    x: (/** @type {number} */ step) => left + (maxStep !== undefined && maxStep > 0 ? (w * step) / maxStep : w),
    y: (/** @type {number} */ fraction) => top + h * (1 - Math.max(0, Math.min(1, fraction))),
  };
}

/**
 * One line through points, already in pixels.
 * @param {CanvasRenderingContext2D} ctx
 * @param {[number, number][]} points
 * @param {string} colour
 * @param {number} [lineWidth]
 */
export function polyline(ctx, points, colour, lineWidth = 1) {
  ctx.strokeStyle = colour;
  ctx.lineWidth = lineWidth;
  ctx.beginPath();
  points.forEach(([px, py], i) => (i === 0 ? ctx.moveTo(px, py) : ctx.lineTo(px, py)));
  ctx.stroke();
  ctx.lineWidth = 1;
}
