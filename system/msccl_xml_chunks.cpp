#include "system/msccl_xml_chunks.h"

#include <map>
#include <utility>

#include <pugixml.hpp>

namespace sim {

std::string msccl_xml_chunks(const EtAlgorithm& algo, std::uint32_t n,
                             const std::function<bool(std::uint32_t, std::uint32_t)>& reduced,
                             std::vector<std::vector<ChunkRange>>& chunks, std::int64_t& total) {
  const std::string mismatch = "the MSCCL-IR XML in the metadata (input_file) does not match it: ";
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(algo.msccl_xml.data(), algo.msccl_xml.size());
  if (!parsed) {
    return std::string("the metadata's input_file is not MSCCL-IR XML (") + parsed.description() + " at offset " +
           std::to_string(parsed.offset) + ")";
  }
  const pugi::xml_node root = doc.child("algo");
  if (!root) return "the metadata's input_file is not MSCCL-IR XML (no <algo> element)";
  const long long t = root.attribute("nchunksperloop").as_llong(-1);
  if (t <= 0) return "the MSCCL-IR XML in the metadata (input_file) has no positive nchunksperloop";
  if (const pugi::xml_attribute g = root.attribute("ngpus"); g && g.as_llong(-1) != n) {
    return mismatch + "the XML is for " + g.value() + " GPUs, the ET has " + std::to_string(n) + " ranks";
  }
  if (CollectiveType c = algo.type; parse_collective_name(root.attribute("coll").value(), c) && c != algo.type) {
    return mismatch + "the XML's coll '" + root.attribute("coll").value() + "' is not " +
           collective_name(algo.type);
  }
  std::vector<pugi::xml_node> gpus(n);
  for (const pugi::xml_node g : root.children("gpu")) {
    const long long id = g.attribute("id").as_llong(-1);
    if (id < 0 || id >= n) return mismatch + "its gpu id '" + g.attribute("id").value() + "' is not a rank";
    if (gpus[id]) return mismatch + "it lists gpu " + std::to_string(id) + " twice";
    gpus[id] = g;
  }
  const auto buffer_chunks = [&](const pugi::xml_node& gpu, const std::string& buf) -> long long {
    if (buf != "i" && buf != "o") return -1;  // the scratch buffer is not modelled
    const pugi::xml_attribute a = gpu.attribute(buf == "i" ? "i_chunks" : "o_chunks");
    return a ? a.as_llong(-1) : t;
  };
  chunks.assign(n, {});
  for (std::uint32_t r = 0; r < n; ++r) {
    const EtRankProgram& p = algo.ranks[r];
    chunks[r].resize(p.ops.size());
    // (tb, step) -> step element, for this rank's gpu.
    std::map<std::pair<long long, long long>, pugi::xml_node> steps;
    std::map<long long, pugi::xml_node> tbs;
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
        for (const pugi::xml_node tb : gpus[r].children("tb")) {
          const long long id = tb.attribute("id").as_llong(-1);
          tbs.emplace(id, tb);
          for (const pugi::xml_node st : tb.children("step")) {
            steps.emplace(std::pair{id, st.attribute("s").as_llong(-1)}, st);
          }
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
      const pugi::xml_node step = st->second;
      const std::string type = step.attribute("type").value();
      // The converter writes `s` as a send, `r` as a receive and `rrc` as a receive and its reduce.
      if (send ? type != "s" : type != "r" && type != "rrc") {
        return mismatch + named + " is a " + (send ? "send" : "receive") + " but the step's type is '" + type + "'";
      }
      const pugi::xml_attribute peer = tb->second.attribute(send ? "send" : "recv");
      if (peer.as_llong(-1) != op.peer) {
        return mismatch + named + (send ? " sends to rank " : " receives from rank ") + std::to_string(op.peer) +
               " but the tb's " + (send ? "send" : "recv") + " peer is '" + peer.value() + "'";
      }
      if (!send && (type == "rrc") != (reduced(r, k))) {
        return mismatch + named + (type == "rrc" ? " has no reduce COMP though the step is 'rrc'"
                                                 : " is reduced by a COMP though the step is a plain 'r'");
      }
      const std::string buf = step.attribute(send ? "srcbuf" : "dstbuf").value();
      if (buffer_chunks(gpus[r], buf) != t) {
        return mismatch + named + " uses buffer '" + buf + "', not a buffer of the " + std::to_string(t) +
               " chunks (nchunksperloop) the data check models";
      }
      const long long off = step.attribute(send ? "srcoff" : "dstoff").as_llong(-1);
      const long long cnt = step.attribute("cnt").as_llong(-1);
      if (off < 0 || off >= t || cnt < 1 || cnt > t - off) {
        return mismatch + named + " names chunks " + step.attribute(send ? "srcoff" : "dstoff").value() + " (cnt " +
               step.attribute("cnt").value() + ") outside the " + std::to_string(t) + " chunks";
      }
      chunks[r][k] = {static_cast<std::uint64_t>(off), static_cast<std::uint64_t>(cnt)};
    }
  }
  total = t;
  return {};
}

}  // namespace sim
