// mha_trainer: trains the 2-layer decoder on the grammar from a seed, then scores every head.
//
//   mha_trainer [--seed S] [--steps N] [--batch B] [--lr X] [--warmup W] [--eval N]
//               [--log-every K] [--out weights.bin] [--json]
//   and, to try other set-ups than TrainConfig's defaults: [--eval-every K] [--wd X]
//   [--beta2 X] [--init fan-in|gpt2] [--positions even|sinusoid|normal] [--channels split|shared]
//   [--token-std X] [--position-std X] [--matrix-gain X] [--embedding-wd X]
//   [--min-repeat N] [--same-number-share P] [--lead-share P] [--reflexive-share P]
//
// Prints the loss as it trains, then accuracy and the heads x relations table; with --json the
// last line is one JSON object (seed, steps, seconds, accuracy, heads).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "mha/train/trainer.h"

using namespace mha::train;

namespace {

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr, "mha_trainer: %s\n", problem.c_str());
  std::fprintf(stderr,
               "usage: mha_trainer [--seed S] [--steps N] [--batch B] [--lr X] [--warmup W] [--eval N]\n"
               "                   [--log-every K] [--eval-every K] [--wd X] [--beta2 X] [--init fan-in|gpt2]\n"
               "                   [--positions even|sinusoid|normal] [--channels split|shared] [--token-std X]\n"
               "                   [--position-std X] [--matrix-gain X] [--embedding-wd X]\n"
               "                   [--min-repeat N] [--same-number-share P] [--lead-share P]\n"
               "                   [--reflexive-share P]\n"
               "                   [--out weights.bin] [--json]\n");
  std::exit(2);
}

long parse_int(const char* flag, const char* text, long lo, long hi) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < lo || v > hi)
    usage(std::string(flag) + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
          "], got \"" + text + "\"");
  return v;
}

double parse_double(const char* flag, const char* text, double lo, double hi) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (!*text || *end || !(v >= lo && v <= hi))
    usage(std::string(flag) + ": expected a number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
          "], got \"" + text + "\"");
  return v;
}

// The figures the targets name: best layer-0 previous-token head, best pronoun and verb heads,
// the two best induction heads of one layer together.
struct Summary {
  double previous_l0 = 0, pronoun = 0, verb = 0, induction_pair = 0, induction_best = 0;
};

Summary summarize(const Evaluation& e, int layers, int heads) {
  Summary s;
  auto at = [&](int l, int h, Relation r) {
    return e.heads[(static_cast<size_t>(l) * heads + h) * kNumRelations + static_cast<int>(r)].mean_weight;
  };
  for (int l = 0; l < layers; ++l) {
    double first = 0, second = 0;
    for (int h = 0; h < heads; ++h) {
      if (l == 0) s.previous_l0 = std::max(s.previous_l0, at(l, h, Relation::kPrevious));
      s.pronoun = std::max(s.pronoun, at(l, h, Relation::kPronounAntecedent));
      s.verb = std::max(s.verb, at(l, h, Relation::kVerbSubject));
      const double w = at(l, h, Relation::kInduction);
      if (w > first) {
        second = first;
        first = w;
      } else if (w > second) {
        second = w;
      }
    }
    s.induction_best = std::max(s.induction_best, first);
    s.induction_pair = std::max(s.induction_pair, first + second);
  }
  return s;
}

void print_summary(const char* prefix, const Evaluation& e, const Summary& s) {
  std::printf("%sagreement %.3f  pronoun %.3f  copy %.3f | heads: previous(L0) %.3f  pronoun %.3f  verb %.3f  "
              "induction best %.3f, two best of a layer %.3f\n",
              prefix, e.agreement, e.pronoun, e.copy, s.previous_l0, s.pronoun, s.verb, s.induction_best,
              s.induction_pair);
}

void print_table(const Evaluation& e, int layers, int heads) {
  std::printf("\nheads x relations (mean weight on the true key / argmax share; held-out sentences: %d)\n", e.sentences);
  std::printf("%-6s", "head");
  for (int r = 0; r < kNumRelations; ++r) std::printf(" %20s", relation_name(static_cast<Relation>(r)));
  // Measurements only: heads are named by one rule for every source (npm run roles -- --source trained).
  std::printf("\n");
  for (int l = 0; l < layers; ++l) {
    for (int h = 0; h < heads; ++h) {
      std::printf("L%dH%d  ", l, h);
      for (int r = 0; r < kNumRelations; ++r) {
        const HeadScore& s = e.heads[(static_cast<size_t>(l) * heads + h) * kNumRelations + r];
        std::printf("        %5.3f / %5.3f", s.mean_weight, s.argmax_share);
      }
      std::printf("\n");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  TrainConfig config;
  int eval_count = 1000, log_every = 250, eval_every = 0;
  bool json = false;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(flag + ": expected a value after it");
      return argv[++i];
    };
    if (flag == "--seed") config.seed = static_cast<uint64_t>(parse_int("--seed", value(), 0, 2147483647));
    else if (flag == "--steps") config.steps = static_cast<int>(parse_int("--steps", value(), 1, 1000000));
    else if (flag == "--batch") config.batch_size = static_cast<int>(parse_int("--batch", value(), 1, 4096));
    else if (flag == "--lr") config.learning_rate = parse_double("--lr", value(), 1e-6, 1.0);
    else if (flag == "--warmup") config.warmup_steps = static_cast<int>(parse_int("--warmup", value(), 1, 1000000));
    else if (flag == "--eval") eval_count = static_cast<int>(parse_int("--eval", value(), 1, 100000));
    else if (flag == "--log-every") log_every = static_cast<int>(parse_int("--log-every", value(), 1, 1000000));
    else if (flag == "--positions") {
      const std::string v = value();
      if (v == "normal") config.init.positions = Initialization::Positions::kNormal;
      else if (v == "sinusoid") config.init.positions = Initialization::Positions::kSinusoid;
      else if (v == "even") config.init.positions = Initialization::Positions::kEvenSinusoid;
      else usage("--positions: expected even, sinusoid or normal, got \"" + v + "\"");
    }
    else if (flag == "--channels") {
      const std::string v = value();
      if (v != "split" && v != "shared") usage("--channels: expected split or shared, got \"" + v + "\"");
      config.init.split_channels = v == "split";
    }
    else if (flag == "--init") {
      const std::string v = value();
      if (v != "fan-in" && v != "gpt2") usage("--init: expected fan-in or gpt2, got \"" + v + "\"");
      config.init.fan_in_scale = v == "fan-in";
    }
    else if (flag == "--token-std") config.init.token_std = parse_double(flag.c_str(), value(), 0.0, 10.0);
    else if (flag == "--position-std") config.init.position_std = parse_double(flag.c_str(), value(), 0.0, 10.0);
    else if (flag == "--matrix-gain") config.init.matrix_gain = parse_double(flag.c_str(), value(), 0.0, 10.0);
    else if (flag == "--beta2") config.beta2 = parse_double(flag.c_str(), value(), 0.0, 0.99999);
    else if (flag == "--wd") config.weight_decay = parse_double("--wd", value(), 0.0, 10.0);
    else if (flag == "--min-repeat") config.min_repeat_length = static_cast<int>(parse_int(flag.c_str(), value(), 2, 6));
    else if (flag == "--same-number-share") config.same_number_share = parse_double(flag.c_str(), value(), 0.0, 1.0);
    else if (flag == "--lead-share") config.lead_share = parse_double(flag.c_str(), value(), 0.0, 1.0);
    else if (flag == "--reflexive-share") config.reflexive_share = parse_double(flag.c_str(), value(), 0.0, 0.5);
    else if (flag == "--embedding-wd") config.embedding_weight_decay = parse_double(flag.c_str(), value(), 0.0, 10.0);
    else if (flag == "--eval-every") eval_every = static_cast<int>(parse_int("--eval-every", value(), 1, 1000000));
    else if (flag == "--out") out_path = value();
    else if (flag == "--json") json = true;
    else usage("unknown option \"" + flag + "\"");
  }

  TrainingRun run;
  const mha::Status started = start_training(config, eval_count, &run);
  if (!started.ok()) usage(started.message());
  Trainer& trainer = *run.trainer;
  const Grammar& grammar = trainer.grammar();
  const ModelConfig& model_config = trainer.model().config();
  const std::vector<Sentence>& held_out = run.held_out;
  std::printf("training seed %llu: %zu parameters, vocabulary %d, %d steps of %d sentences, lr %g\n",
              static_cast<unsigned long long>(config.seed), parameter_count(model_config), model_config.vocab_size,
              config.steps, config.batch_size, config.learning_rate);

  double seconds = 0, cpu_seconds = 0;
  double loss_sum = 0;
  int loss_count = 0;
  for (int s = 0; s < config.steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpu_start = std::clock();
    loss_sum += trainer.step();
    ++loss_count;
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cpu_seconds += static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    if ((s + 1) % log_every == 0 || s + 1 == config.steps) {
      std::printf("step %5d  loss %.4f  lr %.2e  %.1f s (cpu %.1f s)\n", s + 1, loss_sum / loss_count,
                  trainer.current_learning_rate(), seconds, cpu_seconds);
      std::fflush(stdout);
      loss_sum = 0;
      loss_count = 0;
    }
    if (eval_every > 0 && (s + 1) % eval_every == 0 && s + 1 < config.steps) {
      Evaluation e = evaluate(trainer.model(), grammar, held_out);
      char prefix[64];
      std::snprintf(prefix, sizeof prefix, "  eval %5d: ", s + 1);
      print_summary(prefix, e, summarize(e, model_config.num_layers, model_config.num_heads));
      std::fflush(stdout);
    }
  }

  // What ships is float16: measure the rounded weights.
  round_to_half(trainer.model().parameters());
  Evaluation e = evaluate(trainer.model(), grammar, held_out);
  std::printf("\nheld-out (%d sentences, float16 weights): loss %.4f, agreement %.4f, pronoun %.4f, copy %.4f\n",
              e.sentences, e.loss, e.agreement, e.pronoun, e.copy);
  print_table(e, model_config.num_layers, model_config.num_heads);
  print_summary("summary: ", e, summarize(e, model_config.num_layers, model_config.num_heads));
  std::printf("training time: %.1f s wall, %.1f s cpu\n", seconds, cpu_seconds);

  if (!out_path.empty()) {
    std::vector<uint8_t> bytes = encode_weights(trainer.model(), config.seed, config.steps);
    std::ofstream file(out_path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!file) {
      std::fprintf(stderr, "mha_trainer: could not write %s\n", out_path.c_str());
      return 1;
    }
    std::printf("wrote %s (%zu bytes)\n", out_path.c_str(), bytes.size());
  }
  if (json) std::printf("%s\n", evaluation_json(e, config.seed, config.steps, seconds, cpu_seconds).c_str());
  return 0;
}
