// Plans, models and options that cannot describe a training iteration are
// clear errors naming the option and what was expected (exit 2 from `sim`).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tests/common/run_sim.h"
#include "tests/workload/generators/generator_test_util.h"

namespace sim::testing {
namespace {

TEST_F(GeneratorTest, BadPlansAreClearErrors) {
  auto o = [](const std::string& parallel) { return options("llama3-8b", parallel, 8, 2048); };
  EXPECT_EQ(error_of(o("tp=3,pp=1,dp=1")),
            "--parallel tp=3,pp=1,dp=1: tp=3 must divide the model's 32 attention heads (built-in model llama3-8b)");
  EXPECT_EQ(error_of(o("tp=16,pp=1,dp=1")),
            "--parallel tp=16,pp=1,dp=1: tp=16 must divide the model's 8 key/value heads (built-in model llama3-8b)");
  EXPECT_EQ(error_of(o("tp=1,pp=3,dp=1")),
            "--parallel tp=1,pp=3,dp=1: pp=3 must divide the model's 32 layers (or give --first-stage-layers and "
            "--last-stage-layers)");
  EXPECT_EQ(error_of(o("tp=1,pp=1,dp=3")), "--global-batch 8 must be a multiple of --micro-batch x dp = 1 x 3");
  EXPECT_EQ(error_of(o("tp=1,pp=1,dp=1,cp=3")),
            "--parallel tp=1,pp=1,dp=1,cp=3: cp=3: 2 x cp must divide --seq 2048 (each sequence is cut into 2 x cp "
            "chunks, two per CP rank)");
  EXPECT_EQ(error_of(o("tp=1,pp=1,dp=1,sp")), "--parallel tp=1,pp=1,dp=1,sp: sp (sequence parallelism) needs tp > 1");
  EXPECT_EQ(error_of(o("tp=1,pp=1,dp=2,ep=2")), "--parallel tp=1,pp=1,dp=2,ep=2: ep=2 but llama3-8b has no experts");
  EXPECT_EQ(error_of(o("tp=2,pp=2,dp=2,ep=2,tp=4")), "--parallel 'tp=2,pp=2,dp=2,ep=2,tp=4': 'tp' given twice");
  EXPECT_EQ(error_of(o("tp=0")), "--parallel 'tp=0': tp must be a whole number from 1 to 1048576, got '0'");
  EXPECT_EQ(error_of(o("tp=2,xp=2")),
            "--parallel 'tp=2,xp=2': unknown item 'xp=2' (expected tp=N, pp=N, dp=N, cp=N, ep=N, etp=N or sp)");
  EXPECT_EQ(error_of(options("mixtral-8x7b", "tp=2,pp=1,dp=2,ep=2", 8, 2048)),
            "--parallel tp=2,pp=1,dp=2,ep=2: a mixture of experts with tp > 1 needs sp (as in Megatron-LM)");
  EXPECT_EQ(error_of(options("mixtral-8x7b", "tp=1,pp=1,dp=2,ep=3", 8, 2048)),
            "--parallel tp=1,pp=1,dp=2,ep=3: ep=3 must divide the model's 8 experts");
  EXPECT_EQ(error_of(options("no-such-model", "tp=1", 8, 2048)),
            "--model: 'no-such-model' is neither a built-in model (deepseek-v3, gpt3-175b, llama3-405b, llama3-70b, llama3-8b, "
            "mixtral-8x22b, mixtral-8x7b) nor a readable YAML file");
}

TEST_F(GeneratorTest, BadOptionsAreClearErrors) {
  gen::TrainingOptions o = options("llama3-8b", "tp=1,pp=4,dp=1", 6, 2048);
  o.schedule = "interleaved:2";
  EXPECT_EQ(error_of(o), "--schedule interleaved:2: the micro-batches per replica (6) must be a multiple of pp=4 "
                         "(Megatron-LM's interleaved schedule)");
  o.schedule = "gpipe";
  EXPECT_EQ(error_of(o), "--schedule 'gpipe': expected 1f1b or interleaved:V");
  o.schedule = "1f1b";
  o.zero = 4;
  EXPECT_EQ(error_of(o), "--zero must be 0, 1, 2 or 3, got 4");
  o.zero = 0;
  o.recompute = "some";
  EXPECT_EQ(error_of(o), "--recompute 'some': expected none, selective or full");
  o.recompute = "none";
  o.dtype = "fp4";
  EXPECT_EQ(error_of(o), "--dtype 'fp4': expected bf16 or fp8");
  gen::TrainingOptions f = options("llama3-405b", "tp=8,pp=16,dp=1", 16, 8192);
  f.first_stage_layers = 7;
  f.last_stage_layers = 8;
  EXPECT_EQ(error_of(f), "--first-stage-layers 7 and --last-stage-layers 8 leave 111 of the model's 126 layers for "
                         "the 14 inner stages: they must split evenly, at least one each");
  f.last_stage_layers = 120;
  EXPECT_EQ(error_of(f), "--first-stage-layers 7 and --last-stage-layers 120 add up to 127 layers, more than the "
                         "model's 126");
  gen::TrainingOptions two = options("llama3-405b", "tp=8,pp=2,dp=1", 16, 8192);
  two.first_stage_layers = 60;
  two.last_stage_layers = 60;
  EXPECT_EQ(error_of(two), "--first-stage-layers 60 and --last-stage-layers 60 add up to 120 of the model's 126 "
                           "layers: with pp=2 there is no inner stage, so the two stages hold them all");
  f.last_stage_layers = 7;
  EXPECT_EQ(error_of(f), "(no error)");
  EXPECT_THROW(gen::parse_training_query("model=llama3-8b&parallel=tp=1&colour=blue"), InputError);
}

TEST_F(GeneratorTest, BadModelFilesNameFileLineAndKey) {
  const std::string bad = model_file("bad", "layers: 4\nhidden: 64\nffn_hidden: 256\nheads: 4\nvocab: 128\nlayer: 3\n");
  EXPECT_EQ(error_of(options(bad, "tp=1", 8, 32)), bad + ":6: unknown key 'layer' (allowed: name, layers, hidden, "
                                                  "ffn_hidden, heads, kv_heads, vocab, mlp, norm, bias, tied_embeddings, dropout, moe, mla)");
  const std::string heads = model_file("heads", "layers: 4\nhidden: 64\nffn_hidden: 256\nheads: 5\nvocab: 128\n");
  EXPECT_EQ(error_of(options(heads, "tp=1", 8, 32)), heads + ":4: hidden (64) must be a multiple of heads (5)");
}

TEST_F(GeneratorTest, CommandLineWritesFilesThatRunLikeTheInMemoryWorkload) {
  const std::string sys = path("sys.yml");
  std::ofstream(sys) << "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3350GB/s\n";
  const std::string net = shipped_config("switch8.yml");
  const std::string args = "--model llama3-8b --parallel tp=2,pp=2,dp=2,sp --global-batch 8 --seq 1024";
  SimRun gen = run_sim("workload gen transformer " + args + " -o " + path("wl/llama"));
  ASSERT_EQ(gen.code, 0) << gen.output;
  EXPECT_NE(gen.output.find("wrote 8 ranks"), std::string::npos) << gen.output;
  SimRun files = run_sim("--workload " + path("wl/llama") + " --network " + net + " --system " + sys + " --report " +
                         path("files.json") + " -q");
  ASSERT_EQ(files.code, 0) << files.output;
  SimRun memory = run_sim("--workload 'gen:transformer?model=llama3-8b&parallel=tp=2,pp=2,dp=2,sp&global-batch=8&seq=1024' "
                          "--network " + net + " --system " + sys + " --report " + path("memory.json") + " -q");
  ASSERT_EQ(memory.code, 0) << memory.output;
  const auto a = nlohmann::json::parse(read(path("files.json"))), b = nlohmann::json::parse(read(path("memory.json")));
  EXPECT_EQ(a["sim_time_ns"], b["sim_time_ns"]);
  EXPECT_GT(a["sim_time_ns"].get<double>(), 0);
  EXPECT_EQ(a["training"]["model_flops"], b["training"]["model_flops"]);
  // 3 B s (l (2h(h + 2 h_kv) + 4 s h + 2 h^2 + 6 h f) + 2 h V) for llama3-8b, B = 8, s = 1024.
  const double h = 4096, hkv = 1024, f = 14336, V = 128256, s = 1024;
  EXPECT_EQ(a["training"]["model_flops"].get<double>(),
            3 * 8 * s * (32 * (2 * h * (h + 2 * hkv) + 4 * s * h + 2 * h * h + 6 * h * f) + 2 * h * V));
  const double tflops = a["training"]["model_flops"].get<double>() / (8 * a["sim_time_ns"].get<double>() * 1e-9) / 1e12;
  EXPECT_NEAR(a["training"]["model_tflops_per_gpu"].get<double>(), tflops, 1e-9 * tflops);
  EXPECT_NEAR(a["training"]["mfu"].get<double>(), tflops / 989, 1e-9);
  // A bad plan: exit 2, the reason, nothing written.
  SimRun bad = run_sim("workload gen transformer --model llama3-8b --parallel tp=3 --global-batch 8 --seq 1024 -o " +
                       path("bad/x"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("tp=3 must divide the model's 32 attention heads"), std::string::npos) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(path("bad")));
}

// MFU divides by the peak of the dtype the GEMMs run in: an fp8 iteration by
// fp8's peak (against bf16's it would pass 100% on an H100), in memory and
// from the files the generator wrote (their metadata names the dtype).
TEST_F(GeneratorTest, MfuOfAnFp8IterationIsAgainstTheFp8Peak) {
  const std::string sys = path("sys.yml");
  std::ofstream(sys) << "compute:\n  peak_tflops: {bf16: 989, fp8: 1979, default: 67}\n  memory_bandwidth: 3350GB/s\n";
  const std::string net = shipped_config("switch8.yml");
  const std::string args = "--model llama3-8b --parallel tp=2,pp=2,dp=2,sp --global-batch 8 --seq 1024 --dtype fp8";
  SimRun gen = run_sim("workload gen transformer " + args + " -o " + path("wl/fp8"));
  ASSERT_EQ(gen.code, 0) << gen.output;
  for (const std::string& workload :
       {path("wl/fp8"),
        std::string("'gen:transformer?model=llama3-8b&parallel=tp=2,pp=2,dp=2,sp&global-batch=8&seq=1024&dtype=fp8'")}) {
    SimRun run = run_sim("--workload " + workload + " --network " + net + " --system " + sys + " --report " +
                         path("fp8.json") + " -q");
    ASSERT_EQ(run.code, 0) << run.output;
    const auto t = nlohmann::json::parse(read(path("fp8.json")))["training"];
    EXPECT_EQ(t["peak_tflops_per_gpu"].get<double>(), 1979) << workload;
    EXPECT_NEAR(t["mfu"].get<double>(), t["model_tflops_per_gpu"].get<double>() / 1979, 1e-12) << workload;
  }
  // The same plan in bf16 against bf16's peak.
  SimRun bf16 = run_sim("--workload 'gen:transformer?model=llama3-8b&parallel=tp=2,pp=2,dp=2,sp&global-batch=8&seq=1024' "
                        "--network " + net + " --system " + sys + " --report " + path("bf16.json") + " -q");
  ASSERT_EQ(bf16.code, 0) << bf16.output;
  EXPECT_EQ(nlohmann::json::parse(read(path("bf16.json")))["training"]["peak_tflops_per_gpu"].get<double>(), 989);
}

}  // namespace
}  // namespace sim::testing
