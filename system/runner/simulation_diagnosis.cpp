// What a run that cannot finish is stuck on, in the trace's own terms: node
// ids and names, ranks as the trace numbers them, process groups by pg_name
// (or "all ranks" / involved_dim), point-to-point by src, dst, tag and size.
#include <algorithm>
#include <map>

#include "core/error.h"
#include "system/runner/simulation.h"
#include "system/runner/simulation_run.h"

namespace sim {

std::string Simulation::rank_label(std::uint32_t rank) const {
  const std::uint32_t local = rank - job_first_[rank];
  if (options_.jobs.empty()) return "rank " + std::to_string(local);
  std::uint32_t first = 0;
  for (const JobSpec& j : options_.jobs) {
    if (rank < first + j.ranks) return "job '" + j.name + "' rank " + std::to_string(local);
    first += j.ranks;
  }
  return "rank " + std::to_string(rank);
}

std::string Simulation::describe_node(std::uint32_t rank, std::uint32_t index) const {
  const RankGraph& g = graphs_[rank];
  const TaskNode n = g.node(index);
  std::string s = rank_label(rank) + " node " + std::to_string(n.id) + " '" + g.name(index) + "' (" +
                  node_kind_name(n.kind);
  if (n.kind == NodeKind::kCommSend) s += " to rank " + std::to_string(n.comm_dst);
  if (n.kind == NodeKind::kCommRecv) s += " from rank " + std::to_string(n.comm_src);
  if (n.kind == NodeKind::kCommSend || n.kind == NodeKind::kCommRecv) {
    s += ", tag " + std::to_string(n.comm_tag) + ", " + std::to_string(n.comm_size) + " B";
  }
  if (n.kind == NodeKind::kCommColl) {
    s += std::string(" ") + collective_name(n.coll) + ", " + std::to_string(n.comm_size) + " B on " +
         groups_->group(groups_->group_of(rank, n.group)).label;
  }
  return s + ")";
}

// What `rank` does instead of joining something: the collective or receive
// it is in, else its first node still waiting on dependencies.
std::string Simulation::doing_instead(std::uint32_t rank) const {
  const RankRun& r = runs_[rank];
  const RankGraph& g = graphs_[rank];
  if (r.done == g.size()) return "has finished all its nodes";
  std::int64_t best = -1;
  for (const auto& [index, seq] : r.coll_running) {
    if (best < 0 || g.id(index) < g.id(static_cast<std::uint32_t>(best))) best = index;
  }
  if (best >= 0) return "is in " + describe_node(rank, static_cast<std::uint32_t>(best));
  p2p_match_.for_each_receive([&](std::uint32_t, std::uint32_t dst, std::int64_t, std::uint32_t index) {
    if (dst == rank && (best < 0 || g.id(index) < g.id(static_cast<std::uint32_t>(best)))) best = index;
  });
  if (best >= 0) return "is in " + describe_node(rank, static_cast<std::uint32_t>(best)) + ", which no send matched";
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    if (r.pending[i] > 0 && (best < 0 || g.id(i) < g.id(static_cast<std::uint32_t>(best)))) best = i;
  }
  if (best >= 0) return "waits at " + describe_node(rank, static_cast<std::uint32_t>(best)) + " for its dependencies";
  return "has " + std::to_string(g.size() - r.done) + " unfinished nodes";
}

std::string Simulation::describe_stuck_collectives() const {
  // Every collective some rank is in, by (group, sequence number).
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::pair<std::uint32_t, std::uint32_t>>> stuck;
  for (std::uint32_t rank = 0; rank < runs_.size(); ++rank) {
    for (const auto& [index, seq] : runs_[rank].coll_running) {
      const TaskNode n = graphs_[rank].node(index);
      stuck[std::make_pair(groups_->group_of(rank, n.group), seq)].emplace_back(rank, index);
    }
  }
  std::string msg;
  std::size_t shown = 0;
  for (auto& [key, issued] : stuck) {
    if (shown++ == 8) {
      msg += "  ... and " + std::to_string(stuck.size() - 8) + " more stuck collectives\n";
      break;
    }
    std::sort(issued.begin(), issued.end());
    const CommGroup& group = groups_->group(key.first);
    const auto [first_rank, first_index] = issued.front();
    const TaskNode n = graphs_[first_rank].node(first_index);
    std::string members;
    for (std::size_t i = 0; i < group.ranks.size() && i < 32; ++i) {
      members += (i ? ", " : "") + std::to_string(group.ranks[i] - job_first_[group.ranks[i]]);
    }
    if (group.ranks.size() > 32) members += ", ... (" + std::to_string(group.ranks.size()) + " ranks)";
    std::string dims;
    for (std::uint32_t d : group.dims) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    msg += std::string("  ") + collective_name(n.coll) + " of " + std::to_string(n.comm_size) + " B on " + group.label +
           " (ranks " + members + "; network dimensions [" + dims + "]), collective number " +
           std::to_string(key.second + 1) + " of that group:\n    issued by:";
    for (std::size_t i = 0; i < issued.size() && i < 16; ++i) {
      const auto [rank, index] = issued[i];
      msg += (i ? ", " : " ") + rank_label(rank) + " node " + std::to_string(graphs_[rank].id(index)) + " '" +
             graphs_[rank].name(index) + "'";
    }
    if (issued.size() > 16) msg += ", ... (" + std::to_string(issued.size()) + " ranks)";
    msg += "\n";
    std::size_t missing = 0;
    for (std::uint32_t m : group.ranks) {
      if (std::any_of(issued.begin(), issued.end(), [&](const auto& p) { return p.first == m; })) continue;
      if (missing++ >= 16) continue;
      if (runs_[m].coll_seq[key.first] > key.second) {
        msg += "    " + rank_label(m) + " finished its part of it\n";
      } else {
        msg += "    not issued by " + rank_label(m) + ", which " + doing_instead(m) + "\n";
      }
    }
    if (missing > 16) msg += "    ... (" + std::to_string(missing) + " ranks did not issue it)\n";
    if (missing == 0) {
      const auto& row = result_.collectives[runs_[first_rank].coll_record.at(first_index)];
      msg += "    every member issued it; the messages of its algorithm (" + row.algorithm +
             ") cannot all be matched\n";
    }
  }
  return msg;
}

void Simulation::report_stuck() {
  std::string msg = "simulation cannot complete: the event queue drained at " + format_time(queue_.now()) +
                    " with unfinished nodes\n";
  msg += describe_stuck_collectives();
  // Posted receives nobody sent to, by rank, then (src, tag), then posting order.
  struct Posted {
    std::uint32_t rank, src;
    std::int64_t tag;
    std::size_t order;
    std::uint32_t index;
  };
  std::vector<Posted> posted;
  p2p_match_.for_each_receive([&](std::uint32_t src, std::uint32_t dst, std::int64_t tag, std::uint32_t index) {
    posted.push_back(Posted{dst, src, tag, posted.size(), index});
  });
  std::sort(posted.begin(), posted.end(), [](const Posted& a, const Posted& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.src != b.src ? a.src < b.src : a.tag != b.tag ? a.tag < b.tag : a.order < b.order;
  });
  for (std::size_t i = 0; i < posted.size() && i < 16; ++i) {
    const Posted& p = posted[i];
    msg += "  " + describe_node(p.rank, p.index) + " waits for a message no send matched; the sender " +
           rank_label(p.src) + " " + doing_instead(p.src) + "\n";
  }
  if (posted.size() > 16) msg += "  ... and " + std::to_string(posted.size() - 16) + " more unmatched receives\n";
  std::size_t lines = 0;
  for (std::uint32_t rank = 0; rank < runs_.size() && lines < 16; ++rank) {
    const RankRun& r = runs_[rank];
    const RankGraph& g = graphs_[rank];
    if (r.done == g.size()) continue;
    std::size_t blocked = 0;
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      if (r.pending[i] > 0) ++blocked;
    }
    msg += "  " + rank_label(rank) + " (" + g.path() + "): " + std::to_string(g.size() - r.done) + " of " +
           std::to_string(g.size()) + " nodes unfinished (" + std::to_string(blocked) + " waiting on dependencies)\n";
    ++lines;
  }
  msg.pop_back();
  throw IncompleteError(msg);
}

void Simulation::check_unreceived() {
  // Sends no receive took, in (src, dst, tag) order, then sending order.
  struct Unreceived {
    P2PKey key;
    std::size_t order;
    std::uint32_t message;
  };
  std::vector<Unreceived> left;
  p2p_match_.for_each_message([&](std::uint32_t src, std::uint32_t dst, std::int64_t tag, std::uint32_t m) {
    left.push_back(Unreceived{P2PKey{src, dst, tag}, left.size(), m});
  });
  if (left.empty()) return;
  std::sort(left.begin(), left.end(), [](const Unreceived& a, const Unreceived& b) {
    if (a.key.src != b.key.src) return a.key.src < b.key.src;
    if (a.key.dst != b.key.dst) return a.key.dst < b.key.dst;
    return a.key.tag != b.key.tag ? a.key.tag < b.key.tag : a.order < b.order;
  });
  std::string msg;
  for (std::size_t i = 0; i < left.size() && i < 16; ++i) {
    const P2PMessage& m = p2p_[left[i].message];
    msg += "\n  " + describe_node(m.src_rank, m.src_index) + " was never received by " + rank_label(left[i].key.dst);
  }
  throw IncompleteError("simulation cannot complete: " + std::to_string(left.size()) +
                        " message(s) sent but never received:" + msg);
}

}  // namespace sim
