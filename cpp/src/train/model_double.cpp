// Model<double>: the finite-difference checks of the backward pass (tests/cpp/train_gradient_test.cpp).
#include "model_impl.h"

namespace mha::train {

template class Model<double>;

}  // namespace mha::train
