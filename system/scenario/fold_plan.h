// How a scenario's ranks are folded, planned before anything is simulated.
//
// A job folds in one of several ways, from the fewest simulated ranks to
// every rank: a mixture of experts' replicas as copies (one at a time, then a
// node's or a leaf's worth at a time), data-parallel replicas or blocks of
// them, context-parallel ranks as copies, a period of replicas that maps the
// network onto itself, one replica with stand-ins timing what does not
// mirror (approximate, allowed by ScenarioSpec::stand_ins), every rank. The
// plan lists the ways that apply to the spec, worked out from static facts
// (the generated workload's symmetry, the topology's periods, whether
// stand-ins are allowed); the first that the run accepts is simulated.
//
// A Simulation checks a fold when it is constructed (routes, messages
// between copies, every collective over the copies) and throws
// FoldingRefused with a reason; the reason rules out later steps (a
// collective that repeats at no period refuses every period too), so a
// refused step costs the folded ranks' graphs, never a simulated event.
//
//   FoldLadder ladder(spec);
//   for (;;) {
//     const ScenarioSpec& s = ladder.next(note);  // says why it moved on
//     try { return simulate(s); } catch (const FoldingRefused& r) { ladder.refused(r); }
//   }
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "system/scenario/scenario.h"

namespace sim {

class FoldLadder {
 public:
  explicit FoldLadder(const ScenarioSpec& spec);

  // The next step worth trying, given the refusals so far; `note` hears why
  // the run moved on to it (nothing for the first step). The last step,
  // every rank, is always worth trying.
  const ScenarioSpec& next(const std::function<void(const std::string&)>& note);
  // The step `next` returned was refused: rethrows when it was the last.
  void refused(const FoldingRefused& refusal);

  // The steps planned, in order: what each folds, for notes and tests.
  std::vector<std::string> names() const;

 private:
  struct Refusal {
    std::size_t step;
    FoldingRefused::Reason reason;
  };
  struct Step {
    std::string name;
    ScenarioSpec spec;
    // What `note` hears when the run moves on to this step (the last
    // refusal's reason follows) or, for the first step, why the plan starts
    // there; empty: nothing.
    std::string note;
    // Whether the step is worth trying after `refusals`; may add to `why`
    // what made it not worth it.
    std::function<bool(const std::vector<Refusal>& refusals, std::string& why)> worth;
    // The graphs an earlier step built are kept for this one (the same ranks).
    bool reuses_graphs = false;
  };

  // The plan on a backend that folds only with stand-ins (flow): one
  // replica with them (context-parallel ranks as copies, then simulated),
  // then every rank.
  void plan_stand_ins_only(ScenarioSpec spec);

  std::vector<Step> steps_;
  std::vector<Refusal> refusals_;
  std::size_t current_ = 0;
  bool started_ = false;
  std::string why_;  // the last refusal, and what skipped steps added to it
};

// Runs `simulate(spec)` along the fold ladder above: each refused fold is
// followed by the next worth trying, down to every rank. `note` hears why
// each step after the first was taken.
template <class Simulate, class Note>
auto simulate_folded_if_exact(const ScenarioSpec& spec, Simulate&& simulate, Note&& note) {
  FoldLadder ladder(spec);
  const std::function<void(const std::string&)> say = [&](const std::string& why) { note(why); };
  for (;;) {
    const ScenarioSpec& step = ladder.next(say);
    try {
      return simulate(step);
    } catch (const FoldingRefused& refusal) {
      ladder.refused(refusal);
    }
  }
}

}  // namespace sim
