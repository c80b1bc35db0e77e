#include "system/registry/collective_checker.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "system/program/chunk_holdings.h"
#include "system/program/message_matcher.h"
#include "system/producers/msccl_data_check.h"
#include "system/producers/msccl_xml_chunks.h"

namespace sim {

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

std::string chunk_word(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " chunk" : " chunks"); }

constexpr const char* kFromXml = "chunk indices recovered from the MSCCL-IR XML in the metadata (input_file)";

// Sends match receives FIFO per (src, dst, tag).
using Key = PeerTagKey<std::uint64_t>;
using KeyHash = PeerTagKeyHash;

struct Message {
  std::uint32_t op;  // the send's index in its rank's program
  std::uint64_t bytes;
  std::uint32_t data;  // its payload in Checker::payloads_, or kNone without the data check
};

struct RankRun {
  std::vector<std::uint32_t> pending;
  std::vector<char> issued;
  std::vector<std::uint32_t> reduce_child;  // per receive: the COMP that reduces it, or kNone
  // reduce COMP -> (receive, payload)
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, ChunkBits>> to_reduce;
  std::uint64_t done = 0;
  std::uint64_t sent_bytes = 0;
};

class Checker {
 public:
  Checker(std::shared_ptr<const EtAlgorithm> algo, bool type_known, std::uint64_t bytes, std::uint64_t max_data_bytes)
      : algo_(std::move(algo)),
        program_(algo_, bytes),
        type_known_(type_known),
        max_data_bytes_(max_data_bytes),
        n_(program_.group_size()) {}

  AlgorithmCheck run() {
    runs_.resize(n_);
    for (std::uint32_t r = 0; r < n_; ++r) {
      const EtRankProgram& p = algo_->ranks[r];
      RankRun& run = runs_[r];
      run.pending = p.num_parents;
      run.issued.assign(p.ops.size(), 0);
      run.reduce_child.assign(p.ops.size(), kNone);
      for (std::uint32_t k = 0; k < p.ops.size(); ++k) {
        if (p.ops[k].kind != OpKind::kRecv) continue;
        // A COMP that waits for this receive alone is its reduction (an
        // MSCCL-IR import says so: msccl_op recv_reduce).
        for (std::uint32_t c = p.child_begin[k]; c < p.child_begin[k + 1]; ++c) {
          const std::uint32_t child = p.children[c];
          const EtOpSpec& comp = p.ops[child];
          if (comp.kind == OpKind::kCompute &&
              (algo_->msccl ? comp.comp == MscclComp::kRecvReduce : p.num_parents[child] == 1)) {
            run.reduce_child[k] = child;
            break;
          }
        }
      }
      for (std::uint32_t k : p.roots) work_.emplace_back(r, k);
    }
    setup_data();
    while (!work_.empty()) {
      const auto [r, k] = work_.front();
      work_.pop_front();
      issue(r, k);
    }
    report_structure();
    if (data_ && data_error_.empty()) {
      if (msccl_) data_error_ = msccl_->verify(*data_, data_note_);
      else final_data_check();
    }
    if (!data_error_.empty()) throw InputError(from_xml_ ? data_error_ + "\n  note: " + kFromXml : data_error_);
    if (from_xml_) data_note_ = std::string("data check: ") + kFromXml + "\n" + data_note_;

    AlgorithmCheck out;
    out.ranks = n_;
    out.messages = messages_;
    out.min_rank_bytes = n_ ? ~0ull : 0;
    for (std::uint32_t r = 0; r < n_; ++r) {
      out.ops += algo_->ranks[r].ops.size();
      out.min_rank_bytes = std::min(out.min_rank_bytes, runs_[r].sent_bytes);
      out.max_rank_bytes = std::max(out.max_rank_bytes, runs_[r].sent_bytes);
    }
    out.data_checked = data_.has_value();
    out.data_note = data_note_;
    return out;
  }

 private:
  const EtOpSpec& spec(std::uint32_t r, std::uint32_t k) const { return algo_->ranks[r].ops[k]; }
  // The chunks a send or receive names: its attributes, or what the XML says.
  std::uint64_t chunk_idx(std::uint32_t r, std::uint32_t k) const {
    if (barrier_) return 0;
    if (msccl_) {  // a send reads its src, a receive writes its dst
      const EtOpSpec& op = spec(r, k);
      return op.kind == OpKind::kSend ? msccl_->slot(r, op.src_buf, op.src_off) : msccl_->slot(r, op.dst_buf, op.dst_off);
    }
    return from_xml_ ? xml_chunks_[r][k].first : static_cast<std::uint64_t>(spec(r, k).chunk_idx);
  }
  std::uint64_t chunk_cnt(std::uint32_t r, std::uint32_t k) const {
    if (barrier_) return 1;
    return from_xml_ ? xml_chunks_[r][k].count : static_cast<std::uint64_t>(spec(r, k).chunk_cnt);
  }
  // et_node_name, plus the XML step when the chunks come from the XML.
  std::string where(std::uint32_t r, const EtOpSpec& op) const {
    if (!from_xml_ || op.xml_tb < 0) return et_node_name(r, op);
    return et_node_name(r, op) + " (tb " + std::to_string(op.xml_tb) + " step " + std::to_string(op.xml_step) + ")";
  }

  // Decides whether the data check can run and sets its initial holdings.
  void setup_data() {
    const CollectiveType type = algo_->type;
    if (!type_known_) {
      data_note_ = "data check skipped: the ET does not record its collective (give --coll)";
      return;
    }
    if (algo_->msccl) {
      // An MSCCL-IR import: ops name buffers and offsets (msccl_data_check.h).
      std::string why;
      msccl_ = MscclDataModel::make(*algo_, n_, max_data_bytes_, why);
      if (!msccl_) {
        data_note_ = "data check skipped: " + why;
        return;
      }
      // A receive writes its dst, unless its recv_reduce COMP does.
      for (std::uint32_t r = 0; r < n_; ++r) {
        for (std::uint32_t k = 0; k < algo_->ranks[r].ops.size(); ++k) {
          const EtOpSpec& op = spec(r, k);
          if (op.kind == OpKind::kRecv && op.dst_buf == 0 && runs_[r].reduce_child[k] == kNone) {
            throw InputError(algo_->source + ": " + et_node_name(r, op) + ": a receive without msccl_dstbuf that no "
                             "recv_reduce COMP consumes: where its chunks go is unknown");
          }
        }
      }
      data_.emplace(n_, msccl_->slots(), msccl_->ids());
      msccl_->fill(*data_);
      return;
    }
    if (type == CollectiveType::kAllToAll || type == CollectiveType::kReduceScatterBlock) {
      data_note_ = std::string("data check skipped: ") + collective_name(type) + " is not modelled";
      return;
    }
    if (type == CollectiveType::kBarrier) {
      // Every message carries what its sender has heard of; it needs no chunk indices.
      barrier_ = true;
      data_.emplace(n_, 1);
      for (std::uint32_t r = 0; r < n_; ++r) data_->add(r, 0, r);
      return;
    }
    // Every message must name its chunks, all of one buffer cut into T.
    std::int64_t total = -1;
    std::string lacking;  // the first message without chunk attributes
    bool some_have = false;
    for (std::uint32_t r = 0; r < n_; ++r) {
      for (const EtOpSpec& op : algo_->ranks[r].ops) {
        if (op.kind == OpKind::kCompute) continue;
        if (op.chunk_idx < 0 || op.chunk_cnt < 0 || op.total_chunks <= 0) {
          if (lacking.empty()) lacking = et_node_name(r, op);
          continue;
        }
        some_have = true;
        if (total >= 0 && op.total_chunks != total) {
          data_note_ = "data check skipped: messages disagree on total_chunk_cnt (" + std::to_string(total) + " and " +
                       std::to_string(op.total_chunks) + ")";
          return;
        }
        total = op.total_chunks;
      }
    }
    if (!lacking.empty()) {
      if (some_have) {
        data_note_ = "data check skipped: " + lacking + " carries no chunk indices "
                     "(msg_chunk_idx/msg_chunk_cnt/total_chunk_cnt) though other messages do";
        return;
      }
      if (algo_->msccl_xml.empty()) {
        data_note_ = "data check skipped: the ET carries no chunk indices (msg_chunk_idx/msg_chunk_cnt)";
        return;
      }
      // An MSCCL-IR conversion: the source XML names every step's chunks.
      const auto reduced = [this](std::uint32_t r, std::uint32_t k) { return runs_[r].reduce_child[k] != kNone; };
      if (std::string why = msccl_xml_chunks(*algo_, n_, reduced, xml_chunks_, total); !why.empty()) {
        data_note_ = "data check skipped: the ET carries no chunk indices (msg_chunk_idx/msg_chunk_cnt) and " + why;
        xml_chunks_.clear();
        return;
      }
      from_xml_ = true;
    }
    // Without messages nothing moves; N chunks suffice to show what is missing.
    const std::uint64_t t = total > 0 ? static_cast<std::uint64_t>(total) : n_;
    const bool blocks = type == CollectiveType::kReduceScatter || type == CollectiveType::kAllGather ||
                        type == CollectiveType::kGather || type == CollectiveType::kScatter;
    if (blocks && t % n_ != 0) {
      data_note_ = "data check skipped: total_chunk_cnt " + std::to_string(t) + " does not split into " +
                   std::to_string(n_) + " equal blocks";
      return;
    }
    // The data model keeps ranks x chunks x ranks bits.
    if (static_cast<uint128>(n_) * t * ((n_ + 63) / 64) * 8 > max_data_bytes_) {
      data_note_ = "data check skipped: " + std::to_string(n_) + " ranks x " + chunk_word(t) + " is too large to track";
      return;
    }
    data_.emplace(n_, t);
    for (std::uint32_t r = 0; r < n_; ++r) {
      for (std::uint64_t c = 0; c < t; ++c) {
        switch (type) {
          case CollectiveType::kAllGather:
          case CollectiveType::kGather:
            if (owner(c) == r) data_->add(r, c, r);  // rank j's input is block j
            break;
          case CollectiveType::kBroadcast:
          case CollectiveType::kScatter:
            if (r == 0) data_->add(r, c, 0);  // the root's buffer
            break;
          default:
            data_->add(r, c, r);
        }
      }
    }
  }

  // The rank whose block chunk c is in: contiguous [j*T/N, (j+1)*T/N), or
  // strided (c mod N) when the metadata says chunk_layout "strided".
  std::uint32_t owner(std::uint64_t c) const {
    const std::uint64_t t = data_->chunks();
    return static_cast<std::uint32_t>(algo_->strided_blocks ? c % n_ : c / (t / n_));
  }

  void issue(std::uint32_t r, std::uint32_t k) {
    RankRun& run = runs_[r];
    run.issued[k] = 1;
    const EtOpSpec& op = spec(r, k);
    switch (op.kind) {
      case OpKind::kSend: {
        Message m{k, program_.op(r, k).bytes, kNone};
        if (data_) m.data = keep(data_->snapshot(r, chunk_idx(r, k), chunk_cnt(r, k)));
        ++messages_;
        run.sent_bytes += m.bytes;
        std::uint32_t recv = kNone;
        const bool matched = match_.arrive(Key{r, op.peer, op.tag}, m, recv);
        finish(r, k);  // sends are eager
        if (matched) deliver(op.peer, recv, r, m);
        break;
      }
      case OpKind::kRecv: {
        Message m{};
        if (match_.post(Key{op.peer, r, op.tag}, k, m)) deliver(r, k, op.peer, m);
        break;
      }
      case OpKind::kCompute: {
        if (msccl_ && op.comp != MscclComp::kNone) {
          msccl_compute(r, k, op);
          finish(r, k);
          break;
        }
        const auto it = run.to_reduce.find(k);
        if (it != run.to_reduce.end()) {
          // The reduce merges what its receive brought, into the chunks the receive names.
          const std::uint32_t recv = it->second.first;
          const EtOpSpec& in = spec(r, recv);
          if (const auto twice = data_->merge(r, chunk_idx(r, recv), it->second.second); twice && data_error_.empty()) {
            data_error_ = et_node_name(r, op) + " reduces chunk " + std::to_string(twice->first) +
                          " twice with the contribution of rank " + std::to_string(twice->second) +
                          " (received by node " + std::to_string(in.node_id) +
                          (from_xml_ && in.xml_tb >= 0 ? ", tb " + std::to_string(in.xml_tb) + " step " +
                                                             std::to_string(in.xml_step)
                                                       : std::string()) +
                          ")";
          }
          run.to_reduce.erase(it);
        }
        finish(r, k);
        break;
      }
    }
  }

  // An MSCCL-IR COMP: copy src to dst, reduce src into dst, or write its
  // receive's message reduced with src to dst.
  void msccl_compute(std::uint32_t r, std::uint32_t k, const EtOpSpec& op) {
    if (!data_) return;
    const std::uint64_t src = msccl_->slot(r, op.src_buf, op.src_off), dst = msccl_->slot(r, op.dst_buf, op.dst_off);
    const auto cnt = static_cast<std::uint64_t>(op.chunk_cnt);
    std::optional<std::pair<std::uint64_t, std::uint32_t>> twice;
    if (op.comp == MscclComp::kCopy) {
      data_->replace(r, dst, data_->snapshot(r, src, cnt));
    } else if (op.comp == MscclComp::kReduce) {
      twice = data_->merge(r, dst, data_->snapshot(r, src, cnt));
    } else {
      RankRun& run = runs_[r];
      const auto it = run.to_reduce.find(k);
      if (it == run.to_reduce.end()) return;  // its receive failed the size check already
      if (src != dst) data_->replace(r, dst, data_->snapshot(r, src, cnt));
      twice = data_->merge(r, dst, it->second.second);
      run.to_reduce.erase(it);
    }
    if (twice && data_error_.empty()) {
      data_error_ = et_node_name(r, op) + " (" + (op.comp == MscclComp::kReduce ? "re" : "recv-reduce") +
                    ") reduces a contribution twice: slot " + std::to_string(twice->first) + " already holds id " +
                    std::to_string(twice->second);
    }
  }

  // A payload is parked while its message waits in the matcher (which wants
  // messages cheap to copy) and taken back on delivery; slots are reused.
  std::uint32_t keep(ChunkBits&& data) {
    if (free_payloads_.empty()) {
      payloads_.push_back(std::move(data));
      return static_cast<std::uint32_t>(payloads_.size() - 1);
    }
    const std::uint32_t i = free_payloads_.back();
    free_payloads_.pop_back();
    payloads_[i] = std::move(data);
    return i;
  }
  ChunkBits take(std::uint32_t i) {
    free_payloads_.push_back(i);
    return std::move(payloads_[i]);
  }

  void deliver(std::uint32_t dst, std::uint32_t recv, std::uint32_t src, const Message& m) {
    const EtOpSpec& in = spec(dst, recv);
    const EtOpSpec& out = spec(src, m.op);
    const std::uint64_t want = program_.op(dst, recv).bytes;
    if (want != m.bytes) {
      throw InputError(et_node_name(dst, in) + " receives " + std::to_string(want) + " B from rank " +
                       std::to_string(src) + " (tag " + std::to_string(in.tag) + ") but the matching send (" +
                       et_node_name(src, out) + ") carries " + std::to_string(m.bytes) + " B");
    }
    if (data_) {
      ChunkBits data = take(m.data);
      if (chunk_cnt(dst, recv) != chunk_cnt(src, m.op) && data_error_.empty()) {
        data_error_ = where(dst, in) + " receives " + chunk_word(chunk_cnt(dst, recv)) + " from rank " +
                      std::to_string(src) + " (tag " + std::to_string(in.tag) + ") but the matching send (" +
                      where(src, out) + ") carries " + chunk_word(chunk_cnt(src, m.op));
      } else if (barrier_) {
        data_->unite(dst, 0, data);
      } else if (const std::uint32_t reduce = runs_[dst].reduce_child[recv]; reduce != kNone) {
        runs_[dst].to_reduce[reduce] = {recv, std::move(data)};
      } else {
        data_->replace(dst, chunk_idx(dst, recv), data);
      }
    }
    finish(dst, recv);
  }

  void finish(std::uint32_t r, std::uint32_t k) {
    RankRun& run = runs_[r];
    ++run.done;
    const EtRankProgram& p = algo_->ranks[r];
    for (std::uint32_t c = p.child_begin[k]; c < p.child_begin[k + 1]; ++c) {
      if (--run.pending[p.children[c]] == 0) work_.emplace_back(r, p.children[c]);
    }
  }

  // Stuck ranks (each named by its first waiting receive), then sends never received.
  void report_structure() const {
    std::vector<std::string> lines;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> first_wait(n_, {kNone, kNone});  // (op, src)
    match_.for_each_receive([&](const Key& key, std::uint32_t k) {
      if (first_wait[key.dst].first == kNone || k < first_wait[key.dst].first) first_wait[key.dst] = {k, key.src};
    });
    for (std::uint32_t r = 0; r < n_; ++r) {
      if (runs_[r].done == algo_->ranks[r].ops.size()) continue;
      const auto [k, src] = first_wait[r];
      if (k == kNone) {  // cannot happen: a blocked rank always waits on a receive
        lines.push_back("rank " + std::to_string(r) + " cannot finish its ops");
        continue;
      }
      const EtOpSpec& op = spec(r, k);
      std::string line = et_node_name(r, op) + " waits for a message from rank " + std::to_string(src) + " tag " +
                         std::to_string(op.tag) + " that is never sent";
      const EtRankProgram& from = algo_->ranks[src];
      for (std::uint32_t s = 0; s < from.ops.size(); ++s) {
        if (from.ops[s].kind == OpKind::kSend && from.ops[s].peer == r && from.ops[s].tag == op.tag &&
            !runs_[src].issued[s]) {
          line = et_node_name(r, op) + " waits for a message from rank " + std::to_string(src) + " tag " +
                 std::to_string(op.tag) + " that its node " + std::to_string(from.ops[s].node_id) +
                 " never gets to send (deadlock)";
          break;
        }
      }
      lines.push_back(line);
    }
    // The matcher lists in table order; sorting by sender and op makes the report deterministic.
    std::vector<std::tuple<std::uint32_t, std::uint32_t, std::string>> unreceived;
    match_.for_each_message([&](const Key& key, const Message& m) {
      unreceived.emplace_back(key.src, m.op,
                              et_node_name(key.src, spec(key.src, m.op)) + " sends " + std::to_string(m.bytes) +
                                  " B to rank " + std::to_string(key.dst) + " (tag " + std::to_string(key.tag) +
                                  ") that is never received");
    });
    std::sort(unreceived.begin(), unreceived.end());
    for (auto& u : unreceived) lines.push_back(std::move(std::get<2>(u)));
    if (lines.empty()) return;
    std::string what = lines.front();
    constexpr std::size_t kShown = 8;
    for (std::size_t i = 1; i < std::min(lines.size(), kShown); ++i) what += "\n  also: " + lines[i];
    if (lines.size() > kShown) what += "\n  and " + std::to_string(lines.size() - kShown) + " more";
    throw IncompleteError(what);
  }

  void final_data_check() {
    const ChunkHoldings& d = *data_;
    const std::uint64_t t = d.chunks();
    switch (algo_->type) {
      case CollectiveType::kAllReduce:
        for (std::uint32_t r = 0; r < n_; ++r) {
          for (std::uint64_t c = 0; c < t; ++c) {
            if (d.full(r, c)) continue;
            data_error_ = "all-reduce incomplete: rank " + std::to_string(r) + " chunk " + std::to_string(c) +
                          " holds the contributions of " + std::to_string(d.count(r, c)) + " of " +
                          std::to_string(n_) + " ranks (rank " + std::to_string(d.first_missing(r, c)) + "'s is missing)";
            return;
          }
        }
        data_note_ = "data check passed: every rank holds all " + std::to_string(n_) + " contributions in each chunk (" +
                     chunk_word(t) + ")";
        return;
      case CollectiveType::kBarrier:
        for (std::uint32_t r = 0; r < n_; ++r) {
          if (d.full(r, 0)) continue;
          data_error_ = "barrier incomplete: rank " + std::to_string(r) + " finishes without having heard, even "
                        "transitively, from rank " + std::to_string(d.first_missing(r, 0));
          return;
        }
        data_note_ = "data check passed: every rank heard (transitively) from all " + std::to_string(n_) +
                     " ranks before finishing";
        return;
      case CollectiveType::kReduce:
        for (std::uint64_t c = 0; c < t; ++c) {
          if (d.full(0, c)) continue;
          data_error_ = "reduce incomplete: the root (rank 0) chunk " + std::to_string(c) + " holds the contributions of " +
                        std::to_string(d.count(0, c)) + " of " + std::to_string(n_) + " ranks (rank " +
                        std::to_string(d.first_missing(0, c)) + "'s is missing)";
          return;
        }
        data_note_ = "data check passed: the root (rank 0) holds all " + std::to_string(n_) +
                     " contributions in each chunk (" + chunk_word(t) + ")";
        return;
      case CollectiveType::kBroadcast:
      case CollectiveType::kScatter: {
        const bool scatter = algo_->type == CollectiveType::kScatter;
        for (std::uint32_t r = 0; r < n_; ++r) {
          for (std::uint64_t c = 0; c < t; ++c) {
            if ((scatter && owner(c) != r) || d.holds_only(r, c, 0)) continue;
            data_error_ = std::string(scatter ? "scatter" : "broadcast") + " incomplete: rank " + std::to_string(r) +
                          " chunk " + std::to_string(c) +
                          (d.count(r, c) == 0 ? " never receives the root's data"
                                              : " holds data of other ranks than the root (rank 0)");
            return;
          }
        }
        data_note_ = scatter ? "data check passed: every rank holds its block of the root's buffer (" +
                                   chunk_word(t) + ")"
                             : "data check passed: every rank holds the root's data in every chunk (" +
                                   chunk_word(t) + ")";
        return;
      }
      case CollectiveType::kAllGather:
      case CollectiveType::kGather:
        for (std::uint32_t r = 0; r < n_; ++r) {
          if (algo_->type == CollectiveType::kGather && r != 0) continue;  // only the root collects
          for (std::uint64_t c = 0; c < t; ++c) {
            const auto owner = this->owner(c);
            if (d.holds_only(r, c, owner)) continue;
            data_error_ = std::string(algo_->type == CollectiveType::kGather ? "gather" : "all-gather") +
                          " incomplete: rank " + std::to_string(r) + " chunk " + std::to_string(c) +
                          (d.count(r, c) == 0 ? " never receives rank " + std::to_string(owner) + "'s data"
                                              : " holds data of " + std::to_string(d.count(r, c)) +
                                                    " ranks instead of rank " + std::to_string(owner) + "'s alone");
            return;
          }
        }
        data_note_ = std::string(algo_->type == CollectiveType::kGather ? "data check passed: the root holds"
                                                                         : "data check passed: every rank holds") +
                     " every chunk, each with its owner's data alone (" + chunk_word(t) + ")";
        return;
      default:
        reduce_scatter_check();
        return;
    }
  }

  // Each rank must end with a distinct block of the buffer fully reduced. The
  // block may be contiguous (T/N chunks) or strided (chunk c in piece c mod N,
  // as the chunked native ring leaves it), and rank j may own any block (the
  // ring leaves block j+1 at rank j).
  void reduce_scatter_check() {
    const ChunkHoldings& d = *data_;
    const std::uint64_t t = d.chunks(), block = t / n_;
    std::vector<std::vector<char>> full(n_, std::vector<char>(t));
    for (std::uint32_t r = 0; r < n_; ++r) {
      for (std::uint64_t c = 0; c < t; ++c) full[r][c] = d.full(r, c);
    }
    struct Layout {
      const char* name;
      bool strided;
    };
    const Layout layouts[] = {{"contiguous blocks", false}, {"strided blocks (chunk c in block c mod N)", true}};
    const auto holds = [&](std::uint32_t r, std::uint32_t b, bool strided) {
      for (std::uint64_t i = 0; i < block; ++i) {
        if (!full[r][strided ? i * n_ + b : b * block + i]) return false;
      }
      return true;
    };
    for (const Layout& layout : layouts) {
      std::vector<std::vector<std::uint32_t>> cand(n_);
      for (std::uint32_t r = 0; r < n_; ++r) {
        for (std::uint32_t b = 0; b < n_; ++b) {
          if (holds(r, b, layout.strided)) cand[r].push_back(b);
        }
      }
      const auto owns = [&](std::uint32_t shift) {
        for (std::uint32_t r = 0; r < n_; ++r) {
          if (!holds(r, (r + shift) % n_, layout.strided)) return false;
        }
        return true;
      };
      std::string how;
      if (owns(0)) how = "rank j holds block j";
      else if (owns(1)) how = "rank j holds block j+1, the ring's order";
      else if (matching(cand)) how = "the ranks hold a permutation of the blocks";
      if (!how.empty()) {
        data_note_ = "data check passed: each rank holds a distinct fully reduced block of " + chunk_word(block) +
                     " (" + layout.name + "; " + how + ")";
        return;
      }
    }
    for (std::uint32_t r = 0; r < n_; ++r) {
      bool any = false;
      for (std::uint32_t b = 0; b < n_ && !any; ++b) any = holds(r, b, false) || holds(r, b, true);
      if (any) continue;
      // Name the incomplete chunk closest to done, the likely victim of a missing step.
      std::uint64_t worst = 0;
      std::uint32_t best = 0;
      for (std::uint64_t c = 0; c < t; ++c) {
        const std::uint32_t have = d.count(r, c);
        if (have < n_ && have > best) best = have, worst = c;
      }
      data_error_ = "reduce-scatter incomplete: rank " + std::to_string(r) +
                    " holds no fully reduced block; its most reduced chunk " + std::to_string(worst) + " has " +
                    std::to_string(best) + " of " + std::to_string(n_) + " contributions (rank " +
                    std::to_string(d.first_missing(r, worst)) + "'s is missing)";
      return;
    }
    data_error_ = "reduce-scatter incomplete: every rank holds a fully reduced block, but not a distinct one each "
                  "(in neither the contiguous nor the strided layout)";
  }

  // Whether every rank can own a distinct block among its candidates (Kuhn's matching).
  static bool matching(const std::vector<std::vector<std::uint32_t>>& cand) {
    const auto n = static_cast<std::uint32_t>(cand.size());
    std::vector<std::uint32_t> owner(n, kNone);
    std::vector<std::uint32_t> seen(n, kNone);
    const auto augment = [&](auto& self, std::uint32_t r, std::uint32_t stamp) -> bool {
      for (std::uint32_t b : cand[r]) {
        if (seen[b] == stamp) continue;
        seen[b] = stamp;
        if (owner[b] == kNone || self(self, owner[b], stamp)) {
          owner[b] = r;
          return true;
        }
      }
      return false;
    };
    for (std::uint32_t r = 0; r < n; ++r) {
      if (!augment(augment, r, r)) return false;
    }
    return true;
  }

  std::shared_ptr<const EtAlgorithm> algo_;
  EtProgram program_;
  bool type_known_;
  std::uint64_t max_data_bytes_;  // the data check's bitsets may take this much, else it is skipped
  std::uint32_t n_;
  std::vector<RankRun> runs_;
  std::deque<std::pair<std::uint32_t, std::uint32_t>> work_;
  MessageMatcher<Key, Message, std::uint32_t, KeyHash> match_;  // receives: op indices
  std::vector<ChunkBits> payloads_;      // messages' payloads (with the data check), by Message::data
  std::vector<std::uint32_t> free_payloads_;
  std::uint64_t messages_ = 0;
  std::optional<ChunkHoldings> data_;
  std::string data_note_, data_error_;
  bool from_xml_ = false;                     // chunk indices come from the XML, not the attributes
  bool barrier_ = false;                      // messages carry "heard from" sets, merged on receipt
  std::optional<MscclDataModel> msccl_;       // an MSCCL-IR import's buffers
  std::vector<std::vector<ChunkRange>> xml_chunks_;  // per rank and op (sends and receives only)
};

}  // namespace

AlgorithmCheck check_et_algorithm(std::shared_ptr<const EtAlgorithm> algo, bool type_known, std::uint64_t bytes,
                                  std::uint64_t max_data_bytes) {
  return Checker(std::move(algo), type_known, bytes, max_data_bytes).run();
}

}  // namespace sim
