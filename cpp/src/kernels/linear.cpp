// kernels::linear — out = in . weight^T + bias, the layout of nn.Linear, on the packed GEMM:
// the weight (N, K) is packed into panels of gemm::kNR output columns, then every row of `in`
// streams past them (gemm.h).
#include <vector>

#include "gemm.h"
#include "mha/kernels.h"

namespace mha::kernels {

namespace {
// The packed weight of the current call, kept per thread so steady-state calls do not allocate.
std::vector<float>& pack_buffer() {
  thread_local std::vector<float> buffer;
  return buffer;
}
}  // namespace

int64_t packed_weight_floats(int64_t N, int64_t K) { return gemm::packed_floats(K, N); }

void pack_weight(float* packed, const float* weight, int64_t N, int64_t K) {
  gemm::pack_nt(packed, weight, K, N, K);
}

namespace {

// weight[n, k] is packed[(n / NR) * NR * K + k * NR + n % NR] (gemm::pack_nt's panels)
template <typename T>
void scatter(T* packed, int64_t K, int64_t row_offset, int64_t rows, const T* values, int64_t first,
             int64_t count, bool transposed) {
  constexpr int64_t NR = gemm::kNR;
  if (!transposed) {
    int64_t n = first / K, k = first % K;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = row_offset + n;
      packed[(row / NR) * NR * K + k * NR + row % NR] = values[i];
      if (++k == K) {
        k = 0;
        ++n;
      }
    }
  } else {
    int64_t k = first / rows, n = first % rows;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = row_offset + n;
      packed[(row / NR) * NR * K + k * NR + row % NR] = values[i];
      if (++n == rows) {
        n = 0;
        ++k;
      }
    }
  }
}

}  // namespace

void pack_weight_elements(float* packed, int64_t N, int64_t K, int64_t row_offset, int64_t rows,
                          const float* values, int64_t first, int64_t count, bool transposed) {
  (void)N;
  scatter(packed, K, row_offset, rows, values, first, count, transposed);
}

void pack_weight_elements16(uint16_t* packed, int64_t N, int64_t K, int64_t row_offset, int64_t rows,
                            const uint16_t* values, int64_t first, int64_t count, bool transposed) {
  (void)N;
  scatter(packed, K, row_offset, rows, values, first, count, transposed);
}

void unpack_weight_rows(float* out, const float* packed, int64_t K, int64_t row_begin, int64_t row_end) {
  constexpr int64_t NR = gemm::kNR;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const float* panel = packed + (row / NR) * NR * K + row % NR;
    float* out_row = out + (row - row_begin) * K;
    for (int64_t k = 0; k < K; ++k) out_row[k] = panel[k * NR];
  }
}

void unpack_weight_rows16(float* out, const uint16_t* packed, bool bf16, int64_t K, int64_t row_begin, int64_t row_end) {
  constexpr int64_t NR = gemm::kNR;
  std::vector<uint16_t> row_bits(static_cast<size_t>(K));
  for (int64_t row = row_begin; row < row_end; ++row) {
    const uint16_t* panel = packed + (row / NR) * NR * K + row % NR;
    for (int64_t k = 0; k < K; ++k) row_bits[static_cast<size_t>(k)] = panel[k * NR];
    gemm::widen16(out + (row - row_begin) * K, row_bits.data(), K, bf16);
  }
}

void widen16(float* out, const uint16_t* in, int64_t n, bool bf16) { gemm::widen16(out, in, n, bf16); }

void linear_packed16(float* out, const float* in, const uint16_t* packed_weight, bool bf16, const float* bias,
                     int64_t M, int64_t N, int64_t K) {
  gemm::gemm_packed16(out, N, in, K, packed_weight, bf16, bias, M, N, K);
}

void linear_packed(float* out, const float* in, const float* packed_weight, const float* bias,
                   int64_t M, int64_t N, int64_t K) {
  gemm::gemm_packed(out, N, in, K, packed_weight, bias, M, N, K, false);
}

void linear(float* out, const float* in, const float* weight, const float* bias, int64_t M,
            int64_t N, int64_t K) {
  std::vector<float>& packed = pack_buffer();
  const size_t need = static_cast<size_t>(gemm::packed_floats(K, N));
  if (packed.size() < need) packed.resize(need);
  gemm::pack_nt(packed.data(), weight, K, N, K);
  gemm::gemm_packed(out, N, in, K, packed.data(), bias, M, N, K, false);
}

}  // namespace mha::kernels
