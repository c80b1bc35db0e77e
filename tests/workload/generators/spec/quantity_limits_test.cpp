// Sizes whose counts (FLOPs, bytes, elements, nodes) a trace cannot hold are
// refused up front naming the options as the user wrote them (seq= in a
// gen:transformer query, --seq on the command line) and the model's keys;
// large sizes that do fit give the exact answer.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/time.h"
#include "tests/common/run_sim.h"
#include "tests/workload/generators/generator_test_util.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/transformer_workload.h"

namespace sim::testing {
namespace {

std::string query_error(const std::string& workload) {
  try {
    gen::generated_workload_spec(workload);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// seq 2^26 at tp 2: one attention kernel's backward FLOPs are 8 x 2^52 x 2048
// = 2^66 (wrapped to an MFU of 140,135 % once).
TEST_F(GeneratorTest, AttentionFlopsPastInt64NameSeqAsWritten) {
  const std::string q = query_error(
      "gen:transformer?model=llama3-8b&parallel=tp=2,pp=1,dp=1&"
      "global-batch=1&seq=67108864");
  EXPECT_EQ(q,
            "gen:transformer: seq=67108864 with micro-batch=1: one "
            "attention kernel's FLOPs (8 x micro-batch x "
            "(seq / cp)^2 x hidden / tp = 8 x 1 x 67108864^2 x 2048) passes "
            "2^64 - 1, the most a trace's int64 "
            "holds: lower seq= or micro-batch=, or raise cp in parallel= "
            "(hidden 4096 of built-in model llama3-8b)");
  const std::string f = error_of(options("llama3-8b", "tp=2,pp=1,dp=1", 1, 67108864));
  EXPECT_TRUE(starts_with(f, "--seq 67108864 with --micro-batch 1: one attention kernel's FLOPs")) << f;
  EXPECT_NE(f.find("lower --seq or --micro-batch, or raise cp in --parallel"), std::string::npos) << f;
}

TEST_F(GeneratorTest, HugeSequenceOrVocabularyNamesTheOptionAndTheModelKey) {
  EXPECT_TRUE(starts_with(query_error("gen:transformer?model=llama3-8b&parallel=tp=1&"
                                      "global-batch=1&seq=1000000000000"),
                          "gen:transformer: seq=1000000000000 with micro-batch=1: one "
                          "attention kernel's FLOPs"));
  const std::string vocab = model_file("vocab", llama_yaml(2, 4096, 14336, 32, 8, 1000000000000));
  const std::string v = error_of(options(vocab, "tp=1", 1, 2048));
  EXPECT_EQ(v,
            "--seq 2048 with --micro-batch 1: the output layer GEMM's FLOPs or "
            "bytes (tokens x its width x hidden) "
            "is 16777216000000000000, past 2^63 - 1, the most a trace's int64 "
            "holds: lower --seq or --micro-batch, "
            "or raise tp in --parallel (hidden 4096, vocab 1000000000000 of " +
                vocab + ")");
  // hidden 2^22, FFN 2^24 (SwiGLU: FC1 2^25 wide / tp), seq 2^18: FC1 is 2^65
  // FLOPs (wrapped to MFU 358 % once).
  const std::string wide = model_file("wide", llama_yaml(2, 4194304, 16777216, 32, 8, 32000));
  EXPECT_EQ(error_of(options(wide, "tp=2", 1, 262144)),
            "--seq 262144 with --micro-batch 1: the MLP FC1 GEMM's FLOPs or "
            "bytes (tokens x its width x hidden) passes "
            "2^64 - 1, the most a trace's int64 holds: lower --seq or "
            "--micro-batch, or raise tp in --parallel (hidden "
            "4194304, ffn_hidden 16777216 of " +
                wide + ")");
}

// seq 2^24 at tp 2: the attention kernel's backward FLOPs are exactly 2^62
// and the iteration's model FLOPs pass 2^63 (kept as a double): the counts
// the nodes carry add up to the closed form, and the run reports it.
TEST_F(GeneratorTest, LargeButRepresentableSequenceGivesTheClosedForm) {
  const gen::TrainingSpec spec = gen::generated_workload_spec(
      "gen:transformer?model=llama3-8b&parallel=tp=2,pp=1,dp=1&global-batch=1&"
      "seq=16777216");
  using u128 = uint128;  // core/time.h
  const u128 h = 4096, hkv = 1024, f = 14336, V = 128256, s = 16777216;
  const u128 exact = 3 * s * (32 * (2 * h * (h + 2 * hkv) + 4 * s * h + 2 * h * h + 6 * h * f) + 2 * h * V);
  EXPECT_GT(exact >> 63, 0u);
  EXPECT_FALSE(gen::model_flops_fit_64_bits(spec));
  EXPECT_EQ(gen::model_flops_per_iteration(spec), static_cast<double>(exact));
  u128 counted = 0;
  std::int64_t largest = 0;
  each_node(spec, [&](std::uint32_t, const et::Node& n) {
    if (n.type() != et::COMP_NODE || recomputed(n)) return;
    const std::int64_t ops = attr_int(n, "num_ops").value_or(0);
    counted += static_cast<u128>(ops);
    largest = std::max(largest, ops);
  });
  EXPECT_EQ(counted, exact);
  EXPECT_EQ(largest, std::int64_t{1} << 62);  // the attention kernel's backward pass
}

TEST_F(GeneratorTest, TooManyNodesForARankAreRefusedAtOnce) {
  // 2^24 micro-batches of llama3-8b's 32 layers: at least 24 x 32 x 2^24 nodes
  // on one rank.
  EXPECT_EQ(query_error("gen:transformer?model=llama3-8b&parallel=tp=1&global-"
                        "batch=16777216&seq=128"),
            "gen:transformer: global-batch=16777216: a rank would hold at "
            "least 12884901888 nodes (24 per layer and "
            "micro-batch x 32 layers on a stage x 16777216 micro-batches), "
            "more than a rank holds (2^32 - 1): lower "
            "global-batch=, raise micro-batch= or pp in parallel=, or use "
            "fewer layers (layers 32 of built-in model "
            "llama3-8b)");
  const std::string billion = model_file("billion", llama_yaml(1000000000, 64, 256, 4, 4, 128));
  const std::string b = error_of(options(billion, "tp=1", 1, 16));
  EXPECT_TRUE(starts_with(b, "--global-batch 1: a rank would hold at least 24000000000 nodes")) << b;
  EXPECT_NE(b.find("(layers 1000000000 of " + billion + ")"), std::string::npos) << b;
}

// 64 ranks of 3.2e9 nodes each fit a rank's limit but not any machine's
// memory: refused before the first graph is built, with the estimate (on a
// torus: no replicas folded, every rank held). A run that built them would
// not end within the test's timeout.
TEST_F(GeneratorTest, GraphsLargerThanMemoryAreRefusedBeforeGenerating) {
  const std::string sys = path("sys.yml");
  std::ofstream(sys) << "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3350GB/s\n";
  const SimRun run = run_sim(
      "--workload "
      "'gen:transformer?model=llama3-8b&parallel=tp=1,pp=1,dp=64&"
      "global-batch=268435456&seq=128' "
      "--network " +
      shipped_config("torus8x8.yml") + " --system " + sys + " -q");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("sim: error: gen:transformer: the workload is too large "
                            "for the memory available: 64 "
                            "rank(s) held at once of at least 3221225472 nodes"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("lower global-batch=, raise micro-batch="), std::string::npos) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
}

TEST_F(GeneratorTest, ZeroCountsAreErrorsNamingTheKey) {
  const std::string base =
      "gen:transformer?model=llama3-8b&parallel=tp=1,pp=4,"
      "dp=1&global-batch=8&seq=128";
  EXPECT_EQ(query_error(base + "&first-stage-layers=0&last-stage-layers=8"),
            "gen:transformer: first-stage-layers=0: must be from 1 to the "
            "model's layers - 1 (layers on the first "
            "pipeline stage; leave it out to split the layers evenly)");
  EXPECT_EQ(query_error(base + "&bucket-params=0"),
            "gen:transformer: bucket-params=0: must be at least 1 (parameters "
            "per gradient bucket; leave it out for "
            "Megatron-LM's default max(4e7, 1e6 x dp x cp))");
  EXPECT_EQ(query_error("gen:transformer?model=llama3-8b&parallel=tp=1&global-"
                        "batch=0&seq=128"),
            "gen:transformer: global-batch=0: must be at least 1 (sequences "
            "per iteration)");
  EXPECT_EQ(query_error("gen:transformer?model=llama3-8b&parallel=tp=1&global-batch=8"),
            "gen:transformer: seq= is required (tokens per sequence, at least 1)");
  gen::TrainingOptions o = options("llama3-8b", "tp=1", 0, 128);
  EXPECT_EQ(error_of(o), "--global-batch 0: must be at least 1 (sequences per iteration)");
  // On the command line too: an explicit 0 is not the default.
  const SimRun cli = run_sim(
      "workload gen transformer --model llama3-8b "
      "--parallel tp=1 --global-batch 8 --seq 128 "
      "--bucket-params 0 -o " +
      path("wl/x"));
  EXPECT_EQ(cli.code, 2) << cli.output;
  EXPECT_NE(cli.output.find("sim: error: --bucket-params 0: must be at least 1"), std::string::npos) << cli.output;
  EXPECT_FALSE(std::filesystem::exists(path("wl")));
}

TEST_F(GeneratorTest, QueryErrorsNameTheQueryKeys) {
  const std::string q = "gen:transformer?model=llama3-8b&global-batch=8&seq=2048";
  EXPECT_EQ(query_error(q + "&parallel=tp=3"),
            "gen:transformer: parallel=tp=3,pp=1,dp=1: tp=3 must divide the "
            "model's 32 attention heads (built-in "
            "model llama3-8b)");
  EXPECT_EQ(query_error(q + "&parallel=tp=1,pp=1,dp=3"),
            "gen:transformer: global-batch=8 must be a multiple of "
            "micro-batch= x dp = 1 x 3");
  EXPECT_EQ(query_error(q + "&parallel=tp=1&schedule=gpipe"),
            "gen:transformer: schedule=gpipe: expected 1f1b or interleaved:V");
  EXPECT_EQ(query_error(q + "&parallel=tp=1,cp=3"),
            "gen:transformer: parallel=tp=1,pp=1,dp=1,cp=3: cp=3: 2 x cp must "
            "divide seq=2048 (each sequence is cut "
            "into 2 x cp chunks, two per CP rank)");
  EXPECT_EQ(query_error(q + "&parallel=tp=0"),
            "gen:transformer: parallel=tp=0: tp must be a whole number from 1 to "
            "1048576, got '0'");
  EXPECT_EQ(query_error("gen:transformer?model=nope&parallel=tp=1&global-batch=8&seq=2048"),
            "gen:transformer: model=nope is neither a built-in model (deepseek-v3, gpt3-175b, "
            "llama3-405b, llama3-70b, llama3-8b, "
            "mixtral-8x22b, mixtral-8x7b) nor a readable YAML file");
  EXPECT_EQ(query_error("gen:transformer?model=llama3-8b&parallel=tp=1&global-batch=8&seq=x"),
            "gen:transformer: seq= must be a whole number from 0 to "
            "18446744073709551615, got 'x'");
  for (const std::string& e :
       {query_error(q + "&parallel=tp=1&tp-comm-overlap"), query_error(q + "&parallel=tp=1&zero=5"),
        query_error(q + "&parallel=tp=1,pp=2&first-stage-layers=3&last-stage-layers=3")}) {
    EXPECT_EQ(e.find("--"), std::string::npos) << e;  // no command-line flag in a query's message
  }
}

}  // namespace
}  // namespace sim::testing
