#include "workload/et/et_io.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

const std::string kTestdata = SIM_SOURCE_DIR "/../shared/testdata";
const std::string kChakra0 = kTestdata + "/chakra/chakra.0.et";
const std::string kSmallJson = kTestdata + "/chakra/small_chakra.0.json";
const std::string kAllReduce8 = kTestdata + "/astrasim-microbenchmarks/all_reduce/8npus_1MB";

#define REQUIRE_TESTDATA(path) \
  if (!fs::exists(path)) GTEST_SKIP() << "testdata absent: " << (path) << " (see ../shared/testdata/README.md)"

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The message of the InputError `f` throws ("" and a failure if none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InputError";
  return "";
}

void expect_equal(const EtTrace& a, const EtTrace& b) {
  EXPECT_TRUE(MessageDifferencer::Equals(a.metadata, b.metadata));
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i)
    ASSERT_TRUE(MessageDifferencer::Equals(a.nodes[i], b.nodes[i])) << "node index " << i;
}

class EtIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("et_io_test." + std::to_string(::getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string tmp(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

et::Node comm_node(std::uint64_t id) {
  et::Node n;
  n.set_id(id);
  n.set_name("ar");
  n.set_type(et::COMM_COLL_NODE);
  return n;
}

EtTrace small_trace() {
  EtTrace t;
  t.metadata.set_version("0.0.4");
  t.nodes.push_back(comm_node(1));
  set_attr_int(t.nodes[0], "comm_size", 1024);
  return t;
}

// --- real files -------------------------------------------------------------

TEST_F(EtIoTest, ReadsPyTorchTrace) {
  REQUIRE_TESTDATA(kChakra0);
  const EtTrace t = read_et(kChakra0);
  EXPECT_EQ(t.path, kChakra0);
  ASSERT_EQ(t.nodes.size(), 3664u);
  std::size_t comp = 0, coll = 0;
  for (const auto& n : t.nodes) {
    comp += n.type() == et::COMP_NODE;
    coll += n.type() == et::COMM_COLL_NODE;
  }
  EXPECT_EQ(comp, 3643u);
  EXPECT_EQ(coll, 21u);

  // GlobalMetadata carries attrs only, in PyTorch-converter style.
  EXPECT_EQ(t.metadata.version(), "");
  EXPECT_EQ(metadata_string(t.metadata, "schema"), "1.0.1");
  EXPECT_EQ(metadata_int(t.metadata, "pid"), 114598);  // uint64_val
  EXPECT_EQ(metadata_int(t.metadata, "finish_ts"), 216433101);
  EXPECT_EQ(metadata_int(t.metadata, "absent"), std::nullopt);

  const et::Node& first = t.nodes.front();
  EXPECT_EQ(first.id(), 216u);
  EXPECT_EQ(first.name(), "aten::flatten_dense_tensors(0)");
  EXPECT_EQ(first.duration_micros(), 318u);
  EXPECT_EQ(std::vector<std::uint64_t>(first.ctrl_deps().begin(), first.ctrl_deps().end()),
            std::vector<std::uint64_t>{3});
  EXPECT_EQ(t.nodes.back().id(), 7022u);

  // ncclKernel broadcast: the GPU side of a collective.
  const auto it = std::find_if(t.nodes.begin(), t.nodes.end(), [](const et::Node& n) { return n.id() == 435; });
  ASSERT_NE(it, t.nodes.end());
  EXPECT_EQ(it->type(), et::COMM_COLL_NODE);
  EXPECT_EQ(attr_bool(*it, "is_cpu_op"), false);
  EXPECT_EQ(attr_int(*it, "comm_type"), et::BROADCAST);
  EXPECT_EQ(attr_int(*it, "comm_size"), 212480);
  EXPECT_EQ(attr_bool_list(*it, "involved_dim"), std::vector<bool>{true});
  EXPECT_EQ(std::vector<std::uint64_t>(it->data_deps().begin(), it->data_deps().end()),
            (std::vector<std::uint64_t>{432, 216, 217}));
}

TEST_F(EtIoTest, RewriteIsByteIdentical) {
  REQUIRE_TESTDATA(kChakra0);
  const EtTrace t = read_et(kChakra0);
  write_et(t, tmp("copy.et"));
  expect_equal(read_et(tmp("copy.et")), t);
  // The C++ serializer emits what Chakra's Python writer emitted (field order,
  // packed deps, set-but-default oneof members), so the bytes match exactly.
  EXPECT_EQ(slurp(tmp("copy.et")), slurp(kChakra0));
  EXPECT_EQ(listing(), std::vector<std::string>{"copy.et"});  // no temp file left
}

TEST_F(EtIoTest, GzipRoundTrip) {
  REQUIRE_TESTDATA(kChakra0);
  const EtTrace t = read_et(kChakra0);
  write_et(t, tmp("x.et.gz"));
  const std::string bytes = slurp(tmp("x.et.gz"));
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  EXPECT_LT(bytes.size(), 2978371u / 4);
  expect_equal(read_et(tmp("x.et.gz")), t);
}

TEST_F(EtIoTest, EveryTestdataTraceReads) {
  REQUIRE_TESTDATA(kTestdata);
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kTestdata)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".et" && ext != ".json")) continue;
    // astrasim-reference/ and reference-curves/ hold configs and results, not traces.
    const std::string path = e.path().generic_string();
    if (path.find("/astrasim-reference/") != std::string::npos || path.find("/reference-curves/") != std::string::npos) continue;
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(read_et(e.path().string()));
    ++files;
  }
  // 112 microbenchmark ranks, 8 custom_allreduce ranks, chakra.0.et and small_chakra.0.json.
  EXPECT_GE(files, 122u);
}

TEST_F(EtIoTest, CustomRingAlgorithmEt) {
  const std::string dir = kTestdata + "/astrasim-custom-ring";
  REQUIRE_TESTDATA(dir + "/custom_allreduce.0.et");
  const std::vector<std::string> paths = resolve_rank_files(dir);  // the .xml is ignored
  ASSERT_EQ(paths.size(), 8u);
  const EtTrace t = read_et(paths[0]);
  ASSERT_EQ(t.nodes.size(), 35u);
  EXPECT_EQ(metadata_string(t.metadata, "schema"), "1.0.2-chakra.0.0.4");
  // Node id 0 is absent on the wire and reads back as 0.
  const et::Node& send = t.nodes[0];
  EXPECT_EQ(send.id(), 0u);
  EXPECT_EQ(send.type(), et::COMM_SEND_NODE);
  EXPECT_EQ(attr_int(send, "comm_type"), 5);  // a NodeType, not a collective
  EXPECT_EQ(attr_int(send, "comm_size"), 131072);
  EXPECT_EQ(attr_int(send, "comm_dst"), 1);
  EXPECT_EQ(attr_int(send, "comm_tag"), 0);
  EXPECT_EQ(attr_int(t.nodes[1], "comm_src"), 7);
  EXPECT_EQ(t.nodes[2].duration_micros(), 7u);
}

TEST_F(EtIoTest, AstrasimMicrobenchmark) {
  REQUIRE_TESTDATA(kAllReduce8 + "/all_reduce.0.et");
  const std::vector<std::string> paths = resolve_rank_files(kAllReduce8);
  ASSERT_EQ(paths.size(), 8u);
  for (std::size_t r = 0; r < paths.size(); ++r) {
    EXPECT_EQ(paths[r], kAllReduce8 + "/all_reduce." + std::to_string(r) + ".et");
    const EtTrace t = read_et(paths[r]);
    EXPECT_EQ(t.metadata.version(), "0.0.4");
    ASSERT_EQ(t.nodes.size(), 1u);
    const et::Node& n = t.nodes[0];
    EXPECT_EQ(n.id(), r);
    EXPECT_EQ(n.type(), et::COMM_COLL_NODE);
    EXPECT_EQ(attr_bool(n, "is_cpu_op"), false);
    EXPECT_EQ(attr_int(n, "comm_type"), et::ALL_REDUCE);
    EXPECT_EQ(attr_int(n, "comm_size"), 1048576);
  }
  // The same set resolved through its prefix.
  EXPECT_EQ(resolve_rank_files(kAllReduce8 + "/all_reduce"), paths);
}

// --- JSON -------------------------------------------------------------------

TEST_F(EtIoTest, LegacyFeederJson) {
  REQUIRE_TESTDATA(kSmallJson);
  const EtTrace t = read_et(kSmallJson);
  ASSERT_EQ(t.nodes.size(), 7u);
  std::vector<std::uint64_t> ids, durations;
  std::vector<bool> cpu;
  for (const auto& n : t.nodes) {
    ids.push_back(n.id());
    durations.push_back(n.duration_micros());
    cpu.push_back(attr_bool(n, "is_cpu_op").value());
  }
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{216, 217, 430, 432, 433, 435, 541}));
  EXPECT_EQ(durations, (std::vector<std::uint64_t>{318, 28, 4, 85, 79, 28, 153}));
  EXPECT_EQ(cpu, (std::vector<bool>{true, true, false, true, true, false, true}));
  const et::Node& n435 = t.nodes[5];
  EXPECT_EQ(n435.type(), et::COMM_COLL_NODE);
  EXPECT_EQ(std::vector<std::uint64_t>(n435.data_deps().begin(), n435.data_deps().end()),
            (std::vector<std::uint64_t>{432, 216, 217}));
  EXPECT_EQ(std::vector<std::uint64_t>(n435.ctrl_deps().begin(), n435.ctrl_deps().end()),
            std::vector<std::uint64_t>{434});
  EXPECT_EQ(find_attr(n435, "is_cpu_op")->value_case(), et::AttributeProto::kBoolVal);
}

TEST_F(EtIoTest, LegacyCommKeysUseProducerOneofMembers) {
  spit(tmp("g.json"), R"({"workload_graph": [{"Id": 7, "Name": "ar", "NodeType": 7, "data_deps": [1],
      "ctrl_deps": [2], "runtime": 5, "is_cpu_op": false, "tensor_size": 64, "comm_type": 0,
      "comm_priority": 1, "comm_size": 1048576, "comm_src": -1, "comm_dst": 3, "comm_tag": 9,
      "num_ops": 12}], "ngpus": 8})");
  const EtTrace t = read_et(tmp("g.json"));
  ASSERT_EQ(t.nodes.size(), 1u);
  const et::Node& n = t.nodes[0];
  EXPECT_EQ(n.duration_micros(), 5u);
  EXPECT_EQ(n.ctrl_deps(0), 2u);
  using A = et::AttributeProto;
  const std::vector<std::pair<std::string, A::ValueCase>> expected = {
      {"is_cpu_op", A::kBoolVal},       {"num_ops", A::kInt64Val},  {"tensor_size", A::kUint64Val},
      {"comm_type", A::kInt64Val},      {"comm_priority", A::kInt32Val}, {"comm_size", A::kInt64Val},
      {"comm_src", A::kInt32Val},       {"comm_dst", A::kInt32Val}, {"comm_tag", A::kInt32Val}};
  ASSERT_EQ(n.attr_size(), 9);
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(n.attr(i).name(), expected[i].first);
    EXPECT_EQ(n.attr(i).value_case(), expected[i].second) << expected[i].first;
  }
  EXPECT_EQ(attr_int(n, "comm_src"), -1);
  EXPECT_EQ(attr_int(n, "comm_size"), 1048576);
  EXPECT_EQ(attr_int(n, "tensor_size"), 64);
}

TEST_F(EtIoTest, LegacyJsonErrors) {
  spit(tmp("a.json"), R"({"workload_graph": [{"Id": 1, "NodeType": 4}, {"Id": 5, "NodeType": 4, "color": 1}]})");
  std::string msg = input_error([&] { read_et(tmp("a.json")); });
  EXPECT_THAT(msg, HasSubstr(tmp("a.json")));
  EXPECT_THAT(msg, HasSubstr("workload_graph[1] (Id 5): unknown key 'color'"));

  spit(tmp("b.json"), R"({"workload_graph": [], "extra": 1})");
  EXPECT_THAT(input_error([&] { read_et(tmp("b.json")); }), HasSubstr("unknown top-level key 'extra'"));

  spit(tmp("c.json"), R"({"workload_graph": [{"Id": 2, "NodeType": 4, "comm_src": 3000000000}]})");
  EXPECT_THAT(input_error([&] { read_et(tmp("c.json")); }),
              HasSubstr("workload_graph[0] (Id 2): 'comm_src' must be an integer in [-2147483648, 2147483647]"));

  spit(tmp("d.json"), R"({"workload_graph": [{"Id": -2, "NodeType": 4}]})");
  EXPECT_THAT(input_error([&] { read_et(tmp("d.json")); }), HasSubstr("'Id' must be a non-negative integer"));

  spit(tmp("e.json"), R"({"something": []})");
  EXPECT_THAT(input_error([&] { read_et(tmp("e.json")); }), HasSubstr("neither Chakra's feeder form"));

  spit(tmp("f.json"), "{\"workload_graph\": [");
  msg = input_error([&] { read_et(tmp("f.json")); });
  EXPECT_THAT(msg, HasSubstr(tmp("f.json") + ":1: invalid JSON"));
}

TEST_F(EtIoTest, OurJsonRoundTripsRealTrace) {
  REQUIRE_TESTDATA(kChakra0);
  const EtTrace t = read_et(kChakra0);
  write_et_json(t, tmp("t.json"));
  const EtTrace back = read_et(tmp("t.json"));
  expect_equal(back, t);
  // Deterministic: writing what was read back gives the same bytes.
  write_et_json(back, tmp("u.json"));
  EXPECT_EQ(slurp(tmp("t.json")), slurp(tmp("u.json")));
  EXPECT_EQ(listing(), (std::vector<std::string>{"t.json", "u.json"}));
}

TEST_F(EtIoTest, OurJsonFormat) {
  EtTrace t = small_trace();
  set_attr_bool(t.nodes[0], "is_cpu_op", false);
  write_et_json(t, tmp("s.json"));
  // Proto field names; 64-bit integers as strings (protobuf canonical JSON);
  // a oneof member set to its default is still written.
  EXPECT_EQ(slurp(tmp("s.json")),
            "{\n"
            "  \"metadata\": {\"version\":\"0.0.4\"},\n"
            "  \"nodes\": [\n"
            "    {\"id\":\"1\",\"name\":\"ar\",\"type\":\"COMM_COLL_NODE\",\"attr\":[{\"name\":\"comm_size\","
            "\"int64_val\":\"1024\"},{\"name\":\"is_cpu_op\",\"bool_val\":false}]}\n"
            "  ]\n"
            "}\n");
  expect_equal(read_et(tmp("s.json")), t);

  // lowerCamelCase (chakra_jsonizer's spelling) reads too.
  spit(tmp("camel.json"), R"({"metadata": {}, "nodes": [{"id": "3", "type": "COMP_NODE", "dataDeps": ["1", 2],
      "durationMicros": 10, "attr": [{"name": "num_ops", "int64Val": "7"}]}]})");
  const EtTrace c = read_et(tmp("camel.json"));
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0].data_deps_size(), 2);
  EXPECT_EQ(c.nodes[0].duration_micros(), 10u);
  EXPECT_EQ(attr_int(c.nodes[0], "num_ops"), 7);

  spit(tmp("bad.json"), R"({"nodes": [{"id": 1}, {"id": "4", "colour": 1}]})");
  const std::string msg = input_error([&] { read_et(tmp("bad.json")); });
  EXPECT_THAT(msg, HasSubstr(tmp("bad.json") + ": nodes[1] (id 4): "));
  EXPECT_THAT(msg, HasSubstr("colour"));
}

// A binary ET whose frame 0 is 123 bytes long starts with '{' too.
TEST_F(EtIoTest, BinaryStartingWithBraceIsNotJson) {
  EtTrace t = small_trace();
  t.metadata.set_version(std::string(121, 'v'));  // tag + length byte + 121 = 123
  ASSERT_EQ(t.metadata.ByteSizeLong(), 123u);
  write_et(t, tmp("brace.et"));
  ASSERT_EQ(slurp(tmp("brace.et"))[0], '{');
  expect_equal(read_et(tmp("brace.et")), t);
}

// --- attributes ---------------------------------------------------------------

TEST(EtAttr, LenientIntegerAndBool) {
  et::Node n = comm_node(42);
  auto add = [&](const std::string& name) {
    et::AttributeProto* a = n.add_attr();
    a->set_name(name);
    return a;
  };
  add("is_cpu_op")->set_int32_val(0);  // STG / TACOS writer style
  add("cpu2")->set_uint64_val(3);
  add("size32")->set_int32_val(1048576);
  add("size64")->set_int64_val(1048576);
  add("sizeu64")->set_uint64_val(1048576);
  add("sizes64")->set_sint64_val(1048576);
  add("sizef64")->set_fixed64_val(1048576);
  add("neg")->set_sfixed32_val(-5);
  add("pg_name")->set_string_val("0");
  add("huge")->set_uint64_val(std::uint64_t{1} << 63);
  add("dims")->mutable_bool_list()->add_values(true);
  add("empty");

  EXPECT_EQ(attr_bool(n, "is_cpu_op"), false);
  EXPECT_EQ(attr_bool(n, "cpu2"), true);
  EXPECT_EQ(attr_bool(n, "huge"), true);
  for (const char* name : {"size32", "size64", "sizeu64", "sizes64", "sizef64"})
    EXPECT_EQ(attr_int(n, name), 1048576) << name;
  EXPECT_EQ(attr_int(n, "neg"), -5);
  EXPECT_EQ(attr_string(n, "pg_name"), "0");
  EXPECT_EQ(attr_int(n, "missing"), std::nullopt);
  EXPECT_EQ(attr_bool(n, "missing"), std::nullopt);
  EXPECT_EQ(attr_string(n, "missing"), std::nullopt);
  EXPECT_EQ(attr_bool_list(n, "missing"), std::nullopt);

  EXPECT_EQ(input_error([&] { attr_int(n, "pg_name"); }),
            "node 42: attribute 'pg_name' has type string_val, expected integer");
  EXPECT_EQ(input_error([&] { attr_bool(n, "dims"); }),
            "node 42: attribute 'dims' has type bool_list, expected bool or integer");
  EXPECT_EQ(input_error([&] { attr_string(n, "size64"); }),
            "node 42: attribute 'size64' has type int64_val, expected string_val");
  EXPECT_EQ(input_error([&] { attr_bool_list(n, "is_cpu_op"); }),
            "node 42: attribute 'is_cpu_op' has type int32_val, expected bool_list");
  EXPECT_EQ(input_error([&] { attr_int(n, "empty"); }),
            "node 42: attribute 'empty' has type <none>, expected integer");
  EXPECT_EQ(input_error([&] { attr_int(n, "huge"); }),
            "node 42: attribute 'huge' value 9223372036854775808 exceeds the int64 range");
}

TEST(EtAttr, FirstMatchWinsAndSettersReplace) {
  et::Node n = comm_node(1);
  set_attr_int(n, "comm_size", 10);
  set_attr_string(n, "pg_name", "1");
  n.add_attr()->CopyFrom(n.attr(0));  // duplicate name, later in the list
  n.mutable_attr(2)->set_int64_val(99);
  EXPECT_EQ(attr_int(n, "comm_size"), 10);

  set_attr_int(n, "comm_size", 20);  // replaces the first match in place
  set_attr_bool(n, "pg_name", true);  // and its kind
  ASSERT_EQ(n.attr_size(), 3);
  EXPECT_EQ(n.attr(0).int64_val(), 20);
  EXPECT_EQ(n.attr(1).value_case(), et::AttributeProto::kBoolVal);
  EXPECT_EQ(n.attr(2).int64_val(), 99);
  EXPECT_EQ(find_attr(n, "comm_size"), &n.attr(0));
  EXPECT_EQ(find_attr(n, "nope"), nullptr);

  et::GlobalMetadata md;
  md.add_attr()->set_name("schema");
  EXPECT_EQ(input_error([&] { metadata_string(md, "schema"); }),
            "GlobalMetadata: attribute 'schema' has type <none>, expected string_val");
}

// --- bad input ------------------------------------------------------------------

TEST_F(EtIoTest, MissingFile) {
  const std::string msg = input_error([&] { read_et(tmp("nope.et")); });
  EXPECT_THAT(msg, HasSubstr("cannot open trace '" + tmp("nope.et") + "'"));
}

TEST_F(EtIoTest, TruncatedFile) {
  REQUIRE_TESTDATA(kChakra0);
  std::string bytes = slurp(kChakra0);
  // Cut inside frame 2 (node 217): frame 0 is 1 + 94 bytes, frame 1 2 + 5948.
  bytes.resize(95 + 2 + 5948 + 100);
  spit(tmp("cut.et"), bytes);
  EXPECT_EQ(input_error([&] { read_et(tmp("cut.et")); }),
            tmp("cut.et") + ": truncated frame 2 at byte offset 6045 (length 5951, 98 bytes left)");
}

TEST_F(EtIoTest, GarbledBytes) {
  // Frame length fits, contents are not a GlobalMetadata (field 2 wire type 7).
  spit(tmp("g1.et"), std::string("\x03\x17\xff\xff", 4));
  EXPECT_EQ(input_error([&] { read_et(tmp("g1.et")); }),
            tmp("g1.et") + ": frame 0 (byte offset 0): not a valid Chakra GlobalMetadata");
  // Valid metadata, then a garbled node.
  spit(tmp("g2.et"), std::string("\x00\x02\x0f\x0f", 4));
  EXPECT_EQ(input_error([&] { read_et(tmp("g2.et")); }),
            tmp("g2.et") + ": frame 1 (byte offset 1): not a valid Chakra node");
  // Text is read as frames too: 't' = 116-byte frame 0, longer than the file.
  spit(tmp("g3.et"), "this is no trace");
  EXPECT_THAT(input_error([&] { read_et(tmp("g3.et")); }), HasSubstr(tmp("g3.et") + ": truncated frame 0"));
  // gzip magic followed by junk.
  spit(tmp("g4.et"), std::string("\x1f\x8b\x08\x00junkjunkjunk", 16));
  EXPECT_THAT(input_error([&] { read_et(tmp("g4.et")); }), HasSubstr(tmp("g4.et") + ": "));
  // Cut gzip stream.
  write_et(small_trace(), tmp("ok.et.gz"));
  std::string gz = slurp(tmp("ok.et.gz"));
  spit(tmp("g5.et.gz"), gz.substr(0, gz.size() - 6));
  EXPECT_EQ(input_error([&] { read_et(tmp("g5.et.gz")); }), tmp("g5.et.gz") + ": truncated gzip data");
}

TEST_F(EtIoTest, EmptyFileAndEmptyFrames) {
  spit(tmp("empty.et"), "");
  EXPECT_EQ(input_error([&] { read_et(tmp("empty.et")); }), tmp("empty.et") + ": empty file, expected GlobalMetadata");
  // Zero-length frames (empty metadata, all-default node) are accepted.
  spit(tmp("zeros.et"), std::string("\x00\x00", 2));
  const EtTrace t = read_et(tmp("zeros.et"));
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].ByteSizeLong(), 0u);
}

TEST_F(EtIoTest, RefusesEmptyFramesOnWrite) {
  EtTrace t = small_trace();
  t.nodes.emplace_back();  // all defaults: serializes to nothing
  EXPECT_EQ(input_error([&] { write_et(t, tmp("out.et")); }),
            tmp("out.et") +
                ": nodes[1] (id 0): refusing to write an empty node (Chakra's Python tools stop at a "
                "zero-length frame)");
  t.nodes.pop_back();
  t.metadata.Clear();
  EXPECT_THAT(input_error([&] { write_et(t, tmp("out.et.gz")); }),
              HasSubstr("refusing to write an empty GlobalMetadata"));
  EXPECT_EQ(listing(), std::vector<std::string>{});
}

TEST_F(EtIoTest, FailedWriteLeavesNothing) {
  const std::string path = tmp("no/such/dir/out.et");
  EXPECT_THAT(input_error([&] { write_et(small_trace(), path); }), HasSubstr("cannot write '" + path + "'"));
  // Rename onto a non-empty directory fails after the temp file was written.
  fs::create_directories(tmp("taken.et/x"));
  EXPECT_THAT(input_error([&] { write_et(small_trace(), tmp("taken.et")); }),
              HasSubstr("cannot write '" + tmp("taken.et") + "'"));
  EXPECT_EQ(listing(), std::vector<std::string>{"taken.et"});
}

// --- rank files -----------------------------------------------------------------

TEST_F(EtIoTest, ResolveRankFiles) {
  for (const char* name : {"w.0.et", "w.1.et.gz", "w.2.json", "README.md", "w.x.et", "w.03.et", "other.txt"})
    spit(tmp(name), "");
  const std::vector<std::string> expected = {tmp("w.0.et"), tmp("w.1.et.gz"), tmp("w.2.json")};
  EXPECT_EQ(resolve_rank_files(dir_.string()), expected);
  EXPECT_EQ(resolve_rank_files(tmp("w")), expected);

  // Ten ranks sort numerically, not by name.
  fs::create_directories(tmp("ten"));
  for (int r = 0; r < 10; ++r) spit(tmp("ten/p." + std::to_string(r) + ".et"), "");
  const auto ten = resolve_rank_files(tmp("ten"));
  ASSERT_EQ(ten.size(), 10u);
  EXPECT_EQ(ten[9], tmp("ten/p.9.et"));

  // Listed through readdir: a symbolic link to a rank file counts, one to a
  // folder or a dangling one does not, nor a folder named like a rank file;
  // paths are spelled as std::filesystem would (one '/' after the folder).
  fs::create_directories(tmp("links/s.2.et"));
  spit(tmp("links/s.0.et"), "");
  fs::create_symlink(tmp("links/s.0.et"), tmp("links/s.1.et"));
  fs::create_directory_symlink(tmp("ten"), tmp("links/s.3.et"));
  fs::create_symlink(tmp("links/absent"), tmp("links/s.4.et"));
  const std::vector<std::string> linked = {tmp("links/s.0.et"), tmp("links/s.1.et")};
  EXPECT_EQ(resolve_rank_files(tmp("links")), linked);
  EXPECT_EQ(resolve_rank_files(tmp("links") + "/"), linked);
  EXPECT_EQ(resolve_rank_files(tmp("links/s")), linked);
  EXPECT_EQ(resolve_rank_files(tmp("links/s.1.et")), linked);
}

TEST_F(EtIoTest, ResolveRankFilesErrors) {
  fs::create_directories(tmp("gap"));
  for (const char* name : {"w.0.et", "w.1.et", "w.3.et"}) spit(tmp(std::string("gap/") + name), "");
  EXPECT_EQ(input_error([&] { resolve_rank_files(tmp("gap")); }),
            "missing rank 2 (expected " + tmp("gap/w") + ".2.et)");
  EXPECT_EQ(input_error([&] { resolve_rank_files(tmp("gap/w")); }),
            "missing rank 2 (expected " + tmp("gap/w") + ".2.et)");

  EXPECT_EQ(input_error([&] { resolve_rank_files(tmp("gap/zz")); }), "no files " + tmp("gap/zz") + ".<rank>.et found");
  EXPECT_EQ(input_error([&] { resolve_rank_files(tmp("nodir/w")); }), "no files " + tmp("nodir/w") + ".<rank>.et found");
  fs::create_directories(tmp("none"));
  EXPECT_THAT(input_error([&] { resolve_rank_files(tmp("none")); }), HasSubstr("no files <prefix>.<rank>.et found"));

  fs::create_directories(tmp("two"));
  for (const char* name : {"a.0.et", "b.0.et", "a.1.et"}) spit(tmp(std::string("two/") + name), "");
  EXPECT_EQ(input_error([&] { resolve_rank_files(tmp("two")); }),
            "folder '" + tmp("two") + "' holds rank files of several prefixes (a, b); expected one");

  fs::create_directories(tmp("dup"));
  for (const char* name : {"a.0.et", "a.0.json"}) spit(tmp(std::string("dup/") + name), "");
  EXPECT_THAT(input_error([&] { resolve_rank_files(tmp("dup")); }), HasSubstr("rank 0 has two files"));
}

}  // namespace
}  // namespace sim

// This file's macro ends here: a unity build compiles other test files after it.
#undef REQUIRE_TESTDATA
