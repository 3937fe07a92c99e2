// The Embind table of the training core (cpp/include/mha/train), in the dialect of boundary.h:
// one TrainSession holds a training run (start_training: the grammar, a model and its
// optimizer). Every name JavaScript sees is given here, once:
//   enums          StatusCode
//   value objects  TrainSettings, TrainDefaults, StepResult, Evaluation, HeadScore, Link,
//                  SentenceResult (and boundary.h's Outcome, Buffer, TensorRef)
//   classes        TrainSession
// Tensors come out as byte offsets into the module's memory with their shapes; the weights
// file goes in and out through a buffer. Checks of JavaScript types and thrown errors live in
// web/lib/train.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "boundary.h"
#include "mha/train/trainer.h"

namespace {

using emscripten::val;
using mha::bindings::Buffer;
using mha::bindings::byte_offset;
using mha::bindings::Outcome;
using mha::bindings::outcome_of;
using mha::bindings::record;
using mha::bindings::shape_array;
using mha::bindings::TensorRef;
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

// n steps' mean loss.
struct StepResult : Outcome {
  double loss = 0;
};

struct EvaluationResult : Outcome {
  double loss = 0, agreement = 0, pronoun = 0, copy = 0, sentences = 0;
  val heads = val::null();  // an array of HeadScore, layer-major, then head, then relation
};

struct SentenceResult : Outcome {
  val tokens = val::null();  // an array of token ids
  val links = val::null();   // an array of Link
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
  Outcome init(const TrainSettings& settings) {
    TrainConfig config;
    config.seed = static_cast<uint64_t>(settings.seed);
    config.learning_rate = settings.learningRate;
    config.steps = static_cast<int>(settings.steps);
    config.batch_size = static_cast<int>(settings.batchSize);
    config.warmup_steps = static_cast<int>(settings.warmup);
    TrainingRun run;
    const mha::Status status = start_training(config, static_cast<int>(settings.heldOut), &run);
    if (status.ok()) run_ = std::move(run);
    return outcome_of(status);
  }

  // The grammar's words and each one's category (category_name), in vocabulary order.
  val vocabulary() const {
    val words = val::array();
    if (run_.trainer)
      for (const Word& w : grammar().vocabulary()) words.call<void>("push", w.text);
    return words;
  }
  val categories() const {
    val names = val::array();
    if (run_.trainer)
      for (const Word& w : grammar().vocabulary()) names.call<void>("push", std::string(category_name(w.category)));
    return names;
  }
  val relations() const {
    val names = val::array();
    for (int r = 0; r < kNumRelations; ++r) names.call<void>("push", std::string(relation_name(static_cast<Relation>(r))));
    return names;
  }
  int context() const { return run_.trainer ? model_config().context : 0; }
  int numLayers() const { return run_.trainer ? model_config().num_layers : 0; }
  int numHeads() const { return run_.trainer ? model_config().num_heads : 0; }

  // n training steps and their mean loss.
  StepResult step(int n) {
    StepResult r;
    if (ready("step", &r)) r.loss = run_.trainer->steps(n);
    return r;
  }
  int stepsDone() const { return run_.trainer ? run_.trainer->steps_done() : 0; }
  double learningRate() const { return run_.trainer ? run_.trainer->current_learning_rate() : 0; }
  void setLearningRate(double peak) {
    if (run_.trainer) run_.trainer->set_learning_rate(peak);
  }

  // Held-out loss and accuracy, and every head scored on every relation.
  EvaluationResult evaluate() {
    EvaluationResult r;
    if (!ready("evaluate", &r)) return r;
    const Evaluation e = mha::train::evaluate(run_.trainer->model(), grammar(), run_.held_out);
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
    SentenceResult r;
    if (!ready("sentence", &r)) return r;
    Rng rng(static_cast<uint64_t>(seed));
    return set_sentence(grammar().generate(rng));
  }
  // Free text in the vocabulary; the message names an unknown word.
  SentenceResult parse(std::string text) {
    SentenceResult r;
    if (!ready("parse", &r)) return r;
    Sentence s;
    if (!record(grammar().parse(text, &s), &r)) return r;
    return set_sentence(s);
  }

  // Attention maps of the current model on the session's sentence: (layers, H, T, T).
  TensorRef attention() {
    TensorRef t;
    if (!ready("attention", &t) || !has_sentence("attention", &t)) return t;
    if (!record(attention_maps(run_.trainer->model(), tokens_, &result_), &t)) return t;
    const int64_t T = static_cast<int64_t>(tokens_.size());
    return tensor({model_config().num_layers, model_config().num_heads, T, T});
  }
  // Next-token probabilities after each token of the session's sentence: (T, V).
  TensorRef predictions() {
    TensorRef t;
    if (!ready("predictions", &t) || !has_sentence("predictions", &t)) return t;
    result_ = next_token_probabilities(run_.trainer->model(), tokens_);
    return tensor({static_cast<int64_t>(tokens_.size()), model_config().vocab_size});
  }

  // Weights file bytes (cpp/include/mha/train/trainer.h): n bytes into weightsBuffer(n), then
  // loadWeights(); or saveWeights() (its shape [n]) to read them.
  Buffer weightsBuffer(double count) {
    bytes_.resize(static_cast<size_t>(std::max(0.0, count)));
    Buffer b;
    b.data = byte_offset(bytes_.data());
    return b;
  }
  Outcome loadWeights() {
    Outcome o;
    if (ready("loadWeights", &o)) record(load_weights(bytes_.data(), bytes_.size(), &run_.trainer->model()), &o);
    return o;
  }
  TensorRef saveWeights() {
    TensorRef t;
    if (!ready("saveWeights", &t)) return t;
    bytes_ = encode_weights(run_.trainer->model(), run_.trainer->config().seed, run_.trainer->steps_done());
    t.data = byte_offset(bytes_.data());
    t.shape = shape_array({static_cast<int64_t>(bytes_.size())});
    return t;
  }

 private:
  const Grammar& grammar() const { return run_.trainer->grammar(); }
  const ModelConfig& model_config() const { return run_.trainer->model().config(); }
  bool ready(const char* what, Outcome* out) const {
    if (run_.trainer) return true;
    record(mha::Status(mha::StatusCode::kInvalidArgument, std::string(what) + ": call init() first"), out);
    return false;
  }
  bool has_sentence(const char* what, Outcome* out) const {
    if (!tokens_.empty()) return true;
    record(mha::Status(mha::StatusCode::kInvalidArgument, std::string(what) + ": expected a sentence first"), out);
    return false;
  }
  TensorRef tensor(const mha::Shape& shape) {
    TensorRef t;
    t.data = byte_offset(result_.data());
    t.shape = shape_array(shape);
    return t;
  }
  SentenceResult set_sentence(const Sentence& s) {
    tokens_ = s.tokens;
    SentenceResult r;
    r.tokens = val::array();
    for (int token : tokens_) r.tokens.call<void>("push", token);
    r.links = val::array();
    for (const Link& link : s.links) r.links.call<void>("push", link);
    return r;
  }

  TrainingRun run_;
  std::vector<int> tokens_;
  std::vector<float> result_;
  std::vector<uint8_t> bytes_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_train) {
  using emscripten::value_object;
  using mha::bindings::with_outcome;
  mha::bindings::register_boundary();
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
  with_outcome(value_object<StepResult>("StepResult")).field("loss", &StepResult::loss);
  with_outcome(value_object<EvaluationResult>("Evaluation"))
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
  with_outcome(value_object<SentenceResult>("SentenceResult"))
      .field("tokens", &SentenceResult::tokens)
      .field("links", &SentenceResult::links);
  emscripten::class_<TrainSession>("TrainSession")
      .constructor<>()
      .class_function("defaults", &TrainSession::defaults)
      .function("init", &TrainSession::init)
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
      .function("weightsBuffer", &TrainSession::weightsBuffer)
      .function("loadWeights", &TrainSession::loadWeights)
      .function("saveWeights", &TrainSession::saveWeights);
}
