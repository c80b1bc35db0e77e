#include "workflows/nccl_tests_parser.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace sim::workflows {

namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// The collective named in a file name such as "all_gather_perf.txt".
std::string collective_from_name(const std::string& source) {
  std::string stem = std::filesystem::path(source).filename().string();
  std::transform(stem.begin(), stem.end(), stem.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* name : {"reduce_scatter", "reducescatter", "all_reduce", "allreduce", "all_gather", "allgather",
                           "alltoall", "all_to_all", "broadcast", "reduce", "gather", "scatter"}) {
    if (stem.find(name) != std::string::npos) return canonical_collective(name);
  }
  return "";
}

std::size_t column(const std::vector<std::string>& header, const std::string& name, std::size_t from = 0) {
  for (std::size_t k = from; k < header.size(); ++k) {
    if (header[k] == name) return k;
  }
  return header.size();
}

}  // namespace

bool looks_like_nccl_tests(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto t = tokens(line);
    if (t.size() > 4 && t[0] == "#" && t[1] == "size" && t[2] == "count") return true;
  }
  return false;
}

NcclTestsOutput parse_nccl_tests(const std::string& text, const std::string& source, const std::string& collective) {
  NcclTestsOutput out;
  out.curve.source = source;
  out.curve.format = "nccl-tests";
  const std::string coll = collective.empty() ? collective_from_name(source) : canonical_collective(collective);
  if (coll.empty()) {
    throw InputError(source + ": nccl-tests output does not name its collective: give --reference-collective "
                     "(allreduce, allgather, ...) or name the file after its test (all_gather_perf.txt)");
  }
  std::vector<std::string> header;  // column names, without the leading '#'
  std::istringstream in(text);
  std::size_t line_no = 0;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> rows;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    auto t = tokens(line);
    if (t.empty()) continue;
    if (t[0] == "#" || t[0][0] == '#') {
      if (t[0] != "#") t[0].erase(0, 1), t.insert(t.begin(), "#");
      if (t.size() > 2 && t[1] == "Rank" && is_number(t[2])) ++out.ranks;
      if (t.size() > 4 && t[1] == "size" && t[2] == "count") header.assign(t.begin() + 1, t.end());
      if (t.size() >= 6 && t[1] == "Avg" && t[2] == "bus" && t[3] == "bandwidth") out.avg_busbw_gbps = std::stod(t.back());
      continue;
    }
    if (!is_number(t[0])) continue;  // a log line between rows (NCCL INFO ...)
    if (header.empty()) throw InputError(source + ":" + std::to_string(line_no) + ": a data row before the column header");
    if (t.size() != header.size()) {
      throw InputError(source + ":" + std::to_string(line_no) + ": expected " + std::to_string(header.size()) +
                       " fields as the column header says, found " + std::to_string(t.size()));
    }
    rows.emplace_back(line_no, std::move(t));
  }
  if (header.empty()) throw InputError(source + ": no nccl-tests column header ('#  size  count  type ...')");
  const std::size_t time = column(header, "time"), busbw = column(header, "busbw");
  if (time == header.size() || busbw == header.size()) {
    throw InputError(source + ": the column header has no 'time' and 'busbw' columns");
  }
  for (const auto& [line, t] : rows) {
    CurvePoint p;
    p.collective = coll;
    p.where = source + ":" + std::to_string(line);
    if (!is_number(t[time]) || !is_number(t[busbw])) throw InputError(p.where + ": time or busbw is not a number");
    std::uint64_t size = std::stoull(t[0]);
    if (coll == "ALL_GATHER") {
      if (out.ranks == 0) throw InputError(source + ": all-gather sizes need the rank count, but no '# Rank' lines were printed");
      size /= out.ranks;
    }
    p.bytes = size;
    p.time_ns = std::stod(t[time]) * 1e3;  // us -> ns
    p.busbw_gbps = std::stod(t[busbw]);
    if (out.ranks) p.labels["npus"] = std::to_string(out.ranks);
    out.curve.points.push_back(std::move(p));
  }
  return out;
}

}  // namespace sim::workflows
