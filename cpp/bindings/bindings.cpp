// The Embind table of the inference core: every name JavaScript sees is given here, once, in
// the dialect of boundary.h (results with code and message, shapes as arrays).
//   enums          StatusCode, MaskDtype
//   value objects  Config, ForwardCall, ForwardOptions, InputBuffers, ForwardOutputs,
//                  OutputShapes, StatisticsOptions, MapBuffers, StatisticsResult (and
//                  boundary.h's Outcome, Buffer, TensorRef); the names of a head's and a row's
//                  statistics (headStatisticsFields, rowStatisticsFields)
//   classes        Attention (one MultiHeadAttention and its input buffers), Statistics
// Float data crosses in bulk: prepare() describes the calls to come (shapes, dtypes, options),
// has the core check the whole call against the memory cap, sizes the buffers of its inputs and
// returns their byte offsets; JavaScript writes each input with one HEAPF32.set, and forward()
// returns the byte offsets of its results, each copied out with one HEAPF32.slice
// (outputShapes() gives their shapes). A call like the one before needs no new prepare(): only
// its data crosses. Defaults, checks of JavaScript types and thrown errors live in
// web/lib/index.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "boundary.h"
#include "mha/attention.h"
#include "mha/kernels.h"
#include "mha/statistics.h"

namespace {

using emscripten::typed_memory_view;
using emscripten::val;
using mha::bindings::Buffer;
using mha::bindings::byte_offset;
using mha::bindings::integers_of;
using mha::bindings::read_integers;
using mha::bindings::Outcome;
using mha::bindings::record;
using mha::bindings::shape_array;
using mha::bindings::TensorRef;
using mha::bindings::to_int64;

template <int64_t mha::Config::*Field>
double get_dim(const mha::Config& config) {
  return static_cast<double>(config.*Field);
}
template <int64_t mha::Config::*Field>
void set_dim(mha::Config& config, double value) {
  config.*Field = to_int64(value);
}
// outDim: a number, or undefined for embed_dim.
val get_out_dim(const mha::Config& config) { return config.out_dim ? val(static_cast<double>(*config.out_dim)) : val::undefined(); }
void set_out_dim(mha::Config& config, val value) {
  if (value.isUndefined()) {
    config.out_dim.reset();
  } else {
    config.out_dim = to_int64(value.as<double>());
  }
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

// What one forward call takes, besides its data: the inputs' shapes (arrays) and the options
// (the heads to ablate apart, an array). With keyIsQuery the key is the query (one buffer for
// both, its shape unused); with valueIsKey the value is the key. A mask is given when its dtype
// is not MaskDtype.none.
struct ForwardCall {
  val query = val::undefined(), key = val::undefined(), value = val::undefined();
  val keyPaddingMask = val::undefined(), attnMask = val::undefined(), ablateHeads = val::undefined();
  bool keyIsQuery = true;
  bool valueIsKey = true;
  mha::MaskDtype keyPaddingMaskDtype = mha::MaskDtype::kNone;
  mha::MaskDtype attnMaskDtype = mha::MaskDtype::kNone;
  mha::ForwardOptions options;
};

// Byte offsets of the buffers prepare() sized, to write each input into (0 for one not used).
struct InputBuffers : Outcome {
  double query = 0, key = 0, value = 0, keyPaddingMask = 0, attnMask = 0;
};

// Byte offsets of forward()'s results (0 for one the options did not ask for).
struct ForwardOutputs : Outcome {
  double output = 0, weights = 0, headOutputs = 0, concat = 0;
};

// The shapes of the last forward's results, as arrays (null for one not asked for): the same
// for every call prepare() described alike.
struct OutputShapes {
  val output = val::null(), weights = val::null(), headOutputs = val::null(), concat = val::null();
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

size_t count_of(const mha::Shape& shape) { return static_cast<size_t>(std::max<int64_t>(mha::checked_numel(shape), 0)); }

// The most dimensions an input has (a per-head attn_mask, (N*H, L, S), has three).
constexpr size_t kDims = 4;

void reserve_shapes(mha::CallShapes* shapes) {
  for (mha::Shape* shape : {&shapes->query, &shapes->key, &shapes->value, &shapes->key_padding_mask, &shapes->attn_mask}) {
    shape->reserve(kDims);
  }
}

class Attention {
 public:
  // The lists of call_ and next_ hold shapes of up to kDims dimensions from the start, so that
  // describing a call, refused or not, allocates nothing that stays (the leak and memory-cap
  // tests count every byte malloc hands out).
  Attention() {
    ++live_attention_objects;
    for (PreparedCall* call : {&call_, &next_}) reserve_shapes(&call->shapes);
  }
  ~Attention() { --live_attention_objects; }
  Attention(const Attention&) = delete;
  Attention& operator=(const Attention&) = delete;

  Outcome init(const mha::Config& config, double seed) {
    return mha::bindings::outcome_of(mha::MultiHeadAttention::Create(config, static_cast<uint64_t>(seed), &core_));
  }
  // The config resolved: num_kv_heads, kdim, vdim and out_dim filled in.
  mha::Config config() const { return core_->config(); }

  val parameterNames() const { return mha::bindings::string_array(core_->parameter_names()); }
  TensorRef getParameter(const std::string& name) {
    TensorRef t;
    if (record(core_->get_parameter(name, &parameter_), &t)) {
      t.data = byte_offset(parameter_.data.data());
      t.shape = shape_array(parameter_.shape);
    }
    return t;
  }
  // Where the values of the parameter `name` of this shape go. The shape is checked first, so
  // the buffer is never larger than the parameter (whose size Create() capped).
  Buffer parameterBuffer(const std::string& name, const val& shape) {
    Buffer b;
    const mha::Shape dims = integers_of(shape);
    if (!record(core_->check_parameter_shape(name, dims), &b)) return b;
    fit(parameter_input_, count_of(dims));
    b.data = byte_offset(parameter_input_.data());
    return b;
  }
  Outcome checkParameter(const std::string& name, const val& shape) {
    return mha::bindings::outcome_of(core_->check_parameter(name, parameter_input_.data(), parameter_input_.size(), integers_of(shape)));
  }
  Outcome setParameter(const std::string& name, const val& shape) {
    return mha::bindings::outcome_of(core_->set_parameter(name, parameter_input_.data(), parameter_input_.size(), integers_of(shape)));
  }
  void resetParameters(double seed) { core_->reset_parameters(static_cast<uint64_t>(seed)); }

  double memoryCap() const { return static_cast<double>(core_->memory_cap()); }
  // size_t is 32 bits in wasm32: a cap past it means "no cap beyond the address space", not 0.
  void setMemoryCap(double bytes) {
    const double most = static_cast<double>(std::numeric_limits<size_t>::max());
    core_->set_memory_cap(bytes >= most ? std::numeric_limits<size_t>::max() : static_cast<size_t>(bytes));
  }

  // Describes the calls to come: the core checks their shapes and the memory they take, then
  // the buffers of their inputs are sized, in order (query, key, value, masks), and the options
  // kept. Buffers they do not use are given back when large. Every forward() until the next
  // prepare() runs on the data written since. The description is read into next_ and swapped
  // with call_, so that the lists of both keep their memory from call to call.
  InputBuffers prepare(const ForwardCall& in) {
    InputBuffers out;
    prepared_ = false;
    mha::CallShapes& s = next_.shapes;
    read_integers(in.query, &s.query);
    s.key_is_query = in.keyIsQuery;
    s.value_is_key = in.valueIsKey;
    if (in.keyIsQuery) s.key = s.query;
    else read_integers(in.key, &s.key);
    if (in.valueIsKey) s.value = s.key;
    else read_integers(in.value, &s.value);
    s.key_padding_mask_dtype = in.keyPaddingMaskDtype;
    s.attn_mask_dtype = in.attnMaskDtype;
    if (in.keyPaddingMaskDtype != mha::MaskDtype::kNone) read_integers(in.keyPaddingMask, &s.key_padding_mask);
    else s.key_padding_mask.clear();
    if (in.attnMaskDtype != mha::MaskDtype::kNone) read_integers(in.attnMask, &s.attn_mask);
    else s.attn_mask.clear();
    next_.options = in.options;
    read_integers(in.ablateHeads, &next_.options.ablate_heads);
    if (!record(core_->check_call_memory(s, next_.options), &out)) return out;
    const struct {
      bool used;
      const mha::Shape& shape;
      bool bytes;  // a bool mask: one byte a value
    } slots[kInputs] = {
        {true, s.query, false},
        {!s.key_is_query, s.key, false},
        {!s.value_is_key, s.value, false},
        {s.key_padding_mask_dtype != mha::MaskDtype::kNone, s.key_padding_mask, s.key_padding_mask_dtype == mha::MaskDtype::kBool},
        {s.attn_mask_dtype != mha::MaskDtype::kNone, s.attn_mask, s.attn_mask_dtype == mha::MaskDtype::kBool},
    };
    if (parameter_input_.capacity() * sizeof(float) > kKeepBytes) std::vector<float>().swap(parameter_input_);
    double* offsets[kInputs] = {&out.query, &out.key, &out.value, &out.keyPaddingMask, &out.attnMask};
    for (int i = 0; i < kInputs; ++i) {
      const size_t count = slots[i].used ? count_of(slots[i].shape) : 0;
      fit(inputs_[i].floats, slots[i].bytes ? 0 : count);
      fit(inputs_[i].bytes, slots[i].bytes ? count : 0);
      *offsets[i] = slots[i].bytes ? byte_offset(inputs_[i].bytes.data()) : byte_offset(inputs_[i].floats.data());
    }
    std::swap(call_, next_);
    prepared_ = true;
    return out;
  }

  // One call as prepare() described it, on the data written since.
  ForwardOutputs forward() {
    ForwardOutputs out;
    if (!prepared_) {
      record(mha::Status(mha::StatusCode::kInvalidArgument, "forward: call prepare() first"), &out);
      return out;
    }
    const mha::CallShapes& s = call_.shapes;
    const mha::TensorView query = tensor(kQuery, s.query);
    const mha::TensorView key = s.key_is_query ? query : tensor(kKey, s.key);
    const mha::TensorView value = s.value_is_key ? key : tensor(kValue, s.value);
    if (!record(core_->forward(query, key, value, mask(kKeyPaddingMask, s.key_padding_mask_dtype, s.key_padding_mask),
                               mask(kAttnMask, s.attn_mask_dtype, s.attn_mask), call_.options, &result_),
                &out)) {
      return out;
    }
    out.output = byte_offset(result_.output.data.data());
    if (result_.weights.present()) out.weights = byte_offset(result_.weights.data.data());
    if (result_.head_outputs.present()) out.headOutputs = byte_offset(result_.head_outputs.data.data());
    if (result_.concat.present()) out.concat = byte_offset(result_.concat.data.data());
    return out;
  }

  OutputShapes outputShapes() const {
    const auto shape = [](const mha::Tensor& t) { return t.present() ? shape_array(t.shape) : val::null(); };
    return {shape(result_.output), shape(result_.weights), shape(result_.head_outputs), shape(result_.concat)};
  }

 private:
  enum Input : int { kQuery = 0, kKey = 1, kValue = 2, kKeyPaddingMask = 3, kAttnMask = 4, kInputs = 5 };
  struct InputBuffer {
    std::vector<float> floats;
    std::vector<uint8_t> bytes;
  };
  // The calls prepare() described.
  struct PreparedCall {
    mha::CallShapes shapes;
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

  std::unique_ptr<mha::MultiHeadAttention> core_;
  PreparedCall call_, next_;
  bool prepared_ = false;
  std::array<InputBuffer, kInputs> inputs_;
  std::vector<float> parameter_input_;
  mha::ForwardResult result_;
  mha::Tensor parameter_;
};

// ---------------------------------------------------------------------------------------------
// Statistics over maps the caller passes in; one shared scratch, since JS is single-threaded.

struct StatisticsOptions {
  double sparsityThreshold = 0.01;
  bool perRow = false;
};

// Byte offsets of the map buffers prepareOne() / prepareTwo() sized.
struct MapBuffers : Outcome {
  double a = 0, b = 0;
};

// The names of a head's and of a query row's statistics, in their order in a headStatistics()
// result.
template <typename Fields>
val names_of(const Fields& fields) {
  std::vector<std::string> names;
  for (const auto& f : fields) names.emplace_back(f.name);
  return mha::bindings::string_array(names);
}
val head_statistics_fields() { return names_of(kHeadFields); }
val row_statistics_fields() { return names_of(kRowFields); }

// What a statistics call gives: heads and rows (headStatistics), matrix and numHeads
// (headSimilarity: the (H, H) divergences), matrix and mean (jsDivergence: one a row).
struct StatisticsResult : Outcome {
  val heads = val::null();      // a Float64Array view: head h's F fields at h * F .., in headStatisticsFields() order
  val rows = val::null();       // likewise per query row (rowStatisticsFields()), or null unless asked for
  val rowsShape = val::null();  // (N, H, L) of the rows, N = 1 for a 3-D map
  val matrix = val::null();     // a Float64Array view
  double numHeads = 0;
  double mean = 0;
};

class Statistics {
 public:
  Statistics() {
    for (mha::Shape& shape : shapes_) shape.reserve(kDims);
  }

  // One map (named weights in messages), or two (a, b), refused past the default memory cap
  // before anything is allocated.
  MapBuffers prepareOne(const val& shape) {
    read_integers(shape, &shapes_[0]);
    shapes_[1].clear();
    return prepare(false, "weights");
  }
  MapBuffers prepareTwo(const val& a, const val& b) {
    read_integers(a, &shapes_[0]);
    read_integers(b, &shapes_[1]);
    return prepare(true, "a");
  }

  StatisticsResult headStatistics(const StatisticsOptions& options) {
    StatisticsResult r;
    mha::StatisticsOptions core_options;
    core_options.sparsity_threshold = options.sparsityThreshold;
    std::vector<mha::HeadStatistics> heads;
    std::vector<mha::RowStatistics> rows;
    if (!record(mha::head_statistics(map(0), core_options, &heads, options.perRow ? &rows : nullptr), &r)) return r;
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
      r.rowsShape = shape_array(s.size() == 4 ? mha::Shape{s[0], s[1], s[2]} : mha::Shape{1, s[0], s[1]});
    }
    return r;
  }

  StatisticsResult headSimilarity() {
    StatisticsResult r;
    if (!record(mha::head_similarity(map(0), &matrix_out_), &r)) return r;
    r.matrix = val(typed_memory_view(matrix_out_.size(), matrix_out_.data()));
    r.numHeads = static_cast<double>(shapes_[0][shapes_[0].size() - 3]);
    return r;
  }

  StatisticsResult jsDivergence() {
    StatisticsResult r;
    if (!record(mha::js_divergence(map(0), map(1), &matrix_out_, &r.mean), &r)) return r;
    r.matrix = val(typed_memory_view(matrix_out_.size(), matrix_out_.data()));
    return r;
  }

 private:
  // The maps of shapes_ (the second one when `two`).
  MapBuffers prepare(bool two, const char* a_name) {
    MapBuffers out;
    if (!record(mha::check_maps_memory(shapes_[0], a_name, two ? &shapes_[1] : nullptr), &out)) return out;
    fit(maps_[0], count_of(shapes_[0]));
    fit(maps_[1], two ? count_of(shapes_[1]) : 0);
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
  std::array<mha::Shape, 2> shapes_;
  std::array<std::vector<float>, 2> maps_;
  std::vector<double> heads_out_, rows_out_, matrix_out_;
};

// Threads the kernels split work over: 1, or 2 in the pthreads module.
int num_threads() { return mha::kernels::num_threads(); }
int live_objects() { return live_attention_objects; }

}  // namespace

EMSCRIPTEN_BINDINGS(mha_core) {
  using emscripten::value_object;
  using mha::Config;
  using mha::ForwardOptions;
  using mha::bindings::with_outcome;
  mha::bindings::register_boundary();
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
      .field("outDim", &get_out_dim, &set_out_dim)
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
  with_outcome(value_object<InputBuffers>("InputBuffers"))
      .field("query", &InputBuffers::query)
      .field("key", &InputBuffers::key)
      .field("value", &InputBuffers::value)
      .field("keyPaddingMask", &InputBuffers::keyPaddingMask)
      .field("attnMask", &InputBuffers::attnMask);
  with_outcome(value_object<ForwardOutputs>("ForwardOutputs"))
      .field("output", &ForwardOutputs::output)
      .field("weights", &ForwardOutputs::weights)
      .field("headOutputs", &ForwardOutputs::headOutputs)
      .field("concat", &ForwardOutputs::concat);
  value_object<OutputShapes>("OutputShapes")
      .field("output", &OutputShapes::output)
      .field("weights", &OutputShapes::weights)
      .field("headOutputs", &OutputShapes::headOutputs)
      .field("concat", &OutputShapes::concat);

  value_object<StatisticsOptions>("StatisticsOptions")
      .field("sparsityThreshold", &StatisticsOptions::sparsityThreshold)
      .field("perRow", &StatisticsOptions::perRow);
  with_outcome(value_object<MapBuffers>("MapBuffers")).field("a", &MapBuffers::a).field("b", &MapBuffers::b);
  with_outcome(value_object<StatisticsResult>("StatisticsResult"))
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
      .function("prepareOne", &Statistics::prepareOne)
      .function("prepareTwo", &Statistics::prepareTwo)
      .function("headStatistics", &Statistics::headStatistics)
      .function("headSimilarity", &Statistics::headSimilarity)
      .function("jsDivergence", &Statistics::jsDivergence);
  emscripten::function("headStatisticsFields", &head_statistics_fields);
  emscripten::function("rowStatisticsFields", &row_statistics_fields);
  emscripten::function("liveObjects", &live_objects);
  emscripten::function("numThreads", &num_threads);
}
