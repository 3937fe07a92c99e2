// The pretrained model as `node scripts/build/build-model.js` writes it (web/models/use-lite/),
// read for the tests: vocab.txt into a Tokenizer, a .safetensors file (F32 or F16) into an Encoder
// configured from the file's __metadata__ config.
#pragma once

#include <memory>
#include <string>

#include "mha/encoder.h"

namespace mha::testing {

// MHA_SOURCE_DIR/web/models/use-lite/<name>
std::string model_file(const std::string& name);

// Loads what the tests need; on failure returns a status whose message names the file and
// says how to make it.
Status load_tokenizer(std::unique_ptr<Tokenizer>* out);
Status load_encoder(const std::string& safetensors_name, std::unique_ptr<Encoder>* out);

}  // namespace mha::testing
