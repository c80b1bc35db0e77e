// A preset, a model and a parallel plan against a published run: Llama 3
// 405B pre-training on 16,384 H100s ("The Llama 3 Herd of Models", 2024,
// Table 4: TP 8, PP 16, DP 128, sequence 8,192, 16M tokens per batch, 400
// TFLOP/s per GPU). The dgx-h100-superpod preset's compute.efficiency was
// fitted on the same paper's 8,192-GPU run (430 TFLOP/s), not on this one;
// docs/published-runs.md has both and what the preset leaves out.
//
// Held out too, from another source and another software stack: NVIDIA's
// NeMo 24.07 performance summary (NVIDIA/NeMo,
// docs/source/performance/performance_summary.md, pre-training on DGX-H100 at
// FP8): nothing of the preset was fitted on them.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/time.h"
#include "network/topology.h"
#include "presets/preset.h"
#include "system/runner/simulation.h"
#include "system/scenario/fold_plan.h"
#include "system/scenario/scenario.h"
#include "system/scenario/system_files.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/transformer_workload.h"

namespace sim::presets {
namespace {

// Model TFLOP/s per GPU of one iteration of `workload` on `nodes` nodes of
// `preset`, folded as the command line folds it (cli/main.cpp): a period of
// replicas where NCCL's ring covers several GPUs of a node, stand-ins where
// its programs through leaf and spine do not mirror.
// `leaf_nodes` > 0: that many nodes under each leaf (`sim system gen --leaf-nodes`).
double tflops_per_gpu(const std::string& preset, std::uint32_t nodes, const std::string& workload,
                      std::uint32_t leaf_nodes = 0) {
  const PresetFiles f = leaf_nodes > 0 ? generate_preset(find_preset(preset), nodes, PresetChoices{leaf_nodes, false, ""})
                                       : generate_preset(find_preset(preset), nodes);
  ScenarioSpec spec;
  spec.topology = std::make_shared<const Topology>(parse_topology(f.network_yaml, "network.yml"));
  spec.system_config = std::make_shared<const SystemConfig>(parse_system_text(f.system_yaml, "system.yml"));
  spec.jobs = {JobInput{"", workload, ""}};
  // Runs above one network level must fold, as the command line does: NCCL's
  // tree and its rings through leaf and spine with stand-ins (docs/system.md):
  // 128 ranks simulated for 16,384, seconds, not an hour.
  spec.stand_ins = true;
  const bool must_fold = f.dims.size() > 2;
  auto makespan = [&](const ScenarioSpec& sp) {
    const Scenario s = build_scenario(sp);
    if (must_fold) {
      EXPECT_TRUE(s.options.folding.active()) << preset << " on " << nodes << " nodes";
    }
    Simulation sim(s.graphs, *s.topology, s.config, s.options);
    return sim.run().makespan;
  };
  const Time t = simulate_folded_if_exact(spec, makespan, [&](const std::string& why) {
    if (why.find("every rank") != std::string::npos) {
      EXPECT_FALSE(must_fold) << why;
    }
  });
  const double flops = gen::model_flops_per_iteration(gen::generated_workload_spec(workload));
  const double seconds = static_cast<double>(t) * 1e-12;
  return flops / (static_cast<double>(f.npus) * seconds) / 1e12;
}

TEST(PublishedRuns, Llama3_405bOn16384H100sWithin5PercentOfThePaper) {
#if defined(SIM_SANITIZED)
  // NCCL's tensor-parallel rings of 128 ranks message by message: 20-50 s in
  // Release, past ctest's limit unoptimised; the Release suite runs it.
  GTEST_SKIP() << "too long under the sanitizers; the Release suite runs it";
#endif
  const double published = 400;
  const double predicted =
      tflops_per_gpu("dgx-h100-superpod", 2048,
                     "gen:transformer?model=llama3-405b&parallel=tp=8,pp=16,dp=128,sp&global-batch=2048&seq=8192"
                     "&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8");
  RecordProperty("predicted_tflops_per_gpu", std::to_string(predicted));
  // Measured 2026-11-29 with NCCL's choices and stand-ins: 399.2 (-0.2%; with a ring
  // per dimension: 409.0, +2.3%). Published runs are predicted within 15%; 5% here
  // so that a change to the kernel model, the schedule or the network that
  // moves this prediction is noticed.
  EXPECT_NEAR(predicted / published, 1.0, 0.05) << "predicted " << predicted << " TFLOP/s per GPU";
}

// A NeMo 24.07 pre-training row: the plan and the published "Model TFLOP /
// sec / GPU" (Megatron-LM's FLOP count, as `sim` reports it:
// docs/published-runs.md checks the count on the row's tokens per second).
struct NemoRow {
  const char* name;
  const char* key;  // the test property of its prediction
  std::uint32_t nodes;
  const char* workload;
  double published;
};

// The aim for predictions of published runs: within 15% of TFLOP/s
// per GPU. Measured 2026-11-29 (NCCL on the 1- and 16-node rows), with
// Transformer Engine's fp8 casts: -8.0%, -8.9%, +4.4%; without the casts -2.7%,
// -4.4%, +10.6% (docs/published-runs.md).
TEST(PublishedRuns, NemoH100Fp8RunsWithin15PercentHeldOut) {
  const NemoRow rows[] = {
      {"GPT3-175B, 128 GPUs", "gpt3_175b_128", 16,
       "gen:transformer?model=gpt3-175b&parallel=tp=4,pp=8,dp=4,sp&global-batch=256&micro-batch=1&seq=2048"
       "&schedule=interleaved:6&zero=1&dtype=fp8",
       782},
      {"GPT3-175B, 512 GPUs", "gpt3_175b_512", 64,
       "gen:transformer?model=gpt3-175b&parallel=tp=4,pp=8,dp=16,sp&global-batch=2048&micro-batch=2&seq=2048"
       "&schedule=interleaved:6&zero=1&dtype=fp8",
       842},
      {"LLAMA3-8B, 8 GPUs", "llama3_8b_8", 1,
       "gen:transformer?model=llama3-8b&parallel=tp=1,pp=1,dp=4,cp=2&global-batch=128&micro-batch=1&seq=8192"
       "&zero=1&dtype=fp8",
       697},
  };
  for (const NemoRow& row : rows) {
#if defined(SIM_SANITIZED)
    // Every one of its 128 ranks runs NCCL's rings message by message: 40 s
    // in Release, past ctest's limit unoptimised; the Release suite runs it.
    if (row.nodes == 16) continue;
    // NCCL with stand-ins across two leaves: 8 s in Release.
    if (row.nodes == 64) continue;
#endif
    const double predicted = tflops_per_gpu("dgx-h100-superpod", row.nodes, row.workload);
    RecordProperty(row.key, std::to_string(predicted));
    EXPECT_NEAR(predicted / row.published, 1.0, 0.15)
        << row.name << ": predicted " << predicted << ", published " << row.published << " TFLOP/s per GPU";
  }
}

// Narayanan et al., SC'21, Table 1: GPT models on A100s (Selene, DGX A100
// nodes), with full activation recomputation. The paper's TFLOP/s count the
// recomputed forward pass: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per
// iteration (its appendix); model FLOPs, as `sim` reports them, are
// 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). The published figure converted:
double sc21_model_tflops(double published, double layers, double hidden) {
  const double s = 2048, v = 51200;
  return published * (72 * (1 + s / (6 * hidden) + v / (12 * layers * hidden))) /
         (96 * (1 + s / (6 * hidden) + v / (16 * layers * hidden)));
}

// The dgx-a100 preset's compute.efficiency (0.655) was fitted on the table's
// 7.5B row (128 GPUs); the 1.7B, 3.6B, 18B, 39B, 76B, 145B and 310B rows are
// held out (530B and 1T too, in scripts/bench/bench_published.sh: minutes each).
// The plans are the paper's script (NVIDIA/Megatron-LM
// examples/sc21/run_table_1.sh), attention as Megatron-LM ran it then
// (unfused: batched GEMMs around the softmax, dropout 0.1 in the model files).
// Measured: -3.4%, -2.0%, +2.7%, -2.6%, +6.5%, +0.7%,
// +2.3% (530B +0.9%, 1T -4.6%); with a fused attention kernel instead the
// error drifts with size from +10.4% to -20.6%.
TEST(PublishedRuns, MegatronSc21A100RunsWithin10PercentHeldOut) {
  const std::string models = std::string(SIM_SOURCE_DIR) + "/configs/models/megatron-sc21/";
  struct Row {
    const char* key;
    std::uint32_t nodes;
    std::string workload;
    double published;  // model TFLOP/s per GPU, converted
    std::uint32_t leaf_nodes = 0;
  };
  const Row rows[] = {
      {"gpt_1_7b_32", 4,
       "gen:transformer?model=" + models +
           "gpt-1.7b.yml&parallel=tp=1,pp=1,dp=32&global-batch=512&micro-batch=16&seq=2048&recompute=full&attention=unfused",
       sc21_model_tflops(137, 24, 2304)},
      {"gpt_3_6b_64", 8,
       "gen:transformer?model=" + models +
           "gpt-3.6b.yml&parallel=tp=2,pp=1,dp=32&global-batch=512&micro-batch=16&seq=2048&recompute=full&attention=unfused",
       sc21_model_tflops(138, 30, 3072)},
      // The larger rows on 32 to 128 nodes: two network levels (the 20-node scalable units partly
      // populated, 16 nodes each: presets/preset.cpp), NCCL, the replicas folded (stand-ins across leaves). From 39B
      // on the script runs DDP=local: the gradients are all-reduced after the last backward pass,
      // one bucket per model chunk; pipeline messages split over the tensor-parallel ranks and
      // all-gathered (Megatron-LM's default then, --scatter-gather-tensors-in-pipeline).
      {"gpt_18b_256", 32,
       "gen:transformer?model=" + models +
           "gpt-18b.yml&parallel=tp=8,pp=1,dp=32&global-batch=1024&micro-batch=8&seq=2048&recompute=full&attention=unfused",
       sc21_model_tflops(135, 40, 6144)},
      {"gpt_39b_512", 64,
       "gen:transformer?model=" + models +
           "gpt-39b.yml&parallel=tp=8,pp=2,dp=32&global-batch=1536&micro-batch=4&seq=2048&recompute=full&attention=unfused&"
           "bucket-params=100000000000&pp-scatter-gather",
       sc21_model_tflops(138, 48, 8192)},
      {"gpt_76b_1024", 128,
       "gen:transformer?model=" + models +
           "gpt-76b.yml&parallel=tp=8,pp=4,dp=32&global-batch=1792&micro-batch=2&seq=2048&recompute=full&attention=unfused&"
           "schedule=interleaved:3&bucket-params=100000000000&pp-scatter-gather",
       sc21_model_tflops(140, 60, 10240)},
      // 1,536 GPUs, 12 nodes per leaf (each stage's data-parallel group of 24 on two leaves).
      {"gpt_145b_1536", 192,
       "gen:transformer?model=" + models +
           "gpt-145b.yml&parallel=tp=8,pp=8,dp=24&global-batch=2304&micro-batch=2&seq=2048&recompute=full&"
           "attention=unfused&schedule=interleaved:2&bucket-params=100000000000&pp-scatter-gather",
       sc21_model_tflops(148, 80, 12288), 12},
      // 1,920 GPUs, 15 nodes per leaf so that each stage's data-parallel group of 15 sits on one
      // leaf; its gradient buckets do not divide by 15: NCCL's ring over them is not the same
      // rank after rank and runs with stand-ins (128 ranks simulated: about 40 s, 1.3 GB).
      {"gpt_310b_1920", 240,
       "gen:transformer?model=" + models +
           "gpt-310b.yml&parallel=tp=8,pp=16,dp=15&global-batch=2160&micro-batch=1&seq=2048&recompute=full&attention=unfused&"
           "schedule=interleaved:2&bucket-params=100000000000&pp-scatter-gather",
       sc21_model_tflops(155, 96, 16384), 15},
  };
  for (const Row& row : rows) {
#if defined(SIM_SANITIZED)
    // 64 and 128 ranks through 8- and 16-stage pipelines: 10 and 40 s in Release, minutes
    // unoptimised; the Release suite runs them.
    if (row.nodes >= 192) continue;
#endif
    const double predicted = tflops_per_gpu("dgx-a100", row.nodes, row.workload, row.leaf_nodes);
    RecordProperty(row.key, std::to_string(predicted));
    EXPECT_NEAR(predicted / row.published, 1.0, 0.10)
        << row.key << ": predicted " << predicted << ", published " << row.published << " model TFLOP/s per GPU";
  }
}

}  // namespace
}  // namespace sim::presets
