// The families the runtime takes: one line each (the tables are in families/).
#include "models/family.h"

namespace mha::models {

const Family& Gpt2Family();
const Family& BertFamily();
const Family& LlamaFamily();
const Family& MistralFamily();
const Family& Qwen2Family();

const std::vector<const Family*>& Families() {
  static const std::vector<const Family*> families = {&Gpt2Family(), &BertFamily(), &LlamaFamily(), &MistralFamily(), &Qwen2Family()};
  return families;
}

const Family* FindFamily(const std::string& model_type) {
  for (const Family* f : Families()) {
    if (model_type == f->model_type) return f;
  }
  return nullptr;
}

}  // namespace mha::models
