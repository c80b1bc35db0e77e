// Gzip-compressed ETs: the input is compressed first (so the inflater sees a
// valid stream of hostile payload) unless it already starts with gzip's magic
// bytes (then the inflater itself sees hostile bytes).
#include <zlib.h>

#include "fuzz/harness.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace {

std::string gzip(const std::string& in) {
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, in.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  std::string bytes = fuzz::text_of(data, size);
  if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) bytes = gzip(bytes);
  fuzz::expect_clean("et_gzip", [&] {
    const EtTrace trace = parse_et(bytes, "fuzz.et.gz");
    RankGraph graph(trace, 0, GraphOptions{});
  });
  return 0;
}
