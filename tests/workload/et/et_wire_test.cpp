// The hand-written ET decoder against protobuf's parser: node by node on
// crafted and mutated bytes, and graph by graph on real and generated traces.
#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "core/error.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"
#include "workload/generators/workload_generator.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

// --- wire builders ------------------------------------------------------------

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_tag(std::string& out, std::uint32_t field, int wire) { put_varint(out, field << 3 | static_cast<std::uint32_t>(wire)); }
void put_len(std::string& out, std::uint32_t field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}
void put_fixed(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// Protobuf logs every string that is not UTF-8; the mutations make many.
struct QuietProtobuf {
  QuietProtobuf() { old = google::protobuf::SetLogHandler(nullptr); }
  ~QuietProtobuf() { google::protobuf::SetLogHandler(old); }
  google::protobuf::LogHandler* old;
};

// --- node-level comparison ------------------------------------------------------

struct Outcome {
  bool ok = false;
  std::string text;  // the decoded node, printed; or the error
};

std::string print(const WireNode& n) {
  std::string s = "id " + std::to_string(n.id) + " name '" + std::string(n.name) + "' type " + std::to_string(n.type) +
                  " dur " + std::to_string(n.duration_micros) + " ctrl";
  for (auto d : n.ctrl_deps) s += " " + std::to_string(d);
  s += " data";
  for (auto d : n.data_deps) s += " " + std::to_string(d);
  for (const WireAttr& a : n.attrs) {
    s += " [" + std::string(a.name) + " case " + std::to_string(a.value_case);
    // Integer and bool bits are compared; other members' bits are not kept by wire_node_from.
    const bool integer = (a.value_case >= 7 && a.value_case <= 25 && a.value_case % 2 == 1 && a.value_case != 3 &&
                          a.value_case != 5) ||
                         a.value_case == 27;
    if (integer) s += " bits " + std::to_string(a.bits);
    if (a.value_case == 29) s += " str '" + std::string(a.str) + "'";
    s += "]";
  }
  return s;
}

Outcome by_protobuf(const std::string& bytes) {
  et::Node node;
  if (!node.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return {false, "rejected"};
  WireNode w;
  wire_node_from(node, w);
  return {true, print(w)};
}

Outcome by_hand(const std::string& bytes, std::string* error = nullptr) {
  WireNode w;
  std::string err;
  std::size_t at = 0;
  if (!decode_wire_node(bytes.data(), bytes.size(), w, err, at)) {
    EXPECT_LE(at, bytes.size()) << err;
    if (error) *error = err + " at " + std::to_string(at);
    return {false, "rejected"};
  }
  return {true, print(w)};
}

void expect_same(const std::string& bytes, const std::string& what) {
  const Outcome a = by_protobuf(bytes), b = by_hand(bytes);
  EXPECT_EQ(a.ok, b.ok) << what;
  EXPECT_EQ(a.text, b.text) << what;
}

// A node using every part of the schema, with unknown fields of every wire type.
std::string rich_node() {
  std::string n;
  put_tag(n, 1, 0);
  put_varint(n, 42);
  put_len(n, 2, "aten::mm_17");
  put_tag(n, 3, 0);
  put_varint(n, 5);
  put_len(n, 4, [] { std::string p; put_varint(p, 1); put_varint(p, 300); return p; }());  // packed ctrl
  put_tag(n, 4, 0);
  put_varint(n, 7);  // unpacked ctrl
  put_tag(n, 5, 0);
  put_varint(n, 40);  // unpacked data
  put_len(n, 5, [] { std::string p; put_varint(p, 41); return p; }());  // packed data
  put_tag(n, 6, 0);
  put_varint(n, 123456789);
  put_tag(n, 7, 0);
  put_varint(n, 99);
  put_len(n, 8, [] { std::string io; put_len(io, 1, "[[1, 2]]"); put_len(io, 2, "[[2]]"); put_len(io, 3, "Tensor(float)"); return io; }());
  auto attr = [&](const std::string& name, const std::string& value) {
    std::string a;
    put_len(a, 1, name);
    a += value;
    put_len(n, 10, a);
  };
  std::string v;
  put_tag(v, 9, 0), put_varint(v, 1048576);
  attr("comm_size", v);
  v.clear(), put_tag(v, 7, 0), put_varint(v, static_cast<std::uint64_t>(-3));
  attr("comm_src", v);
  v.clear(), put_tag(v, 15, 0), put_varint(v, 5);  // sint32 -3
  attr("comm_dst", v);
  v.clear(), put_tag(v, 27, 0), put_varint(v, 2);
  attr("is_cpu_op", v);
  v.clear(), put_len(v, 29, "pg_1");
  attr("pg_name", v);
  v.clear(), put_tag(v, 19, 5), put_fixed(v, 0xfffffffe, 4);
  attr("fixed32", v);
  v.clear(), put_tag(v, 23, 5), put_fixed(v, 0xfffffffe, 4);
  attr("sfixed32", v);
  v.clear(), put_tag(v, 25, 1), put_fixed(v, 0xfffffffffffffff0ull, 8);
  attr("sfixed64", v);
  v.clear(), put_tag(v, 17, 0), put_varint(v, 7);
  attr("sint64", v);
  v.clear(), put_tag(v, 11, 0), put_varint(v, 0x1ffffffffull);
  attr("uint32", v);
  v.clear(), put_tag(v, 3, 1), put_fixed(v, 0x3ff0000000000000ull, 8);
  attr("double", v);
  v.clear(), put_len(v, 10, [] { std::string l; put_len(l, 1, [] { std::string p; put_varint(p, 1); put_varint(p, 2); return p; }()); put_tag(l, 1, 0); put_varint(l, 3); return l; }());
  attr("int64_list", v);
  v.clear(), put_len(v, 4, [] { std::string l; put_len(l, 1, std::string(16, '\0')); put_tag(l, 1, 1); put_fixed(l, 0, 8); return l; }());
  attr("double_list", v);
  v.clear(), put_len(v, 30, [] { std::string l; put_len(l, 1, "a"); put_len(l, 1, "b"); return l; }());
  attr("string_list", v);
  v.clear(), put_len(v, 31, std::string("\xff\xfe", 2));
  attr("bytes", v);
  v.clear(), put_len(v, 2, "doc"), put_tag(v, 9, 0), put_varint(v, 1), put_len(v, 29, "last member wins");
  attr("twice", v);
  // Unknown fields: varint, fixed64, length-delimited, group (nested), fixed32.
  put_tag(n, 15, 0);
  put_varint(n, 1);
  put_tag(n, 16, 1);
  put_fixed(n, 1, 8);
  put_len(n, 17, "opaque");
  put_tag(n, 18, 3);
  put_tag(n, 1, 0);
  put_varint(n, 5);
  put_tag(n, 19, 3);
  put_tag(n, 19, 4);
  put_tag(n, 18, 4);
  put_tag(n, 20, 5);
  put_fixed(n, 1, 4);
  put_tag(n, 1, 2);  // a known field with another wire type is an unknown field
  put_varint(n, 0);
  return n;
}

TEST(EtWire, RichNodeDecodesAsProtobufDoes) {
  const std::string bytes = rich_node();
  const Outcome a = by_protobuf(bytes), b = by_hand(bytes);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.text, b.text);
  EXPECT_NE(b.text.find("data 40 41"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("ctrl 1 300 7"), std::string::npos) << b.text;
}

// The attribute memo takes an attribute from an earlier node only when every
// byte is the same: nearly equal attributes must still decode as protobuf does.
TEST(EtWire, AttributeMemoNeverConfusesNearlyEqualAttributes) {
  auto attr = [](const std::string& name, std::uint32_t field, int wire, const std::string& value) {
    std::string a;
    put_len(a, 1, name);
    put_tag(a, field, wire);
    a += value;
    return a;
  };
  auto varint = [](std::uint64_t v) {
    std::string s;
    put_varint(s, v);
    return s;
  };
  auto len = [](const std::string& v) {
    std::string s;
    put_varint(s, v.size());
    return s + v;
  };
  const std::vector<std::string> attrs = {
      attr("comm_tag", 9, 0, varint(1)),        // int64_val 1
      attr("comm_tag", 9, 0, varint(2)),        // same name, value one byte apart
      attr("comm_tag", 9, 0, varint(129)),      // a longer varint
      attr("comm_tag", 9, 0, varint(1ull << 62)),
      attr("comm_tah", 9, 0, varint(1)),        // name one byte apart
      attr("comm_tagx", 9, 0, varint(1)),       // name one byte longer
      attr("comm_tag", 13, 0, varint(1)),       // uint64_val 1: another member
      attr("comm_tag", 7, 0, varint(0xffffffffull)),   // int32_val: sign-extended
      attr("comm_tag", 11, 0, varint(0xffffffffull)),  // uint32_val: not
      attr("comm_tag", 27, 0, varint(1)),       // bool_val
      attr("comm_tag", 27, 0, varint(2)),       // bool_val, another encoding of true
      attr("pg_name", 29, 2, len("dp")),
      attr("pg_name", 29, 2, len("dq")),
      attr("pg_name", 29, 2, len("d\xc3\xa9")),  // UTF-8
      attr("pg_name", 29, 2, len("d\xc3\x28")),  // one byte off: not UTF-8, the node is rejected
      attr("involved_dim", 28, 2, len(std::string("\x0a\x02\x01\x00", 4))),
      attr("involved_dim", 28, 2, len(std::string("\x0a\x02\x01\x01", 4))),
      attr("is_cpu_op", 27, 0, varint(0)),
      attr("is_cpu_op", 27, 0, varint(0)) + std::string("\x30\x05", 2),  // an unknown field after it
  };
  // Every attribute after every other one (and itself), in one buffer, through one memo.
  std::string buffer;
  std::vector<std::pair<std::size_t, std::size_t>> frames;  // (offset, size)
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    for (std::size_t j = 0; j < attrs.size(); ++j) {
      std::string n;
      put_tag(n, 1, 0);
      put_varint(n, i * attrs.size() + j);
      put_len(n, 10, attrs[i]);
      put_len(n, 10, attrs[j]);
      put_len(n, 10, attrs[i]);
      frames.emplace_back(buffer.size(), n.size());
      buffer += n;
    }
  }
  WireAttrMemo memo;
  WireNode w;
  for (const auto& [offset, size] : frames) {
    const std::string bytes = buffer.substr(offset, size);
    std::string err;
    std::size_t at = 0;
    const bool ok = decode_wire_node(buffer.data() + offset, size, w, err, at, buffer.size() - offset, &memo);
    const Outcome expected = by_protobuf(bytes);
    ASSERT_EQ(ok, expected.ok) << "frame at " << offset << ": " << err;
    if (ok) {
      ASSERT_EQ(print(w), expected.text) << "frame at " << offset;
    }
  }
  EXPECT_GT(memo.hits, attrs.size() * attrs.size());  // the memo was used, not bypassed
  // Hundreds of attributes of one length, differing in one byte, so that many
  // share a memo set: each must still come out with its own value.
  std::string many;
  frames.clear();
  for (std::uint64_t v = 128; v < 1200; ++v) {
    std::string n;
    put_tag(n, 1, 0);
    put_varint(n, v);
    put_len(n, 10, attr("comm_tag", 9, 0, varint(v)));
    put_len(n, 10, attr(std::string("tag_") + static_cast<char>('a' + v % 26), 9, 0, varint(v % 7)));
    frames.emplace_back(many.size(), n.size());
    many += n;
  }
  for (const auto& [offset, size] : frames) {
    std::string err;
    std::size_t at = 0;
    ASSERT_TRUE(decode_wire_node(many.data() + offset, size, w, err, at, many.size() - offset, &memo)) << err;
    ASSERT_EQ(print(w), by_protobuf(many.substr(offset, size)).text) << "frame at " << offset;
  }
}

TEST(EtWire, MalformedNodesAreRejectedWithTheirOffset) {
  QuietProtobuf quiet;
  struct Case {
    std::string bytes;
    const char* error;
  };
  const std::vector<Case> cases = {
      {std::string("\x08\x80", 2), "truncated varint at 1"},
      {std::string("\x08") + std::string(10, '\x80') + std::string("\x01"), "varint longer than 10 bytes at 1"},
      {std::string("\x12\x05" "ab", 4), "length past the end of the message at 1"},
      {std::string("\x0e\x00", 2), "invalid wire type at 0"},
      {std::string("\x0c", 1), "end-group tag outside a group at 0"},
      {std::string("\x00", 1), "field number 0 at 0"},
      {std::string("\x0b\x08\x01", 3), "group without its end at 0"},
      {std::string("\x0b\x14", 2), "end-group tag of another group at 1"},
      {std::string("\x11\x01\x02", 3), "truncated fixed-width value at 1"},
      {std::string("\x12\x02\xc3\x28", 4), "string field is not valid UTF-8 at 1"},
      {std::string("\x2a\x02\x80\x80", 4), "truncated varint at 2"},
      {std::string("\x88\x80\x80\x80\x80\x01", 6), "tag varint longer than 5 bytes at 0"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(by_hand(c.bytes, &error).ok) << c.error;
    EXPECT_EQ(error, c.error);
    EXPECT_FALSE(by_protobuf(c.bytes).ok) << c.error;
  }
}

TEST(EtWire, EdgeEncodingsAgreeWithProtobuf) {
  QuietProtobuf quiet;
  std::vector<std::string> cases = {
      std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11),  // 10-byte varint, high bits dropped
      std::string("\x88\x80\x80\x80\x00\x05", 6),                       // overlong 5-byte tag
      std::string("\x88\x80\x80\x80\x10\x05", 6),                       // tag bits past 32
      std::string("\x18\xff\xff\xff\xff\x0f", 6),                       // type as uint32 max
      std::string("\x12\x80\x80\x80\x80\x00", 6),                       // overlong 5-byte length 0
      std::string("\x12\x80\x80\x80\x80\x08", 6),                       // length 2^31
      std::string("\x12\x80\x80\x80\x80\x80\x00", 7),                   // 6-byte length
      std::string("\x2a\x00", 2),                                       // empty packed list
      std::string("\x52\x04\x22\x02\x08\x01", 6),                       // DoubleList with a varint element (unknown)
      std::string("\x52\x05\x22\x03\x0a\x01\x00", 7),                   // DoubleList packed with a partial element
      std::string("\x52\x03\x22\x01\x00", 5),                           // 0 tag inside a submessage
      std::string("\x12\x03\xed\xa0\x80", 5),                           // a surrogate in UTF-8
      std::string("\x12\x04\xf4\x90\x80\x80", 6),                       // past U+10FFFF
      std::string("\x12\x02\xc0\x80", 4),                               // overlong NUL
      std::string("\x12\x04\xf0\x9f\x98\x80", 6),                       // a 4-byte character
  };
  // Groups nested 99, 100 and 101 deep.
  for (int depth : {99, 100, 101}) {
    std::string g;
    for (int i = 0; i < depth; ++i) put_tag(g, 20, 3);
    for (int i = 0; i < depth; ++i) put_tag(g, 20, 4);
    cases.push_back(g);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) expect_same(cases[i], "case " + std::to_string(i));
}

TEST(EtWire, MutatedNodesNeverCrashAndAgreeWithProtobuf) {
  QuietProtobuf quiet;
  std::mt19937_64 rng(20261123);
  const std::string base = rich_node();
  std::vector<std::string> seeds = {base};
  {
    et::Node n;
    n.set_id(7);
    n.set_name("send12");
    n.set_type(et::COMM_SEND_NODE);
    n.add_data_deps(6);
    set_attr_int(n, "comm_size", 1 << 20);
    set_attr_int(n, "comm_dst", 3);
    set_attr_int(n, "comm_tag", 12);
    seeds.push_back(n.SerializeAsString());
  }
  int accepted = 0;
  constexpr int kCases = 20000;
  for (int c = 0; c < kCases; ++c) {
    std::string b = seeds[c % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !b.empty(); ++e) {
      const std::size_t at = rng() % b.size();
      switch (rng() % 6) {
        case 0: b[at] = static_cast<char>(rng()); break;                      // any byte
        case 1: b[at] = static_cast<char>(b[at] ^ (1 << (rng() % 8))); break;  // one bit
        case 2: b.resize(at); break;                                           // truncate
        case 3: b.erase(at, 1 + rng() % 3); break;                             // delete
        case 4: b.insert(at, 1, static_cast<char>(rng())); break;              // insert
        case 5: b.insert(at, b.substr(rng() % b.size(), 1 + rng() % 8)); break;  // duplicate a run
      }
    }
    const Outcome a = by_protobuf(b), h = by_hand(b);
    accepted += a.ok;
    ASSERT_EQ(a.ok, h.ok) << "case " << c;
    ASSERT_EQ(a.text, h.text) << "case " << c;
  }
  // Both outcomes are exercised.
  EXPECT_GT(accepted, kCases / 20);
  EXPECT_LT(accepted, kCases * 9 / 10);
}

// --- graph-level comparison -----------------------------------------------------

std::string describe(const RankGraph& g) {
  std::string s = "size " + std::to_string(g.size()) + " dangling " + std::to_string(g.dangling_ctrl_deps()) + " self " +
                  std::to_string(g.self_ctrl_deps()) + " groups";
  for (const auto& n : g.communicators()) {
    s += " '" + n.pg_name + "'/" + std::to_string(n.involved_count) + ":" + std::to_string(n.involved_mask) + "@" +
         std::to_string(n.first_use);
  }
  for (const auto& m : g.metadata_texts()) s += " meta " + std::to_string(m.index) + " '" + m.values + "'";
  s += " roots";
  for (auto r : g.roots()) s += " " + std::to_string(r);
  s += "\n";
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const TaskNode t = g.node(i);
    s += std::to_string(t.id) + " " + node_kind_name(t.kind) + " '" + g.name(i) + "' cpu " + std::to_string(t.is_cpu_op) +
         " dur " + std::to_string(t.has_duration) + "/" + std::to_string(t.duration_micros) + " roof " +
         std::to_string(t.has_roofline) + "/" + std::to_string(t.num_ops) + "/" + std::to_string(t.tensor_size) +
         " comm " + std::to_string(t.has_comm_size) + "/" + std::to_string(t.comm_size) + " " +
         std::to_string(t.comm_src) + "->" + std::to_string(t.comm_dst) + " tag " + std::to_string(t.comm_tag) + " " +
         collective_name(t.coll) + " group " + std::to_string(t.group) + " parents " + std::to_string(t.num_parents) +
         " children";
    for (auto c : g.children(i)) {
      s += ' ';
      s += std::to_string(c);
    }
    EXPECT_EQ(g.index_of(t.id), static_cast<std::int64_t>(i));
    EXPECT_EQ(t.num_children, g.children(i).size());
    s += "\n";
  }
  return s;
}

// The graph (or the error) each decoder gives for `path`.
std::string graph_of(const std::string& path, GraphOptions options, bool protobuf) {
  options.protobuf_decoder = protobuf;
  try {
    return describe(RankGraph(path, 0, options));
  } catch (const IncompleteError& e) {
    return std::string("IncompleteError: ") + e.what();
  } catch (const InputError& e) {
    std::string msg = e.what();
    // Malformed nodes: the fast decoder says what and where, after the common text.
    const auto detail = msg.find("not a valid Chakra node");
    if (detail != std::string::npos) msg.resize(detail + 23);
    return "InputError: " + msg;
  }
}

void expect_same_graphs(const std::string& path) {
  for (const GraphOptions& o : {GraphOptions{}, GraphOptions{true, false}, GraphOptions{true, true}}) {
    const std::string fast = graph_of(path, o, false);
    const std::string lib = graph_of(path, o, true);
    ASSERT_EQ(fast, lib) << path << " ctrl_deps " << o.ctrl_deps << " strict " << o.strict_deps;
  }
}

TEST(EtWire, EveryTestdataTraceGivesTheSameGraphOnBothPaths) {
  const fs::path root = fs::path(SIM_SOURCE_DIR) / ".." / "shared" / "testdata";
  if (!fs::exists(root)) GTEST_SKIP() << "testdata absent: " << root;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string p = e.path().string();
    if (!e.is_regular_file() || !(p.ends_with(".et") || p.ends_with(".et.gz"))) continue;
    expect_same_graphs(p);
    ++files;
  }
  EXPECT_GT(files, 0);
}

class TraceDir {
 public:
  TraceDir() : path_(fs::temp_directory_path() / ("et_wire_test." + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TraceDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

TEST(EtWire, GeneratedTracesGiveTheSameGraphOnBothPaths) {
  TraceDir dir;
  P2PRingSpec ring;
  ring.npus = 4;
  ring.iterations = 50;
  ring.bytes = 1 << 20;
  CollectivesSpec colls;
  colls.npus = 4;
  colls.collectives = {CollectiveType::kAllReduce, CollectiveType::kAllGather, CollectiveType::kBarrier};
  colls.bytes = 4096;
  colls.compute_micros = 5;
  ChainSpec chain;
  chain.npus = 2;
  chain.nodes = 30;
  chain.duration_micros = 10;
  const std::vector<EtTrace> traces = {p2p_ring_trace(ring, 1, "r.1"), collectives_trace(colls, 0, "c.0"),
                                       chain_trace(chain, 0, "k.0")};
  for (const EtTrace& t : traces) {
    for (const char* ext : {".et", ".et.gz"}) {
      const std::string path = dir.file(t.path + ext);
      write_et(t, path);
      expect_same_graphs(path);
      // And protobuf's own trace, not streamed.
      EXPECT_EQ(describe(RankGraph(read_et(path), 0, GraphOptions{})), graph_of(path, {}, false));
    }
  }
}

// A small trace whose nodes carry every attribute the graph reads, in every
// integer member, plus attribute errors of each kind.
EtTrace attribute_trace() {
  EtTrace t;
  t.path = "attrs.0.et";
  t.metadata.set_version("0.0.4");
  auto node = [&](std::uint64_t id, et::NodeType type, const std::string& name) -> et::Node& {
    et::Node& n = t.nodes.emplace_back();
    n.set_id(id);
    n.set_type(type);
    n.set_name(name);
    if (id > 1) n.add_data_deps(id - 1);
    return n;
  };
  auto attr = [](et::Node& n, const std::string& name) {
    et::AttributeProto* a = n.add_attr();
    a->set_name(name);
    return a;
  };
  et::Node& c = node(1, et::COMP_NODE, "gemm");
  attr(c, "num_ops")->set_sfixed64_val(1 << 30);
  attr(c, "tensor_size")->set_fixed32_val(4096);
  attr(c, "is_cpu_op")->set_int32_val(0);
  attr(c, "num_ops")->set_string_val("ignored: the first wins");
  c.set_duration_micros(5);
  et::Node& coll = node(2, et::COMM_COLL_NODE, "allreduce.1");
  attr(coll, "comm_type")->set_uint32_val(7);
  attr(coll, "comm_size")->set_sint64_val(1 << 20);
  attr(coll, "pg_name")->set_string_val("0");
  et::Node& coll2 = node(3, et::COMM_COLL_NODE, "tp_group_ag");
  attr(coll2, "comm_type")->set_fixed64_val(2);
  attr(coll2, "comm_size")->set_uint64_val(64);
  attr(coll2, "pg_name")->set_string_val("tp");
  et::Node& send = node(4, et::COMM_SEND_NODE, "send007");
  attr(send, "comm_dst")->set_sint32_val(1);
  attr(send, "comm_size")->set_int64_val(10);
  attr(send, "comm_tag")->set_int64_val(-5);
  et::Node& recv = node(5, et::COMM_RECV_NODE, "recv4294967296");
  attr(recv, "comm_src")->set_int32_val(1);
  attr(recv, "comm_size")->set_int64_val(10);
  attr(recv, "comm_tag")->set_uint64_val(1ull << 40);
  et::Node& host = node(6, et::COMM_COLL_NODE, "");
  attr(host, "is_cpu_op")->set_bool_val(true);
  host.set_duration_micros(3);
  et::Node& meta = node(7, et::METADATA_NODE, "9");
  attr(meta, "comm_size")->set_string_val("not read on a METADATA node");
  meta.mutable_inputs()->set_values("['[{\"pg_name\": \"7\", \"ranks\": [0, 1]}]']");
  meta.mutable_inputs()->set_shapes("[[]]");
  et::Node& dims = node(8, et::COMM_COLL_NODE, "ar_dims");
  attr(dims, "comm_type")->set_int64_val(0);
  attr(dims, "comm_size")->set_int64_val(64);
  et::AttributeProto* involved = attr(dims, "involved_dim");
  for (bool b : {true, false, true}) involved->mutable_bool_list()->add_values(b);
  return t;
}

TEST(EtWire, AttributesAndAttributeErrorsMatchTheLibraryPath) {
  TraceDir dir;
  const EtTrace good = attribute_trace();
  const std::string path = dir.file("attrs.0.et");
  write_et(good, path);
  expect_same_graphs(path);
  const RankGraph g(path, 0, GraphOptions{});
  EXPECT_EQ(g.name(3), "send007");
  EXPECT_EQ(g.name(4), "recv4294967296");
  EXPECT_EQ(g.node(3).comm_tag, -5);
  EXPECT_EQ(g.node(4).comm_tag, 1ll << 40);
  EXPECT_EQ(g.node(1).coll, CollectiveType::kReduceScatter);
  // pg_name is kept as written ("0" too: system/groups/process_groups.h resolves it).
  ASSERT_EQ(g.communicators().size(), 4u);
  EXPECT_EQ(g.communicators()[3].involved_count, 3u);
  EXPECT_EQ(g.communicators()[3].involved_mask, 5u);
  EXPECT_EQ(g.communicators()[1].pg_name, "0");
  EXPECT_EQ(g.communicators()[2].pg_name, "tp");
  EXPECT_EQ(g.communicators()[2].first_use, 2u);
  ASSERT_EQ(g.metadata_texts().size(), 1u);
  EXPECT_EQ(g.metadata_texts()[0].values, "['[{\"pg_name\": \"7\", \"ranks\": [0, 1]}]']");

  // Each broken variant fails the same way on both paths, word for word.
  using Edit = std::function<void(EtTrace&)>;
  const std::vector<std::pair<Edit, std::string>> broken = {
      {[](EtTrace& t) { t.nodes[0].mutable_attr(0)->set_double_val(1.5); },
       "rank 0, node 1 'gemm': attribute 'num_ops' has type double_val, expected integer"},
      {[](EtTrace& t) { t.nodes[0].mutable_attr(2)->set_string_val("yes"); },
       "rank 0, node 1 'gemm': attribute 'is_cpu_op' has type string_val, expected bool or integer"},
      {[](EtTrace& t) { t.nodes[1].mutable_attr(1)->set_uint64_val(~0ull); },
       "rank 0, node 2 'allreduce.1': attribute 'comm_size' value 18446744073709551615 exceeds the int64 range"},
      {[](EtTrace& t) { t.nodes[1].mutable_attr(1)->set_int64_val(-1); }, "rank 0, node 2 'allreduce.1': attribute 'comm_size' value -1 is outside 0..9223372036854775807"},
      {[](EtTrace& t) { t.nodes[1].mutable_attr(0)->set_int64_val(12); },
       "rank 0, node 2 'allreduce.1': attribute 'comm_type' value 12 is outside 0..9"},
      {[](EtTrace& t) { t.nodes[1].mutable_attr(0)->set_name("x"); }, "rank 0, node 2 'allreduce.1': COMM_COLL node without comm_type"},
      {[](EtTrace& t) { t.nodes[2].mutable_attr(2)->set_int32_val(1); },
       "rank 0, node 3 'tp_group_ag': attribute 'pg_name' has type int32_val, expected string_val"},
      {[](EtTrace& t) { t.nodes[2].mutable_attr(1)->clear_value(); },
       "rank 0, node 3 'tp_group_ag': attribute 'comm_size' has type <none>, expected integer"},
      {[](EtTrace& t) { t.nodes[3].mutable_attr(0)->set_name("comm_src"); }, "rank 0, node 4 'send007': COMM_SEND without comm_dst"},
      {[](EtTrace& t) { t.nodes[4].mutable_attr(1)->set_name("size"); }, "rank 0, node 5 'recv4294967296': COMM_RECV without comm_size"},
      {[](EtTrace& t) { t.nodes[5].set_type(static_cast<et::NodeType>(9)); }, "rank 0, node 6 '': unknown node type 9"},
      {[](EtTrace& t) { t.nodes[6].add_data_deps(99); }, "rank 0, node 7: data dependency on absent node 99"},
      {[](EtTrace& t) { t.nodes[6].set_id(3); }, "rank 0, node 3: duplicate node id"},
  };
  for (std::size_t i = 0; i < broken.size(); ++i) {
    EtTrace t = good;
    broken[i].first(t);
    const std::string p = dir.file("broken" + std::to_string(i) + ".0.et");
    write_et(t, p);
    expect_same_graphs(p);
    EXPECT_NE(graph_of(p, {}, false).find(broken[i].second), std::string::npos)
        << graph_of(p, {}, false) << "\nexpected: " << broken[i].second;
  }
}

std::string frames(const std::vector<std::string>& messages) {
  std::string out;
  for (const std::string& m : messages) {
    put_varint(out, m.size());
    out += m;
  }
  return out;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(EtWire, UnpackedDepsAndUnknownFieldsInAFile) {
  TraceDir dir;
  std::string n1, n2;
  put_tag(n1, 1, 0), put_varint(n1, 1), put_tag(n1, 3, 0), put_varint(n1, 4), put_tag(n1, 7, 0), put_varint(n1, 2);
  put_len(n1, 99, "future field");
  put_tag(n2, 1, 0), put_varint(n2, 2), put_tag(n2, 3, 0), put_varint(n2, 4);
  put_tag(n2, 5, 0), put_varint(n2, 1);  // unpacked data dep
  put_tag(n2, 4, 0), put_varint(n2, 1);  // unpacked ctrl dep
  put_tag(n2, 4, 0), put_varint(n2, 2);  // on itself
  const std::string path = dir.file("u.0.et");
  write_bytes(path, frames({"\x0a\x05" "0.0.4", n1, n2}));
  expect_same_graphs(path);
  const RankGraph g(path, 0, GraphOptions{true, false});
  EXPECT_EQ(g.children(0).size(), 1u);
  EXPECT_EQ(g.self_ctrl_deps(), 1u);
}

TEST(EtWire, MalformedFileNamesFileFrameAndByteOffset) {
  TraceDir dir;
  const std::string path = dir.file("bad.0.et");
  std::string node;
  put_tag(node, 1, 0), put_varint(node, 1), put_tag(node, 3, 0), put_varint(node, 4);
  put_tag(node, 2, 2), put_varint(node, 40), node += "short";  // a name running past the node
  write_bytes(path, frames({"\x0a\x05" "0.0.4", node}));
  try {
    RankGraph g(path, 0, GraphOptions{});
    FAIL();
  } catch (const InputError& e) {
    // Frame 1 starts at byte 8; its name's length is at 8 + 1 + 4 + 1.
    EXPECT_EQ(std::string(e.what()), path + ": frame 1 (byte offset 8): not a valid Chakra node (length past the end "
                                           "of the message at byte offset 14)");
  }
  expect_same_graphs(path);
}

TEST(EtWire, MutatedFilesNeverCrashAndAgreeWithTheLibraryPath) {
  QuietProtobuf quiet;
  TraceDir dir;
  P2PRingSpec ring;
  ring.npus = 2;
  ring.iterations = 3;
  ring.bytes = 1024;
  EtTrace t = p2p_ring_trace(ring, 0, "m.0.et");
  const std::string path = dir.file("m.0.et");
  write_et(t, path);
  std::string clean;
  {
    std::ifstream in(path, std::ios::binary);
    clean.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::mt19937_64 rng(7);
  for (int c = 0; c < 300; ++c) {
    std::string b = clean;
    const std::size_t at = rng() % b.size();
    if (c % 3 == 0) b.resize(at);
    else b[at] = static_cast<char>(rng());
    write_bytes(path, b);
    const std::string fast = graph_of(path, {}, false), lib = graph_of(path, {}, true);
    ASSERT_EQ(fast, lib) << "case " << c;
  }
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

TEST(RankGraphMemory, RingNodesCostUnder15BytesEach) {
  // Per node: shape index 2, first child 4, parent count 2, tag 2, no name
  // number (the suffix is the tag) and about one child edge (4): 14 B, against
  // 22 B with 4 B columns and about 100 B before the compaction.
  P2PRingSpec ring;
  ring.npus = 4;
  ring.iterations = 2000;
  ring.bytes = 1 << 20;
  const RankGraph g(p2p_ring_trace(ring, 1, "r.1.et"), 1, GraphOptions{});
  const double per_node = static_cast<double>(g.memory_bytes()) / static_cast<double>(g.size());
  RecordProperty("bytes_per_node", std::to_string(per_node));
  EXPECT_LT(per_node, 15.0) << per_node;
  EXPECT_EQ(g.name(0), "send.0");
  EXPECT_EQ(g.name(3999), "recv.1999");
  EXPECT_EQ(g.node(3999).comm_tag, 1999);
  std::printf("p2p ring graph: %.1f B per node\n", per_node);
}

}  // namespace
}  // namespace sim
