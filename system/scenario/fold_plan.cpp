#include "system/scenario/fold_plan.h"

#include <memory>
#include <utility>

namespace sim {

namespace {

using Reason = FoldingRefused::Reason;

}  // namespace

FoldLadder::FoldLadder(const ScenarioSpec& given) {
  ScenarioSpec spec = given;
  // The graphs of the folded ranks, kept from one step to the next that
  // folds the same ranks (one replica, then with stand-ins).
  if (!spec.folded_graphs) spec.folded_graphs = std::make_shared<ScenarioSpec::FoldedGraphs>();
  // A generated workload's query parsed once for every step (a bad one fails
  // here, as it would in the first step). Other workloads are opened by the
  // scenario, after the system and network are checked.
  if (spec.jobs.size() == 1 && is_generated(spec.jobs[0].workload) && !spec.graphs) {
    spec.sources = workload_sources(spec);
  }
  const auto always = [](const std::vector<Refusal>&, std::string&) { return true; };
  const auto last_is = [](Reason r) {
    return [r](const std::vector<Refusal>& refusals, std::string&) {
      return !refusals.empty() && refusals.back().reason == r;
    };
  };
  // The ladder below starts from one replica at a time; a spec that names its
  // period (tests, --no-aggregation's every rank) runs as given, then every rank.
  const bool ladder = spec.fold_replicas && spec.replica_period == 1;
  if (ladder && backend_folding(spec) == BackendFolding::kStandInsOnly) {
    plan_stand_ins_only(spec);
    return;
  }

  // A mixture of experts' replicas as copies: one at a time, then a node's or
  // a leaf's worth at a time while only routes differ (an expert-parallel
  // group spanning nodes repeats its routes only every node or leaf).
  std::string after_experts;
  if (ladder && spec.expert_copies && folds_expert_copies(spec)) {
    steps_.push_back({"expert copies, one replica at a time", spec, "", always});
    for (const std::uint32_t p : expert_copy_periods(spec)) {
      ScenarioSpec period = spec;
      period.replica_period = p;
      steps_.push_back({"expert copies, " + std::to_string(p) + " replicas at a time", period,
                        "", last_is(FoldingRefused::kRoutes)});
    }
    spec.expert_copies = false;
    after_experts = "a mixture of experts' replicas not folded as copies (one by one or a period at a time; "
                    "blocks of whole expert groups next, if there are two or more): ";
  }

  // What build_scenario folds with the spec as it stands: replicas, blocks of
  // replicas, context-parallel copies, identical ranks, or nothing.
  const std::size_t base = steps_.size();
  steps_.push_back({"replicas", spec, after_experts, always});

  // Context-parallel ranks as copies, refused: each replica's cp ranks
  // simulated (their exchanges then run as they are), unless the gradient
  // group's program repeats at no period, which refuses that too.
  const bool copies = ladder && spec.context_copies && folds_context_copies(spec);
  if (copies) {
    ScenarioSpec ranks = spec;
    ranks.context_copies = false;
    steps_.push_back({"context-parallel ranks simulated", ranks,
                      "context-parallel ranks simulated, each replica's (they do not fold as copies of each other): ",
                      [](const std::vector<Refusal>& refusals, std::string&) {
                        return refusals.back().reason != FoldingRefused::kNoPeriod;
                      }});
  }
  spec.context_copies = false;

  if (ladder) {
    // The refusal that led past the steps above: a route that differs or a
    // collective that repeats at no period leaves a period of replicas or
    // stand-ins to try; any other reason only every rank.
    const std::size_t period_step = steps_.size();
    const auto entry = [period_step](const std::vector<Refusal>& refusals) {
      for (auto it = refusals.rbegin(); it != refusals.rend(); ++it) {
        if (it->step != period_step) return it->reason;
      }
      return FoldingRefused::kOther;
    };
    ScenarioSpec period = spec;
    period.replica_period = 0;
    // With stand-ins allowed, only a short period is worth simulating exactly.
    const auto [p, replicas] = spec.stand_ins ? folding_period(period) : std::pair<std::uint32_t, std::uint32_t>{};
    const bool stand_ins = spec.stand_ins;
    steps_.push_back({"a period of replicas", period, "replicas folded a period at a time: ",
                      [entry, stand_ins, p = p, replicas = replicas](const std::vector<Refusal>& refusals, std::string& why) {
                        const Reason r = entry(refusals);
                        if (r == FoldingRefused::kNoPeriod) {
                          why += "; no period of replicas repeats it";  // nothing short of every rank, or stand-ins
                          return false;
                        }
                        if (r != FoldingRefused::kRoutes) return false;
                        if (stand_ins && (p <= 1 || p >= replicas)) {
                          why += "; no period of replicas short of all " + std::to_string(replicas) +
                                 " maps the network onto itself";
                          return false;
                        }
                        if (stand_ins && p > kLongestExactPeriod) {
                          why += "; the period is " + std::to_string(p) + " replicas, longer than " +
                                 std::to_string(kLongestExactPeriod);
                          return false;
                        }
                        return true;
                      }});
    if (spec.stand_ins) {
      // One replica with stand-ins, context-parallel ranks still copies
      // unless their exchanges were what did not mirror.
      const auto exchanges_refused = [base](const std::vector<Refusal>& refusals) {
        for (const Refusal& r : refusals) {
          if (r.step == base && r.reason == FoldingRefused::kPointToPoint) return true;
        }
        return false;
      };
      const auto entered = [entry](const std::vector<Refusal>& refusals) {
        const Reason r = entry(refusals);
        return r == FoldingRefused::kRoutes || r == FoldingRefused::kNoPeriod;
      };
      ScenarioSpec one = spec;
      one.replica_period = 1;
      one.use_stand_ins = true;
      const std::string note =
          "replicas folded one at a time with stand-ins (collectives over a rank's copies, or over "
          "context-parallel ranks and their copies, that do not mirror are timed alone: approximate, "
          "docs/system.md; --exact-folding for the exact run): ";
      if (copies) {
        ScenarioSpec with_copies = one;
        with_copies.context_copies = true;
        steps_.push_back({"one replica with stand-ins, context-parallel ranks as copies", with_copies, note,
                          [entered, exchanges_refused](const std::vector<Refusal>& refusals, std::string&) {
                            return entered(refusals) && !exchanges_refused(refusals);
                          },
                          true});
      }
      steps_.push_back({"one replica with stand-ins", one, note,
                        [entered, exchanges_refused, copies](const std::vector<Refusal>& refusals, std::string&) {
                          return entered(refusals) && (!copies || exchanges_refused(refusals));
                        },
                        true});
    }
  }

  ScenarioSpec every = spec;
  every.fold_replicas = false;
  every.fold_identical_ranks = false;
  steps_.push_back({"every rank", every, "ranks not folded, simulating every rank: ", always});
}

void FoldLadder::plan_stand_ins_only(ScenarioSpec spec) {
  const auto always = [](const std::vector<Refusal>&, std::string&) { return true; };
  ScenarioSpec one = spec;
  one.use_stand_ins = true;
  one.expert_copies = false;  // a mixture of experts folds by blocks of whole expert groups
  const bool folds = folding_period(one).second >= 2;
  const std::string backend =
      "the " + backend_of(spec) + " backend shares links inside the fabric, so no fold of replicas is exact";
  std::string every_note;  // nothing folds: nothing to say
  if (folds && spec.stand_ins) {
    every_note = "ranks not folded, simulating every rank: ";
    const std::string note = backend + ": replicas folded one at a time with stand-ins (collectives over a "
                                       "rank's copies timed alone: approximate, docs/system.md; --exact-folding for every rank)";
    if (folds_context_copies(one)) {
      steps_.push_back({"one replica with stand-ins, context-parallel ranks as copies", one, note, always});
      one.context_copies = false;
      steps_.push_back({"one replica with stand-ins", one,
                        "context-parallel ranks simulated, each replica's (they do not fold as copies of each "
                        "other), with stand-ins: ",
                        [](const std::vector<Refusal>& refusals, std::string&) {
                          return refusals.back().reason == FoldingRefused::kPointToPoint;
                        }});
    } else {
      one.context_copies = false;
      steps_.push_back({"one replica with stand-ins", one, note, always});
    }
  } else if (folds) {
    every_note = backend + " and stand-ins are off (--exact-folding): simulating every rank";
  }
  spec.fold_replicas = false;
  spec.fold_identical_ranks = false;
  steps_.push_back({"every rank", spec, every_note, always});
}

const ScenarioSpec& FoldLadder::next(const std::function<void(const std::string&)>& note) {
  if (!started_) {
    // (a first step's note says why the plan starts there: no refusal yet)
    started_ = true;
    if (!steps_[current_].note.empty()) note(steps_[current_].note);
    return steps_[current_].spec;
  }
  for (++current_; current_ + 1 < steps_.size(); ++current_) {
    if (steps_[current_].worth(refusals_, why_)) break;
  }
  Step& step = steps_[current_];
  if (!step.note.empty()) note(step.note + why_);
  if (!step.reuses_graphs) *step.spec.folded_graphs = {};  // other ranks: not kept beside theirs
  return step.spec;
}

void FoldLadder::refused(const FoldingRefused& refusal) {
  if (current_ + 1 >= steps_.size()) throw refusal;
  refusals_.push_back({current_, refusal.reason()});
  why_ = refusal.what();
}

std::vector<std::string> FoldLadder::names() const {
  std::vector<std::string> out;
  for (const Step& s : steps_) out.push_back(s.name);
  return out;
}

}  // namespace sim
