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
