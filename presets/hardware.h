// The published numbers the presets are made of, each with its source. A
// number is one of three kinds, said in its `source`:
//   spec sheet   the vendor's datasheet or reference architecture
//   NCCL         a constant of NCCL's own model (src/graph/topo.h, tuning.cc)
//   estimate     no published figure found: a stated assumption, and a free
//                parameter for `sim calibrate` (presets/preset.h)
// Bandwidths are written as the network YAML reads them (GB/s = 1e9 B/s,
// Gbps = 1e9 bit/s); latencies per link.
#pragma once

namespace sim::presets {

struct Figure {
  const char* value;   // as written in a YAML file: "450GB/s", "300ns", "989.4"
  const char* source;  // one line: where the number comes from
};

struct GpuSpec {
  const char* name;
  // Dense (no sparsity) tensor-core peaks, TFLOP/s, per dtype.
  Figure bf16, fp16, fp8, tf32, fp64;
  Figure hbm_bandwidth;
  // NVLink: links per GPU and the rate of one link per direction.
  Figure nvlinks, nvlink_rate, nvlink_total;
  // NCCL's effective per-link figure (GB/s per link) for this architecture.
  Figure nccl_nvlink_rate;
  // The measured kernel table shipped for this GPU (compute.kernels), or ""
  // when none is: `builtin:<gpu>` names configs/kernels/<gpu>/, compiled in.
  const char* kernel_table = "";
  // The NVSwitch of this GPU's baseboard reduces and multicasts (NVLink
  // SHARP, which NCCL runs as NVLS): its source, or "" when it does not.
  const char* nvswitch_reduces = "";
  // What NCCL's NVLS kernels copy per second through their copy warps (the
  // scatter into NCCL's NVLS buffer, the gather out of it) when a collective
  // leaves the node (`nccl:copy_bw=`), or "" when the switch does not reduce.
  Figure nvls_copy_bandwidth{"", ""};
  // compute.kernels with FlashAttention-2's published speeds in place of the
  // measured attention (`sim system gen --attention flash-attention-2`), or ""
  // when no such table is shipped for this GPU.
  const char* flash_attention_2_kernels = "";
  // The GPU generation whose NCCL tables apply (`nccl:arch=`; sm90, the
  // default, is not written out).
  Figure nccl_arch{"sm90", "NCCL: compute capability 9.0 selects its Hopper tables (src/graph/tuning.cc)"};
};

// The fraction of measured kernel speed an H100 sustains in a long training
// run at cluster scale (compute.efficiency, docs/published-runs.md): fitted
// on one published run, checked on another.
inline constexpr Figure kH100AtScaleEfficiency{
    "0.661",
    "fit: Llama 3 405B on 8,192 H100s, 430 TFLOP/s per GPU (Llama 3 Herd of Models, Table 4); held out: its "
    "16,384-GPU run (docs/published-runs.md)"};

// The same with the attention kernel of early 2024, FlashAttention-2 at its
// published H100 speeds (`--attention flash-attention-2`): the slower
// attention takes part of what the factor stood for.
inline constexpr Figure kH100AtScaleEfficiencyFlashAttention2{
    "0.705",
    "fit: Llama 3 405B on 8,192 H100s with FlashAttention-2's speeds, 430 TFLOP/s per GPU (Llama 3 Herd of "
    "Models, Table 4); held out: its 16,384-GPU runs at sequence 8,192 and 131,072 (docs/published-runs.md)"};

// The fraction of the roofline an A100 sustains in a long Megatron-LM run
// (compute.efficiency; the A100 has no measured kernel table, so it stands
// for everything the roofline leaves out, kernel efficiency first), fitted
// with the run's attention as Megatron-LM then ran it (unfused, dropout 0.1):
// docs/published-runs.md.
inline constexpr Figure kA100AtScaleEfficiency{
    "0.655",
    "fit: GPT 7.5B on 128 A100s, Narayanan et al. SC'21 Table 1 (142 TFLOP/s with recomputation = 107.2 model "
    "TFLOP/s per GPU), unfused attention; held out: its nine other runs, 1.7B to 1T on 32 to 3,072 GPUs, "
    "-4.6% to +6.5%"};

// NVIDIA H100 Tensor Core GPU datasheet (SXM5 column): 989 TFLOP/s BF16 and
// FP16, 1,979 FP8, 494.7 TF32, 67 FP64 tensor (dense, i.e. half the figures
// quoted "with sparsity"), 3.35 TB/s HBM3, NVLink 900 GB/s = 18 NVLink4 links
// of 50 GB/s both directions together, 25 GB/s each way.
inline constexpr GpuSpec kH100Sxm{
    "H100 SXM5 80GB",
    {"989.4", "spec sheet: NVIDIA H100 datasheet, SXM, BF16 tensor dense (1,979 with sparsity / 2)"},
    {"989.4", "spec sheet: NVIDIA H100 datasheet, SXM, FP16 tensor dense"},
    {"1978.9", "spec sheet: NVIDIA H100 datasheet, SXM, FP8 tensor dense (3,958 with sparsity / 2)"},
    {"494.7", "spec sheet: NVIDIA H100 datasheet, SXM, TF32 tensor dense (989 with sparsity / 2)"},
    {"66.9", "spec sheet: NVIDIA H100 datasheet, SXM, FP64 tensor"},
    {"3350GB/s", "spec sheet: NVIDIA H100 datasheet, SXM, HBM3 3.35 TB/s"},
    {"18", "spec sheet: NVIDIA H100 datasheet, 18 NVLink4 links per GPU (900 GB/s total)"},
    {"25GB/s", "spec sheet: NVLink4, 50 GB/s per link both ways = 25 GB/s per direction"},
    {"450GB/s", "spec sheet: 18 links x 25 GB/s per direction (900 GB/s bidirectional)"},
    {"20.6GB/s", "NCCL: SM90_NVLINK_BW 20.6 (src/graph/topo.h), GB/s per link NCCL plans with"},
    "builtin:h100",
    "spec sheet: third-generation NVSwitch (HGX/DGX H100) reduces and multicasts in the switch (NVLink "
    "SHARP); NCCL 2.17+ runs it as NVLS",
    {"341GB/s", "fit: `sim calibrate` on all-reduce, 16-256 MiB, 2 Dell XE9680 H100 nodes, 8 x 400 Gb/s "
                "InfiniBand, NCCL 2.26.2 (github.com/NVIDIA/nccl-tests/issues/309; docs/nccl.md)"},
    "[builtin:h100/gemm.csv, builtin:h100/membound.csv, builtin:h100-flash-attention-2]",
};

// NVIDIA A100 Tensor Core GPU datasheet (SXM 80GB column): 312 TFLOP/s BF16
// and FP16 dense, 156 TF32 dense, 19.5 FP64 tensor, 2,039 GB/s HBM2e, NVLink
// 600 GB/s = 12 NVLink3 links of 50 GB/s both ways.
inline constexpr GpuSpec kA100Sxm{
    "A100 SXM4 80GB",
    {"312", "spec sheet: NVIDIA A100 datasheet, SXM, BF16 tensor dense"},
    {"312", "spec sheet: NVIDIA A100 datasheet, SXM, FP16 tensor dense"},
    {"0", "A100 has no FP8 tensor cores"},
    {"156", "spec sheet: NVIDIA A100 datasheet, SXM, TF32 tensor dense"},
    {"19.5", "spec sheet: NVIDIA A100 datasheet, SXM, FP64 tensor"},
    {"2039GB/s", "spec sheet: NVIDIA A100 datasheet, SXM 80GB, HBM2e 2,039 GB/s"},
    {"12", "spec sheet: NVIDIA A100 datasheet, 12 NVLink3 links per GPU (600 GB/s total)"},
    {"25GB/s", "spec sheet: NVLink3, 50 GB/s per link both ways = 25 GB/s per direction"},
    {"300GB/s", "spec sheet: 12 links x 25 GB/s per direction (600 GB/s bidirectional)"},
    {"20GB/s", "NCCL: SM80_NVLINK_BW 20.0 (src/graph/topo.h), GB/s per link NCCL plans with"},
    "",
    "",
    {"", ""},
    "",
    {"sm80", "NCCL: compute capability 8.0 selects its Ampere tables (src/graph/tuning.cc)"},
};

// Per-link latencies. NCCL's tuning model charges a ring step over NVLink
// 0.6 us with its LL protocol and over the network 2.7 us (hwLat[NVLINK|NET]
// [Ring][LL], src/graph/tuning.cc, NCCL 2.18-2.21); a step is one GPU ->
// switch -> GPU route, two links, so half of each per link.
inline constexpr Figure kNvlinkLatency{
    "300ns", "NCCL: hwLat[NVLINK][Ring][LL] = 0.6 us per GPU-switch-GPU step, half per link"};
inline constexpr Figure kNetLatency{
    "1350ns", "NCCL: hwLat[NET][Ring][LL] = 2.7 us per NIC-switch-NIC step, half per link"};
// A switch level above the first (leaf -> spine, spine -> core): a cable and
// one more switch each way. No vendor figure for a port-to-port traversal is
// used here: an estimate, free for calibration.
inline constexpr Figure kUpperLevelLatency{
    "500ns", "estimate: one more switch traversal and cable per link (no published figure used)"};

// NICs, one per GPU unless said.
inline constexpr Figure kConnectX7{
    "400Gbps", "spec sheet: DGX H100 user guide, 8x ConnectX-7 400 Gb/s InfiniBand/Ethernet, one per GPU"};
inline constexpr Figure kConnectX6Hdr{
    "200Gbps", "spec sheet: DGX A100 user guide, 8x ConnectX-6 200 Gb/s HDR InfiniBand (compute), one per GPU"};
inline constexpr Figure kRoce400{
    "400Gbps", "stated: one 400 Gb/s RoCE NIC per GPU (the preset's definition)"};
inline constexpr Figure kEfaP5{
    "400Gbps",
    "spec sheet: AWS p5.48xlarge, 3,200 Gb/s EFA (32 x 100 Gb/s) for 8 GPUs = 4 x 100 Gb/s per GPU"};

}  // namespace sim::presets
