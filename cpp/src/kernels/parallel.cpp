#include "parallel.h"

#include <algorithm>

#ifdef MHA_THREADS
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace mha::kernels {

#ifndef MHA_THREADS

int num_threads() { return 1; }

void parallel_for(int64_t n, int64_t grain,
                  const std::function<void(int64_t, int64_t, int)>& body) {
  (void)grain;
  if (n > 0) body(0, n, 0);
}

#else

#ifndef MHA_NUM_THREADS
#define MHA_NUM_THREADS 2
#endif

namespace {

// A pool of MHA_NUM_THREADS - 1 helpers; the caller runs chunk 0. One job at a time.
class Pool {
 public:
  Pool() {
    for (int t = 1; t < MHA_NUM_THREADS; ++t) helpers_.emplace_back([this, t] { loop(t); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (std::thread& h : helpers_) h.join();
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& body) {
    const int64_t threads = MHA_NUM_THREADS;
    int64_t chunk = (n + threads - 1) / threads;
    chunk = (chunk + grain - 1) / grain * grain;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body_ = &body;
      n_ = n;
      chunk_ = chunk;
      pending_ = static_cast<int>(helpers_.size());
      ++generation_;
    }
    wake_.notify_all();
    run_chunk(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    body_ = nullptr;
  }

 private:
  void run_chunk(int t) {
    const int64_t begin = std::min(n_, t * chunk_), end = std::min(n_, begin + chunk_);
    if (begin < end) (*body_)(begin, end, t);
  }

  void loop(int t) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
      }
      in_parallel() = true;
      thread_index() = t;
      run_chunk(t);
      in_parallel() = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --pending_;
      }
      done_.notify_one();
    }
  }

 public:
  static bool& in_parallel() {
    thread_local bool flag = false;
    return flag;
  }
  static int& thread_index() {
    thread_local int index = 0;
    return index;
  }

 private:
  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t, int)>* body_ = nullptr;
  int64_t n_ = 0, chunk_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: helpers live as long as the module
  return *p;
}

}  // namespace

int num_threads() { return MHA_NUM_THREADS; }

void parallel_for(int64_t n, int64_t grain,
                  const std::function<void(int64_t, int64_t, int)>& body) {
  if (n <= 0) return;
  if (Pool::in_parallel() || n <= grain) {  // nested, or too small to split: run here
    body(0, n, Pool::thread_index());
    return;
  }
  Pool::in_parallel() = true;
  pool().run(n, grain, body);
  Pool::in_parallel() = false;
}

#endif

}  // namespace mha::kernels
