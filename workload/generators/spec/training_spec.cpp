#include "workload/generators/spec/training_spec.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"
#include "workload/generators/spec/quantity_limits.h"

namespace sim::gen {
namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

void require_divides(std::uint64_t divisor, std::uint64_t value, const std::string& what) {
  if (divisor == 0 || value % divisor != 0) throw InputError(what);
}

std::uint64_t parse_count(const std::string& key, const std::string& value) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
    throw InputError("gen:transformer: " + key + "= must be a whole number from 0 to 18446744073709551615, got '" +
                     value + "'");
  }
  return v;
}

}  // namespace

RoutingConfig parse_routing(const std::string& text, const std::string& given) {
  RoutingConfig r;
  if (text == "uniform") return r;
  const std::string expected = ": expected uniform or zipf:S[:SEED] (S in (0, 100], SEED a whole number)";
  if (text.rfind("zipf:", 0) != 0) throw InputError(given + expected);
  const std::string rest = text.substr(5);
  const std::size_t colon = rest.find(':');
  const std::string s = rest.substr(0, colon);
  double exponent = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), exponent);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !(exponent > 0 && exponent <= 100)) {
    throw InputError(given + expected);
  }
  r.zipf = true;
  r.exponent = exponent;
  if (colon != std::string::npos) {
    const std::string seed = rest.substr(colon + 1);
    const auto [e2, ec2] = std::from_chars(seed.data(), seed.data() + seed.size(), r.seed);
    if (seed.empty() || ec2 != std::errc() || e2 != seed.data() + seed.size()) throw InputError(given + expected);
  }
  return r;
}

std::string option_name(OptionSpelling spelling, const std::string& key) {
  return spelling == OptionSpelling::kQuery ? key + "=" : "--" + key;
}

std::string option_given(OptionSpelling spelling, const std::string& key, const std::string& value) {
  return spelling == OptionSpelling::kQuery ? key + "=" + value : "--" + key + " " + value;
}

void check_given_count(OptionSpelling spelling, const std::string& key, std::uint64_t value) {
  if (value != 0) return;
  const std::string given = option_given(spelling, key, "0") + ": ";
  if (key == "first-stage-layers" || key == "last-stage-layers") {
    throw InputError(given + "must be from 1 to the model's layers - 1 (layers on the " +
                     (key[0] == 'f' ? "first" : "last") + " pipeline stage; leave it out to split the layers evenly)");
  }
  if (key == "bucket-params") {
    throw InputError(given + "must be at least 1 (parameters per gradient bucket; leave it out for Megatron-LM's "
                             "default max(4e7, 1e6 x dp x cp))");
  }
  const char* what = key == "seq" ? "tokens per sequence" : key == "global-batch" ? "sequences per iteration"
                                                                                   : "sequences per micro-batch";
  throw InputError(given + "must be at least 1 (" + what + ")");
}

std::string TrainingSpec::describe() const {
  std::string s = model.name + ", " + plan.describe() + ", global batch " + num(global_batch) + " x " + num(seq) +
                  " tokens, micro-batch " + num(micro_batch) + " (" + num(microbatches) + " per replica), ";
  s += chunks == 1 ? "1F1B" : "interleaved (" + num(chunks) + " chunks per stage)";
  s += ", ZeRO " + num(zero);
  s += recompute == Recompute::kFull ? ", full recompute" : recompute == Recompute::kSelective ? ", selective recompute" : "";
  s += fp8 ? ", fp8 GEMMs" : ", bf16";
  if (unfused_attention) s += ", unfused attention";
  if (cp_all_gather) s += ", context parallelism by all-gathered K/V";
  if (comm_free) s += ", communication free";
  if (layers_only) s += ", transformer layers only";
  if (pp_scatter_gather) s += ", pipeline messages scattered over tp and gathered";
  if (tp_comm_overlap) s += ", TP communication overlapped with GEMMs";
  if (model.is_moe() && model.moe.routing.zipf) s += ", routing " + model.moe.routing.describe();
  return s;
}

namespace {

TrainingSpec build_spec(const TrainingOptions& o, const ModelConfig* model) {
  TrainingSpec t;
  t.spelling = o.spelling;
  const bool query = o.spelling == OptionSpelling::kQuery;
  // "--seq" / "seq=", "--seq 4096" / "seq=4096", "--schedule 'x'" / "schedule=x", "--comm-free" / "comm-free".
  const auto opt = [&](const std::string& key) { return option_name(o.spelling, key); };
  const auto given = [&](const std::string& key, const std::string& value) { return option_given(o.spelling, key, value); };
  const auto quoted = [&](const std::string& key, const std::string& value) {
    return query ? key + "=" + value : "--" + key + " '" + value + "'";
  };
  const auto flag = [&](const std::string& key) { return query ? key : "--" + key; };
  if (o.model.empty()) throw InputError(opt("model") + " is required (a built-in name or a model YAML file)");
  if (o.parallel.empty()) throw InputError(opt("parallel") + " is required, e.g. tp=8,pp=4,dp=16");
  t.plan = parse_parallel_plan(o.parallel, quoted("parallel", o.parallel));
  t.model = model ? *model : load_model(o.model, query ? "model=" + o.model : "");
  const ModelConfig& m = t.model;
  const ParallelPlan& p = t.plan;
  const std::string plan = given("parallel", p.describe()) + ": ";
  require_divides(p.tp, m.heads, plan + "tp=" + num(p.tp) + " must divide the model's " + num(m.heads) +
                                     " attention heads (" + m.source + ")");
  require_divides(p.tp, m.kv_heads, plan + "tp=" + num(p.tp) + " must divide the model's " + num(m.kv_heads) +
                                        " key/value heads (" + m.source + ")");
  require_divides(p.tp, m.ffn_hidden, plan + "tp=" + num(p.tp) + " must divide ffn_hidden " + num(m.ffn_hidden) +
                                          " (" + m.source + ")");
  require_divides(p.tp, m.vocab, plan + "tp=" + num(p.tp) + " must divide the vocabulary " + num(m.vocab) + " (" +
                                     m.source + "; Megatron pads it to a multiple of 128 x tp)");
  if (p.sp && p.tp == 1) throw InputError(plan + "sp (sequence parallelism) needs tp > 1");
  if (p.ep > 1 && !m.is_moe()) throw InputError(plan + "ep=" + num(p.ep) + " but " + m.name + " has no experts");
  if (p.etp > 1 && !m.is_moe()) throw InputError(plan + "etp=" + num(p.etp) + " but " + m.name + " has no experts");

  // The query leaves a key out as 0 (and refuses an explicit 0): "required";
  // on the command line CLI11 requires them, so a 0 here was typed.
  for (const auto& [key, value] : {std::pair<const char*, std::uint64_t>{"seq", o.seq}, {"global-batch", o.global_batch}}) {
    if (value == 0 && query) {
      throw InputError(opt(key) + " is required (" + (key[0] == 's' ? "tokens per sequence" : "sequences per iteration") +
                       ", at least 1)");
    }
    check_given_count(o.spelling, key, value);
  }
  check_given_count(o.spelling, "micro-batch", o.micro_batch);
  t.seq = o.seq;
  t.global_batch = o.global_batch;
  t.micro_batch = o.micro_batch;
  if (p.cp > 1) {  // Megatron-LM cuts a sequence into 2 cp chunks (causal load balancing, transformer_graph.cpp)
    require_divides(2 * std::uint64_t{p.cp}, o.seq,
                    plan + "cp=" + num(p.cp) + ": 2 x cp must divide " + given("seq", num(o.seq)) +
                        " (each sequence is cut into 2 x cp chunks, two per CP rank)");
  }
  require_divides(o.micro_batch * p.dp, o.global_batch,
                  given("global-batch", num(o.global_batch)) + " must be a multiple of " + opt("micro-batch") +
                      " x dp = " + num(o.micro_batch) + " x " + num(p.dp));
  const std::uint64_t mb = o.global_batch / (o.micro_batch * p.dp);
  if (mb > (1u << 24)) {
    throw InputError(given("global-batch", num(o.global_batch)) + ": " + num(mb) +
                     " micro-batches per replica (global batch / (micro-batch x dp)); at most 16777216: lower " +
                     opt("global-batch") + " or raise " + opt("micro-batch") + " or dp");
  }
  t.microbatches = static_cast<std::uint32_t>(mb);
  if (p.sp) {
    require_divides(p.tp, t.tokens(), plan + "with sp, tp=" + num(p.tp) + " must divide the tokens of a micro-batch (" +
                                          num(t.tokens()) + ")");
  }
  if (!o.routing.empty()) {
    if (!m.is_moe()) throw InputError(quoted("routing", o.routing) + ": " + m.name + " has no experts (" + m.source + ")");
    t.model.moe.routing = parse_routing(o.routing, quoted("routing", o.routing));
  }
  if (m.is_moe()) {
    if (m.moe.shared_experts > 0) {
      require_divides(p.tp, m.shared_ffn(), plan + "tp=" + num(p.tp) + " must divide the shared experts' width " +
                                                num(m.shared_ffn()) + " (moe.shared_experts x moe.expert_ffn_hidden of " +
                                                m.source + ")");
    }
    if (m.moe.routing.zipf && m.moe.experts > (1u << 20)) {
      throw InputError("moe.routing zipf: at most 1048576 experts, the model has " + num(m.moe.experts) + " (" + m.source + ")");
    }
    require_divides(p.ep, m.moe.experts, plan + "ep=" + num(p.ep) + " must divide the model's " +
                                             num(m.moe.experts) + " experts");
    require_divides(std::uint64_t{p.ep} * p.etp, std::uint64_t{p.tp} * p.dp,
                    plan + (p.etp > 1 ? "ep x etp = " + num(std::uint64_t{p.ep} * p.etp) : "ep=" + num(p.ep)) +
                        " must divide tp x dp = " + num(std::uint64_t{p.tp} * p.dp) +
                        " (experts take their ranks from tensor x data parallelism)");
    require_divides(p.etp, m.moe.expert_ffn_hidden, plan + "etp=" + num(p.etp) + " must divide the experts' width " +
                                                        num(m.moe.expert_ffn_hidden) + " (moe.expert_ffn_hidden of " +
                                                        m.source + ")");
    if (p.tp > 1 && !p.sp) throw InputError(plan + "a mixture of experts with tp > 1 needs sp (as in Megatron-LM)");
    const std::uint64_t routed = (p.sp ? t.tokens() / p.tp : t.tokens()) * m.moe.top_k * p.ep;
    if (!m.moe.routing.zipf) require_divides(m.moe.experts, routed,
                    plan + "the tokens routed to one expert must be whole: tokens per rank x top_k x ep (" +
                        num(routed) + ") must be a multiple of the " + num(m.moe.experts) + " experts");
  }

  // Schedule.
  if (o.schedule == "1f1b") {
    t.chunks = 1;
  } else if (o.schedule.rfind("interleaved:", 0) == 0) {
    const std::string v = o.schedule.substr(12);
    std::uint64_t chunks = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), chunks);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || chunks < 2 || chunks > 1024) {
      throw InputError(quoted("schedule", o.schedule) + ": interleaved:V needs V from 2 to 1024 chunks per stage");
    }
    t.chunks = static_cast<std::uint32_t>(chunks);
    if (p.pp < 2) throw InputError(given("schedule", o.schedule) + " needs pp >= 2");
    require_divides(p.pp, t.microbatches,
                    given("schedule", o.schedule) + ": the micro-batches per replica (" + num(t.microbatches) +
                        ") must be a multiple of pp=" + num(p.pp) + " (Megatron-LM's interleaved schedule)");
  } else {
    throw InputError(quoted("schedule", o.schedule) + ": expected 1f1b or interleaved:V");
  }

  // Layers per stage and chunk.
  const std::uint64_t L = m.layers, P = p.pp, V = t.chunks;
  // The tables below hold one entry per (stage, chunk): sized before they are allocated.
  if (P * V > (1u << 20)) {
    throw InputError(plan + "pp=" + num(P) + " x " + num(V) + " chunks per stage is " + num(P * V) +
                     " model chunks, more than 1048576");
  }
  std::vector<std::uint64_t> per_stage(P, 0);
  if (o.first_stage_layers || o.last_stage_layers) {
    if (P < 2) throw InputError(opt("first-stage-layers") + " / " + opt("last-stage-layers") + " need pp >= 2");
    const std::uint64_t inner = P - 2;
    const std::uint64_t first = o.first_stage_layers, last = o.last_stage_layers;
    if (first == 0 || last == 0) {
      throw InputError(opt("first-stage-layers") + " and " + opt("last-stage-layers") + " go together, each >= 1");
    }
    if (first + last > L || (inner == 0 && first + last != L) ||
        (inner > 0 && (L - first - last == 0 || (L - first - last) % inner != 0))) {
      const std::string both = given("first-stage-layers", num(first)) + " and " + given("last-stage-layers", num(last));
      if (first + last > L) {
        throw InputError(both + " add up to " + num(first + last) + " layers, more than the model's " + num(L));
      }
      if (inner == 0) {
        throw InputError(both + " add up to " + num(first + last) + " of the model's " + num(L) +
                         " layers: with pp=2 there is no inner stage, so the two stages hold them all");
      }
      throw InputError(both + " leave " + num(L - first - last) + " of the model's " + num(L) + " layers for the " +
                       num(inner) + " inner stages: they must split evenly, at least one each");
    }
    for (std::uint64_t s = 0; s < P; ++s) per_stage[s] = inner ? (L - first - last) / inner : 0;
    per_stage[0] = first;
    per_stage[P - 1] = last;
  } else {
    require_divides(P * V, L, plan + "pp=" + num(P) + (V > 1 ? " x " + num(V) + " chunks" : "") +
                                  " must divide the model's " + num(L) + " layers" +
                                  (V > 1 ? "" : " (or give " + opt("first-stage-layers") + " and " +
                                                    opt("last-stage-layers") + ")"));
    std::fill(per_stage.begin(), per_stage.end(), L / P);
  }
  // Layers per (stage, chunk). Interleaved with a shorter first or last stage
  // (Llama 3 405B: 126 layers on 16 stages as if 128, section 3.3.2): every
  // chunk holds the inner stages' layers / V, and the first stage's missing
  // layers come out of its first chunk, the last stage's out of its last one
  // (a chunk may hold none: only the embedding, or only the output layer).
  std::vector<std::uint64_t> layers(P * V, 0);
  if (V > 1 && (o.first_stage_layers || o.last_stage_layers)) {
    const std::uint64_t inner = per_stage[P > 2 ? 1 : 0];
    const std::uint64_t per_chunk = P > 2 ? inner / V : 0;
    if (P < 3 || inner % V != 0 || per_stage[0] > inner || per_stage[P - 1] > inner ||
        inner - per_stage[0] > per_chunk || inner - per_stage[P - 1] > per_chunk) {
      throw InputError(given("schedule", o.schedule) + " with " + given("first-stage-layers", num(per_stage[0])) +
                       " and " + given("last-stage-layers", num(per_stage[P - 1])) +
                       ": needs pp >= 3, the inner stages' layers (" + num(inner) + ") a multiple of " + num(V) +
                       " chunks, and the first and last stages at most one chunk (" + num(per_chunk) +
                       " layers) short of them");
    }
    std::fill(layers.begin(), layers.end(), per_chunk);
    layers[0] -= inner - per_stage[0];
    layers[(P - 1) * V + V - 1] -= inner - per_stage[P - 1];
  } else {
    for (std::uint64_t s = 0; s < P; ++s) {
      for (std::uint64_t c = 0; c < V; ++c) layers[s * V + c] = per_stage[s] / V;
    }
  }
  // Chunk c of stage s holds the layers after chunks 0..c-1 of all stages and
  // chunk c of stages 0..s-1 (the model wraps around the stages v times).
  t.chunk_first.assign(P * V, 0);
  t.chunk_layers = layers;
  std::uint64_t next = 0;
  for (std::uint64_t c = 0; c < V; ++c) {
    for (std::uint64_t s = 0; s < P; ++s) {
      t.chunk_first[s * V + c] = next;
      next += layers[s * V + c];
    }
  }

  if (o.zero > 3) throw InputError(opt("zero") + " must be 0, 1, 2 or 3, got " + num(o.zero));
  t.zero = o.zero;
  if (o.recompute == "none") {
    t.recompute = Recompute::kNone;
  } else if (o.recompute == "selective") {
    t.recompute = Recompute::kSelective;
  } else if (o.recompute == "full") {
    t.recompute = Recompute::kFull;
  } else {
    throw InputError(quoted("recompute", o.recompute) + ": expected none, selective or full");
  }
  if (o.dtype != "bf16" && o.dtype != "fp8") throw InputError(quoted("dtype", o.dtype) + ": expected bf16 or fp8");
  t.fp8 = o.dtype == "fp8";
  if (o.attention != "fused" && o.attention != "unfused") {
    throw InputError(quoted("attention", o.attention) + ": expected fused or unfused");
  }
  t.unfused_attention = o.attention == "unfused";
  // Multi-head latent attention is written for the plain fused kernel only.
  if (m.is_mla()) {
    const std::string why = " (" + m.source + "): its ring exchange, unfused form and userbuffers overlap are not modelled";
    if (p.cp > 1) throw InputError(plan + "cp=" + num(p.cp) + " with multi-head latent attention (mla)" + why);
    if (o.attention == "unfused") throw InputError(given("attention", "unfused") + " with multi-head latent attention (mla)" + why);
    if (o.tp_comm_overlap) throw InputError(flag("tp-comm-overlap") + " with multi-head latent attention (mla)" + why);
  }
  // Context parallelism's ring attention is Transformer Engine's fused kernel
  // working on blocks; Megatron-LM has no unfused form of it.
  if (t.unfused_attention && p.cp > 1) {
    throw InputError(given("attention", "unfused") + ": context parallelism (cp=" + num(p.cp) +
                     ") runs the fused attention kernel only (Transformer Engine's ring attention)");
  }
  if (o.cp_comm != "p2p" && o.cp_comm != "all-gather") {
    throw InputError(quoted("cp-comm", o.cp_comm) + ": expected p2p or all-gather");
  }
  // A context-parallel exchange without context parallelism changes nothing:
  // the run would be the plain one, with the option read as if it mattered.
  if (o.cp_comm == "all-gather" && p.cp == 1) {
    throw InputError(given("cp-comm", o.cp_comm) + ": needs context parallelism (cp > 1 in " + opt("parallel") +
                     "; with cp = 1 there is no K/V to exchange)");
  }
  t.cp_all_gather = o.cp_comm == "all-gather";
  const std::uint64_t dpc = std::uint64_t{p.dp} * p.cp;
  t.bucket_params = o.bucket_params ? o.bucket_params : std::max<std::uint64_t>(40'000'000, 1'000'000 * dpc);
  t.comm_free = o.comm_free;
  t.layers_only = o.layers_only;
  // With sequence parallelism the message is already 1/tp of the activation on
  // each rank, and with tp 1 there is nothing to split: the option is then moot.
  if (o.pp_scatter_gather && (p.tp == 1 || p.sp)) {
    throw InputError(flag("pp-scatter-gather") + ": needs tp > 1 without sp (the pipeline message is already split over tp "
                     "with sequence parallelism, and with tp = 1 there is nothing to split)");
  }
  // So it is with one stage: there is no pipeline message.
  if (o.pp_scatter_gather && p.pp == 1) {
    throw InputError(flag("pp-scatter-gather") + ": needs pp > 1 (with one stage there is no pipeline message to split)");
  }
  t.pp_scatter_gather = o.pp_scatter_gather;
  if (o.tp_comm_overlap) {
    // Megatron-LM refuses tp_comm_overlap without sequence parallelism
    // (megatron/training/arguments.py): the userbuffers overlap splits the
    // sequence-parallel all-gathers and reduce-scatters.
    if (!p.sp) {
      throw InputError(flag("tp-comm-overlap") + " needs sequence parallelism (sp in " + opt("parallel") + ", and tp > 1)");
    }
    // The row-parallel GEMMs are cut into kTpOverlapSplits pieces of tokens,
    // each reduce-scattered over tp: the micro-batch's tokens must divide.
    const std::uint64_t pieces = std::uint64_t{kTpOverlapSplits} * p.tp;
    if (t.tokens() % pieces != 0) {
      throw InputError(flag("tp-comm-overlap") + ": the micro-batch's " + num(t.tokens()) + " tokens on a rank (micro-batch x seq / cp) must be a multiple of " +
                       num(kTpOverlapSplits) + " pieces x tp = " + num(pieces));
    }
  }
  t.tp_comm_overlap = o.tp_comm_overlap;
  check_quantity_limits(t);
  return t;
}

}  // namespace

TrainingSpec make_training_spec(const TrainingOptions& options) { return build_spec(options, nullptr); }

TrainingSpec make_training_spec(const TrainingOptions& options, const ModelConfig& model) {
  return build_spec(options, &model);
}

TrainingOptions parse_training_query(const std::string& query) {
  TrainingOptions o;
  o.spelling = OptionSpelling::kQuery;
  std::size_t start = 0;
  bool seen_any = false;
  std::vector<std::string> seen;
  const auto positive_count = [](const std::string& key, const std::string& value) {
    const std::uint64_t v = parse_count(key, value);
    check_given_count(OptionSpelling::kQuery, key, v);
    return v;
  };
  while (start < query.size()) {
    const std::size_t amp = std::min(query.find('&', start), query.size());
    const std::string item = query.substr(start, amp - start);
    start = amp + 1;
    if (item.empty()) continue;
    seen_any = true;
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      throw InputError("gen:transformer: '" + key + "' given twice");
    }
    seen.push_back(key);
    if (key == "comm-free" || key == "layers-only" || key == "pp-scatter-gather" || key == "tp-comm-overlap") {
      if (value != "" && value != "true" && value != "false") {
        throw InputError("gen:transformer: " + key + " takes true or false, got '" + value + "'");
      }
      bool& flag = key == "comm-free" ? o.comm_free
                   : key == "layers-only" ? o.layers_only
                   : key == "pp-scatter-gather" ? o.pp_scatter_gather
                                                : o.tp_comm_overlap;
      flag = value != "false";
      continue;
    }
    if (eq == std::string::npos) throw InputError("gen:transformer: '" + item + "' needs a value (key=value)");
    if (key == "model") o.model = value;
    else if (key == "parallel") o.parallel = value;
    else if (key == "global-batch") o.global_batch = positive_count(key, value);
    else if (key == "micro-batch") o.micro_batch = positive_count(key, value);
    else if (key == "seq") o.seq = positive_count(key, value);
    else if (key == "schedule") o.schedule = value;
    else if (key == "zero") o.zero = static_cast<std::uint32_t>(std::min<std::uint64_t>(parse_count(key, value), 99));
    else if (key == "recompute") o.recompute = value;
    else if (key == "dtype") o.dtype = value;
    else if (key == "attention") o.attention = value;
    else if (key == "cp-comm") o.cp_comm = value;
    else if (key == "first-stage-layers") o.first_stage_layers = positive_count(key, value);
    else if (key == "last-stage-layers") o.last_stage_layers = positive_count(key, value);
    else if (key == "bucket-params") o.bucket_params = positive_count(key, value);
    else if (key == "routing") o.routing = value;
    else {
      throw InputError("gen:transformer: unknown key '" + key +
                       "' (model, parallel, global-batch, micro-batch, seq, schedule, zero, recompute, dtype, attention, cp-comm, "
                       "first-stage-layers, last-stage-layers, bucket-params, routing, comm-free, layers-only, pp-scatter-gather, "
                       "tp-comm-overlap)");
    }
  }
  if (!seen_any) throw InputError("gen:transformer: no options; expected e.g. gen:transformer?model=llama3-8b&parallel=tp=8,pp=2,dp=4&global-batch=64&seq=4096");
  return o;
}

}  // namespace sim::gen
