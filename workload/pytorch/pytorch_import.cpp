#include "workload/pytorch/pytorch_import.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "core/error.h"
#include "core/rank_ranges.h"
#include "workload/et/rank_set_writer.h"
#include "workload/pytorch/comm_ops.h"
#include "workload/pytorch/host_trace.h"
#include "workload/pytorch/json_element_stream.h"
#include "workload/pytorch/kineto_trace.h"
#include "workload/pytorch/process_group_sources.h"
#include "workload/pytorch/trace_linker.h"
#include "workload/pytorch/trace_rank.h"

namespace sim::pytorch {

namespace fs = std::filesystem;

namespace {

enum class Kind { kHost, kKineto, kOther };

// What a file is, from its first bytes; for neither kind, `why` says so.
Kind sniff(const std::string& path, std::string* why = nullptr) {
  std::string head;
  try {
    head = peek_json_text(path, 4096);
  } catch (const InputError& e) {
    if (why) {
      *why = e.what();
      if (why->rfind(path + ": ", 0) == 0) why->erase(0, path.size() + 2);  // the list names the file
    }
    return Kind::kOther;
  }
  if (head.find("\"traceEvents\"") != std::string::npos || head.find("\"schemaVersion\"") != std::string::npos ||
      head.find("\"deviceProperties\"") != std::string::npos) {
    return Kind::kKineto;
  }
  if (head.find("\"schema\"") != std::string::npos || head.find("\"nodes\"") != std::string::npos) return Kind::kHost;
  if (why) {
    *why = head.find_first_not_of(" \t\r\n") == std::string::npos ? "empty"
                                                                   : "neither a host execution trace nor a Kineto trace";
  }
  return Kind::kOther;
}

bool json_name(const std::string& name) {
  auto ends = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  return ends(".json") || ends(".json.gz");
}

// The trace files of `kind` that `specs` name. A folder's .json / .json.gz
// files of neither kind are passed over; `skipped` gets each with why, for
// an error that finds a rank's file missing (it may be one of them).
std::vector<std::string> files_of(const std::vector<std::string>& specs, Kind kind, const char* option,
                                  std::vector<std::string>& skipped) {
  std::vector<std::string> out;
  for (const std::string& spec : specs) {
    std::error_code ec;
    if (fs::is_directory(spec, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(spec, ec)) {
        if (!e.is_regular_file() || !json_name(e.path().filename().string())) continue;
        std::string why;
        const Kind is = sniff(e.path().string(), &why);
        if (is == kind) found.push_back(e.path().string());
        if (is == Kind::kOther) skipped.push_back(e.path().string() + " (" + why + ")");
      }
      std::sort(skipped.begin(), skipped.end());  // each scan of a folder finds its files again
      skipped.erase(std::unique(skipped.begin(), skipped.end()), skipped.end());
      if (found.empty()) {
        throw InputError(std::string(option) + " " + spec + ": the folder holds no " +
                         (kind == Kind::kHost ? "PyTorch host execution traces" : "Kineto device traces") +
                         " (.json or .json.gz)");
      }
      std::sort(found.begin(), found.end());  // directory order is arbitrary: messages name files in name order
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(spec, ec)) {
      out.push_back(spec);
    } else {
      const fs::path p(spec);
      const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
      const std::string stem = p.filename().string();
      std::vector<std::string> found;
      if (fs::is_directory(dir, ec)) {
        for (const auto& e : fs::directory_iterator(dir, ec)) {
          const std::string name = e.path().filename().string();
          if (e.is_regular_file() && name.rfind(stem, 0) == 0 && json_name(name)) found.push_back(e.path().string());
        }
      }
      if (found.empty()) throw InputError(std::string(option) + " " + spec + ": no such file, folder or prefix of .json / .json.gz files");
      std::sort(found.begin(), found.end());  // directory order is arbitrary: messages name files in name order
      out.insert(out.end(), found.begin(), found.end());
    }
  }
  return out;
}

// Every rank a process group lists must be one of the imported ranks:
// otherwise the import would succeed and every run of it fail. Importing some
// of a job's ranks is refused here, naming the group and the ranks missing.
void check_group_members(const RankGroups& groups, const std::string& file, int rank,
                         std::size_t world, std::int64_t job_world) {
  for (const PgDef& g : groups.groups) {
    std::vector<std::int64_t> missing;
    std::set<std::int64_t> seen;
    for (std::int64_t r : g.ranks) {
      if (!seen.insert(r).second) {
        throw InputError(file + ": rank " + std::to_string(rank) + ": process group '" + g.name + "' (" + groups.source +
                         ") lists rank " + std::to_string(r) + " twice");
      }
      if (r < 0 || static_cast<std::size_t>(r) >= world) missing.push_back(r);
    }
    if (missing.empty()) continue;
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + std::to_string(missing[i]);
    std::string why;
    const bool outside = job_world >= 0 && std::any_of(missing.begin(), missing.end(), [&](std::int64_t r) { return r >= job_world; });
    if (outside) {
      why = ": the trace's job had " + std::to_string(job_world) + " ranks (distributedInfo.world_size), so the group names ranks outside it";
    } else {
      why = ": traces were given for " + std::to_string(world) + (world == 1 ? " rank (0)" : " ranks (0.." + std::to_string(world - 1) + ")") +
            "; give every rank's traces (a run needs each member of each group)";
    }
    throw InputError(file + ": rank " + std::to_string(rank) + ": process group '" + g.name + "'" +
                     (g.desc.empty() ? "" : " (" + g.desc + ")") + " lists rank" + (missing.size() == 1 ? " " : "s ") + list +
                     ", whose traces are missing" + why);
  }
}


// Every definition of a group name, in every rank's trace, must give the
// same ranks (in order: a group's rank i is its i-th member), as a run of
// the import requires: otherwise the import succeeded and every run of it
// failed. "ranks: []" is every rank.
struct GroupDefinitions {
  struct Seen {
    std::vector<std::int64_t> ranks;
    std::string where;
  };
  std::map<std::string, Seen> by_name;

  void add(const RankGroups& groups, const std::string& file, int rank, std::size_t world) {
    for (const PgDef& g : groups.groups) {
      std::vector<std::int64_t> ranks = g.ranks;
      if (ranks.empty()) {
        for (std::size_t r = 0; r < world; ++r) ranks.push_back(static_cast<std::int64_t>(r));
      }
      const std::string where = file + ": rank " + std::to_string(rank) + " (" + groups.source + ")";
      const auto [it, fresh] = by_name.emplace(g.name, Seen{ranks, where});
      if (!fresh && it->second.ranks != ranks) {
        throw InputError("process group '" + g.name + "' is defined twice with different ranks: " + it->second.where +
                         " gives " + rank_sequence(it->second.ranks) + ", " + where + " gives " +
                         rank_sequence(ranks) + "; the traces of one job agree on each group's ranks");
      }
    }
  }
};

struct CommSig {
  std::string pg;
  std::string what;  // "ALL_REDUCE 4194304 B"
};

}  // namespace

std::vector<RankFiles> resolve_pytorch_files(const std::vector<std::string>& host_specs,
                                             const std::vector<std::string>& kineto_specs) {
  if (host_specs.empty()) throw InputError("--host-et is required");
  std::map<int, std::string> kineto;
  std::vector<std::string> skipped;
  // A rank's file missing may be one the folder holds but that is no trace: say which were passed over.
  auto with_skipped = [&skipped](const auto& ranks_of) {
    try {
      return ranks_of();
    } catch (const InputError& e) {
      if (skipped.empty()) throw;
      std::string list;
      for (std::size_t i = 0; i < skipped.size() && i < 5; ++i) list += (i ? ", " : "") + skipped[i];
      if (skipped.size() > 5) list += ", ... (" + std::to_string(skipped.size()) + " files)";
      throw InputError(std::string(e.what()) + "; passed over as no trace: " + list);
    }
  };
  if (!kineto_specs.empty()) {
    const std::vector<std::string> files = files_of(kineto_specs, Kind::kKineto, "--kineto", skipped);
    kineto = with_skipped([&] { return ranks_of_files(files, true, "--kineto"); });
  }
  // A host trace whose name states no rank takes its process's device trace's.
  const std::vector<std::string> host_files = files_of(host_specs, Kind::kHost, "--host-et", skipped);
  std::map<std::int64_t, int> rank_of_pid;
  const bool unnamed = std::any_of(host_files.begin(), host_files.end(), [](const std::string& f) { return rank_in_name(f) < 0; });
  if (unnamed && host_files.size() > 1) {
    std::set<std::int64_t> shared;  // processes of several hosts may have one pid: such a pid says nothing
    for (const auto& [r, f] : kineto) {
      const std::int64_t pid = trace_pid(f, true);
      if (pid >= 0 && !rank_of_pid.emplace(pid, r).second) shared.insert(pid);
    }
    for (std::int64_t pid : shared) rank_of_pid.erase(pid);
  }
  const auto host = with_skipped([&] { return ranks_of_files(host_files, false, "--host-et", rank_of_pid); });
  if (!kineto.empty() && kineto.size() != host.size()) {
    throw InputError("--kineto gives " + std::to_string(kineto.size()) + " device traces for " + std::to_string(host.size()) +
                     " host traces: give one per rank, or none");
  }
  std::vector<RankFiles> out;
  for (const auto& [r, f] : host) {
    RankFiles rf;
    rf.rank = r;
    rf.host = f;
    if (!kineto.empty()) rf.kineto = kineto.at(r);
    out.push_back(std::move(rf));
  }
  return out;
}

void import_pytorch(const std::vector<RankFiles>& files, const std::function<void(int, EtTrace&&)>& on_rank,
                    ImportSummary& summary) {
  std::vector<std::vector<CommSig>> sigs(files.size());
  std::vector<std::vector<std::int64_t>> group_ranks_seen;
  std::map<std::string, std::vector<std::int64_t>> group_members;
  std::size_t zero_duration = 0, unknown_schema_ranks = 0;
  std::string unknown_schema;
  GroupInference inferred;
  Unlinked host_unlinked, device_unlinked, gpu_unlinked, unsupported;
  std::int64_t world_in_trace = -1, all_ranks_group_size = -1;
  std::string world_source;  // the device trace world_in_trace comes from
  GroupDefinitions definitions;
  for (const RankFiles& rf : files) {
    const int rank = rf.rank;
    // The two files are parsed at once (JSON parsing is most of an import's time).
    const bool has_kineto = !rf.kineto.empty();
    std::future<KinetoTrace> kineto_read;
    if (has_kineto) kineto_read = std::async(std::launch::async, [&rf, rank] { return read_kineto_trace(rf.kineto, rank); });
    HostTrace host = read_host_trace(rf.host, rank);
    if (!host.known_schema) {
      ++unknown_schema_ranks;
      unknown_schema = host.schema;
    }
    KinetoTrace kineto;
    if (has_kineto) {
      kineto = kineto_read.get();
      const bool pid_mismatch = host.pid >= 0 && kineto.pid >= 0 && host.pid != kineto.pid;
      const bool rank_mismatch = kineto.rank >= 0 && kineto.rank != rank;
      if (pid_mismatch || rank_mismatch) {
        throw InputError("rank " + std::to_string(rank) + ": host trace " + rf.host + " (pid " + std::to_string(host.pid) +
                         ") and device trace " + rf.kineto + " (pid " + std::to_string(kineto.pid) +
                         (kineto.rank >= 0 ? ", distributedInfo.rank " + std::to_string(kineto.rank) : std::string()) +
                         ") do not belong together: " +
                         (pid_mismatch ? "their pids differ" : "the device trace is of another rank"));
      }
      if (kineto.world_size >= 0) {
        // The ranks of one job record one world size: else which file was last decided it.
        if (world_in_trace >= 0 && kineto.world_size != world_in_trace) {
          throw InputError(rf.kineto + ": rank " + std::to_string(rank) + ": distributedInfo.world_size is " +
                           std::to_string(kineto.world_size) + " but " + world_source + " records " +
                           std::to_string(world_in_trace) + ": the device traces are not of one job");
        }
        world_in_trace = kineto.world_size;
        world_source = rf.kineto;
      }
    }
    const KinetoTrace* k = has_kineto ? &kineto : nullptr;
    TraceLinks links = link_traces(host, k, rank);
    CommExtraction comm = extract_comm_ops(host, links, rank);
    RankGroups groups = rank_groups(host, k, rank);
    const std::string& groups_file = has_kineto && !kineto.pg_config.is_null() ? rf.kineto : rf.host;
    check_group_members(groups, groups_file, rank, files.size(), has_kineto ? kineto.world_size : -1);
    definitions.add(groups, groups_file, rank, files.size());
    assign_groups(comm.ops, groups, host, links, k, rank, inferred);
    BuildStats stats;
    EtTrace et = build_rank_graph(host, k, links, comm, groups, rank, stats);
    zero_duration += stats.cpu_without_duration;
    auto merge = [](Unlinked& into, const Unlinked& from) {
      into.count += from.count;
      for (const std::string& n : from.first_names) {
        if (into.first_names.size() < 5) into.first_names.push_back(n);
      }
    };
    if (has_kineto) {
      merge(host_unlinked, links.host_without_device);
      merge(device_unlinked, links.device_without_host);
      merge(gpu_unlinked, links.gpu_without_host);
    }
    merge(unsupported, comm.unsupported);
    for (const CommOp& c : comm.ops) {
      sigs[static_cast<std::size_t>(rank)].push_back(CommSig{c.pg_name, describe_comm(c) + " " + std::to_string(c.bytes) + " B"});
    }
    for (const PgDef& g : groups.groups) {
      if (!g.ranks.empty()) group_members[g.name] = g.ranks;
      if (g.ranks.empty() && g.size > 0) all_ranks_group_size = std::max(all_ranks_group_size, g.size);
    }
    summary.lines.push_back("rank " + std::to_string(rank) + ": " + std::to_string(stats.cpu_nodes) + " CPU, " +
                            std::to_string(stats.gpu_nodes) + " GPU, " + std::to_string(stats.comm_nodes) +
                            " communication nodes, " + std::to_string(stats.sync_points) + " sync points; " +
                            std::to_string(groups.groups.size()) + " process groups" +
                            (groups.source.empty() ? "" : " (" + groups.source + ")"));
    summary.stats.push_back(stats);
    on_rank(rank, std::move(et));
  }
  const std::size_t world = files.size();
  if (unknown_schema_ranks) {
    summary.warnings.push_back(std::to_string(unknown_schema_ranks) + " host trace(s) have schema '" + unknown_schema +
                               "', not one this importer knows (" + kOldestSchema + " .. " + kNewestSchema +
                               "); every field it uses is present, so they were read as " + kNewestSchema);
  }
  if (all_ranks_group_size > 0 && static_cast<std::size_t>(all_ranks_group_size) != world && world_in_trace < 0) {
    world_in_trace = all_ranks_group_size;  // the host trace's process_group:init says how many ranks the job had
  }
  if (world_in_trace >= 0 && static_cast<std::size_t>(world_in_trace) != world) {
    summary.warnings.push_back("the traces say the job had " + std::to_string(world_in_trace) + " ranks but " +
                               std::to_string(world) + " were given: groups of all ranks run on those given");
  }
  if (files.empty() || files.front().kineto.empty()) {
    summary.warnings.push_back("no Kineto trace: " + std::to_string(zero_duration) +
                               " CPU operators have no duration in the host trace and are replayed as 0 us; GPU kernels are absent");
  } else if (zero_duration) {
    summary.warnings.push_back(std::to_string(zero_duration) + " CPU operators have no duration (not in the Kineto trace): replayed as 0 us");
  }
  if (host_unlinked.count) summary.warnings.push_back(host_unlinked.describe("host operators not found in the Kineto traces (replayed as 0 us)"));
  if (device_unlinked.count) summary.warnings.push_back(device_unlinked.describe("Kineto operators with no host operator (not replayed)"));
  if (gpu_unlinked.count) summary.warnings.push_back(gpu_unlinked.describe("GPU activities with no launching host operator (kept, placed by their launch time)"));
  if (unsupported.count) summary.warnings.push_back(unsupported.describe("c10d operators the importer does not know (replayed as CPU time, no communication)"));
  if (inferred.by_thread) {
    summary.warnings.push_back(std::to_string(inferred.by_thread) +
                               " collectives name no process group (gloo): their groups were taken from the gloo worker thread that ran them");
  }
  if (inferred.by_default) {
    summary.warnings.push_back(std::to_string(inferred.by_default) +
                               " collectives name no process group and could not be placed: assigned to the default group");
  }
  // Every group's collectives must agree across its members.
  std::set<std::string> names;
  for (const auto& s : sigs) {
    for (const CommSig& c : s) names.insert(c.pg);
  }
  for (const std::string& name : names) {
    std::vector<std::int64_t> members;
    if (auto it = group_members.find(name); it != group_members.end()) members = it->second;
    else for (std::size_t r = 0; r < world; ++r) members.push_back(static_cast<std::int64_t>(r));
    std::vector<std::string> first;
    std::int64_t first_rank = -1;
    for (std::int64_t r : members) {
      if (r < 0 || static_cast<std::size_t>(r) >= world) continue;
      std::vector<std::string> mine;
      for (const CommSig& c : sigs[static_cast<std::size_t>(r)]) {
        if (c.pg == name) mine.push_back(c.what);
      }
      if (first_rank < 0) {
        first = mine;
        first_rank = r;
        continue;
      }
      if (mine != first) {
        std::size_t i = 0;
        while (i < mine.size() && i < first.size() && mine[i] == first[i]) ++i;
        summary.warnings.push_back("process group '" + name + "': rank " + std::to_string(r) + " issues " +
                                   std::to_string(mine.size()) + " collectives, rank " + std::to_string(first_rank) + " " +
                                   std::to_string(first.size()) + "; they differ at number " + std::to_string(i + 1) +
                                   (i < mine.size() && i < first.size() ? " (" + mine[i] + " vs " + first[i] + ")" : "") +
                                   ": the simulation may not complete");
        break;
      }
    }
  }
}

ImportSummary import_pytorch_to_files(const std::vector<RankFiles>& files, const std::string& prefix) {
  ImportSummary summary;
  RankSetWriter writer(prefix, static_cast<std::uint32_t>(files.size()));
  import_pytorch(
      files, [&](int rank, EtTrace&& et) { writer.write(static_cast<std::uint32_t>(rank), et); }, summary);
  writer.commit();
  summary.removed_note = writer.removed_note();
  return summary;
}

}  // namespace sim::pytorch
