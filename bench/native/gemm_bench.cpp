// Micro-benchmark of the packed GEMM (kernels/gemm.h): checks it against a plain triple loop,
// then times C = A . B^T + bias at the projection shapes of the benchmark's A-E.
// Built natively and with emcc (run under Node) from the same source:
//   g++ -O3 -msse2 -Icpp/src/kernels bench/native/gemm_bench.cpp cpp/src/kernels/gemm.cpp
//   em++ -O3 -msimd128 -Icpp/src/kernels bench/native/gemm_bench.cpp cpp/src/kernels/gemm.cpp -o gemm.js
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gemm.h"

using namespace mha::kernels;

static double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  struct Case { int64_t M, N, K; };
  const Case cases[] = {{10, 192, 64},   {128, 1536, 512}, {128, 512, 512},
                        {512, 2304, 768}, {1024, 1536, 512}, {1024, 1024, 64}, {1024, 64, 1024}};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (const Case& t : cases) {
    std::vector<float> a(t.M * t.K), w(t.N * t.K), bias(t.N), c(t.M * t.N), ref(t.M * t.N);
    for (float& x : a) x = dist(rng);
    for (float& x : w) x = dist(rng);
    for (float& x : bias) x = dist(rng);
    std::vector<float> packed(gemm::packed_floats(t.K, t.N));
    gemm::pack_nt(packed.data(), w.data(), t.K, t.N, t.K);
    gemm::gemm_packed(c.data(), t.N, a.data(), t.K, packed.data(), bias.data(), t.M, t.N, t.K, false);
    double max_err = 0;
    for (int64_t i = 0; i < t.M; ++i)
      for (int64_t j = 0; j < t.N; ++j) {
        double s = bias[j];
        for (int64_t k = 0; k < t.K; ++k) s += double(a[i * t.K + k]) * w[j * t.K + k];
        max_err = std::max(max_err, std::fabs(s - c[i * t.N + j]));
      }
    const double flops = 2.0 * t.M * t.N * t.K;
    const int reps = std::max<int>(3, int(2e9 / flops));
    // The fastest of reps timings (the machine is shared; the minimum is the least noisy), with and without packing.
    std::vector<double> times, times_pack;
    for (int r = 0; r < reps; ++r) {
      double t0 = now_ms();
      gemm::gemm_packed(c.data(), t.N, a.data(), t.K, packed.data(), bias.data(), t.M, t.N, t.K, false);
      double t1 = now_ms();
      gemm::pack_nt(packed.data(), w.data(), t.K, t.N, t.K);
      double t2 = now_ms();
      times.push_back(t1 - t0);
      times_pack.push_back(t2 - t1);
    }
    std::sort(times.begin(), times.end());
    std::sort(times_pack.begin(), times_pack.end());
    const double ms = times[0], pack_ms = times_pack[times_pack.size() / 2];
    std::printf("M=%5lld N=%5lld K=%5lld  max_err %.2e  gemm %8.3f ms %6.1f GFLOP/s  pack %7.3f ms\n",
                (long long)t.M, (long long)t.N, (long long)t.K, max_err, ms, flops / ms / 1e6, pack_ms);
  }
  return 0;
}
