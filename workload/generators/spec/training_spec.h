// One training iteration to generate: a model, a parallel plan, the batch and
// the choices Megatron-LM exposes (schedule, ZeRO stage, recomputation,
// precision). Validation gives every inconsistency as a clear error naming
// the option (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/generators/spec/model.h"
#include "workload/generators/spec/parallel_plan.h"

namespace sim::gen {

enum class Recompute : std::uint8_t { kNone, kSelective, kFull };

// Pieces of a row-parallel GEMM whose output Transformer Engine reduce-scatters
// in a pipeline under --tp-comm-overlap: `num_splits: 4` for proj_fprop and
// fc2_fprop in NeMo's userbuffers configs (NVIDIA/NeMo-Framework-Launcher,
// launcher_scripts/conf/training/tp_overlap/ub_cfg_h100_fp8_h8192_tp4_mbs1_seqlen8192.yaml).
constexpr std::uint32_t kTpOverlapSplits = 4;

// How the options were written, so that every message names them the way
// the user did: `--seq 4096` on the command line, `seq=4096` in a
// gen:transformer query.
enum class OptionSpelling : std::uint8_t { kFlags, kQuery };
// "--seq" or "seq=" for key "seq".
std::string option_name(OptionSpelling spelling, const std::string& key);
// "--seq 4096" or "seq=4096".
std::string option_given(OptionSpelling spelling, const std::string& key, const std::string& value);
// InputError naming the option when a count that must be at least 1 was
// given as 0 (seq, global-batch, micro-batch, first-stage-layers,
// last-stage-layers, bucket-params), with the valid range.
void check_given_count(OptionSpelling spelling, const std::string& key, std::uint64_t value);

// The options as typed (`sim workload gen transformer ...`, or the query of
// `--workload gen:transformer?model=...&parallel=...`). A count of 0 for
// first_stage_layers, last_stage_layers and bucket_params means "not given"
// (the default); both readers refuse an explicit 0.
struct TrainingOptions {
  OptionSpelling spelling = OptionSpelling::kFlags;
  std::string model;
  std::string parallel;
  std::uint64_t global_batch = 0;  // sequences per iteration
  std::uint64_t micro_batch = 1;   // sequences per micro-batch
  std::uint64_t seq = 0;           // tokens per sequence
  std::string schedule = "1f1b";   // 1f1b | interleaved:V
  std::uint32_t zero = 0;          // 0..3
  std::string recompute = "none";  // none | selective | full
  std::string dtype = "bf16";      // bf16 | fp8 (GEMM inputs)
  std::string attention = "fused";  // fused (one kernel, FlashAttention) | unfused (batched GEMMs and a softmax)
  std::string cp_comm = "p2p";      // p2p (ring attention) | all-gather (K and V gathered first, Llama 3's)
  std::uint64_t first_stage_layers = 0;  // 0: layers / pp
  std::uint64_t last_stage_layers = 0;
  std::uint64_t bucket_params = 0;  // 0: Megatron's default, max(40e6, 1e6 x dp x cp)
  bool comm_free = false;           // every communication carries 0 B (schedule and compute alone)
  bool layers_only = false;         // no embedding, output layer or loss: equal stages (schedule studies)
  // Pipeline messages split over the tensor-parallel ranks, all-gathered at the
  // receiver (Megatron-LM 2021's --scatter-gather-tensors-in-pipeline).
  bool pp_scatter_gather = false;
  bool tp_comm_overlap = false;     // Transformer Engine's userbuffers overlap of TP communication with the GEMMs
  // Routing of an MoE model's tokens over its experts, replacing the model's
  // moe.routing: "uniform" or "zipf:S[:SEED]" (workload/generators/transformer/expert_load.h); empty: the model's.
  std::string routing;
};

struct TrainingSpec {
  OptionSpelling spelling = OptionSpelling::kFlags;  // as the options were written, for messages
  ModelConfig model;
  ParallelPlan plan;
  std::uint64_t global_batch = 0, micro_batch = 1, seq = 0;
  std::uint32_t microbatches = 0;  // per data-parallel replica: global_batch / (micro_batch x dp)
  std::uint32_t chunks = 1;        // model chunks per stage (interleaved: V)
  std::uint32_t zero = 0;
  Recompute recompute = Recompute::kNone;
  bool fp8 = false;
  // Core attention as Megatron-LM ran it before fused kernels (2021): two
  // batched GEMMs around a fused scale-mask-softmax over the s x s scores.
  bool unfused_attention = false;
  // Context parallelism's K and V all-gathered over the cp group before the
  // attention kernels (exposed), dK and dV reduce-scattered after the
  // backward ones: Transformer Engine's cp_comm_type "all_gather", the method
  // of the Llama 3 paper (section 3.3.2). Otherwise the ring (p2p) exchange.
  bool cp_all_gather = false;
  std::uint64_t bucket_params = 0;
  bool comm_free = false;
  bool layers_only = false;
  bool pp_scatter_gather = false;  // only with tp > 1 and without sp (the message is not split otherwise)
  bool tp_comm_overlap = false;  // (transformer_graph.cpp: which GEMMs, split how)
  // layers of each (stage, chunk): index stage * chunks + chunk; first layer and count.
  std::vector<std::uint64_t> chunk_first, chunk_layers;

  std::uint64_t first_layer(std::uint32_t stage, std::uint32_t chunk) const { return chunk_first[stage * chunks + chunk]; }
  std::uint64_t layers_in(std::uint32_t stage, std::uint32_t chunk) const { return chunk_layers[stage * chunks + chunk]; }
  std::uint64_t seq_local() const { return seq / plan.cp; }                 // tokens of a sequence on one CP rank
  std::uint64_t tokens() const { return micro_batch * seq_local(); }        // tokens of a micro-batch on one rank
  std::string describe() const;
  // "--seq" or "seq=" for `key`, as the options were written.
  std::string option(const std::string& key) const { return option_name(spelling, key); }
};

// Resolves the model (built-in name or YAML file) and checks everything:
// divisibility of heads, KV heads, hidden, FFN and vocabulary by tp, layers by
// pp (or the first/last stage sizes), the batch by micro-batch x dp, the
// sequence by cp (and by tp with sp), experts by ep, ...; that every FLOP,
// byte, element and tag count the generator writes fits a trace's int64
// (workload/generators/spec/quantity_limits.h). Throws InputError naming the
// options as they were written.
TrainingSpec make_training_spec(const TrainingOptions& options);
// The same with the model already read (options.model only names it).
TrainingSpec make_training_spec(const TrainingOptions& options, const ModelConfig& model);

// "uniform" or "zipf:S[:SEED]" (the routing option); InputError naming `given`.
RoutingConfig parse_routing(const std::string& text, const std::string& given);

// Parses "model=llama3-8b&parallel=tp=8,pp=2,dp=4&global-batch=64&seq=4096&..."
// (keys are the command's long option names); unknown keys are errors, and
// so is 0 for a count that must be at least 1.
TrainingOptions parse_training_query(const std::string& query);

}  // namespace sim::gen
