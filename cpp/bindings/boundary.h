// The dialect the three Embind tables speak (bindings.cpp, encoder_bindings.cpp,
// train_bindings.cpp), written once:
//   errors   every fallible call returns a value object with `code` (a StatusCode value, 0 for
//            OK) and `message`: an Outcome, or a result that derives from it (with_outcome
//            registers the two fields). web/lib/errors.js turns a code into an MhaError.
//   shapes   and other lists of integers cross as JavaScript arrays of numbers, both ways
//            (read_integers, integers_of, shape_array); lists of names as arrays of strings (string_array).
//   data     floats cross in bulk, one set() in and one slice() out of the module's memory,
//            at byte offsets (byte_offset) or through typed_memory_views.
//   enums    StatusCode, with status_code_name's names (OK, INVALID_CONFIG, ...).
//   memory   heapBytes() and heapInUse(), what the leak tests compare.
// register_boundary() registers the enum, Outcome and the memory functions in a module
// (register_status_codes() the enum alone, for mha_models' table, which has its own results).
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mha/status.h"

namespace mha::bindings {

struct Outcome {
  int code = 0;
  std::string message;
};

inline Outcome outcome_of(const Status& status) { return {static_cast<int>(status.code()), status.message()}; }

// A block of the module's memory a call sized, to write an input into: its byte offset.
struct Buffer : Outcome {
  double data = 0;
};

// A tensor of the module: the byte offset of its float values, and its shape (an array).
struct TensorRef : Outcome {
  double data = 0;
  emscripten::val shape = emscripten::val::null();
};

// A result's outcome set from a status; returns whether it is OK.
inline bool record(const Status& status, Outcome* outcome) {
  *outcome = outcome_of(status);
  return status.ok();
}

// Registers a result's code and message: with_outcome(value_object<R>("R")).field(...)...
template <typename Result>
emscripten::value_object<Result>& with_outcome(emscripten::value_object<Result>&& object) {
  return object.field("code", static_cast<int Result::*>(&Outcome::code))
      .field("message", static_cast<std::string Result::*>(&Outcome::message));
}

// A JavaScript number as an int64; what no int64 holds (NaN, +-Infinity, beyond 2^53) becomes
// -1, which every check of the core refuses.
inline int64_t to_int64(double value) {
  return std::isfinite(value) && std::abs(value) <= 9007199254740992.0 ? static_cast<int64_t>(value) : -1;
}

// [1, 10, 64] -> {1, 10, 64} in *out's own memory, each number as to_int64 converts it: a call
// with lists no longer than the last ones allocates nothing.
inline void read_integers(const emscripten::val& numbers, std::vector<int64_t>* out) {
  const size_t count = numbers["length"].as<size_t>();
  out->resize(count);
  for (size_t i = 0; i < count; ++i) (*out)[i] = to_int64(numbers[i].as<double>());
}

inline std::vector<int64_t> integers_of(const emscripten::val& numbers) {
  std::vector<int64_t> integers;
  read_integers(numbers, &integers);
  return integers;
}

inline emscripten::val shape_array(const std::vector<int64_t>& shape) {
  emscripten::val dims = emscripten::val::array();
  for (size_t i = 0; i < shape.size(); ++i) dims.set(i, static_cast<double>(shape[i]));
  return dims;
}

inline emscripten::val string_array(const std::vector<std::string>& names) {
  emscripten::val array = emscripten::val::array();
  for (size_t i = 0; i < names.size(); ++i) array.set(i, names[i]);
  return array;
}

inline double byte_offset(const void* data) { return static_cast<double>(reinterpret_cast<uintptr_t>(data)); }

// The WebAssembly memory in bytes (it only grows).
inline double heap_bytes() { return double(__builtin_wasm_memory_size(0)) * 65536.0; }
// Bytes malloc has handed out and not taken back: flat across calls unless something leaks.
inline double heap_in_use() { return double(mallinfo().uordblks); }

// Module.StatusCode.<NAME>.value for each of status_code_name's names.
inline void register_status_codes() {
  emscripten::enum_<StatusCode> codes("StatusCode");
  for (StatusCode code : kStatusCodes) codes.value(status_code_name(code), code);
}

inline void register_boundary() {
  register_status_codes();
  emscripten::value_object<Outcome>("Outcome").field("code", &Outcome::code).field("message", &Outcome::message);
  with_outcome(emscripten::value_object<Buffer>("Buffer")).field("data", &Buffer::data);
  with_outcome(emscripten::value_object<TensorRef>("TensorRef")).field("data", &TensorRef::data).field("shape", &TensorRef::shape);
  emscripten::function("heapBytes", &heap_bytes);
  emscripten::function("heapInUse", &heap_in_use);
}

}  // namespace mha::bindings
