// MultiHeadAttention: configuration, parameters by PyTorch name, and the forward pass.
#include "mha/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/parallel.h"
#include "mha/format.h"
#include "mha/kernels.h"

// The checks of a call's shapes, its options and its memory, and their messages, run once a
// call before any data is touched: they are built for size (the WebAssembly module every page
// downloads), the code that computes for speed.
#if defined(__clang__)
#define MHA_FOR_SIZE __attribute__((minsize))
#else
#define MHA_FOR_SIZE
#endif

namespace mha {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

MHA_FOR_SIZE std::string shape_str(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// A byte count held in a double (it may be far beyond int64_t), as text.
std::string bytes_str(double bytes) { return format_g17(bytes); }

MHA_FOR_SIZE Status invalid_shape(const char* what, const Shape& shape) {
  return Status(StatusCode::kInvalidArgument,
                std::string(what) + ": shape " + shape_str(shape) + " is not a valid shape (negative or too large dimensions)");
}

Status check_tensor(const char* what, const float* data, size_t length, const Shape& shape) {
  const int64_t numel = checked_numel(shape);
  if (numel < 0) return invalid_shape(what, shape);
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

// NaN, Infinity or -Infinity, as JavaScript writes them.
const char* non_finite_str(float value) { return std::isnan(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity"; }

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

MHA_FOR_SIZE Status check_positive_dims(const char* what, const Shape& shape) {
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

// ---------------------------------------------------------------------------------------------
// Configuration and parameters

MHA_FOR_SIZE Status MultiHeadAttention::Create(const Config& config, uint64_t seed,
                                               std::unique_ptr<MultiHeadAttention>* out) {
  std::unique_ptr<MultiHeadAttention> mha;
  MHA_RETURN_IF_ERROR(Make(config, false, PackedStorage::kFloat32, &mha));
  mha->reset_parameters(seed);
  *out = std::move(mha);
  return Status::Ok();
}

Status MultiHeadAttention::CreatePacked(const Config& config, std::unique_ptr<MultiHeadAttention>* out,
                                        PackedStorage storage) {
  return Make(config, true, storage, out);
}

MHA_FOR_SIZE Status MultiHeadAttention::Make(const Config& config_in, bool packed_only, PackedStorage storage,
                                             std::unique_ptr<MultiHeadAttention>* out) {
  Config config = config_in;
  if (config.embed_dim <= 0) {
    return Status(StatusCode::kInvalidConfig, "embed_dim must be positive, but got " + std::to_string(config.embed_dim));
  }
  if (config.num_heads <= 0) {
    return Status(StatusCode::kInvalidConfig, "num_heads must be positive, but got " + std::to_string(config.num_heads));
  }
  if (config.head_dim < 0) {
    return Status(StatusCode::kInvalidConfig, "head_dim must be positive, but got " + std::to_string(config.head_dim));
  }
  if (config.head_dim == 0 && config.embed_dim % config.num_heads != 0) {
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
  if (!config.out_dim) config.out_dim = config.embed_dim;
  if (*config.out_dim < 1) {
    return Status(StatusCode::kInvalidConfig, "out_dim must be positive, but got " + std::to_string(*config.out_dim));
  }
  const int64_t head_dim = config.head_dim > 0 ? config.head_dim : config.embed_dim / config.num_heads;
  config.head_dim = head_dim;
  const int64_t kv = config.num_kv_heads * head_dim, qd = config.num_heads * head_dim;
  const double O = double(*config.out_dim);
  // W_q (qd, E), W_k and W_v (kv, kdim | vdim), W_O (O, qd); biases qd + 2 kv and O.
  const double parameter_floats = double(qd) * config.embed_dim + O * qd +
                                  double(kv) * (double(config.kdim) + double(config.vdim)) +
                                  double(qd) + 2.0 * kv + O;
  if (parameter_floats * 4 > double(kDefaultMemoryCapBytes)) {
    return Status(StatusCode::kTooLarge, "the parameters would take " + bytes_str(parameter_floats * 4) +
                                             " bytes, more than the memory cap of " + std::to_string(kDefaultMemoryCapBytes));
  }

  if (config.rotary.enabled()) {
    Rotary& r = config.rotary;
    if (head_dim % 2 != 0) {
      return Status(StatusCode::kInvalidConfig, "rotary positions need an even head_dim, but head_dim is " + std::to_string(head_dim));
    }
    if (config.add_bias_kv || config.add_zero_attn) {
      return Status(StatusCode::kInvalidConfig, "rotary positions are not supported with add_bias_kv or add_zero_attn (their keys have no position)");
    }
    if (!(r.attention_scaling > 0) || !std::isfinite(r.attention_scaling)) {
      return Status(StatusCode::kInvalidConfig, "rotary attention_scaling must be a positive number");
    }
    if (r.inv_freq.empty()) {
      if (!std::isfinite(r.theta)) return Status(StatusCode::kInvalidConfig, "rotary theta must be a positive number");
      // 1 / theta^(i / hd) for i = 0, 2, .., hd - 2, in float32 as modeling_rope_utils.py computes it
      for (int64_t i = 0; i < head_dim; i += 2) {
        const float exponent = static_cast<float>(i) / static_cast<float>(head_dim);
        r.inv_freq.push_back(1.0f / static_cast<float>(std::pow(r.theta, static_cast<double>(exponent))));
      }
    } else if (static_cast<int64_t>(r.inv_freq.size()) != head_dim / 2) {
      return Status(StatusCode::kInvalidConfig, "rotary inv_freq has " + std::to_string(r.inv_freq.size()) +
                                                    " frequencies; expected head_dim / 2 = " + std::to_string(head_dim / 2));
    }
    for (float f : r.inv_freq) {
      if (!std::isfinite(f)) return Status(StatusCode::kInvalidConfig, "rotary inv_freq holds a value that is not finite");
    }
  }

  std::unique_ptr<MultiHeadAttention> mha(new MultiHeadAttention());
  mha->config_ = config;
  mha->head_dim_ = head_dim;
  mha->fusable_ = config.kdim == config.embed_dim && config.vdim == config.embed_dim;
  mha->packed_in_proj_ = mha->fusable_ && config.num_kv_heads == config.num_heads && qd == config.embed_dim;
  const int64_t E = config.embed_dim, out_width = *config.out_dim;
  if (packed_only) {
    if (!mha->fusable_ || config.add_bias_kv) {
      return Status(StatusCode::kInvalidConfig, "a packed module needs kdim = vdim = embed_dim and no bias_k / bias_v");
    }
    mha->packed_only_ = true;
    mha->storage_ = storage;
    const size_t in_size = static_cast<size_t>(kernels::packed_weight_floats(qd + 2 * kv, E));
    const size_t out_size = static_cast<size_t>(kernels::packed_weight_floats(out_width, qd));
    if (storage == PackedStorage::kFloat32) {
      mha->packed_in_proj_weight_.assign(in_size, 0.0f);
      mha->packed_out_proj_weight_.assign(out_size, 0.0f);
    } else {
      mha->packed16_in_proj_weight_.assign(in_size, 0);
      mha->packed16_out_proj_weight_.assign(out_size, 0);
    }
    mha->packed_weights_stale_ = false;
  } else {
    mha->in_proj_weight_.assign(static_cast<size_t>(qd * E + kv * config.kdim + kv * config.vdim), 0.0f);
    mha->out_proj_weight_.assign(static_cast<size_t>(out_width * qd), 0.0f);
  }
  if (config.bias) {
    mha->in_proj_bias_.assign(static_cast<size_t>(qd + 2 * kv), 0.0f);
    mha->out_proj_bias_.assign(static_cast<size_t>(out_width), 0.0f);
  }
  if (config.add_bias_kv) {
    mha->bias_k_.assign(static_cast<size_t>(kv), 0.0f);
    mha->bias_v_.assign(static_cast<size_t>(kv), 0.0f);
  }
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
MHA_FOR_SIZE static bool locate_parameter(MultiHeadAttention& mha, const std::string& name, std::vector<float>& in_w,
                             std::vector<float>& in_b, std::vector<float>& bk, std::vector<float>& bv,
                             std::vector<float>& out_w, std::vector<float>& out_b, ParameterSlot* slot) {
  const Config& c = mha.config();
  const int64_t E = c.embed_dim;
  const int64_t kv = mha.kv_dim(), qd = mha.query_dim();
  // a packed module's in_w is empty until unpacked: the slots' data are then read through it
  if (name == "in_proj_weight" && mha.packed_in_proj()) {
    *slot = {in_w.data(), static_cast<size_t>(3 * E * E), {3 * E, E}};
  } else if (name == "q_proj_weight" && !mha.packed_in_proj()) {
    *slot = {in_w.data(), static_cast<size_t>(qd * E), {qd, E}};
  } else if (name == "k_proj_weight" && !mha.packed_in_proj()) {
    *slot = {in_w.empty() ? nullptr : in_w.data() + qd * E, static_cast<size_t>(kv * c.kdim), {kv, c.kdim}};
  } else if (name == "v_proj_weight" && !mha.packed_in_proj()) {
    *slot = {in_w.empty() ? nullptr : in_w.data() + qd * E + kv * c.kdim, static_cast<size_t>(kv * c.vdim), {kv, c.vdim}};
  } else if (name == "in_proj_bias" && c.bias) {
    *slot = {in_b.data(), in_b.size(), {qd + 2 * kv}};
  } else if (name == "bias_k" && c.add_bias_kv) {
    *slot = {bk.data(), bk.size(), {1, 1, kv}};
  } else if (name == "bias_v" && c.add_bias_kv) {
    *slot = {bv.data(), bv.size(), {1, 1, kv}};
  } else if (name == "out_proj.weight") {
    *slot = {out_w.data(), static_cast<size_t>(mha.out_dim() * qd), {mha.out_dim(), qd}};
  } else if (name == "out_proj.bias" && c.bias) {
    *slot = {out_b.data(), out_b.size(), {mha.out_dim()}};
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

MHA_FOR_SIZE Status MultiHeadAttention::parameter_shape(const std::string& name, Shape* shape) const {
  auto* self = const_cast<MultiHeadAttention*>(this);
  ParameterSlot slot;
  if (!locate_parameter(*self, name, self->in_proj_weight_, self->in_proj_bias_, self->bias_k_, self->bias_v_,
                        self->out_proj_weight_, self->out_proj_bias_, &slot)) {
    return Status(StatusCode::kUnknownParameter, unknown_parameter_message(*this, name));
  }
  *shape = slot.shape;
  return Status::Ok();
}

MHA_FOR_SIZE Status MultiHeadAttention::check_parameter_shape(const std::string& name, const Shape& shape) const {
  Shape expected;
  MHA_RETURN_IF_ERROR(parameter_shape(name, &expected));
  // A bias may also be given flat, as (n) for (1, 1, n).
  const bool flat_ok = (name == "bias_k" || name == "bias_v") && shape.size() == 1 && shape[0] == expected[2];
  if (shape != expected && !flat_ok) {
    return Status(StatusCode::kShapeMismatch, "parameter '" + name + "': expected shape " + shape_str(expected) +
                                                  ", got " + shape_str(shape));
  }
  return Status::Ok();
}

Status MultiHeadAttention::check_parameter(const std::string& name, const float* data, size_t length,
                                           const Shape& shape) const {
  MHA_RETURN_IF_ERROR(check_parameter_shape(name, shape));
  MHA_RETURN_IF_ERROR(check_tensor(("parameter '" + name + "'").c_str(), data, length, shape));
  for (size_t i = 0; i < length; ++i) {
    if (!std::isfinite(data[i])) {
      return Status(StatusCode::kInvalidArgument, "parameter '" + name + "': value " + std::to_string(i) +
                                                      " is not finite (" + non_finite_str(data[i]) + ")");
    }
  }
  return Status::Ok();
}

uint16_t* MultiHeadAttention::packed_storage16(const std::string& name) {
  if (!packed_only_ || storage_ == PackedStorage::kFloat32) return nullptr;
  if (name == "in_proj_weight") return packed16_in_proj_weight_.data();
  if (name == "out_proj.weight") return packed16_out_proj_weight_.data();
  return nullptr;
}

void MultiHeadAttention::in_projection(float* out, const float* in, const float* bias, int64_t rows) const {
  const int64_t E = config_.embed_dim, F = fused_rows();
  if (storage_ == PackedStorage::kFloat32) {
    kernels::linear_packed(out, in, packed_in_proj_weight_.data(), bias, rows, F, E);
  } else {
    kernels::linear_packed16(out, in, packed16_in_proj_weight_.data(), storage_ == PackedStorage::kBfloat16, bias, rows, F, E);
  }
}

void MultiHeadAttention::out_projection(float* out, const float* in, const float* bias, int64_t rows) const {
  const int64_t qd = query_dim();
  if (storage_ == PackedStorage::kFloat32) {
    kernels::linear_packed(out, in, packed_out_proj_weight_.data(), bias, rows, out_dim(), qd);
  } else {
    kernels::linear_packed16(out, in, packed16_out_proj_weight_.data(), storage_ == PackedStorage::kBfloat16, bias, rows,
                             out_dim(), qd);
  }
}

void MultiHeadAttention::unpack_in_proj(float* out) const {
  const int64_t E = config_.embed_dim, F = fused_rows();
  if (storage_ == PackedStorage::kFloat32) {
    kernels::unpack_weight_rows(out, packed_in_proj_weight_.data(), E, 0, F);
  } else {
    kernels::unpack_weight_rows16(out, packed16_in_proj_weight_.data(), storage_ == PackedStorage::kBfloat16, E, 0, F);
  }
}

// cos(p f) and sin(p f) times attention_scaling, (positions, hd), f = [inv_freq, inv_freq]: the
// angle p * f in float32 (transformers' inv_freq @ position_ids), its cos and sin rounded to float32.
void MultiHeadAttention::rotary_tables(int64_t positions) {
  const int64_t hd = head_dim_, half = hd / 2;
  if (static_cast<int64_t>(rotary_cos_.size()) >= positions * hd) return;
  const Rotary& r = config_.rotary;
  rotary_cos_.resize(static_cast<size_t>(positions * hd));
  rotary_sin_.resize(static_cast<size_t>(positions * hd));
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const float angle = r.inv_freq[static_cast<size_t>(i)] * static_cast<float>(p);
      const float c = static_cast<float>(std::cos(static_cast<double>(angle))) * r.attention_scaling;
      const float sn = static_cast<float>(std::sin(static_cast<double>(angle))) * r.attention_scaling;
      rotary_cos_[static_cast<size_t>(p * hd + i)] = rotary_cos_[static_cast<size_t>(p * hd + half + i)] = c;
      rotary_sin_[static_cast<size_t>(p * hd + i)] = rotary_sin_[static_cast<size_t>(p * hd + half + i)] = sn;
    }
  }
}

// x' = x * cos + rotate_half(x) * sin, rotate_half(x) = [-x[half:], x[:half]], in float32 in that order.
void MultiHeadAttention::rotate(float* x, int64_t ld, int64_t rows, int64_t first) const {
  const int64_t hd = head_dim_, half = hd / 2;
  for (int64_t p = 0; p < rows; ++p) {
    float* row = x + p * ld;
    const float* c = rotary_cos_.data() + (first + p) * hd;
    const float* sn = rotary_sin_.data() + (first + p) * hd;
    for (int64_t i = 0; i < half; ++i) {
      const float a = row[i], b = row[half + i];
      row[i] = a * c[i] + (-b) * sn[i];
      row[half + i] = b * c[half + i] + a * sn[half + i];
    }
  }
}

void MultiHeadAttention::widen_storage() {
  if (storage_ == PackedStorage::kFloat32) return;
  const bool bf16 = storage_ == PackedStorage::kBfloat16;
  packed_in_proj_weight_.resize(packed16_in_proj_weight_.size());
  packed_out_proj_weight_.resize(packed16_out_proj_weight_.size());
  kernels::widen16(packed_in_proj_weight_.data(), packed16_in_proj_weight_.data(),
                        static_cast<int64_t>(packed16_in_proj_weight_.size()), bf16);
  kernels::widen16(packed_out_proj_weight_.data(), packed16_out_proj_weight_.data(),
                        static_cast<int64_t>(packed16_out_proj_weight_.size()), bf16);
  std::vector<uint16_t>().swap(packed16_in_proj_weight_);
  std::vector<uint16_t>().swap(packed16_out_proj_weight_);
  storage_ = PackedStorage::kFloat32;
}

float* MultiHeadAttention::packed_storage(const std::string& name) {
  if (!packed_only_) return nullptr;
  if (name == "in_proj_weight") return storage_ == PackedStorage::kFloat32 ? packed_in_proj_weight_.data() : nullptr;
  if (name == "out_proj.weight") return storage_ == PackedStorage::kFloat32 ? packed_out_proj_weight_.data() : nullptr;
  if (name == "in_proj_bias" && config_.bias) return in_proj_bias_.data();
  if (name == "out_proj.bias" && config_.bias) return out_proj_bias_.data();
  return nullptr;
}

size_t MultiHeadAttention::parameter_bytes() const {
  const size_t floats = in_proj_weight_.size() + in_proj_bias_.size() + bias_k_.size() + bias_v_.size() +
                        out_proj_weight_.size() + out_proj_bias_.size() + packed_in_proj_weight_.size() +
                        packed_out_proj_weight_.size() + packed_in_proj_per_head_.size() + in_proj_bias_per_head_.size();
  return floats * sizeof(float) + (packed16_in_proj_weight_.size() + packed16_out_proj_weight_.size()) * sizeof(uint16_t);
}

Status MultiHeadAttention::set_parameter(const std::string& name, const float* data, size_t length,
                                         const Shape& shape) {
  MHA_RETURN_IF_ERROR(check_parameter(name, data, length, shape));
  if (packed_only_ && (name == "in_proj_weight" || name == "out_proj.weight")) {
    widen_storage();  // a value set is float32
    const bool in = name == "in_proj_weight";
    kernels::pack_weight(in ? packed_in_proj_weight_.data() : packed_out_proj_weight_.data(), data, shape[0], shape[1]);
    if (in) {
      packed_in_proj_per_head_.clear();
      in_proj_weight_.clear();  // an unpacked copy made for a cross-attention call
    }
    return Status::Ok();
  }
  if (packed_only_ && (name == "q_proj_weight" || name == "k_proj_weight" || name == "v_proj_weight")) {
    // one part of the fused packing: the whole unpacked, the part written, the whole packed again
    widen_storage();
    std::vector<float> rows(static_cast<size_t>(fused_rows() * config_.embed_dim));
    unpack_in_proj(rows.data());
    const int64_t E = config_.embed_dim;
    const int64_t first = name == "q_proj_weight" ? 0 : name == "k_proj_weight" ? query_dim() : query_dim() + kv_dim();
    std::memcpy(rows.data() + first * E, data, length * sizeof(float));
    kernels::pack_weight(packed_in_proj_weight_.data(), rows.data(), fused_rows(), E);
    packed_in_proj_per_head_.clear();
    in_proj_weight_.clear();
    return Status::Ok();
  }
  if (packed_only_ && name == "in_proj_bias") packed_in_proj_per_head_.clear();
  ParameterSlot slot;
  locate_parameter(*this, name, in_proj_weight_, in_proj_bias_, bias_k_, bias_v_, out_proj_weight_, out_proj_bias_,
                   &slot);
  std::memcpy(slot.data, data, length * sizeof(float));
  if (!packed_only_) packed_weights_stale_ = true;
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
  if (packed_only_ && (name == "q_proj_weight" || name == "k_proj_weight" || name == "v_proj_weight")) {
    std::vector<float> rows(static_cast<size_t>(fused_rows() * config_.embed_dim));
    unpack_in_proj(rows.data());
    const int64_t E = config_.embed_dim;
    const int64_t first = name == "q_proj_weight" ? 0 : name == "k_proj_weight" ? query_dim() : query_dim() + kv_dim();
    out->data.assign(rows.begin() + first * E, rows.begin() + (first + slot.shape[0]) * E);
    return Status::Ok();
  }
  if (packed_only_ && (name == "in_proj_weight" || name == "out_proj.weight")) {
    out->data.resize(static_cast<size_t>(slot.shape[0] * slot.shape[1]));
    if (name == "in_proj_weight") {
      unpack_in_proj(out->data.data());
    } else if (storage_ == PackedStorage::kFloat32) {
      kernels::unpack_weight_rows(out->data.data(), packed_out_proj_weight_.data(), slot.shape[1], 0, slot.shape[0]);
    } else {
      kernels::unpack_weight_rows16(out->data.data(), packed16_out_proj_weight_.data(), storage_ == PackedStorage::kBfloat16,
                                    slot.shape[1], 0, slot.shape[0]);
    }
    return Status::Ok();
  }
  out->data.assign(slot.data, slot.data + slot.count);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Forward: validate, plan, project, attend, assemble (the list in attention.h)

namespace {

// How q, k and v come out of the in-projection; chosen once, by validate().
enum class Projection {
  // Self-attention: one GEMM, (N*L, E) . in_proj_weight(3E, E)^T -> qkv (N*L, 3E).
  kFused,
  // Self-attention without weights at large sizes: per (batch, head) pair,
  // (L, E) . [W_q,h; W_k,h; W_v,h](3hd, E)^T -> (L, 3hd), so memory stays O(L * hd).
  kPerHead,
  // Cross-attention, or keys extended by bias_k / the zero row: q (N*L, E), k and v
  // (N*S_total, kv) each by its own GEMM.
  kSeparate,
};

// Above this many floats of fused projection (N * L * 3E), self-attention without weights
// projects per head. Below it the fused GEMM wins: it packs the input once, per-head GEMMs H times.
constexpr double kPerHeadProjectionFloats = 1 << 21;
// Attention gives whole (batch, head) pairs to each thread only above this much work (MACs of
// q . k^T and P . V); below it the kernels split each pair's query blocks.
constexpr double kParallelPairsMinMacs = 1 << 20;

// A mask's dtype and shape, before its data is read.
MHA_FOR_SIZE Status check_mask_kind(const char* what, MaskDtype dtype, const Shape& shape) {
  if (dtype == MaskDtype::kNone) return Status::Ok();
  if (dtype != MaskDtype::kBool && dtype != MaskDtype::kFloat) {
    return Status(StatusCode::kInvalidDtype, std::string(what) + ": only bool and float masks are supported");
  }
  return checked_numel(shape) < 0 ? invalid_shape(what, shape) : Status::Ok();
}

Status check_mask(const char* what, const MaskView& mask) {
  if (mask.dtype == MaskDtype::kNone) return Status::Ok();
  MHA_RETURN_IF_ERROR(check_mask_kind(what, mask.dtype, mask.shape));
  const int64_t numel = checked_numel(mask.shape);
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

// Buffers, lengths, finite values and mask dtypes: what holds before any shape is read.
Status check_buffers(const TensorView& query, const TensorView& key, const TensorView& value,
                     const MaskView& key_padding_mask, const MaskView& attn_mask) {
  MHA_RETURN_IF_ERROR(check_tensor("query", query.data, query.length, query.shape));
  MHA_RETURN_IF_ERROR(check_tensor("key", key.data, key.length, key.shape));
  MHA_RETURN_IF_ERROR(check_tensor("value", value.data, value.length, value.shape));
  MHA_RETURN_IF_ERROR(check_finite("query", query.data, query.length));
  if (key.data != query.data) MHA_RETURN_IF_ERROR(check_finite("key", key.data, key.length));
  if (value.data != query.data && value.data != key.data) MHA_RETURN_IF_ERROR(check_finite("value", value.data, value.length));
  MHA_RETURN_IF_ERROR(check_mask("key_padding_mask", key_padding_mask));
  return check_mask("attn_mask", attn_mask);
}

// What a call's inputs are, without their data.
CallShapes shapes_of(const TensorView& query, const TensorView& key, const TensorView& value,
                     const MaskView& key_padding_mask, const MaskView& attn_mask) {
  CallShapes shapes;
  shapes.query = query.shape;
  shapes.key = key.shape;
  shapes.value = value.shape;
  shapes.key_padding_mask = key_padding_mask.shape;
  shapes.attn_mask = attn_mask.shape;
  shapes.key_padding_mask_dtype = key_padding_mask.dtype;
  shapes.attn_mask_dtype = attn_mask.dtype;
  shapes.key_is_query = key.data == query.data;
  shapes.value_is_key = value.data == key.data;
  return shapes;
}

// The bytes of a call's inputs, each buffer once, and (unless parts is null) their names and
// sizes for a message: "query 2048, key 1024". Every shape is valid (checked_numel >= 0).
MHA_FOR_SIZE double input_bytes(const CallShapes& shapes, std::string* parts) {
  const auto bytes = [](const Shape& shape, bool one_byte) { return double(checked_numel(shape)) * (one_byte ? 1 : sizeof(float)); };
  const struct {
    const char* name;
    bool held;
    double bytes;
  } inputs[] = {
      {"query", true, bytes(shapes.query, false)},
      {"key", !shapes.key_is_query, bytes(shapes.key, false)},
      {"value", !shapes.value_is_key, bytes(shapes.value, false)},
      {"key_padding_mask", shapes.key_padding_mask_dtype != MaskDtype::kNone,
       bytes(shapes.key_padding_mask, shapes.key_padding_mask_dtype == MaskDtype::kBool)},
      {"attn_mask", shapes.attn_mask_dtype != MaskDtype::kNone, bytes(shapes.attn_mask, shapes.attn_mask_dtype == MaskDtype::kBool)},
  };
  double total = 0;
  for (const auto& input : inputs) {
    if (!input.held) continue;
    total += input.bytes;
    if (parts) *parts += (parts->empty() ? "" : ", ") + std::string(input.name) + " " + bytes_str(input.bytes);
  }
  return total;
}

// Batched (3-D) or unbatched (2-D): query, key and value agree, and key_padding_mask has one
// dimension fewer. PyTorch's wording.
MHA_FOR_SIZE Status check_ranks(const CallShapes& shapes) {
  const size_t qdim = shapes.query.size();
  if (qdim != 3 && qdim != 2) {
    return Status(StatusCode::kShapeMismatch, "query should be unbatched 2D or batched 3D tensor but received " +
                                                  std::to_string(qdim) + "-D query tensor of shape " + shape_str(shapes.query));
  }
  const std::string kind = qdim == 3 ? "batched (3-D)" : "unbatched (2-D)";
  const std::string rank = qdim == 3 ? "3-D" : "2-D";
  if (shapes.key.size() != qdim || shapes.value.size() != qdim) {
    return Status(StatusCode::kShapeMismatch,
                  "For " + kind + " `query`, expected `key` and `value` to be " + rank + " but found " +
                      std::to_string(shapes.key.size()) + "-D and " + std::to_string(shapes.value.size()) +
                      "-D tensors respectively");
  }
  if (shapes.key_padding_mask_dtype != MaskDtype::kNone && shapes.key_padding_mask.size() != qdim - 1) {
    return Status(StatusCode::kShapeMismatch, "For " + kind + " `query`, expected `key_padding_mask` to be `None` or " +
                                                  (qdim == 3 ? "2-D" : "1-D") + " but found " +
                                                  std::to_string(shapes.key_padding_mask.size()) + "-D tensor instead");
  }
  MHA_RETURN_IF_ERROR(check_positive_dims("query", shapes.query));
  MHA_RETURN_IF_ERROR(check_positive_dims("key", shapes.key));
  return check_positive_dims("value", shapes.value);
}

// The masks' shapes against N, L, S: key_padding_mask (N, S) / (S); attn_mask (L, S) or
// (N*H, L, S). Sets *per_head when attn_mask has one map per (batch, head).
MHA_FOR_SIZE Status check_mask_shapes(const CallShapes& shapes, bool batched, int64_t N, int64_t H, int64_t L, int64_t S,
                         bool* per_head) {
  if (shapes.key_padding_mask_dtype != MaskDtype::kNone) {
    const Shape expected = batched ? Shape{N, S} : Shape{S};
    if (shapes.key_padding_mask != expected) {
      return Status(StatusCode::kShapeMismatch, "expecting key_padding_mask shape of " + shape_str(expected) +
                                                    ", but got " + shape_str(shapes.key_padding_mask));
    }
  }
  *per_head = false;
  const Shape& attn_mask = shapes.attn_mask;
  if (shapes.attn_mask_dtype == MaskDtype::kNone) return Status::Ok();
  if (attn_mask.size() == 2) {
    if (attn_mask != Shape{L, S}) {
      return Status(StatusCode::kShapeMismatch, "The shape of the 2D attn_mask is " + shape_str(attn_mask) +
                                                    ", but should be " + shape_str({L, S}) + ".");
    }
  } else if (attn_mask.size() == 3) {
    if (attn_mask != Shape{N * H, L, S}) {
      return Status(StatusCode::kShapeMismatch, "The shape of the 3D attn_mask is " + shape_str(attn_mask) +
                                                    ", but should be " + shape_str({N * H, L, S}) + ".");
    }
    *per_head = true;
  } else {
    return Status(StatusCode::kShapeMismatch, "attn_mask's dimension " + std::to_string(attn_mask.size()) +
                                                  " is not supported (expected 2-D (L, S) or 3-D (N*num_heads, L, S))");
  }
  return Status::Ok();
}

MHA_FOR_SIZE Status check_options(const ForwardOptions& options, int64_t H) {
  for (int64_t h : options.ablate_heads) {
    if (h < 0 || h >= H) {
      return Status(StatusCode::kInvalidArgument, "ablate_heads: head index " + std::to_string(h) +
                                                      " is out of range; expected an integer from 0 to " + std::to_string(H - 1));
    }
  }
  return Status::Ok();
}

}  // namespace

// What validate() resolves from one call's inputs; every later step reads it.
struct MultiHeadAttention::Call {
  const TensorView* query = nullptr;
  const TensorView* key = nullptr;
  const TensorView* value = nullptr;
  const MaskView* key_padding_mask = nullptr;
  const MaskView* attn_mask = nullptr;
  const ForwardOptions* options = nullptr;
  bool batched = true;
  int64_t N = 1, L = 0, S = 0;
  int64_t S_total = 0;              // S, plus a row for bias_k, plus the zero-attention row
  bool self_attention = false;      // one buffer and one shape for query, key and value
  bool sequence_first = false;      // (L, N, E) with N > 1: inputs and outputs are transposed
  bool attn_mask_per_head = false;  // attn_mask is (N*H, L, S), index n*H + h
  bool causal = false;              // is_causal, and no attn_mask given
  MaskDtype key_padding_mask_dtype = MaskDtype::kNone;
  MaskDtype attn_mask_dtype = MaskDtype::kNone;
  int64_t attn_mask_numel = 0;
  Projection projection = Projection::kSeparate;
};

// Where a call's scratch lies in workspace_ (offsets in floats; 0 for a buffer not used), and
// how attention is shared between threads.
struct MultiHeadAttention::Workspace {
  size_t query_t = 0, key_t = 0, value_t = 0;  // inputs in batch-first order
  size_t qkv = 0;                              // kFused: (N*L, 3E)
  size_t qkv_head = 0;                         // kPerHead: pair_scratches x (L, 3hd)
  size_t q = 0, k = 0, v = 0;                  // kSeparate: (N*L, E), (N*S_total, kv) twice
  size_t concat = 0;                           // (N, L, E): head outputs side by side
  size_t probs = 0;                            // need_weights: (N, H, L, S_total)
  size_t attn_mask = 0;                        // a bool attn_mask as 0 / -inf
  size_t key_mask = 0;                         // key_padding_mask as 0 / -inf or its floats, (N, S)
  size_t streaming = 0;                        // !need_weights: pair_scratches x streaming_floats
  size_t out_t = 0;                            // sequence-first output before its transpose
  size_t size = 0;
  int64_t streaming_floats = 0;
  bool split_pairs = false;                    // whole (batch, head) pairs per thread
  int64_t pair_scratches = 1;                  // scratch copies: one per thread when split_pairs
  float* base = nullptr;                       // workspace_.data(), once grown

  size_t reserve(size_t floats) {
    const size_t at = size;
    size += floats;
    return at;
  }
  float* at(size_t offset) const { return base + offset; }
};

// q, k and v after the in-projection, with their row strides (nullptr for kPerHead: each pair
// projects its own in attend()).
struct MultiHeadAttention::Projected {
  const float* query_nle = nullptr;  // the query in batch-first order (N, L, E)
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  int64_t ld_q = 0, ld_kv = 0;
};

// The shapes of a call against the config, before any data is read: ranks, widths, batch
// sizes, masks and options. On success *call holds N, L, S and how the call is computed (its
// pointers to the inputs unset).
MHA_FOR_SIZE Status MultiHeadAttention::resolve(const CallShapes& shapes, const ForwardOptions& options, Call* call) const {
  const Config& c = config_;
  MHA_RETURN_IF_ERROR(check_ranks(shapes));
  // N, L, S from the layout: (N, L, E) batch_first, (L, N, E) otherwise, (L, E) unbatched.
  const Shape &query = shapes.query, &key = shapes.key, &value = shapes.value;
  Call& r = *call;
  r = Call();
  r.options = &options;
  r.batched = query.size() == 3;
  int64_t key_batch = 1, value_batch = 1, value_len = 0;
  if (r.batched) {
    const int b = c.batch_first ? 0 : 1, s = c.batch_first ? 1 : 0;
    r.N = query[b];
    r.L = query[s];
    key_batch = key[b];
    r.S = key[s];
    value_batch = value[b];
    value_len = value[s];
  } else {
    r.L = query[0];
    r.S = key[0];
    value_len = value[0];
  }
  if (query.back() != c.embed_dim) {
    return Status(StatusCode::kShapeMismatch, "was expecting embedding dimension of " + std::to_string(c.embed_dim) +
                                                  ", but got " + std::to_string(query.back()) + " (query shape " +
                                                  shape_str(query) + ")");
  }
  if (key.back() != c.kdim) {
    return Status(StatusCode::kShapeMismatch, "key: expected last dimension kdim = " + std::to_string(c.kdim) +
                                                  ", but got " + std::to_string(key.back()) + " (key shape " +
                                                  shape_str(key) + ")");
  }
  if (value.back() != c.vdim) {
    return Status(StatusCode::kShapeMismatch, "value: expected last dimension vdim = " + std::to_string(c.vdim) +
                                                  ", but got " + std::to_string(value.back()) + " (value shape " +
                                                  shape_str(value) + ")");
  }
  if (key_batch != value_batch || r.S != value_len) {
    return Status(StatusCode::kShapeMismatch, "key's sequence and batch dims " + shape_str({key[0], key.size() == 3 ? key[1] : 0}) +
                                                  " do not match value's " + shape_str({value[0], value.size() == 3 ? value[1] : 0}));
  }
  if (key_batch != r.N) {
    return Status(StatusCode::kShapeMismatch, "key and value batch size " + std::to_string(key_batch) +
                                                  " does not match query batch size " + std::to_string(r.N));
  }
  MHA_RETURN_IF_ERROR(check_mask_shapes(shapes, r.batched, r.N, c.num_heads, r.L, r.S, &r.attn_mask_per_head));
  MHA_RETURN_IF_ERROR(check_options(options, c.num_heads));

  r.S_total = r.S + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  r.self_attention = fusable_ && shapes.key_is_query && shapes.value_is_key && query == key && key == value;
  r.sequence_first = r.batched && !c.batch_first && r.N > 1;
  r.causal = options.is_causal && shapes.attn_mask_dtype == MaskDtype::kNone;
  r.key_padding_mask_dtype = shapes.key_padding_mask_dtype;
  r.attn_mask_dtype = shapes.attn_mask_dtype;
  r.attn_mask_numel = shapes.attn_mask_dtype == MaskDtype::kNone ? 0 : checked_numel(shapes.attn_mask);
  if (!r.self_attention || r.S_total != r.S) {
    r.projection = Projection::kSeparate;
  } else if (packed_in_proj_ && !c.rotary.enabled() && !options.need_weights && double(r.N) * r.L * 3 * c.embed_dim > kPerHeadProjectionFloats) {
    r.projection = Projection::kPerHead;
  } else {
    r.projection = Projection::kFused;
  }
  return Status::Ok();
}

// The whole call against the cap, in doubles (no overflow): the inputs, the workspace plan()
// lays out, and what the call returns (output, concat, weights, head outputs).
MHA_FOR_SIZE Status MultiHeadAttention::check_memory(const CallShapes& shapes, const Call& call) const {
  const Config& c = config_;
  const ForwardOptions& options = *call.options;
  const int64_t E = c.embed_dim, H = c.num_heads, hd = head_dim_, qd = query_dim();
  const double N = double(call.N), L = double(call.L);
  const double input = input_bytes(shapes, nullptr);
  const double workspace = double(layout(call).size) * sizeof(float);
  const double output_floats = N * L * (options.skip_out_proj ? qd : out_dim()) + (options.return_concat ? N * L * qd : 0) +
                               (options.need_weights ? N * L * call.S_total * (options.average_attn_weights ? 1 : H) : 0) +
                               (options.return_head_outputs ? N * H * L * hd : 0);
  const double output = output_floats * sizeof(float);
  const double total = input + workspace + output;
  if (total <= static_cast<double>(memory_cap_bytes_)) return Status::Ok();
  std::string inputs;
  input_bytes(shapes, &inputs);
  return Status(StatusCode::kTooLarge,
                "this call needs " + bytes_str(total) + " bytes, more than the memory cap of " +
                    bytes_str(static_cast<double>(memory_cap_bytes_)) + " bytes: inputs " + bytes_str(input) + " (" + inputs +
                    "), workspace " + bytes_str(workspace) + ", outputs " + bytes_str(output) + " (N=" +
                    std::to_string(call.N) + ", L=" + std::to_string(call.L) + ", S=" + std::to_string(call.S) +
                    ", E=" + std::to_string(E) + (options.need_weights ? ", with weights" : "") + ")");
}

MHA_FOR_SIZE Status MultiHeadAttention::check_call_memory(const CallShapes& shapes, const ForwardOptions& options) const {
  const struct {
    const char* name;
    const Shape& shape;
  } tensors[] = {{"query", shapes.query}, {"key", shapes.key}, {"value", shapes.value}};
  for (const auto& t : tensors) {
    if (checked_numel(t.shape) < 0) return invalid_shape(t.name, t.shape);
  }
  MHA_RETURN_IF_ERROR(check_mask_kind("key_padding_mask", shapes.key_padding_mask_dtype, shapes.key_padding_mask));
  MHA_RETURN_IF_ERROR(check_mask_kind("attn_mask", shapes.attn_mask_dtype, shapes.attn_mask));
  Call call;
  MHA_RETURN_IF_ERROR(resolve(shapes, options, &call));
  return check_memory(shapes, call);
}

// 1. Every shape, length, dtype, value and option, and the memory the call takes, before
// anything is touched. On success *call holds the call resolved: N, L, S and the strategy.
Status MultiHeadAttention::validate(const TensorView& query, const TensorView& key, const TensorView& value,
                                    const MaskView& key_padding_mask, const MaskView& attn_mask,
                                    const ForwardOptions& options, Call* call) const {
  MHA_RETURN_IF_ERROR(check_buffers(query, key, value, key_padding_mask, attn_mask));
  const CallShapes shapes = shapes_of(query, key, value, key_padding_mask, attn_mask);
  MHA_RETURN_IF_ERROR(resolve(shapes, options, call));
  call->query = &query, call->key = &key, call->value = &value;
  call->key_padding_mask = &key_padding_mask, call->attn_mask = &attn_mask;
  return check_memory(shapes, *call);
}

// The workspace of a call: each buffer the call uses gets its offset; size is their total.
MultiHeadAttention::Workspace MultiHeadAttention::layout(const Call& call) const {
  const Config& c = config_;
  const ForwardOptions& options = *call.options;
  const int64_t E = c.embed_dim, H = c.num_heads, hd = head_dim_, kv = kv_dim(), qd = query_dim();
  const int64_t N = call.N, L = call.L, S = call.S, S_total = call.S_total;
  Workspace ws;
  // Whole (batch, head) pairs go to each thread when there are enough of them to share out
  // evenly and enough work to be worth it (each thread then packs its own K and V, in its own
  // scratch, and no thread waits on the other between heads).
  const int threads = kernels::num_threads();
  const int64_t pairs = N * H;
  ws.split_pairs = threads > 1 && (pairs % threads == 0 || pairs >= 4 * threads) &&
                   double(pairs) * L * S_total * hd * 2 >= kParallelPairsMinMacs;
  ws.pair_scratches = ws.split_pairs ? threads : 1;
  if (call.sequence_first) {
    ws.query_t = ws.reserve(N * L * E);
    if (!call.self_attention) {
      ws.key_t = ws.reserve(N * S * c.kdim);
      ws.value_t = ws.reserve(N * S * c.vdim);
    }
  }
  if (call.projection == Projection::kFused) ws.qkv = ws.reserve(N * L * fused_rows());
  if (call.projection == Projection::kPerHead) ws.qkv_head = ws.reserve(ws.pair_scratches * L * 3 * hd);
  if (call.projection == Projection::kSeparate) {
    ws.q = ws.reserve(N * L * qd);
    ws.k = ws.reserve(N * S_total * kv);
    ws.v = ws.reserve(N * S_total * kv);
  }
  ws.concat = ws.reserve(N * L * qd);
  if (options.need_weights) ws.probs = ws.reserve(N * H * L * S_total);
  if (call.attn_mask_dtype == MaskDtype::kBool) ws.attn_mask = ws.reserve(call.attn_mask_numel);
  if (call.key_padding_mask_dtype != MaskDtype::kNone) ws.key_mask = ws.reserve(N * S);
  if (!options.need_weights) {
    ws.streaming_floats = kernels::attention_streaming_scratch_floats(L, S_total, hd);
    ws.streaming = ws.reserve(ws.pair_scratches * ws.streaming_floats);
  }
  if (call.sequence_first && !options.skip_out_proj) ws.out_t = ws.reserve(N * L * out_dim());
  return ws;
}

// 2. The workspace laid out, and workspace_ grown to hold it.
MultiHeadAttention::Workspace MultiHeadAttention::plan(const Call& call) {
  Workspace ws = layout(call);
  grow(*workspace_, ws.size);
  ws.base = workspace_->data();
  return ws;
}

// The weights packed for the GEMM once, then reused until a parameter changes; each packing is
// made on first use (the fused one, the per-head one), so only those used take memory.
void MultiHeadAttention::pack_weights(const Call& call) {
  const int64_t E = config_.embed_dim, H = config_.num_heads, hd = head_dim_, qd = query_dim();
  if (packed_only_ && in_proj_weight_.empty() && call.projection != Projection::kFused) {
    // the per-head and separate projections read in_proj_weight's rows: unpacked once, kept
    in_proj_weight_.resize(static_cast<size_t>(fused_rows() * E));
    unpack_in_proj(in_proj_weight_.data());
  }
  if (packed_weights_stale_) {
    packed_in_proj_weight_.clear();
    packed_in_proj_per_head_.clear();
    packed_out_proj_weight_.resize(static_cast<size_t>(kernels::packed_weight_floats(out_dim(), qd)));
    kernels::pack_weight(packed_out_proj_weight_.data(), out_proj_weight_.data(), out_dim(), qd);
    packed_weights_stale_ = false;
  }
  if (!packed_only_ && call.projection == Projection::kFused && packed_in_proj_weight_.empty()) {
    // [W_q; W_k; W_v] are in_proj_weight_'s rows back to back, whatever G: one packing, one GEMM
    packed_in_proj_weight_.resize(static_cast<size_t>(kernels::packed_weight_floats(fused_rows(), E)));
    kernels::pack_weight(packed_in_proj_weight_.data(), in_proj_weight_.data(), fused_rows(), E);
  }
  if (call.projection == Projection::kPerHead && packed_in_proj_per_head_.empty()) {
    const int64_t per_head = kernels::packed_weight_floats(3 * hd, E);
    packed_in_proj_per_head_.resize(static_cast<size_t>(H * per_head));
    in_proj_bias_per_head_.assign(config_.bias ? static_cast<size_t>(3 * E) : 0, 0.0f);
    std::vector<float> rows(static_cast<size_t>(3 * hd * E));
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t part = 0; part < 3; ++part) {  // q, k, v rows of head h
        std::memcpy(rows.data() + part * hd * E, in_proj_weight_.data() + (part * E + h * hd) * E,
                    hd * E * sizeof(float));
        if (config_.bias)
          std::memcpy(in_proj_bias_per_head_.data() + h * 3 * hd + part * hd,
                      in_proj_bias_.data() + part * E + h * hd, hd * sizeof(float));
      }
      kernels::pack_weight(packed_in_proj_per_head_.data() + h * per_head, rows.data(), 3 * hd, E);
    }
  }
}

// 3. Inputs in batch-first order, (N, L, E), (N, S, kdim), (N, S, vdim); then q, k, v by the
// in-projection with bias, as call.projection says. q is scaled by 1/sqrt(hd) in attend().
MultiHeadAttention::Projected MultiHeadAttention::project(const Call& call, const Workspace& ws) {
  const Config& c = config_;
  const int64_t E = c.embed_dim, hd = head_dim_, kv = kv_dim(), qd = query_dim();
  const int64_t N = call.N, L = call.L, S = call.S, S_total = call.S_total;
  Projected p;
  p.query_nle = call.query->data;
  const float* key_nsk = call.key->data;
  const float* value_nsv = call.value->data;
  if (call.sequence_first) {
    to_batch_first(ws.at(ws.query_t), call.query->data, L, N, E);
    p.query_nle = ws.at(ws.query_t);
    if (call.self_attention) {
      key_nsk = value_nsv = p.query_nle;
    } else {
      to_batch_first(ws.at(ws.key_t), call.key->data, S, N, c.kdim);
      to_batch_first(ws.at(ws.value_t), call.value->data, S, N, c.vdim);
      key_nsk = ws.at(ws.key_t);
      value_nsv = ws.at(ws.value_t);
    }
  }
  pack_weights(call);
  // the unpacked rows, where the projection reads them (a packed module's fused path has none)
  const float* w_q = in_proj_weight_.empty() ? nullptr : in_proj_weight_.data();
  const float* w_k = w_q ? w_q + qd * E : nullptr;
  const float* w_v = w_q ? w_k + kv * c.kdim : nullptr;
  const float* b_q = c.bias ? in_proj_bias_.data() : nullptr;
  const float* b_k = c.bias ? b_q + qd : nullptr;
  const float* b_v = c.bias ? b_q + qd + kv : nullptr;
  switch (call.projection) {
    case Projection::kPerHead:
      p.ld_q = p.ld_kv = 3 * hd;
      break;
    case Projection::kFused: {
      float* qkv = ws.at(ws.qkv);
      in_projection(qkv, p.query_nle, b_q, N * L);
      p.q = qkv;
      p.k = qkv + qd;
      p.v = qkv + qd + kv;
      p.ld_q = p.ld_kv = fused_rows();
      break;
    }
    case Projection::kSeparate:
      p.q = ws.at(ws.q);
      p.k = ws.at(ws.k);
      p.v = ws.at(ws.v);
      p.ld_q = qd;
      p.ld_kv = kv;
      kernels::linear(p.q, p.query_nle, w_q, b_q, N * L, qd, E);
      if (S_total == S) {
        kernels::linear(p.k, key_nsk, w_k, b_k, N * S, kv, c.kdim);
        kernels::linear(p.v, value_nsv, w_v, b_v, N * S, kv, c.vdim);
        break;
      }
      // Each batch item's S keys go into its S_total rows, then bias_k / zeros are appended.
      for (int64_t n = 0; n < N; ++n) {
        float* k_n = p.k + n * S_total * kv;
        float* v_n = p.v + n * S_total * kv;
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
      break;
  }
  if (c.rotary.enabled()) {  // never kPerHead (resolve)
    // q of every head at positions 0 .. L-1, k of every kv head at 0 .. S-1
    rotary_tables(std::max(L, S));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t h = 0; h < c.num_heads; ++h) rotate(p.q + n * L * p.ld_q + h * hd, p.ld_q, L);
      for (int64_t g = 0; g < c.num_kv_heads; ++g) rotate(p.k + n * S_total * p.ld_kv + g * hd, p.ld_kv, S);
    }
  }
  return p;
}

// 4. Attention per (batch, head) pair: the masks as additive floats, attn_mask (1 or N*H, L, S)
// and key padding (N, S); then per pair q scaled by 1/sqrt(hd), scores, softmax, weights . V
// into the pair's columns of concat. kv head g serves query heads g*H/G .. (g+1)*H/G - 1.
void MultiHeadAttention::attend(const Call& call, const Workspace& ws, const Projected& p) {
  const MaskView& attn_mask = *call.attn_mask;
  const MaskView& key_padding_mask = *call.key_padding_mask;
  const float* attn_add = nullptr;
  if (attn_mask.dtype == MaskDtype::kBool) {
    float* converted = ws.at(ws.attn_mask);
    for (size_t i = 0; i < attn_mask.length; ++i) converted[i] = mask_value(attn_mask, int64_t(i));
    attn_add = converted;
  } else if (attn_mask.dtype == MaskDtype::kFloat) {
    attn_add = static_cast<const float*>(attn_mask.data);
  }
  const float* key_add = nullptr;
  if (key_padding_mask.dtype != MaskDtype::kNone) {
    float* converted = ws.at(ws.key_mask);
    for (int64_t i = 0; i < call.N * call.S; ++i) converted[i] = mask_value(key_padding_mask, i);
    key_add = converted;
  }
  const int64_t pairs = call.N * config_.num_heads;
  auto attend_pair = [&](int64_t pair, int slot) {  // slot: which of the pair_scratches to use
    attend_head(call, ws, p, attn_add, key_add, pair, slot);
  };
  if (ws.split_pairs) {
    kernels::parallel_for(pairs, 1, [&](int64_t p0, int64_t p1, int thread) {
      for (int64_t pair = p0; pair < p1; ++pair) attend_pair(pair, thread);
    });
  } else {
    for (int64_t pair = 0; pair < pairs; ++pair) attend_pair(pair, 0);
  }
}

// One (batch n, head h) pair of attend(); slot picks its scratch.
void MultiHeadAttention::attend_head(const Call& call, const Workspace& ws, const Projected& p,
                                     const float* attn_add, const float* key_add, int64_t pair, int slot) const {
  const Config& c = config_;
  const ForwardOptions& options = *call.options;
  const int64_t E = c.embed_dim, H = c.num_heads, hd = head_dim_, qd = query_dim();
  const int64_t L = call.L, S = call.S, S_total = call.S_total;
  const int64_t n = pair / H, h = pair % H, g = h / (H / c.num_kv_heads);
  kernels::MaskSpec mask;
  if (attn_add != nullptr) {
    mask.attn = attn_add + (call.attn_mask_per_head ? (n * H + h) * L * S : 0);
    mask.ld_attn = S;
  }
  mask.key = key_add != nullptr ? key_add + n * S : nullptr;
  mask.causal = call.causal;
  mask.mask_cols = S;
  float* q_nh;
  const float* k_ng;
  const float* v_ng;
  if (call.projection == Projection::kPerHead) {
    // q, k, v of head h for batch item n: (L, 3*hd).
    float* qkv_h = ws.at(ws.qkv_head) + slot * L * 3 * hd;
    const int64_t per_head = kernels::packed_weight_floats(3 * hd, E);
    kernels::linear_packed(qkv_h, p.query_nle + n * L * E, packed_in_proj_per_head_.data() + h * per_head,
                           c.bias ? in_proj_bias_per_head_.data() + h * 3 * hd : nullptr, L, 3 * hd, E);
    q_nh = qkv_h;
    k_ng = qkv_h + hd;
    v_ng = qkv_h + 2 * hd;
  } else {
    q_nh = p.q + n * L * p.ld_q + h * hd;
    k_ng = p.k + n * S_total * p.ld_kv + g * hd;
    v_ng = p.v + n * S_total * p.ld_kv + g * hd;
  }
  const float inv_sqrt_hd = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int64_t l = 0; l < L; ++l)
    for (int64_t d = 0; d < hd; ++d) q_nh[l * p.ld_q + d] *= inv_sqrt_hd;
  float* out_nh = ws.at(ws.concat) + n * L * qd + h * hd;
  if (options.need_weights) {
    float* probs_nh = ws.at(ws.probs) + (n * H + h) * L * S_total;
    kernels::attention_with_probs(out_nh, qd, probs_nh, S_total, q_nh, p.ld_q, k_ng, p.ld_kv, v_ng, p.ld_kv, mask, L,
                                  S_total, hd, options.fully_masked_rows_zero);
  } else {
    kernels::attention_streaming(out_nh, qd, q_nh, p.ld_q, k_ng, p.ld_kv, v_ng, p.ld_kv, mask, L, S_total, hd,
                                 options.fully_masked_rows_zero, ws.at(ws.streaming) + slot * ws.streaming_floats);
  }
}

// 5. What the call returns: each head's output, ablation, the concatenation, the
// out-projection (or W_O skipped), and the weights per head (N, H, L, S) or averaged (N, L, S).
void MultiHeadAttention::assemble(const Call& call, const Workspace& ws, ForwardResult* result) const {
  const Config& c = config_;
  const ForwardOptions& options = *call.options;
  // E here is the concatenation's width, H * hd (embed_dim unless head_dim is set)
  const int64_t E = query_dim(), H = c.num_heads, hd = head_dim_, O = out_dim();
  const int64_t N = call.N, L = call.L, S_total = call.S_total;
  float* concat = ws.at(ws.concat);  // (N, L, E)
  const auto layout_shape = [&](int64_t D) {
    return !call.batched ? Shape{L, D} : (c.batch_first ? Shape{N, L, D} : Shape{L, N, D});
  };
  if (options.return_head_outputs) {
    result->head_outputs.shape = call.batched ? Shape{N, H, L, hd} : Shape{H, L, hd};
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
  const Shape concat_shape = layout_shape(E), output_shape = layout_shape(O);
  // (N, L, D) in the output's layout (the shapes copied, so that a result's buffers are reused).
  auto write_out_layout = [&](Tensor* dst, const float* src_nld, int64_t D) {
    dst->shape = D == E ? concat_shape : output_shape;
    dst->data.resize(static_cast<size_t>(N * L * D));
    if (call.sequence_first) {
      to_sequence_first(dst->data.data(), src_nld, N, L, D);
    } else {
      std::memcpy(dst->data.data(), src_nld, N * L * D * sizeof(float));
    }
  };
  if (options.return_concat) {
    write_out_layout(&result->concat, concat, E);
  } else {
    result->concat = Tensor();
  }

  if (options.skip_out_proj) {
    write_out_layout(&result->output, concat, E);
  } else {
    // (N*L, E) . W_O(O, E)^T + b_O -> (N*L, O)
    result->output.shape = output_shape;
    result->output.data.resize(static_cast<size_t>(N * L * O));
    const float* b_o = c.bias ? out_proj_bias_.data() : nullptr;
    if (call.sequence_first) {
      float* out_nlo = ws.at(ws.out_t);
      out_projection(out_nlo, concat, b_o, N * L);
      to_sequence_first(result->output.data.data(), out_nlo, N, L, O);
    } else {
      out_projection(result->output.data.data(), concat, b_o, N * L);
    }
  }

  if (!options.need_weights) {
    result->weights = Tensor();
    return;
  }
  const float* probs = ws.at(ws.probs);  // (N, H, L, S_total)
  Tensor& w = result->weights;
  if (!options.average_attn_weights) {
    w.shape = call.batched ? Shape{N, H, L, S_total} : Shape{H, L, S_total};
    w.data.assign(probs, probs + N * H * L * S_total);
    return;
  }
  w.shape = call.batched ? Shape{N, L, S_total} : Shape{L, S_total};
  w.data.assign(static_cast<size_t>(N * L * S_total), 0.0f);
  const int64_t map = L * S_total;
  const float inv_heads = 1.0f / static_cast<float>(H);
  for (int64_t n = 0; n < N; ++n) {
    float* dst = w.data.data() + n * map;
    for (int64_t h = 0; h < H; ++h) {
      const float* src = probs + (n * H + h) * map;
      for (int64_t i = 0; i < map; ++i) dst[i] += src[i];
    }
    for (int64_t i = 0; i < map; ++i) dst[i] = dst[i] * inv_heads;
  }
}

Status MultiHeadAttention::forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                   const MaskView& key_padding_mask, const MaskView& attn_mask,
                                   const ForwardOptions& options, ForwardResult* result) {
  Call call;
  MHA_RETURN_IF_ERROR(validate(query, key, value, key_padding_mask, attn_mask, options, &call));
  const Workspace ws = plan(call);
  const Projected qkv = project(call, ws);
  attend(call, ws, qkv);
  assemble(call, ws, result);
  return Status::Ok();
}

}  // namespace mha
