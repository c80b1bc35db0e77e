#include "workflows/compare/nccl_tests_parser.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace sim::workflows {

namespace {

// The next white-space separated word of `rest`, taken off its front ("" at the end).
std::string_view next_word(std::string_view& rest) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::size_t i = 0;
  while (i < rest.size() && space(rest[i])) ++i;
  std::size_t j = i;
  while (j < rest.size() && !space(rest[j])) ++j;
  const std::string_view word = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return word;
}

// The line's words, split at white space as `>>` does (by hand: a string
// stream per line costs more than the rest of the parse).
std::vector<std::string> tokens(std::string_view line) {
  std::vector<std::string> out;
  for (std::string_view w = next_word(line); !w.empty(); w = next_word(line)) out.emplace_back(w);
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

// A launcher's prefix on one line: `[1,0]<stdout>:` (mpirun --tag-output:
// job, rank, stream) or `0: ` (srun --label: the task, padded to the widest).
struct Prefix {
  enum Form { kNone, kMpirun, kSrun } form = kNone;
  std::size_t length = 0;  // characters to strip
  std::string rank;
};

Prefix prefix_of(std::string_view line) {
  const auto digits = [&](std::size_t i) {
    std::size_t j = i;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
    return j;
  };
  Prefix p;
  if (!line.empty() && line[0] == '[') {
    const std::size_t job_end = digits(1);
    if (job_end == 1 || job_end >= line.size() || line[job_end] != ',') return p;
    const std::size_t rank_end = digits(job_end + 1);
    if (rank_end == job_end + 1 || rank_end >= line.size() || line[rank_end] != ']') return p;
    for (std::string_view stream : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
      if (line.substr(rank_end + 1, stream.size()) == stream) {
        p.form = Prefix::kMpirun;
        p.length = rank_end + 1 + stream.size();
        p.rank = std::string(line.substr(job_end + 1, rank_end - job_end - 1));
      }
    }
    return p;
  }
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t end = digits(i);
  if (end == i || end >= line.size() || line[end] != ':') return p;
  if (end + 1 < line.size() && line[end + 1] != ' ') return p;
  p.form = Prefix::kSrun;
  p.length = std::min(end + 2, line.size());
  p.rank = std::string(line.substr(i, end - i));
  return p;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

// nccl-tests' column header, "#  size  count  type ...": asked of every line,
// so it reads words without copying them.
bool is_column_header(std::string_view line) {
  if (next_word(line) != "#" || next_word(line) != "size" || next_word(line) != "count") return false;
  return !next_word(line).empty() && !next_word(line).empty();
}

}  // namespace

std::string without_launcher_prefixes(const std::string& text) {
  const std::vector<std::string_view> lines = lines_of(text);
  std::vector<Prefix> prefixes(lines.size());
  Prefix::Form form = Prefix::kNone;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_blank(lines[i])) continue;
    prefixes[i] = prefix_of(lines[i]);
    if (prefixes[i].form == Prefix::kNone) return text;  // a line without: not a launcher's output
    if (form == Prefix::kNone) form = prefixes[i].form;
    if (prefixes[i].form != form) return text;  // two forms: not one launcher's output
  }
  if (form == Prefix::kNone) return text;
  // The rank that printed the table: other ranks' lines (NCCL INFO, or the
  // tables of processes that each ran a test of their own) are left out.
  std::string table_rank;
  for (std::size_t i = 0; i < lines.size() && table_rank.empty(); ++i) {
    if (prefixes[i].form != Prefix::kNone && is_column_header(lines[i].substr(prefixes[i].length))) {
      table_rank = prefixes[i].rank;
    }
  }
  // Line for line, so messages name the lines of the file.
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (prefixes[i].form != Prefix::kNone && (table_rank.empty() || prefixes[i].rank == table_rank)) {
      out.append(lines[i].substr(prefixes[i].length));
    }
    out += '\n';
  }
  return out;
}

bool looks_like_nccl_tests(const std::string& text) {
  std::istringstream in(without_launcher_prefixes(text));
  for (std::string line; std::getline(in, line);) {
    if (is_column_header(line)) return true;
  }
  return false;
}

NcclTestsOutput parse_nccl_tests(const std::string& raw, const std::string& source, const std::string& collective) {
  const std::string text = without_launcher_prefixes(raw);
  NcclTestsOutput out;
  out.curve.source = source;
  out.curve.format = "nccl-tests";
  if (!collective.empty() && canonical_collective(collective).empty()) {
    throw InputError("unknown collective '" + collective + "' for " + source +
                     ": expected allreduce, allgather, reducescatter, alltoall, broadcast, reduce, ...");
  }
  const std::string coll = collective.empty() ? collective_from_name(source) : canonical_collective(collective);
  if (coll.empty()) {
    throw InputError(source + ": nccl-tests output does not name its collective: name it (sim compare "
                     "--reference-collective, sim calibrate --collective: allreduce, allgather, ...) or name the "
                     "file after its test (all_gather_perf.txt)");
  }
  std::vector<std::string> header;  // column names, without the leading '#'
  std::istringstream in(text);
  std::size_t line_no = 0;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> rows;
  std::map<std::uint64_t, std::size_t> rank_lines;  // rank -> the line listing it
  std::map<std::string, std::uint32_t> hosts;        // "... Pid 41872 on node-017 device 0 ..." -> its ranks
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    auto t = tokens(line);
    if (t.empty()) continue;
    if (t[0] == "#" || t[0][0] == '#') {
      if (t[0] != "#") t[0].erase(0, 1), t.insert(t.begin(), "#");
      if (t.size() > 2 && t[1] == "Rank" && is_number(t[2])) {
        // Each rank once, from 0 up: a log listing a rank twice (two runs in
        // one file, or processes each running a test of their own) or
        // skipping one has no one rank count.
        const std::string at = source + ":" + std::to_string(line_no);
        const std::optional<std::uint64_t> rank = parse_byte_count(t[2]);
        if (!rank) throw InputError(at + ": '# Rank " + t[2] + "': expected a rank number (0, 1, 2, ...)");
        const auto on = std::find(t.begin() + 3, t.end(), "on");
        if (on != t.end() && std::next(on) != t.end()) ++hosts[*std::next(on)];
        const auto [first, added] = rank_lines.emplace(*rank, line_no);
        if (!added) {
          throw InputError(at + ": rank " + t[2] + " is listed again (first at line " + std::to_string(first->second) +
                           "): each rank has one '# Rank' line (one nccl-tests run per file)");
        }
      }
      if (t.size() > 4 && t[1] == "size" && t[2] == "count") {
        // Rows are checked against the header before them: a later, different
        // header (two runs' logs in one file) would leave them short of its columns.
        const std::vector<std::string> again(t.begin() + 1, t.end());
        if (!header.empty() && again != header) {
          throw InputError(source + ":" + std::to_string(line_no) + ": a second column header with other columns "
                           "than the first (one nccl-tests run per file)");
        }
        header = again;
      }
      // "# Out of bounds values : 2048 FAILED": nccl-tests' check (-c 1) found wrong results.
      if (t.size() >= 5 && t[1] == "Out" && t[2] == "of" && t[3] == "bounds" && t.back() == "FAILED") {
        throw InputError(source + ":" + std::to_string(line_no) + ": nccl-tests' check FAILED (" +
                         line.substr(line.find("Out")) + "): a run with wrong results is no measurement");
      }
      if (t.size() >= 6 && t[1] == "Avg" && t[2] == "bus" && t[3] == "bandwidth") {
        const std::optional<double> v = parse_finite(t.back());
        if (!v || *v < 0) {
          throw InputError(source + ":" + std::to_string(line_no) + ": the 'Avg bus bandwidth' summary '" + t.back() +
                           "' is not a bandwidth (a finite number, 0 or more)");
        }
        out.avg_busbw_gbps = *v;
      }
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
  std::uint64_t expected_rank = 0;
  for (const auto& [rank, line] : rank_lines) {
    if (rank != expected_rank) {
      throw InputError(source + ":" + std::to_string(line) + ": rank " + std::to_string(rank) + " is listed but rank " +
                       std::to_string(expected_rank) + " is not: the '# Rank' lines list every rank from 0 up, once");
    }
    ++expected_rank;
  }
  out.ranks = static_cast<std::uint32_t>(rank_lines.size());
  out.hosts = static_cast<std::uint32_t>(hosts.size());
  for (const auto& [host, n] : hosts) out.most_on_a_host = std::max(out.most_on_a_host, n);
  if (header.empty()) throw InputError(source + ": no nccl-tests column header ('#  size  count  type ...')");
  const std::size_t time = column(header, "time"), algbw = column(header, "algbw"), busbw = column(header, "busbw");
  const std::size_t wrong = column(header, "#wrong");  // the out-of-place check's count ("N/A" without -c)
  if (time == header.size() || busbw == header.size()) {
    throw InputError(source + ": the column header has no 'time' and 'busbw' columns");
  }
  // "file:12: column 6 (time)": fields are counted as the column header names them.
  const auto at = [&](const std::string& where, std::size_t k) {
    return where + ": column " + std::to_string(k + 1) + " (" + header[k] + ")";
  };
  for (const auto& [line, t] : rows) {
    CurvePoint p;
    p.collective = coll;
    p.where = source + ":" + std::to_string(line);
    const std::optional<std::uint64_t> size = parse_byte_count(t[0]);
    if (!size) throw InputError(at(p.where, 0) + ": '" + t[0] + "' is not a byte count (digits, below 2^64)");
    if (*size == 0) {
      throw InputError(at(p.where, 0) + ": size 0 B: a collective that moves nothing has no time or bandwidth to "
                                        "fit or compare (delete the row, or run nccl-tests with -b above 0)");
    }
    const std::optional<double> us = parse_finite(t[time]);
    if (!us || !(*us > 0) || !(*us * 1e3 <= kMaxCurveTimeNs)) {
      throw InputError(at(p.where, time) + ": '" + t[time] + "' is not a time in us (a finite number above 0, at most 1e13)");
    }
    for (const std::size_t k : {algbw, busbw}) {
      if (k == header.size()) continue;
      const std::optional<double> bw = parse_finite(t[k]);
      if (!bw || !(*bw >= 0)) {
        throw InputError(at(p.where, k) + ": '" + t[k] + "' is not a bandwidth in GB/s (a finite number, 0 or more)");
      }
    }
    if (wrong < header.size() && is_number(t[wrong])) {
      const std::optional<double> n = parse_finite(t[wrong]);
      if (!n || *n != 0) {
        throw InputError(at(p.where, wrong) + ": " + t[wrong] +
                         " wrong values: nccl-tests' check failed on this row, which is no measurement");
      }
    }
    const MeasuredRow measured{coll, *size, t[time], *us * 1e3, out.ranks};
    if (algbw < header.size()) check_given_bandwidth(measured, BandwidthKind::kAlgbw, at(p.where, algbw), t[algbw]);
    check_given_bandwidth(measured, BandwidthKind::kBusbw, at(p.where, busbw), t[busbw]);
    std::uint64_t bytes = *size;
    if (coll == "ALL_GATHER") {
      if (out.ranks == 0) throw InputError(source + ": all-gather sizes need the rank count, but no '# Rank' lines were printed");
      if (bytes % out.ranks != 0) {
        throw InputError(at(p.where, 0) + ": all-gather size " + t[0] + " B is not a multiple of the " +
                         std::to_string(out.ranks) + " ranks the '# Rank' lines list");
      }
      bytes /= out.ranks;
    }
    p.bytes = bytes;
    p.time_ns = *us * 1e3;  // us -> ns
    p.busbw_gbps = parse_finite(t[busbw]);
    if (out.ranks) p.labels["npus"] = std::to_string(out.ranks);
    p.hosts = out.hosts;
    p.most_on_a_host = out.most_on_a_host;
    out.curve.points.push_back(std::move(p));
  }
  return out;
}

}  // namespace sim::workflows
