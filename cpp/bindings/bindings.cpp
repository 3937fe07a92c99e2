// The Embind table: a flat map from the core to JavaScript. Buffers cross in bulk through
// typed_memory_views (one set in, one slice out); shapes travel in a small int32 buffer;
// errors come back as status codes with a message. Defaults, checks of JS types and thrown
// errors live in web/lib/index.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <array>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mha/attention.h"
#include "mha/kernels.h"
#include "mha/statistics.h"

namespace {

using emscripten::typed_memory_view;
using emscripten::val;

// Slots of the shape buffer: each holds ndim then up to 4 dims.
constexpr int kShapeSlots = 6;
constexpr int kShapeStride = 5;
enum Slot : int { kQuery = 0, kKey = 1, kValue = 2, kKeyPaddingMask = 3, kAttnMask = 4, kParameter = 5 };
enum Result : int { kOutput = 0, kWeights = 1, kHeadOutputs = 2, kConcat = 3, kGetParameter = 4 };
enum ForwardFlag : int {
  kNeedWeights = 1,
  kAverageWeights = 2,
  kIsCausal = 4,
  kReturnHeadOutputs = 8,
  kReturnConcat = 16,
  kSkipOutProj = 32,
  kFullyMaskedRowsZero = 64,
};

mha::Shape read_shape(const std::array<int32_t, kShapeSlots * kShapeStride>& shapes, int slot) {
  const int32_t* s = shapes.data() + slot * kShapeStride;
  int ndim = s[0];
  if (ndim < 0) ndim = 0;
  if (ndim > kShapeStride - 1) ndim = kShapeStride - 1;
  return mha::Shape(s + 1, s + 1 + ndim);
}

// Attention objects constructed and not yet deleted (what the leak tests count).
int live_attention_objects = 0;

class Attention {
 public:
  Attention() { ++live_attention_objects; }
  ~Attention() { --live_attention_objects; }
  Attention(const Attention&) = delete;
  Attention& operator=(const Attention&) = delete;

  // Returns 0 or a mha::StatusCode; error() tells why.
  int init(double embed_dim, double num_heads, double num_kv_heads, double kdim, double vdim, bool bias,
           bool add_bias_kv, bool add_zero_attn, bool batch_first, double seed) {
    mha::Config config;
    config.embed_dim = static_cast<int64_t>(embed_dim);
    config.num_heads = static_cast<int64_t>(num_heads);
    config.num_kv_heads = static_cast<int64_t>(num_kv_heads);
    config.kdim = static_cast<int64_t>(kdim);
    config.vdim = static_cast<int64_t>(vdim);
    config.bias = bias;
    config.add_bias_kv = add_bias_kv;
    config.add_zero_attn = add_zero_attn;
    config.batch_first = batch_first;
    return record(mha::MultiHeadAttention::Create(config, static_cast<uint64_t>(seed), &core_));
  }

  std::string error() const { return error_; }
  double embedDim() const { return double(core_->config().embed_dim); }
  double numHeads() const { return double(core_->config().num_heads); }
  double numKvHeads() const { return double(core_->config().num_kv_heads); }
  double kdim() const { return double(core_->config().kdim); }
  double vdim() const { return double(core_->config().vdim); }
  double headDim() const { return double(core_->head_dim()); }

  std::string parameterNames() const {
    std::string joined;
    for (const auto& name : core_->parameter_names()) joined += (joined.empty() ? "" : ",") + name;
    return joined;
  }

  // The int32 shape buffer, (kShapeSlots x kShapeStride).
  val shapes() { return val(typed_memory_view(shapes_.size(), shapes_.data())); }

  // A float view of at least `count` floats for input slot `slot`, kept until the next call.
  // Null when the buffer would take the inputs past the memory cap (see make_room).
  val input(int slot, double count) {
    if (slot < 0 || slot >= kShapeSlots || !make_room(slot, count * sizeof(float))) return val::null();
    std::vector<float>& buffer = inputs_[slot];
    fit(buffer, static_cast<size_t>(count));
    return val(typed_memory_view(buffer.size(), buffer.data()));
  }
  // A byte view for bool masks.
  val inputBytes(int slot, double count) {
    if (slot < 0 || slot >= kShapeSlots || !make_room(slot, count)) return val::null();
    std::vector<uint8_t>& buffer = input_bytes_[slot];
    fit(buffer, static_cast<size_t>(count));
    return val(typed_memory_view(buffer.size(), buffer.data()));
  }
  double memoryCap() const { return double(core_->memory_cap()); }

  int setParameter(const std::string& name) {
    const std::vector<float>& data = inputs_[kParameter];
    return record(core_->set_parameter(name, data.data(), data.size(), read_shape(shapes_, kParameter)));
  }

  int getParameter(const std::string& name) {
    return record(core_->get_parameter(name, &parameter_));
  }

  void resetParameters(double seed) { core_->reset_parameters(static_cast<uint64_t>(seed)); }
  // size_t is 32 bits in wasm32: a cap past it means "no cap beyond the address space", not 0.
  void setMemoryCap(double bytes) {
    const double most = static_cast<double>(std::numeric_limits<size_t>::max());
    core_->set_memory_cap(bytes >= most ? std::numeric_limits<size_t>::max() : static_cast<size_t>(bytes));
  }

  // kpm_dtype / mask_dtype: 0 none, 1 bool, 2 float. Ablated heads come in input slot kParameter.
  int forward(int key_source, int value_source, int kpm_dtype, int mask_dtype, int flags, int num_ablated) {
    auto view = [&](int slot) {
      mha::TensorView t;
      t.data = inputs_[slot].data();
      t.length = inputs_[slot].size();
      t.shape = read_shape(shapes_, slot);
      return t;
    };
    auto mask = [&](int slot, int dtype) {
      mha::MaskView m;
      m.dtype = static_cast<mha::MaskDtype>(dtype);
      if (dtype == 1) {
        m.data = input_bytes_[slot].data();
        m.length = input_bytes_[slot].size();
      } else if (dtype == 2) {
        m.data = inputs_[slot].data();
        m.length = inputs_[slot].size();
      }
      m.shape = read_shape(shapes_, slot);
      return m;
    };
    if (kpm_dtype < 0 || kpm_dtype > 2 || mask_dtype < 0 || mask_dtype > 2) {
      return record(mha::Status(mha::StatusCode::kInvalidDtype, "mask dtype code must be 0, 1 or 2"));
    }
    // key_source / value_source: the slot whose buffer to use, so that self-attention passes
    // one buffer (and the core fuses the q, k, v projection).
    const mha::TensorView query = view(kQuery);
    const mha::TensorView key = view(key_source == kQuery ? kQuery : kKey);
    const mha::TensorView value = view(value_source == kQuery ? kQuery : value_source == kKey ? kKey : kValue);
    mha::ForwardOptions options;
    options.need_weights = flags & kNeedWeights;
    options.average_attn_weights = flags & kAverageWeights;
    options.is_causal = flags & kIsCausal;
    options.return_head_outputs = flags & kReturnHeadOutputs;
    options.return_concat = flags & kReturnConcat;
    options.skip_out_proj = flags & kSkipOutProj;
    options.fully_masked_rows_zero = flags & kFullyMaskedRowsZero;
    const std::vector<float>& ablated = inputs_[kParameter];
    for (int i = 0; i < num_ablated && i < static_cast<int>(ablated.size()); ++i) {
      options.ablate_heads.push_back(static_cast<int64_t>(ablated[i]));
    }
    return record(core_->forward(query, key, value, mask(kKeyPaddingMask, kpm_dtype), mask(kAttnMask, mask_dtype),
                                 options, &result_));
  }

  // Results of the last call: a float view (copy it out with slice()) and its shape.
  val result(int which) {
    const mha::Tensor* t = tensor(which);
    if (t == nullptr || !t->present()) return val::null();
    return val(typed_memory_view(t->data.size(), t->data.data()));
  }
  std::string resultShape(int which) {
    const mha::Tensor* t = tensor(which);
    std::string joined;
    if (t == nullptr) return joined;
    for (int64_t d : t->shape) joined += (joined.empty() ? "" : ",") + std::to_string(d);
    return joined;
  }

 private:
  int record(const mha::Status& status) {
    error_ = status.message();
    return static_cast<int>(status.code());
  }
  // Inputs are refused past the memory cap before anything is allocated: the core would refuse
  // the call anyway, and in WebAssembly (2 GB at most) the copy alone could exhaust the memory.
  // The JS layer writes a call's slots in order, query first; so writing the query starts a
  // call, and large buffers an earlier call left in the other slots are given back then.
  bool make_room(int slot, double bytes) {
    if (slot == kQuery) {
      for (int s = kQuery + 1; s < kShapeSlots; ++s) {
        if (inputs_[s].capacity() * sizeof(float) > kKeepBytes) std::vector<float>().swap(inputs_[s]);
        if (input_bytes_[s].capacity() > kKeepBytes) std::vector<uint8_t>().swap(input_bytes_[s]);
      }
    }
    double held = 0;  // this call's earlier slots (a parameter is set on its own)
    if (slot != kParameter) {
      for (int s = 0; s < slot; ++s) held += double(inputs_[s].size()) * sizeof(float) + double(input_bytes_[s].size());
    }
    return held + bytes <= double(core_->memory_cap());
  }
  // Resize, giving back a large block when far less is needed.
  template <typename T>
  static void fit(std::vector<T>& buffer, size_t count) {
    if (buffer.capacity() * sizeof(T) > kKeepBytes && count < buffer.capacity() / 2) std::vector<T>().swap(buffer);
    buffer.resize(count);
  }
  static constexpr size_t kKeepBytes = size_t{1} << 20;

  const mha::Tensor* tensor(int which) const {
    switch (which) {
      case kOutput: return &result_.output;
      case kWeights: return &result_.weights;
      case kHeadOutputs: return &result_.head_outputs;
      case kConcat: return &result_.concat;
      case kGetParameter: return &parameter_;
    }
    return nullptr;
  }

  std::unique_ptr<mha::MultiHeadAttention> core_;
  std::string error_;
  std::array<int32_t, kShapeSlots * kShapeStride> shapes_{};
  std::array<std::vector<float>, kShapeSlots> inputs_;
  std::array<std::vector<uint8_t>, kShapeSlots> input_bytes_;
  mha::ForwardResult result_;
  mha::Tensor parameter_;
};

// Statistics over maps the caller passes in; one shared scratch, since JS is single-threaded.
class Statistics {
 public:
  std::string error() const { return error_; }
  val shapes() { return val(typed_memory_view(shapes_.size(), shapes_.data())); }
  // Null past the default memory cap (the two maps together), before anything is allocated.
  // Map a is written first; a large map b left from an earlier call is given back then.
  val input(int which, double count) {
    if (which == 0 && b_.capacity() * sizeof(float) > (size_t{1} << 20)) std::vector<float>().swap(b_);
    const double held = which == 0 ? 0.0 : double(a_.size()) * sizeof(float);
    if (held + count * sizeof(float) > double(mha::kDefaultMemoryCapBytes)) return val::null();
    std::vector<float>& buffer = which == 0 ? a_ : b_;
    if (buffer.capacity() * sizeof(float) > (size_t{1} << 20) && count < buffer.capacity() / 2) std::vector<float>().swap(buffer);
    buffer.resize(static_cast<size_t>(count));
    return val(typed_memory_view(buffer.size(), buffer.data()));
  }
  double memoryCap() const { return double(mha::kDefaultMemoryCapBytes); }

  // Per head: 11 doubles each, in HeadStatistics' order; per row (if asked): 6 each.
  int headStatistics(double sparsity_threshold, bool per_row) {
    mha::StatisticsOptions options;
    options.sparsity_threshold = sparsity_threshold;
    std::vector<mha::HeadStatistics> heads;
    std::vector<mha::RowStatistics> rows;
    const mha::Status status = mha::head_statistics(view(0), options, &heads, per_row ? &rows : nullptr);
    if (!status.ok()) return record(status);
    heads_out_.clear();
    for (const auto& h : heads) {
      heads_out_.insert(heads_out_.end(), {h.entropy, h.normalized_entropy, h.sparsity, h.max_attention,
                                           h.peak_attention, h.average_attention, h.mean_distance,
                                           h.previous_token_share, h.first_token_share, h.diagonal_share,
                                           double(h.rows)});
    }
    rows_out_.clear();
    for (const auto& r : rows) {
      rows_out_.insert(rows_out_.end(), {r.entropy, r.normalized_entropy, r.max_attention, double(r.argmax),
                                         r.sparsity, r.mean_distance});
    }
    return 0;
  }

  int headSimilarity() { return record(mha::head_similarity(view(0), &matrix_out_)); }

  int jsDivergence() {
    double mean = 0;
    const mha::Status status = mha::js_divergence(view(0), view(1), &matrix_out_, &mean);
    mean_ = mean;
    return record(status);
  }
  double mean() const { return mean_; }

  val heads() { return val(typed_memory_view(heads_out_.size(), heads_out_.data())); }
  val rows() { return val(typed_memory_view(rows_out_.size(), rows_out_.data())); }
  val matrix() { return val(typed_memory_view(matrix_out_.size(), matrix_out_.data())); }

 private:
  mha::TensorView view(int which) {
    mha::TensorView t;
    const std::vector<float>& buffer = which == 0 ? a_ : b_;
    t.data = buffer.data();
    t.length = buffer.size();
    t.shape = read_shape(shapes_, which);
    return t;
  }
  int record(const mha::Status& status) {
    error_ = status.message();
    return static_cast<int>(status.code());
  }
  std::array<int32_t, kShapeSlots * kShapeStride> shapes_{};
  std::vector<float> a_, b_;
  std::vector<double> heads_out_, rows_out_, matrix_out_;
  double mean_ = 0;
  std::string error_;
};

// The WebAssembly memory in bytes (it only grows).
double heap_bytes() { return double(__builtin_wasm_memory_size(0)) * 65536.0; }
// Bytes malloc has handed out and not taken back: flat across calls unless something leaks.
double heap_in_use() { return double(mallinfo().uordblks); }
// Threads the kernels split work over: 1, or 2 in the pthreads module.
int num_threads() { return mha::kernels::num_threads(); }
int live_objects() { return live_attention_objects; }

}  // namespace

EMSCRIPTEN_BINDINGS(mha_core) {
  emscripten::class_<Attention>("Attention")
      .constructor<>()
      .function("init", &Attention::init)
      .function("error", &Attention::error)
      .function("embedDim", &Attention::embedDim)
      .function("numHeads", &Attention::numHeads)
      .function("numKvHeads", &Attention::numKvHeads)
      .function("kdim", &Attention::kdim)
      .function("vdim", &Attention::vdim)
      .function("headDim", &Attention::headDim)
      .function("parameterNames", &Attention::parameterNames)
      .function("shapes", &Attention::shapes)
      .function("input", &Attention::input)
      .function("inputBytes", &Attention::inputBytes)
      .function("memoryCap", &Attention::memoryCap)
      .function("setParameter", &Attention::setParameter)
      .function("getParameter", &Attention::getParameter)
      .function("resetParameters", &Attention::resetParameters)
      .function("setMemoryCap", &Attention::setMemoryCap)
      .function("forward", &Attention::forward)
      .function("result", &Attention::result)
      .function("resultShape", &Attention::resultShape);
  emscripten::class_<Statistics>("Statistics")
      .constructor<>()
      .function("error", &Statistics::error)
      .function("shapes", &Statistics::shapes)
      .function("input", &Statistics::input)
      .function("headStatistics", &Statistics::headStatistics)
      .function("headSimilarity", &Statistics::headSimilarity)
      .function("jsDivergence", &Statistics::jsDivergence)
      .function("memoryCap", &Statistics::memoryCap)
      .function("mean", &Statistics::mean)
      .function("heads", &Statistics::heads)
      .function("rows", &Statistics::rows)
      .function("matrix", &Statistics::matrix);
  emscripten::function("heapBytes", &heap_bytes);
  emscripten::function("heapInUse", &heap_in_use);
  emscripten::function("liveObjects", &live_objects);
  emscripten::function("numThreads", &num_threads);
}
