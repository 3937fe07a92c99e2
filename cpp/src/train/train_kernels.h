// Training kernels: forward and backward of each layer of the decoder, plain loops and Eigen
// (matrix products; element-wise exp and erf, which Eigen vectorises). Outputs first, then
// inputs, then sizes; every backward comment quotes the forward line it inverts. Backward kernels accumulate (+=) into their gradients,
// so a tensor read by two layers (the residual stream) sums both contributions.
//
// Sizes: B batch, T positions, C channels, NH heads, hs = C / NH head size, OC / IC output /
// input channels of a linear layer, N rows (the tokens of the batch's B sequences).
#pragma once

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mha::train::kernels {

template <typename Real>
using RowMatrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Real>
using RowVector = Eigen::Matrix<Real, 1, Eigen::Dynamic>;

// Sequences are packed: sequence b is rows offset_b .. offset_b + lengths[b] - 1 of every
// (N, .) tensor, offset_b = lengths[0] + ... + lengths[b - 1], N = the sum of the lengths.
// Padding past a sentence's end is then never computed (causal attention makes the rows
// before it the same with or without it).

// out[row(b, t), :] = wte[tokens[row(b, t)], :] + wpe[t, :]
// out (N, C), tokens (N), wte (V, C), wpe (context, C), lengths (B)
template <typename Real>
void encoder_forward(Real* out, const int* tokens, const Real* wte, const Real* wpe, const int* lengths,
                     int B, int C) {
  size_t row = 0;
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < lengths[b]; ++t, ++row) {
      Real* out_bt = out + row * C;
      const Real* wte_ix = wte + static_cast<size_t>(tokens[row]) * C;
      const Real* wpe_t = wpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) out_bt[i] = wte_ix[i] + wpe_t[i];
    }
  }
}

template <typename Real>
void encoder_backward(Real* dwte, Real* dwpe, const Real* dout, const int* tokens, const int* lengths,
                      int B, int C) {
  size_t row = 0;
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < lengths[b]; ++t, ++row) {
      const Real* dout_bt = dout + row * C;
      Real* dwte_ix = dwte + static_cast<size_t>(tokens[row]) * C;
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

// Causal multi-head attention on qkv (N, 3C): q, k, v of head h at columns h*hs, C + h*hs,
// 2C + h*hs. Per (b, h) the head's q, k, v are (Tb, hs) blocks of qkv with row stride 3C,
// Tb = lengths[b] <= T, so each pass is one small matrix product.
//   att[b, h, t, t2] = softmax_{t2 <= t}(q_t . k_t2 / sqrt(hs))     (B, NH, T, T), 0 above t
//                                                                   and at or past Tb
//   out[row(b, t), h*hs + i] = sum_{t2 <= t} att[b, h, t, t2] v_t2[i]    (N, C)
template <typename Real>
using HeadBlock = Eigen::Map<RowMatrix<Real>, 0, Eigen::OuterStride<>>;
template <typename Real>
using ConstHeadBlock = Eigen::Map<const RowMatrix<Real>, 0, Eigen::OuterStride<>>;

template <typename Real>
void attention_forward(Real* out, Real* att, const Real* qkv, const int* lengths, int B, int T, int C,
                       int NH) {
  const int C3 = 3 * C;
  const int hs = C / NH;
  const Real scale = Real(1) / std::sqrt(static_cast<Real>(hs));
  size_t offset = 0;
  for (int b = 0; b < B; offset += lengths[b++]) {
    const int Tb = lengths[b];
    const Real* qkv_b = qkv + offset * C3;
    for (int h = 0; h < NH; ++h) {
      ConstHeadBlock<Real> q(qkv_b + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      ConstHeadBlock<Real> k(qkv_b + C + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      ConstHeadBlock<Real> v(qkv_b + 2 * C + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      Eigen::Map<RowMatrix<Real>> att_full(att + (static_cast<size_t>(b) * NH + h) * T * T, T, T);
      att_full.setZero();
      auto att_bh = att_full.topLeftCorner(Tb, Tb);
      // pass 1: scores (the future too; pass 3 zeroes it)
      att_bh.noalias() = (q * k.transpose()) * scale;
      for (int t = 0; t < Tb; ++t) {
        auto scores = att_bh.row(t).head(t + 1).array();
        // pass 2: exp (less the max) and sum
        scores = (scores - scores.maxCoeff()).exp();
        // pass 3: normalise; the future is zero
        scores /= scores.sum();
        att_bh.row(t).tail(Tb - 1 - t).setZero();
      }
      // pass 4: weighted sum of the values
      HeadBlock<Real> out_bh(out + offset * C + h * hs, Tb, hs, Eigen::OuterStride<>(C));
      out_bh.noalias() = att_bh * v;
    }
  }
}

// datt is scratch of T * T values.
template <typename Real>
void attention_backward(Real* dqkv, Real* datt, const Real* dout, const Real* qkv, const Real* att,
                        const int* lengths, int B, int T, int C, int NH) {
  const int C3 = 3 * C;
  const int hs = C / NH;
  const Real scale = Real(1) / std::sqrt(static_cast<Real>(hs));
  size_t offset = 0;
  for (int b = 0; b < B; offset += lengths[b++]) {
    const int Tb = lengths[b];
    const Real* qkv_b = qkv + offset * C3;
    Real* dqkv_b = dqkv + offset * C3;
    Eigen::Map<RowMatrix<Real>> datt_bh(datt, Tb, Tb);
    for (int h = 0; h < NH; ++h) {
      ConstHeadBlock<Real> q(qkv_b + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      ConstHeadBlock<Real> k(qkv_b + C + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      ConstHeadBlock<Real> v(qkv_b + 2 * C + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      HeadBlock<Real> dq(dqkv_b + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      HeadBlock<Real> dk(dqkv_b + C + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      HeadBlock<Real> dv(dqkv_b + 2 * C + h * hs, Tb, hs, Eigen::OuterStride<>(C3));
      Eigen::Map<const RowMatrix<Real>> att_full(att + (static_cast<size_t>(b) * NH + h) * T * T, T, T);
      auto att_bh = att_full.topLeftCorner(Tb, Tb);
      ConstHeadBlock<Real> dout_bh(dout + offset * C + h * hs, Tb, hs, Eigen::OuterStride<>(C));
      // pass 4: out_bh = att_bh . v
      datt_bh.noalias() = dout_bh * v.transpose();
      dv.noalias() += att_bh.transpose() * dout_bh;
      // passes 2-3: att_bh[t, t2] = exp(score_t2 - max) / sum  =>
      // dscore[t, t2] = att[t, t2] * (datt[t, t2] - sum_t3 att[t, t3] datt[t, t3]); 0 in the future,
      // where att is 0. Written over datt.
      for (int t = 0; t < Tb; ++t) {
        const Real weighted = att_bh.row(t).dot(datt_bh.row(t));
        datt_bh.row(t).array() = att_bh.row(t).array() * (datt_bh.row(t).array() - weighted) * scale;
      }
      // pass 1: score[t, t2] = (q_t . k_t2) * scale
      dq.noalias() += datt_bh * k;
      dk.noalias() += datt_bh.transpose() * q;
    }
  }
}

// out[i] = x * cdf, cdf = 0.5 * (1 + erf(x / sqrt(2)))   (nn.GELU, exact); cdf (n) kept for
// backward. Eigen's erf: std::erf in double, a rational approximation (a few ulp) in float.
template <typename Real>
void gelu_forward(Real* out, Real* cdf, const Real* in, size_t n) {
  using Array = Eigen::Array<Real, Eigen::Dynamic, 1>;
  const Real inv_sqrt2 = Real(0.70710678118654752440);
  Eigen::Map<const Array> x(in, static_cast<Eigen::Index>(n));
  Eigen::Map<Array> cdf_a(cdf, static_cast<Eigen::Index>(n));
  cdf_a = Real(0.5) * (Real(1) + (x * inv_sqrt2).erf());
  Eigen::Map<Array>(out, static_cast<Eigen::Index>(n)) = x * cdf_a;
}

template <typename Real>
void gelu_backward(Real* din, const Real* in, const Real* cdf, const Real* dout, size_t n) {
  using Array = Eigen::Array<Real, Eigen::Dynamic, 1>;
  const Real inv_sqrt_2pi = Real(0.39894228040143267794);
  Eigen::Map<const Array> x(in, static_cast<Eigen::Index>(n));
  // out = x Phi(x) => dout/dx = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
  Eigen::Map<Array>(din, static_cast<Eigen::Index>(n)) +=
      (Eigen::Map<const Array>(cdf, static_cast<Eigen::Index>(n)) + x * inv_sqrt_2pi * (Real(-0.5) * x * x).exp()) *
      Eigen::Map<const Array>(dout, static_cast<Eigen::Index>(n));
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
