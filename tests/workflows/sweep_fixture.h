// Helpers for the sweep tests: a private temporary folder, file I/O, and the
// rows of a results.csv.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/run_sim.h"
#include "workflows/compare/curve_table.h"

namespace sim::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// results.csv as maps column -> value, one per row.
inline std::vector<std::map<std::string, std::string>> csv_rows(const std::string& path) {
  const auto rows = sim::workflows::parse_csv(slurp(path), path);
  std::vector<std::map<std::string, std::string>> out;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> m;
    for (std::size_t k = 0; k < rows[0].fields.size() && k < rows[r].fields.size(); ++k) {
      m[rows[0].fields[k]] = rows[r].fields[k];
    }
    out.push_back(std::move(m));
  }
  return out;
}

inline nlohmann::json summary_of(const std::string& out_dir) {
  return nlohmann::json::parse(slurp(out_dir + "/results.json")).at("summary");
}

// An 8-NPU topology of a named shape; `bandwidth_key` lets a test misspell the key.
inline std::string shape8(const std::string& shape, const std::string& bandwidth = "50GB/s",
                          const std::string& bandwidth_key = "bandwidth") {
  return "shape: " + shape + "\nnpus: 8\n" + bandwidth_key + ": " + bandwidth + "\nlatency: 500ns\n";
}

inline std::string source_path(const std::string& relative) { return std::string(SIM_SOURCE_DIR) + "/" + relative; }

}  // namespace sim::testing
