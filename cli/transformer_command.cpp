#include "cli/transformer_command.h"

#include <utility>

#include "cli/option_checks.h"
#include "workload/generators/spec/model.h"
#include "workload/generators/transformer/transformer_workload.h"

namespace sim {

void add_transformer_command(CLI::App& workload_gen, TransformerCommand& c) {
  std::string models;
  for (const std::string& n : gen::builtin_model_names()) models += (models.empty() ? "" : ", ") + n;
  c.app = workload_gen.add_subcommand(
      "transformer",
      "one Megatron-style training iteration of a transformer as per-rank Chakra ETs <prefix>.<rank>.et "
      "(docs/generators.md); the same in memory: --workload 'gen:transformer?model=...&parallel=...'");
  gen::TrainingOptions& o = c.options;
  c.app->add_option("--model", o.model, "built-in model (" + models + ") or a model YAML file")->required();
  c.app->add_option("--parallel", o.parallel, "parallel plan tp=T,pp=P,dp=D[,cp=C,ep=E,sp]")->required();
  c.app->add_option("--global-batch", o.global_batch, "sequences per iteration")->required();
  c.app->add_option("--micro-batch", o.micro_batch, "sequences per micro-batch (default 1)");
  c.app->add_option("--seq", o.seq, "tokens per sequence")->required();
  c.app->add_option("--schedule", o.schedule, "pipeline schedule: 1f1b (default) or interleaved:V (V chunks per stage)");
  c.app->add_option("--zero", o.zero, "ZeRO stage 0..3 (1, 2: distributed optimizer; 3: parameters sharded too)");
  c.app->add_option("--recompute", o.recompute, "activation recomputation: none (default), selective, full");
  c.app->add_option("--dtype", o.dtype, "GEMM precision: bf16 (default) or fp8");
  c.app->add_option("--attention", o.attention,
                    "core attention: fused (default; one kernel, FlashAttention) or unfused (batched GEMMs around a "
                    "softmax over the scores, Megatron-LM before fused kernels)");
  c.app->add_option("--cp-comm", o.cp_comm,
                    "context parallelism's exchange: p2p (default; ring attention, K/V passed around the cp ring "
                    "beside the kernels) or all-gather (K/V gathered first, exposed: the Llama 3 paper's)");
  c.app->add_option("--first-stage-layers", o.first_stage_layers,
                    "layers on the first pipeline stage (with --last-stage-layers; the rest split evenly)");
  c.app->add_option("--last-stage-layers", o.last_stage_layers, "layers on the last pipeline stage");
  c.app->add_option("--bucket-params", o.bucket_params,
                    "parameters per data-parallel gradient bucket (default Megatron's max(4e7, 1e6 x dp x cp))");
  c.app->add_option("--routing", o.routing,
                    "MoE routing over the experts: uniform or zipf:S[:SEED] (default: the model's moe.routing)")
      ->check(not_empty("value"));
  c.app->add_flag("--comm-free", o.comm_free, "every communication carries 0 B: the schedule and compute alone");
  c.app->add_flag("--layers-only", o.layers_only,
                  "only the transformer layers (no embedding, output layer, loss): equal pipeline stages");
  c.app->add_flag("--pp-scatter-gather", o.pp_scatter_gather,
                  "pipeline messages split over the tensor-parallel ranks and all-gathered at the receiver "
                  "(Megatron-LM 2021; needs tp > 1 without sp)");
  c.app->add_flag("--tp-comm-overlap", o.tp_comm_overlap,
                  "Transformer Engine's overlap of the sequence-parallel all-gathers and reduce-scatters with the "
                  "GEMMs (NeMo's ub_tp_comm_overlap; needs sp)");
  c.app->add_option("--threads", c.threads, "generating threads (default: one per core)");
  c.app->add_option("-o,--output", c.prefix, "output prefix")->required();
}

int run_transformer_command(const TransformerCommand& c, std::ostream& out) {
  // 0 is how the options say "not given": a typed 0 is refused, not read as the default.
  const gen::TrainingOptions& o = c.options;
  for (const auto& [key, value] : {std::pair<const char*, std::uint64_t>{"first-stage-layers", o.first_stage_layers},
                                   {"last-stage-layers", o.last_stage_layers},
                                   {"bucket-params", o.bucket_params}}) {
    if (c.app->get_option(std::string("--") + key)->count() > 0) gen::check_given_count(o.spelling, key, value);
  }
  return gen::write_transformer_workload(c.options, c.prefix, out, c.threads);
}

}  // namespace sim
