// `js`: multi-head attention in plain JavaScript, as a careful programmer would write it:
// Float32Array buffers allocated once, i-k-j loop order (unit stride in the inner loop), the
// in-projection fused over q, k and v, one head's scores at a time.

// out[M, N] = a[M, K] . w[N, K]^T + bias, via wT (K, N) so the inner loop runs along N.
function linear(out, a, wT, bias, M, N, K) {
  for (let i = 0; i < M; i++) {
    const o = i * N;
    for (let j = 0; j < N; j++) out[o + j] = bias[j];
    for (let k = 0; k < K; k++) {
      const aik = a[i * K + k];
      const w = k * N;
      for (let j = 0; j < N; j++) out[o + j] += aik * wT[w + j];
    }
  }
}

function transpose(w, rows, cols) {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = w[r * cols + c];
  return t;
}

export function available() {
  return true;
}

export async function create({ L, E, H }, weights) {
  const hd = E / H;
  const scale = 1 / Math.sqrt(hd);
  // Weights transposed once, at load time (as a JS implementation would keep them).
  const wInT = transpose(weights.in_proj_weight, 3 * E, E);  // (E, 3E)
  const wOutT = transpose(weights['out_proj.weight'], E, E);
  const qkv = new Float32Array(L * 3 * E);
  const concat = new Float32Array(L * E);
  const scores = new Float32Array(L);  // one query row at a time
  return {
    run(x) {
      linear(qkv, x, wInT, weights.in_proj_bias, L, 3 * E, E);
      const ld = 3 * E;
      concat.fill(0);
      for (let h = 0; h < H; h++) {
        const qOff = h * hd, kOff = E + h * hd, vOff = 2 * E + h * hd;
        for (let i = 0; i < L; i++) {
          // 1. scores and max
          let max = -Infinity;
          for (let j = 0; j < L; j++) {
            let s = 0;
            for (let d = 0; d < hd; d++) s += qkv[i * ld + qOff + d] * qkv[j * ld + kOff + d];
            s *= scale;
            scores[j] = s;
            if (s > max) max = s;
          }
          // 2. exp and sum
          let sum = 0;
          for (let j = 0; j < L; j++) {
            const e = Math.exp(scores[j] - max);
            scores[j] = e;
            sum += e;
          }
          // 3. normalise and weighted sum of V
          const inv = 1 / sum;
          const o = i * E + h * hd;
          for (let j = 0; j < L; j++) {
            const p = scores[j] * inv;
            const v = j * ld + vOff;
            for (let d = 0; d < hd; d++) concat[o + d] += p * qkv[v + d];
          }
        }
      }
      const out = new Float32Array(L * E);
      linear(out, concat, wOutT, weights['out_proj.bias'], L, E, E);
      return out;
    },
    dispose() {},
  };
}
