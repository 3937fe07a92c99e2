// The Embind table of the training core (cpp/include/mha/train): one TrainSession holds the
// grammar, a model and its optimizer. Every name JavaScript sees is given here, once:
//   enums          StatusCode (status_code_name's names)
//   value objects  TrainSettings, TrainDefaults, Evaluation, HeadScore, Link, SentenceResult,
//                  TrainTensor
//   classes        TrainSession
// Arrays cross in bulk through typed_memory_views (one set in, one slice out); fallible calls
// return a StatusCode value (or carry one) and error() the message. Checks of JavaScript types
// and thrown errors live in web/lib/train.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mha/train/trainer.h"
#include "status_codes.h"

namespace {

using emscripten::typed_memory_view;
using emscripten::val;
using namespace mha::train;

// What a session is made with: TrainConfig's fields JavaScript may set, and the held-out count.
struct TrainSettings {
  double seed = 1;
  double learningRate = 0;
  double steps = 0;
  double batchSize = 0;
  double warmup = 0;
  double heldOut = 0;
};

// TrainConfig's defaults, the set-up of `npm run train`.
struct TrainDefaults {
  double learningRate = 0;
  double steps = 0;
  double batchSize = 0;
  double warmup = 0;
};

struct EvaluationResult {
  int status = 0;
  double loss = 0, agreement = 0, pronoun = 0, copy = 0, sentences = 0;
  val heads = val::null();  // an array of HeadScore, layer-major, then head, then relation
};

struct SentenceResult {
  int status = 0;
  val tokens = val::null();  // an Int32Array view
  val links = val::null();   // an array of Link
};

// A tensor of the session: data (a Float32Array view) and shape (a Float64Array view).
struct TrainTensor {
  int status = 0;
  val data = val::null();
  val shape = val::null();
};

std::string get_relation(const HeadScore& h) { return relation_name(h.relation); }
void set_relation(HeadScore&, std::string) {}
std::string get_at(const HeadScore& h) { return h.at; }
void set_at(HeadScore&, std::string) {}
std::string get_link_relation(const Link& link) { return relation_name(link.relation); }
void set_link_relation(Link&, std::string) {}

class TrainSession {
 public:
  static TrainDefaults defaults() {
    const TrainConfig config;
    return {config.learning_rate, double(config.steps), double(config.batch_size), double(config.warmup_steps)};
  }

  // Fresh random weights from the seed.
  int init(const TrainSettings& settings) {
    TrainConfig config;
    config.seed = static_cast<uint64_t>(settings.seed);
    config.learning_rate = settings.learningRate;
    config.min_learning_rate = settings.learningRate / 10;
    config.steps = static_cast<int>(settings.steps);
    config.batch_size = static_cast<int>(settings.batchSize);
    config.warmup_steps = static_cast<int>(settings.warmup);
    const int held_out = static_cast<int>(settings.heldOut);
    const int status = record(check_settings(config, held_out));
    if (status != 0) return status;
    model_config_ = ModelConfig();
    model_config_.vocab_size = grammar_.vocab_size();
    model_config_.context = Grammar::kMaxLength;
    held_out_ = held_out_sentences(grammar_, held_out);
    trainer_ = std::make_unique<Trainer>(model_config_, config, held_out_);
    return 0;
  }

  std::string error() const { return error_; }
  val vocabulary() const {
    val words = val::array();
    for (const Word& w : grammar_.vocabulary()) words.call<void>("push", w.text);
    return words;
  }
  // Each word's category (category_name), in vocabulary() order.
  val categories() const {
    val names = val::array();
    for (const Word& w : grammar_.vocabulary()) names.call<void>("push", std::string(category_name(w.category)));
    return names;
  }
  val relations() const {
    val names = val::array();
    for (int r = 0; r < kNumRelations; ++r) names.call<void>("push", std::string(relation_name(static_cast<Relation>(r))));
    return names;
  }
  int context() const { return model_config_.context; }
  int numLayers() const { return model_config_.num_layers; }
  int numHeads() const { return model_config_.num_heads; }

  // n training steps; returns their mean loss (NaN before init).
  double step(int n) {
    if (!trainer_) {
      error_ = "call init() first";
      return std::numeric_limits<double>::quiet_NaN();
    }
    return trainer_->steps(n);
  }
  int stepsDone() const { return trainer_ ? trainer_->steps_done() : 0; }
  double learningRate() const { return trainer_ ? trainer_->current_learning_rate() : 0; }
  void setLearningRate(double peak) {
    if (trainer_) trainer_->set_learning_rate(peak);
  }

  // Held-out loss and accuracy, and every head scored on every relation.
  EvaluationResult evaluate() {
    EvaluationResult r;
    if (!trainer_) {
      r.status = fail("evaluate: call init() first");
      return r;
    }
    const Evaluation e = mha::train::evaluate(trainer_->model(), grammar_, held_out_);
    r.loss = e.loss;
    r.agreement = e.agreement;
    r.pronoun = e.pronoun;
    r.copy = e.copy;
    r.sentences = e.sentences;
    r.heads = val::array();
    for (const HeadScore& h : e.heads) r.heads.call<void>("push", h);
    return r;
  }

  // A sentence of the grammar from its own seed; it becomes the session's sentence.
  SentenceResult sentence(double seed) {
    Rng rng(static_cast<uint64_t>(seed));
    return set_sentence(grammar_.generate(rng));
  }
  // Free text in the vocabulary; error() names an unknown word.
  SentenceResult parse(std::string text) {
    Sentence s;
    const mha::Status status = grammar_.parse(text, &s);
    if (!status.ok()) {
      SentenceResult r;
      r.status = record(status);
      return r;
    }
    return set_sentence(s);
  }

  // Attention maps of the current model on the session's sentence: (layers, H, T, T).
  TrainTensor attention() {
    if (!trainer_) return failed("attention: call init() first");
    if (tokens_.empty()) return failed("attention: expected a sentence first");
    const int T = static_cast<int>(tokens_.size());
    TrainTensor t;
    t.status = record(attention_maps(trainer_->model(), tokens_, &result_));
    if (t.status == 0) t = tensor({double(model_config_.num_layers), double(model_config_.num_heads), double(T), double(T)});
    return t;
  }
  // Next-token probabilities after each token of the session's sentence: (T, V).
  TrainTensor predictions() {
    if (!trainer_ || tokens_.empty()) return failed("predictions: expected init() and a sentence");
    result_ = next_token_probabilities(trainer_->model(), tokens_);
    return tensor({double(tokens_.size()), double(model_config_.vocab_size)});
  }

  // Weights file bytes (cpp/include/mha/train/trainer.h): write n bytes into bytes(n), then
  // loadWeights(); or saveWeights() and read bytes(-1).
  val bytes(int n) {
    if (n >= 0) bytes_.resize(static_cast<size_t>(n));
    return val(typed_memory_view(bytes_.size(), bytes_.data()));
  }
  int loadWeights() {
    if (!trainer_) return fail("loadWeights: call init() first");
    return record(load_weights(bytes_.data(), bytes_.size(), &trainer_->model()));
  }
  int saveWeights() {
    if (!trainer_) return fail("saveWeights: call init() first");
    bytes_ = encode_weights(trainer_->model(), trainer_->config().seed, trainer_->steps_done());
    return 0;
  }

 private:
  int record(const mha::Status& status) {
    error_ = status.message();
    return static_cast<int>(status.code());
  }
  int fail(const std::string& message) { return record(mha::Status(mha::StatusCode::kInvalidArgument, message)); }
  TrainTensor failed(const std::string& message) {
    TrainTensor t;
    t.status = fail(message);
    return t;
  }
  TrainTensor tensor(std::vector<double> shape) {
    shape_ = std::move(shape);
    TrainTensor t;
    t.data = val(typed_memory_view(result_.size(), result_.data()));
    t.shape = val(typed_memory_view(shape_.size(), shape_.data()));
    return t;
  }
  SentenceResult set_sentence(const Sentence& s) {
    tokens_ = s.tokens;
    SentenceResult r;
    r.tokens = val(typed_memory_view(tokens_.size(), tokens_.data()));
    r.links = val::array();
    for (const Link& link : s.links) r.links.call<void>("push", link);
    return r;
  }

  Grammar grammar_;
  ModelConfig model_config_;
  std::vector<Sentence> held_out_;
  std::unique_ptr<Trainer> trainer_;
  std::vector<int> tokens_;
  std::vector<float> result_;
  std::vector<double> shape_;
  std::vector<uint8_t> bytes_;
  std::string error_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_train) {
  using emscripten::value_object;
  mha::bindings::register_status_codes();
  value_object<TrainSettings>("TrainSettings")
      .field("seed", &TrainSettings::seed)
      .field("learningRate", &TrainSettings::learningRate)
      .field("steps", &TrainSettings::steps)
      .field("batchSize", &TrainSettings::batchSize)
      .field("warmup", &TrainSettings::warmup)
      .field("heldOut", &TrainSettings::heldOut);
  value_object<TrainDefaults>("TrainDefaults")
      .field("learningRate", &TrainDefaults::learningRate)
      .field("steps", &TrainDefaults::steps)
      .field("batchSize", &TrainDefaults::batchSize)
      .field("warmup", &TrainDefaults::warmup);
  value_object<HeadScore>("HeadScore")
      .field("layer", &HeadScore::layer)
      .field("head", &HeadScore::head)
      .field("relation", &get_relation, &set_relation)
      .field("at", &get_at, &set_at)
      .field("meanWeight", &HeadScore::mean_weight)
      .field("argmaxShare", &HeadScore::argmax_share);
  value_object<EvaluationResult>("Evaluation")
      .field("status", &EvaluationResult::status)
      .field("loss", &EvaluationResult::loss)
      .field("agreement", &EvaluationResult::agreement)
      .field("pronoun", &EvaluationResult::pronoun)
      .field("copy", &EvaluationResult::copy)
      .field("sentences", &EvaluationResult::sentences)
      .field("heads", &EvaluationResult::heads);
  value_object<Link>("Link")
      .field("relation", &get_link_relation, &set_link_relation)
      .field("query", &Link::query)
      .field("key", &Link::key);
  value_object<SentenceResult>("SentenceResult")
      .field("status", &SentenceResult::status)
      .field("tokens", &SentenceResult::tokens)
      .field("links", &SentenceResult::links);
  value_object<TrainTensor>("TrainTensor")
      .field("status", &TrainTensor::status)
      .field("data", &TrainTensor::data)
      .field("shape", &TrainTensor::shape);
  emscripten::class_<TrainSession>("TrainSession")
      .constructor<>()
      .class_function("defaults", &TrainSession::defaults)
      .function("init", &TrainSession::init)
      .function("error", &TrainSession::error)
      .function("vocabulary", &TrainSession::vocabulary)
      .function("categories", &TrainSession::categories)
      .function("relations", &TrainSession::relations)
      .function("context", &TrainSession::context)
      .function("numLayers", &TrainSession::numLayers)
      .function("numHeads", &TrainSession::numHeads)
      .function("step", &TrainSession::step)
      .function("stepsDone", &TrainSession::stepsDone)
      .function("learningRate", &TrainSession::learningRate)
      .function("setLearningRate", &TrainSession::setLearningRate)
      .function("evaluate", &TrainSession::evaluate)
      .function("sentence", &TrainSession::sentence)
      .function("parse", &TrainSession::parse)
      .function("attention", &TrainSession::attention)
      .function("predictions", &TrainSession::predictions)
      .function("bytes", &TrainSession::bytes)
      .function("loadWeights", &TrainSession::loadWeights)
      .function("saveWeights", &TrainSession::saveWeights);
}
