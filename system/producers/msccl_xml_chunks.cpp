#include "system/producers/msccl_xml_chunks.h"

#include <map>
#include <utility>

#include "core/error.h"
#include "system/producers/msccl_ir.h"

namespace sim {

std::string msccl_xml_chunks(const EtAlgorithm& algo, std::uint32_t n,
                             const std::function<bool(std::uint32_t, std::uint32_t)>& reduced,
                             std::vector<std::vector<ChunkRange>>& chunks, std::int64_t& total) {
  const std::string mismatch = "the MSCCL-IR XML in the metadata (input_file) does not match it: ";
  MscclAlgo xml;
  try {
    xml = parse_msccl_ir(algo.msccl_xml, "input_file");
  } catch (const InputError& e) {
    return std::string("the metadata's input_file is not MSCCL-IR XML (") + e.what() + ")";
  }
  const long long t = xml.nchunksperloop;
  if (t <= 0) return "the MSCCL-IR XML in the metadata (input_file) has no positive nchunksperloop";
  if (xml.ngpus >= 0 && xml.ngpus != n) {
    return mismatch + "the XML is for " + std::to_string(xml.ngpus) + " GPUs, the ET has " + std::to_string(n) +
           " ranks";
  }
  if (CollectiveType c = algo.type; parse_collective_name(xml.coll, c) && c != algo.type) {
    return mismatch + "the XML's coll '" + xml.coll + "' is not " + collective_name(algo.type);
  }
  std::vector<const MscclGpu*> gpus(n, nullptr);
  for (const MscclGpu& g : xml.gpus) {
    if (g.id < 0 || g.id >= n) return mismatch + "its gpu id '" + std::to_string(g.id) + "' is not a rank";
    if (gpus[g.id]) return mismatch + "it lists gpu " + std::to_string(g.id) + " twice";
    gpus[g.id] = &g;
  }
  const auto buffer_chunks = [&](const MscclGpu& gpu, const std::string& buf) -> long long {
    if (buf != "i" && buf != "o") return -1;  // the scratch buffer is not modelled
    return buf == "i" ? gpu.i_chunks : gpu.o_chunks;
  };
  chunks.assign(n, {});
  for (std::uint32_t r = 0; r < n; ++r) {
    const EtRankProgram& p = algo.ranks[r];
    chunks[r].resize(p.ops.size());
    // (tb, step) -> step, for this rank's gpu.
    std::map<std::pair<long long, long long>, const MscclStep*> steps;
    std::map<long long, const MscclThreadblock*> tbs;
    for (std::uint32_t k = 0; k < p.ops.size(); ++k) {
      const EtOpSpec& op = p.ops[k];
      if (op.kind == OpKind::kCompute) continue;
      const bool send = op.kind == OpKind::kSend;
      if (op.xml_tb < 0) {
        return mismatch + et_node_name(r, op) + " is not named like the converter's nodes (" +
               (send ? "COMM_SEND_NODE" : "COMM_RECV_NODE") + "_tb<t>_step<s>)";
      }
      if (!gpus[r]) return mismatch + "it has no gpu " + std::to_string(r);
      if (tbs.empty() && steps.empty()) {
        for (const MscclThreadblock& tb : gpus[r]->tbs) {
          tbs.emplace(tb.id, &tb);
          for (const MscclStep& st : tb.steps) steps.emplace(std::pair{tb.id, st.s}, &st);
        }
      }
      const std::string named = et_node_name(r, op) + " (tb " + std::to_string(op.xml_tb) + " step " +
                                std::to_string(op.xml_step) + ")";
      const auto tb = tbs.find(op.xml_tb);
      if (tb == tbs.end()) {
        return mismatch + named + ": gpu " + std::to_string(r) + " has no tb " + std::to_string(op.xml_tb);
      }
      const auto st = steps.find({op.xml_tb, op.xml_step});
      if (st == steps.end()) {
        return mismatch + named + ": tb " + std::to_string(op.xml_tb) + " of gpu " + std::to_string(r) +
               " has no step " + std::to_string(op.xml_step);
      }
      const MscclStep& step = *st->second;
      const std::string& type = step.type;
      // The converter writes `s` as a send, `r` as a receive and `rrc` as a receive and its reduce.
      if (send ? type != "s" : type != "r" && type != "rrc") {
        return mismatch + named + " is a " + (send ? "send" : "receive") + " but the step's type is '" + type + "'";
      }
      const std::int64_t peer = send ? tb->second->send : tb->second->recv;
      if (peer != op.peer) {
        return mismatch + named + (send ? " sends to rank " : " receives from rank ") + std::to_string(op.peer) +
               " but the tb's " + (send ? "send" : "recv") + " peer is '" + std::to_string(peer) + "'";
      }
      if (!send && (type == "rrc") != (reduced(r, k))) {
        return mismatch + named + (type == "rrc" ? " has no reduce COMP though the step is 'rrc'"
                                                 : " is reduced by a COMP though the step is a plain 'r'");
      }
      const std::string& buf = send ? step.srcbuf : step.dstbuf;
      if (buffer_chunks(*gpus[r], buf) != t) {
        return mismatch + named + " uses buffer '" + buf + "', not a buffer of the " + std::to_string(t) +
               " chunks (nchunksperloop) the data check models";
      }
      const long long off = send ? step.srcoff : step.dstoff;
      const long long cnt = step.cnt;
      if (off < 0 || off >= t || cnt < 1 || cnt > t - off) {
        return mismatch + named + " names chunks " + std::to_string(off) + " (cnt " + std::to_string(cnt) +
               ") outside the " + std::to_string(t) + " chunks";
      }
      chunks[r][k] = {static_cast<std::uint64_t>(off), static_cast<std::uint64_t>(cnt)};
    }
  }
  total = t;
  return {};
}

}  // namespace sim
