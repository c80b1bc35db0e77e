#include "workflows/sweep/generated_algorithm.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/units.h"
#include "system/registry/algorithm_registry.h"
#include "system/registry/collective_tools.h"
#include "system/program/collective_writer.h"
#include "system/producers/synthesizer.h"
#include "workflows/sweep/content_hash.h"
#include "workflows/sweep/point_inputs.h"  // sim_version

namespace sim::workflows {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kGen = "gen:";
constexpr std::string_view kSynth = "synth";

std::uint64_t positive(const std::string& option, const std::string& key, const std::string& value) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || v == 0 || value.empty() || value[0] == '-') {
    throw InputError("collective '" + option + "': synth parameter " + key + " must be a positive integer, not '" +
                     value + "'");
  }
  return v;
}

// `synth[:chunks=K,seed=S,size=SIZE]`
void parse_synth_params(const std::string& option, const std::string& params, GeneratedAlgorithm& g) {
  std::stringstream items(params);
  for (std::string item; std::getline(items, item, ',');) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "chunks") {
      const std::uint64_t chunks = positive(option, key, value);
      if (chunks > (1u << 16)) throw InputError("collective '" + option + "': synth parameter chunks must be at most 65536");
      g.chunks = static_cast<std::uint32_t>(chunks);
    } else if (key == "seed") {
      g.seed = positive(option, key, value);
    } else if (key == "size") {
      try {
        if (parse_size(value) == 0) throw std::invalid_argument("must be > 0");
      } catch (const std::invalid_argument& e) {
        throw InputError("collective '" + option + "': synth parameter size: " + e.what());
      }
      g.size_text = value;
    } else {
      throw InputError("collective '" + option + "': unknown synth parameter '" + key +
                       "' (expected chunks=K, seed=S, size=SIZE)");
    }
  }
}

}  // namespace

std::optional<GeneratedAlgorithm> parse_generated_algorithm(const std::string& option) {
  const auto eq = option.find('=');
  const std::string value = eq == std::string::npos ? option : option.substr(eq + 1);
  const bool gen = value.rfind(kGen, 0) == 0;
  const bool synth = value == kSynth || value.rfind(std::string(kSynth) + ":", 0) == 0;
  if (!gen && !synth) return std::nullopt;
  GeneratedAlgorithm g;
  if (eq == std::string::npos) {
    throw InputError("collective '" + option + "': a generated algorithm needs its collective type (allreduce=" +
                     option + ")");
  }
  g.type_text = option.substr(0, eq);
  if (!parse_collective_name(g.type_text, g.type)) {
    throw InputError("collective '" + option + "': unknown collective type '" + g.type_text + "'");
  }
  if (gen) {
    g.kind = GeneratedAlgorithm::Kind::kGen;
    g.algorithm = value.substr(kGen.size());
    if (g.algorithm.empty() || !find_native_algorithm(g.algorithm.substr(0, g.algorithm.find(':')))) {
      throw InputError("collective '" + option + "': gen: takes a native algorithm (" + native_algorithm_names() + ")");
    }
    try {
      parse_algorithm_choice(g.algorithm, g.type);  // parameters and the type it implements
    } catch (const InputError& e) {
      throw InputError("collective '" + option + "': " + e.what());
    }
    return g;
  }
  g.kind = GeneratedAlgorithm::Kind::kSynth;
  if (!synthesizer_supports(g.type)) {
    throw InputError("collective '" + option + "': the synthesizer writes allgather, reducescatter and allreduce, not " +
                     g.type_text);
  }
  if (value.size() > kSynth.size()) parse_synth_params(option, value.substr(kSynth.size() + 1), g);
  return g;
}

std::string generated_algorithm_id(const GeneratedAlgorithm& g, std::uint32_t npus, const std::string& network_digest) {
  // The sim version too: a rebuilt generator may write other files, and a
  // folder from an older binary must not be reused.
  std::string what = std::string("sim ").append(sim_version()).append("\n").append(collective_name(g.type)).append("\n");
  if (g.kind == GeneratedAlgorithm::Kind::kGen) {
    what += "gen " + g.algorithm + " npus=" + std::to_string(npus);
  } else {
    what += "synth chunks=" + std::to_string(g.chunks) + " seed=" + std::to_string(g.seed) + " size=" + g.size_text +
            " network=" + network_digest;
  }
  return sha256_hex(what).substr(0, 24);
}

std::string write_generated_algorithm(const GeneratedAlgorithm& g, std::uint32_t npus, const Topology& topology,
                                      const std::string& network_digest, const std::string& folder) {
  const std::string id = generated_algorithm_id(g, npus, network_digest);
  const fs::path done = fs::path(folder) / id;
  const std::string name = g.type_text;
  if (fs::is_directory(done)) return (done / name).string();

  // Written whole in a private folder, then renamed: a kill never leaves a
  // half-written algorithm, and concurrent writers (shards on a shared file
  // system) agree on the content anyway.
  const fs::path tmp = fs::path(folder) / (id + ".tmp." + std::to_string(::getpid()) + "." +
                                           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  fs::remove_all(tmp);
  const std::string prefix = (tmp / name).string();
  if (g.kind == GeneratedAlgorithm::Kind::kGen) {
    GenOptions o;
    o.algorithm = g.algorithm;
    o.collective = g.type_text;
    o.npus = npus;
    o.prefix = prefix;
    std::ostringstream sink;
    generate_algorithm(o, sink);
  } else {
    SynthOptions o;
    o.type = g.type;
    o.bytes = parse_size(g.size_text);
    o.chunks = g.chunks;
    o.seed = g.seed;
    const Synthesis s = synthesize(topology, o);
    write_program_ets(*s.program, o.type, o.bytes, o.chunks, prefix);
  }
  std::error_code ec;
  fs::rename(tmp, done, ec);
  if (ec) {
    fs::remove_all(tmp);
    if (!fs::is_directory(done)) throw InputError("cannot write " + done.string() + ": " + ec.message());
  }
  return (done / name).string();
}

}  // namespace sim::workflows
