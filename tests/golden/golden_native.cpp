// mha_golden: runs golden case files (tests/golden/README.md) through mha::MultiHeadAttention
// and compares output and weights with the PyTorch values they hold.
//
//   mha_golden [--json] DIR|FILE...
//
// One line per case: PASS/FAIL, the largest absolute error of output and weights beside the
// tolerance; then "N passed, N failed". Exit status 1 if any case failed, 2 on bad usage.
// --json prints one JSON object per case and line instead (for scripts/golden.js), then a
// summary object {"summary": {"passed": N, "failed": N}}.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mha/attention.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A case failed for a reason other than a numeric mismatch (bad file, rejected input, ...).
struct CaseError {
  std::string message;
};

// Python's json writes NaN / Infinity / -Infinity as bare tokens, which are not JSON; quote them
// (outside strings) so that the parser accepts them and they are read as numbers below.
std::string QuoteNonFiniteTokens(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "NaN"}) {
      size_t n = std::char_traits<char>::length(token);
      if (text.compare(i, n, token) == 0) {
        out += '"';
        out += token;
        out += '"';
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

std::string ShapeString(const mha::Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float ElementToFloat(const json& v, const std::string& where) {
  if (v.is_null()) return std::numeric_limits<float>::quiet_NaN();
  if (v.is_number()) return static_cast<float>(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? 1.0f : 0.0f;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "NaN" || s == "nan") return std::numeric_limits<float>::quiet_NaN();
    if (s == "Infinity" || s == "inf") return std::numeric_limits<float>::infinity();
    if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<float>::infinity();
  }
  throw CaseError{where + ": expected a number, null, \"NaN\" or \"Infinity\" in data, got " + v.dump()};
}

// Row-major data; nested lists (as tensor.tolist() gives them) are flattened.
void AppendFlattened(const json& data, const std::string& where, std::vector<float>* out) {
  for (const json& v : data) {
    if (v.is_array()) {
      AppendFlattened(v, where, out);
    } else {
      out->push_back(ElementToFloat(v, where));
    }
  }
}

// A tensor as the case file gives it: float data (bool as 0/1) and a shape.
struct CaseTensor {
  bool present = false;
  bool is_bool = false;
  mha::Shape shape;
  std::vector<float> data;
  std::vector<uint8_t> bools;
};

CaseTensor ReadTensor(const json& parent, const char* key, const std::string& where, bool required) {
  CaseTensor t;
  if (!parent.is_object() || !parent.contains(key) || parent.at(key).is_null()) {
    if (required) throw CaseError{where + "." + key + " is missing"};
    return t;
  }
  const json& j = parent.at(key);
  const std::string name = where + "." + key;
  if (!j.is_object() || !j.contains("shape") || !j.contains("data")) {
    throw CaseError{name + ": expected {\"shape\", \"dtype\", \"data\"}"};
  }
  t.present = true;
  for (const json& d : j.at("shape")) t.shape.push_back(d.get<int64_t>());
  std::string dtype = j.value("dtype", std::string("float32"));
  if (dtype == "bool") {
    t.is_bool = true;
  } else if (dtype != "float32" && dtype != "float64" && dtype != "float") {
    throw CaseError{name + ": dtype must be \"float32\" or \"bool\", got \"" + dtype + "\""};
  }
  const json& data = j.at("data");
  if (!data.is_array()) throw CaseError{name + ".data must be an array"};
  t.data.reserve(data.size());
  AppendFlattened(data, name, &t.data);
  if (t.is_bool) {
    t.bools.reserve(t.data.size());
    for (float v : t.data) t.bools.push_back(v != 0.0f ? 1 : 0);
  }
  size_t expected = 1;
  for (int64_t d : t.shape) expected *= static_cast<size_t>(std::max<int64_t>(d, 0));
  if (expected != t.data.size()) {
    throw CaseError{name + ": shape " + ShapeString(t.shape) + " holds " + std::to_string(expected) +
                    " values but data has " + std::to_string(t.data.size())};
  }
  return t;
}

mha::TensorView View(const CaseTensor& t) {
  mha::TensorView v;
  v.data = t.data.data();
  v.length = t.data.size();
  v.shape = t.shape;
  return v;
}

mha::MaskView MaskOf(const CaseTensor& t) {
  mha::MaskView m;
  if (!t.present) return m;
  m.shape = t.shape;
  if (t.is_bool) {
    m.dtype = mha::MaskDtype::kBool;
    m.data = t.bools.data();
    m.length = t.bools.size();
  } else {
    m.dtype = mha::MaskDtype::kFloat;
    m.data = t.data.data();
    m.length = t.data.size();
  }
  return m;
}

int64_t IntOr(const json& obj, const char* key, int64_t fallback) {
  if (!obj.contains(key) || obj.at(key).is_null()) return fallback;
  return obj.at(key).get<int64_t>();
}

bool BoolOr(const json& obj, const char* key, bool fallback) {
  if (!obj.is_object() || !obj.contains(key) || obj.at(key).is_null()) return fallback;
  return obj.at(key).get<bool>();
}

double NumberOr(const json& obj, const char* key, double fallback) {
  if (!obj.is_object() || !obj.contains(key) || obj.at(key).is_null()) return fallback;
  return obj.at(key).get<double>();
}

// The comparison of one tensor: largest absolute error over elements both finite-comparable,
// and whether every element is within atol + rtol * |expected| (NaN must match NaN).
struct Comparison {
  bool compared = false;  // false: nothing to compare (weights not expected)
  bool pass = true;
  double max_abs_err = 0.0;
  double atol = 0.0;
  double rtol = 0.0;
  std::string message;
};

Comparison Compare(const std::string& what, const mha::Tensor& actual, const CaseTensor& expected,
                   double atol, double rtol) {
  Comparison c;
  c.compared = true;
  c.atol = atol;
  c.rtol = rtol;
  if (actual.shape != expected.shape) {
    c.pass = false;
    c.max_abs_err = std::numeric_limits<double>::infinity();
    c.message = what + " shape " + ShapeString(actual.shape) + ", expected " + ShapeString(expected.shape);
    return c;
  }
  if (actual.data.size() != expected.data.size()) {
    c.pass = false;
    c.max_abs_err = std::numeric_limits<double>::infinity();
    c.message = what + " has " + std::to_string(actual.data.size()) + " values, expected " +
                std::to_string(expected.data.size());
    return c;
  }
  size_t bad = 0;
  std::string first_bad;
  for (size_t i = 0; i < actual.data.size(); ++i) {
    const double a = actual.data[i];
    const double e = expected.data[i];
    bool ok;
    double err;
    if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
      err = ok ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = a == e;
      err = ok ? 0.0 : std::numeric_limits<double>::infinity();
    } else {
      err = std::fabs(a - e);
      ok = err <= atol + rtol * std::fabs(e);
    }
    c.max_abs_err = std::max(c.max_abs_err, err);
    if (!ok) {
      if (bad == 0) {
        std::ostringstream s;
        s.precision(9);
        s << what << "[" << i << "] = " << a << ", expected " << e;
        first_bad = s.str();
      }
      ++bad;
    }
  }
  if (bad > 0) {
    c.pass = false;
    c.message = std::to_string(bad) + " of " + std::to_string(actual.data.size()) + " " + what +
                " values out of tolerance; first: " + first_bad;
  }
  return c;
}

struct CaseResult {
  std::string name;
  std::string file;
  bool pass = false;
  Comparison output;
  Comparison weights;
  std::string message;
};

CaseResult RunCase(const fs::path& path) {
  CaseResult r;
  r.file = path.string();
  r.name = path.stem().string();
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CaseError{"cannot read " + path.string()};
    std::stringstream buffer;
    buffer << in.rdbuf();
    json c;
    try {
      c = json::parse(QuoteNonFiniteTokens(buffer.str()));
    } catch (const json::exception& e) {
      throw CaseError{std::string("not valid JSON: ") + e.what()};
    }
    if (!c.is_object()) throw CaseError{"a case file must hold one JSON object"};
    if (c.contains("name") && c.at("name").is_string()) r.name = c.at("name").get<std::string>();
    for (const char* key : {"config", "state_dict", "inputs", "expected"}) {
      if (!c.contains(key) || !c.at(key).is_object()) throw CaseError{std::string("\"") + key + "\" object is missing"};
    }
    const json& cfg = c.at("config");
    mha::Config config;
    config.embed_dim = IntOr(cfg, "embed_dim", 0);
    config.num_heads = IntOr(cfg, "num_heads", 1);
    config.num_kv_heads = IntOr(cfg, "num_kv_heads", 0);
    config.kdim = IntOr(cfg, "kdim", 0);
    config.vdim = IntOr(cfg, "vdim", 0);
    config.bias = BoolOr(cfg, "bias", true);
    config.add_bias_kv = BoolOr(cfg, "add_bias_kv", false);
    config.add_zero_attn = BoolOr(cfg, "add_zero_attn", false);
    config.batch_first = BoolOr(cfg, "batch_first", false);

    std::unique_ptr<mha::MultiHeadAttention> attention;
    mha::Status status = mha::MultiHeadAttention::Create(config, 0, &attention);
    if (!status.ok()) throw CaseError{"Create: " + status.message()};
    for (const auto& item : c.at("state_dict").items()) {
      if (item.value().is_null()) continue;  // e.g. in_proj_weight None when q/k/v are separate
      CaseTensor t = ReadTensor(c.at("state_dict"), item.key().c_str(), "state_dict", true);
      status = attention->set_parameter(item.key(), t.data.data(), t.data.size(), t.shape);
      if (!status.ok()) throw CaseError{"set_parameter(\"" + item.key() + "\"): " + status.message()};
    }

    const json& inputs = c.at("inputs");
    CaseTensor query = ReadTensor(inputs, "query", "inputs", true);
    CaseTensor key = ReadTensor(inputs, "key", "inputs", false);
    CaseTensor value = ReadTensor(inputs, "value", "inputs", false);
    if (!key.present) key = query;      // self-attention
    if (!value.present) value = key;
    CaseTensor key_padding_mask = ReadTensor(inputs, "key_padding_mask", "inputs", false);
    CaseTensor attn_mask = ReadTensor(inputs, "attn_mask", "inputs", false);

    const json options_json = c.value("options", json::object());
    mha::ForwardOptions options;
    options.need_weights = BoolOr(options_json, "need_weights", true);
    options.average_attn_weights = BoolOr(options_json, "average_attn_weights", true);
    options.is_causal = BoolOr(options_json, "is_causal", false);

    mha::ForwardResult result;
    status = attention->forward(View(query), View(key), View(value), MaskOf(key_padding_mask),
                                MaskOf(attn_mask), options, &result);
    if (!status.ok()) throw CaseError{"forward: " + status.message()};

    const json tolerance = c.value("tolerance", json::object());
    const double atol = NumberOr(tolerance, "atol", 1e-4);
    const double rtol = NumberOr(tolerance, "rtol", 0.0);
    const double weights_atol = NumberOr(tolerance, "weights_atol", std::min(atol, 1e-5));
    const double weights_rtol = NumberOr(tolerance, "weights_rtol", 0.0);

    CaseTensor expected_output = ReadTensor(c.at("expected"), "output", "expected", true);
    CaseTensor expected_weights = ReadTensor(c.at("expected"), "weights", "expected", false);
    r.output = Compare("output", result.output, expected_output, atol, rtol);
    if (expected_weights.present) {
      if (!result.weights.present()) {
        r.weights.compared = true;
        r.weights.pass = false;
        r.weights.max_abs_err = std::numeric_limits<double>::infinity();
        r.weights.message = "weights expected but none returned";
      } else {
        r.weights = Compare("weights", result.weights, expected_weights, weights_atol, weights_rtol);
      }
    } else if (result.weights.present()) {
      r.weights.compared = true;
      r.weights.pass = false;
      r.weights.max_abs_err = std::numeric_limits<double>::infinity();
      r.weights.message = "weights returned with shape " + ShapeString(result.weights.shape) +
                          " but the case expects none (need_weights false)";
    }
    r.weights.atol = weights_atol;
    r.weights.rtol = weights_rtol;
    r.pass = r.output.pass && r.weights.pass;
    for (const Comparison* comparison : {&r.output, &r.weights}) {
      if (!comparison->message.empty()) r.message += (r.message.empty() ? "" : "; ") + comparison->message;
    }
  } catch (const CaseError& e) {
    r.pass = false;
    r.message = e.message;
  } catch (const json::exception& e) {
    r.pass = false;
    r.message = std::string("malformed case: ") + e.what();
  }
  return r;
}

std::string Sci(double v) {
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// A tolerance: 1e-04, or 2.5e-05 when it needs the digit (as golden_common.js prints it).
std::string ShortSci(double v) {
  std::string s = Sci(v);
  size_t dot = s.find(".0e");
  if (dot != std::string::npos) s.erase(dot, 2);
  return s;
}

std::string Tol(const Comparison& c) {
  std::string s = "tol " + ShortSci(c.atol);
  if (c.rtol > 0) s += "+" + ShortSci(c.rtol) + "|e|";
  return s;
}

json ErrorJson(double v) {
  if (std::isinf(v) || std::isnan(v)) return nullptr;
  return v;
}

void CollectCaseFiles(const std::string& arg, std::vector<fs::path>* files) {
  fs::path p(arg);
  if (fs::is_directory(p)) {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(p)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
    files->insert(files->end(), found.begin(), found.end());
  } else {
    files->push_back(p);  // a missing file fails as a case, with its reason
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool as_json = false;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      as_json = true;
    } else if (arg == "-h" || arg == "--help") {
      std::cout << "usage: mha_golden [--json] DIR|FILE...\n";
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "mha_golden: unknown option " << arg << "\nusage: mha_golden [--json] DIR|FILE...\n";
      return 2;
    } else {
      CollectCaseFiles(arg, &files);
    }
  }
  if (files.empty()) {
    std::cerr << "mha_golden: no case files given (usage: mha_golden [--json] DIR|FILE...)\n";
    return 2;
  }

  int passed = 0;
  int failed = 0;
  for (const fs::path& file : files) {
    CaseResult r = RunCase(file);
    (r.pass ? passed : failed)++;
    if (as_json) {
      json line = {{"engine", "native"},
                   {"name", r.name},
                   {"file", r.file},
                   {"pass", r.pass},
                   {"output_compared", r.output.compared},
                   {"output_max_abs_err", r.output.compared ? ErrorJson(r.output.max_abs_err) : json(nullptr)},
                   {"output_atol", r.output.atol},
                   {"output_rtol", r.output.rtol},
                   {"weights_compared", r.weights.compared},
                   {"weights_max_abs_err", r.weights.compared ? ErrorJson(r.weights.max_abs_err) : json(nullptr)},
                   {"weights_atol", r.weights.atol},
                   {"weights_rtol", r.weights.rtol},
                   {"message", r.message}};
      std::cout << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    } else {
      std::string line = std::string(r.pass ? "PASS" : "FAIL") + " native  " + r.name;
      if (r.output.compared) line += "  out " + Sci(r.output.max_abs_err) + " (" + Tol(r.output) + ")";
      if (r.weights.compared) line += "  w " + Sci(r.weights.max_abs_err) + " (" + Tol(r.weights) + ")";
      if (!r.message.empty()) line += "  -- " + r.message;
      std::cout << line << "\n";
    }
  }
  if (as_json) {
    std::cout << json{{"summary", {{"passed", passed}, {"failed", failed}}}}.dump() << "\n";
  } else {
    std::cout << passed << " passed, " << failed << " failed\n";
  }
  return failed > 0 ? 1 : 0;
}
