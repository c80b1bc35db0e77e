#include "workload/generators/transformer/transformer_graph.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/checked_count.h"
#include "core/error.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/spec/pipeline_schedule.h"
#include "workload/generators/transformer/expert_load.h"
#include "workload/rank_graph.h"

namespace sim::gen {
namespace {

constexpr std::uint64_t kWire = 2;  // bytes per activation or gradient element communicated (bf16)

CheckedCount ceil_to(CheckedCount v, std::uint64_t multiple) { return (v + (multiple - 1)) / multiple * multiple; }

// Parameters of one thing that owns weights, in forward order within a chunk.
struct ParamGroup {
  enum Kind : std::uint8_t { kEmbedding, kLayer, kOutput } kind;
  std::uint64_t layer = 0;
  std::uint64_t dense = 0, expert = 0;
};

class RankBuilder {
 public:
  // Builds into `trace`, reusing its nodes' storage (protobuf keeps cleared
  // attributes for reuse), so a thread generating rank after rank allocates
  // almost nothing: allocation was half the generation time.
  // `sink`, if given, takes each node once it is complete instead of the
  // trace keeping it: the trace then holds one node, reused.
  RankBuilder(const TrainingSpec& t, std::uint32_t rank, const std::string& path, EtTrace& trace,
              const std::function<void(const et::Node&)>* sink = nullptr)
      : t_(t), m_(t.model), p_(t.plan), rank_(rank), c_(coords_of(t.plan, rank)), trace_(trace), sink_(sink) {
    trace_.path = path;
    trace_.metadata.Clear();
    trace_.metadata.set_version("0.0.4");
    tok_ = t.tokens();
    sp_tok_ = p_.sp ? tok_ / p_.tp : tok_;
    hq_ = m_.heads * m_.head_dim();
    qkv_out_ = (hq_ + 2 * m_.kv_hidden()) / p_.tp;
    fc1_out_ = m_.ffn_hidden * (m_.swiglu ? 2 : 1) / p_.tp;
    // Per-head widths of the attention core: queries and keys, values.
    attn_dq_ = m_.is_mla() ? m_.mla.qk_head_dim + m_.mla.rope_head_dim : m_.head_dim();
    attn_dv_ = m_.is_mla() ? m_.mla.v_head_dim : m_.head_dim();
    if (m_.is_mla()) hq_ = CheckedCount(m_.heads) * attn_dv_;  // the output projection's input
    ep_position_ = (c_.tp + p_.tp * c_.dp) / p_.etp % p_.ep;
    dpc_ = dense_dp_size(t);
    edp_ = expert_dp_size(t);
  }

  void build() {
    define_groups();
    const std::vector<PipeStep> steps = stage_schedule(p_.pp, t_.microbatches, t_.chunks, c_.pp);
    for (const PipeStep& s : steps) {
      if (s.backward) backward(s.microbatch, s.chunk);
      else forward(s.microbatch, s.chunk);
    }
    finish_iteration();
    if (sink_) {
      if (used_ > 0) (*sink_)(trace_.nodes[0]);
      return;
    }
    metadata();
    trace_.nodes.resize(used_);
  }

 private:
  // --- nodes ----------------------------------------------------------------
  et::Node& add(et::NodeType type, const std::string& name) {
    et::Node* n;
    if (sink_) {  // the previous node is complete: handed over, and its storage reused
      if (used_ > 0) (*sink_)(trace_.nodes[0]);
      if (trace_.nodes.empty()) trace_.nodes.emplace_back();
      n = &trace_.nodes[0];
      n->Clear();
    } else if (used_ < trace_.nodes.size()) {
      n = &trace_.nodes[used_];
      n->Clear();
    } else {
      n = &trace_.nodes.emplace_back();
    }
    ++used_;
    n->set_id(used_);
    n->set_name(name);
    n->set_type(type);
    return *n;  // valid until the next add()
  }
  // The node of id `id`, written since the last add(): streaming keeps no other.
  et::Node& node(std::uint64_t id) { return sink_ ? trace_.nodes[0] : trace_.nodes[id - 1]; }
  static et::AttributeProto* attr(et::Node& n, const char* name) {
    et::AttributeProto* a = n.add_attr();
    a->set_name(name);
    return a;
  }
  static void set_int(et::Node& n, const char* name, std::int64_t v) { attr(n, name)->set_int64_val(v); }
  // A count derived from the sizes (FLOPs, bytes, elements): checked where it
  // is written. make_training_spec's limits (quantity_limits.h) refuse the
  // sizes that pass them up front; this names the node should any slip by.
  void set_count(et::Node& n, const char* name, const CheckedCount& v) const {
    if (!v.fits(kMaxTraceInt)) too_large("node " + std::to_string(n.id()) + " '" + n.name() + "': " + name);
    set_int(n, name, static_cast<std::int64_t>(v.value()));
  }
  void set_size(et::Node& n, const CheckedCount& v) const {
    if (!v.fits(kMaxTraceInt)) too_large("node " + std::to_string(n.id()) + " '" + n.name() + "': tensor_size");
    attr(n, "tensor_size")->set_uint64_val(v.value());
  }
  std::int64_t tag_of(const CheckedCount& v) const {
    if (!v.fits(kMaxTraceInt)) too_large("a ring exchange's message tag");
    return static_cast<std::int64_t>(v.value());
  }
  [[noreturn]] void too_large(const std::string& what) const {
    throw InputError("rank " + std::to_string(rank_) + " " + what + " passes 2^63 - 1, the most a trace's int64 holds: lower " +
                     t_.option("seq") + ", " + t_.option("micro-batch") + " or " + t_.option("global-batch") +
                     ", or use a smaller model (" + m_.source + ")");
  }
  // Puts `n` on the GPU stream: after the stream's last node and whatever it must wait for.
  std::uint64_t stream(et::Node& n) {
    if (last_) n.add_data_deps(last_);
    for (std::uint64_t w : waits_) {
      if (w != last_) n.add_data_deps(w);
    }
    waits_.clear();
    last_ = n.id();
    return last_;
  }
  const char* dtype() const { return t_.fp8 ? "fp8" : "bf16"; }
  // A GEMM's input precision: fp8 only inside Transformer Engine's modules.
  // Megatron-core's output layer is its own tensor_parallel.ColumnParallelLinear
  // (megatron/core/models/gpt/gpt_model.py) and the MoE router a plain linear
  // of its weight (megatron/core/transformer/moe/router.py): torch matmuls,
  // which TE's fp8_autocast does not touch, so they run in bf16.
  bool fp8_gemm() const { return t_.fp8 && !outside_te_; }

  // A GEMM of m x n x k (batch of them), on the stream.
  void gemm(const std::string& name, CheckedCount m, CheckedCount n, CheckedCount k, CheckedCount batch = 1) {
    et::Node& node = add(et::COMP_NODE, name);
    const std::uint64_t in = fp8_gemm() ? 1 : 2;
    set_count(node, "num_ops", CheckedCount(2) * batch * m * n * k);
    set_size(node, batch * ((m * k + k * n) * in + m * n * 2));
    attr(node, "kernel")->set_string_val("gemm");
    set_count(node, "gemm_m", m);
    set_count(node, "gemm_n", n);
    set_count(node, "gemm_k", k);
    if (!batch.fits(1)) set_count(node, "gemm_batch", batch);
    attr(node, "dtype")->set_string_val(fp8_gemm() ? "fp8" : "bf16");
    mark(node);
    stream(node);
  }
  // A memory-bound op over `elements` elements moving `bytes` (no model FLOPs);
  // `dtype` is what it reads (bf16 unless given; Adam's fp32).
  void membound(const std::string& name, const char* op, CheckedCount elements, CheckedCount bytes,
                const char* dtype = nullptr) {
    et::Node& node = add(et::COMP_NODE, name);
    set_int(node, "num_ops", 0);
    set_size(node, bytes);
    attr(node, "kernel")->set_string_val("membound");
    attr(node, "membound_op")->set_string_val(op);
    set_count(node, "elements", elements);
    attr(node, "dtype")->set_string_val(dtype ? dtype : std::string(op) == "adam" ? "fp32" : "bf16");
    mark(node);
    stream(node);
  }

  // --- Transformer Engine's fp8 casts (--dtype fp8) ------------------------------
  // What TE's modules run around each fp8 GEMM (transformer_engine/pytorch/module/
  // linear.py, layernorm_linear.py, base.py's grad_output_preprocess), for
  // Megatron-core's layer spec: QKV and FC1 are LayerNormLinear (the norm writes
  // fp8 itself: no cast), the projection and FC2 plain Linear (row-parallel)
  // whose bf16 input from attention or the activation is cast. Memory-bound,
  // no model FLOPs. bf16 in: 2 B read; fp8 out: 1 B per copy written.
  // TE's sequence_parallel: Megatron's sp, which TE drops at tp = 1.
  bool te_sp() const { return p_.sp && p_.tp > 1; }
  // cast_to_fp8 (`transpose` false) or fp8_cast_transpose_fused (the fp8 copy and
  // its transpose, which the weight-gradient GEMM reads) of a bf16 tensor.
  void fp8_cast(const std::string& name, CheckedCount elements, bool transpose) {
    membound(name, transpose ? "fp8_cast_transpose" : "fp8_cast", elements, elements * (transpose ? 4 : 3));
  }
  // tex.fp8_transpose of an fp8 tensor: 1 B read, 1 B written.
  void fp8_transpose(const std::string& name, CheckedCount elements) {
    membound(name, "fp8_transpose", elements, 2 * elements, "fp8");
  }
  // The weight's fp8 copy and transpose (fp8_cast_transpose_fused), made in the
  // forward of the first micro-batch of each model chunk and kept for the rest
  // of the iteration: Megatron's schedules call set_is_first_microbatch() there
  // (megatron/core/pipeline_parallel/schedules.py) and TE reuses its cached
  // weight while is_first_microbatch is False (update_fp8_weights in linear.py).
  // A recomputed forward reuses it too.
  void weight_cast(const std::string& what, std::uint32_t mb, CheckedCount elements) {
    if (fp8_gemm() && mb == 0 && !recomputing_) fp8_cast(nm(what + ".weight_cast", "fwd", mb), elements, true);
  }
  // A plain Linear's input (row-parallel: the projection, FC2; or an expert's):
  // cast with its transpose, or with TE's sequence parallelism cast alone and
  // transposed in the backward pass (input_transpose()). Under full
  // recomputation the first forward runs without gradients (Megatron's
  // te_checkpoint), so TE casts alone; the recomputed forward casts as usual.
  void input_cast(const std::string& what, const char* pass, std::uint32_t mb, CheckedCount elements,
                  bool sequence_parallel) {
    const bool no_grad = t_.recompute == Recompute::kFull && !recomputing_;
    if (fp8_gemm()) fp8_cast(nm(what + ".cast", pass, mb), elements, !sequence_parallel && !no_grad);
  }
  void input_transpose(const std::string& what, std::uint32_t mb, CheckedCount elements) {
    if (fp8_gemm()) fp8_transpose(nm(what + ".input_transpose", "bwd", mb), elements);
  }
  // The incoming gradient of a GEMM: cast with its transpose; for a
  // row-parallel GEMM under sequence parallelism TE casts the local shard,
  // all-gathers it in fp8 and transposes the whole (grad_transpose()).
  void grad_cast(const std::string& what, std::uint32_t mb, CheckedCount elements, bool shard) {
    if (fp8_gemm()) fp8_cast(nm(what + ".grad_cast", "bwd", mb), elements, !shard);
  }
  void grad_transpose(const std::string& what, std::uint32_t mb, CheckedCount elements) {
    if (fp8_gemm()) fp8_transpose(nm(what + ".grad_transpose", "bwd", mb), elements);
  }
  // Core attention of this rank's heads, as one kernel: `batch` x heads/tp
  // attention over `seq` queries and keys, causal or not. `num_ops` is the
  // model FLOPs the kernel stands for, counted as Megatron-LM counts them
  // (causal attention as the full s x s product): with CP each ring step
  // carries 4 b (s/cp)^2 heads d, whatever part of that block it computes.
  // `steps`: how many ring steps' worth of those FLOPs the kernel stands for.
  void attention(const std::string& name, bool bwd, CheckedCount batch, CheckedCount seq, bool causal,
                 std::uint32_t steps = 1) {
    const CheckedCount s = t_.seq_local(), b = t_.micro_batch, heads = m_.heads / p_.tp;
    et::Node& node = add(et::COMP_NODE, name);
    // Scores over the query/key width, values over the value width (equal but for MLA).
    const CheckedCount fwd_flops = CheckedCount(2) * b * s * s * heads * (attn_dq_ + attn_dv_) * steps;
    set_count(node, "num_ops", bwd ? CheckedCount(2) * fwd_flops : fwd_flops);
    const CheckedCount kv_heads = m_.kv_heads / p_.tp;
    // Forward: Q, K, V read, O written; backward: Q, K, V, O, dO read, dQ, dK, dV written (twice the forward).
    const CheckedCount fwd_elements = heads * attn_dq_ + kv_heads * attn_dq_ + kv_heads * attn_dv_ + heads * attn_dv_;
    set_size(node, batch * seq * (CheckedCount(bwd ? 2 : 1) * fwd_elements) * 2);
    attr(node, "kernel")->set_string_val("attention");
    set_count(node, "attn_batch", batch);
    set_count(node, "attn_heads", heads);
    set_count(node, "attn_seq", seq);
    // The kernel's time model counts 4 x head dim per score (compute/attention_schedule.cpp):
    // with unequal widths, their mean, rounded up.
    set_int(node, "attn_head_dim", static_cast<std::int64_t>((attn_dq_ + attn_dv_ + 1) / 2));
    attr(node, "attn_causal")->set_bool_val(causal);
    attr(node, "attn_pass")->set_string_val(bwd ? "bwd" : "fwd");
    attr(node, "dtype")->set_string_val("bf16");  // the attention core stays bf16 under FP8 (Transformer Engine)
    mark(node);
    stream(node);
  }
  void mark(et::Node& n) {
    if (recomputing_) attr(n, "recompute")->set_bool_val(true);
  }
  CheckedCount bytes(CheckedCount b) const { return t_.comm_free ? CheckedCount(0) : b; }
  // A collective on `group`; on the stream (blocking) or depending on `dep` only (overlapped).
  std::uint64_t collective(const std::string& name, CollectiveType type, CheckedCount size, const std::string& group,
                           bool on_stream, std::uint64_t dep = 0) {
    et::Node& n = add(et::COMM_COLL_NODE, name);
    set_int(n, "comm_type", static_cast<std::int64_t>(type));
    set_count(n, "comm_size", bytes(size));
    attr(n, "pg_name")->set_string_val(group);
    mark(n);
    if (on_stream) return stream(n);
    if (dep) n.add_data_deps(dep);
    return n.id();
  }
  std::uint64_t send(const std::string& name, std::uint32_t dst, std::int64_t tag, CheckedCount size,
                     std::uint64_t dep) {
    et::Node& n = add(et::COMM_SEND_NODE, name);
    set_int(n, "comm_src", rank_);
    set_int(n, "comm_dst", dst);
    set_int(n, "comm_tag", tag);
    set_count(n, "comm_size", bytes(size));
    mark(n);
    if (dep) n.add_data_deps(dep);
    return n.id();
  }
  // Posted at the start (no dependencies) or once `dep` is done: the pass that needs it waits for it.
  std::uint64_t recv(const std::string& name, std::uint32_t src, std::int64_t tag, CheckedCount size,
                     std::uint64_t dep = 0) {
    et::Node& n = add(et::COMM_RECV_NODE, name);
    if (dep) n.add_data_deps(dep);
    set_int(n, "comm_src", src);
    set_int(n, "comm_dst", rank_);
    set_int(n, "comm_tag", tag);
    set_count(n, "comm_size", bytes(size));
    mark(n);
    return n.id();
  }

  // --- groups -----------------------------------------------------------------
  void define_groups() {
    std::string json;
    auto define = [&](Dim d, std::string& name) {
      GroupRef g = group_of(p_, d, rank_);
      if (g.ranks.size() < 2) return;
      name = g.name;
      json += json.empty() ? "" : ", ";
      json += "{\"pg_name\": \"" + g.name + "\", \"ranks\": [";
      for (std::size_t i = 0; i < g.ranks.size(); ++i) json += (i ? ", " : "") + std::to_string(g.ranks[i]);
      json += "]}";
    };
    define(Dim::kTp, tp_);
    define(Dim::kCp, cp_);
    define(Dim::kDp, dp_);
    if (m_.is_moe()) {
      define(Dim::kEp, ep_);
      define(Dim::kExpertTp, etp_);
      define(Dim::kExpertDp, edp_name_);
    }
    if (m_.tied_embeddings && !t_.layers_only && p_.pp > 1 && (c_.pp == 0 || c_.pp == p_.pp - 1)) define(Dim::kEmbedding, embd_);
    if (json.empty()) return;
    et::Node& n = add(et::METADATA_NODE, "process_groups:init");
    n.mutable_inputs()->set_values("['[" + json + "]']");
  }

  // --- the model ----------------------------------------------------------------
  std::vector<ParamGroup> chunk_groups(std::uint32_t chunk) const {
    std::vector<ParamGroup> g;
    const bool first = holds_input(chunk) && !t_.layers_only, last = holds_output(chunk) && !t_.layers_only;
    const std::uint64_t emb = m_.vocab * m_.hidden / p_.tp;
    if (first) g.push_back({ParamGroup::kEmbedding, 0, emb, 0});
    const std::uint64_t first_layer = t_.first_layer(c_.pp, chunk);
    const RankParams dense = layer_params(t_, 0), moe = m_.is_moe() ? layer_params(t_, m_.layers - 1) : dense;
    for (std::uint64_t l = first_layer; l < first_layer + t_.layers_in(c_.pp, chunk); ++l) {
      const RankParams& per = m_.moe_layer(l) ? moe : dense;
      g.push_back({ParamGroup::kLayer, l, per.dense, per.expert});
    }
    if (last) {
      std::uint64_t out = m_.rmsnorm ? m_.hidden : 2 * m_.hidden;
      if (!m_.tied_embeddings || p_.pp > 1) out += emb;
      g.push_back({ParamGroup::kOutput, 0, out, 0});
    }
    return g;
  }
  bool holds_output(std::uint32_t chunk) const { return c_.pp == p_.pp - 1 && chunk == t_.chunks - 1; }
  bool holds_input(std::uint32_t chunk) const { return c_.pp == 0 && chunk == 0; }
  CheckedCount act_bytes() const { return tok_ * m_.hidden * kWire / (p_.sp ? p_.tp : 1); }
  const char* norm() const { return m_.rmsnorm ? "rmsnorm" : "layernorm"; }

  static std::string nm(const std::string& what, const char* pass, std::uint32_t mb) {
    return what + "." + pass + " mb" + std::to_string(mb);
  }
  static std::string layer(std::uint64_t l) { return "layer" + std::to_string(l); }

  // Output of a row-parallel block: all-reduce, or reduce-scatter with sp.
  void tp_reduce(const std::string& what, const char* pass, std::uint32_t mb) {
    if (tp_.empty()) return;
    const CheckedCount full = tok_ * m_.hidden * kWire;
    if (p_.sp) collective(nm(what + ".tp_reduce_scatter", pass, mb), CollectiveType::kReduceScatter, full, tp_, true);
    else collective(nm(what + ".tp_allreduce", pass, mb), CollectiveType::kAllReduce, full, tp_, true);
  }
  // Bytes per element of a sequence-parallel all-gather: inside Transformer
  // Engine under fp8 the gathered tensor is already fp8 (the norm writes its
  // output in fp8, and gradients are cast before they are gathered:
  // layernorm_linear.py and linear.py gather what they cast), else bf16.
  std::uint64_t gather_wire(bool in_te) const { return in_te && t_.fp8 ? 1 : kWire; }
  // Input of a column-parallel block with sp: all-gather of the sequence
  // shards; `in_te`: gathered by TE (a layer's norm output or gradient).
  void sp_gather(const std::string& what, const char* pass, std::uint32_t mb, bool in_te) {
    if (!p_.sp || tp_.empty()) return;
    collective(nm(what + ".tp_allgather", pass, mb), CollectiveType::kAllGather, sp_tok_ * m_.hidden * gather_wire(in_te),
               tp_, true);
  }
  // Backward of a column-parallel GEMM (input width `in`, output `out`): data
  // gradient, its tensor-parallel reduction overlapped with the weight gradient.
  // Under fp8 (a LayerNormLinear: QKV, FC1) TE first casts the gradient with its
  // transpose and, before the weight gradient, transposes the fp8 norm output
  // it kept (layernorm_linear.py's backward: fp8_transpose of ln_out_total).
  void column_backward(const std::string& what, std::uint32_t mb, CheckedCount in, CheckedCount out) {
    grad_cast(what, mb, tok_ * out, false);
    std::uint64_t gathered = 0;
    if (p_.sp && !tp_.empty()) {  // the weight gradient needs the full input again
      gathered = collective(nm(what + ".tp_allgather", "bwd", mb), CollectiveType::kAllGather,
                            sp_tok_ * m_.hidden * gather_wire(fp8_gemm()), tp_, false, last_);
    }
    gemm(nm(what, "bwd_data", mb), tok_, in, out);
    std::uint64_t reduce = 0;
    if (!tp_.empty()) {
      const CheckedCount full = tok_ * m_.hidden * kWire;
      reduce = p_.sp ? collective(nm(what + ".tp_reduce_scatter", "bwd", mb), CollectiveType::kReduceScatter, full,
                                  tp_, false, last_)
                     : collective(nm(what + ".tp_allreduce", "bwd", mb), CollectiveType::kAllReduce, full, tp_, false,
                                  last_);
    }
    if (gathered) waits_.push_back(gathered);
    input_transpose(what, mb, tok_ * in);
    gemm(nm(what, "bwd_weight", mb), out, in, tok_);
    if (reduce) waits_.push_back(reduce);
  }

  // --- tensor-parallel communication overlapped with the GEMMs (--tp-comm-overlap) ---
  // Transformer Engine's userbuffers, as NeMo configures them (ub_tp_comm_overlap;
  // TE's initialize_ub in transformer_engine/pytorch/module/base.py, whose default
  // methods NeMo's ub_cfg_h100_*_tp4_* files repeat): ring exchange for the
  // all-gathers before qkv_fprop, fc1_fprop, proj_dgrad and fc2_dgrad; a pipeline of
  // chunked reduce-scatters after proj_fprop and fc2_fprop; bulk overlap for the
  // column-parallel backward (qkv/fc1 dgrad beside the input's all-gather, wgrad
  // beside the dgrad's reduce-scatter), which column_backward() writes either way.
  bool tp_overlap() const { return t_.tp_comm_overlap && !tp_.empty(); }
  // Tag of step 0 of one ring: layer, micro-batch, which GEMM (0 qkv, 1 fc1
  // forward, 2 fc2, 3 proj data gradient; + 4 recomputed), after the CP tags.
  std::int64_t tp_tag(std::uint64_t l, std::uint32_t mb, std::uint32_t gemm) const {
    const CheckedCount after_cp = CheckedCount(2) * t_.chunks * t_.microbatches +
                                  CheckedCount(4) * m_.layers * t_.microbatches * p_.cp;
    return tag_of(after_cp + ((CheckedCount(l) * t_.microbatches + mb) * 8 + gemm + (recomputing_ ? 4 : 0)) * p_.tp);
  }
  // Ring-exchange all-gather GEMM (TE's split_overlap_ag): the GEMM runs as tp
  // pieces, one per sequence shard of sp_tok_ tokens (m = tokens, n, k = hidden
  // width). At step j a rank computes on the shard it holds while it passes that
  // shard on to the next rank and receives the next from the previous one, so each
  // piece's GEMM overlaps the transfer the next piece needs. The rank sends tp - 1
  // shards, exactly what a ring all-gather sends.
  void allgather_ring_gemm(const std::string& what, const char* pass, std::uint32_t mb, std::int64_t tag,
                           CheckedCount n, CheckedCount k) {
    const std::uint32_t next = rank_of(p_, {(c_.tp + 1) % p_.tp, c_.cp, c_.dp, c_.pp});
    const std::uint32_t prev = rank_of(p_, {(c_.tp + p_.tp - 1) % p_.tp, c_.cp, c_.dp, c_.pp});
    const CheckedCount shard = sp_tok_ * m_.hidden * gather_wire(fp8_gemm());
    // The rank's own shard is ready when the stream's next node could start: after
    // its last node and whatever that next node waits for (e.g. the gradient from
    // the next pipeline stage, the previous reduce-scatters).
    std::vector<std::uint64_t> ready = waits_;
    if (last_) ready.push_back(last_);
    auto after_ready = [&](std::uint64_t id) {
      for (std::size_t i = 1; i < ready.size(); ++i) node(id).add_data_deps(ready[i]);
      return id;
    };
    const std::uint64_t first = ready.empty() ? 0 : ready[0];
    std::uint64_t have = 0;
    for (std::uint32_t j = 0; j < p_.tp; ++j) {
      if (j > 0) {  // posted when step j - 1 begins, as TE posts step j's exchange then
        have = j == 1 ? after_ready(recv(nm(what + ".tp_recv1", pass, mb), prev, tag + 1, shard, first))
                      : recv(nm(what + ".tp_recv" + std::to_string(j), pass, mb), prev, tag + j, shard, have);
        waits_.push_back(have);
      }
      if (j + 1 < p_.tp) {
        const std::string name = nm(what + ".tp_send" + std::to_string(j + 1), pass, mb);
        if (j == 0) after_ready(send(name, next, tag + 1, shard, first));
        else send(name, next, tag + j + 1, shard, have);
      }
      gemm(nm(what + ".piece" + std::to_string(j), pass, mb), sp_tok_, n, k);
    }
  }
  // Pipelined reduce-scatter GEMM (TE's split_overlap_rs, `method: pipeline`):
  // the row-parallel GEMM (output hidden wide, inner width k) in kTpOverlapSplits
  // pieces of tokens; each piece's partial output is reduce-scattered over tp
  // while the next piece computes, and the layer's output waits for all of them.
  // Together they reduce-scatter the whole output, as the one collective did.
  void gemm_pipelined_reduce_scatter(const std::string& what, const char* pass, std::uint32_t mb, CheckedCount k) {
    const CheckedCount rows = tok_ / kTpOverlapSplits;
    std::vector<std::uint64_t> scattered;
    for (std::uint32_t i = 0; i < kTpOverlapSplits; ++i) {
      gemm(nm(what + ".piece" + std::to_string(i), pass, mb), rows, m_.hidden, k);
      scattered.push_back(collective(nm(what + ".tp_reduce_scatter" + std::to_string(i), pass, mb),
                                     CollectiveType::kReduceScatter, rows * m_.hidden * kWire, tp_, false, last_));
    }
    waits_.insert(waits_.end(), scattered.begin(), scattered.end());
  }

  // Core attention as Megatron-LM ran it before fused kernels (its
  // CoreAttention of 2021, --attention unfused): each head's scores Q K^T as
  // one batched GEMM (baddbmm), the fused scale-mask-softmax over all s x s
  // scores (the causal mask skips none of them), dropout of the probabilities,
  // and their product with V (bmm); the backward pass runs the four products
  // of the gradients around the dropout's and the softmax's backward. The
  // GEMMs carry the model's attention FLOPs (4 b s^2 h / tp forward); the
  // s x s tensors between them are memory traffic a fused kernel never has,
  // which is what makes small hidden sizes slow. Torch matmuls: outside
  // Transformer Engine, so never fp8.
  void unfused_attention(const std::string& what, const char* pass, std::uint32_t mb, bool bwd) {
    const CheckedCount s = t_.seq_local(), d = m_.head_dim(), bh = CheckedCount(t_.micro_batch) * (m_.heads / p_.tp);
    const CheckedCount e = bh * s * s;
    outside_te_ = true;
    if (!bwd) {
      gemm(nm(what + ".scores", pass, mb), s, s, d, bh);
      membound(nm(what + ".softmax", pass, mb), "softmax", e, 4 * e);
      if (m_.dropout > 0) membound(nm(what + ".dropout", pass, mb), "dropout", e, 5 * e);
      gemm(nm(what + ".context", pass, mb), s, d, s, bh);
    } else {
      gemm(nm(what + ".context", "bwd_probs", mb), s, s, d, bh);  // dP = dO V^T
      gemm(nm(what + ".context", "bwd_value", mb), s, d, s, bh);  // dV = P^T dO
      if (m_.dropout > 0) membound(nm(what + ".dropout", "bwd", mb), "dropout_backward", e, 5 * e);
      membound(nm(what + ".softmax", "bwd", mb), "softmax_backward", e, 6 * e);
      gemm(nm(what + ".scores", "bwd_query", mb), s, d, s, bh);  // dQ = dS K
      gemm(nm(what + ".scores", "bwd_key", mb), s, d, s, bh);    // dK = dS^T Q
    }
    outside_te_ = false;
  }

  void attention_core(std::uint64_t l, std::uint32_t mb, bool bwd) {
    const std::string what = layer(l) + ".attn.core";
    const char* pass = bwd ? "bwd" : recomputing_ ? "recompute" : "fwd";
    if (cp_.empty()) {
      if (t_.unfused_attention) unfused_attention(what, pass, mb, bwd);
      else attention(nm(what, pass, mb), bwd, t_.micro_batch, t_.seq_local(), true);
      return;
    }
    if (t_.cp_all_gather) {
      all_gather_attention(what, pass, mb, bwd);
      return;
    }
    // Ring attention: cp steps; step j > 0 uses the K/V block received in step j
    // (with its gradients in the backward pass), forwarded on to the next rank.
    const std::uint32_t next = rank_of(p_, {c_.tp, (c_.cp + 1) % p_.cp, c_.dp, c_.pp});
    const std::uint32_t prev = rank_of(p_, {c_.tp, (c_.cp + p_.cp - 1) % p_.cp, c_.dp, c_.pp});
    const CheckedCount kv = CheckedCount(2) * kv_bytes();
    const CheckedCount block = bwd ? CheckedCount(2) * kv : kv;
    const CheckedCount first_tag = CheckedCount(2) * t_.chunks * t_.microbatches +
                                   ((CheckedCount(l) * t_.microbatches + mb) * 4 + (bwd ? 1 : 0) + (recomputing_ ? 2 : 0)) * p_.cp;
    const std::int64_t base = tag_of(first_tag + p_.cp) - p_.cp;  // the ring's last tag fits too
    // Transformer Engine posts step j's exchange (send and receive) as step
    // j - 1 begins, so the receive is posted when the K/V step j - 1 uses are
    // in hand, not at the start of the iteration: its time in the report is
    // then the exchange alone, not also the idle time before the layer.
    std::uint64_t have = last_;  // the local K/V
    for (std::uint32_t j = 0; j < p_.cp; ++j) {
      if (j > 0) {
        have = recv(nm(what + ".cp_recv" + std::to_string(j), pass, mb), prev, base + j, block, have);
        waits_.push_back(have);
      }
      if (j + 1 < p_.cp) send(nm(what + ".cp_send" + std::to_string(j + 1), pass, mb), next, base + j + 1, block, have);
      ring_step(nm(what + ".block" + std::to_string(j), pass, mb), bwd, j);
    }
  }
  // Step j of load-balanced causal ring attention (Megatron-LM's
  // get_batch_on_this_cp_rank cuts each sequence into 2 cp chunks and gives CP
  // rank r chunks r and 2 cp - 1 - r; Transformer Engine's ring attention,
  // AttnFuncWithCPAndKVP2P, then runs): step 0, the rank's own K/V, is causal
  // attention over its s/cp tokens (its two chunks in order: exactly a causal
  // mask); every later step computes half of an (s/cp)^2 block without a mask:
  // from an earlier rank all s/cp queries against the first half of its keys,
  // from a later one the second half of the queries against all its keys. The
  // first is two independent (s/2cp)^2 blocks, which is the kernel written here
  // (batch 2b, seq s/2cp); the second has the same work and half as many CTAs,
  // each twice as long. Every rank thus computes 1/cp of the causal pairs.
  // K (or V) of the rank's micro-batch: its s/cp tokens x kv heads / tp x head dim, in bf16.
  CheckedCount kv_bytes() const {
    return CheckedCount(t_.micro_batch) * t_.seq_local() * (m_.kv_heads / p_.tp * m_.head_dim()) * kWire;
  }
  void ring_step(const std::string& name, bool bwd, std::uint32_t j) {
    if (j == 0) attention(name, bwd, t_.micro_batch, t_.seq_local(), true);
    else attention(name, bwd, 2 * t_.micro_batch, t_.seq_local() / 2, false);
  }
  // Context parallelism by all-gathered K/V (Transformer Engine's
  // AttnFuncWithCPAndKVAllGather, the Llama 3 paper's section 3.3.2): K and V
  // are all-gathered over the cp group (two collectives, on the stream: the
  // kernels wait for them, exposed), then each of the rank's two chunks of
  // queries (chunks r and 2 cp - 1 - r of 2 cp, as for the ring) attends to
  // every key before it. The backward pass gathers K and V again (TE keeps
  // only the local ones), runs the kernels' backward and reduce-scatters dK
  // and dV. Chunk r covers r whole (s/2cp)^2 blocks and one causal one, chunk
  // 2 cp - 1 - r covers 2 cp - 1 - r and one: together 2 cp - 1 whole blocks
  // and two causal, on every rank. They are written as those equal blocks
  // (the causal pair, then the whole ones as one batch), not as TE's two
  // kernels whose shapes depend on r, so that every cp rank runs the same
  // ops: the same causal pairs as the ring's steps, in two launches.
  void all_gather_attention(const std::string& what, const char* pass, std::uint32_t mb, bool bwd) {
    const CheckedCount kv_one = kv_bytes();
    collective(nm(what + ".cp_allgather_k", pass, mb), CollectiveType::kAllGather, kv_one, cp_, true);
    collective(nm(what + ".cp_allgather_v", pass, mb), CollectiveType::kAllGather, kv_one, cp_, true);
    const CheckedCount b = t_.micro_batch, c = t_.seq_local() / 2;
    attention(nm(what + ".diagonal", pass, mb), bwd, 2 * b, c, true);
    attention(nm(what + ".whole", pass, mb), bwd, CheckedCount(2 * p_.cp - 1) * b, c, false, p_.cp - 1);
    if (!bwd) return;
    const CheckedCount kv_all = kv_one * p_.cp;
    collective(nm(what + ".cp_reduce_scatter_dk", pass, mb), CollectiveType::kReduceScatter, kv_all, cp_, true);
    collective(nm(what + ".cp_reduce_scatter_dv", pass, mb), CollectiveType::kReduceScatter, kv_all, cp_, true);
  }

  // Backward of a row-parallel GEMM of a layer (input width `in`, output
  // hidden): the gradient all-gathered with sp (`gather`: the all-gather's name),
  // data gradient, weight gradient. Under fp8, TE's Linear: with sequence
  // parallelism it casts the gradient's local shard, gathers it in fp8 and
  // transposes the whole (before the data gradient, or with TE's ring exchange
  // after it: linear.py), and transposes the fp8 input it kept; without, it
  // casts the gradient with its transpose and kept the input's transpose.
  void row_backward(const std::string& what, const std::string& gather, std::uint32_t mb, std::int64_t tag,
                    CheckedCount in) {
    const CheckedCount h = m_.hidden;
    grad_cast(what, mb, (te_sp() ? sp_tok_ : tok_) * h, te_sp());
    if (tp_overlap()) {
      allgather_ring_gemm(what, "bwd_data", mb, tag, in, h);
      if (te_sp()) grad_transpose(what, mb, tok_ * h);
    } else {
      sp_gather(gather, "bwd", mb, true);  // backward of the reduce-scatter
      if (te_sp()) grad_transpose(what, mb, tok_ * h);
      gemm(nm(what, "bwd_data", mb), tok_, in, h);
    }
    if (te_sp()) input_transpose(what, mb, tok_ * in);
    gemm(nm(what, "bwd_weight", mb), h, in, tok_);
  }

  // --- the residual stream ----------------------------------------------------------
  // Each block's output joins the residual stream on the rank's sp_tok_ x hidden
  // elements: Megatron's bias-dropout-add (bias and dropout fused with the add;
  // a plain add without dropout). In the backward pass the dropout mask scales
  // the gradient entering the block, and the gradient leaving the block is
  // summed with the one the residual carried past it (autograd's accumulation).
  void residual_add(const std::string& what, const char* pass, std::uint32_t mb) {
    const CheckedCount e = sp_tok_ * m_.hidden;
    if (m_.dropout > 0) membound(nm(what + ".residual", pass, mb), "bias_dropout_add", e, 7 * e);
    else membound(nm(what + ".residual", pass, mb), "add", e, 6 * e);
  }
  void residual_dropout_backward(const std::string& what, std::uint32_t mb) {
    const CheckedCount e = sp_tok_ * m_.hidden;
    if (m_.dropout > 0) membound(nm(what + ".dropout", "bwd", mb), "dropout_backward", e, 5 * e);
  }
  void residual_accumulate(const std::string& what, std::uint32_t mb) {
    const CheckedCount e = sp_tok_ * m_.hidden;
    membound(nm(what + ".residual", "bwd", mb), "add", e, 6 * e);
  }

  void layer_forward(std::uint64_t l, std::uint32_t mb) {
    const char* pass = recomputing_ ? "recompute" : "fwd";
    const std::string L = layer(l);
    const CheckedCount h = m_.hidden;
    membound(nm(L + ".attn.norm", pass, mb), norm(), sp_tok_ * h, 2 * sp_tok_ * h * 2);
    if (m_.is_mla()) {
      mla_projections_forward(L, pass, mb);
    } else {
      weight_cast(L + ".attn.qkv", mb, h * qkv_out_);
      if (tp_overlap()) {
        allgather_ring_gemm(L + ".attn.qkv", pass, mb, tp_tag(l, mb, 0), qkv_out_, h);
      } else {
        sp_gather(L + ".attn", pass, mb, true);
        gemm(nm(L + ".attn.qkv", pass, mb), tok_, qkv_out_, h);
      }
    }
    attention_core(l, mb, false);
    weight_cast(L + ".attn.proj", mb, hq_ / p_.tp * h);
    input_cast(L + ".attn.proj", pass, mb, tok_ * hq_ / p_.tp, te_sp());
    if (tp_overlap()) {
      gemm_pipelined_reduce_scatter(L + ".attn.proj", pass, mb, hq_ / p_.tp);
    } else {
      gemm(nm(L + ".attn.proj", pass, mb), tok_, h, hq_ / p_.tp);
      tp_reduce(L + ".attn", pass, mb);
    }
    residual_add(L + ".attn", pass, mb);
    if (m_.moe_layer(l)) {
      moe_forward(l, mb, pass);
      residual_add(L + ".mlp", pass, mb);
      return;
    }
    membound(nm(L + ".mlp.norm", pass, mb), norm(), sp_tok_ * h, 2 * sp_tok_ * h * 2);
    dense_mlp_forward(l, L + ".mlp", pass, mb, m_.ffn_hidden);
    residual_add(L + ".mlp", pass, mb);
  }
  // A tensor-parallel MLP of `width` over the rank's tokens (after its norm):
  // FC1 column-parallel, activation, FC2 row-parallel and its reduction.
  // The dense layers' MLP (`what` = layerN.mlp), and an MoE layer's shared experts.
  void dense_mlp_forward(std::uint64_t l, const std::string& what, const char* pass, std::uint32_t mb,
                         std::uint64_t width) {
    const CheckedCount h = m_.hidden, f = width / p_.tp, f1 = CheckedCount(width) * (m_.swiglu ? 2 : 1) / p_.tp;
    weight_cast(what + ".fc1", mb, h * f1);
    if (tp_overlap()) {
      allgather_ring_gemm(what + ".fc1", pass, mb, tp_tag(l, mb, 1), f1, h);
    } else {
      sp_gather(what, pass, mb, true);
      gemm(nm(what + ".fc1", pass, mb), tok_, f1, h);
    }
    membound(nm(what + ".act", pass, mb), m_.swiglu ? "swiglu" : "gelu", tok_ * f, (m_.swiglu ? 3 : 2) * tok_ * f * 2);
    weight_cast(what + ".fc2", mb, f * h);
    input_cast(what + ".fc2", pass, mb, tok_ * f, te_sp());
    if (tp_overlap()) {
      gemm_pipelined_reduce_scatter(what + ".fc2", pass, mb, f);
    } else {
      gemm(nm(what + ".fc2", pass, mb), tok_, h, f);
      tp_reduce(what, pass, mb);
    }
  }
  void dense_mlp_backward(std::uint64_t l, const std::string& what, std::uint32_t mb, std::uint64_t width) {
    const CheckedCount f = width / p_.tp, f1 = CheckedCount(width) * (m_.swiglu ? 2 : 1) / p_.tp;
    row_backward(what + ".fc2", what + ".grad", mb, tp_tag(l, mb, 2), f);
    membound(nm(what + ".act", "bwd", mb), m_.swiglu ? "swiglu_backward" : "gelu_backward", tok_ * f,
             (m_.swiglu ? 5 : 3) * tok_ * f * 2);
    column_backward(what + ".fc1", mb, m_.hidden, f1);
  }

  // --- multi-head latent attention (DeepSeek-V2/V3) ---------------------------------
  // What Megatron-core's MLASelfAttention computes before the attention core,
  // on the rank's gathered tokens: the query down-projection (h -> r_q) and
  // its norm, the up-projection to heads/tp x (d_qk + d_rope); the key/value
  // down-projection (h -> r_kv + d_rope: the latent and the shared rotary key)
  // and its norm, the up-projection to heads/tp x (d_qk + d_v). The
  // down-projections are duplicated on every tensor-parallel rank (whole
  // weights, full width), the up-projections split by heads. Rotary embedding
  // and the concatenations are elementwise, left out.
  void mla_projections_forward(const std::string& L, const char* pass, std::uint32_t mb) {
    const MlaConfig& a = m_.mla;
    const CheckedCount h = m_.hidden, heads = m_.heads / p_.tp;
    sp_gather(L + ".attn", pass, mb, true);
    weight_cast(L + ".attn.q_down", mb, h * a.q_lora_rank);
    gemm(nm(L + ".attn.q_down", pass, mb), tok_, a.q_lora_rank, h);
    membound(nm(L + ".attn.q_norm", pass, mb), "rmsnorm", tok_ * a.q_lora_rank, 2 * tok_ * a.q_lora_rank * 2);
    weight_cast(L + ".attn.q_up", mb, CheckedCount(a.q_lora_rank) * heads * attn_dq_);
    gemm(nm(L + ".attn.q_up", pass, mb), tok_, heads * attn_dq_, a.q_lora_rank);
    const CheckedCount kv_down = CheckedCount(a.kv_lora_rank) + a.rope_head_dim;
    weight_cast(L + ".attn.kv_down", mb, h * kv_down);
    gemm(nm(L + ".attn.kv_down", pass, mb), tok_, kv_down, h);
    membound(nm(L + ".attn.kv_norm", pass, mb), "rmsnorm", tok_ * a.kv_lora_rank, 2 * tok_ * a.kv_lora_rank * 2);
    const CheckedCount kv_up = heads * (a.qk_head_dim + a.v_head_dim);
    weight_cast(L + ".attn.kv_up", mb, CheckedCount(a.kv_lora_rank) * kv_up);
    gemm(nm(L + ".attn.kv_up", pass, mb), tok_, kv_up, a.kv_lora_rank);
  }
  // Backward in reverse: each up-projection's data and weight gradients, the
  // norms, then the down-projections'. The down-projections' input gradient is
  // a partial sum over the tensor-parallel ranks (each holds its heads' share
  // of the latents' gradient): reduced as a column-parallel GEMM's is,
  // overlapped with the weight gradients.
  void mla_projections_backward(const std::string& L, std::uint32_t mb) {
    const MlaConfig& a = m_.mla;
    const CheckedCount h = m_.hidden, heads = m_.heads / p_.tp;
    const CheckedCount kv_up = heads * (a.qk_head_dim + a.v_head_dim), q_up = heads * attn_dq_;
    const CheckedCount kv_down = CheckedCount(a.kv_lora_rank) + a.rope_head_dim;
    gemm(nm(L + ".attn.kv_up", "bwd_data", mb), tok_, a.kv_lora_rank, kv_up);
    gemm(nm(L + ".attn.kv_up", "bwd_weight", mb), kv_up, a.kv_lora_rank, tok_);
    membound(nm(L + ".attn.kv_norm", "bwd", mb), "rmsnorm", tok_ * a.kv_lora_rank, 3 * tok_ * a.kv_lora_rank * 2);
    gemm(nm(L + ".attn.q_up", "bwd_data", mb), tok_, a.q_lora_rank, q_up);
    gemm(nm(L + ".attn.q_up", "bwd_weight", mb), q_up, a.q_lora_rank, tok_);
    membound(nm(L + ".attn.q_norm", "bwd", mb), "rmsnorm", tok_ * a.q_lora_rank, 3 * tok_ * a.q_lora_rank * 2);
    std::uint64_t gathered = 0;
    if (p_.sp && !tp_.empty()) {  // the weight gradients need the full input again
      gathered = collective(nm(L + ".attn.down.tp_allgather", "bwd", mb), CollectiveType::kAllGather,
                            sp_tok_ * m_.hidden * gather_wire(fp8_gemm()), tp_, false, last_);
    }
    gemm(nm(L + ".attn.kv_down", "bwd_data", mb), tok_, h, kv_down);
    gemm(nm(L + ".attn.q_down", "bwd_data", mb), tok_, h, a.q_lora_rank);
    std::uint64_t reduce = 0;
    if (!tp_.empty()) {
      const CheckedCount full = tok_ * m_.hidden * kWire;
      reduce = p_.sp ? collective(nm(L + ".attn.down.tp_reduce_scatter", "bwd", mb), CollectiveType::kReduceScatter,
                                  full, tp_, false, last_)
                     : collective(nm(L + ".attn.down.tp_allreduce", "bwd", mb), CollectiveType::kAllReduce, full, tp_,
                                  false, last_);
    }
    if (gathered) waits_.push_back(gathered);
    gemm(nm(L + ".attn.kv_down", "bwd_weight", mb), kv_down, h, tok_);
    gemm(nm(L + ".attn.q_down", "bwd_weight", mb), a.q_lora_rank, h, tok_);
    if (reduce) waits_.push_back(reduce);
  }

  void layer_backward(std::uint64_t l, std::uint32_t mb) {
    if (t_.recompute == Recompute::kFull) {
      recomputing_ = true;
      layer_forward(l, mb);
      recomputing_ = false;
    }
    const std::string L = layer(l);
    const CheckedCount h = m_.hidden;
    residual_dropout_backward(L + ".mlp", mb);
    if (m_.moe_layer(l)) {
      moe_backward(l, mb);
    } else {
      dense_mlp_backward(l, L + ".mlp", mb, m_.ffn_hidden);
      membound(nm(L + ".mlp.norm", "bwd", mb), norm(), sp_tok_ * h, 3 * sp_tok_ * h * 2);
    }
    residual_accumulate(L + ".mlp", mb);
    residual_dropout_backward(L + ".attn", mb);
    row_backward(L + ".attn.proj", L + ".attn.grad", mb, tp_tag(l, mb, 3), hq_ / p_.tp);
    if (t_.recompute == Recompute::kSelective) {
      recomputing_ = true;
      const std::string what = L + ".attn.core";
      // The ring's steps are recomputed from the K/V blocks kept; the
      // all-gather form's forward, checkpointed whole, gathers K and V again.
      if (cp_.empty() || t_.cp_all_gather) attention_core(l, mb, false);
      else for (std::uint32_t j = 0; j < p_.cp; ++j) ring_step(nm(what + ".block" + std::to_string(j), "recompute", mb), false, j);
      recomputing_ = false;
    }
    attention_core(l, mb, true);
    if (m_.is_mla()) mla_projections_backward(L, mb);
    else column_backward(L + ".attn.qkv", mb, h, qkv_out_);
    membound(nm(L + ".attn.norm", "bwd", mb), norm(), sp_tok_ * h, 3 * sp_tok_ * h * 2);
    residual_accumulate(L + ".attn", mb);
  }

  // Mixture of experts on this rank's sp_tok_ tokens: router, dispatch
  // all-to-all over ep, the local experts as one grouped GEMM, combine; then
  // the shared experts (a tensor-parallel MLP on every token). The local
  // experts' tokens come from the routing (workload/generators/transformer/expert_load.h):
  // equal loads are a grouped GEMM of E/ep experts; unequal ones (skewed
  // routing, capacity) one GEMM over all their rows (the same FLOPs). Every
  // all-to-all is sized by the group's most loaded rank (its tokens x hidden
  // x 2 B sent by each rank): the hottest receiver sets its time.
  // With expert tensor parallelism (etp > 1) each expert's MLP is split etp
  // ways (FC1 by columns, FC2 by rows, as a dense MLP over tp): after the
  // dispatch the etp ranks all-gather their tokens, compute all of them on
  // their slice of the weights, and reduce-scatter the output before the
  // combine (Megatron-core's alltoall dispatcher with expert TP).
  const RankExpertLoad& load(std::uint64_t l) {
    auto it = loads_.find(l);
    if (it == loads_.end()) it = loads_.emplace(l, rank_expert_load(t_, l, ep_position_)).first;
    return it->second;
  }
  // The experts' GEMM of m rows per expert (n x k weights), forward or one of the backward pair.
  void expert_gemm(const std::string& name, const RankExpertLoad& ld, bool rows_are_m, CheckedCount a, CheckedCount b) {
    const bool even = std::all_of(ld.local.begin(), ld.local.end(), [&](std::uint64_t x) { return x == ld.local[0]; });
    const CheckedCount rows = (even ? CheckedCount(ld.local[0]) : CheckedCount(ld.total)) * p_.etp;
    const CheckedCount batch = even ? CheckedCount(ld.local.size()) : CheckedCount(1);
    // rows_are_m: rows x a x b (forward, data gradient); else a x b x rows (weight gradient).
    if (rows_are_m) gemm(name, rows, a, b, batch);
    else gemm(name, a, b, rows, batch);
  }
  CheckedCount a2a_bytes(std::uint64_t l) { return CheckedCount(load(l).heaviest_rank) * m_.hidden * kWire; }
  // The expert-tensor-parallel exchange around the experts: the rank's
  // dispatched tokens gathered from its etp peers, or the output's partial
  // sums reduce-scattered back to them.
  void etp_gather(const std::string& what, const char* pass, std::uint32_t mb, std::uint64_t l) {
    if (etp_.empty()) return;
    collective(nm(what + ".tp_allgather", pass, mb), CollectiveType::kAllGather, a2a_bytes(l), etp_, true);
  }
  void etp_scatter(const std::string& what, const char* pass, std::uint32_t mb, std::uint64_t l) {
    if (etp_.empty()) return;
    collective(nm(what + ".tp_reduce_scatter", pass, mb), CollectiveType::kReduceScatter, a2a_bytes(l) * p_.etp, etp_,
               true);
  }
  void moe_forward(std::uint64_t l, std::uint32_t mb, const char* pass) {
    const std::string L = layer(l);
    const CheckedCount h = m_.hidden, f = m_.moe.expert_ffn_hidden / p_.etp, E = m_.moe.experts;
    const RankExpertLoad& ld = load(l);
    const CheckedCount te = CheckedCount(ld.total) * p_.etp, local = ld.local.size();
    membound(nm(L + ".mlp.norm", pass, mb), norm(), sp_tok_ * h, 2 * sp_tok_ * h * 2);
    outside_te_ = true;
    gemm(nm(L + ".mlp.router", pass, mb), sp_tok_, E, h);
    outside_te_ = false;
    if (!ep_.empty()) collective(nm(L + ".mlp.ep_dispatch", pass, mb), CollectiveType::kAllToAll, a2a_bytes(l), ep_, true);
    etp_gather(L + ".mlp.experts", pass, mb, l);
    // The experts are plain TE Linears on their own tokens (no sequence
    // parallelism, no fused norm): each casts its input with its transpose.
    const CheckedCount f1 = f * (m_.swiglu ? 2 : 1);
    if (ld.total > 0) {
      weight_cast(L + ".mlp.experts.fc1", mb, local * h * f1);
      input_cast(L + ".mlp.experts.fc1", pass, mb, te * h, false);
      expert_gemm(nm(L + ".mlp.experts.fc1", pass, mb), ld, true, f1, h);
      membound(nm(L + ".mlp.experts.act", pass, mb), m_.swiglu ? "swiglu" : "gelu", te * f,
               (m_.swiglu ? 3 : 2) * te * f * 2);
      weight_cast(L + ".mlp.experts.fc2", mb, local * f * h);
      input_cast(L + ".mlp.experts.fc2", pass, mb, te * f, false);
      expert_gemm(nm(L + ".mlp.experts.fc2", pass, mb), ld, true, h, f);
    }
    etp_scatter(L + ".mlp.experts", pass, mb, l);
    if (!ep_.empty()) collective(nm(L + ".mlp.ep_combine", pass, mb), CollectiveType::kAllToAll, a2a_bytes(l), ep_, true);
    if (m_.moe.shared_experts) dense_mlp_forward(l, L + ".mlp.shared", pass, mb, m_.shared_ffn());
  }
  void moe_backward(std::uint64_t l, std::uint32_t mb) {
    const std::string L = layer(l);
    const CheckedCount h = m_.hidden, f = m_.moe.expert_ffn_hidden / p_.etp, E = m_.moe.experts;
    const RankExpertLoad& ld = load(l);
    const CheckedCount te = CheckedCount(ld.total) * p_.etp, f1 = f * (m_.swiglu ? 2 : 1);
    if (m_.moe.shared_experts) dense_mlp_backward(l, L + ".mlp.shared", mb, m_.shared_ffn());
    if (!ep_.empty()) collective(nm(L + ".mlp.ep_combine", "bwd", mb), CollectiveType::kAllToAll, a2a_bytes(l), ep_, true);
    etp_gather(L + ".mlp.experts.grad", "bwd", mb, l);  // backward of the reduce-scatter
    if (ld.total > 0) {
      grad_cast(L + ".mlp.experts.fc2", mb, te * h, false);
      expert_gemm(nm(L + ".mlp.experts.fc2", "bwd_data", mb), ld, true, f, h);
      expert_gemm(nm(L + ".mlp.experts.fc2", "bwd_weight", mb), ld, false, h, f);
      membound(nm(L + ".mlp.experts.act", "bwd", mb), m_.swiglu ? "swiglu_backward" : "gelu_backward", te * f,
               (m_.swiglu ? 5 : 3) * te * f * 2);
      grad_cast(L + ".mlp.experts.fc1", mb, te * f1, false);
      expert_gemm(nm(L + ".mlp.experts.fc1", "bwd_data", mb), ld, true, h, f1);
      expert_gemm(nm(L + ".mlp.experts.fc1", "bwd_weight", mb), ld, false, f1, h);
    }
    etp_scatter(L + ".mlp.experts.grad", "bwd", mb, l);  // backward of the all-gather
    if (!ep_.empty()) collective(nm(L + ".mlp.ep_dispatch", "bwd", mb), CollectiveType::kAllToAll, a2a_bytes(l), ep_, true);
    outside_te_ = true;
    gemm(nm(L + ".mlp.router", "bwd_data", mb), sp_tok_, h, E);
    gemm(nm(L + ".mlp.router", "bwd_weight", mb), E, h, sp_tok_);
    outside_te_ = false;
    membound(nm(L + ".mlp.norm", "bwd", mb), norm(), sp_tok_ * h, 3 * sp_tok_ * h * 2);
  }

  void embedding_forward(std::uint32_t mb) {
    const CheckedCount e = tok_ * m_.hidden;
    membound(nm("embedding", "fwd", mb), "embedding", e, 2 * e * 2);
    tp_reduce("embedding", "fwd", mb);  // vocabulary-parallel lookup: partial sums
  }
  void embedding_backward(std::uint32_t mb) {
    sp_gather("embedding.grad", "bwd", mb, false);
    const CheckedCount e = tok_ * m_.hidden;
    membound(nm("embedding", "bwd", mb), "embedding_backward", e, 2 * e * 2);
  }
  void output_forward(std::uint32_t mb) {
    const CheckedCount h = m_.hidden, v = m_.vocab / p_.tp;
    membound(nm("output.norm", "fwd", mb), norm(), sp_tok_ * h, 2 * sp_tok_ * h * 2);
    sp_gather("output", "fwd", mb, false);
    outside_te_ = true;
    gemm(nm("output.logits", "fwd", mb), tok_, v, h);
    outside_te_ = false;
    membound(nm("loss", "fwd", mb), "cross_entropy", tok_ * v, 2 * tok_ * v * 2);
    // Vocabulary-parallel cross entropy: max, target logit and sum of exponentials, fp32 per token.
    if (!tp_.empty()) collective(nm("loss.tp_allreduce", "fwd", mb), CollectiveType::kAllReduce, 3 * tok_ * 4, tp_, true);
  }
  void output_backward(std::uint32_t mb) {
    const CheckedCount h = m_.hidden, v = m_.vocab / p_.tp;
    membound(nm("loss", "bwd", mb), "cross_entropy_backward", tok_ * v, 2 * tok_ * v * 2);
    outside_te_ = true;
    column_backward("output.logits", mb, h, v);
    outside_te_ = false;
    membound(nm("output.norm", "bwd", mb), norm(), sp_tok_ * h, 3 * sp_tok_ * h * 2);
  }

  // --- the pipeline -------------------------------------------------------------
  // Tag of a pipeline message: direction, the sender's chunk, micro-batch.
  std::int64_t pp_tag(bool bwd, std::uint32_t sender_chunk, std::uint32_t mb) const {
    return (static_cast<std::int64_t>(bwd ? 1 : 0) * t_.chunks + sender_chunk) * t_.microbatches + mb;
  }
  std::uint32_t stage_rank(std::uint32_t stage) const { return rank_of(p_, {c_.tp, c_.cp, c_.dp, stage}); }
  // A pipeline message: the activation (or its gradient) each rank holds, or
  // with scatter-gather its 1/tp slice, sent by every tensor-parallel rank to
  // its peer of the next stage over its own NIC (Narayanan et al., SC'21, 4.1;
  // Megatron-LM's split_tensor_into_1d_equal_chunks).
  CheckedCount pp_bytes() const { return t_.pp_scatter_gather ? act_bytes() / p_.tp : act_bytes(); }
  // Receives a pipeline message; with scatter-gather the slices are then
  // all-gathered over the tensor-parallel group (gather_split_1d_tensor), and
  // the pass waits for that.
  std::uint64_t pp_receive(const std::string& what, const char* pass, std::uint32_t mb, std::uint32_t src,
                           std::int64_t tag) {
    const std::uint64_t got = recv(nm("pp.recv_" + what, pass, mb), src, tag, pp_bytes());
    if (!t_.pp_scatter_gather) return got;
    return collective(nm("pp.gather_" + what + ".tp_allgather", pass, mb), CollectiveType::kAllGather, pp_bytes(), tp_,
                      false, got);
  }

  void forward(std::uint32_t mb, std::uint32_t chunk) {
    if (!holds_input(chunk)) {  // from the previous stage (or, interleaved, the last stage's previous chunk)
      const std::uint32_t src = c_.pp == 0 ? p_.pp - 1 : c_.pp - 1;
      const std::uint32_t src_chunk = c_.pp == 0 ? chunk - 1 : chunk;
      waits_.push_back(pp_receive("activation", "fwd", mb, stage_rank(src), pp_tag(false, src_chunk, mb)));
    }
    const std::vector<ParamGroup> groups = chunk_groups(chunk);
    std::vector<std::uint64_t> gathered(groups.size(), 0);
    auto prefetch = [&](std::size_t i) {
      if (t_.zero == 3 && i < groups.size() && !dp_.empty()) {
        gathered[i] = collective(nm(group_name(groups[i]) + ".dp_param_allgather", "fwd", mb),
                                 CollectiveType::kAllGather, zero3_shard_bytes(groups[i]), dp_, false, last_);
      }
    };
    prefetch(0);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (gathered[i]) waits_.push_back(gathered[i]);
      prefetch(i + 1);
      const ParamGroup& g = groups[i];
      if (g.kind == ParamGroup::kEmbedding) embedding_forward(mb);
      else if (g.kind == ParamGroup::kOutput) output_forward(mb);
      else layer_forward(g.layer, mb);
    }
    if (!holds_output(chunk)) {
      const std::uint32_t dst = c_.pp == p_.pp - 1 ? 0 : c_.pp + 1;
      send(nm("pp.send_activation", "fwd", mb), stage_rank(dst), pp_tag(false, chunk, mb), pp_bytes(), last_);
    }
  }

  void backward(std::uint32_t mb, std::uint32_t chunk) {
    if (!holds_output(chunk)) {
      const std::uint32_t src = c_.pp == p_.pp - 1 ? 0 : c_.pp + 1;
      const std::uint32_t src_chunk = c_.pp == p_.pp - 1 ? chunk + 1 : chunk;
      waits_.push_back(pp_receive("grad", "bwd", mb, stage_rank(src), pp_tag(true, src_chunk, mb)));
    }
    const std::vector<ParamGroup> groups = chunk_groups(chunk);
    const bool last_mb = mb + 1 == t_.microbatches;
    std::vector<std::uint64_t> gathered(groups.size(), 0);
    auto prefetch = [&](std::size_t k) {  // k-th group from the end
      if (t_.zero == 3 && k < groups.size() && !dp_.empty()) {
        const ParamGroup& g = groups[groups.size() - 1 - k];
        gathered[k] = collective(nm(group_name(g) + ".dp_param_allgather", "bwd", mb), CollectiveType::kAllGather,
                                 zero3_shard_bytes(g), dp_, false, last_);
      }
    };
    prefetch(0);
    for (std::size_t k = 0; k < groups.size(); ++k) {
      if (gathered[k]) waits_.push_back(gathered[k]);
      prefetch(k + 1);
      const ParamGroup& g = groups[groups.size() - 1 - k];
      if (g.kind == ParamGroup::kEmbedding) embedding_backward(mb);
      else if (g.kind == ParamGroup::kOutput) output_backward(mb);
      else layer_backward(g.layer, mb);
      gradients_ready(g, mb, last_mb);
    }
    if (!holds_input(chunk)) {
      const std::uint32_t dst = c_.pp == 0 ? p_.pp - 1 : c_.pp - 1;
      send(nm("pp.send_grad", "bwd", mb), stage_rank(dst), pp_tag(true, chunk, mb), pp_bytes(), last_);
    }
    if (last_mb) flush_buckets();
  }

  // --- data parallelism -----------------------------------------------------------
  static std::string group_name(const ParamGroup& g) {
    return g.kind == ParamGroup::kEmbedding ? "embedding" : g.kind == ParamGroup::kOutput ? "output" : layer(g.layer);
  }
  CheckedCount zero3_shard_bytes(const ParamGroup& g) const {
    return ceil_to(g.dense, dpc_) / dpc_ * 2;  // experts stay whole on their ranks (sharded only in the optimizer)
  }
  void gradients_ready(const ParamGroup& g, std::uint32_t mb, bool last_mb) {
    if (t_.zero == 3) {  // every micro-batch: gradients are kept sharded
      if (!dp_.empty() && g.dense) {
        grad_colls_.push_back(collective(nm(group_name(g) + ".dp_grad_reduce_scatter", "bwd", mb),
                                         CollectiveType::kReduceScatter, ceil_to(g.dense, dpc_) * 2, dp_, false, last_));
      }
      if (last_mb) pending_expert_ += g.expert;
      if (last_mb && pending_expert_ >= t_.bucket_params) flush_expert();
      return;
    }
    if (!last_mb) return;
    pending_dense_ += g.dense;
    pending_expert_ += g.expert;
    if (pending_dense_ >= t_.bucket_params) flush_dense();
    if (pending_expert_ >= t_.bucket_params) flush_expert();
  }
  void flush_buckets() {
    if (t_.zero != 3) flush_dense();
    flush_expert();
  }
  void flush_dense() { flush_bucket("dp", pending_dense_, dense_buckets_, dp_, dpc_); }
  void flush_expert() { flush_bucket("edp", pending_expert_, expert_buckets_, edp_name_, edp_); }
  // One gradient bucket of `pending` parameters over `group` (`size` ranks):
  // all-reduced, or reduce-scattered (padded to a multiple of the group) with ZeRO.
  template <typename Group>
  void flush_bucket(const char* dim, std::uint64_t& pending, std::vector<std::uint64_t>& buckets, const Group& group,
                    std::uint64_t size) {
    if (pending == 0) return;
    if (!group.empty()) {
      const std::string name = std::string(dim) + ".grad_" + (t_.zero == 0 ? "allreduce" : "reduce_scatter") +
                               " bucket" + std::to_string(buckets.size());
      grad_colls_.push_back(t_.zero == 0
                                ? collective(name, CollectiveType::kAllReduce, CheckedCount(pending) * 2, group, false, last_)
                                : collective(name, CollectiveType::kReduceScatter, ceil_to(pending, size) * 2, group,
                                             false, last_));
      buckets.push_back(pending);
    }
    pending = 0;
  }

  void finish_iteration() {
    if (!embd_.empty()) {  // tied embeddings: first and last stage sum their copies' gradients
      const std::uint64_t emb = m_.vocab * m_.hidden / p_.tp;
      grad_colls_.push_back(collective("embd.grad_allreduce", CollectiveType::kAllReduce, CheckedCount(emb) * 2, embd_, false, last_));
    }
    waits_.insert(waits_.end(), grad_colls_.begin(), grad_colls_.end());
    const RankParams p = rank_params(t_, rank_);
    const CheckedCount local = t_.zero >= 1 ? ceil_to(p.dense, dpc_) / dpc_ + ceil_to(p.expert, edp_) / edp_
                                            : CheckedCount(p.dense) + p.expert;
    // Adam: reads the gradient (2 B), master weights, m and v (4 B each), writes the last three and the bf16 weights.
    membound("optimizer.step", "adam", local, local * (2 + 12 + 12 + 2));
    if (t_.zero == 1 || t_.zero == 2) {  // distributed optimizer: gather the updated parameters
      for (std::size_t b = 0; b < dense_buckets_.size(); ++b) {
        collective("dp.param_allgather bucket" + std::to_string(b), CollectiveType::kAllGather,
                   ceil_to(dense_buckets_[b], dpc_) / dpc_ * 2, dp_, false, last_);
      }
      for (std::size_t b = 0; b < expert_buckets_.size(); ++b) {
        collective("edp.param_allgather bucket" + std::to_string(b), CollectiveType::kAllGather,
                   ceil_to(expert_buckets_[b], edp_) / edp_ * 2, edp_name_, false, last_);
      }
    }
  }

  void metadata() {
    auto md_int = [&](const char* name, std::uint64_t v) {
      et::AttributeProto* a = trace_.metadata.add_attr();
      a->set_name(name);
      a->set_int64_val(static_cast<std::int64_t>(v));
    };
    auto md_str = [&](const char* name, const std::string& v) {
      et::AttributeProto* a = trace_.metadata.add_attr();
      a->set_name(name);
      a->set_string_val(v);
    };
    md_str("generator", "sim workload gen transformer");
    md_str("workload", t_.describe());
    md_str("dtype", dtype());  // the GEMMs' dtype: MFU's peak (report/training_report.h)
    if (model_flops_fit_64_bits(t_)) {
      md_int("model_flops", model_flops_exact(t_));
    } else {  // over 9.2 EFLOP (a 16,384-GPU iteration): not exact any more, as a double
      et::AttributeProto* a = trace_.metadata.add_attr();
      a->set_name("model_flops");
      a->set_double_val(model_flops_per_iteration(t_));
    }
    md_int("world_size", p_.world());
    md_int("pp", p_.pp);
    md_int("microbatches", t_.microbatches);
    md_int("chunks", t_.chunks);
    const RankMemory mem = rank_memory(t_, rank_);
    md_int("param_bytes", mem.param_bytes);
    md_int("grad_bytes", mem.grad_bytes);
    md_int("optimizer_bytes", mem.optimizer_bytes);
  }

  const TrainingSpec& t_;
  const ModelConfig& m_;
  const ParallelPlan& p_;
  std::uint32_t rank_;
  RankCoords c_;
  EtTrace& trace_;
  const std::function<void(const et::Node&)>* sink_;
  std::size_t used_ = 0;  // nodes of trace_ written so far
  CheckedCount tok_, sp_tok_, hq_, qkv_out_, fc1_out_;
  std::uint64_t attn_dq_ = 0, attn_dv_ = 0;  // attention core's per-head widths
  std::uint32_t ep_position_ = 0;            // this rank's place in its expert-parallel group
  std::unordered_map<std::uint64_t, RankExpertLoad> loads_;  // per MoE layer
  std::uint64_t dpc_ = 1, edp_ = 1;
  std::string tp_, cp_, dp_, ep_, etp_, edp_name_, embd_;  // group names; empty: no such group of 2+ ranks
  std::uint64_t last_ = 0;              // the GPU stream's last node
  std::vector<std::uint64_t> waits_;    // what the stream's next node must also wait for
  bool recomputing_ = false;
  bool outside_te_ = false;  // the GEMMs being written are not Transformer Engine's (bf16 under --dtype fp8)
  std::uint64_t pending_dense_ = 0, pending_expert_ = 0;
  std::vector<std::uint64_t> dense_buckets_, expert_buckets_, grad_colls_;
};

}  // namespace

EtTrace transformer_rank_trace(const TrainingSpec& spec, std::uint32_t rank, const std::string& path) {
  EtTrace trace;
  RankBuilder(spec, rank, path, trace).build();
  return trace;
}

void transformer_rank_trace(const TrainingSpec& spec, std::uint32_t rank, EtTrace& into, const std::string& path) {
  RankBuilder(spec, rank, path, into).build();
}

void transformer_rank_stream(const TrainingSpec& spec, std::uint32_t rank,
                             const std::function<void(const et::Node&)>& sink) {
  EtTrace one;
  RankBuilder(spec, rank, "", one, &sink).build();
}

}  // namespace sim::gen
