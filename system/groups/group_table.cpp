#include "system/groups/group_table.h"

#include <algorithm>

#include "core/error.h"

namespace sim {

namespace {

std::string where_node(const RankGraph& g, std::uint32_t index) {
  return g.path() + ": rank " + std::to_string(g.rank()) + ", node " + std::to_string(g.id(index)) + " '" +
         g.name(index) + "'";
}

std::string involved_text(const CommunicatorSpec& s) {
  std::string t = "[";
  for (std::uint32_t i = 0; i < s.involved_count; ++i) {
    t += std::string(i ? ", " : "") + ((i < 64 && (s.involved_mask >> i & 1)) ? "true" : "false");
  }
  return t + "]";
}

std::string rank_list(const std::vector<std::uint32_t>& ranks, std::uint32_t first) {
  std::string s = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i == 12 && ranks.size() > 14) {
      s += ", ... (" + std::to_string(ranks.size()) + " ranks)";
      break;
    }
    s += (i ? ", " : "") + std::to_string(ranks[i] - first);
  }
  return s + "]";
}

}  // namespace

GroupTable::GroupTable(const std::vector<RankGraph>& graphs, const std::vector<JobSpec>& jobs,
                       const std::vector<std::uint32_t>& npu_of, const std::vector<std::uint32_t>& topology_dims,
                       std::uint32_t npu_count, const ReplicaFolding& folding)
    : graphs_(graphs), folding_(folding), npu_of_(npu_of), dims_(topology_dims) {
  if (dims_.empty()) dims_.push_back(npu_count);
  if (folding_.active() && jobs.size() != 1) throw InputError("folded replicas need a run of one job");
  std::uint32_t first = 0;
  for (const JobSpec& j : jobs) {
    const auto job = static_cast<std::uint32_t>(job_first_.size());
    job_first_.push_back(first);
    job_size_.push_back(j.ranks);
    job_of_.insert(job_of_.end(), j.ranks, job);
    // Folded, the definitions name the world's ranks, mirrors included.
    ProcessGroups& defined = defined_.emplace_back(folding_.active() ? folding_.world : j.ranks);
    defined.define_all(j.comm_groups, j.comm_group_file.empty() ? "--comm-group" : j.comm_group_file);
    for (std::uint32_t r = first; r < first + j.ranks; ++r) {
      const RankGraph& g = graphs_[r];
      for (const MetadataText& m : g.metadata_texts()) {
        const std::string where = where_node(g, m.index) + " (METADATA)";
        for (ProcessGroup& pg : parse_pg_metadata(m.values, where)) defined.define(std::move(pg));
      }
    }
    first += j.ranks;
  }
  spec_group_.resize(graphs_.size());
  for (std::uint32_t r = 0; r < graphs_.size(); ++r) {
    for (const CommunicatorSpec& spec : graphs_[r].communicators()) spec_group_[r].push_back(resolve(r, spec));
  }
}

std::vector<std::uint32_t> GroupTable::coordinates(std::uint32_t npu) const {
  std::vector<std::uint32_t> c;
  for (std::uint32_t d : dims_) {
    c.push_back(npu % d);
    npu /= d;
  }
  return c;
}

// The dimensions along which the coordinates of `npus` vary.
std::vector<std::uint32_t> GroupTable::spanned_dims(const std::vector<std::uint32_t>& npus) const {
  std::vector<std::uint32_t> dims;
  if (npus.empty()) return dims;
  const std::vector<std::uint32_t> c0 = coordinates(npus[0]);
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    for (std::uint32_t n : npus) {
      if (coordinates(n)[d] != c0[d]) {
        dims.push_back(static_cast<std::uint32_t>(d));
        break;
      }
    }
  }
  return dims;
}

std::uint32_t GroupTable::add(std::uint32_t job, const std::string& key, std::string label,
                              std::vector<std::uint32_t> ranks) {
  const std::string full = std::to_string(job) + "\x1f" + key;
  if (const auto it = by_key_.find(full); it != by_key_.end()) return it->second;
  CommGroup g;
  g.job = job;
  g.label = std::move(label);
  std::vector<std::uint32_t> npus;
  for (std::uint32_t r : ranks) npus.push_back(npu_of_[r]);
  g.dims = spanned_dims(npus);
  g.ranks = std::move(ranks);
  g.npus = std::make_shared<const std::vector<std::uint32_t>>(std::move(npus));
  const auto id = static_cast<std::uint32_t>(groups_.size());
  groups_.push_back(std::move(g));
  by_key_.emplace(full, id);
  return id;
}

// A group with folded copies is copies of some simulated ranks. One
// simulated member (a data-parallel group): each member is that rank or one
// of its copies, and the engine mirrors the rank's part. Several (a period
// of P > 1 replicas; c context-parallel ranks: Megatron-LM's dp-cp group,
// ranks tp + tp (cp + cp (dp + dp pp)) in ascending order; an
// expert-parallel group over several replicas' ranks): the simulated members
// must come first, S of them, and member m must be a copy of member m mod S.
// Then the engine runs those S and delivers a message to member m to member
// m mod S, as the message from the sender shifted by as many positions (and
// checks that every member runs its simulated counterpart's ops shifted so,
// and that their routes are priced alike). The group need not hold every
// copy: an expert-data-parallel group joins one replica of each block.
std::uint32_t GroupTable::add_mirrored(std::uint32_t rank, const ProcessGroup& pg, const std::string& where) {
  const std::string key = "mirrored:" + pg.name;
  if (const auto it = by_key_.find("0\x1f" + key); it != by_key_.end()) return it->second;
  CommGroup g;
  g.label = "pg_name '" + pg.name + "'";
  const auto per_replica = static_cast<std::uint32_t>(folding_.real_rank.size() / folding_.period);
  const std::uint32_t original = folding_.real_rank[rank % per_replica];
  const std::vector<std::uint32_t> npus(pg.ranks.begin(), pg.ranks.end());  // folded, a rank's NPU is its number
  std::vector<std::uint32_t> simulated;  // positions of the simulated members
  bool one_original = true;              // every member a copy of `rank`'s replica-0 original
  for (std::size_t m = 0; m < npus.size(); ++m) {
    if (folding_.simulated(npus[m])) simulated.push_back(static_cast<std::uint32_t>(m));
    one_original = one_original && folding_.graph_of[npus[m]] % per_replica == rank % per_replica;
  }
  if (simulated.empty()) {
    throw InputError(where + ": pg_name '" + pg.name + "' (from " + pg.source + ") does not include rank " +
                     std::to_string(original));
  }
  const auto period = static_cast<std::uint32_t>(simulated.size());
  if (period == 1) {
    if (!one_original) {
      std::size_t m = 0;
      while (folding_.graph_of[npus[m]] % per_replica == rank % per_replica) ++m;
      throw InputError(where + ": pg_name '" + pg.name + "' (from " + pg.source + ") joins rank " +
                       std::to_string(npus[m]) + ", which is not a copy of rank " + std::to_string(original) +
                       ": its replicas cannot be folded (run with --no-aggregation)");
    }
    g.mirrored_pos = static_cast<std::int32_t>(simulated[0]);
    g.ranks = {folding_.graph_of[npus[simulated[0]]]};
  } else {
    bool in_order = npus.size() % period == 0 && simulated.back() == period - 1;
    for (std::size_t m = period; in_order && m < npus.size(); ++m) {
      in_order = folding_.graph_of[npus[m]] == folding_.graph_of[npus[m % period]];
    }
    for (std::uint32_t m = 0; in_order && m < period; ++m) g.ranks.push_back(folding_.graph_of[npus[m]]);
    in_order = in_order && std::find(g.ranks.begin(), g.ranks.end(), rank) != g.ranks.end();
    if (!in_order) {
      throw FoldingRefused(where + ": pg_name '" + pg.name + "' (from " + pg.source + ") is not " +
                           std::to_string(period) + " simulated ranks (rank " + std::to_string(original) +
                           "'s among them) followed by their copies in the same order, which folding " +
                           std::to_string(folding_.period) + " replica(s) at a time needs (run with --no-aggregation)");
    }
    g.mirrored_pos = 0;
  }
  g.period = period;
  g.dims = spanned_dims(npus);
  g.npus = std::make_shared<const std::vector<std::uint32_t>>(npus);
  const auto id = static_cast<std::uint32_t>(groups_.size());
  groups_.push_back(std::move(g));
  by_key_.emplace("0\x1f" + key, id);
  return id;
}

std::uint32_t GroupTable::world(std::uint32_t job) {
  // Asked once per rank: look it up before building its member list (O(ranks) each).
  if (const auto it = by_key_.find(std::to_string(job) + "\x1f*"); it != by_key_.end()) return it->second;
  if (folding_.active() && folding_.replicas == folding_.world) {
    // Every rank a copy of the one simulated: the world is that rank's copies.
    CommGroup g;
    g.label = "all ranks";
    std::vector<std::uint32_t> npus(folding_.world);
    for (std::uint32_t r = 0; r < folding_.world; ++r) npus[r] = r;
    g.mirrored_pos = static_cast<std::int32_t>(folding_.real_rank[0]);
    g.dims = spanned_dims(npus);
    g.ranks = {0};
    g.npus = std::make_shared<const std::vector<std::uint32_t>>(std::move(npus));
    const auto id = static_cast<std::uint32_t>(groups_.size());
    groups_.push_back(std::move(g));
    by_key_.emplace(std::to_string(job) + "\x1f*", id);
    return id;
  }
  std::vector<std::uint32_t> ranks(job_size_[job]);
  for (std::uint32_t i = 0; i < ranks.size(); ++i) ranks[i] = job_first_[job] + i;
  const std::uint32_t id = add(job, "*", "all ranks", std::move(ranks));
  groups_[id].unfoldable = folding_.active();
  return id;
}

std::vector<std::uint32_t> GroupTable::involved_ranks(std::uint32_t rank, const CommunicatorSpec& spec,
                                                      const std::string& where) {
  const std::size_t nd = dims_.size();
  if (spec.involved_count < nd) {
    throw InputError(where + ": involved_dim " + involved_text(spec) + " has " + std::to_string(spec.involved_count) +
                     " entries but the network has " + std::to_string(nd) + " dimensions (one entry each)");
  }
  for (std::uint32_t i = static_cast<std::uint32_t>(nd); i < spec.involved_count; ++i) {
    if (!(spec.involved_mask >> i & 1)) {
      throw InputError(where + ": involved_dim " + involved_text(spec) + " marks dimension " + std::to_string(i) +
                       " false, but the network has only " + std::to_string(nd) +
                       " dimensions (entries past them must be true)");
    }
  }
  const std::uint32_t job = job_of_[rank];
  const std::uint64_t mask = nd >= 64 ? spec.involved_mask : spec.involved_mask & ((1ull << nd) - 1);
  // The "line" key of an NPU: its address with the involved coordinates set to 0.
  auto key_of = [&](std::uint32_t npu) {
    std::uint64_t key = 0, scale = 1;
    const std::vector<std::uint32_t> c = coordinates(npu);
    for (std::size_t d = 0; d < nd; ++d) {
      if (!(mask >> d & 1)) key += c[d] * scale;
      scale *= dims_[d];
    }
    return key;
  };
  auto [it, fresh] = lines_.try_emplace({job, mask});
  if (fresh) {
    for (std::uint32_t r = job_first_[job]; r < job_first_[job] + job_size_[job]; ++r) {
      it->second[key_of(npu_of_[r])].push_back(r);
    }
  }
  return it->second[key_of(npu_of_[rank])];
}

std::uint32_t GroupTable::resolve(std::uint32_t rank, const CommunicatorSpec& spec) {
  const std::uint32_t job = job_of_[rank];
  const std::uint32_t first = job_first_[job];
  if (spec.pg_name.empty() && spec.involved_count == 0) return world(job);
  const RankGraph& g = graphs_[rank];
  const std::string where = where_node(g, spec.first_use);
  std::uint32_t named = 0xffffffffu;
  std::vector<std::uint32_t> named_ranks;
  if (!spec.pg_name.empty()) {
    const ProcessGroup* pg = defined_[job].resolve(spec.pg_name, where);
    if (!pg) {
      named = world(job);
    } else {
      if (folding_.active()) {
        bool all_simulated = true;
        for (std::uint32_t r : pg->ranks) all_simulated = all_simulated && folding_.simulated(r);
        if (!all_simulated) {
          if (spec.involved_count != 0) {
            throw InputError(where + ": pg_name '" + spec.pg_name + "' with involved_dim cannot be folded");
          }
          return add_mirrored(rank, *pg, where);
        }
      }
      for (std::uint32_t r : pg->ranks) named_ranks.push_back(folding_.active() ? folding_.graph_of[r] : first + r);
      if (std::find(named_ranks.begin(), named_ranks.end(), rank) == named_ranks.end()) {
        throw InputError(where + ": pg_name '" + spec.pg_name + "' is process group '" + pg->name + "' " +
                         rank_list(named_ranks, first) + " (from " + pg->source + "), which does not include rank " +
                         std::to_string(rank - first));
      }
      named = add(job, "pg:" + pg->name, "pg_name '" + pg->name + "'", named_ranks);
    }
    named_ranks = groups_[named].ranks;
  }
  if (spec.involved_count == 0) return named;
  if (folding_.active()) throw InputError(where + ": involved_dim cannot be folded into one replica");
  std::vector<std::uint32_t> line = involved_ranks(rank, spec, where);
  if (named != 0xffffffffu) {
    std::vector<std::uint32_t> a = named_ranks, b = line;
    std::sort(a.begin(), a.end());
    if (a != b) {
      throw InputError(where + ": pg_name '" + spec.pg_name + "' names ranks " + rank_list(a, first) +
                       " but involved_dim " + involved_text(spec) + " names ranks " + rank_list(b, first) +
                       " (those sharing this rank's coordinates in the dimensions marked false)");
    }
    return named;
  }
  if (line.size() == job_size_[job]) return world(job);
  std::string key = "dims:";
  for (std::uint32_t r : line) key += std::to_string(r) + ",";
  return add(job, key, "involved_dim " + involved_text(spec), std::move(line));
}

}  // namespace sim
