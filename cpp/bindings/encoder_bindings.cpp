// The Embind table of the pretrained encoder (cpp/include/mha/encoder.h): one EncoderSession
// holds a tokenizer, an encoder and the buffers that cross the boundary in bulk (typed memory
// views: one set() in, one slice() out). Every fallible call returns an EncoderStatus
// { code, message } (code 0 is success, else a mha::StatusCode). Checks, defaults and thrown
// errors live in web/lib/encoder.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <memory>
#include <string>
#include <vector>

#include "mha/encoder.h"
#include "status_codes.h"

namespace {

using emscripten::typed_memory_view;
using emscripten::val;

struct EncoderStatus {
  int code = 0;
  std::string message;
};

struct LayerConfig {
  int embedDim = 0;
  int numHeads = 0;
  int outDim = 0;
  int ffnDim = 0;
};

struct ModelConfig {
  int vocabSize = 0;
  int embeddingRows = 0;
  int maxTokens = 0;
  double layerNormEps = 0;
  int outputDim = 0;
};

EncoderStatus status_of(const mha::Status& status) { return {static_cast<int>(status.code()), status.message()}; }

EncoderStatus not_ready(const char* what) {
  return {static_cast<int>(mha::StatusCode::kInvalidArgument), std::string(what) + ": call configure() and loadVocabulary() first"};
}

template <typename T>
val view_of(std::vector<T>& buffer, double count) {
  if (count >= 0) buffer.resize(static_cast<size_t>(count));
  return val(typed_memory_view(buffer.size(), buffer.data()));
}

std::string shape_text(const mha::Shape& shape) {
  std::string joined;
  for (int64_t d : shape) joined += (joined.empty() ? "" : ",") + std::to_string(d);
  return joined;
}

// Result kinds of layerResult(layer, which).
enum LayerResult : int { kWeights = 0, kHeadOutputs = 1, kConcat = 2, kAttentionOutput = 3, kResidual = 4 };

class EncoderSession {
 public:
  EncoderStatus configure(const ModelConfig& model, const std::vector<LayerConfig>& layers) {
    mha::EncoderConfig config;
    config.vocab_size = model.vocabSize;
    config.embedding_rows = model.embeddingRows;
    config.max_tokens = model.maxTokens;
    config.layer_norm_eps = model.layerNormEps;
    config.output_dim = model.outputDim;
    for (const LayerConfig& l : layers) config.layers.push_back({l.embedDim, l.numHeads, l.outDim, l.ffnDim});
    return status_of(mha::Encoder::Create(config, &encoder_));
  }

  // Bytes of vocab.txt go into bytes(n), then loadVocabulary().
  val bytes(double count) { return view_of(bytes_, count); }
  EncoderStatus loadVocabulary(int reserved) {
    const mha::Status status = mha::Tokenizer::FromVocabText(std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size()),
                                                             reserved, &tokenizer_);
    std::vector<uint8_t>().swap(bytes_);
    return status_of(status);
  }

  std::string parameterNames() const {
    std::string joined;
    if (encoder_) for (const std::string& name : encoder_->parameter_names()) joined += (joined.empty() ? "" : ",") + name;
    return joined;
  }
  std::string missingParameters() const {
    std::string joined;
    if (encoder_) for (const std::string& name : encoder_->missing_parameters()) joined += (joined.empty() ? "" : ",") + name;
    return joined;
  }
  // A parameter's values go into floats(n), then setParameter(name, shape).
  val floats(double count) { return view_of(floats_, count); }
  EncoderStatus setParameter(const std::string& name, const val& shape) {
    if (!encoder_) return not_ready("setParameter");
    const std::vector<int> dims = emscripten::convertJSArrayToNumberVector<int>(shape);
    return status_of(encoder_->set_parameter(name, floats_.data(), floats_.size(), mha::Shape(dims.begin(), dims.end())));
  }
  EncoderStatus getParameter(const std::string& name) {
    if (!encoder_) return not_ready("getParameter");
    return status_of(encoder_->get_parameter(name, &parameter_));
  }
  val parameterData() { return val(typed_memory_view(parameter_.data.size(), parameter_.data.data())); }
  std::string parameterShape() const { return shape_text(parameter_.shape); }
  // Frees the staging buffer once the weights are in.
  void releaseStaging() { std::vector<float>().swap(floats_); }

  // Text as code points into codePoints(n), then tokenize(n); or ids into ids(n), then fromIds(n).
  val codePoints(double count) { return view_of(code_points_, count); }
  EncoderStatus tokenize(double count) {
    if (!tokenizer_) return not_ready("tokenize");
    if (count < 0 || count > static_cast<double>(code_points_.size())) return bad_count("tokenize", count, code_points_.size());
    const std::u32string text(code_points_.begin(), code_points_.begin() + static_cast<size_t>(count));
    return status_of(tokenizer_->tokenize(text.data(), text.size(), &tokens_));
  }
  val ids(double count) { return view_of(ids_, count); }
  EncoderStatus fromIds(double count) {
    if (!tokenizer_) return not_ready("fromIds");
    if (count < 0 || count > static_cast<double>(ids_.size())) return bad_count("fromIds", count, ids_.size());
    return status_of(tokenizer_->from_ids(ids_.data(), static_cast<size_t>(count), &tokens_));
  }
  // The last tokens: ids, word indices, piece bounds into tokenText().
  val tokenIds() { return val(typed_memory_view(tokens_.ids.size(), tokens_.ids.data())); }
  val tokenWords() { return val(typed_memory_view(tokens_.words.size(), tokens_.words.data())); }
  val tokenBegins() { return val(typed_memory_view(tokens_.piece_begin.size(), tokens_.piece_begin.data())); }
  val tokenEnds() { return val(typed_memory_view(tokens_.piece_end.size(), tokens_.piece_end.data())); }
  val tokenText() {
    return val(typed_memory_view(tokens_.text.size(), reinterpret_cast<const uint32_t*>(tokens_.text.data())));
  }

  // Encodes the first `count` of the last tokens; `ablate` is [layer, head, layer, head, ...].
  EncoderStatus encode(double count, const val& ablate) {
    if (!encoder_ || !tokenizer_) return not_ready("encode");
    if (count < 0 || count > static_cast<double>(tokens_.ids.size())) return bad_count("encode", count, tokens_.ids.size());
    const std::vector<int> pairs = emscripten::convertJSArrayToNumberVector<int>(ablate);
    mha::EncodeOptions options;
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) options.ablate.emplace_back(pairs[i], pairs[i + 1]);
    return status_of(encoder_->encode(tokens_.ids.data(), static_cast<size_t>(count), options, &result_));
  }
  val layerResult(int layer, int which) {
    const mha::Tensor* t = layer_tensor(layer, which);
    return t ? val(typed_memory_view(t->data.size(), t->data.data())) : val::null();
  }
  std::string layerShape(int layer, int which) {
    const mha::Tensor* t = layer_tensor(layer, which);
    return t ? shape_text(t->shape) : "";
  }
  val embedding() { return val(typed_memory_view(result_.embedding.data.size(), result_.embedding.data.data())); }

 private:
  static EncoderStatus bad_count(const char* what, double count, size_t have) {
    return {static_cast<int>(mha::StatusCode::kInvalidArgument),
            std::string(what) + ": count " + std::to_string(count) + " is not between 0 and " + std::to_string(have)};
  }
  const mha::Tensor* layer_tensor(int layer, int which) const {
    if (layer < 0 || static_cast<size_t>(layer) >= result_.layers.size()) return nullptr;
    const mha::EncoderLayerResult& r = result_.layers[static_cast<size_t>(layer)];
    switch (which) {
      case kWeights: return &r.weights;
      case kHeadOutputs: return &r.head_outputs;
      case kConcat: return &r.concat;
      case kAttentionOutput: return &r.attention_output;
      case kResidual: return &r.residual;
      default: return nullptr;
    }
  }

  std::unique_ptr<mha::Tokenizer> tokenizer_;
  std::unique_ptr<mha::Encoder> encoder_;
  std::vector<uint8_t> bytes_;
  std::vector<float> floats_;
  std::vector<uint32_t> code_points_;
  std::vector<int32_t> ids_;
  mha::Tokens tokens_;
  mha::Tensor parameter_;
  mha::EncodeResult result_;
};

// Bytes of the WebAssembly heap, and of it in use (what the leak tests compare).
double heap_bytes() { return double(__builtin_wasm_memory_size(0)) * 65536.0; }
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(mha_encoder) {
  mha::bindings::register_status_codes();
  emscripten::value_object<EncoderStatus>("EncoderStatus")
      .field("code", &EncoderStatus::code)
      .field("message", &EncoderStatus::message);
  emscripten::value_object<LayerConfig>("EncoderLayerConfig")
      .field("embedDim", &LayerConfig::embedDim)
      .field("numHeads", &LayerConfig::numHeads)
      .field("outDim", &LayerConfig::outDim)
      .field("ffnDim", &LayerConfig::ffnDim);
  emscripten::value_object<ModelConfig>("EncoderConfig")
      .field("vocabSize", &ModelConfig::vocabSize)
      .field("embeddingRows", &ModelConfig::embeddingRows)
      .field("maxTokens", &ModelConfig::maxTokens)
      .field("layerNormEps", &ModelConfig::layerNormEps)
      .field("outputDim", &ModelConfig::outputDim);
  emscripten::register_vector<LayerConfig>("EncoderLayerConfigList");
  emscripten::class_<EncoderSession>("EncoderSession")
      .constructor<>()
      .function("configure", &EncoderSession::configure)
      .function("bytes", &EncoderSession::bytes)
      .function("loadVocabulary", &EncoderSession::loadVocabulary)
      .function("parameterNames", &EncoderSession::parameterNames)
      .function("missingParameters", &EncoderSession::missingParameters)
      .function("floats", &EncoderSession::floats)
      .function("setParameter", &EncoderSession::setParameter)
      .function("getParameter", &EncoderSession::getParameter)
      .function("parameterData", &EncoderSession::parameterData)
      .function("parameterShape", &EncoderSession::parameterShape)
      .function("releaseStaging", &EncoderSession::releaseStaging)
      .function("codePoints", &EncoderSession::codePoints)
      .function("tokenize", &EncoderSession::tokenize)
      .function("ids", &EncoderSession::ids)
      .function("fromIds", &EncoderSession::fromIds)
      .function("tokenIds", &EncoderSession::tokenIds)
      .function("tokenWords", &EncoderSession::tokenWords)
      .function("tokenBegins", &EncoderSession::tokenBegins)
      .function("tokenEnds", &EncoderSession::tokenEnds)
      .function("tokenText", &EncoderSession::tokenText)
      .function("encode", &EncoderSession::encode)
      .function("layerResult", &EncoderSession::layerResult)
      .function("layerShape", &EncoderSession::layerShape)
      .function("embedding", &EncoderSession::embedding);
  emscripten::function("heapBytes", &heap_bytes);
  emscripten::function("heapInUse", &heap_in_use);
}
