// The native side of `npm run bench`: times MultiHeadAttention::forward of this project's core
// (built at -O3 -msse2 or -O3 -march=native) on the benchmark's weights and input, read from
// the raw float32 files bench/data.js writes. Prints one JSON line
//   {"ms": median, "runs": n, "min_ms": fastest}
// and writes the output (1, L, E) to --output for the cross-check.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "mha/attention.h"

namespace {

std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  const std::streamsize bytes = f.tellg();
  std::vector<float> data(static_cast<size_t>(bytes) / sizeof(float));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(data.data()), bytes);
  return data;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

void fail(const mha::Status& status) {
  std::fprintf(stderr, "%s\n", status.message().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string weights_path, input_path, output_path;
  int64_t L = 0, E = 0, H = 0;
  bool need_weights = false;
  double budget_ms = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--weights") weights_path = value;
    else if (key == "--input") input_path = value;
    else if (key == "--output") output_path = value;
    else if (key == "--L") L = std::atoll(value.c_str());
    else if (key == "--E") E = std::atoll(value.c_str());
    else if (key == "--H") H = std::atoll(value.c_str());
    else if (key == "--need-weights") need_weights = value == "1";
    else if (key == "--budget-ms") budget_ms = std::atof(value.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  if (L <= 0 || E <= 0 || H <= 0 || weights_path.empty() || input_path.empty()) {
    std::fprintf(stderr, "usage: mha_bench --weights F --input F --L n --E n --H n "
                         "[--need-weights 0|1] [--budget-ms ms] [--output F]\n");
    return 2;
  }
  const std::vector<float> weights = read_f32(weights_path), x = read_f32(input_path);
  if (weights.size() != size_t(4 * E * E + 4 * E) || x.size() != size_t(L * E)) {
    std::fprintf(stderr, "expected %lld weight and %lld input floats, got %zu and %zu\n",
                 (long long)(4 * E * E + 4 * E), (long long)(L * E), weights.size(), x.size());
    return 2;
  }

  mha::Config config;
  config.embed_dim = E;
  config.num_heads = H;
  config.batch_first = true;
  std::unique_ptr<mha::MultiHeadAttention> attn;
  mha::Status status = mha::MultiHeadAttention::Create(config, 0, &attn);
  if (!status.ok()) fail(status);
  const float* p = weights.data();
  const std::pair<const char*, mha::Shape> params[] = {{"in_proj_weight", {3 * E, E}},
                                                       {"in_proj_bias", {3 * E}},
                                                       {"out_proj.weight", {E, E}},
                                                       {"out_proj.bias", {E}}};
  for (const auto& [name, shape] : params) {
    size_t n = 1;
    for (int64_t d : shape) n *= size_t(d);
    status = attn->set_parameter(name, p, n, shape);
    if (!status.ok()) fail(status);
    p += n;
  }

  mha::TensorView query{x.data(), x.size(), {1, L, E}};
  mha::MaskView no_mask;
  mha::ForwardOptions options;
  options.need_weights = need_weights;
  mha::ForwardResult result;
  auto forward = [&] {
    mha::Status s = attn->forward(query, query, query, no_mask, no_mask, options, &result);
    if (!s.ok()) fail(s);
  };

  // Warm-up: at least 2 runs and a fifth of the budget; then timed runs until the budget is
  // spent (at least 5, at most 2000).
  const double warm_start = now_ms();
  for (int r = 0; r < 2 || now_ms() - warm_start < budget_ms / 5; ++r) forward();
  std::vector<double> times;
  const double start = now_ms();
  while (times.size() < 5 || (now_ms() - start < budget_ms && times.size() < 2000)) {
    const double t0 = now_ms();
    forward();
    times.push_back(now_ms() - t0);
  }
  std::sort(times.begin(), times.end());
  if (!output_path.empty()) {
    std::ofstream out(output_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(result.output.data.data()),
              std::streamsize(result.output.data.size() * sizeof(float)));
  }
  std::printf("{\"ms\": %.6f, \"runs\": %zu, \"min_ms\": %.6f}\n", times[times.size() / 2],
              times.size(), times.front());
  return 0;
}
