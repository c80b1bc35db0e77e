#include "system/producers/msccl_data_check.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <tuple>

#include "core/error.h"
#include "core/units.h"

namespace sim {

namespace {

const char* collective_label(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce: return "all-reduce";
    case CollectiveType::kAllGather: return "all-gather";
    case CollectiveType::kReduceScatter: return "reduce-scatter";
    default: return "all-to-all";
  }
}

}  // namespace

std::optional<MscclDataModel> MscclDataModel::make(const EtAlgorithm& algo, std::uint32_t n, std::uint64_t max_bytes,
                                                   std::string& why) {
  MscclDataModel m;
  m.type_ = algo.type == CollectiveType::kReduceScatterBlock ? CollectiveType::kReduceScatter : algo.type;
  m.n_ = n;
  m.i_ = algo.msccl->i_chunks;
  m.o_ = algo.msccl->o_chunks;
  const std::uint64_t u = static_cast<std::uint64_t>(std::max(m.i_, m.o_));
  m.single_ = algo.msccl->inplace || m.i_ == 0 || m.o_ == 0;
  const auto i = static_cast<std::uint64_t>(m.i_), o = static_cast<std::uint64_t>(m.o_);
  std::uint64_t in = 0, out = 0;
  bool fits = false;
  switch (m.type_) {
    case CollectiveType::kAllReduce:
      in = m.single_ ? u : i, out = m.single_ ? u : o;
      fits = in == out && (!m.single_ || i == 0 || o == 0 || i == o);
      break;
    case CollectiveType::kAllGather:
      in = m.single_ ? (i > 0 ? i : u / n) : i, out = m.single_ ? u : o;
      fits = out == n * in;
      break;
    case CollectiveType::kReduceScatter:
      in = m.single_ ? u : i, out = m.single_ ? (o > 0 && o < u ? o : u / n) : o;
      fits = in == n * out;
      break;
    case CollectiveType::kAllToAll:
      in = m.single_ ? u : i, out = m.single_ ? u : o;
      fits = in == out && in % n == 0 && (!m.single_ || i == 0 || o == 0 || i == o);
      break;
    default:
      why = std::string(collective_name(m.type_)) + " is not modelled for MSCCL-IR (all-reduce, all-gather, "
            "reduce-scatter and all-to-all are)";
      return std::nullopt;
  }
  if (!fits || in == 0) {
    why = "the buffers (i_chunks " + std::to_string(m.i_) + ", o_chunks " + std::to_string(m.o_) +
          (m.single_ ? ", in place" : ", out of place") + ") do not fit " + collective_label(m.type_) + " on " +
          std::to_string(n) + " ranks";
    return std::nullopt;
  }
  if (in > (1u << 20) / n) {
    why = std::to_string(n) + " ranks x " + std::to_string(in) + " input chunks are too many contributions to track";
    return std::nullopt;
  }
  m.in_ = static_cast<std::uint32_t>(in);
  m.out_ = out;
  // Every operand inside its buffer, checked before any slot is computed:
  // a hand-edited ET's range past its buffer would otherwise land in the
  // next buffer's slots (and the check blame an unrelated chunk) or past
  // them all. Scratch and transient buffers reach as far as any op does.
  std::int64_t s = 0, t = 0;
  for (std::uint32_t r = 0; r < algo.ranks.size(); ++r) {
    for (const EtOpSpec& op : algo.ranks[r].ops) {
      const bool moves = op.kind != OpKind::kCompute || op.comp != MscclComp::kNone;
      if (!moves) continue;
      const bool reads = op.kind == OpKind::kSend || op.kind == OpKind::kCompute;
      const bool writes = op.kind != OpKind::kSend;
      const std::string node = algo.source + ": " + et_node_name(r, op);
      if (op.chunk_cnt < 1) {
        throw InputError(node + ": msg_chunk_cnt " + std::to_string(op.chunk_cnt) + " must be >= 1 (an MSCCL-IR "
                         "import's op moves at least one chunk)");
      }
      for (const auto& [use, buf, off, name] : {std::tuple{reads, op.src_buf, op.src_off, "src"},
                                                std::tuple{writes, op.dst_buf, op.dst_off, "dst"}}) {
        if (!use || (buf == 0 && op.kind == OpKind::kRecv)) continue;  // a receive its recv_reduce consumes
        if (const std::string why = m.outside(buf, off, op.chunk_cnt); !why.empty()) {
          throw InputError(node + ": msccl_" + name + "buf '" + (buf ? std::string(1, buf) : std::string()) +
                           "' msccl_" + name + "off " + std::to_string(off) + " with msg_chunk_cnt " +
                           std::to_string(op.chunk_cnt) + " " + why);
        }
        if (buf == 's') s = std::max(s, off + op.chunk_cnt);
        if (buf == 't') t = std::max(t, off + op.chunk_cnt);
      }
    }
  }
  m.base_s_ = m.single_ ? u : i + o;
  m.base_t_ = m.base_s_ + static_cast<std::uint64_t>(s);
  m.slots_ = m.base_t_ + static_cast<std::uint64_t>(t);
  // Every rank keeps a bitset of all contributions per slot.
  // Summed again in double: the 64-bit sum of huge scratch and transient reaches can wrap.
  const double slots = static_cast<double>(m.base_s_) + static_cast<double>(s) + static_cast<double>(t);
  if (static_cast<double>(n) * slots * ((m.ids() + 63) / 64) * 8 > static_cast<double>(max_bytes)) {
    why = std::to_string(n) + " ranks x " + std::to_string(m.slots_) + " chunk slots x " + std::to_string(m.ids()) +
          " contributions are too large to track (over " + format_bytes(max_bytes) + ")";
    return std::nullopt;
  }
  return m;
}

std::string MscclDataModel::outside(char buf, std::int64_t off, std::int64_t cnt) const {
  if (buf != 'i' && buf != 'o' && buf != 's' && buf != 't') return "names no buffer (i, o, s or t)";
  if (off < 0) return "starts before its buffer";
  if (cnt > std::numeric_limits<std::int64_t>::max() - off) return "reaches past 2^63-1 chunks";
  if (buf == 's' || buf == 't') return {};  // as large as the ops reach
  const std::int64_t size = buf == 'i' ? i_ : o_;
  if (off + cnt <= size) return {};
  return "is outside buffer '" + std::string(1, buf) + "' of " + std::to_string(size) + " chunks (i_chunks " +
         std::to_string(i_) + ", o_chunks " + std::to_string(o_) + " in the metadata)";
}

std::uint64_t MscclDataModel::slot(std::uint32_t rank, char buf, std::int64_t off) const {
  const auto o = static_cast<std::uint64_t>(off);
  switch (buf) {
    case 'i':
    case 'o': {
      const std::int64_t size = buf == 'i' ? i_ : o_;
      if (!single_) return buf == 'i' ? o : static_cast<std::uint64_t>(i_) + o;
      // In place: the smaller buffer is this rank's block of the larger.
      return size == std::max(i_, o_) ? o : rank * static_cast<std::uint64_t>(size) + o;
    }
    case 's': return base_s_ + o;
    default: return base_t_ + o;
  }
}

void MscclDataModel::fill(ChunkHoldings& d) const {
  for (std::uint32_t r = 0; r < n_; ++r) {
    for (std::uint32_t c = 0; c < in_; ++c) {
      std::uint64_t at = 0;
      if (i_ > 0) at = slot(r, 'i', c);
      else at = type_ == CollectiveType::kAllGather ? r * static_cast<std::uint64_t>(in_) + c : c;  // in o
      d.add(r, at, r * in_ + c);
    }
  }
}

MscclDataModel::Want MscclDataModel::want(std::uint32_t r, std::uint64_t q) const {
  const auto qq = static_cast<std::uint32_t>(q);
  switch (type_) {
    case CollectiveType::kAllReduce: return {qq, in_, n_};
    case CollectiveType::kAllGather: return {qq, 1, 1};
    case CollectiveType::kReduceScatter: return {r * static_cast<std::uint32_t>(out_) + qq, in_, n_};
    default: {  // all-to-all: block j of rank r's output is block r of rank j's input
      const std::uint32_t b = in_ / n_;
      return {(qq / b) * in_ + r * b + qq % b, 1, 1};
    }
  }
}

std::string MscclDataModel::describe(std::uint32_t id) const {
  return "rank " + std::to_string(id / in_) + "'s input chunk " + std::to_string(id % in_);
}

std::string MscclDataModel::verify(const ChunkHoldings& d, std::string& note) const {
  const std::uint32_t words = (ids() + 63) / 64;
  ChunkBits expect(words);
  for (std::uint32_t r = 0; r < n_; ++r) {
    for (std::uint64_t q = 0; q < out_; ++q) {
      std::uint64_t at = 0;
      if (o_ > 0) at = slot(r, 'o', static_cast<std::int64_t>(q));
      else at = type_ == CollectiveType::kReduceScatter ? r * out_ + q : q;  // in i
      const Want w = want(r, q);
      std::fill(expect.begin(), expect.end(), 0);
      for (std::uint32_t k = 0; k < w.count; ++k) {
        const std::uint32_t id = w.first + k * w.step;
        expect[id / 64] |= 1ull << (id % 64);
      }
      const std::uint64_t* held = d.at(r, at);
      std::uint32_t have = 0;
      for (std::uint32_t x = 0; x < words; ++x) have += static_cast<std::uint32_t>(std::popcount(held[x] & expect[x]));
      for (std::uint32_t x = 0; x < words; ++x) {
        const std::uint64_t extra = held[x] & ~expect[x], missing = expect[x] & ~held[x];
        if (extra == 0 && missing == 0) continue;
        const std::string head = std::string(collective_label(type_)) + " incomplete: rank " + std::to_string(r) +
                                 " output chunk " + std::to_string(q);
        if (extra != 0) {
          return head + " holds " + describe(x * 64 + static_cast<std::uint32_t>(std::countr_zero(extra))) +
                 ", which belongs elsewhere" + (w.count == 1 ? " (it should hold " + describe(w.first) + ")" : "");
        }
        return head + " lacks " + describe(x * 64 + static_cast<std::uint32_t>(std::countr_zero(missing))) + " (holds " +
               std::to_string(have) + " of " + std::to_string(w.count) + ")";
      }
    }
  }
  switch (type_) {
    case CollectiveType::kAllReduce:
      note = "data check passed: every rank's output chunk c holds chunk c of all " + std::to_string(n_) +
             " ranks' inputs, each reduced once";
      break;
    case CollectiveType::kAllGather:
      note = "data check passed: every rank's output holds every rank's input, in rank order";
      break;
    case CollectiveType::kReduceScatter:
      note = "data check passed: rank r's output holds block r of all " + std::to_string(n_) +
             " ranks' inputs, each reduced once";
      break;
    default:
      note = "data check passed: rank r's output block j holds rank j's input block r (the transpose)";
  }
  note += " (" + std::to_string(in_) + " input and " + std::to_string(out_) + " output chunks per rank; MSCCL-IR buffers)";
  return {};
}

}  // namespace sim
