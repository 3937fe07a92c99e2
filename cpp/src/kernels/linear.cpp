// kernels::linear — out = in . weight^T + bias, the layout of nn.Linear.
#include <Eigen/Core>

#include "mha/kernels.h"

namespace mha::kernels {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMatrix>;
using RowMap = Eigen::Map<RowMatrix>;

void linear(float* out, const float* in, const float* weight, const float* bias, int64_t M,
            int64_t N, int64_t K) {
  RowMap out_mn(out, M, N);
  ConstRowMap in_mk(in, M, K);
  ConstRowMap weight_nk(weight, N, K);
  out_mn.noalias() = in_mk * weight_nk.transpose();
  if (bias != nullptr) {
    out_mn.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, N);
  }
}

}  // namespace mha::kernels
