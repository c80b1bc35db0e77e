#include "workload/generators/model.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/config_reader.h"

namespace sim::gen {
namespace {

// {name, YAML text} of configs/models/*.yml, generated at configure time
// (workload/generators/CMakeLists.txt), so `sim` needs no data files.
const std::pair<const char*, const char*> kBuiltinModels[] = {
#include "builtin_models.inc"
};

std::uint64_t positive(const ConfigReader& reader, const YAML::Node& map, std::string_view key) {
  const YAML::Node v = reader.require(map, key);
  const std::uint64_t n = reader.count(v, key);
  if (n == 0) reader.fail(v, std::string(key) + " must be at least 1");
  return n;
}

}  // namespace

ModelConfig parse_model(const std::string& yaml_text, const std::string& source) {
  ConfigReader reader(source);
  const YAML::Node root = reader.load(yaml_text);
  if (!root.IsMap()) reader.fail(root, "a model is a map of keys (layers, hidden, ...)");
  reader.check_keys(root, "", {"name", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp", "norm",
                               "bias", "tied_embeddings", "dropout", "moe"});
  ModelConfig m;
  m.source = source;
  m.name = root["name"] ? reader.text(root["name"], "name") : std::filesystem::path(source).stem().string();
  m.layers = positive(reader, root, "layers");
  m.hidden = positive(reader, root, "hidden");
  m.ffn_hidden = positive(reader, root, "ffn_hidden");
  m.heads = positive(reader, root, "heads");
  m.kv_heads = root["kv_heads"] ? positive(reader, root, "kv_heads") : m.heads;
  m.vocab = positive(reader, root, "vocab");
  if (root["mlp"]) {
    const std::string mlp = reader.text(root["mlp"], "mlp");
    if (mlp != "gelu" && mlp != "swiglu") reader.fail(root["mlp"], "mlp must be gelu or swiglu, got '" + mlp + "'");
    m.swiglu = mlp == "swiglu";
  }
  if (root["norm"]) {
    const std::string norm = reader.text(root["norm"], "norm");
    if (norm != "layernorm" && norm != "rmsnorm") {
      reader.fail(root["norm"], "norm must be layernorm or rmsnorm, got '" + norm + "'");
    }
    m.rmsnorm = norm == "rmsnorm";
  }
  if (root["bias"]) m.bias = reader.flag(root["bias"], "bias");
  if (root["tied_embeddings"]) m.tied_embeddings = reader.flag(root["tied_embeddings"], "tied_embeddings");
  if (root["dropout"]) {
    m.dropout = reader.real(root["dropout"], "dropout");
    if (!(m.dropout >= 0 && m.dropout < 1)) reader.fail(root["dropout"], "dropout is a probability in [0, 1)");
  }
  if (m.hidden % m.heads != 0) {
    reader.fail(root["heads"], "hidden (" + std::to_string(m.hidden) + ") must be a multiple of heads (" +
                                   std::to_string(m.heads) + ")");
  }
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    reader.fail(root["kv_heads"], "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" +
                                      std::to_string(m.heads) + ")");
  }
  if (const YAML::Node moe = root["moe"]) {
    if (!moe.IsMap()) reader.fail(moe, "moe is a map (experts, top_k, capacity_factor)");
    reader.check_keys(moe, "moe.", {"experts", "top_k", "capacity_factor"});
    // Kept in 32 bits: a larger count is refused, not truncated (2^32 experts would read as 0: dense).
    for (const char* key : {"experts", "top_k"}) {
      if (positive(reader, moe, key) > 0xffffffffu) reader.fail(moe[key], std::string("moe.") + key + " must be at most 4294967295");
    }
    m.moe.experts = static_cast<std::uint32_t>(positive(reader, moe, "experts"));
    m.moe.top_k = static_cast<std::uint32_t>(positive(reader, moe, "top_k"));
    if (m.moe.top_k > m.moe.experts) reader.fail(moe["top_k"], "moe.top_k must be at most moe.experts");
    if (moe["capacity_factor"]) {
      m.moe.capacity_factor = reader.real(moe["capacity_factor"], "moe.capacity_factor");
      if (!(m.moe.capacity_factor >= 1.0)) {
        reader.fail(moe["capacity_factor"], "moe.capacity_factor must be at least 1 (tokens are routed evenly)");
      }
    }
  }
  return m;
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : kBuiltinModels) names.emplace_back(name);
  return names;
}

ModelConfig load_model(const std::string& name_or_path, const std::string& given) {
  for (const auto& [name, text] : kBuiltinModels) {
    if (name_or_path == name) return parse_model(text, "built-in model " + name_or_path);
  }
  std::ifstream in(name_or_path);
  if (!in) {
    std::string names;
    for (const std::string& n : builtin_model_names()) names += (names.empty() ? "" : ", ") + n;
    throw InputError((given.empty() ? "--model: '" + name_or_path + "'" : given) + " is neither a built-in model (" + names +
                     ") nor a readable YAML file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_model(text.str(), name_or_path);
}

}  // namespace sim::gen
