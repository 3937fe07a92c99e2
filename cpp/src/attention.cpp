// MultiHeadAttention: configuration, parameters by PyTorch name, and the forward pass.
#include "mha/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "kernels/parallel.h"
#include "mha/kernels.h"

namespace mha {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::string shape_str(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// A byte count held in a double (it may be far beyond int64_t), as text.
std::string bytes_str(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", bytes);  // exact below 2^53
  return text;
}

// Product of a shape's dims, or -1 if a dim is negative or the product overflows 2^53.
int64_t checked_numel(const Shape& shape) {
  double product = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    product *= static_cast<double>(d);
  }
  if (product > 9.0e15) return -1;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status check_tensor(const char* what, const float* data, size_t length, const Shape& shape) {
  const int64_t numel = checked_numel(shape);
  if (numel < 0) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + ": shape " + shape_str(shape) + " is not a valid shape (negative or too large dimensions)");
  }
  if (static_cast<int64_t>(length) != numel) {
    return Status(StatusCode::kLengthMismatch,
                  std::string(what) + ": data has " + std::to_string(length) + " values but shape " +
                      shape_str(shape) + " needs " + std::to_string(numel));
  }
  if (numel > 0 && data == nullptr) {
    return Status(StatusCode::kInvalidArgument, std::string(what) + ": data is missing");
  }
  return Status::Ok();
}

// Inputs must be finite: a NaN or infinity would spread through every row it reaches.
Status check_finite(const char* what, const float* data, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (!std::isfinite(data[i])) {
      return Status(StatusCode::kInvalidArgument, std::string(what) + ": value " + std::to_string(i) + " is " +
                                                      (std::isnan(data[i]) ? "NaN" : data[i] > 0 ? "+Infinity" : "-Infinity") +
                                                      "; expected finite numbers");
    }
  }
  return Status::Ok();
}

Status check_positive_dims(const char* what, const Shape& shape) {
  for (int64_t d : shape) {
    if (d <= 0) {
      return Status(StatusCode::kShapeMismatch, std::string(what) + ": every dimension must be at least 1, but the shape is " + shape_str(shape));
    }
  }
  return Status::Ok();
}

// Scratch whose contents need not survive: the old block is freed before the larger one is
// allocated, so that the two never coexist (near the memory cap they would not both fit).
template <typename T>
void grow(std::vector<T>& buffer, size_t count) {
  if (buffer.size() < count) {
    std::vector<T>().swap(buffer);
    buffer.resize(count);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Configuration and parameters

Status MultiHeadAttention::Create(const Config& config_in, uint64_t seed,
                                  std::unique_ptr<MultiHeadAttention>* out) {
  Config config = config_in;
  if (config.embed_dim <= 0) {
    return Status(StatusCode::kInvalidConfig, "embed_dim must be positive, but got " + std::to_string(config.embed_dim));
  }
  if (config.num_heads <= 0) {
    return Status(StatusCode::kInvalidConfig, "num_heads must be positive, but got " + std::to_string(config.num_heads));
  }
  if (config.embed_dim % config.num_heads != 0) {
    return Status(StatusCode::kInvalidConfig,
                  "embed_dim must be divisible by num_heads (embed_dim " + std::to_string(config.embed_dim) +
                      ", num_heads " + std::to_string(config.num_heads) + ")");
  }
  if (config.num_kv_heads == 0) config.num_kv_heads = config.num_heads;
  if (config.num_kv_heads < 0 || config.num_heads % config.num_kv_heads != 0) {
    return Status(StatusCode::kInvalidConfig,
                  "num_kv_heads must divide num_heads (num_heads " + std::to_string(config.num_heads) +
                      ", num_kv_heads " + std::to_string(config.num_kv_heads) + ")");
  }
  if (config.kdim == 0) config.kdim = config.embed_dim;
  if (config.vdim == 0) config.vdim = config.embed_dim;
  if (config.kdim < 0 || config.vdim < 0) {
    return Status(StatusCode::kInvalidConfig, "kdim and vdim must be positive, but got kdim " +
                                                  std::to_string(config.kdim) + ", vdim " + std::to_string(config.vdim));
  }
  const int64_t head_dim = config.embed_dim / config.num_heads;
  const int64_t kv = config.num_kv_heads * head_dim;
  const double parameter_floats = double(config.embed_dim) * config.embed_dim * 2 +
                                  double(kv) * (double(config.kdim) + double(config.vdim)) + 4.0 * config.embed_dim;
  if (parameter_floats * 4 > double(kDefaultMemoryCapBytes)) {
    return Status(StatusCode::kTooLarge, "the parameters would take " + bytes_str(parameter_floats * 4) +
                                             " bytes, more than the memory cap of " + std::to_string(kDefaultMemoryCapBytes));
  }

  std::unique_ptr<MultiHeadAttention> mha(new MultiHeadAttention());
  mha->config_ = config;
  mha->head_dim_ = head_dim;
  mha->packed_in_proj_ = config.kdim == config.embed_dim && config.vdim == config.embed_dim &&
                         config.num_kv_heads == config.num_heads;
  const int64_t E = config.embed_dim;
  mha->in_proj_weight_.assign(static_cast<size_t>(E * E + kv * config.kdim + kv * config.vdim), 0.0f);
  if (config.bias) {
    mha->in_proj_bias_.assign(static_cast<size_t>(E + 2 * kv), 0.0f);
    mha->out_proj_bias_.assign(static_cast<size_t>(E), 0.0f);
  }
  if (config.add_bias_kv) {
    mha->bias_k_.assign(static_cast<size_t>(kv), 0.0f);
    mha->bias_v_.assign(static_cast<size_t>(kv), 0.0f);
  }
  mha->out_proj_weight_.assign(static_cast<size_t>(E * E), 0.0f);
  mha->reset_parameters(seed);
  *out = std::move(mha);
  return Status::Ok();
}

std::vector<std::string> MultiHeadAttention::parameter_names() const {
  std::vector<std::string> names;
  if (packed_in_proj_) {
    names.push_back("in_proj_weight");
  } else {
    names.push_back("q_proj_weight");
    names.push_back("k_proj_weight");
    names.push_back("v_proj_weight");
  }
  if (config_.bias) names.push_back("in_proj_bias");
  if (config_.add_bias_kv) {
    names.push_back("bias_k");
    names.push_back("bias_v");
  }
  names.push_back("out_proj.weight");
  if (config_.bias) names.push_back("out_proj.bias");
  return names;
}

namespace {
struct ParameterSlot {
  float* data = nullptr;
  size_t count = 0;
  Shape shape;
};
}  // namespace

// Where each named parameter lives; mutable access for set_parameter.
static bool locate_parameter(MultiHeadAttention& mha, const std::string& name, std::vector<float>& in_w,
                             std::vector<float>& in_b, std::vector<float>& bk, std::vector<float>& bv,
                             std::vector<float>& out_w, std::vector<float>& out_b, ParameterSlot* slot) {
  const Config& c = mha.config();
  const int64_t E = c.embed_dim;
  const int64_t kv = mha.kv_dim();
  if (name == "in_proj_weight" && mha.packed_in_proj()) {
    *slot = {in_w.data(), in_w.size(), {3 * E, E}};
  } else if (name == "q_proj_weight" && !mha.packed_in_proj()) {
    *slot = {in_w.data(), static_cast<size_t>(E * E), {E, E}};
  } else if (name == "k_proj_weight" && !mha.packed_in_proj()) {
    *slot = {in_w.data() + E * E, static_cast<size_t>(kv * c.kdim), {kv, c.kdim}};
  } else if (name == "v_proj_weight" && !mha.packed_in_proj()) {
    *slot = {in_w.data() + E * E + kv * c.kdim, static_cast<size_t>(kv * c.vdim), {kv, c.vdim}};
  } else if (name == "in_proj_bias" && c.bias) {
    *slot = {in_b.data(), in_b.size(), {E + 2 * kv}};
  } else if (name == "bias_k" && c.add_bias_kv) {
    *slot = {bk.data(), bk.size(), {1, 1, kv}};
  } else if (name == "bias_v" && c.add_bias_kv) {
    *slot = {bv.data(), bv.size(), {1, 1, kv}};
  } else if (name == "out_proj.weight") {
    *slot = {out_w.data(), out_w.size(), {E, E}};
  } else if (name == "out_proj.bias" && c.bias) {
    *slot = {out_b.data(), out_b.size(), {E}};
  } else {
    return false;
  }
  return true;
}

static std::string unknown_parameter_message(const MultiHeadAttention& mha, const std::string& name) {
  std::string message = "unknown parameter '" + name + "'; this module has: ";
  const auto names = mha.parameter_names();
  for (size_t i = 0; i < names.size(); ++i) message += (i ? ", " : "") + names[i];
  return message;
}

Status MultiHeadAttention::parameter_shape(const std::string& name, Shape* shape) const {
  auto* self = const_cast<MultiHeadAttention*>(this);
  ParameterSlot slot;
  if (!locate_parameter(*self, name, self->in_proj_weight_, self->in_proj_bias_, self->bias_k_, self->bias_v_,
                        self->out_proj_weight_, self->out_proj_bias_, &slot)) {
    return Status(StatusCode::kUnknownParameter, unknown_parameter_message(*this, name));
  }
  *shape = slot.shape;
  return Status::Ok();
}

Status MultiHeadAttention::set_parameter(const std::string& name, const float* data, size_t length,
                                         const Shape& shape) {
  ParameterSlot slot;
  if (!locate_parameter(*this, name, in_proj_weight_, in_proj_bias_, bias_k_, bias_v_, out_proj_weight_,
                        out_proj_bias_, &slot)) {
    return Status(StatusCode::kUnknownParameter, unknown_parameter_message(*this, name));
  }
  // A bias may also be given flat, as (n) for (1, 1, n).
  const bool flat_ok = (name == "bias_k" || name == "bias_v") && shape.size() == 1 && shape[0] == slot.shape[2];
  if (shape != slot.shape && !flat_ok) {
    return Status(StatusCode::kShapeMismatch, "parameter '" + name + "': expected shape " + shape_str(slot.shape) +
                                                  ", got " + shape_str(shape));
  }
  MHA_RETURN_IF_ERROR(check_tensor(("parameter '" + name + "'").c_str(), data, length, shape));
  for (size_t i = 0; i < length; ++i) {
    if (!std::isfinite(data[i])) {
      return Status(StatusCode::kInvalidArgument, "parameter '" + name + "': value " + std::to_string(i) +
                                                      " is not finite (" + std::to_string(data[i]) + ")");
    }
  }
  std::memcpy(slot.data, data, length * sizeof(float));
  packed_weights_stale_ = true;
  return Status::Ok();
}

Status MultiHeadAttention::get_parameter(const std::string& name, Tensor* out) const {
  auto* self = const_cast<MultiHeadAttention*>(this);
  ParameterSlot slot;
  if (!locate_parameter(*self, name, self->in_proj_weight_, self->in_proj_bias_, self->bias_k_, self->bias_v_,
                        self->out_proj_weight_, self->out_proj_bias_, &slot)) {
    return Status(StatusCode::kUnknownParameter, unknown_parameter_message(*this, name));
  }
  out->shape = slot.shape;
  out->data.assign(slot.data, slot.data + slot.count);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Forward

namespace {

// The shapes of one call, resolved from the inputs.
struct CallShape {
  bool batched = true;
  int64_t N = 1, L = 0, S = 0;
};

Status check_mask(const char* what, const MaskView& mask) {
  if (mask.dtype == MaskDtype::kNone) return Status::Ok();
  if (mask.dtype != MaskDtype::kBool && mask.dtype != MaskDtype::kFloat) {
    return Status(StatusCode::kInvalidDtype, std::string(what) + ": only bool and float masks are supported");
  }
  const int64_t numel = checked_numel(mask.shape);
  if (numel < 0) {
    return Status(StatusCode::kInvalidArgument, std::string(what) + ": shape " + shape_str(mask.shape) + " is not a valid shape");
  }
  if (static_cast<int64_t>(mask.length) != numel) {
    return Status(StatusCode::kLengthMismatch, std::string(what) + ": data has " + std::to_string(mask.length) +
                                                   " values but shape " + shape_str(mask.shape) + " needs " +
                                                   std::to_string(numel));
  }
  if (numel > 0 && mask.data == nullptr) return Status(StatusCode::kInvalidArgument, std::string(what) + ": data is missing");
  if (mask.dtype == MaskDtype::kFloat) {
    const float* values = static_cast<const float*>(mask.data);
    for (int64_t i = 0; i < numel; ++i) {
      if (std::isnan(values[i]) || values[i] == std::numeric_limits<float>::infinity()) {
        return Status(StatusCode::kInvalidArgument, std::string(what) + ": value " + std::to_string(i) +
                                                        " is " + (std::isnan(values[i]) ? "NaN" : "+Infinity") +
                                                        "; a float mask holds finite values or -Infinity");
      }
    }
  }
  return Status::Ok();
}

inline float mask_value(const MaskView& mask, int64_t index) {
  if (mask.dtype == MaskDtype::kBool) return static_cast<const uint8_t*>(mask.data)[index] ? kNegInf : 0.0f;
  return static_cast<const float*>(mask.data)[index];
}

// (L, N, D) -> (N, L, D)
void to_batch_first(float* out, const float* in, int64_t L, int64_t N, int64_t D) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t l = 0; l < L; ++l) std::memcpy(out + (n * L + l) * D, in + (l * N + n) * D, D * sizeof(float));
}

// (N, L, D) -> (L, N, D)
void to_sequence_first(float* out, const float* in, int64_t N, int64_t L, int64_t D) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t l = 0; l < L; ++l) std::memcpy(out + (l * N + n) * D, in + (n * L + l) * D, D * sizeof(float));
}

}  // namespace

Status MultiHeadAttention::forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                   const MaskView& key_padding_mask, const MaskView& attn_mask,
                                   const ForwardOptions& options, ForwardResult* result) {
  const Config& c = config_;
  const int64_t E = c.embed_dim, H = c.num_heads, G = c.num_kv_heads, hd = head_dim_;
  const int64_t kv = kv_dim();

  // 1. Validate shapes, lengths and dtypes, before anything is touched.
  MHA_RETURN_IF_ERROR(check_tensor("query", query.data, query.length, query.shape));
  MHA_RETURN_IF_ERROR(check_tensor("key", key.data, key.length, key.shape));
  MHA_RETURN_IF_ERROR(check_tensor("value", value.data, value.length, value.shape));
  MHA_RETURN_IF_ERROR(check_finite("query", query.data, query.length));
  if (key.data != query.data) MHA_RETURN_IF_ERROR(check_finite("key", key.data, key.length));
  if (value.data != query.data && value.data != key.data) MHA_RETURN_IF_ERROR(check_finite("value", value.data, value.length));
  MHA_RETURN_IF_ERROR(check_mask("key_padding_mask", key_padding_mask));
  MHA_RETURN_IF_ERROR(check_mask("attn_mask", attn_mask));

  CallShape cs;
  const size_t qdim = query.shape.size();
  if (qdim == 3) {
    cs.batched = true;
    if (key.shape.size() != 3 || value.shape.size() != 3) {
      return Status(StatusCode::kShapeMismatch,
                    "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found " +
                        std::to_string(key.shape.size()) + "-D and " + std::to_string(value.shape.size()) +
                        "-D tensors respectively");
    }
    if (key_padding_mask.dtype != MaskDtype::kNone && key_padding_mask.shape.size() != 2) {
      return Status(StatusCode::kShapeMismatch, "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found " +
                                                    std::to_string(key_padding_mask.shape.size()) + "-D tensor instead");
    }
  } else if (qdim == 2) {
    cs.batched = false;
    if (key.shape.size() != 2 || value.shape.size() != 2) {
      return Status(StatusCode::kShapeMismatch,
                    "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found " +
                        std::to_string(key.shape.size()) + "-D and " + std::to_string(value.shape.size()) +
                        "-D tensors respectively");
    }
    if (key_padding_mask.dtype != MaskDtype::kNone && key_padding_mask.shape.size() != 1) {
      return Status(StatusCode::kShapeMismatch, "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found " +
                                                    std::to_string(key_padding_mask.shape.size()) + "-D tensor instead");
    }
  } else {
    return Status(StatusCode::kShapeMismatch, "query should be unbatched 2D or batched 3D tensor but received " +
                                                  std::to_string(qdim) + "-D query tensor of shape " + shape_str(query.shape));
  }
  MHA_RETURN_IF_ERROR(check_positive_dims("query", query.shape));
  MHA_RETURN_IF_ERROR(check_positive_dims("key", key.shape));
  MHA_RETURN_IF_ERROR(check_positive_dims("value", value.shape));

  // Read N, L, S from the layout: (N, L, E) batch_first, (L, N, E) otherwise, (L, E) unbatched.
  int64_t key_batch = 1, value_batch = 1, value_len = 0;
  if (cs.batched) {
    const int b = c.batch_first ? 0 : 1, s = c.batch_first ? 1 : 0;
    cs.N = query.shape[b];
    cs.L = query.shape[s];
    key_batch = key.shape[b];
    cs.S = key.shape[s];
    value_batch = value.shape[b];
    value_len = value.shape[s];
  } else {
    cs.L = query.shape[0];
    cs.S = key.shape[0];
    value_len = value.shape[0];
  }
  const int64_t N = cs.N, L = cs.L, S = cs.S;
  if (query.shape.back() != E) {
    return Status(StatusCode::kShapeMismatch, "was expecting embedding dimension of " + std::to_string(E) +
                                                  ", but got " + std::to_string(query.shape.back()) +
                                                  " (query shape " + shape_str(query.shape) + ")");
  }
  if (key.shape.back() != c.kdim) {
    return Status(StatusCode::kShapeMismatch, "key: expected last dimension kdim = " + std::to_string(c.kdim) +
                                                  ", but got " + std::to_string(key.shape.back()) + " (key shape " +
                                                  shape_str(key.shape) + ")");
  }
  if (value.shape.back() != c.vdim) {
    return Status(StatusCode::kShapeMismatch, "value: expected last dimension vdim = " + std::to_string(c.vdim) +
                                                  ", but got " + std::to_string(value.shape.back()) + " (value shape " +
                                                  shape_str(value.shape) + ")");
  }
  if (key_batch != value_batch || S != value_len) {
    return Status(StatusCode::kShapeMismatch, "key's sequence and batch dims " + shape_str({key.shape[0], key.shape.size() == 3 ? key.shape[1] : 0}) +
                                                  " do not match value's " + shape_str({value.shape[0], value.shape.size() == 3 ? value.shape[1] : 0}));
  }
  if (key_batch != N) {
    return Status(StatusCode::kShapeMismatch, "key and value batch size " + std::to_string(key_batch) +
                                                  " does not match query batch size " + std::to_string(N));
  }
  if (key_padding_mask.dtype != MaskDtype::kNone) {
    const Shape expected = cs.batched ? Shape{N, S} : Shape{S};
    if (key_padding_mask.shape != expected) {
      return Status(StatusCode::kShapeMismatch, "expecting key_padding_mask shape of " + shape_str(expected) +
                                                    ", but got " + shape_str(key_padding_mask.shape));
    }
  }
  bool attn_mask_per_head = false;
  if (attn_mask.dtype != MaskDtype::kNone) {
    if (attn_mask.shape.size() == 2) {
      if (attn_mask.shape != Shape{L, S}) {
        return Status(StatusCode::kShapeMismatch, "The shape of the 2D attn_mask is " + shape_str(attn_mask.shape) +
                                                      ", but should be " + shape_str({L, S}) + ".");
      }
    } else if (attn_mask.shape.size() == 3) {
      if (attn_mask.shape != Shape{N * H, L, S}) {
        return Status(StatusCode::kShapeMismatch, "The shape of the 3D attn_mask is " + shape_str(attn_mask.shape) +
                                                      ", but should be " + shape_str({N * H, L, S}) + ".");
      }
      attn_mask_per_head = true;
    } else {
      return Status(StatusCode::kShapeMismatch, "attn_mask's dimension " + std::to_string(attn_mask.shape.size()) +
                                                    " is not supported (expected 2-D (L, S) or 3-D (N*num_heads, L, S))");
    }
  }
  for (int64_t h : options.ablate_heads) {
    if (h < 0 || h >= H) {
      return Status(StatusCode::kInvalidArgument, "ablate_heads: head index " + std::to_string(h) +
                                                      " is out of range; expected 0 to " + std::to_string(H - 1));
    }
  }

  // Keys after bias_k and the zero-attention row are appended.
  const int64_t S_total = S + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  const bool extended_kv = S_total != S;
  const bool self_attention = packed_in_proj_ && query.data == key.data && key.data == value.data &&
                              query.shape == key.shape && key.shape == value.shape;

  // 2. Check the memory this call needs against the cap, in doubles (no overflow).
  {
    const double cap = static_cast<double>(memory_cap_bytes_);
    const double per_head_weights = options.need_weights ? double(N) * H * L * S_total : 0;
    const double buffers[] = {
        double(N) * L * E * 3,                           // q (or q,k,v fused)
        double(N) * S_total * kv * 2,                    // k, v
        double(N) * L * E,                               // concat
        per_head_weights,                                // per-head probabilities
        attn_mask.dtype == MaskDtype::kBool ? double(attn_mask.length) : 0,
        double(N) * S * std::max(c.kdim, c.vdim),        // sequence-first transposes
        // What is returned is held as well: output (and concat), weights, head outputs.
        double(N) * L * E * (options.return_concat ? 2 : 1),
        options.need_weights ? double(N) * L * S_total * (options.average_attn_weights ? 1 : H) : 0,
        options.return_head_outputs ? double(N) * H * L * hd : 0,
    };
    double total = 0;
    for (double floats : buffers) {
      const double bytes = floats * sizeof(float);
      total += bytes;
    }
    if (total > cap) {
      return Status(StatusCode::kTooLarge, "this call needs about " + bytes_str(total) +
                                               " bytes of buffers (N=" + std::to_string(N) + ", L=" + std::to_string(L) +
                                               ", S=" + std::to_string(S) + ", E=" + std::to_string(E) +
                                               (options.need_weights ? ", with weights" : "") +
                                               "), more than the memory cap of " + std::to_string(memory_cap_bytes_) + " bytes");
    }
  }

  // 3. Inputs in batch-first order: (N, L, E), (N, S, kdim), (N, S, vdim).
  const bool transpose_inputs = cs.batched && !c.batch_first && N > 1;
  const float* query_nle = query.data;
  const float* key_nsk = key.data;
  const float* value_nsv = value.data;
  std::vector<float>& ws = workspace_;
  size_t ws_size = 0;
  auto reserve = [&](size_t floats) { size_t at = ws_size; ws_size += floats; return at; };
  const size_t at_query_t = transpose_inputs ? reserve(N * L * E) : 0;
  const size_t at_key_t = transpose_inputs && !self_attention ? reserve(N * S * c.kdim) : 0;
  const size_t at_value_t = transpose_inputs && !self_attention ? reserve(N * S * c.vdim) : 0;
  // Projections: fused (N*L, 3E) for self-attention, else q (N*L, E), k and v (N*S_total, kv).
  // Self-attention without weights projects q, k, v one head at a time (3 * L * hd floats)
  // instead of all at once ((L, 3E)): memory O(L * hd) beyond the input and output.
  // (Below kPerHeadProjectionFloats the fused projection is used all the same: one GEMM over
  // 3E columns packs the input once, where per-head GEMMs would pack it H times.)
  constexpr double kPerHeadProjectionFloats = 1 << 21;
  const bool per_head_projection = self_attention && !extended_kv && !options.need_weights &&
                                   double(N) * L * 3 * E > kPerHeadProjectionFloats;
  const size_t at_qkv = self_attention && !extended_kv && !per_head_projection ? reserve(N * L * 3 * E) : 0;
  // Attention with threads: whole (batch, head) pairs go to each thread when there are enough
  // of them to share out evenly and enough work to be worth it (each thread then packs its own
  // K and V, in its own scratch, and no thread waits on the other between heads); otherwise the
  // kernels split each pair's query blocks.
  constexpr double kParallelPairsMinMacs = 1 << 20;
  const int threads = kernels::num_threads();
  const int64_t pairs = N * H;
  const bool split_pairs = threads > 1 && (pairs % threads == 0 || pairs >= 4 * threads) &&
                           double(pairs) * L * S_total * hd * 2 >= kParallelPairsMinMacs;
  const int64_t pair_scratches = split_pairs ? threads : 1;
  const size_t at_qkv_head = per_head_projection ? reserve(pair_scratches * L * 3 * hd) : 0;
  const size_t at_q = (self_attention && !extended_kv) ? 0 : reserve(N * L * E);
  const size_t at_k = (self_attention && !extended_kv) ? 0 : reserve(N * S_total * kv);
  const size_t at_v = (self_attention && !extended_kv) ? 0 : reserve(N * S_total * kv);
  const size_t at_concat = reserve(N * L * E);
  const size_t at_probs = options.need_weights ? reserve(N * H * L * S_total) : 0;
  const size_t at_attn_mask = attn_mask.dtype == MaskDtype::kBool ? reserve(attn_mask.length) : 0;
  const size_t at_key_mask = key_padding_mask.dtype != MaskDtype::kNone ? reserve(N * S) : 0;
  const int64_t streaming_scratch = options.need_weights ? 0 : kernels::attention_streaming_scratch_floats(L, S_total, hd);
  const size_t at_scratch = options.need_weights ? 0 : reserve(pair_scratches * streaming_scratch);
  const size_t at_out_t = cs.batched && !c.batch_first && N > 1 ? reserve(N * L * E) : 0;
  grow(ws, ws_size);
  float* base = ws.data();

  if (transpose_inputs) {
    to_batch_first(base + at_query_t, query.data, L, N, E);
    query_nle = base + at_query_t;
    if (self_attention) {
      key_nsk = value_nsv = query_nle;
    } else {
      to_batch_first(base + at_key_t, key.data, S, N, c.kdim);
      to_batch_first(base + at_value_t, value.data, S, N, c.vdim);
      key_nsk = base + at_key_t;
      value_nsv = base + at_value_t;
    }
  }

  // 4. In-projection with bias. The weights are packed for the GEMM once, then reused; each
  // packing is made on first use (the fused one, the per-head one), so only those used take memory.
  if (packed_weights_stale_) {
    packed_in_proj_weight_.clear();
    packed_in_proj_per_head_.clear();
    packed_out_proj_weight_.resize(static_cast<size_t>(kernels::packed_weight_floats(E, E)));
    kernels::pack_weight(packed_out_proj_weight_.data(), out_proj_weight_.data(), E, E);
    packed_weights_stale_ = false;
  }
  if (self_attention && !extended_kv && !per_head_projection && packed_in_proj_weight_.empty()) {
    packed_in_proj_weight_.resize(static_cast<size_t>(kernels::packed_weight_floats(3 * E, E)));
    kernels::pack_weight(packed_in_proj_weight_.data(), in_proj_weight_.data(), 3 * E, E);
  }
  if (per_head_projection && packed_in_proj_per_head_.empty()) {
    const int64_t per_head = kernels::packed_weight_floats(3 * hd, E);
    packed_in_proj_per_head_.resize(static_cast<size_t>(H * per_head));
    in_proj_bias_per_head_.assign(c.bias ? static_cast<size_t>(3 * E) : 0, 0.0f);
    std::vector<float> rows(static_cast<size_t>(3 * hd * E));
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t part = 0; part < 3; ++part) {  // q, k, v rows of head h
        std::memcpy(rows.data() + part * hd * E, in_proj_weight_.data() + (part * E + h * hd) * E,
                    hd * E * sizeof(float));
        if (c.bias)
          std::memcpy(in_proj_bias_per_head_.data() + h * 3 * hd + part * hd,
                      in_proj_bias_.data() + part * E + h * hd, hd * sizeof(float));
      }
      kernels::pack_weight(packed_in_proj_per_head_.data() + h * per_head, rows.data(), 3 * hd, E);
    }
  }
  const float* w_q = in_proj_weight_.data();
  const float* w_k = w_q + E * E;
  const float* w_v = w_k + kv * c.kdim;
  const float* b_q = c.bias ? in_proj_bias_.data() : nullptr;
  const float* b_k = c.bias ? b_q + E : nullptr;
  const float* b_v = c.bias ? b_q + E + kv : nullptr;
  float* q_ptr;
  float* k_ptr;
  float* v_ptr;
  int64_t ld_q, ld_kv;
  if (per_head_projection) {
    // Projected per head in step 7.
    q_ptr = k_ptr = v_ptr = nullptr;
    ld_q = ld_kv = 3 * hd;
  } else if (self_attention && !extended_kv) {
    // One GEMM projects q, k and v: in_proj_weight is (3E, E).
    float* qkv = base + at_qkv;
    kernels::linear_packed(qkv, query_nle, packed_in_proj_weight_.data(), b_q, N * L, 3 * E, E);
    q_ptr = qkv;
    k_ptr = qkv + E;
    v_ptr = qkv + 2 * E;
    ld_q = ld_kv = 3 * E;
  } else {
    q_ptr = base + at_q;
    k_ptr = base + at_k;
    v_ptr = base + at_v;
    ld_q = E;
    ld_kv = kv;
    kernels::linear(q_ptr, query_nle, w_q, b_q, N * L, E, E);
    if (!extended_kv) {
      kernels::linear(k_ptr, key_nsk, w_k, b_k, N * S, kv, c.kdim);
      kernels::linear(v_ptr, value_nsv, w_v, b_v, N * S, kv, c.vdim);
    } else {
      // Project each batch item's S keys into its S_total rows, then append bias_k / zeros.
      for (int64_t n = 0; n < N; ++n) {
        float* k_n = k_ptr + n * S_total * kv;
        float* v_n = v_ptr + n * S_total * kv;
        kernels::linear(k_n, key_nsk + n * S * c.kdim, w_k, b_k, S, kv, c.kdim);
        kernels::linear(v_n, value_nsv + n * S * c.vdim, w_v, b_v, S, kv, c.vdim);
        int64_t row = S;
        if (c.add_bias_kv) {
          std::memcpy(k_n + row * kv, bias_k_.data(), kv * sizeof(float));
          std::memcpy(v_n + row * kv, bias_v_.data(), kv * sizeof(float));
          ++row;
        }
        if (c.add_zero_attn) {
          std::fill(k_n + row * kv, k_n + (row + 1) * kv, 0.0f);
          std::fill(v_n + row * kv, v_n + (row + 1) * kv, 0.0f);
        }
      }
    }
  }
  // 5. q is scaled by 1/sqrt(hd), as PyTorch does before q . k^T: head by head, in step 7.
  const float inv_sqrt_hd = 1.0f / std::sqrt(static_cast<float>(hd));

  // 6. Masks as additive floats: attn_mask (1 or N*H, L, S), key padding (N, S).
  const float* attn_add = nullptr;
  if (attn_mask.dtype == MaskDtype::kBool) {
    float* converted = base + at_attn_mask;
    for (size_t i = 0; i < attn_mask.length; ++i) converted[i] = mask_value(attn_mask, int64_t(i));
    attn_add = converted;
  } else if (attn_mask.dtype == MaskDtype::kFloat) {
    attn_add = static_cast<const float*>(attn_mask.data);
  }
  const float* key_add = nullptr;
  if (key_padding_mask.dtype != MaskDtype::kNone) {
    float* converted = base + at_key_mask;
    for (int64_t i = 0; i < N * S; ++i) converted[i] = mask_value(key_padding_mask, i);
    key_add = converted;
  }
  const bool causal = options.is_causal && attn_mask.dtype == MaskDtype::kNone;

  // 7. Attention per (batch, head); kv head g serves query heads g*H/G .. (g+1)*H/G - 1.
  float* concat = base + at_concat;  // (N, L, E)
  float* probs = options.need_weights ? base + at_probs : nullptr;  // (N, H, L, S_total)
  const int64_t heads_per_kv = H / G;
  auto attend = [&](int64_t pair, int slot) {  // slot: which of the pair_scratches to use
    const int64_t n = pair / H, h = pair % H, g = h / heads_per_kv;
    kernels::MaskSpec mask;
    if (attn_add != nullptr) {
      mask.attn = attn_add + (attn_mask_per_head ? (n * H + h) * L * S : 0);
      mask.ld_attn = S;
    }
    mask.key = key_add != nullptr ? key_add + n * S : nullptr;
    mask.causal = causal;
    mask.mask_cols = S;
    float* q_nh;
    const float* k_ng;
    const float* v_ng;
    if (per_head_projection) {
      // q, k, v of head h for batch item n: (L, 3*hd).
      float* qkv_h = base + at_qkv_head + slot * L * 3 * hd;
      const int64_t per_head = kernels::packed_weight_floats(3 * hd, E);
      kernels::linear_packed(qkv_h, query_nle + n * L * E, packed_in_proj_per_head_.data() + h * per_head,
                             c.bias ? in_proj_bias_per_head_.data() + h * 3 * hd : nullptr, L, 3 * hd, E);
      q_nh = qkv_h;
      k_ng = qkv_h + hd;
      v_ng = qkv_h + 2 * hd;
    } else {
      q_nh = q_ptr + n * L * ld_q + h * hd;
      k_ng = k_ptr + n * S_total * ld_kv + g * hd;
      v_ng = v_ptr + n * S_total * ld_kv + g * hd;
    }
    for (int64_t l = 0; l < L; ++l)
      for (int64_t d = 0; d < hd; ++d) q_nh[l * ld_q + d] *= inv_sqrt_hd;
    float* out_nh = concat + n * L * E + h * hd;
    if (options.need_weights) {
      float* probs_nh = probs + (n * H + h) * L * S_total;
      kernels::attention_with_probs(out_nh, E, probs_nh, S_total, q_nh, ld_q, k_ng, ld_kv, v_ng, ld_kv, mask, L,
                                    S_total, hd, options.fully_masked_rows_zero);
    } else {
      kernels::attention_streaming(out_nh, E, q_nh, ld_q, k_ng, ld_kv, v_ng, ld_kv, mask, L, S_total, hd,
                                   options.fully_masked_rows_zero, base + at_scratch + slot * streaming_scratch);
    }
  };
  if (split_pairs) {
    kernels::parallel_for(pairs, 1, [&](int64_t p0, int64_t p1, int thread) {
      for (int64_t pair = p0; pair < p1; ++pair) attend(pair, thread);
    });
  } else {
    for (int64_t pair = 0; pair < pairs; ++pair) attend(pair, 0);
  }

  // 8. What the lesson's views ask for: each head's output, ablation, the concatenation.
  const bool sequence_first_out = cs.batched && !c.batch_first;
  const Shape out_shape = !cs.batched ? Shape{L, E} : (c.batch_first ? Shape{N, L, E} : Shape{L, N, E});
  if (options.return_head_outputs) {
    result->head_outputs.shape = cs.batched ? Shape{N, H, L, hd} : Shape{H, L, hd};
    result->head_outputs.data.resize(static_cast<size_t>(N * H * L * hd));
    float* dst = result->head_outputs.data.data();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t l = 0; l < L; ++l)
          std::memcpy(dst + ((n * H + h) * L + l) * hd, concat + (n * L + l) * E + h * hd, hd * sizeof(float));
  } else {
    result->head_outputs = Tensor();
  }
  for (int64_t h : options.ablate_heads) {
    for (int64_t r = 0; r < N * L; ++r) std::fill(concat + r * E + h * hd, concat + r * E + (h + 1) * hd, 0.0f);
  }
  auto write_out_layout = [&](Tensor* dst, const float* src_nle) {
    dst->shape = out_shape;
    dst->data.resize(static_cast<size_t>(N * L * E));
    if (sequence_first_out && N > 1) {
      to_sequence_first(dst->data.data(), src_nle, N, L, E);
    } else {
      std::memcpy(dst->data.data(), src_nle, N * L * E * sizeof(float));
    }
  };
  if (options.return_concat) {
    write_out_layout(&result->concat, concat);
  } else {
    result->concat = Tensor();
  }

  // 9. Out-projection (or W_O skipped).
  if (options.skip_out_proj) {
    write_out_layout(&result->output, concat);
  } else {
    result->output.shape = out_shape;
    result->output.data.resize(static_cast<size_t>(N * L * E));
    const float* b_o = c.bias ? out_proj_bias_.data() : nullptr;
    if (sequence_first_out && N > 1) {
      float* out_nle = base + at_out_t;
      kernels::linear_packed(out_nle, concat, packed_out_proj_weight_.data(), b_o, N * L, E, E);
      to_sequence_first(result->output.data.data(), out_nle, N, L, E);
    } else {
      kernels::linear_packed(result->output.data.data(), concat, packed_out_proj_weight_.data(), b_o, N * L, E, E);
    }
  }

  // 10. Weights: per head (N, H, L, S) or averaged over heads (N, L, S).
  if (options.need_weights) {
    Tensor& w = result->weights;
    if (options.average_attn_weights) {
      w.shape = cs.batched ? Shape{N, L, S_total} : Shape{L, S_total};
      w.data.assign(static_cast<size_t>(N * L * S_total), 0.0f);
      const int64_t map = L * S_total;
      for (int64_t n = 0; n < N; ++n) {
        float* dst = w.data.data() + n * map;
        for (int64_t h = 0; h < H; ++h) {
          const float* src = probs + (n * H + h) * map;
          for (int64_t i = 0; i < map; ++i) dst[i] += src[i];
        }
        const float inv_heads = 1.0f / static_cast<float>(H);
        for (int64_t i = 0; i < map; ++i) dst[i] = dst[i] * inv_heads;
      }
    } else {
      w.shape = cs.batched ? Shape{N, H, L, S_total} : Shape{H, L, S_total};
      w.data.assign(probs, probs + N * H * L * S_total);
    }
  } else {
    result->weights = Tensor();
  }
  return Status::Ok();
}

}  // namespace mha
