#include "workload/generators/spec/model.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <yaml-cpp/yaml.h>

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

std::uint32_t count32(const ConfigReader& reader, const YAML::Node& v, const std::string& key) {
  const std::uint64_t n = reader.count(v, key);
  // Kept in 32 bits: a larger count is refused, not truncated (2^32 experts would read as 0: dense).
  if (n > 0xffffffffu) reader.fail(v, key + " must be at most 4294967295");
  return static_cast<std::uint32_t>(n);
}

void parse_routing(const ConfigReader& reader, const YAML::Node& r, RoutingConfig& out) {
  if (!r.IsMap()) reader.fail(r, "moe.routing is a map (distribution, exponent, seed)");
  reader.check_keys(r, "moe.routing.", {"distribution", "exponent", "seed"});
  const std::string d = reader.text(reader.require(r, "distribution"), "moe.routing.distribution");
  if (d != "uniform" && d != "zipf") reader.fail(r["distribution"], "moe.routing.distribution must be uniform or zipf, got '" + d + "'");
  out.zipf = d == "zipf";
  if (!out.zipf) {
    if (r["exponent"] || r["seed"]) reader.fail(r, "moe.routing: exponent and seed go with distribution: zipf");
    return;
  }
  out.exponent = reader.real(reader.require(r, "exponent"), "moe.routing.exponent");
  if (!(out.exponent > 0 && out.exponent <= 100)) reader.fail(r["exponent"], "moe.routing.exponent must be in (0, 100]");
  if (r["seed"]) out.seed = reader.count(r["seed"], "moe.routing.seed");
}

void parse_moe(const ConfigReader& reader, const YAML::Node& moe, ModelConfig& m) {
  if (!moe.IsMap()) reader.fail(moe, "moe is a map (experts, top_k, ...)");
  reader.check_keys(moe, "moe.", {"experts", "top_k", "expert_ffn_hidden", "shared_experts", "first_dense_layers",
                                  "capacity_factor", "routing"});
  m.moe.experts = count32(reader, reader.require(moe, "experts"), "moe.experts");
  if (m.moe.experts == 0) reader.fail(moe["experts"], "moe.experts must be at least 1");
  m.moe.top_k = count32(reader, reader.require(moe, "top_k"), "moe.top_k");
  if (m.moe.top_k == 0) reader.fail(moe["top_k"], "moe.top_k must be at least 1");
  if (m.moe.top_k > m.moe.experts) reader.fail(moe["top_k"], "moe.top_k must be at most moe.experts");
  m.moe.expert_ffn_hidden = moe["expert_ffn_hidden"] ? positive(reader, moe, "expert_ffn_hidden") : m.ffn_hidden;
  if (moe["shared_experts"]) m.moe.shared_experts = count32(reader, moe["shared_experts"], "moe.shared_experts");
  if (moe["first_dense_layers"]) {
    m.moe.first_dense_layers = reader.count(moe["first_dense_layers"], "moe.first_dense_layers");
    if (m.moe.first_dense_layers >= m.layers) {
      reader.fail(moe["first_dense_layers"], "moe.first_dense_layers (" + std::to_string(m.moe.first_dense_layers) +
                                                 ") must be below layers (" + std::to_string(m.layers) + ")");
    }
  }
  if (moe["capacity_factor"]) {
    m.moe.capacity_factor = reader.real(moe["capacity_factor"], "moe.capacity_factor");
    if (!(m.moe.capacity_factor > 0 && m.moe.capacity_factor <= 1e6)) {
      reader.fail(moe["capacity_factor"], "moe.capacity_factor must be in (0, 1e6] (leave it out for dropless routing)");
    }
  }
  if (moe["routing"]) parse_routing(reader, moe["routing"], m.moe.routing);
}

}  // namespace

std::string RoutingConfig::describe() const {
  if (!zipf) return "uniform";
  std::ostringstream s;
  s << "zipf:" << exponent << ":" << seed;
  return s.str();
}

ModelConfig parse_model(const std::string& yaml_text, const std::string& source) {
  ConfigReader reader(source);
  const YAML::Node root = reader.load(yaml_text);
  if (!root.IsMap()) reader.fail(root, "a model is a map of keys (layers, hidden, ...)");
  reader.check_keys(root, "", {"name", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp", "norm",
                               "bias", "tied_embeddings", "dropout", "moe", "mla"});
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
  if (const YAML::Node moe = root["moe"]) parse_moe(reader, moe, m);
  if (const YAML::Node mla = root["mla"]) {
    if (!mla.IsMap()) reader.fail(mla, "mla is a map (q_lora_rank, kv_lora_rank, qk_head_dim, rope_head_dim, v_head_dim)");
    reader.check_keys(mla, "mla.", {"q_lora_rank", "kv_lora_rank", "qk_head_dim", "rope_head_dim", "v_head_dim"});
    // Each width is kept well below 2^32 so that products of a few of them stay checked, not wrapped.
    auto width = [&](const char* key) {
      const std::uint64_t v = positive(reader, mla, key);
      if (v > (1u << 24)) reader.fail(mla[key], std::string("mla.") + key + " must be at most 16777216");
      return v;
    };
    m.mla.q_lora_rank = width("q_lora_rank");
    m.mla.kv_lora_rank = width("kv_lora_rank");
    m.mla.qk_head_dim = width("qk_head_dim");
    m.mla.rope_head_dim = width("rope_head_dim");
    m.mla.v_head_dim = width("v_head_dim");
    if (root["kv_heads"] && m.kv_heads != m.heads) {
      reader.fail(root["kv_heads"], "kv_heads: multi-head latent attention (mla) has one key/value head per head; leave kv_heads out");
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
  ModelConfig m = parse_model(text.str(), name_or_path);
  m.file = name_or_path;
  return m;
}

}  // namespace sim::gen
