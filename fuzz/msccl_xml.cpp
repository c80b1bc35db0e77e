// The MSCCL-IR XML chunk reader (system/msccl_xml_chunks): the first byte
// picks the ring's size (1..8 ranks, each sending to the next on tb 0 step 0
// and receiving from the previous on tb 1 step 0), the rest is the XML.
#include "fuzz/harness.h"
#include "system/producers/msccl_xml_chunks.h"

namespace {

sim::EtAlgorithm ring_algorithm(std::uint32_t n) {
  sim::EtAlgorithm algo;
  algo.ranks.resize(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    sim::EtOpSpec send;
    send.kind = sim::OpKind::kSend;
    send.peer = (r + 1) % n;
    send.node_id = 1;
    send.xml_tb = 0;
    send.xml_step = 0;
    sim::EtOpSpec recv = send;
    recv.kind = sim::OpKind::kRecv;
    recv.peer = (r + n - 1) % n;
    recv.node_id = 2;
    recv.xml_tb = 1;
    algo.ranks[r].ops = {send, recv};
  }
  return algo;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  if (size == 0) return 0;
  const std::uint32_t n = data[0] % 8 + 1;
  EtAlgorithm algo = ring_algorithm(n);
  algo.msccl_xml = fuzz::text_of(data + 1, size - 1);
  fuzz::expect_clean("msccl_xml", [&] {
    std::vector<std::vector<ChunkRange>> chunks;
    std::int64_t total = 0;
    const std::string why = msccl_xml_chunks(
        algo, n, [](std::uint32_t, std::uint32_t k) { return k % 2 == 1; }, chunks, total);
    if (why.empty() && total <= 0) throw std::logic_error("accepted XML without chunks");
  });
  return 0;
}
