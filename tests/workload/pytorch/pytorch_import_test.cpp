// PyTorch host execution traces + Kineto device traces imported as Chakra ETs
// (workload/pytorch/). The real traces in ../shared/testdata/pytorch are read
// here a second time, independently of the importer (zlib + nlohmann), and
// the imported ETs and their replay are checked against them.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../../common/run_sim.h"
#include "../../common/temp_folder.h"
#include "core/error.h"
#include "pytorch_traces.h"
#include "workload/et/et_io.h"
#include "workload/pytorch/pytorch_import.h"

namespace sim::pytorch {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using sim::testing::cpu_event;
using sim::testing::op;
using sim::testing::pytorch_testdata;
using sim::testing::run_sim;

#define SKIP_WITHOUT(dir) \
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << (dir) << " (../shared/testdata)"

json read_gz_json(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string text;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return json::parse(text);
}

std::uint64_t tensor_list_bytes(const json& v) {
  if (v.is_array() && v.size() == 6 && v[5].is_string() && v[0].is_number_integer()) {
    return v[3].get<std::uint64_t>() * v[4].get<std::uint64_t>();
  }
  std::uint64_t b = 0;
  if (v.is_array()) {
    for (const json& e : v) b += tensor_list_bytes(e);
  }
  return b;
}

std::uint64_t attr_u64(const json& node, const std::string& name) {
  for (const json& a : node["attrs"]) {
    if (a["name"] == name) return a["value"].get<std::uint64_t>();
  }
  return 0;
}

struct Coll {
  std::string type;
  std::uint64_t bytes = 0;
  bool operator==(const Coll&) const = default;
};

// The c10d collectives of a host trace, in issue (rf_id) order, by their own schemas.
std::vector<Coll> host_c10d_collectives(const std::string& path) {
  const json j = read_gz_json(path);
  std::vector<std::pair<std::uint64_t, Coll>> found;
  for (const json& n : j["nodes"]) {
    const std::string name = n["name"];
    const json& v = n["inputs"]["values"];
    Coll c;
    if (name == "c10d::allreduce_") c = {"ALL_REDUCE", tensor_list_bytes(v[0])};
    else if (name == "c10d::allgather_") c = {"ALL_GATHER", tensor_list_bytes(v[1])};  // one rank's input
    else if (name == "c10d::broadcast_") c = {"BROADCAST", tensor_list_bytes(v[0])};
    else if (name == "c10d::barrier") c = {"BARRIER", 0};
    else {
      EXPECT_NE(name.rfind("c10d::", 0), 0u) << "a c10d op this test does not know: " << name;
      continue;
    }
    found.emplace_back(attr_u64(n, "rf_id"), c);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Coll> out;
  for (auto& [rf, c] : found) out.push_back(c);
  return out;
}

struct Imported {
  std::vector<EtTrace> ranks;
  ImportSummary summary;
};

Imported import_dir(const std::string& dir, bool with_kineto = true) {
  Imported out;
  const auto files = resolve_pytorch_files({dir}, with_kineto ? std::vector<std::string>{dir} : std::vector<std::string>{});
  import_pytorch(files, [&](int, EtTrace&& et) { out.ranks.push_back(std::move(et)); }, out.summary);
  return out;
}

std::vector<std::pair<Coll, std::string>> et_collectives(const EtTrace& t) {
  static const char* kNames[] = {"ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL",
                                 "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
  std::vector<std::pair<Coll, std::string>> out;
  for (const et::Node& n : t.nodes) {
    if (n.type() != et::COMM_COLL_NODE) continue;
    out.push_back({Coll{kNames[*attr_int(n, "comm_type")], static_cast<std::uint64_t>(*attr_int(n, "comm_size"))},
                   attr_string(n, "pg_name").value_or("")});
  }
  return out;
}

// pg_name -> ranks, from the METADATA node the importer writes.
std::map<std::string, std::vector<int>> et_groups(const EtTrace& t, int world) {
  std::map<std::string, std::vector<int>> out;
  for (const et::Node& n : t.nodes) {
    if (n.type() != et::METADATA_NODE) continue;
    for (const json& g : json::parse(n.inputs().values())) {
      std::vector<int> ranks = g["ranks"].get<std::vector<int>>();
      if (ranks.empty()) {
        for (int r = 0; r < world; ++r) ranks.push_back(r);
      }
      out[g["pg_name"]] = ranks;
    }
  }
  return out;
}

TEST(PytorchDdpGloo, CollectivesEqualTheHostTracesC10dOps) {
  const std::string dir = pytorch_testdata("ddp4-gloo-h100");
  SKIP_WITHOUT(dir);
  const Imported im = import_dir(dir);
  ASSERT_EQ(im.ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const std::vector<Coll> host = host_c10d_collectives(dir + "/et_rank" + std::to_string(r) + ".json.gz");
    ASSERT_EQ(host.size(), 18u) << "rank " << r;  // 15 all-reduces (14 DDP buckets + 1 subgroup), all-gather, broadcast, barrier
    std::vector<Coll> mine;
    for (const auto& [c, pg] : et_collectives(im.ranks[static_cast<std::size_t>(r)])) mine.push_back(c);
    ASSERT_EQ(mine.size(), host.size()) << "rank " << r;
    for (std::size_t i = 0; i < host.size(); ++i) {
      EXPECT_EQ(mine[i].type, host[i].type) << "rank " << r << " collective " << i;
      EXPECT_EQ(mine[i].bytes, host[i].bytes) << "rank " << r << " collective " << i;
    }
  }
}

TEST(PytorchDdpGloo, SubgroupAllReduceLandsOnRanks01And23AndTheRestOnAll) {
  const std::string dir = pytorch_testdata("ddp4-gloo-h100");
  SKIP_WITHOUT(dir);
  const Imported im = import_dir(dir);
  ASSERT_EQ(im.ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const auto groups = et_groups(im.ranks[static_cast<std::size_t>(r)], 4);
    int subgroup = 0;
    for (const auto& [c, pg] : et_collectives(im.ranks[static_cast<std::size_t>(r)])) {
      ASSERT_TRUE(groups.count(pg)) << "rank " << r << ": pg_name '" << pg << "' has no METADATA definition";
      const std::vector<int>& ranks = groups.at(pg);
      // dist.all_reduce(t, group=mine) of torch.ones(1 << 20): 4 MiB, the only collective of that size.
      if (c.type == "ALL_REDUCE" && c.bytes == (1u << 20) * 4) {
        ++subgroup;
        EXPECT_EQ(ranks, (r < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3})) << "rank " << r;
      } else {
        EXPECT_EQ(ranks, (std::vector<int>{0, 1, 2, 3})) << "rank " << r << " " << c.type << " " << c.bytes;
      }
    }
    EXPECT_EQ(subgroup, 1) << "rank " << r;
  }
}

// Each matrix product's longest kernel carries its shape, read here from the host JSON itself.
TEST(PytorchDdpGloo, MatrixProductKernelsCarryTheirGemmShape) {
  const std::string dir = pytorch_testdata("ddp4-gloo-h100");
  SKIP_WITHOUT(dir);
  const json host = read_gz_json(dir + "/et_rank0.json.gz");
  std::multiset<std::tuple<std::int64_t, std::int64_t, std::int64_t>> want;  // (m, n, k)
  for (const json& n : host["nodes"]) {
    const std::string name = n["name"];
    if (name != "aten::mm" && name != "aten::addmm") continue;
    const json& sh = n["inputs"]["shapes"];
    const json& a = sh[name == "aten::mm" ? 0 : 1];
    const json& b = sh[name == "aten::mm" ? 1 : 2];
    want.insert({a[0].get<std::int64_t>(), b[1].get<std::int64_t>(), a[1].get<std::int64_t>()});
  }
  ASSERT_EQ(want.size(), 51u);  // 38 mm + 13 addmm in this step
  const Imported im = import_dir(dir);
  std::multiset<std::tuple<std::int64_t, std::int64_t, std::int64_t>> got;
  for (const et::Node& n : im.ranks[0].nodes) {
    if (attr_string(n, "kernel").value_or("") != "gemm") continue;
    const std::int64_t m = *attr_int(n, "gemm_m"), nn = *attr_int(n, "gemm_n"), k = *attr_int(n, "gemm_k");
    got.insert({m, nn, k});
    EXPECT_EQ(*attr_int(n, "num_ops"), 2 * m * nn * k);
    EXPECT_EQ(attr_string(n, "dtype").value_or(""), "bf16");  // autocast to bfloat16
    EXPECT_EQ(*attr_int(n, "tensor_size"), (m * k + k * nn + m * nn) * 2);
  }
  EXPECT_EQ(got, want);
}

double union_ns(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, s = -1, e = -1;
  for (const auto& [a, b] : iv) {
    if (s < 0 || a > e) {
      if (s >= 0) total += e - s;
      s = a;
      e = b;
    } else {
      e = std::max(e, b);
    }
  }
  return s >= 0 ? total + e - s : 0;
}

class PytorchReplay : public sim::testing::TempFolderTest {};

// Zero latency, unlimited bandwidth: only compute remains, so each rank's GPU
// is busy for what Kineto measured, and the step is no longer than profiled.
TEST_F(PytorchReplay, ZeroCostNetworkGpuBusyMatchesKinetoAndStepIsNoLonger) {
  const std::string dir = pytorch_testdata("ddp4-gloo-h100");
  SKIP_WITHOUT(dir);
  const auto imp = run_sim("workload import pytorch --host-et " + dir + " --kineto " + dir + " -o " + path("ddp"));
  ASSERT_EQ(imp.code, 0) << imp.output;
  std::ofstream(path("ideal.yml")) << "shape: Switch\nnpus: 4\nbandwidth: 1000000000GB/s\nlatency: 0ns\n";
  const auto run = run_sim("--workload " + path("ddp") + " --network " + path("ideal.yml") + " -q --timeline " +
                           path("t.json"));
  ASSERT_EQ(run.code, 0) << run.output;
  const json t = json::parse(read(path("t.json")));
  std::map<std::pair<int, int>, std::string> track;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") track[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  std::map<int, std::vector<std::pair<double, double>>> gpu_all, gpu_kernels;
  std::map<int, double> end;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int rank = e["pid"];
    const double s = e["args"]["start_ns"], f = e["args"]["end_ns"];
    end[rank] = std::max(end[rank], f);
    if (track[{rank, e["tid"]}] != "GPU compute") continue;
    gpu_all[rank].emplace_back(s, f);
    const std::string name = e["name"];
    if (name.rfind("Memcpy", 0) != 0 && name.rfind("Memset", 0) != 0) gpu_kernels[rank].emplace_back(s, f);
  }
  for (int r = 0; r < 4; ++r) {
    const json k = read_gz_json(dir + "/kineto_rank" + std::to_string(r) + ".json.gz");
    std::vector<std::pair<double, double>> kernels, all;
    double step_ns = 0;
    for (const json& e : k["traceEvents"]) {
      const std::string cat = e.value("cat", "");
      if (cat == "user_annotation" && e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) step_ns = e["dur"].get<double>() * 1e3;
      if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
      const double s = e["ts"].get<double>() * 1e3, f = s + e["dur"].get<double>() * 1e3;
      all.emplace_back(s, f);
      if (cat == "kernel") kernels.emplace_back(s, f);
    }
    const double want_kernels = union_ns(kernels), want_all = union_ns(all);
    ASSERT_GT(want_kernels, 0);
    // 5%: durations are whole microseconds in Chakra ETs (each kernel rounded),
    // and kernels Kineto saw overlap on different streams run one at a time here.
    EXPECT_NEAR(union_ns(gpu_kernels[r]), want_kernels, 0.05 * want_kernels) << "rank " << r << ": kernels";
    EXPECT_NEAR(union_ns(gpu_all[r]), want_all, 0.05 * want_all) << "rank " << r << ": kernels, copies and sets";
    ASSERT_GT(step_ns, 0) << "rank " << r << ": no ProfilerStep# span";
    EXPECT_LE(end[r], step_ns) << "rank " << r;
  }
}

TEST_F(PytorchReplay, PytorchSchemeRunsTheFolderDirectly) {
  const std::string dir = pytorch_testdata("ddp4-gloo-h100");
  SKIP_WITHOUT(dir);
  std::ofstream(path("ideal.yml")) << "shape: Switch\nnpus: 4\nbandwidth: 1000000000GB/s\nlatency: 0ns\n";
  const auto run = run_sim("--workload pytorch:" + dir + " --network " + path("ideal.yml") + " --report " + path("r.json"));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("4 ranks"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("ALL_GATHER 1 MiB"), std::string::npos) << run.output;  // 4 x 256 Ki floats
}

TEST_F(PytorchReplay, Chakra102SampleImportsRunsAndItsNcclAllGatherHasItsBytes) {
  const std::string dir = pytorch_testdata("chakra-1.0.2");
  SKIP_WITHOUT(dir);
  const Imported im = import_dir(dir, /*with_kineto=*/false);
  ASSERT_EQ(im.ranks.size(), 1u);
  const auto colls = et_collectives(im.ranks[0]);
  // Independently: the trace's c10d::allgather_ ops and their per-rank input.
  const std::vector<Coll> host = host_c10d_collectives(dir + "/1.0.2-chakra.0.0.4.json.gz");
  ASSERT_FALSE(host.empty());
  ASSERT_EQ(colls.size(), host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    EXPECT_EQ(colls[i].first.type, "ALL_GATHER");
    EXPECT_EQ(colls[i].first.bytes, host[i].bytes);
    EXPECT_EQ(colls[i].first.bytes, 4u);  // one float per rank
    EXPECT_EQ(colls[i].second, "0");      // record_param_comms' backend id, resolved through process_group:init
  }
  bool warned = false;
  for (const std::string& w : im.summary.warnings) warned |= w.find("no Kineto trace") != std::string::npos;
  EXPECT_TRUE(warned);
  std::ofstream(path("two.yml")) << "shape: Switch\nnpus: 2\nbandwidth: 50GB/s\nlatency: 500ns\n";
  const auto run = run_sim("--workload pytorch:" + dir + " --network " + path("two.yml"));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("ALL_GATHER 4 B"), std::string::npos) << run.output;
}

// --- small synthetic traces ---------------------------------------------------

json versioned_host_trace(const std::string& schema, int pid, json nodes) {
  json root = op(1, "[pytorch|profiler|execution_trace|process]", 1, 0, json::array(), json::array(), 7);
  json thread = op(2, "[pytorch|profiler|execution_trace|thread]", 1, 0, json::array(), json::array(), 7);
  nodes.insert(nodes.begin(), thread);
  nodes.insert(nodes.begin(), root);
  return {{"schema", schema}, {"pid", pid}, {"nodes", nodes}};
}

json two_rank_kineto_trace(int /*pid: the events carry it*/, int rank, json events) {
  return {{"schemaVersion", 1},
          {"distributedInfo", {{"backend", "nccl"}, {"rank", rank}, {"world_size", 2}}},
          {"traceEvents", events}};
}

class PytorchSynthetic : public sim::testing::TempFolderTest {
 protected:
  void write(const std::string& name, const json& j) { std::ofstream(path(name)) << j.dump(); }
  std::string error_of(const std::vector<RankFiles>& files) {
    try {
      ImportSummary s;
      import_pytorch(files, [](int, EtTrace&&) {}, s);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(PytorchSynthetic, AMissingFieldNamesFileRankOpAndField) {
  json bad = op(5, "aten::mm", 2, 3);
  bad.erase("name");
  write("et_rank0.json", versioned_host_trace("1.1.1-chakra.0.0.4", 10, json::array({bad})));
  const std::string e = error_of({{0, path("et_rank0.json"), ""}});
  EXPECT_NE(e.find(path("et_rank0.json")), std::string::npos) << e;
  EXPECT_NE(e.find("rank 0"), std::string::npos) << e;
  EXPECT_NE(e.find("op id 5"), std::string::npos) << e;
  EXPECT_NE(e.find("field 'name'"), std::string::npos) << e;
}

TEST_F(PytorchSynthetic, AnUnknownSchemaLackingAFieldIsAnErrorNamingIt) {
  json bad = op(5, "aten::mm", 2, 3);
  bad.erase("attrs");
  write("et_rank0.json", versioned_host_trace("2.0.0-chakra.0.0.5", 10, json::array({bad})));
  const std::string e = error_of({{0, path("et_rank0.json"), ""}});
  EXPECT_NE(e.find("schema '2.0.0-chakra.0.0.5' is not one this importer knows"), std::string::npos) << e;
  EXPECT_NE(e.find("field 'attrs'"), std::string::npos) << e;
}

TEST_F(PytorchSynthetic, AnUnknownSchemaWithEveryFieldIsAWarning) {
  write("et_rank0.json", versioned_host_trace("1.2.0-chakra.0.0.4", 10, json::array({op(5, "aten::mm", 2, 3)})));
  ImportSummary s;
  std::vector<EtTrace> out;
  import_pytorch({{0, path("et_rank0.json"), ""}}, [&](int, EtTrace&& t) { out.push_back(std::move(t)); }, s);
  ASSERT_EQ(out.size(), 1u);
  bool warned = false;
  for (const std::string& w : s.warnings) warned |= w.find("schema '1.2.0-chakra.0.0.4'") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST_F(PytorchSynthetic, HostAndDeviceTracesOfDifferentProcessesAreExit2) {
  write("et_rank0.json", versioned_host_trace("1.1.1-chakra.0.0.4", 10, json::array({op(5, "aten::mm", 2, 3)})));
  write("kineto_rank0.json", two_rank_kineto_trace(11, 0, json::array({cpu_event(11, "aten::mm", 3, 100, 5, 1)})));
  const std::string e = error_of({{0, path("et_rank0.json"), path("kineto_rank0.json")}});
  EXPECT_NE(e.find("do not belong together"), std::string::npos) << e;
  EXPECT_NE(e.find("pid 10"), std::string::npos) << e;
  EXPECT_NE(e.find("pid 11"), std::string::npos) << e;
  // The same through the command line: exit 2, nothing written.
  const auto run = run_sim("workload import pytorch --host-et " + path("et_rank0.json") + " --kineto " +
                           path("kineto_rank0.json") + " -o " + path("out"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_FALSE(fs::exists(path("out.0.et")));
  EXPECT_EQ(entries(path("")).size(), 2u);  // the two inputs only: no temporary left
}

TEST_F(PytorchSynthetic, ADeviceTraceOfAnotherRankIsAnError) {
  write("et_rank0.json", versioned_host_trace("1.1.1-chakra.0.0.4", 10, json::array({op(5, "aten::mm", 2, 3)})));
  write("kineto_rank0.json", two_rank_kineto_trace(10, 1, json::array({cpu_event(10, "aten::mm", 3, 100, 5, 1)})));
  const std::string e = error_of({{0, path("et_rank0.json"), path("kineto_rank0.json")}});
  EXPECT_NE(e.find("distributedInfo.rank 1"), std::string::npos) << e;
}

TEST_F(PytorchSynthetic, LinksKernelsTakesExclusiveTimesAndReportsTheUnlinked) {
  // aten::mm (10 us, of which its child aten::empty 4 us) launches one kernel of 7 us;
  // aten::relu is missing from the device trace; one kernel has no launch (no correlation).
  write("et_rank0.json", versioned_host_trace("1.0.2-chakra.0.0.4", 10,
                                              json::array({op(5, "aten::mm", 2, 3), op(6, "aten::empty", 5, 4),
                                                           op(7, "aten::relu", 2, 5)})));
  json ev = json::array({cpu_event(10, "aten::mm", 3, 100, 10, 41), cpu_event(10, "aten::empty", 4, 101, 4, 42),
                         {{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 10}, {"tid", 10},
                          {"ts", 106}, {"dur", 2}, {"args", {{"External id", 41}, {"correlation", 900}}}},
                         {{"ph", "X"}, {"cat", "kernel"}, {"name", "gemm_kernel"}, {"pid", 0}, {"tid", 7}, {"ts", 110},
                          {"dur", 7}, {"args", {{"stream", 7}, {"device", 0}, {"correlation", 900}}}},
                         {{"ph", "X"}, {"cat", "kernel"}, {"name", "orphan_kernel"}, {"pid", 0}, {"tid", 7}, {"ts", 130},
                          {"dur", 3}, {"args", {{"stream", 7}, {"device", 0}}}}});
  write("kineto_rank0.json", two_rank_kineto_trace(10, 0, ev));
  ImportSummary s;
  std::vector<EtTrace> out;
  import_pytorch({{0, path("et_rank0.json"), path("kineto_rank0.json")}},
                 [&](int, EtTrace&& t) { out.push_back(std::move(t)); }, s);
  ASSERT_EQ(out.size(), 1u);
  std::map<std::string, const et::Node*> by_name;
  for (const et::Node& n : out[0].nodes) by_name[n.name()] = &n;
  ASSERT_TRUE(by_name.count("aten::mm") && by_name.count("gemm_kernel") && by_name.count("orphan_kernel"));
  EXPECT_EQ(by_name["aten::mm"]->duration_micros(), 6u);  // 10 - 4
  EXPECT_EQ(by_name["aten::empty"]->duration_micros(), 4u);
  EXPECT_EQ(by_name["gemm_kernel"]->duration_micros(), 7u);
  EXPECT_FALSE(*attr_bool(*by_name["gemm_kernel"], "is_cpu_op"));
  ASSERT_EQ(by_name["gemm_kernel"]->data_deps_size(), 1);
  EXPECT_EQ(by_name["gemm_kernel"]->data_deps(0), by_name["aten::mm"]->id());  // launch edge
  // The orphan follows the kernel before it on its stream.
  ASSERT_EQ(by_name["orphan_kernel"]->data_deps_size(), 1);
  EXPECT_EQ(by_name["orphan_kernel"]->data_deps(0), by_name["gemm_kernel"]->id());
  std::string all;
  for (const std::string& w : s.warnings) all += w + "\n";
  EXPECT_NE(all.find("1 host operators not found in the Kineto traces (replayed as 0 us) (first: aten::relu)"), std::string::npos) << all;
  EXPECT_NE(all.find("1 GPU activities with no launching host operator"), std::string::npos) << all;
}

TEST_F(PytorchSynthetic, SendAndRecvBecomeMessagesBetweenTheRanks) {
  const json t = {{1, 2, 0, 256, 4, "cuda:0"}};
  const json types = {"GenericList[Tensor(float)]", "Object", "Int", "Int"};
  write("et_rank0.json", versioned_host_trace("1.1.1-chakra.0.0.4", 10,
                                              json::array({op(5, "c10d::send", 2, 3, {t, "<Object>", 1, 7}, types)})));
  write("et_rank1.json", versioned_host_trace("1.1.1-chakra.0.0.4", 11,
                                              json::array({op(5, "c10d::recv_", 2, 3, {t, "<Object>", 0, 7}, types)})));
  const auto files = resolve_pytorch_files({path("")}, {});
  ASSERT_EQ(files.size(), 2u);
  ImportSummary s;
  std::vector<EtTrace> out;
  import_pytorch(files, [&](int, EtTrace&& et) { out.push_back(std::move(et)); }, s);
  ASSERT_EQ(out.size(), 2u);
  const et::Node* send = nullptr;
  const et::Node* recv = nullptr;
  for (const et::Node& n : out[0].nodes) if (n.type() == et::COMM_SEND_NODE) send = &n;
  for (const et::Node& n : out[1].nodes) if (n.type() == et::COMM_RECV_NODE) recv = &n;
  ASSERT_TRUE(send && recv);
  EXPECT_EQ(*attr_int(*send, "comm_dst"), 1);
  EXPECT_EQ(*attr_int(*recv, "comm_src"), 0);
  EXPECT_EQ(*attr_int(*send, "comm_size"), 1024);
  EXPECT_EQ(*attr_int(*send, "comm_tag"), 7);
  EXPECT_EQ(*attr_int(*recv, "comm_tag"), 7);
}

TEST_F(PytorchSynthetic, ACollectiveWithoutItsTensorArgumentNamesTheField) {
  write("et_rank0.json",
        versioned_host_trace(
            "1.1.1-chakra.0.0.4", 10,
            json::array({op(5, "c10d::allreduce_", 2, 3, json::array({"<Object>"}), json::array({"Object"}))})));
  const std::string e = error_of({{0, path("et_rank0.json"), ""}});
  EXPECT_NE(e.find("op id 5 (c10d::allreduce_): field 'inputs.values[0]'"), std::string::npos) << e;
}

TEST_F(PytorchSynthetic, BadJsonAndMissingRanksAreErrors) {
  std::ofstream(path("et_rank0.json")) << "{\"schema\": \"1.1.1-chakra.0.0.4\", \"nodes\": [ {\"id\": 1,";
  std::string e = error_of({{0, path("et_rank0.json"), ""}});
  EXPECT_NE(e.find(path("et_rank0.json")), std::string::npos) << e;
  write("et_rank0.json", versioned_host_trace("1.1.1-chakra.0.0.4", 10, json::array()));
  write("et_rank2.json", versioned_host_trace("1.1.1-chakra.0.0.4", 12, json::array()));
  try {
    resolve_pytorch_files({path("")}, {});
    FAIL() << "ranks 0 and 2 only";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("no file for rank 1"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace sim::pytorch

// This file's macro ends here: a unity build compiles other test files after it.
#undef SKIP_WITHOUT
