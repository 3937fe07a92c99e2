// Model: one runtime for every family of models/family.h. Every linear layer is
// kernels::linear_packed on weights in nn.Linear's (out, in) layout, packed; every attention
// layer is MultiHeadAttention::forward on the stream, unbatched (T, E), with per-head weights.
// The weights go from the file's bytes straight into those packed buffers (Loading below);
// which tensor goes where, and which blocks a layer runs, the family's table says.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "mha/kernels.h"
#include "mha/models.h"
#include "models/family.h"
#include "models/numbers.h"

namespace mha::models {
namespace {

// t as a tensor of `shape`, its storage reused: values already there are not cleared (every
// caller overwrites them all), so a result filled again at the same size is not zeroed first.
void reshape(Tensor* t, Shape shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  t->data.resize(n);
  t->shape = std::move(shape);
}

Tensor make_tensor(Shape shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  Tensor t;
  t.data.assign(n, 0.0f);
  t.shape = std::move(shape);
  return t;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool starts_with(const std::string& s, const std::string& head) { return s.compare(0, head.size(), head) == 0; }

// A name template's "{l}" replaced by the layer.
std::string at_layer(const std::string& name, int64_t l) {
  const size_t at = name.find("{l}");
  return at == std::string::npos ? name : name.substr(0, at) + std::to_string(l) + name.substr(at + 3);
}

int64_t packed_floats(int64_t out, int64_t in) { return kernels::packed_weight_floats(out, in); }

// Where one tensor of the file goes.
struct Slot {
  enum class Kind { kCopy, kPack, kDrop } kind = Kind::kDrop;
  Shape shape;              // as the file must have it
  float* dest = nullptr;
  uint16_t* dest16 = nullptr;  // kPack into a 16-bit packing: the file's words are written as they are
  int64_t offset = 0;       // kCopy: the first float written
  int64_t N = 0, K = 0;     // kPack: the packed weight (N, K) …
  int64_t row_offset = 0;   // … rows row_offset .. + rows of it
  int64_t rows = 0;
  bool transposed = false;  // kPack: the file stores [K, rows] (Conv1D)
  bool optional = false;    // may be absent (a tied head's copy)
};

}  // namespace

// A streamed load: the header as it arrives, then each tensor's bytes converted and written
// through its slot. data_pos counts bytes of the data section (after the header).
// One tensor of the file: where its bytes are, how wide its values, and where they go.
struct FileEntry {
  std::string name;
  int width = 4;      // bytes per value
  bool half = false;  // F16 (else BF16 when width 2)
  uint64_t begin = 0, end = 0;
  Slot slot;
};

struct Model::Loading {
  using Entry = FileEntry;
  std::string file;
  uint64_t file_bytes = 0;  // 0: not known
  uint64_t received = 0;
  std::string header;       // the 8-byte length, then the JSON
  uint64_t header_length = 0;
  bool header_done = false;
  std::vector<Entry> entries;  // by begin
  size_t next = 0;
  uint64_t data_pos = 0;
  uint8_t carry[4] = {0, 0, 0, 0};  // a value split between two chunks
  int carried = 0;
  std::vector<float> values;        // one conversion's floats
  std::vector<uint16_t> words;      // and their 16-bit words, when the file's are
};

Model::~Model() = default;

Status Model::Create(const ModelConfig& config, const LoadLimits& limits, std::unique_ptr<Model>* out) {
  if (config.family == nullptr || config.hidden < 1 || config.num_heads < 1 || config.head_dim < 1 || config.num_kv_heads < 1 ||
      config.num_heads % config.num_kv_heads != 0 ||
      config.num_layers < 1 || config.vocab_size < 1 || config.max_positions < 1 || config.intermediate < 1) {
    return Status(StatusCode::kInvalidConfig, "model config: a family, and sizes positive with num_kv_heads dividing num_heads");
  }
  std::unique_ptr<Model> model(new Model());
  model->config_ = config;
  model->limits_ = limits;
  const int64_t T = std::max<int64_t>(1, std::min(limits.plan_tokens, config.max_positions));
  const double weights = static_cast<double>(model->weight_bytes()), run = static_cast<double>(model->run_bytes(T));
  if (weights + run > static_cast<double>(limits.max_memory_bytes)) {
    const auto mb = [](double b) { return std::to_string(static_cast<int64_t>(std::ceil(b / 1e6))) + " MB"; };
    return Status(StatusCode::kTooLarge, "the model needs " + mb(weights + run) + " (" + std::to_string(config.parameter_count()) +
                                             " parameters: weights " + mb(weights) + ", a run of " + std::to_string(T) +
                                             " tokens " + mb(run) + "), more than the " + mb(static_cast<double>(limits.max_memory_bytes)) +
                                             " it may take");
  }
  *out = std::move(model);
  return Status::Ok();
}

void Model::Linear::apply(float* y, const float* x, const float* b, int64_t rows) const {
  if (packed16.empty()) kernels::linear_packed(y, x, packed.data(), b, rows, out, in);
  else kernels::linear_packed16(y, x, packed16.data(), bf16, b, rows, out, in);
}

void Model::Linear::row(float* y, int64_t r) const {
  if (packed16.empty()) kernels::unpack_weight_rows(y, packed.data(), in, r, r + 1);
  else kernels::unpack_weight_rows16(y, packed16.data(), bf16, in, r, r + 1);
}

// Every buffer the weights go into, zeroed (packing pads with zeros); attention modules packed
// only, nothing drawn at random. Made when the file's header says how the matrices are stored.
Status Model::allocate(PackedStorage storage) {
  storage_ = storage;
  const bool sixteen = storage != PackedStorage::kFloat32, bf16 = storage == PackedStorage::kBfloat16;
  const ModelConfig& c = config_;
  const TensorNames& n = c.family->names;
  const int64_t E = c.hidden, I = c.intermediate, V = c.vocab_size;
  const auto linear = [&](Linear* lin, int64_t out, int64_t in, bool bias) {
    lin->out = out;
    lin->in = in;
    const size_t size = static_cast<size_t>(packed_floats(out, in));
    lin->packed.assign(sixteen ? 0 : size, 0.0f);
    lin->packed16.assign(sixteen ? size : 0, 0);
    lin->bf16 = bf16;
    lin->bias.assign(bias ? static_cast<size_t>(out) : 0, 0.0f);
  };
  const bool rms = c.family->norm == NormKind::kRmsNorm;
  const auto norm = [&](Norm* nm) {
    nm->weight.assign(static_cast<size_t>(E), 0.0f);
    nm->bias.assign(rms ? 0 : static_cast<size_t>(E), 0.0f);
  };
  linear(&word_, V, E, false);
  if (c.family->positions == Positions::kLearned) position_.assign(static_cast<size_t>(c.max_positions * E), 0.0f);
  if (!n.token_type.empty()) token_type_.assign(static_cast<size_t>(c.type_vocab_size * E), 0.0f);
  if (!n.embed_norm.empty()) norm(&embed_norm_);
  layers_.clear();
  layers_.resize(static_cast<size_t>(c.num_layers));
  for (Layer& layer : layers_) {
    Config attention;
    attention.embed_dim = E;
    attention.num_heads = c.num_heads;
    attention.num_kv_heads = c.num_kv_heads;
    attention.head_dim = c.head_dim;
    // one flag for both: a family with q, k, v biases and none on W_O keeps W_O's at zero
    attention.bias = c.qkv_bias || c.out_bias;
    if (c.family->positions == Positions::kRotary) attention.rotary = c.rotary;
    MHA_RETURN_IF_ERROR(MultiHeadAttention::CreatePacked(attention, &layer.attention, storage));
    if (&layer != &layers_[0]) layer.attention->share_workspace(*layers_[0].attention);  // layers run one at a time
    norm(&layer.attention_norm);
    norm(&layer.ffn_norm);
    const bool gated = c.family->feed_forward == FeedForward::kGated;
    linear(&layer.up, gated ? 2 * I : I, E, c.mlp_bias);
    linear(&layer.down, E, I, c.mlp_bias);
  }
  if (!n.final_norm.empty()) norm(&final_norm_);
  if (c.task == Task::kMasked) {
    linear(&head_transform_, E, E, true);
    norm(&head_norm_);
  }
  if (c.lm_head) {
    // head_: an untied weight, and the masked-LM head's bias
    head_.out = V;
    head_.in = E;
    head_.packed.clear();
    head_.packed16.clear();
    head_.bf16 = bf16;
    if (!c.tie_word_embeddings) {
      if (sixteen) head_.packed16.assign(static_cast<size_t>(packed_floats(V, E)), 0);
      else head_.packed.assign(static_cast<size_t>(packed_floats(V, E)), 0.0f);
    }
    if (c.task == Task::kMasked) head_.bias.assign(static_cast<size_t>(V), 0.0f);
  }
  return Status::Ok();
}

// The packed matrices (4 bytes a value, or 2 when the model keeps a 16-bit file's words) and
// the vectors and position tables (float32).
uint64_t Model::weight_bytes() const {
  const ModelConfig& c = config_;
  const TensorNames& n = c.family->names;
  const int64_t E = c.hidden, I = c.intermediate, V = c.vocab_size;
  const int64_t qd = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  const bool gated = c.family->feed_forward == FeedForward::kGated;
  const int64_t norm = c.family->norm == NormKind::kRmsNorm ? E : 2 * E;
  int64_t matrices = packed_floats(V, E), vectors = c.family->positions == Positions::kLearned ? c.max_positions * E : 0;
  if (!n.token_type.empty()) vectors += c.type_vocab_size * E;
  if (!n.embed_norm.empty()) vectors += norm;
  matrices += c.num_layers * (packed_floats(qd + 2 * kv, E) + packed_floats(E, qd) + packed_floats(gated ? 2 * I : I, E) +
                              packed_floats(E, I));
  const bool attention_bias = c.qkv_bias || c.out_bias;
  vectors += c.num_layers * ((attention_bias ? qd + 2 * kv + E : 0) + 2 * norm + (c.mlp_bias ? (gated ? 2 * I : I) + E : 0));
  if (!n.final_norm.empty()) vectors += norm;
  if (c.task == Task::kMasked) {
    matrices += packed_floats(E, E);
    vectors += E + 2 * E + V;
  }
  if (c.lm_head && !c.tie_word_embeddings) matrices += packed_floats(V, E);
  if (has_pooler_) {
    matrices += packed_floats(E, E);
    vectors += E;
  }
  const uint64_t value_bytes = storage_ == PackedStorage::kFloat32 ? 4 : 2;
  return static_cast<uint64_t>(matrices) * value_bytes + static_cast<uint64_t>(vectors) * sizeof(float);
}

// A run of T tokens with head outputs kept: per layer its results (weights (H, T, T), residual,
// head outputs, concatenation, attention output); the attention's workspace, one for every
// layer (q k v, the probabilities, the concatenation); the stream and the feed-forward's
// scratch; logits.
uint64_t Model::run_bytes(int64_t T) const {
  const ModelConfig& c = config_;
  const int64_t E = c.hidden, H = c.num_heads, I = c.intermediate, qd = H * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  const bool gated = c.family->feed_forward == FeedForward::kGated;
  const int64_t per_layer = H * T * T + 2 * T * E + 2 * T * qd;
  const int64_t workspace = T * (qd + 2 * kv) + H * T * T + 2 * T * qd;
  const int64_t floats = c.num_layers * per_layer + workspace + 4 * T * E + T * I * (gated ? 3 : 1) +
                         (c.sliding_window > 0 ? T * T : 0) + (c.lm_head ? T * c.vocab_size : 0);
  return static_cast<uint64_t>(floats) * sizeof(float);
}

Status Model::Load(std::string_view config_json, const std::string& config_file, std::string_view safetensors,
                   const std::string& safetensors_file, const LoadLimits& limits, std::unique_ptr<Model>* out) {
  ModelConfig config;
  MHA_RETURN_IF_ERROR(ParseConfig(config_json, config_file, &config));
  std::unique_ptr<Model> model;
  Status created = Create(config, limits, &model);
  if (!created.ok()) return Status(created.code(), config_file + ": " + created.message());
  MHA_RETURN_IF_ERROR(model->LoadWeights(safetensors, safetensors_file));
  *out = std::move(model);
  return Status::Ok();
}

Status Model::LoadWeights(std::string_view safetensors, const std::string& file) {
  MHA_RETURN_IF_ERROR(BeginWeights(file, safetensors.size()));
  MHA_RETURN_IF_ERROR(FeedWeights(reinterpret_cast<const uint8_t*>(safetensors.data()), safetensors.size()));
  return FinishWeights();
}

Status Model::BeginWeights(const std::string& file, uint64_t file_bytes) {
  loaded_ = false;
  loading_.reset();
  if (file_bytes > limits_.max_file_bytes) {
    return Status(StatusCode::kTooLarge, file + ": " + std::to_string(file_bytes) + " bytes, more than the " +
                                             std::to_string(limits_.max_file_bytes) + " the loader takes");
  }
  if (file_bytes != 0 && file_bytes < 8) {
    return Status(StatusCode::kInvalidArgument, file + ": shorter than a safetensors header (8 bytes)");
  }
  loading_ = std::make_unique<Loading>();
  loading_->file = file;
  loading_->file_bytes = file_bytes;
  return Status::Ok();
}

// Every entry of the header checked (as ReadSafetensors checks it): its dtype, shape and place in
// the data; the names the family skips left out.
// data_bytes: the size of the data section (UINT64_MAX when not known).
static Status ReadEntries(std::string_view text, uint64_t data_bytes, const TensorNames& n, const std::string& file,
                          std::map<std::string, FileEntry>* entries, std::map<std::string, Shape>* shapes) {
  using nlohmann::json;
  const auto fail = [&](const std::string& message) { return Status(StatusCode::kInvalidArgument, file + ": " + message); };
  const json header = json::parse(text.begin(), text.end(), nullptr, false);
  if (header.is_discarded() || !header.is_object()) return fail("the header is not a JSON object");
  const auto skipped = [&](const std::string& name) {
    for (const std::string& s : n.skip_suffixes) if (ends_with(name, s)) return true;
    for (const std::string& s : n.skip_prefixes) if (starts_with(name, s)) return true;
    return false;
  };
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__" || skipped(name)) continue;
    const json& entry = it.value();
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array() || !entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2 || !entry["data_offsets"][0].is_number_unsigned() ||
        !entry["data_offsets"][1].is_number_unsigned()) {
      return fail(where + ": expected {dtype, shape, data_offsets: [begin, end]}");
    }
    FileEntry e;
    e.name = name;
    const std::string dtype = entry["dtype"].get<std::string>();
    if (dtype == "F32") e.width = 4;
    else if (dtype == "F16" || dtype == "BF16") e.width = 2;
    else return fail(where + " has dtype " + dtype + " (F32, F16 and BF16 are read)");
    e.half = dtype == "F16";
    uint64_t count = 1;
    Shape shape;
    for (const json& d : entry["shape"]) {
      if (!d.is_number_unsigned()) return fail(where + ": a dimension of its shape is not a non-negative integer");
      const uint64_t v = d.get<uint64_t>();
      if (v != 0 && count > (uint64_t{1} << 40) / v) return fail(where + ": its shape holds more values than any file can");
      count *= v;
      shape.push_back(static_cast<int64_t>(v));
    }
    e.begin = entry["data_offsets"][0].get<uint64_t>();
    e.end = entry["data_offsets"][1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_bytes) {
      return fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] run past the " +
                  std::to_string(data_bytes) + " bytes of data");
    }
    if (e.end - e.begin != count * static_cast<uint64_t>(e.width)) {
      return fail(where + ": shape " + shape_text(shape) + " of " + dtype + " needs " + std::to_string(count * e.width) +
                  " bytes, its data_offsets hold " + std::to_string(e.end - e.begin));
    }
    (*shapes)[name] = shape;
    entries->emplace(name, std::move(e));
  }

  return Status::Ok();
}

// Each slot of the plan given the file's entry of its name (missing, mis-shaped and left-over
// tensors refused), the entries then in the file's order, none overlapping another.
static Status MatchPlan(const std::vector<std::pair<std::string, Slot>>& plan, std::map<std::string, FileEntry>* entries,
                        const std::map<std::string, Shape>& shapes, const std::string& file, const std::string& architecture,
                        std::vector<FileEntry>* out) {
  const auto fail = [&](const std::string& message) { return Status(StatusCode::kInvalidArgument, file + ": " + message); };
  for (const auto& [name, slot] : plan) {
    auto it = entries->find(name);
    if (it == entries->end()) {
      if (slot.optional) continue;
      return Status(StatusCode::kUnknownParameter, file + ": tensor '" + name + "' is missing (expected shape " +
                                                       shape_text(slot.shape) + ")");
    }
    if (shapes.at(name) != slot.shape) {
      return Status(StatusCode::kShapeMismatch, file + ": tensor '" + name + "' has shape " + shape_text(shapes.at(name)) +
                                                    ", expected " + shape_text(slot.shape));
    }
    it->second.slot = slot;
    out->push_back(it->second);
    entries->erase(it);
  }
  // Nothing left over: a tensor the architecture does not have means another model.
  if (!entries->empty()) {
    return Status(StatusCode::kUnknownParameter, file + ": tensor '" + entries->begin()->first + "' is not part of a " +
                                                     architecture + (entries->size() > 1 ? " (nor are " +
                                                     std::to_string(entries->size() - 1) + " more)" : ""));
  }
  std::sort(out->begin(), out->end(),
            [](const FileEntry& a, const FileEntry& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < out->size(); ++i) {
    const FileEntry &before = (*out)[i - 1], &e = (*out)[i];
    if (e.begin < before.end) return fail("tensors '" + before.name + "' and '" + e.name + "' overlap in the file");
  }
  return Status::Ok();
}

// The header read (ReadEntries), then each entry given its slot from the family's table: a
// tensor the family expects and the file lacks, one with another shape, or one the family has no
// place for is refused here, before any weight is written.
Status Model::plan_weights(Loading* loading, const std::string& file) {
  const auto fail = [&](const std::string& message) { return Status(StatusCode::kInvalidArgument, file + ": " + message); };
  const ModelConfig& c = config_;
  const TensorNames& n = c.family->names;
  std::map<std::string, Loading::Entry> entries;
  std::map<std::string, Shape> shapes;
  const std::string_view text(loading->header.data() + 8, loading->header_length);
  const uint64_t data_bytes = loading->file_bytes == 0 ? UINT64_MAX : loading->file_bytes - 8 - loading->header_length;
  MHA_RETURN_IF_ERROR(ReadEntries(text, data_bytes, n, file, &entries, &shapes));

  // The matrices stay 16-bit when every one of them is float16, or every one bfloat16 (the
  // GEMM widens them exactly as it reads them); else float32.
  bool all_f16 = true, all_bf16 = true;
  for (const auto& [name, e] : entries) {
    if (shapes[name].size() != 2) continue;
    all_f16 = all_f16 && e.width == 2 && e.half;
    all_bf16 = all_bf16 && e.width == 2 && !e.half;
  }
  const PackedStorage storage = entries.empty() ? PackedStorage::kFloat32
                                : all_f16       ? PackedStorage::kFloat16
                                : all_bf16      ? PackedStorage::kBfloat16
                                                : PackedStorage::kFloat32;
  MHA_RETURN_IF_ERROR(allocate(storage));

  // The slots, in the family's order.
  const int64_t E = c.hidden, I = c.intermediate, V = c.vocab_size, P = c.max_positions;
  const bool conv1d = c.family->linear_layout == LinearLayout::kConv1D;
  const auto has = [&](const std::string& name) { return entries.count(name) != 0; };
  const std::string p = has(n.base_prefix + n.word + ".weight") ? n.base_prefix
                        : has(n.word + ".weight")                 ? ""
                        : c.lm_head                               ? n.base_prefix
                                                                  : "";
  std::vector<std::pair<std::string, Slot>> plan;
  const auto copy = [&](const std::string& name, Shape shape, float* dest, int64_t offset = 0) {
    Slot s;
    s.kind = Slot::Kind::kCopy;
    s.shape = std::move(shape);
    s.dest = dest;
    s.offset = offset;
    plan.emplace_back(name, s);
  };
  // a weight (rows, K) of a packed (N, K) from row `row_offset`; `file_conv1d`: stored [K, rows]
  const auto pack = [&](const std::string& name, float* packed, uint16_t* packed16, int64_t N, int64_t K,
                        int64_t row_offset, int64_t rows, bool file_conv1d) {
    Slot s;
    s.kind = Slot::Kind::kPack;
    s.shape = file_conv1d ? Shape{K, rows} : Shape{rows, K};
    s.dest = packed;
    s.dest16 = packed16;
    s.N = N;
    s.K = K;
    s.row_offset = row_offset;
    s.rows = rows;
    s.transposed = file_conv1d;
    plan.emplace_back(name, s);
  };
  const auto drop = [&](const std::string& name, Shape shape) {
    Slot s;
    s.shape = std::move(shape);
    s.optional = true;
    plan.emplace_back(name, s);
  };
  const auto norm = [&](const std::string& base, Norm* nm) {
    const bool legacy = !n.legacy_norm_weight.empty() && !has(base + ".weight") && has(base + "." + n.legacy_norm_weight);
    copy(base + "." + (legacy ? n.legacy_norm_weight : "weight"), {E}, nm->weight.data());
    if (!nm->bias.empty()) copy(base + "." + (legacy ? n.legacy_norm_bias : "bias"), {E}, nm->bias.data());
  };
  const auto linear = [&](const std::string& base, Linear* lin) {
    pack(base + ".weight", lin->packed.data(), lin->packed16.data(), lin->out, lin->in, 0, lin->out, conv1d);
    if (!lin->bias.empty()) copy(base + ".bias", {lin->out}, lin->bias.data());
  };
  pack(p + n.word + ".weight", word_.packed.data(), word_.packed16.data(), V, E, 0, V, false);
  if (c.family->positions == Positions::kLearned) copy(p + n.position + ".weight", {P, E}, position_.data());
  if (!n.token_type.empty()) copy(p + n.token_type + ".weight", {c.type_vocab_size, E}, token_type_.data());
  if (!n.embed_norm.empty()) norm(p + n.embed_norm, &embed_norm_);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    Layer& layer = layers_[static_cast<size_t>(l)];
    MultiHeadAttention& a = *layer.attention;
    float* in_w = a.packed_storage("in_proj_weight");
    uint16_t* in_w16 = a.packed_storage16("in_proj_weight");
    float* in_b = a.packed_storage("in_proj_bias");
    const auto name = [&](const std::string& base) { return p + at_layer(base, l); };
    if (c.family->norm_placement == NormPlacement::kPre) norm(name(n.attention_norm), &layer.attention_norm);
    if (!n.qkv.empty()) {  // in_proj_weight's rows are q, k, v: the fused layer's outputs in order
      pack(name(n.qkv) + ".weight", in_w, in_w16, 3 * E, E, 0, 3 * E, conv1d);
      copy(name(n.qkv) + ".bias", {3 * E}, in_b);
    } else {
      // the fused in-projection's rows: W_q (H hd), W_k (G hd), W_v (G hd)
      const int64_t qd = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim, F = qd + 2 * kv;
      const struct {
        const std::string* base;
        int64_t first, rows;
      } parts[] = {{&n.q, 0, qd}, {&n.k, qd, kv}, {&n.v, qd + kv, kv}};
      for (const auto& part : parts) {
        pack(name(*part.base) + ".weight", in_w, in_w16, F, E, part.first, part.rows, conv1d);
        if (c.qkv_bias) copy(name(*part.base) + ".bias", {part.rows}, in_b, part.first);
      }
    }
    const int64_t qd = c.num_heads * c.head_dim;
    pack(name(n.attention_out) + ".weight", a.packed_storage("out_proj.weight"), a.packed_storage16("out_proj.weight"), E, qd, 0,
         E, conv1d);
    if (c.out_bias) copy(name(n.attention_out) + ".bias", {E}, a.packed_storage("out_proj.bias"));
    if (c.family->norm_placement == NormPlacement::kPost) norm(name(n.attention_norm), &layer.attention_norm);
    if (c.family->norm_placement == NormPlacement::kPre) norm(name(n.ffn_norm), &layer.ffn_norm);
    if (c.family->feed_forward == FeedForward::kGated) {  // up's rows: W_gate, then W_up
      for (int64_t part = 0; part < 2; ++part) {
        const std::string base = name(part == 0 ? n.gate : n.up);
        pack(base + ".weight", layer.up.packed.data(), layer.up.packed16.data(), 2 * I, E, part * I, I, conv1d);
        if (c.mlp_bias) copy(base + ".bias", {I}, layer.up.bias.data(), part * I);
      }
    } else {
      linear(name(n.up), &layer.up);
    }
    linear(name(n.down), &layer.down);
    if (c.family->norm_placement == NormPlacement::kPost) norm(name(n.ffn_norm), &layer.ffn_norm);
  }
  if (!n.final_norm.empty()) norm(p + n.final_norm, &final_norm_);
  has_pooler_ = !n.pooler.empty() && has(p + n.pooler + ".weight");
  if (has_pooler_) {
    pooler_.out = pooler_.in = E;
    pooler_.packed.assign(storage == PackedStorage::kFloat32 ? static_cast<size_t>(packed_floats(E, E)) : 0, 0.0f);
    pooler_.packed16.assign(storage == PackedStorage::kFloat32 ? 0 : static_cast<size_t>(packed_floats(E, E)), 0);
    pooler_.bf16 = storage == PackedStorage::kBfloat16;
    pooler_.bias.assign(static_cast<size_t>(E), 0.0f);
    linear(p + n.pooler, &pooler_);
  }
  if (c.task == Task::kMasked) {
    linear(n.head_transform, &head_transform_);
    norm(n.head_norm, &head_norm_);
    copy(n.head_bias, {V}, head_.bias.data());
    for (const std::string& copy_name : n.head_bias_copies) drop(copy_name, {V});
  }
  if (c.lm_head) {
    // tied: the head is the token embeddings (a copy in the file, where one was written, is the same tensor)
    if (c.tie_word_embeddings) drop(n.head_weight, {V, E});
    else pack(n.head_weight, head_.packed.data(), head_.packed16.data(), V, E, 0, V, false);
  }

  return MatchPlan(plan, &entries, shapes, file, c.architecture, &loading->entries);
}

Status Model::FeedWeights(const uint8_t* bytes, size_t count) {
  if (!loading_) return Status(StatusCode::kInvalidArgument, "no load is under way (BeginWeights first)");
  Loading& g = *loading_;
  const auto failed = [&](Status s) {
    loading_.reset();
    return s;
  };
  const auto fail = [&](const std::string& message) {
    return failed(Status(StatusCode::kInvalidArgument, g.file + ": " + message));
  };
  g.received += count;
  if (g.received > limits_.max_file_bytes) {
    return failed(Status(StatusCode::kTooLarge, g.file + ": " + std::to_string(g.received) + " bytes, more than the " +
                                                    std::to_string(limits_.max_file_bytes) + " the loader takes"));
  }
  // 1. the header: its length, then its JSON
  while (!g.header_done && count > 0) {
    const size_t want = (g.header.size() < 8 ? 8 : 8 + g.header_length) - g.header.size();
    const size_t take = std::min(want, count);
    g.header.append(reinterpret_cast<const char*>(bytes), take);
    bytes += take;
    count -= take;
    if (g.header.size() == 8) {
      for (int i = 7; i >= 0; --i) g.header_length = g.header_length << 8 | static_cast<unsigned char>(g.header[static_cast<size_t>(i)]);
      if ((g.file_bytes != 0 && g.header_length > g.file_bytes - 8) || g.header_length > (uint64_t{100} << 20)) {
        return fail("header length " + std::to_string(g.header_length) + " runs past the end of the file");
      }
    }
    if (g.header.size() >= 8 && g.header.size() == 8 + g.header_length) {
      const Status planned = plan_weights(&g, g.file);
      if (!planned.ok()) return failed(planned);
      std::string().swap(g.header);
      g.header_done = true;
      g.values.resize(16384);
      g.words.resize(16384);
    }
  }
  // 2. the data: each tensor's values converted and written where its slot says
  while (count > 0) {
    while (g.next < g.entries.size() && g.entries[g.next].end <= g.data_pos) ++g.next;
    if (g.next == g.entries.size()) {  // past the last tensor read (buffers, padding)
      g.data_pos += count;
      break;
    }
    Loading::Entry& e = g.entries[g.next];
    if (g.data_pos < e.begin) {
      const size_t gap = static_cast<size_t>(std::min<uint64_t>(count, e.begin - g.data_pos));
      g.data_pos += gap;
      bytes += gap;
      count -= gap;
      continue;
    }
    const size_t here = static_cast<size_t>(std::min<uint64_t>(count, e.end - g.data_pos));
    if (e.slot.kind == Slot::Kind::kDrop) {
      g.data_pos += here;
      bytes += here;
      count -= here;
      continue;
    }
    // values first .. first + n of this tensor; a value split by the chunk's end is carried
    const uint64_t width = static_cast<uint64_t>(e.width);
    const uint64_t in_tensor = g.data_pos - e.begin;
    uint64_t first = in_tensor / width;
    size_t used = 0;
    if (g.carried > 0) {
      while (g.carried < e.width && used < here) g.carry[g.carried++] = bytes[used++];
      if (g.carried < e.width) {
        g.data_pos += used;
        bytes += used;
        count -= used;
        continue;
      }
    }
    float* out = g.values.data();
    int64_t n_out = 0;
    const auto flush = [&]() -> bool {
      for (int64_t i = 0; i < n_out; ++i) {
        if (!std::isfinite(out[i])) return false;
      }
      if (e.slot.kind == Slot::Kind::kCopy) {
        std::memcpy(e.slot.dest + e.slot.offset + first, out, static_cast<size_t>(n_out) * sizeof(float));
      } else if (e.slot.dest16 != nullptr) {
        kernels::pack_weight_elements16(e.slot.dest16, e.slot.N, e.slot.K, e.slot.row_offset, e.slot.rows, g.words.data(),
                                        static_cast<int64_t>(first), n_out, e.slot.transposed);
      } else {
        kernels::pack_weight_elements(e.slot.dest, e.slot.N, e.slot.K, e.slot.row_offset, e.slot.rows, out,
                                      static_cast<int64_t>(first), n_out, e.slot.transposed);
      }
      first += static_cast<uint64_t>(n_out);
      n_out = 0;
      return true;
    };
    const auto value_of = [&](const uint8_t* p) {
      float v;
      if (e.width == 4) {
        const uint32_t b = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
        std::memcpy(&v, &b, 4);
      } else {
        const uint16_t h = static_cast<uint16_t>(p[0] | p[1] << 8);
        v = e.half ? half_to_float(h) : bfloat16_to_float(h);
      }
      return v;
    };
    const auto non_finite = [&]() {
      for (int64_t i = 0; i < n_out; ++i) {
        if (!std::isfinite(out[i])) {
          return fail("tensor '" + e.name + "': value " + std::to_string(first + static_cast<uint64_t>(i)) + " is " +
                      (std::isnan(out[i]) ? "NaN" : "infinite"));
        }
      }
      return Status::Ok();
    };
    if (g.carried == e.width) {
      if (e.width == 2) g.words[0] = static_cast<uint16_t>(g.carry[0] | g.carry[1] << 8);
      out[n_out++] = value_of(g.carry);
      g.carried = 0;
      first = (in_tensor + used) / width - 1;
      if (!flush()) return non_finite();
    }
    while (used + width <= here) {
      const size_t batch = std::min<size_t>(g.values.size(), (here - used) / width);
      for (size_t i = 0; i < batch; ++i) out[n_out++] = value_of(bytes + used + i * width);
      if (e.width == 2) {
        for (size_t i = 0; i < batch; ++i) g.words[i] = static_cast<uint16_t>(bytes[used + 2 * i] | bytes[used + 2 * i + 1] << 8);
      }
      used += batch * width;
      if (!flush()) return non_finite();
    }
    while (used < here) g.carry[g.carried++] = bytes[used++];  // the start of a value the next chunk ends
    g.data_pos += here;
    bytes += here;
    count -= here;
  }
  return Status::Ok();
}

Status Model::FinishWeights() {
  if (!loading_) return Status(StatusCode::kInvalidArgument, "no load is under way (BeginWeights first)");
  std::unique_ptr<Loading> g = std::move(loading_);
  const auto fail = [&](const std::string& message) { return Status(StatusCode::kInvalidArgument, g->file + ": " + message); };
  if (!g->header_done) {
    if (g->header.size() < 8) return fail("shorter than a safetensors header (8 bytes)");
    return fail("header length " + std::to_string(g->header_length) + " runs past the end of the file");
  }
  for (const Loading::Entry& e : g->entries) {
    if (e.end > g->data_pos) {
      return fail("tensor '" + e.name + "': data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                  "] run past the " + std::to_string(g->data_pos) + " bytes of data");
    }
  }
  loaded_ = true;
  return Status::Ok();
}

// out[T, E] = (in - mean) / sqrt(var + eps) * weight + bias per row; sums in double.
void Model::layer_norm(float* out, const float* in, const Norm& norm, int64_t T) const {
  const int64_t E = config_.hidden;
  for (int64_t t = 0; t < T; ++t) {
    const float* x = in + t * E;
    double mean = 0;
    for (int64_t i = 0; i < E; ++i) mean += x[i];
    mean /= static_cast<double>(E);
    double var = 0;
    for (int64_t i = 0; i < E; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(E);
    const double inv = 1.0 / std::sqrt(var + config_.layer_norm_eps);
    for (int64_t i = 0; i < E; ++i) {
      out[t * E + i] = static_cast<float>((x[i] - mean) * inv * norm.weight[static_cast<size_t>(i)] + norm.bias[static_cast<size_t>(i)]);
    }
  }
}

// RMSNorm (modeling_llama.py's LlamaRMSNorm), in float32:
//   out = weight * (x * rsqrt(mean(x²) + eps)); the mean summed in double.
void Model::rms_norm(float* out, const float* in, const Norm& norm, int64_t T) const {
  const int64_t E = config_.hidden;
  for (int64_t t = 0; t < T; ++t) {
    const float* x = in + t * E;
    double sum = 0;
    for (int64_t i = 0; i < E; ++i) sum += static_cast<double>(x[i]) * x[i];
    const float variance = static_cast<float>(sum / static_cast<double>(E));
    const float inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(variance + static_cast<float>(config_.layer_norm_eps))));
    for (int64_t i = 0; i < E; ++i) out[t * E + i] = norm.weight[static_cast<size_t>(i)] * (x[i] * inv);
  }
}

void Model::normalize(float* out, const float* in, const Norm& norm, int64_t T) const {
  if (norm.bias.empty()) rms_norm(out, in, norm, T);
  else layer_norm(out, in, norm, T);
}

// gelu_new / gelu_pytorch_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in float (kernels::gelu_tanh);
// gelu: 0.5 x (1 + erf(x / sqrt 2)), relu: max(x, 0), silu: x sigmoid(x), in double.
void Model::activate(float* x, int64_t n) const {
  if (config_.activation == Activation::kGeluTanh) {
    kernels::gelu_tanh(x, n);  // in float, vectorised: the MLP's activation is T * I values a layer
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    switch (config_.activation) {
      case Activation::kGeluTanh: break;  // above
      case Activation::kGeluErf: x[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)))); break;
      case Activation::kRelu: x[i] = v > 0 ? x[i] : 0.0f; break;
      case Activation::kSilu: x[i] = static_cast<float>(v / (1.0 + std::exp(-v))); break;
    }
  }
}

Status Model::validate(const int32_t* ids, size_t count, const RunOptions& options) const {
  const ModelConfig& c = config_;
  if (!loaded_) return Status(StatusCode::kInvalidArgument, "the model's weights are not loaded");
  if (count < 1) return Status(StatusCode::kInvalidArgument, "no tokens: the model needs at least one");
  if (count > static_cast<size_t>(c.max_positions)) {
    return Status(StatusCode::kTooLarge, std::to_string(count) + " tokens: the model takes at most " +
                                             std::to_string(c.max_positions));
  }
  const double need = static_cast<double>(weight_bytes()) + static_cast<double>(run_bytes(static_cast<int64_t>(count)));
  if (need > static_cast<double>(limits_.max_memory_bytes)) {
    return Status(StatusCode::kTooLarge, std::to_string(count) + " tokens: the weights (" + std::to_string(weight_bytes()) +
                                             " bytes) and the run (" + std::to_string(run_bytes(static_cast<int64_t>(count))) +
                                             " bytes) would take more than the " + std::to_string(limits_.max_memory_bytes) +
                                             " bytes the model may take");
  }
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= c.vocab_size) {
      return Status(StatusCode::kInvalidArgument, "id " + std::to_string(i) + " is " + std::to_string(ids[i]) +
                                                      "; expected 0 to " + std::to_string(c.vocab_size - 1));
    }
  }
  if (options.weights_layer != kAllLayers && options.weights_layer != kNoLayer &&
      (options.weights_layer < 0 || options.weights_layer >= c.num_layers)) {
    return Status(StatusCode::kInvalidArgument, "weights_layer " + std::to_string(options.weights_layer) + ": expected a layer from 0 to " +
                                                    std::to_string(c.num_layers - 1) + ", -1 (every layer) or -2 (none)");
  }
  if (options.pooled_size < 0) {
    return Status(StatusCode::kInvalidArgument, "pooled_size " + std::to_string(options.pooled_size) + ": expected 0 (none) or a size >= 1");
  }
  for (const auto& [layer, head] : options.ablate) {
    if (layer < 0 || layer >= c.num_layers || head < 0 || head >= c.num_heads) {
      return Status(StatusCode::kInvalidArgument, "ablate: (layer " + std::to_string(layer) + ", head " + std::to_string(head) +
                                                      ") is out of range; the model has " + std::to_string(c.num_layers) +
                                                      " layers of " + std::to_string(c.num_heads) + " heads");
    }
  }
  return Status::Ok();
}

// x (T, E) = word[ids] (+ token_type[0]) + position[first + t], in modeling_bert.py's order of
// additions; then the embeddings' norm where the family has one.
void Model::embed(const int32_t* ids, int64_t T, std::vector<float>* x, int64_t first) const {
  const int64_t E = config_.hidden;
  const bool token_types = !token_type_.empty();
  x->assign(static_cast<size_t>(T * E), 0.0f);
  for (int64_t t = 0; t < T; ++t) {
    float* row = x->data() + t * E;
    word_.row(row, ids[t]);
    if (position_.empty()) continue;  // rotary positions: in attention
    const float* position = position_.data() + (first + t) * E;
    for (int64_t i = 0; i < E; ++i) {
      row[i] = token_types ? (row[i] + token_type_[static_cast<size_t>(i)]) + position[i] : row[i] + position[i];
    }
  }
  if (!embed_norm_.weight.empty()) normalize(x->data(), x->data(), embed_norm_, T);
}

// Layer l's mask when a sliding window applies to it and is shorter than the text: (T, T),
// 0 where i - W < j <= i, -inf elsewhere (the causal mask within it); else no mask (causal).
const MaskView& Model::window_mask(int64_t l, int64_t T) {
  const ModelConfig& c = config_;
  window_view_ = MaskView();
  if (c.sliding_window <= 0 || l < c.window_from_layer || c.sliding_window >= T) return window_view_;
  window_.resize(static_cast<size_t>(T * T));
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j)
      window_[static_cast<size_t>(i * T + j)] = (j <= i && i - c.sliding_window < j) ? 0.0f : -INFINITY;
  window_view_.dtype = MaskDtype::kFloat;
  window_view_.data = window_.data();
  window_view_.length = window_.size();
  window_view_.shape = {T, T};
  return window_view_;
}

// down_ (T, E) = ffn(normed_): down(act(up(x))), or gated down(act(gate(x)) * up(x)).
void Model::feed_forward(Layer& layer, int64_t T) {
  const int64_t I = config_.intermediate;
  const bool gated = config_.family->feed_forward == FeedForward::kGated;
  up_.resize(static_cast<size_t>(T * (gated ? 2 * I : I)));
  layer.up.apply(up_.data(), normed_.data(), layer.up.bias.empty() ? nullptr : layer.up.bias.data(), T);
  const float* hidden = up_.data();
  if (gated) {  // up_ rows (T, 2I): [gate | up]
    gated_.resize(static_cast<size_t>(T * I));
    for (int64_t t = 0; t < T; ++t) {
      float* g = up_.data() + t * 2 * I;
      activate(g, I);
      for (int64_t i = 0; i < I; ++i) gated_[static_cast<size_t>(t * I + i)] = g[i] * g[I + i];
    }
    hidden = gated_.data();
  } else {
    activate(up_.data(), T * I);
  }
  layer.down.apply(down_.data(), hidden, layer.down.bias.empty() ? nullptr : layer.down.bias.data(), T);
}

// One layer on x (T, E), in place: pre-norm  x += attn(norm_1(x)); x += ffn(norm_2(x))
//                                   post-norm x = norm_1(x + attn(x)); x = norm_2(x + ffn(x))
Status Model::run_layer(int64_t l, const std::vector<int64_t>& ablated, const RunOptions& options, int64_t T, std::vector<float>* x,
                        LayerResult* out) {
  // maps, and head outputs where asked for, of the layers kept (options.weights_layer)
  const bool kept = options.weights_layer == kAllLayers || options.weights_layer == l;
  const bool head_outputs = options.head_outputs && kept;
  const int64_t E = config_.hidden;
  const bool pre = config_.family->norm_placement == NormPlacement::kPre;
  Layer& layer = layers_[static_cast<size_t>(l)];
  normed_.resize(x->size());
  down_.resize(x->size());
  ForwardOptions fo;
  fo.need_weights = true;
  fo.average_attn_weights = false;
  fo.is_causal = config_.family->causal;
  fo.return_head_outputs = head_outputs;
  fo.return_concat = head_outputs;
  fo.ablate_heads = ablated;
  const float* attention_in = x->data();
  if (pre) {
    normalize(normed_.data(), x->data(), layer.attention_norm, T);
    attention_in = normed_.data();
  }
  const TensorView stream{attention_in, static_cast<size_t>(T * E), {T, E}};
  ForwardResult attended;
  MHA_RETURN_IF_ERROR(layer.attention->forward(stream, stream, stream, MaskView(), window_mask(l, T), fo, &attended));
  const std::vector<float>& a = attended.output.data;
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] += a[i];
  if (pre) {
    normalize(normed_.data(), x->data(), layer.ffn_norm, T);
  } else {
    normalize(x->data(), x->data(), layer.attention_norm, T);
    normed_ = *x;
  }
  feed_forward(layer, T);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] += down_[i];
  if (!pre) normalize(x->data(), x->data(), layer.ffn_norm, T);
  const int64_t H = config_.num_heads;
  if (options.pooled_size > 0) {
    const int64_t S = std::min(T, options.pooled_size);
    reshape(&out->pooled, {H, S, S});
    PoolMaps(out->pooled.data.data(), attended.weights.data.data(), H, T, S);
  } else {
    out->pooled = Tensor();
  }
  if (kept) out->weights = std::move(attended.weights);
  else out->weights = Tensor();  // a fresh tensor: the kept storage of an earlier run is freed too
  out->head_outputs = head_outputs ? std::move(attended.head_outputs) : Tensor();
  out->concat = head_outputs ? std::move(attended.concat) : Tensor();
  out->attention_output = head_outputs ? std::move(attended.output) : Tensor();
  out->residual.data = *x;
  out->residual.shape = {T, E};
  return Status::Ok();
}

void PoolMaps(float* pooled, const float* maps, int64_t H, int64_t T, int64_t S) {
  for (int64_t h = 0; h < H; ++h) {
    const float* map_h = maps + h * T * T;
    float* pooled_h = pooled + h * S * S;
    for (int64_t a = 0; a < S; ++a) {
      const int64_t row_begin = a * T / S, row_end = (a + 1) * T / S;
      for (int64_t b = 0; b < S; ++b) {
        const int64_t col_begin = b * T / S, col_end = (b + 1) * T / S;
        float largest = map_h[row_begin * T + col_begin];
        for (int64_t i = row_begin; i < row_end; ++i)
          for (int64_t j = col_begin; j < col_end; ++j) largest = std::max(largest, map_h[i * T + j]);
        pooled_h[a * S + b] = largest;
      }
    }
  }
}

// hidden, logits and pooled from the last layer's x (T, E).
void Model::heads(const std::vector<float>& x, int64_t T, RunResult* r) {
  const ModelConfig& c = config_;
  const int64_t E = c.hidden, V = c.vocab_size;
  reshape(&r->hidden, {T, E});
  if (!c.lm_head) r->logits = Tensor();
  if (!has_pooler_) r->pooled = Tensor();
  if (!final_norm_.weight.empty()) normalize(r->hidden.data.data(), x.data(), final_norm_, T);
  else r->hidden.data = x;
  const std::vector<float>& h = r->hidden.data;
  if (has_pooler_) {  // the first token's hidden state
    reshape(&r->pooled, {E});
    pooler_.apply(r->pooled.data.data(), h.data(), pooler_.bias.data(), 1);
    for (float& v : r->pooled.data) v = std::tanh(v);
  }
  const float* bias = head_.bias.empty() ? nullptr : head_.bias.data();
  if (c.task == Task::kNextToken) {
    reshape(&r->logits, {T, V});
    head_weight().apply(r->logits.data.data(), h.data(), bias, T);
  } else if (c.task == Task::kMasked) {
    normed_.resize(h.size());
    head_transform_.apply(normed_.data(), h.data(), head_transform_.bias.data(), T);
    activate(normed_.data(), T * E);
    normalize(normed_.data(), normed_.data(), head_norm_, T);
    reshape(&r->logits, {T, V});
    head_weight().apply(r->logits.data.data(), normed_.data(), bias, T);
  }
}

Status Model::Run(const int32_t* ids, size_t count, const RunOptions& options, RunResult* result) {
  MHA_RETURN_IF_ERROR(validate(ids, count, options));
  const int64_t T = static_cast<int64_t>(count);
  // *result's storage is reused: a model run again at the same length allocates and clears
  // nothing of its (T, vocab) logits
  RunResult& r = *result;
  r.layers.resize(static_cast<size_t>(config_.num_layers));
  std::vector<float> x;
  embed(ids, T, &x);
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    std::vector<int64_t> ablated;
    for (const auto& [layer, head] : options.ablate) {
      if (layer == l) ablated.push_back(head);
    }
    MHA_RETURN_IF_ERROR(run_layer(l, ablated, options, T, &x, &r.layers[static_cast<size_t>(l)]));
  }
  heads(x, T, &r);
  return Status::Ok();
}

// log p(ids[t + 1] | ids[..t]) for t < T - 1 from the last layer's stream x (T, E): the final
// norm and the LM head on the first T - 1 positions only (the last has no next token to
// predict), then logits[t, ids[t + 1]] - log sum_v e^logits[t, v]. logits: scratch, (T - 1, vocab).
void Model::next_token_logprobs(const std::vector<float>& x, const int32_t* ids, int64_t T, std::vector<float>* logits,
                                std::vector<double>* out) {
  const int64_t E = config_.hidden, V = config_.vocab_size, rows = T - 1;
  normed_.resize(static_cast<size_t>(rows * E));
  if (!final_norm_.weight.empty()) normalize(normed_.data(), x.data(), final_norm_, rows);
  else std::copy(x.begin(), x.begin() + rows * E, normed_.begin());
  logits->resize(static_cast<size_t>(rows * V));
  head_weight().apply(logits->data(), normed_.data(), head_.bias.empty() ? nullptr : head_.bias.data(), rows);
  out->resize(static_cast<size_t>(rows));
  for (int64_t t = 0; t < rows; ++t) {
    const float* row = logits->data() + t * V;
    (*out)[static_cast<size_t>(t)] = row[ids[t + 1]] - kernels::log_sum_exp(row, V);
  }
}

Status Model::AttentionParameter(int64_t layer, const std::string& name, Tensor* out) const {
  if (!loaded_) return Status(StatusCode::kInvalidArgument, "the model has no weights yet");
  if (layer < 0 || layer >= config_.num_layers) {
    return Status(StatusCode::kInvalidArgument, "layer " + std::to_string(layer) + ": the model has " + std::to_string(config_.num_layers) + " layers");
  }
  return layers_[static_cast<size_t>(layer)].attention->get_parameter(name, out);
}

Status Model::HeadImportance(const int32_t* ids, size_t count, Tensor* importance) {
  const ModelConfig& c = config_;
  if (c.task != Task::kNextToken) {
    return Status(StatusCode::kInvalidArgument, "head importance needs a causal LM head (a model that predicts the next token); this is a " +
                                                    c.architecture);
  }
  MHA_RETURN_IF_ERROR(validate(ids, count, RunOptions()));
  if (count < 2) return Status(StatusCode::kInvalidArgument, "head importance needs at least two tokens (a next token to predict)");
  const int64_t T = static_cast<int64_t>(count), L = c.num_layers, H = c.num_heads;
  // The stream entering each layer, unablated: switching off a head in layer l changes nothing
  // below it, so each of the L * H runs starts at its layer l from here.
  std::vector<std::vector<float>> entering(static_cast<size_t>(L));
  std::vector<float> x, logits;
  embed(ids, T, &x);
  LayerResult scratch;
  RunOptions no_weights;  // the streams only: no layer's maps are kept
  no_weights.weights_layer = kNoLayer;
  for (int64_t l = 0; l < L; ++l) {
    entering[static_cast<size_t>(l)] = x;
    MHA_RETURN_IF_ERROR(run_layer(l, {}, no_weights, T, &x, &scratch));
  }
  std::vector<double> baseline, ablated;
  next_token_logprobs(x, ids, T, &logits, &baseline);
  *importance = make_tensor({L, H});
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t h = 0; h < H; ++h) {
      x = entering[static_cast<size_t>(l)];
      MHA_RETURN_IF_ERROR(run_layer(l, {h}, no_weights, T, &x, &scratch));
      for (int64_t k = l + 1; k < L; ++k) MHA_RETURN_IF_ERROR(run_layer(k, {}, no_weights, T, &x, &scratch));
      next_token_logprobs(x, ids, T, &logits, &ablated);
      double drop = 0;
      for (size_t t = 0; t < ablated.size(); ++t) drop += baseline[t] - ablated[t];
      importance->data[static_cast<size_t>(l * H + h)] = static_cast<float>(drop / static_cast<double>(ablated.size()));
    }
  }
  return Status::Ok();
}

}  // namespace mha::models
