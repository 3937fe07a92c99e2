// The compute kernels under MultiHeadAttention::forward. Plain pointers, explicit leading
// dimensions (ld*, in floats), row-major throughout; outputs first, then inputs, then sizes.
// Nothing here validates or knows about masks' dtypes. linear and attention_with_probs pack
// their right-hand operand into a buffer kept per thread (it grows to the largest operand seen
// and is then reused); nothing else allocates.
#pragma once

#include <cstdint>

namespace mha::kernels {

// Threads the kernels split their work over: 1, or more when built with MHA_THREADS (the
// pthreads WebAssembly module).
int num_threads();

// out[M, N] = in[M, K] . weight[N, K]^T + bias[N]   (nn.Linear's layout; bias may be null)
void linear(float* out, const float* in, const float* weight, const float* bias, int64_t M,
            int64_t N, int64_t K);

// The same with the weight packed beforehand, for weights reused across calls:
//   packed[packed_weight_floats(N, K)] = pack_weight(weight[N, K])
int64_t packed_weight_floats(int64_t N, int64_t K);
void pack_weight(float* packed, const float* weight, int64_t N, int64_t K);
void linear_packed(float* out, const float* in, const float* packed_weight, const float* bias,
                   int64_t M, int64_t N, int64_t K);
// A weight packed piece by piece, as a file's bytes arrive: values[0 .. count) are elements
// first .. first + count of a part of `rows` rows (row_offset .. row_offset + rows of the whole
// (N, K) weight), in (rows, K) order, or in (K, rows) order when `transposed` (GPT-2's Conv1D
// stores [in, out]). `packed` holds packed_weight_floats(N, K), its padding already zero.
void pack_weight_elements(float* packed, int64_t N, int64_t K, int64_t row_offset, int64_t rows,
                          const float* values, int64_t first, int64_t count, bool transposed);
// Rows [row_begin, row_end) of a packed (N, K) weight, unpacked: out[(row_end - row_begin), K].
void unpack_weight_rows(float* out, const float* packed, int64_t K, int64_t row_begin, int64_t row_end);

// The same three for a weight stored 16-bit in the packed layout (IEEE binary16, or bfloat16
// when `bf16`), as a float16 or bfloat16 file holds it: linear_packed16 widens each panel to
// float32 as the GEMM reaches it, exactly, so it computes what linear_packed computes on the
// widened weight, at half the memory. values are the file's 16-bit words.
void linear_packed16(float* out, const float* in, const uint16_t* packed_weight, bool bf16, const float* bias,
                     int64_t M, int64_t N, int64_t K);
void pack_weight_elements16(uint16_t* packed, int64_t N, int64_t K, int64_t row_offset, int64_t rows,
                            const uint16_t* values, int64_t first, int64_t count, bool transposed);
void unpack_weight_rows16(float* out, const uint16_t* packed, bool bf16, int64_t K, int64_t row_begin, int64_t row_end);
// n 16-bit words widened to float32 (the packed layout kept).
void widen16(float* out, const uint16_t* in, int64_t n, bool bf16);

// x[n] = gelu_new(x) in place: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (GPT-2's MLP
// activation), in float, tanh to about 1e-7 (absolute).
void gelu_tanh(float* x, int64_t n);

// log sum_i e^(x_i) over x[n] (a log-softmax's normaliser): the exponentials in float, summed
// in double; within about 1e-7 of the exact value. n 0 gives -inf; a NaN in x gives NaN.
double log_sum_exp(const float* x, int64_t n);

// The additive mask of one (batch, head) pair, never materialised as a whole unless given so:
//   mask[i, j] = attn[i * ld_attn + j]            (if attn, for j < mask_cols)
//              + key[j]                           (if key,  for j < mask_cols)
//              + (causal && j > i ? -inf : 0)     (for j < mask_cols)
// Columns j >= mask_cols (the bias_k / zero-attention columns) get 0, as PyTorch pads masks.
struct MaskSpec {
  const float* attn = nullptr;
  int64_t ld_attn = 0;
  const float* key = nullptr;
  bool causal = false;
  int64_t mask_cols = 0;
};

// One (batch, head) pair of scaled dot-product attention with the probabilities written out.
//   probs[L, S] (ld_probs)   = softmax_rows(q . k^T + mask)   (q already scaled by 1/sqrt(hd))
//   out[L, hd] (ld_out)      = probs . v
//   q[L, hd] (ld_q), k[S, hd] (ld_k), v[S, hd] (ld_v)
// A row whose every key is masked gives NaN (PyTorch's explicit path), or 0 when
// zero_fully_masked.
void attention_with_probs(float* out, int64_t ld_out, float* probs, int64_t ld_probs,
                          const float* q, int64_t ld_q, const float* k, int64_t ld_k,
                          const float* v, int64_t ld_v, const MaskSpec& mask, int64_t L,
                          int64_t S, int64_t hd, bool zero_fully_masked);

// The same output without the probabilities: keys are visited in tiles with an online
// softmax (running max and sum per row), so memory is O(L * hd + tile), never O(L * S).
// `scratch` must hold attention_streaming_scratch_floats(L, S, hd) floats: one block of scores
// and the head's packed K and V, O(S * hd + tile).
int64_t attention_streaming_scratch_floats(int64_t L, int64_t S, int64_t hd);
void attention_streaming(float* out, int64_t ld_out, const float* q, int64_t ld_q,
                         const float* k, int64_t ld_k, const float* v, int64_t ld_v,
                         const MaskSpec& mask, int64_t L, int64_t S, int64_t hd,
                         bool zero_fully_masked, float* scratch);

}  // namespace mha::kernels
