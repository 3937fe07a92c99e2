// Training kernels: forward and backward of each layer of the decoder, plain loops (and Eigen
// for the matrix products). Outputs first, then inputs, then sizes; every backward comment
// quotes the forward line it inverts. Backward kernels accumulate (+=) into their gradients,
// so a tensor read by two layers (the residual stream) sums both contributions.
//
// Sizes: B batch, T positions, C channels, NH heads, hs = C / NH head size, OC / IC output /
// input channels of a linear layer, N = B * T rows.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mha::train::kernels {

template <typename Real>
using RowMatrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Real>
using RowVector = Eigen::Matrix<Real, 1, Eigen::Dynamic>;

// out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :]
// out (B, T, C), tokens (B, T), wte (V, C), wpe (context, C)
template <typename Real>
void encoder_forward(Real* out, const int* tokens, const Real* wte, const Real* wpe, int B, int T,
                     int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      Real* out_bt = out + (static_cast<size_t>(b) * T + t) * C;
      const Real* wte_ix = wte + static_cast<size_t>(tokens[b * T + t]) * C;
      const Real* wpe_t = wpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) out_bt[i] = wte_ix[i] + wpe_t[i];
    }
  }
}

template <typename Real>
void encoder_backward(Real* dwte, Real* dwpe, const Real* dout, const int* tokens, int B, int T,
                      int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const Real* dout_bt = dout + (static_cast<size_t>(b) * T + t) * C;
      Real* dwte_ix = dwte + static_cast<size_t>(tokens[b * T + t]) * C;
      Real* dwpe_t = dwpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) {
        // out_bt[i] = wte_ix[i] + wpe_t[i];
        dwte_ix[i] += dout_bt[i];
        dwpe_t[i] += dout_bt[i];
      }
    }
  }
}

// out[n, :] = (in[n, :] - mean) * rstd * weight + bias, rstd = 1 / sqrt(var + 1e-5) (biased var)
// out, in (N, C); mean, rstd (N) kept for backward
template <typename Real>
void layernorm_forward(Real* out, Real* mean, Real* rstd, const Real* in, const Real* weight,
                       const Real* bias, int N, int C) {
  const Real eps = Real(1e-5);
  for (int n = 0; n < N; ++n) {
    const Real* x = in + static_cast<size_t>(n) * C;
    Real m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    Real v = 0;
    for (int i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    v /= C;
    Real s = Real(1) / std::sqrt(v + eps);
    Real* out_n = out + static_cast<size_t>(n) * C;
    for (int i = 0; i < C; ++i) out_n[i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[n] = m;
    rstd[n] = s;
  }
}

template <typename Real>
void layernorm_backward(Real* din, Real* dweight, Real* dbias, const Real* dout, const Real* in,
                        const Real* weight, const Real* mean, const Real* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const Real* dout_n = dout + static_cast<size_t>(n) * C;
    const Real* x = in + static_cast<size_t>(n) * C;
    Real* din_n = din + static_cast<size_t>(n) * C;
    const Real m = mean[n], s = rstd[n];
    // norm = (x[i] - m) * s; out_n[i] = norm * weight[i] + bias[i]
    Real dnorm_mean = 0, dnorm_norm_mean = 0;
    for (int i = 0; i < C; ++i) {
      Real norm = (x[i] - m) * s;
      Real dnorm = weight[i] * dout_n[i];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    for (int i = 0; i < C; ++i) {
      Real norm = (x[i] - m) * s;
      Real dnorm = weight[i] * dout_n[i];
      dbias[i] += dout_n[i];
      dweight[i] += norm * dout_n[i];
      // norm depends on x[i] directly and through m and s:
      // d norm_j / d x_i = s * (delta_ij - 1/C - norm_j norm_i / C)
      din_n[i] += s * (dnorm - dnorm_mean - norm * dnorm_norm_mean);
    }
  }
}

// out[N, OC] = in[N, IC] . weight[OC, IC]^T + bias[OC]   (bias may be null)
template <typename Real>
void linear_forward(Real* out, const Real* in, const Real* weight, const Real* bias, int N, int OC,
                    int IC) {
  Eigen::Map<RowMatrix<Real>> out_m(out, N, OC);
  Eigen::Map<const RowMatrix<Real>> in_m(in, N, IC);
  Eigen::Map<const RowMatrix<Real>> weight_m(weight, OC, IC);
  out_m.noalias() = in_m * weight_m.transpose();
  if (bias) out_m.rowwise() += Eigen::Map<const RowVector<Real>>(bias, OC);
}

template <typename Real>
void linear_backward(Real* din, Real* dweight, Real* dbias, const Real* dout, const Real* in,
                     const Real* weight, int N, int OC, int IC) {
  Eigen::Map<const RowMatrix<Real>> dout_m(dout, N, OC);
  Eigen::Map<const RowMatrix<Real>> in_m(in, N, IC);
  Eigen::Map<const RowMatrix<Real>> weight_m(weight, OC, IC);
  // out = in . weight^T + bias
  Eigen::Map<RowMatrix<Real>>(din, N, IC).noalias() += dout_m * weight_m;
  Eigen::Map<RowMatrix<Real>>(dweight, OC, IC).noalias() += dout_m.transpose() * in_m;
  if (dbias) Eigen::Map<RowVector<Real>>(dbias, OC) += dout_m.colwise().sum();
}

// Causal multi-head attention on a packed qkv (N, 3C): q, k, v of head h at columns
// h*hs, C + h*hs, 2C + h*hs.
//   att[b, h, t, t2] = softmax_{t2 <= t}(q_t . k_t2 / sqrt(hs))     (B, NH, T, T), 0 above t
//   out[b, t, h*hs + i] = sum_{t2 <= t} att[b, h, t, t2] v_t2[i]    (B, T, C)
template <typename Real>
void attention_forward(Real* out, Real* att, const Real* qkv, int B, int T, int C, int NH) {
  const int C3 = 3 * C;
  const int hs = C / NH;
  const Real scale = Real(1) / std::sqrt(static_cast<Real>(hs));
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      for (int t = 0; t < T; ++t) {
        const Real* q_t = qkv + (static_cast<size_t>(b) * T + t) * C3 + h * hs;
        Real* att_bth = att + ((static_cast<size_t>(b) * NH + h) * T + t) * T;
        // pass 1: scores and their max
        Real maxval = -std::numeric_limits<Real>::infinity();
        for (int t2 = 0; t2 <= t; ++t2) {
          const Real* k_t2 = qkv + (static_cast<size_t>(b) * T + t2) * C3 + C + h * hs;
          Real score = 0;
          for (int i = 0; i < hs; ++i) score += q_t[i] * k_t2[i];
          score *= scale;
          att_bth[t2] = score;
          maxval = std::max(maxval, score);
        }
        // pass 2: exp and sum
        Real sum = 0;
        for (int t2 = 0; t2 <= t; ++t2) {
          att_bth[t2] = std::exp(att_bth[t2] - maxval);
          sum += att_bth[t2];
        }
        // pass 3: normalise; the future is zero
        const Real inv_sum = Real(1) / sum;
        for (int t2 = 0; t2 < T; ++t2) att_bth[t2] = t2 <= t ? att_bth[t2] * inv_sum : Real(0);
        // pass 4: weighted sum of the values
        Real* out_bth = out + (static_cast<size_t>(b) * T + t) * C + h * hs;
        for (int i = 0; i < hs; ++i) out_bth[i] = 0;
        for (int t2 = 0; t2 <= t; ++t2) {
          const Real* v_t2 = qkv + (static_cast<size_t>(b) * T + t2) * C3 + 2 * C + h * hs;
          for (int i = 0; i < hs; ++i) out_bth[i] += att_bth[t2] * v_t2[i];
        }
      }
    }
  }
}

// datt_row is scratch of T floats.
template <typename Real>
void attention_backward(Real* dqkv, Real* datt_row, const Real* dout, const Real* qkv,
                        const Real* att, int B, int T, int C, int NH) {
  const int C3 = 3 * C;
  const int hs = C / NH;
  const Real scale = Real(1) / std::sqrt(static_cast<Real>(hs));
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      for (int t = 0; t < T; ++t) {
        const Real* att_bth = att + ((static_cast<size_t>(b) * NH + h) * T + t) * T;
        const Real* dout_bth = dout + (static_cast<size_t>(b) * T + t) * C + h * hs;
        const Real* q_t = qkv + (static_cast<size_t>(b) * T + t) * C3 + h * hs;
        Real* dq_t = dqkv + (static_cast<size_t>(b) * T + t) * C3 + h * hs;
        // pass 4: out_bth[i] += att_bth[t2] * v_t2[i]
        for (int t2 = 0; t2 <= t; ++t2) {
          const Real* v_t2 = qkv + (static_cast<size_t>(b) * T + t2) * C3 + 2 * C + h * hs;
          Real* dv_t2 = dqkv + (static_cast<size_t>(b) * T + t2) * C3 + 2 * C + h * hs;
          Real datt = 0;
          for (int i = 0; i < hs; ++i) {
            datt += v_t2[i] * dout_bth[i];
            dv_t2[i] += att_bth[t2] * dout_bth[i];
          }
          datt_row[t2] = datt;
        }
        // passes 2-3: att_bth[t2] = exp(score_t2 - max) / sum  =>
        // dscore_t2 = att_t2 * (datt_t2 - sum_t3 att_t3 datt_t3)
        Real weighted = 0;
        for (int t2 = 0; t2 <= t; ++t2) weighted += att_bth[t2] * datt_row[t2];
        // pass 1: score = (q_t . k_t2) * scale
        for (int t2 = 0; t2 <= t; ++t2) {
          const Real dscore = att_bth[t2] * (datt_row[t2] - weighted) * scale;
          const Real* k_t2 = qkv + (static_cast<size_t>(b) * T + t2) * C3 + C + h * hs;
          Real* dk_t2 = dqkv + (static_cast<size_t>(b) * T + t2) * C3 + C + h * hs;
          for (int i = 0; i < hs; ++i) {
            dq_t[i] += k_t2[i] * dscore;
            dk_t2[i] += q_t[i] * dscore;
          }
        }
      }
    }
  }
}

// out[i] = 0.5 * x * (1 + erf(x / sqrt(2)))   (nn.GELU, exact)
template <typename Real>
void gelu_forward(Real* out, const Real* in, size_t n) {
  const Real inv_sqrt2 = Real(0.70710678118654752440);
  for (size_t i = 0; i < n; ++i) out[i] = Real(0.5) * in[i] * (Real(1) + std::erf(in[i] * inv_sqrt2));
}

template <typename Real>
void gelu_backward(Real* din, const Real* in, const Real* dout, size_t n) {
  const Real inv_sqrt2 = Real(0.70710678118654752440);
  const Real inv_sqrt_2pi = Real(0.39894228040143267794);
  for (size_t i = 0; i < n; ++i) {
    const Real x = in[i];
    // out = 0.5 x (1 + erf(x / sqrt 2)) => dout/dx = Phi(x) + x phi(x)
    const Real cdf = Real(0.5) * (Real(1) + std::erf(x * inv_sqrt2));
    const Real pdf = inv_sqrt_2pi * std::exp(Real(-0.5) * x * x);
    din[i] += (cdf + x * pdf) * dout[i];
  }
}

// probs[n, :] = softmax(logits[n, :]); returns the summed -log probs[n, target[n]] over
// targets >= 0. logits, probs (N, V).
template <typename Real>
Real softmax_crossentropy_forward(Real* probs, const Real* logits, const int* targets, int N, int V) {
  Real loss = 0;
  for (int n = 0; n < N; ++n) {
    const Real* logits_n = logits + static_cast<size_t>(n) * V;
    Real* probs_n = probs + static_cast<size_t>(n) * V;
    Real maxval = logits_n[0];
    for (int v = 1; v < V; ++v) maxval = std::max(maxval, logits_n[v]);
    Real sum = 0;
    for (int v = 0; v < V; ++v) {
      probs_n[v] = std::exp(logits_n[v] - maxval);
      sum += probs_n[v];
    }
    for (int v = 0; v < V; ++v) probs_n[v] /= sum;
    if (targets[n] >= 0) loss -= std::log(probs_n[targets[n]]);
  }
  return loss;
}

// loss = (1 / count) sum_n -log probs[n, target[n]]  =>  dlogits[n, v] = (probs[n, v] -
// [v == target[n]]) / count for targets >= 0, 0 elsewhere.
template <typename Real>
void softmax_crossentropy_backward(Real* dlogits, const Real* probs, const int* targets, int count,
                                   int N, int V) {
  const Real inv_count = Real(1) / static_cast<Real>(count);
  for (int n = 0; n < N; ++n) {
    Real* dlogits_n = dlogits + static_cast<size_t>(n) * V;
    const Real* probs_n = probs + static_cast<size_t>(n) * V;
    if (targets[n] < 0) {
      for (int v = 0; v < V; ++v) dlogits_n[v] = 0;
      continue;
    }
    for (int v = 0; v < V; ++v)
      dlogits_n[v] = (probs_n[v] - (v == targets[n] ? Real(1) : Real(0))) * inv_count;
  }
}

}  // namespace mha::train::kernels
