#include "system/groups/job_placement.h"

#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace sim {

namespace {

// "name=value" with a name free of '/' and '?' (a path may hold '=' only after a '/',
// a generated workload, gen:transformer?model=..., only after its '?').
bool split_named(const std::string& text, std::string& name, std::string& value) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || text.substr(0, eq).find_first_of("/?") != std::string::npos) return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

std::uint8_t service_level(const std::string& arg, const std::string& value) {
  std::size_t used = 0;
  unsigned long n = 16;
  try {
    if (!value.empty() && value[0] != '-' && value[0] != '+') n = std::stoul(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || n > 15) {
    throw InputError("--service-level " + arg + ": expected a service level from 0 to 15, got '" + value + "'");
  }
  return static_cast<std::uint8_t>(n);
}

}  // namespace

void apply_service_levels(std::vector<JobInput>& jobs, const std::vector<std::string>& levels) {
  std::string name, value;
  if (jobs.size() == 1 && jobs[0].name.empty()) {
    if (levels.size() > 1) {
      throw InputError("--service-level given " + std::to_string(levels.size()) + " times for one workload");
    }
    if (levels.empty()) return;
    if (split_named(levels[0], name, value)) {
      throw InputError("--service-level " + levels[0] + ": a job name is only for --workload NAME=PATH");
    }
    jobs[0].service_level = service_level(levels[0], levels[0]);
    return;
  }
  std::map<std::string, bool> given;
  for (const std::string& l : levels) {
    if (!split_named(l, name, value)) {
      throw InputError("--service-level " + l + ": with several workloads each is NAME=LEVEL");
    }
    if (given[name]) throw InputError("--service-level: job '" + name + "' given twice");
    given[name] = true;
    bool found = false;
    for (JobInput& j : jobs) {
      if (j.name != name) continue;
      j.service_level = service_level(l, value);
      found = true;
    }
    if (!found) throw InputError("--service-level " + l + ": no --workload is named '" + name + "'");
  }
}

std::vector<JobInput> parse_job_args(const std::vector<std::string>& workloads,
                                     const std::vector<std::string>& comm_groups) {
  std::vector<JobInput> jobs;
  std::string name, value;
  if (workloads.size() == 1 && !split_named(workloads[0], name, value)) {
    jobs.push_back(JobInput{"", workloads[0], ""});
    if (comm_groups.size() > 1) throw InputError("--comm-group given " + std::to_string(comm_groups.size()) +
                                                 " times for one workload");
    if (!comm_groups.empty()) {
      if (split_named(comm_groups[0], name, value)) {
        throw InputError("--comm-group " + comm_groups[0] + ": a job name is only for --workload NAME=PATH");
      }
      jobs[0].comm_group_file = comm_groups[0];
    }
    return jobs;
  }
  for (const std::string& w : workloads) {
    if (!split_named(w, name, value) || value.empty()) {
      throw InputError("--workload " + w + ": with several workloads each is NAME=PATH");
    }
    for (const JobInput& j : jobs) {
      if (j.name == name) throw InputError("--workload: job name '" + name + "' given twice");
    }
    jobs.push_back(JobInput{name, value, ""});
  }
  for (const std::string& c : comm_groups) {
    if (!split_named(c, name, value) || value.empty()) {
      throw InputError("--comm-group " + c + ": with several workloads each is NAME=FILE");
    }
    bool found = false;
    for (JobInput& j : jobs) {
      if (j.name != name) continue;
      if (!j.comm_group_file.empty()) throw InputError("--comm-group: job '" + name + "' given twice");
      j.comm_group_file = value;
      found = true;
    }
    if (!found) throw InputError("--comm-group " + c + ": no --workload is named '" + name + "'");
  }
  return jobs;
}

std::vector<std::uint32_t> load_placement(const std::string& path, const std::vector<JobSpec>& jobs,
                                          std::uint32_t npu_count) {
  const nlohmann::json j = read_json_object(path, "placement file", "{\"<job>-<rank>\": <npu>, ...}");
  std::map<std::string, std::uint32_t> first;  // job name -> its first rank
  std::uint32_t total = 0;
  for (const JobSpec& job : jobs) {
    first[job.name] = total;
    total += job.ranks;
  }
  std::vector<std::int64_t> npu(total, -1);
  std::vector<std::string> used(npu_count);
  for (const auto& [key, value] : j.items()) {
    const std::size_t dash = key.rfind('-');
    const std::string job = dash == std::string::npos ? "" : key.substr(0, dash);
    const auto it = first.find(job);
    if (it == first.end()) throw InputError(path + ": key '" + key + "': no job named '" + job + "'");
    const std::string rank_text = key.substr(dash + 1);
    std::uint32_t rank = 0;
    std::size_t used_chars = 0;
    // Digits only, one spelling per rank: "a-01" or "a- 1" would read as a-1.
    const bool plain = !rank_text.empty() && rank_text.size() < 10 &&
                       rank_text.find_first_not_of("0123456789") == std::string::npos &&
                       (rank_text.size() == 1 || rank_text[0] != '0');
    try {
      if (plain) rank = static_cast<std::uint32_t>(std::stoul(rank_text, &used_chars));
    } catch (const std::exception&) {
      used_chars = 0;
    }
    std::uint32_t job_ranks = 0;
    for (const JobSpec& s : jobs) {
      if (s.name == job) job_ranks = s.ranks;
    }
    if (!plain) {
      throw InputError(path + ": key '" + key + "': the rank is written in plain digits, e.g. '" + job +
                       "-1' (job '" + job + "' has ranks 0.." + std::to_string(job_ranks - 1) + ")");
    }
    if (used_chars == 0 || used_chars != rank_text.size() || rank >= job_ranks) {
      throw InputError(path + ": key '" + key + "': job '" + job + "' has ranks 0.." + std::to_string(job_ranks - 1));
    }
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() >= npu_count) {
      throw InputError(path + ": key '" + key + "': expected an NPU id 0.." + std::to_string(npu_count - 1) + ", got " +
                       value.dump());
    }
    const auto n = value.get<std::uint32_t>();
    if (!used[n].empty()) throw InputError(path + ": keys '" + used[n] + "' and '" + key + "' both use NPU " + std::to_string(n));
    used[n] = key;
    npu[it->second + rank] = n;
  }
  std::uint32_t g = 0;
  for (const JobSpec& job : jobs) {
    for (std::uint32_t r = 0; r < job.ranks; ++r, ++g) {
      if (npu[g] < 0) throw InputError(path + ": no NPU for '" + job.name + "-" + std::to_string(r) + "'");
    }
  }
  return std::vector<std::uint32_t>(npu.begin(), npu.end());
}

}  // namespace sim
