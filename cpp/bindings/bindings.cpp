// The Embind table of the inference core: every name JavaScript sees is given here, once.
//   enums          StatusCode (status_code_name's names), MaskDtype
//   value objects  Config, ForwardCall, ForwardOptions, InputBuffers, ForwardOutputs,
//                  OutputShapes, TensorRef, StatisticsOptions, MapBuffers, StatisticsResult;
//                  the names of a head's and a row's statistics (headStatisticsFields,
//                  rowStatisticsFields)
//   classes        Attention (one MultiHeadAttention and its input buffers), Statistics
// Float data crosses in bulk: prepare() describes the calls to come (shapes, dtypes, options),
// sizes their buffers and returns their byte offsets; JavaScript writes each input with one
// HEAPF32.set, and forward() returns the byte offsets of its results, each copied out with one
// HEAPF32.slice (outputShapes() gives their shapes). A call like the one before needs no new
// prepare(): only its data crosses. Fallible calls return a StatusCode value and error() the
// message. Defaults, checks of JavaScript types and thrown errors live in web/lib/index.js.
//
// Lists of integers going in (shapes, head indices) and of names coming out cross as text,
// "1,10,64": Embind's conversions of JavaScript arrays would add more code to the module every
// page downloads than the rest of this table. Shapes coming out are Float64Array views.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mha/attention.h"
#include "mha/format.h"
#include "mha/kernels.h"
#include "mha/statistics.h"
#include "status_codes.h"

namespace {

using emscripten::typed_memory_view;
using emscripten::val;

// A JavaScript number as an int64; what no int64 holds (NaN, +-Infinity, beyond 2^53) becomes
// -1, which every check of the core refuses.
int64_t to_int64(double value) {
  return std::isfinite(value) && std::abs(value) <= 9007199254740992.0 ? static_cast<int64_t>(value) : -1;
}

// "1,10,64" -> {1, 10, 64}; "-2" -> {-2}; "" -> {}. What is not a decimal integer of at most
// 18 digits becomes INT64_MIN, which every check of the core refuses.
std::vector<int64_t> integers_of(const std::string& text) {
  std::vector<int64_t> values;
  if (text.empty()) return values;
  size_t start = 0;
  for (size_t end = 0; end <= text.size(); ++end) {
    if (end < text.size() && text[end] != ',') continue;
    const bool negative = end > start && text[start] == '-';
    const size_t digits = end - start - (negative ? 1 : 0);
    int64_t value = digits > 0 && digits <= 18 ? 0 : std::numeric_limits<int64_t>::min();
    for (size_t i = start + (negative ? 1 : 0); i < end && value >= 0; ++i) {
      value = text[i] >= '0' && text[i] <= '9' ? value * 10 + (text[i] - '0') : std::numeric_limits<int64_t>::min();
    }
    values.push_back(negative && value > 0 ? -value : value);
    start = end + 1;
  }
  return values;
}

double numel_of(const mha::Shape& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

// A shape as a Float64Array view of `held` (valid until `held` changes).
val shape_view(const mha::Shape& shape, std::vector<double>* held) {
  held->resize(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) (*held)[i] = static_cast<double>(shape[i]);
  return val(typed_memory_view(held->size(), held->data()));
}

double byte_offset(const void* data) { return static_cast<double>(reinterpret_cast<uintptr_t>(data)); }

template <int64_t mha::Config::*Field>
double get_dim(const mha::Config& config) {
  return static_cast<double>(config.*Field);
}
template <int64_t mha::Config::*Field>
void set_dim(mha::Config& config, double value) {
  config.*Field = to_int64(value);
}

// The statistics of a head, by name, in the order of a headStatistics() result's heads.
struct HeadField {
  const char* name;
  double (*value)(const mha::HeadStatistics&);
};
using Head = mha::HeadStatistics;
using Row = mha::RowStatistics;
constexpr HeadField kHeadFields[] = {
    {"entropy", [](const Head& h) { return h.entropy; }},
    {"normalizedEntropy", [](const Head& h) { return h.normalized_entropy; }},
    {"sparsity", [](const Head& h) { return h.sparsity; }},
    {"maxAttention", [](const Head& h) { return h.max_attention; }},
    {"peakAttention", [](const Head& h) { return h.peak_attention; }},
    {"averageAttention", [](const Head& h) { return h.average_attention; }},
    {"meanDistance", [](const Head& h) { return h.mean_distance; }},
    {"previousTokenShare", [](const Head& h) { return h.previous_token_share; }},
    {"firstTokenShare", [](const Head& h) { return h.first_token_share; }},
    {"diagonalShare", [](const Head& h) { return h.diagonal_share; }},
    {"rows", [](const Head& h) { return static_cast<double>(h.rows); }},
};

// The statistics of a query row, likewise.
struct RowField {
  const char* name;
  double (*value)(const mha::RowStatistics&);
};
constexpr RowField kRowFields[] = {
    {"entropy", [](const Row& r) { return r.entropy; }},
    {"normalizedEntropy", [](const Row& r) { return r.normalized_entropy; }},
    {"maxAttention", [](const Row& r) { return r.max_attention; }},
    {"argmax", [](const Row& r) { return static_cast<double>(r.argmax); }},
    {"sparsity", [](const Row& r) { return r.sparsity; }},
    {"meanDistance", [](const Row& r) { return r.mean_distance; }},
};

template <typename Fields>
std::string names_of(const Fields& fields) {
  std::string names;
  for (const auto& f : fields) names += (names.empty() ? "" : ",") + std::string(f.name);
  return names;
}

// What one forward call takes, besides its data: the inputs' shapes and the options (the heads
// to ablate apart, as text). With keyIsQuery the key is the query (one buffer for both, its
// shape unused); with valueIsKey the value is the key. A mask is given when its dtype is not
// MaskDtype.none.
struct ForwardCall {
  std::string query, key, value, keyPaddingMask, attnMask, ablateHeads;
  bool keyIsQuery = true;
  bool valueIsKey = true;
  mha::MaskDtype keyPaddingMaskDtype = mha::MaskDtype::kNone;
  mha::MaskDtype attnMaskDtype = mha::MaskDtype::kNone;
  mha::ForwardOptions options;
};

// Byte offsets of the buffers prepare() sized, to write each input into (0 for one not used).
struct InputBuffers {
  int status = 0;
  double query = 0, key = 0, value = 0, keyPaddingMask = 0, attnMask = 0;
};

// Byte offsets of forward()'s results (0 for one the options did not ask for).
struct ForwardOutputs {
  int status = 0;
  double output = 0, weights = 0, headOutputs = 0, concat = 0;
};

// The shapes of the last forward's results, as Float64Array views (null for one not asked
// for): the same for every call prepare() described alike.
struct OutputShapes {
  val output = val::null(), weights = val::null(), headOutputs = val::null(), concat = val::null();
};

// A parameter, or the buffer of one to come: its byte offset and its shape (a Float64Array
// view; null for a buffer).
struct TensorRef {
  int status = 0;
  double data = 0;
  val shape = val::null();
};

// Attention objects constructed and not yet deleted (what the leak tests count).
int live_attention_objects = 0;

// Buffers above this are given back when a call needs far less, or none.
constexpr size_t kKeepBytes = size_t{1} << 20;

// Resize, giving back a large block when far less is needed.
template <typename T>
void fit(std::vector<T>& buffer, size_t count) {
  if (buffer.capacity() * sizeof(T) > kKeepBytes && count < buffer.capacity() / 2) std::vector<T>().swap(buffer);
  buffer.resize(count);
}

// "query: 10 values (40 bytes) would take the inputs past the memory cap of 16 bytes"
std::string past_cap(const char* what, double count, double bytes, const char* whose, double cap) {
  return std::string(what) + ": " + mha::format_g17(count) + " values (" + mha::format_g17(bytes) + " bytes) would take " +
         whose + " past the memory cap of " + mha::format_g17(cap) + " bytes";
}

class Attention {
 public:
  // Messages go into one block kept from the start, so that a refused call allocates nothing
  // (the leak and memory-cap tests count every byte malloc hands out).
  Attention() {
    ++live_attention_objects;
    error_.reserve(kMessageBytes);
  }
  ~Attention() { --live_attention_objects; }
  Attention(const Attention&) = delete;
  Attention& operator=(const Attention&) = delete;

  int init(const mha::Config& config, double seed) {
    return record(mha::MultiHeadAttention::Create(config, static_cast<uint64_t>(seed), &core_));
  }
  // The config resolved: num_kv_heads, kdim and vdim filled in.
  mha::Config config() const { return core_->config(); }
  std::string error() const { return error_; }

  // "in_proj_weight,in_proj_bias,..."
  std::string parameterNames() const {
    std::string names;
    for (const std::string& name : core_->parameter_names()) names += (names.empty() ? "" : ",") + name;
    return names;
  }
  TensorRef getParameter(const std::string& name) {
    TensorRef t;
    t.status = record(core_->get_parameter(name, &parameter_));
    if (t.status == 0) {
      t.data = byte_offset(parameter_.data.data());
      t.shape = shape_view(parameter_.shape, &parameter_shape_);
    }
    return t;
  }
  // Where the values of a parameter go before checkParameter / setParameter. Refused past the
  // memory cap before anything is allocated: in WebAssembly (2 GB at most) the copy alone could
  // exhaust the memory.
  TensorRef parameterBuffer(double count) {
    TensorRef b;
    const double cap = static_cast<double>(core_->memory_cap());
    if (count * sizeof(float) > cap) {
      b.status = record(mha::Status(mha::StatusCode::kTooLarge,
                                    past_cap("parameter", count, count * sizeof(float), "the inputs", cap)));
      return b;
    }
    fit(parameter_input_, static_cast<size_t>(count));
    b.data = byte_offset(parameter_input_.data());
    return b;
  }
  int checkParameter(const std::string& name, const std::string& shape) {
    return record(core_->check_parameter(name, parameter_input_.data(), parameter_input_.size(), integers_of(shape)));
  }
  int setParameter(const std::string& name, const std::string& shape) {
    return record(core_->set_parameter(name, parameter_input_.data(), parameter_input_.size(), integers_of(shape)));
  }
  void resetParameters(double seed) { core_->reset_parameters(static_cast<uint64_t>(seed)); }

  double memoryCap() const { return static_cast<double>(core_->memory_cap()); }
  // size_t is 32 bits in wasm32: a cap past it means "no cap beyond the address space", not 0.
  void setMemoryCap(double bytes) {
    const double most = static_cast<double>(std::numeric_limits<size_t>::max());
    core_->set_memory_cap(bytes >= most ? std::numeric_limits<size_t>::max() : static_cast<size_t>(bytes));
  }

  // Describes the calls to come: sizes the buffers of their inputs, in order (query, key,
  // value, masks), refused past the memory cap before anything is allocated (the core would
  // refuse the call anyway), and keeps the options. Buffers they do not use are given back
  // when large. Every forward() until the next prepare() runs on the data written since.
  InputBuffers prepare(const ForwardCall& in) {
    InputBuffers out;
    prepared_ = false;
    PreparedCall call;
    call.query_shape = integers_of(in.query);
    call.key_is_query = in.keyIsQuery;
    call.value_is_key = in.valueIsKey;
    if (!call.key_is_query) call.key_shape = integers_of(in.key);
    if (!call.value_is_key) call.value_shape = integers_of(in.value);
    call.kpm_dtype = in.keyPaddingMaskDtype;
    call.mask_dtype = in.attnMaskDtype;
    if (call.kpm_dtype != mha::MaskDtype::kNone) call.kpm_shape = integers_of(in.keyPaddingMask);
    if (call.mask_dtype != mha::MaskDtype::kNone) call.mask_shape = integers_of(in.attnMask);
    call.options = in.options;
    call.options.ablate_heads = integers_of(in.ablateHeads);
    const struct {
      const char* name;
      bool used;
      const mha::Shape& shape;
      bool bytes;  // a bool mask: one byte a value
    } slots[kInputs] = {
        {"query", true, call.query_shape, false},
        {"key", !call.key_is_query, call.key_shape, false},
        {"value", !call.value_is_key, call.value_shape, false},
        {"keyPaddingMask", call.kpm_dtype != mha::MaskDtype::kNone, call.kpm_shape, call.kpm_dtype == mha::MaskDtype::kBool},
        {"attnMask", call.mask_dtype != mha::MaskDtype::kNone, call.mask_shape, call.mask_dtype == mha::MaskDtype::kBool},
    };
    const double cap = static_cast<double>(core_->memory_cap());
    double held = 0;
    for (int i = 0; i < kInputs; ++i) {
      const double count = slots[i].used ? numel_of(slots[i].shape) : 0;
      const double bytes = count * (slots[i].bytes ? 1 : sizeof(float));
      if (held + bytes > cap) {
        out.status = record(mha::Status(mha::StatusCode::kTooLarge, past_cap(slots[i].name, count, bytes, "the inputs", cap)));
        return out;
      }
      held += bytes;
    }
    if (parameter_input_.capacity() * sizeof(float) > kKeepBytes) std::vector<float>().swap(parameter_input_);
    double* offsets[kInputs] = {&out.query, &out.key, &out.value, &out.keyPaddingMask, &out.attnMask};
    for (int i = 0; i < kInputs; ++i) {
      const size_t count = slots[i].used ? static_cast<size_t>(numel_of(slots[i].shape)) : 0;
      fit(inputs_[i].floats, slots[i].bytes ? 0 : count);
      fit(inputs_[i].bytes, slots[i].bytes ? count : 0);
      *offsets[i] = slots[i].bytes ? byte_offset(inputs_[i].bytes.data()) : byte_offset(inputs_[i].floats.data());
    }
    call_ = std::move(call);
    prepared_ = true;
    return out;
  }

  // One call as prepare() described it, on the data written since.
  ForwardOutputs forward() {
    ForwardOutputs out;
    if (!prepared_) {
      out.status = record(mha::Status(mha::StatusCode::kInvalidArgument, "forward: call prepare() first"));
      return out;
    }
    const mha::TensorView query = tensor(kQuery, call_.query_shape);
    const mha::TensorView key = call_.key_is_query ? query : tensor(kKey, call_.key_shape);
    const mha::TensorView value = call_.value_is_key ? key : tensor(kValue, call_.value_shape);
    out.status = record(core_->forward(query, key, value, mask(kKeyPaddingMask, call_.kpm_dtype, call_.kpm_shape),
                                       mask(kAttnMask, call_.mask_dtype, call_.mask_shape), call_.options, &result_));
    if (out.status != 0) return out;
    out.output = byte_offset(result_.output.data.data());
    if (result_.weights.present()) out.weights = byte_offset(result_.weights.data.data());
    if (result_.head_outputs.present()) out.headOutputs = byte_offset(result_.head_outputs.data.data());
    if (result_.concat.present()) out.concat = byte_offset(result_.concat.data.data());
    return out;
  }

  OutputShapes outputShapes() {
    auto shape = [this](const mha::Tensor& t, int i) {
      return t.present() ? shape_view(t.shape, &output_shapes_[i]) : val::null();
    };
    return {shape(result_.output, 0), shape(result_.weights, 1), shape(result_.head_outputs, 2), shape(result_.concat, 3)};
  }

 private:
  enum Input : int { kQuery = 0, kKey = 1, kValue = 2, kKeyPaddingMask = 3, kAttnMask = 4, kInputs = 5 };
  struct InputBuffer {
    std::vector<float> floats;
    std::vector<uint8_t> bytes;
  };
  // The calls prepare() described.
  struct PreparedCall {
    mha::Shape query_shape, key_shape, value_shape, kpm_shape, mask_shape;
    bool key_is_query = true, value_is_key = true;
    mha::MaskDtype kpm_dtype = mha::MaskDtype::kNone, mask_dtype = mha::MaskDtype::kNone;
    mha::ForwardOptions options;
  };

  mha::TensorView tensor(Input input, const mha::Shape& shape) const {
    mha::TensorView t;
    t.data = inputs_[input].floats.data();
    t.length = inputs_[input].floats.size();
    t.shape = shape;
    return t;
  }
  mha::MaskView mask(Input input, mha::MaskDtype dtype, const mha::Shape& shape) const {
    mha::MaskView m;
    m.dtype = dtype;
    m.shape = shape;
    if (dtype == mha::MaskDtype::kBool) {
      m.data = inputs_[input].bytes.data();
      m.length = inputs_[input].bytes.size();
    } else if (dtype == mha::MaskDtype::kFloat) {
      m.data = inputs_[input].floats.data();
      m.length = inputs_[input].floats.size();
    }
    return m;
  }
  int record(const mha::Status& status) {
    error_.assign(status.message());
    return static_cast<int>(status.code());
  }
  static constexpr size_t kMessageBytes = 512;

  std::unique_ptr<mha::MultiHeadAttention> core_;
  std::string error_;
  PreparedCall call_;
  bool prepared_ = false;
  std::array<InputBuffer, kInputs> inputs_;
  std::vector<float> parameter_input_;
  mha::ForwardResult result_;
  std::array<std::vector<double>, 4> output_shapes_;
  mha::Tensor parameter_;
  std::vector<double> parameter_shape_;
};

// ---------------------------------------------------------------------------------------------
// Statistics over maps the caller passes in; one shared scratch, since JS is single-threaded.

struct StatisticsOptions {
  double sparsityThreshold = 0.01;
  bool perRow = false;
};

// Byte offsets of the map buffers prepareOne() / prepareTwo() sized.
struct MapBuffers {
  int status = 0;
  double a = 0, b = 0;
};

// "entropy,normalizedEntropy,...": the names of a head's and of a query row's statistics, in
// their order in a headStatistics() result.
std::string head_statistics_fields() { return names_of(kHeadFields); }
std::string row_statistics_fields() { return names_of(kRowFields); }

// What a statistics call gives: heads and rows (headStatistics), matrix and numHeads
// (headSimilarity: the (H, H) divergences), matrix and mean (jsDivergence: one a row).
struct StatisticsResult {
  int status = 0;
  val heads = val::null();      // a Float64Array view: head h's F fields at h * F .., in headStatisticsFields() order
  val rows = val::null();       // likewise per query row (rowStatisticsFields()), or null unless asked for
  val rowsShape = val::null();  // (N, H, L) of the rows, N = 1 for a 3-D map
  val matrix = val::null();  // a Float64Array view
  double numHeads = 0;
  double mean = 0;
};

class Statistics {
 public:
  std::string error() const { return error_; }

  // One map (named weights in messages), or two (a, b), refused past the default memory cap
  // before anything is allocated.
  MapBuffers prepareOne(const std::string& shape) { return prepare(integers_of(shape), nullptr, "weights"); }
  MapBuffers prepareTwo(const std::string& a, const std::string& b) {
    const mha::Shape b_shape = integers_of(b);
    return prepare(integers_of(a), &b_shape, "a");
  }

  StatisticsResult headStatistics(const StatisticsOptions& options) {
    StatisticsResult r;
    mha::StatisticsOptions core_options;
    core_options.sparsity_threshold = options.sparsityThreshold;
    std::vector<mha::HeadStatistics> heads;
    std::vector<mha::RowStatistics> rows;
    r.status = record(mha::head_statistics(map(0), core_options, &heads, options.perRow ? &rows : nullptr));
    if (r.status != 0) return r;
    heads_out_.clear();
    for (const mha::HeadStatistics& h : heads)
      for (const HeadField& f : kHeadFields) heads_out_.push_back(f.value(h));
    r.heads = val(typed_memory_view(heads_out_.size(), heads_out_.data()));
    if (options.perRow) {
      rows_out_.clear();
      for (const mha::RowStatistics& row : rows)
        for (const RowField& f : kRowFields) rows_out_.push_back(f.value(row));
      const mha::Shape& s = shapes_[0];
      r.rows = val(typed_memory_view(rows_out_.size(), rows_out_.data()));
      r.rowsShape = shape_view(s.size() == 4 ? mha::Shape{s[0], s[1], s[2]} : mha::Shape{1, s[0], s[1]}, &rows_shape_);
    }
    return r;
  }

  StatisticsResult headSimilarity() {
    StatisticsResult r;
    r.status = record(mha::head_similarity(map(0), &matrix_out_));
    if (r.status != 0) return r;
    r.matrix = val(typed_memory_view(matrix_out_.size(), matrix_out_.data()));
    r.numHeads = static_cast<double>(shapes_[0][shapes_[0].size() - 3]);
    return r;
  }

  StatisticsResult jsDivergence() {
    StatisticsResult r;
    r.status = record(mha::js_divergence(map(0), map(1), &matrix_out_, &r.mean));
    if (r.status != 0) return r;
    r.matrix = val(typed_memory_view(matrix_out_.size(), matrix_out_.data()));
    return r;
  }

 private:
  MapBuffers prepare(const mha::Shape& a, const mha::Shape* b, const char* a_name) {
    MapBuffers out;
    shapes_[0] = a;
    shapes_[1] = b ? *b : mha::Shape();
    const double cap = static_cast<double>(mha::kDefaultMemoryCapBytes);
    const double a_count = numel_of(a), b_count = b ? numel_of(*b) : 0;
    if (a_count * sizeof(float) > cap || (a_count + b_count) * sizeof(float) > cap) {
      const bool a_fails = a_count * sizeof(float) > cap;
      const double count = a_fails ? a_count : b_count;
      out.status = record(mha::Status(mha::StatusCode::kTooLarge,
                                      past_cap(a_fails ? a_name : "b", count, count * sizeof(float), "the statistics' inputs", cap)));
      return out;
    }
    fit(maps_[0], static_cast<size_t>(a_count));
    fit(maps_[1], static_cast<size_t>(b_count));
    out.a = byte_offset(maps_[0].data());
    out.b = byte_offset(maps_[1].data());
    return out;
  }
  mha::TensorView map(int which) const {
    mha::TensorView t;
    t.data = maps_[which].data();
    t.length = maps_[which].size();
    t.shape = shapes_[which];
    return t;
  }
  int record(const mha::Status& status) {
    error_ = status.message();
    return static_cast<int>(status.code());
  }
  std::array<mha::Shape, 2> shapes_;
  std::array<std::vector<float>, 2> maps_;
  std::vector<double> heads_out_, rows_out_, matrix_out_, rows_shape_;
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
  using emscripten::value_object;
  using mha::Config;
  using mha::ForwardOptions;
  mha::bindings::register_status_codes();
  emscripten::enum_<mha::MaskDtype>("MaskDtype")
      .value("none", mha::MaskDtype::kNone)
      .value("bool", mha::MaskDtype::kBool)
      .value("float32", mha::MaskDtype::kFloat);

  value_object<Config>("Config")
      .field("embedDim", &get_dim<&Config::embed_dim>, &set_dim<&Config::embed_dim>)
      .field("numHeads", &get_dim<&Config::num_heads>, &set_dim<&Config::num_heads>)
      .field("numKvHeads", &get_dim<&Config::num_kv_heads>, &set_dim<&Config::num_kv_heads>)
      .field("kdim", &get_dim<&Config::kdim>, &set_dim<&Config::kdim>)
      .field("vdim", &get_dim<&Config::vdim>, &set_dim<&Config::vdim>)
      .field("bias", &Config::bias)
      .field("addBiasKv", &Config::add_bias_kv)
      .field("addZeroAttn", &Config::add_zero_attn)
      .field("batchFirst", &Config::batch_first);
  value_object<ForwardOptions>("ForwardOptions")
      .field("needWeights", &ForwardOptions::need_weights)
      .field("averageAttnWeights", &ForwardOptions::average_attn_weights)
      .field("isCausal", &ForwardOptions::is_causal)
      .field("returnHeadOutputs", &ForwardOptions::return_head_outputs)
      .field("returnConcat", &ForwardOptions::return_concat)
      .field("skipOutProj", &ForwardOptions::skip_out_proj)
      .field("fullyMaskedRowsZero", &ForwardOptions::fully_masked_rows_zero);
  value_object<ForwardCall>("ForwardCall")
      .field("query", &ForwardCall::query)
      .field("key", &ForwardCall::key)
      .field("value", &ForwardCall::value)
      .field("keyIsQuery", &ForwardCall::keyIsQuery)
      .field("valueIsKey", &ForwardCall::valueIsKey)
      .field("keyPaddingMask", &ForwardCall::keyPaddingMask)
      .field("keyPaddingMaskDtype", &ForwardCall::keyPaddingMaskDtype)
      .field("attnMask", &ForwardCall::attnMask)
      .field("attnMaskDtype", &ForwardCall::attnMaskDtype)
      .field("ablateHeads", &ForwardCall::ablateHeads)
      .field("options", &ForwardCall::options);
  value_object<InputBuffers>("InputBuffers")
      .field("status", &InputBuffers::status)
      .field("query", &InputBuffers::query)
      .field("key", &InputBuffers::key)
      .field("value", &InputBuffers::value)
      .field("keyPaddingMask", &InputBuffers::keyPaddingMask)
      .field("attnMask", &InputBuffers::attnMask);
  value_object<ForwardOutputs>("ForwardOutputs")
      .field("status", &ForwardOutputs::status)
      .field("output", &ForwardOutputs::output)
      .field("weights", &ForwardOutputs::weights)
      .field("headOutputs", &ForwardOutputs::headOutputs)
      .field("concat", &ForwardOutputs::concat);
  value_object<OutputShapes>("OutputShapes")
      .field("output", &OutputShapes::output)
      .field("weights", &OutputShapes::weights)
      .field("headOutputs", &OutputShapes::headOutputs)
      .field("concat", &OutputShapes::concat);
  value_object<TensorRef>("TensorRef")
      .field("status", &TensorRef::status)
      .field("data", &TensorRef::data)
      .field("shape", &TensorRef::shape);

  value_object<StatisticsOptions>("StatisticsOptions")
      .field("sparsityThreshold", &StatisticsOptions::sparsityThreshold)
      .field("perRow", &StatisticsOptions::perRow);
  value_object<MapBuffers>("MapBuffers").field("status", &MapBuffers::status).field("a", &MapBuffers::a).field("b", &MapBuffers::b);
  value_object<StatisticsResult>("StatisticsResult")
      .field("status", &StatisticsResult::status)
      .field("heads", &StatisticsResult::heads)
      .field("rows", &StatisticsResult::rows)
      .field("rowsShape", &StatisticsResult::rowsShape)
      .field("matrix", &StatisticsResult::matrix)
      .field("numHeads", &StatisticsResult::numHeads)
      .field("mean", &StatisticsResult::mean);

  emscripten::class_<Attention>("Attention")
      .constructor<>()
      .function("init", &Attention::init)
      .function("config", &Attention::config)
      .function("error", &Attention::error)
      .function("parameterNames", &Attention::parameterNames)
      .function("getParameter", &Attention::getParameter)
      .function("parameterBuffer", &Attention::parameterBuffer)
      .function("checkParameter", &Attention::checkParameter)
      .function("setParameter", &Attention::setParameter)
      .function("resetParameters", &Attention::resetParameters)
      .function("memoryCap", &Attention::memoryCap)
      .function("setMemoryCap", &Attention::setMemoryCap)
      .function("prepare", &Attention::prepare)
      .function("forward", &Attention::forward)
      .function("outputShapes", &Attention::outputShapes);
  emscripten::class_<Statistics>("Statistics")
      .constructor<>()
      .function("error", &Statistics::error)
      .function("prepareOne", &Statistics::prepareOne)
      .function("prepareTwo", &Statistics::prepareTwo)
      .function("headStatistics", &Statistics::headStatistics)
      .function("headSimilarity", &Statistics::headSimilarity)
      .function("jsDivergence", &Statistics::jsDivergence);
  emscripten::function("headStatisticsFields", &head_statistics_fields);
  emscripten::function("rowStatisticsFields", &row_statistics_fields);
  emscripten::function("heapBytes", &heap_bytes);
  emscripten::function("heapInUse", &heap_in_use);
  emscripten::function("liveObjects", &live_objects);
  emscripten::function("numThreads", &num_threads);
}
