#include "system/producers/msccl_import.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "core/error.h"
#include "core/units.h"
#include "system/program/collective_writer.h"
#include "workload/et/rank_set_writer.h"

namespace sim {

namespace {

// What a step type does: receive, send, combine locally (and how), and which
// of its buffer operands are local (for a plain send the dst operand and for
// a plain receive the src operand describe the peer's buffer).
struct StepKind {
  const char* name;
  bool recv, send;
  MscclComp comp;
  bool reads_src, writes_dst;
};
constexpr StepKind kKinds[] = {
    {"s", false, true, MscclComp::kNone, true, false},
    {"r", true, false, MscclComp::kNone, false, true},
    {"rrc", true, false, MscclComp::kRecvReduce, true, true},
    {"rcs", true, true, MscclComp::kNone, false, true},
    {"rrs", true, true, MscclComp::kRecvReduce, true, false},
    {"rrcs", true, true, MscclComp::kRecvReduce, true, true},
    {"cpy", false, false, MscclComp::kCopy, true, true},
    {"re", false, false, MscclComp::kReduce, true, true},
    {"nop", false, false, MscclComp::kNone, false, false},
};
constexpr const char* kKindList = "s, r, rrc, rcs, rrs, rrcs, cpy, re, nop";

const StepKind* find_kind(const std::string& type) {
  for (const StepKind& k : kKinds) {
    if (type == k.name) return &k;
  }
  return nullptr;
}

bool is_nop(const StepKind& k) { return !k.recv && !k.send && k.comp == MscclComp::kNone; }

// One GPU's threadblocks in id order, with their steps flattened: step j of
// threadblock t is flat index base[t] + j.
struct Gpu {
  const MscclGpu* xml = nullptr;
  std::vector<const MscclThreadblock*> tbs;
  std::map<std::int64_t, std::uint32_t> tb_index;  // tb id -> position in tbs
  std::vector<std::uint32_t> base;
  std::vector<const StepKind*> kinds;     // per flat step
  std::vector<std::int64_t> send_idx;      // per flat step: msg_chunk_idx of what it sends
  std::vector<std::int64_t> recv_idx;      // per flat step: msg_chunk_idx of the send it receives
  std::vector<std::int64_t> transient;     // per flat step: rrs's slot in the transient buffer
  std::uint32_t steps() const { return base.empty() ? 0 : base.back(); }
};

class Importer {
 public:
  Importer(const MscclAlgo& xml, std::optional<CollectiveType> coll, std::optional<std::uint64_t> size)
      : xml_(xml), size_(size) {
    header(coll);
  }

  MscclImport run() {
    index_gpus();
    for (std::uint32_t g = 0; g < n_; ++g) index_gpu(g);
    for (std::uint32_t g = 0; g < n_; ++g) check_steps(g);
    match_connections();
    MscclImport out;
    out.type = type_;
    for (std::uint32_t g = 0; g < n_; ++g) {
      check_acyclic(g);
      out.traces.push_back(build(g, out));
    }
    if (size_) write_sizes(out.traces);
    return out;
  }

  // comm_size (COMP: tensor_size) at S = size_, exactly as a run sizes the
  // chunk attributes (EtProgram).
  void write_sizes(std::vector<EtTrace>& traces) const {
    const auto algo = std::make_shared<const EtAlgorithm>(et_algorithm_from_traces(traces, xml_.file, type_));
    const EtProgram program(algo, *size_);
    for (std::uint32_t g = 0; g < n_; ++g) {
      for (et::Node& node : traces[g].nodes) {  // node id = index = op index (ops ascend by id)
        const auto k = static_cast<OpRef>(node.id());
        set_attr_int(node, node.type() == et::COMP_NODE ? "tensor_size" : "comm_size",
                     static_cast<std::int64_t>(program.op(g, k).bytes));
      }
    }
  }

 private:
  [[noreturn]] void fail(std::uint32_t line, const std::string& what) const { throw InputError(xml_.at(line) + ": " + what); }
  std::string step_name(std::uint32_t g, const MscclThreadblock& tb, const MscclStep& st) const {
    return "gpu " + std::to_string(g) + " tb " + std::to_string(tb.id) + " step " + std::to_string(st.s);
  }
  [[noreturn]] void fail_step(std::uint32_t g, const MscclThreadblock& tb, const MscclStep& st,
                              const std::string& what) const {
    fail(st.line, step_name(g, tb, st) + ": " + what);
  }

  void header(std::optional<CollectiveType> coll) {
    if (xml_.nchunksperloop < 1) fail(xml_.line, "<algo> needs nchunksperloop >= 1");
    const std::int64_t n = xml_.ngpus >= 0 ? xml_.ngpus : static_cast<std::int64_t>(xml_.gpus.size());
    if (n < 1) fail(xml_.line, "<algo> needs ngpus >= 1 (and its <gpu> elements)");
    // Before sizing anything by it: a huge ngpus is a bad file, not an allocation (found writing fuzz/msccl_import.cpp).
    if (n > static_cast<std::int64_t>(xml_.gpus.size())) {
      fail(xml_.line, "<algo> ngpus " + std::to_string(n) + " but the file has " + std::to_string(xml_.gpus.size()) +
                          " <gpu> elements (one per id 0..ngpus-1)");
    }
    n_ = static_cast<std::uint32_t>(n);
    const std::string& p = xml_.proto;
    if (!p.empty() && p != "Simple" && p != "LL" && p != "LL128") {
      fail(xml_.line, "<algo> proto '" + p + "' is not Simple, LL or LL128");
    }
    CollectiveType t{};
    const bool known = parse_collective_name(xml_.coll, t);
    if (coll && known && normalized_msccl(t) != normalized_msccl(*coll)) {
      fail(xml_.line, "<algo> coll '" + xml_.coll + "' is not " + collective_name(*coll) + ", the collective it was given for");
    }
    if (!coll && !known) {
      fail(xml_.line, "<algo> coll '" + xml_.coll + "' is not a collective the simulator knows (allreduce, allgather, "
                      "reducescatter, alltoall, ...): give it (--coll, or --collective <type>=file.xml)");
    }
    type_ = normalized_msccl(coll ? *coll : t);
  }
  static CollectiveType normalized_msccl(CollectiveType t) {
    return t == CollectiveType::kReduceScatterBlock ? CollectiveType::kReduceScatter : t;
  }

  // GPU ids must be exactly 0..ngpus-1; input and output buffers are the collective's.
  void index_gpus() {
    gpus_.resize(n_);
    if (xml_.gpus.empty()) fail(xml_.line, "<algo> has no <gpu> elements");
    const MscclGpu& first = xml_.gpus.front();
    for (const MscclGpu& x : xml_.gpus) {
      if (x.id < 0 || x.id >= n_) {
        fail(x.line, "<gpu> id " + std::to_string(x.id) + " is outside 0.." + std::to_string(n_ - 1) + " (ngpus " +
                         std::to_string(n_) + ")");
      }
      if (gpus_[x.id].xml) fail(x.line, "gpu " + std::to_string(x.id) + " is listed twice");
      if (x.i_chunks < 0 || x.o_chunks < 0 || x.s_chunks < 0) fail(x.line, "negative buffer size in chunks");
      if (x.i_chunks != first.i_chunks || x.o_chunks != first.o_chunks) {
        fail(x.line, "gpu " + std::to_string(x.id) + " has i_chunks " + std::to_string(x.i_chunks) + ", o_chunks " +
                         std::to_string(x.o_chunks) + " but gpu " + std::to_string(first.id) + " has " +
                         std::to_string(first.i_chunks) + ", " + std::to_string(first.o_chunks) +
                         " (input and output buffers are the collective's, the same on every GPU)");
      }
      gpus_[x.id].xml = &x;
    }
  }

  void index_gpu(std::uint32_t g) {
    Gpu& gpu = gpus_[g];
    if (!gpu.xml) fail(xml_.line, "no <gpu id=\"" + std::to_string(g) + "\"> (ngpus " + std::to_string(n_) + ")");
    for (const MscclThreadblock& tb : gpu.xml->tbs) {
      if (tb.id < 0) fail(tb.line, "gpu " + std::to_string(g) + ": <tb> id " + std::to_string(tb.id) + " is negative");
      if (!gpu.tb_index.emplace(tb.id, 0).second) {
        fail(tb.line, "gpu " + std::to_string(g) + " lists tb " + std::to_string(tb.id) + " twice");
      }
      gpu.tbs.push_back(&tb);
    }
    std::sort(gpu.tbs.begin(), gpu.tbs.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
    std::uint32_t flat = 0;
    for (std::uint32_t t = 0; t < gpu.tbs.size(); ++t) {
      gpu.tb_index[gpu.tbs[t]->id] = t;
      gpu.base.push_back(flat);
      flat += static_cast<std::uint32_t>(gpu.tbs[t]->steps.size());
    }
    gpu.base.push_back(flat);
    gpu.kinds.assign(flat, nullptr);
    gpu.send_idx.assign(flat, -1);
    gpu.recv_idx.assign(flat, -1);
    gpu.transient.assign(flat, -1);
  }

  std::int64_t buffer_chunks(const MscclGpu& gpu, const std::string& buf) const {
    if (buf == "i") return gpu.i_chunks;
    if (buf == "o") return gpu.o_chunks;
    if (buf == "s") return gpu.s_chunks;
    return -1;
  }

  // A local operand `buf`/`off` of `cnt` chunks must lie inside its buffer.
  void check_operand(std::uint32_t g, const MscclThreadblock& tb, const MscclStep& st, const char* which,
                     const std::string& buf, std::int64_t off) const {
    const std::int64_t size = buffer_chunks(*gpus_[g].xml, buf);
    if (size < 0) fail_step(g, tb, st, std::string(which) + "buf '" + buf + "' is not a buffer (i, o or s)");
    if (off < 0 || st.cnt > size || off > size - st.cnt) {  // not off + cnt > size: that can wrap
      fail_step(g, tb, st, std::string(which) + "off " + std::to_string(off) + " with cnt " + std::to_string(st.cnt) +
                               " is outside buffer '" + buf + "' of " + std::to_string(size) + " chunks");
    }
  }

  void check_peer(std::uint32_t g, const MscclThreadblock& tb, const char* what, std::int64_t peer) const {
    if (peer == -1) return;
    if (peer < -1 || peer >= n_) {
      fail(tb.line, "gpu " + std::to_string(g) + " tb " + std::to_string(tb.id) + ": " + what + " peer " +
                        std::to_string(peer) + " is outside 0.." + std::to_string(n_ - 1) + " (or -1 for none)");
    }
    if (peer == g) {
      fail(tb.line, "gpu " + std::to_string(g) + " tb " + std::to_string(tb.id) + ": " + what + " peer is the gpu itself");
    }
  }

  void check_steps(std::uint32_t g) {
    Gpu& gpu = gpus_[g];
    std::int64_t transient = 0;
    for (std::uint32_t t = 0; t < gpu.tbs.size(); ++t) {
      const MscclThreadblock& tb = *gpu.tbs[t];
      check_peer(g, tb, "send", tb.send);
      check_peer(g, tb, "recv", tb.recv);
      if (tb.chan < 0 || (xml_.nchannels > 0 && tb.chan >= xml_.nchannels)) {
        fail(tb.line, "gpu " + std::to_string(g) + " tb " + std::to_string(tb.id) + ": chan " +
                          std::to_string(tb.chan) + " is outside 0.." + std::to_string(xml_.nchannels - 1) +
                          " (nchannels " + std::to_string(xml_.nchannels) + ")");
      }
      for (std::uint32_t j = 0; j < tb.steps.size(); ++j) {
        const MscclStep& st = tb.steps[j];
        if (st.s != j) {
          fail(st.line, "gpu " + std::to_string(g) + " tb " + std::to_string(tb.id) + ": step s=\"" +
                            std::to_string(st.s) + "\" is at position " + std::to_string(j) +
                            " (steps are numbered 0, 1, ... in order)");
        }
        const StepKind* kind = find_kind(st.type);
        if (!kind) fail_step(g, tb, st, "unknown step type '" + st.type + "' (" + kKindList + ")");
        gpu.kinds[gpu.base[t] + j] = kind;
        if (kind->send && tb.send < 0) fail_step(g, tb, st, "'" + st.type + "' sends but the tb has no send peer (send=-1)");
        if (kind->recv && tb.recv < 0) fail_step(g, tb, st, "'" + st.type + "' receives but the tb has no recv peer (recv=-1)");
        if (st.depid >= 0) {
          const auto dep = gpu.tb_index.find(st.depid);
          if (dep == gpu.tb_index.end()) {
            fail_step(g, tb, st, "depends on tb " + std::to_string(st.depid) + ", which gpu " + std::to_string(g) + " lacks");
          }
          if (st.deps < 0 || st.deps >= static_cast<std::int64_t>(gpu.tbs[dep->second]->steps.size())) {
            fail_step(g, tb, st, "depends on step " + std::to_string(st.deps) + " of tb " + std::to_string(st.depid) +
                                     ", which has steps 0.." +
                                     std::to_string(gpu.tbs[dep->second]->steps.size() - 1));
          }
        } else if (st.depid < -1) {
          fail_step(g, tb, st, "depid " + std::to_string(st.depid) + " is neither a tb nor -1");
        }
        if (is_nop(*kind)) continue;
        if (st.cnt < 1) fail_step(g, tb, st, "cnt " + std::to_string(st.cnt) + " must be >= 1");
        if (kind->reads_src) check_operand(g, tb, st, "src", st.srcbuf, st.srcoff);
        if (kind->writes_dst) check_operand(g, tb, st, "dst", st.dstbuf, st.dstoff);
        // The index a send's message is sized by: where the data it sends sits.
        const std::uint32_t f = gpu.base[t] + j;
        if (kind->send) gpu.send_idx[f] = kind->writes_dst ? st.dstoff : st.srcoff;
        if (kind->send && !kind->writes_dst && kind->comp != MscclComp::kNone) {
          if (st.cnt > std::numeric_limits<std::int64_t>::max() - transient) {
            fail_step(g, tb, st, "the rrs steps' transient chunks add up past 2^63-1");
          }
          gpu.transient[f] = transient;
          transient += st.cnt;
        }
      }
    }
  }

  using ConnKey = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;  // (from gpu, to gpu, channel)
  using End = std::pair<std::uint32_t, std::uint32_t>;                       // (gpu, tb position)

  // Sends and receives pair up FIFO per (sender, receiver, channel), one
  // threadblock at each end; a receive is sized by the index of its send.
  void match_connections() {
    std::map<ConnKey, End> senders, receivers;
    for (std::uint32_t g = 0; g < n_; ++g) {
      for (std::uint32_t t = 0; t < gpus_[g].tbs.size(); ++t) {
        const MscclThreadblock& tb = *gpus_[g].tbs[t];
        const auto claim = [&](std::map<ConnKey, End>& table, const ConnKey& key, const char* what) {
          const auto [it, fresh] = table.emplace(key, End{g, t});
          if (!fresh) {
            fail(tb.line, "gpu " + std::to_string(g) + " tb " + std::to_string(tb.id) + " and tb " +
                              std::to_string(gpus_[g].tbs[it->second.second]->id) + " both " + what + " on channel " +
                              std::to_string(tb.chan) + " (MSCCL has one connection per peer and channel)");
          }
        };
        if (tb.send >= 0) claim(senders, ConnKey{g, static_cast<std::uint32_t>(tb.send), tb.chan}, "send to the same peer");
        if (tb.recv >= 0) claim(receivers, ConnKey{static_cast<std::uint32_t>(tb.recv), g, tb.chan}, "receive from the same peer");
      }
    }
    for (const auto& [key, from] : senders) {
      const auto to = receivers.find(key);
      pair_connection(key, from, to == receivers.end() ? nullptr : &to->second);
    }
    for (const auto& [key, to] : receivers) {
      if (senders.count(key)) continue;
      const auto [src, dst, chan] = key;
      const std::vector<std::uint32_t> recvs = end_steps(to, false);
      if (recvs.empty()) continue;
      const MscclThreadblock& rtb = *gpus_[dst].tbs[to.second];
      fail_step(dst, rtb, rtb.steps[recvs[0]], "receives from gpu " + std::to_string(src) + " on channel " +
                                                   std::to_string(chan) + " but no tb of gpu " + std::to_string(src) +
                                                   " sends to gpu " + std::to_string(dst) + " on that channel");
    }
  }

  // The steps of an end's threadblock that send (or receive), in order.
  std::vector<std::uint32_t> end_steps(const End& at, bool send) const {
    std::vector<std::uint32_t> out;
    const Gpu& gpu = gpus_[at.first];
    for (std::uint32_t j = 0; j < gpu.tbs[at.second]->steps.size(); ++j) {
      const StepKind& k = *gpu.kinds[gpu.base[at.second] + j];
      if (send ? k.send : k.recv) out.push_back(j);
    }
    return out;
  }

  // Zips one connection's sends with its receives (`to`: null when no
  // threadblock receives); each receive takes its send's chunk index.
  void pair_connection(const ConnKey& key, const End& from, const End* to) {
    const auto [src, dst, chan] = key;
    const MscclThreadblock& stb = *gpus_[src].tbs[from.second];
    const std::vector<std::uint32_t> sends = end_steps(from, true);
    if (!to) {
      if (sends.empty()) return;
      fail_step(src, stb, stb.steps[sends[0]], "sends to gpu " + std::to_string(dst) + " on channel " +
                                                  std::to_string(chan) + " but no tb of gpu " + std::to_string(dst) +
                                                  " receives from gpu " + std::to_string(src) + " on that channel");
    }
    const MscclThreadblock& rtb = *gpus_[dst].tbs[to->second];
    const std::vector<std::uint32_t> recvs = end_steps(*to, false);
    for (std::size_t m = 0; m < std::max(sends.size(), recvs.size()); ++m) {
      if (m >= sends.size()) {
        fail_step(dst, rtb, rtb.steps[recvs[m]], "receive number " + std::to_string(m + 1) + " from gpu " +
                                                     std::to_string(src) + " on channel " + std::to_string(chan) +
                                                     " is never sent (gpu " + std::to_string(src) + " tb " +
                                                     std::to_string(stb.id) + " sends " + std::to_string(sends.size()) + ")");
      }
      const MscclStep& s = stb.steps[sends[m]];
      if (m >= recvs.size()) {
        fail_step(src, stb, s, "send number " + std::to_string(m + 1) + " to gpu " + std::to_string(dst) + " on channel " +
                                   std::to_string(chan) + " is never received (gpu " + std::to_string(dst) + " tb " +
                                   std::to_string(rtb.id) + " receives " + std::to_string(recvs.size()) + ")");
      }
      const MscclStep& r = rtb.steps[recvs[m]];
      if (r.cnt != s.cnt) {
        fail_step(dst, rtb, r, "receives cnt " + std::to_string(r.cnt) + " but the matching send (" +
                                   step_name(src, stb, s) + ") sends cnt " + std::to_string(s.cnt));
      }
      gpus_[dst].recv_idx[gpus_[dst].base[to->second] + recvs[m]] = gpus_[src].send_idx[gpus_[src].base[from.second] + sends[m]];
    }
  }

  // The steps a flat step waits for directly: the one before it in its
  // threadblock and its depid/deps target.
  std::vector<std::uint32_t> waits_for(const Gpu& gpu, std::uint32_t t, std::uint32_t j) const {
    std::vector<std::uint32_t> out;
    if (j > 0) out.push_back(gpu.base[t] + j - 1);
    const MscclStep& st = gpu.tbs[t]->steps[j];
    if (st.depid >= 0) out.push_back(gpu.base[gpu.tb_index.at(st.depid)] + static_cast<std::uint32_t>(st.deps));
    return out;
  }
  std::pair<std::uint32_t, std::uint32_t> locate(const Gpu& gpu, std::uint32_t f) const {
    const auto t = static_cast<std::uint32_t>(std::upper_bound(gpu.base.begin(), gpu.base.end(), f) - gpu.base.begin() - 1);
    return {t, f - gpu.base[t]};
  }

  // Depth-first search over "waits for"; a back edge is a cycle, named step by step.
  void check_acyclic(std::uint32_t g) const {
    const Gpu& gpu = gpus_[g];
    std::vector<std::uint8_t> color(gpu.steps(), 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> path;
    for (std::uint32_t root = 0; root < gpu.steps(); ++root) {
      if (color[root]) continue;
      const auto push = [&](std::uint32_t f) {
        const auto [t, j] = locate(gpu, f);
        color[f] = 1;
        path.emplace_back(f, waits_for(gpu, t, j));
      };
      push(root);
      while (!path.empty()) {
        auto& [f, next] = path.back();
        if (next.empty()) {
          color[f] = 2;
          path.pop_back();
          continue;
        }
        const std::uint32_t w = next.back();
        next.pop_back();
        if (color[w] == 1) report_cycle(g, path, w);
        if (color[w] == 0) push(w);
      }
    }
  }
  // Names the cycle's first steps and its length, not every step: a cycle
  // through 100,000 nop steps is one line.
  [[noreturn]] void report_cycle(std::uint32_t g,
                                 const std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>>& path,
                                 std::uint32_t back) const {
    constexpr std::size_t kShown = 6;
    const Gpu& gpu = gpus_[g];
    const auto named = [&](std::uint32_t f) {
      const auto [t, j] = locate(gpu, f);
      return "tb " + std::to_string(gpu.tbs[t]->id) + " step " + std::to_string(j);
    };
    std::size_t from = 0;
    while (path[from].first != back) ++from;
    const std::size_t length = path.size() - from;
    std::string chain;
    for (std::size_t i = from; i < path.size() && i < from + kShown; ++i) chain += named(path[i].first) + " waits for ";
    if (length > kShown) chain += "... (" + std::to_string(length) + " steps in all), which waits for ";
    chain += named(back);
    const auto [t, j] = locate(gpu, back);
    fail_step(g, *gpu.tbs[t], gpu.tbs[t]->steps[j], "dependency cycle: " + chain);
  }

  // Every node id a step's dependants wait for, summed over all steps and
  // nop sets of the import: a chain of nops that each add a dependency grows
  // quadratically.
  static constexpr std::uint64_t kMaxExpansion = std::uint64_t{1} << 24;
  void count_expansion(std::uint32_t g, std::uint32_t f, std::size_t n, std::uint64_t& expanded) const {
    expanded += n;
    if (expanded <= kMaxExpansion) return;
    const auto [t, j] = locate(gpus_[g], f);
    fail_step(g, *gpus_[g].tbs[t], gpus_[g].tbs[t]->steps[j],
              "the dependencies through nop steps expand to more than " + std::to_string(kMaxExpansion) +
                  " (2^24) node dependencies; the import stops there (shorten the chains of nops or "
                  "let fewer steps wait for them)");
  }

  // The node ids that "step f done" means: its last node, or for a nop
  // everything it waits for, transitively through nops (memoized per nop).
  // Iterative: a chain of 100,000 nops must not recurse 100,000 deep. The
  // graph is acyclic (check_acyclic ran first).
  void done_nodes(std::uint32_t g, std::uint32_t f, const std::vector<std::uint64_t>& last,
                  std::vector<std::vector<std::uint64_t>>& memo, std::vector<char>& known,
                  std::vector<std::uint64_t>& out, std::uint64_t& expanded) const {
    const Gpu& gpu = gpus_[g];
    if (!is_nop(*gpu.kinds[f])) {
      out.push_back(last[f]);
      return;
    }
    std::vector<std::uint32_t> stack{f};
    while (!stack.empty()) {
      const std::uint32_t x = stack.back();
      if (known[x]) {
        stack.pop_back();
        continue;
      }
      const auto [t, j] = locate(gpu, x);
      const std::vector<std::uint32_t> waits = waits_for(gpu, t, j);
      bool ready = true;
      for (std::uint32_t w : waits) {
        if (is_nop(*gpu.kinds[w]) && !known[w]) {
          stack.push_back(w);
          ready = false;
        }
      }
      if (!ready) continue;
      stack.pop_back();
      std::vector<std::uint64_t> set;
      for (std::uint32_t w : waits) {
        if (is_nop(*gpu.kinds[w])) set.insert(set.end(), memo[w].begin(), memo[w].end());
        else set.push_back(last[w]);
      }
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      count_expansion(g, x, set.size(), expanded);
      memo[x] = std::move(set);
      known[x] = 1;
    }
    out.insert(out.end(), memo[f].begin(), memo[f].end());
  }

  EtTrace build(std::uint32_t g, MscclImport& stats) const {
    const Gpu& gpu = gpus_[g];
    EtTrace trace;
    metadata(trace.metadata);
    // Node ids: threadblocks in id order, steps in order, nodes of a step in order.
    std::vector<std::uint64_t> first(gpu.steps(), 0), last(gpu.steps(), 0);
    std::uint64_t next = 0;
    for (std::uint32_t f = 0; f < gpu.steps(); ++f) {
      const StepKind& k = *gpu.kinds[f];
      if (is_nop(k)) continue;
      first[f] = next;
      next += (k.recv ? 1 : 0) + (k.comp != MscclComp::kNone ? 1 : 0) + (k.send ? 1 : 0);
      last[f] = next - 1;
    }
    trace.nodes.reserve(next);
    std::vector<std::vector<std::uint64_t>> memo(gpu.steps());
    std::vector<char> known(gpu.steps(), 0);
    for (std::uint32_t t = 0; t < gpu.tbs.size(); ++t) {
      const MscclThreadblock& tb = *gpu.tbs[t];
      for (std::uint32_t j = 0; j < tb.steps.size(); ++j) {
        const std::uint32_t f = gpu.base[t] + j;
        const StepKind& k = *gpu.kinds[f];
        ++stats.steps;
        if (is_nop(k)) continue;
        std::vector<std::uint64_t> deps;
        for (std::uint32_t w : waits_for(gpu, t, j)) done_nodes(g, w, last, memo, known, deps, expanded_);
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        count_expansion(g, f, deps.size(), expanded_);
        emit_step(gpu, t, j, k, deps, trace.nodes, stats);
      }
    }
    return trace;
  }

  void emit_step(const Gpu& gpu, std::uint32_t t, std::uint32_t j, const StepKind& k, std::vector<std::uint64_t> deps,
                 std::vector<et::Node>& nodes, MscclImport& stats) const {
    const MscclThreadblock& tb = *gpu.tbs[t];
    const MscclStep& st = tb.steps[j];
    const std::uint32_t f = gpu.base[t] + j;
    const std::string suffix = "_tb" + std::to_string(tb.id) + "_step" + std::to_string(j);
    const auto add = [&](et::NodeType type, const char* stem, std::int64_t idx) -> et::Node& {
      et::Node& node = nodes.emplace_back();
      node.set_id(nodes.size() - 1);
      node.set_name(std::string(stem).append(suffix));
      node.set_type(type);
      for (std::uint64_t d : deps) node.add_data_deps(d);
      deps.assign(1, node.id());  // the step's next node waits for this one
      set_attr_bool(node, "is_cpu_op", false);
      put_int_attr(node, "msg_chunk_idx", static_cast<std::uint64_t>(idx));
      put_int_attr(node, "msg_chunk_cnt", static_cast<std::uint64_t>(st.cnt));
      put_int_attr(node, "total_chunk_cnt", static_cast<std::uint64_t>(xml_.nchunksperloop));
      put_int_attr(node, "tb_id", static_cast<std::uint64_t>(tb.id));
      put_int_attr(node, "local_time_step", j);
      return node;
    };
    const auto where = [](et::Node& node, const char* buf_key, const char* off_key, const std::string& buf, std::int64_t off) {
      set_attr_string(node, buf_key, buf);
      set_attr_int(node, off_key, off);
    };
    const std::size_t first_index = nodes.size();
    const std::string transient = "t";
    if (k.recv) {
      et::Node& recv = add(et::COMM_RECV_NODE, "COMM_RECV_NODE", gpu.recv_idx[f]);
      put_int_attr(recv, "comm_src", static_cast<std::uint64_t>(tb.recv));
      put_int_attr(recv, "comm_tag", static_cast<std::uint64_t>(tb.chan));
      put_int_attr(recv, "chunk_offset", static_cast<std::uint64_t>(std::max<std::int64_t>(0, st.dstoff)));
      // A receive that a reduction consumes writes nothing itself.
      if (k.comp == MscclComp::kNone) where(recv, "msccl_dstbuf", "msccl_dstoff", st.dstbuf, st.dstoff);
      ++stats.recvs;
    }
    if (k.comp != MscclComp::kNone) {
      const bool to_transient = !k.writes_dst;
      et::Node& comp = add(et::COMP_NODE, "COMP_NODE", to_transient ? st.srcoff : st.dstoff);
      set_attr_string(comp, "msccl_op", k.comp == MscclComp::kCopy     ? "copy"
                                        : k.comp == MscclComp::kReduce ? "reduce"
                                                                       : "recv_reduce");
      where(comp, "msccl_srcbuf", "msccl_srcoff", st.srcbuf, st.srcoff);
      if (to_transient) where(comp, "msccl_dstbuf", "msccl_dstoff", transient, gpu.transient[f]);
      else where(comp, "msccl_dstbuf", "msccl_dstoff", st.dstbuf, st.dstoff);
      ++stats.comps;
    }
    if (k.send) {
      et::Node& send = add(et::COMM_SEND_NODE, "COMM_SEND_NODE", gpu.send_idx[f]);
      put_int_attr(send, "comm_dst", static_cast<std::uint64_t>(tb.send));
      put_int_attr(send, "comm_tag", static_cast<std::uint64_t>(tb.chan));
      // What it sends: its src operand, or what the step just wrote.
      if (k.comp != MscclComp::kNone && !k.writes_dst) where(send, "msccl_srcbuf", "msccl_srcoff", transient, gpu.transient[f]);
      else if (k.writes_dst) where(send, "msccl_srcbuf", "msccl_srcoff", st.dstbuf, st.dstoff);
      else where(send, "msccl_srcbuf", "msccl_srcoff", st.srcbuf, st.srcoff);
      put_int_attr(send, "chunk_offset", static_cast<std::uint64_t>(std::max<std::int64_t>(0, gpu.send_idx[f])));
      ++stats.sends;
    }
    // The converter's step attributes, on the step's first node.
    et::Node& head = nodes[first_index];
    set_attr_int(head, "depid", st.depid);
    set_attr_int(head, "deps", st.deps);
    set_attr_int(head, "hasdep", st.hasdep ? 1 : 0);
  }

  void metadata(et::GlobalMetadata& md) const {
    md.set_version("0.0.4");
    put_metadata(md, "collective", collective_name(type_));
    put_metadata(md, "algorithm", "msccl:" + xml_.name);
    put_metadata(md, "npus", n_);
    put_metadata(md, "msccl_source", xml_.file);
    put_metadata(md, "msccl_proto", xml_.proto);
    put_metadata(md, "msccl_nchannels", xml_.nchannels);
    put_metadata(md, "msccl_nchunksperloop", xml_.nchunksperloop);
    const MscclGpu& g0 = *gpus_[0].xml;
    put_metadata(md, "msccl_i_chunks", g0.i_chunks);
    put_metadata(md, "msccl_o_chunks", g0.o_chunks);
    const bool inplace = xml_.inplace >= 0 ? xml_.inplace != 0 : g0.i_chunks == 0 || g0.o_chunks == 0;
    put_metadata(md, "msccl_inplace", inplace ? 1 : 0);
    if (size_) put_metadata(md, "collective_size", static_cast<std::int64_t>(*size_));
  }

  const MscclAlgo& xml_;
  std::optional<std::uint64_t> size_;
  std::uint32_t n_ = 0;
  CollectiveType type_ = CollectiveType::kAllReduce;
  std::vector<Gpu> gpus_;
  mutable std::uint64_t expanded_ = 0;  // see count_expansion
};

}  // namespace

MscclImport import_msccl(const MscclAlgo& xml, std::optional<CollectiveType> coll, std::optional<std::uint64_t> size) {
  return Importer(xml, coll, size).run();
}

bool is_msccl_xml_path(const std::string& source) {
  return source.size() > 4 && source.compare(source.size() - 4, 4, ".xml") == 0;
}

CollectiveType msccl_xml_collective(const std::string& path) {
  const MscclAlgo xml = load_msccl_ir(path);
  CollectiveType t;
  if (!parse_collective_name(xml.coll, t)) {
    throw InputError(xml.at(xml.line) + ": <algo> coll '" + xml.coll + "' is not a collective the simulator knows; "
                     "give it as --collective <type>=" + path);
  }
  return t;
}

EtAlgorithm load_msccl_algorithm(const std::string& path, std::optional<CollectiveType> expected) {
  const MscclImport imp = import_msccl(load_msccl_ir(path), expected, std::nullopt);
  return et_algorithm_from_traces(imp.traces, path, expected);
}

int run_msccl_import(const MscclImportOptions& o, std::ostream& out) {
  prepare_rank_prefix(o.prefix);
  std::optional<CollectiveType> coll;
  if (!o.collective.empty()) {
    CollectiveType t;
    if (!parse_collective_name(o.collective, t)) {
      throw InputError("--coll '" + o.collective + "' is not a collective (allreduce, allgather, reducescatter, alltoall, ...)");
    }
    coll = t;
  }
  std::optional<std::uint64_t> size;
  if (!o.size_text.empty()) {
    try {
      size = parse_size(o.size_text);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--size: ") + e.what());
    }
    if (*size == 0) throw InputError("--size must be > 0");
  }
  const MscclAlgo xml = load_msccl_ir(o.xml);
  const MscclImport imp = import_msccl(xml, coll, size);
  // Load what will be written, so a file that cannot run is never written.
  et_algorithm_from_traces(imp.traces, o.prefix, imp.type);
  const std::string removed = write_rank_ets(imp.traces, o.prefix);
  const std::size_t n = imp.traces.size();
  out << "wrote " << n << (n == 1 ? " file " : " files ") << o.prefix << ".{0.." << n - 1 << "}.et: MSCCL-IR '"
      << xml.name << "' " << collective_name(imp.type) << " on " << n << " GPUs (proto "
      << (xml.proto.empty() ? "unset" : xml.proto) << ", " << xml.nchunksperloop << " chunks per loop), "
      << imp.steps << " steps -> " << imp.sends << " sends, " << imp.recvs << " receives, " << imp.comps
      << " COMPs; sizes " << (size ? "resolved for " + format_bytes(*size) + " (comm_size) and " : std::string())
      << "symbolic (chunk attributes)";
  out << removed;
  out << "\n";
  return kExitOk;
}

}  // namespace sim
