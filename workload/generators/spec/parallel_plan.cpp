#include "workload/generators/spec/parallel_plan.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"

namespace sim::gen {

std::string ParallelPlan::describe() const {
  std::string s = "tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) + ",dp=" + std::to_string(dp);
  if (cp > 1) s += ",cp=" + std::to_string(cp);
  if (ep > 1) s += ",ep=" + std::to_string(ep);
  if (etp > 1) s += ",etp=" + std::to_string(etp);
  if (sp) s += ",sp";
  return s;
}

ParallelPlan parse_parallel_plan(const std::string& text, const std::string& given) {
  ParallelPlan plan;
  bool seen[7] = {};
  std::size_t start = 0;
  const std::string where = (given.empty() ? "--parallel '" + text + "'" : given) + ": ";
  if (text.empty()) throw InputError(where + "empty; expected e.g. tp=8,pp=4,dp=16[,cp=2,ep=4,etp=2,sp]");
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item == "sp") {
      if (seen[6]) throw InputError(where + "'sp' given twice");
      seen[6] = plan.sp = true;
      continue;
    }
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    static const char* const kKeys[] = {"tp", "pp", "dp", "cp", "ep", "etp"};
    int k = -1;
    for (int i = 0; i < 6; ++i) {
      if (key == kKeys[i]) k = i;
    }
    if (eq == std::string::npos || k < 0) {
      throw InputError(where + "unknown item '" + item + "' (expected tp=N, pp=N, dp=N, cp=N, ep=N, etp=N or sp)");
    }
    if (seen[k]) throw InputError(where + "'" + key + "' given twice");
    seen[k] = true;
    const std::string value = item.substr(eq + 1);
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v == 0 || v > (1u << 20)) {
      throw InputError(where + key + " must be a whole number from 1 to 1048576, got '" + value + "'");
    }
    std::uint32_t* fields[] = {&plan.tp, &plan.pp, &plan.dp, &plan.cp, &plan.ep, &plan.etp};
    *fields[k] = v;
    if (comma == text.size()) break;
  }
  if (static_cast<std::uint64_t>(plan.tp) * plan.pp * plan.dp * plan.cp > (1u << 24)) {
    throw InputError(where + "more than 16,777,216 ranks");
  }
  return plan;
}

RankCoords coords_of(const ParallelPlan& plan, std::uint32_t rank) {
  RankCoords c;
  c.tp = rank % plan.tp;
  rank /= plan.tp;
  c.cp = rank % plan.cp;
  rank /= plan.cp;
  c.dp = rank % plan.dp;
  c.pp = rank / plan.dp;
  return c;
}

std::uint32_t rank_of(const ParallelPlan& plan, const RankCoords& c) {
  return c.tp + plan.tp * (c.cp + plan.cp * (c.dp + plan.dp * c.pp));
}

GroupRef group_of(const ParallelPlan& plan, Dim dim, std::uint32_t rank) {
  const RankCoords me = coords_of(plan, rank);
  GroupRef g;
  auto add = [&](RankCoords c) { g.ranks.push_back(rank_of(plan, c)); };
  switch (dim) {
    case Dim::kTp: {
      for (std::uint32_t t = 0; t < plan.tp; ++t) add({t, me.cp, me.dp, me.pp});
      g.name = "tp:" + std::to_string(rank / plan.tp);
      break;
    }
    case Dim::kCp: {
      for (std::uint32_t c = 0; c < plan.cp; ++c) add({me.tp, c, me.dp, me.pp});
      g.name = "cp:" + std::to_string(me.tp + plan.tp * (me.dp + plan.dp * me.pp));
      break;
    }
    case Dim::kDp: {  // data x context: every rank holding this rank's parameters
      for (std::uint32_t d = 0; d < plan.dp; ++d) {
        for (std::uint32_t c = 0; c < plan.cp; ++c) add({me.tp, c, d, me.pp});
      }
      g.name = "dp:" + std::to_string(me.tp + plan.tp * me.pp);
      break;
    }
    case Dim::kEp:
    case Dim::kExpertTp:
    case Dim::kExpertDp: {
      // Experts over the (tp, dp) ranks of one (cp, pp): flat index f = tp + tp * dp,
      // in blocks of ep x etp: an expert-tensor-parallel group is etp consecutive f,
      // an expert-parallel group the f of one block with equal f % etp,
      // expert-data-parallel the f with equal f % (ep x etp).
      const std::uint32_t f = me.tp + plan.tp * me.dp, n = plan.tp * plan.dp, block = plan.ep * plan.etp;
      auto at = [&](std::uint32_t flat) { add({flat % plan.tp, me.cp, flat / plan.tp, me.pp}); };
      const std::uint32_t plane = me.cp + plan.cp * me.pp;
      if (dim == Dim::kEp) {
        for (std::uint32_t i = 0; i < plan.ep; ++i) at(f / block * block + f % plan.etp + i * plan.etp);
        g.name = "ep:" + std::to_string(plane * (n / plan.ep) + f / block * plan.etp + f % plan.etp);
      } else if (dim == Dim::kExpertTp) {
        for (std::uint32_t i = 0; i < plan.etp; ++i) at(f / plan.etp * plan.etp + i);
        g.name = "etp:" + std::to_string(plane * (n / plan.etp) + f / plan.etp);
      } else {  // every context-parallel rank too: they hold the same experts
        for (std::uint32_t c = 0; c < plan.cp; ++c) {
          for (std::uint32_t i = f % block; i < n; i += block) add({i % plan.tp, c, i / plan.tp, me.pp});
        }
        g.name = "edp:" + std::to_string(me.pp * block + f % block);
      }
      break;
    }
    case Dim::kEmbedding: {
      add({me.tp, me.cp, me.dp, 0});
      if (plan.pp > 1) add({me.tp, me.cp, me.dp, plan.pp - 1});
      g.name = "embd:" + std::to_string(me.tp + plan.tp * (me.cp + plan.cp * me.dp));
      break;
    }
  }
  std::sort(g.ranks.begin(), g.ranks.end());
  return g;
}

}  // namespace sim::gen
