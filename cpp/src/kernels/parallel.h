// Fork-join over the kernels' independent pieces (column panels of a GEMM, row blocks of
// attention). Built with MHA_THREADS (the pthreads WebAssembly build, or natively), the work is
// split over num_threads() threads: the caller and a pool started once; otherwise, and inside
// a piece that is already running in parallel, it runs in the caller, in order.
#pragma once

#include <cstdint>
#include <functional>

namespace mha::kernels {

// Threads parallel_for uses (1 without MHA_THREADS).
int num_threads();

// Calls body(begin, end, thread) for contiguous chunks covering [0, n), one per thread, each a
// multiple of `grain` long (but the last); returns when all chunks are done. `thread` is in
// [0, num_threads()) and distinct between chunks running at once (for per-thread scratch).
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& body);

}  // namespace mha::kernels
