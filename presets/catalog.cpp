#include "presets/catalog.h"

namespace sim::presets {

namespace {

const Figure kH100Nvswitch{kH100Sxm.nvlink_total.value, kH100Sxm.nvlink_total.source};
const Figure kA100Nvswitch{kA100Sxm.nvlink_total.value, kA100Sxm.nvlink_total.source};
const Figure kEfaLatency{kNetLatency.value,
                         "NCCL: hwLat[NET][Ring][LL] = 2.7 us per step, half per link (NCCL uses it for any "
                         "network; EFA's SRD is likely slower: free for calibration)"};
const Figure kRoceCoreShare{"200Gbps", "stated: 2:1 oversubscription spine -> core, each GPU's share 400 Gb/s / 2"};
const Figure kIbRouting{"ecmp-hash",
                        "InfiniBand's subnet manager routes each destination statically (adaptive routing is "
                        "opt-in), so flows collide as under hashing; `ecmp: dmodk` in a FatTree is its per-destination rule"};
const Figure kRoceRouting{"ecmp-hash", "RoCEv2 switches hash each queue pair's UDP 5-tuple (its source port differs "
                                       "per QP) onto one equal-cost uplink"};
const Figure kEfaRouting{"spray", "EFA's SRD sprays each connection's packets over many paths (AWS, \"A "
                                  "Cloud-Optimized Transport Protocol for Elastic and Scalable HPC\", IEEE Micro 2020)"};

const Figure kIbTransport{"ib", "spec sheet: the compute fabric is InfiniBand (credit-based, lossless), Quantum-2 NDR "
                                "for H100 systems, Quantum HDR for A100"};
const Figure kQuantum2Sharp{"SHARPv3", "spec sheet: NVIDIA Quantum-2 QM9700 switches reduce in the network "
                                        "(SHARPv3); NCCL runs it through its SHARP plugin as CollNet"};
const Figure kQuantumHdrSharp{"SHARPv2", "spec sheet: NVIDIA Quantum QM8700 HDR switches reduce in the network "
                                         "(SHARPv2); NCCL runs it through its SHARP plugin as CollNet"};
const Figure kRoceTransport{"roce", "stated: RoCEv2 on lossless Ethernet (PFC, ECN with DCQCN), as such Clos fabrics run"};
// DCQCN as NVIDIA ConnectX NICs (ConnectX-4 and later) run it by default: NVIDIA's DOCA
// documentation, "DCQCN CC Parameters" (docs/network.md, "DCQCN's parameters in three sources").
// The transport's defaults are the DCQCN paper's, chosen for 40 Gb/s links.
const std::vector<Preset::TransportOption> kConnectXDcqcn = {
    {"dcqcn_g", {"0.0048828125", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): dce_tcp_g 1019, g = 5/1024"}},
    {"dcqcn_alpha_timer", {"1us", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): dce_tcp_rtt 1 us"}},
    {"dcqcn_rate_timer", {"300us", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): rpg_time_reset 300 us"}},
    {"dcqcn_byte_counter", {"32767B", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): rpg_byte_reset 32767 B"}},
    {"dcqcn_fast_recovery", {"1", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): rpg_threshold 1"}},
    {"dcqcn_rate_ai", {"5Mbps", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): rpg_ai_rate 5 Mb/s"}},
    {"dcqcn_rate_hai", {"50Mbps", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): rpg_hai_rate 50 Mb/s"}},
    {"dcqcn_min_rate", {"1Mbps", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): rpg_min_rate 1 Mb/s"}},
    {"cnp_interval", {"4us", "NVIDIA ConnectX firmware default (DOCA \"DCQCN CC Parameters\"): min_time_between_cnps 4 us"}},
};

Preset dgx_h100() {
  Preset p;
  p.name = "dgx-h100";
  p.summary = "DGX H100: 8 H100 SXM on NVSwitch (18 x 25 GB/s), 8 x 400 Gb/s ConnectX-7, one rail per GPU";
  p.gpu = &kH100Sxm;
  p.nvswitch_bandwidth = kH100Nvswitch;
  p.nvswitch_latency = kNvlinkLatency;
  p.levels.push_back({"rail (one InfiniBand switch per GPU position)", 64, kConnectX7, kNetLatency,
                      "a rail is one 64-port 400 Gb/s switch, NVIDIA Quantum-2 QM9700 (spec sheet); "
                      "larger clusters: dgx-h100-superpod"});
  p.transport = kIbTransport;
  p.fabric_sharp = kQuantum2Sharp;
  return p;
}

Preset dgx_h100_superpod() {
  Preset p = dgx_h100();
  p.name = "dgx-h100-superpod";
  p.compute_efficiency = kH100AtScaleEfficiency;
  p.compute_efficiency_flash_attention_2 = kH100AtScaleEfficiencyFlashAttention2;
  p.summary = "DGX SuperPOD H100: dgx-h100 nodes on a rail-optimised fat-tree, 32-node scalable units, 1:1 spine";
  p.levels.clear();
  p.levels.push_back({"rail leaf", 32, kConnectX7, kNetLatency,
                      "DGX SuperPOD H100 reference architecture: a scalable unit is 32 nodes, one leaf per rail"});
  p.levels.push_back({"spine", 0,
                      Figure{kConnectX7.value, "spec sheet: the reference architecture's spine is 1:1 (full "
                                               "bisection), so each GPU keeps its 400 Gb/s across scalable units"},
                      kUpperLevelLatency, "any number of scalable units"});
  p.default_nodes = 64;
  p.routing = kIbRouting;
  return p;
}

Preset h100_roce_clos() {
  Preset p = dgx_h100();
  p.name = "h100-roce-clos";
  p.compute_efficiency = kH100AtScaleEfficiency;
  p.compute_efficiency_flash_attention_2 = kH100AtScaleEfficiencyFlashAttention2;
  p.summary = "8-GPU H100 servers, 400 Gb/s RoCE per GPU, three-layer Clos (leaf 1:1, spine-core 2:1 oversubscribed)";
  p.levels.clear();
  p.levels.push_back({"leaf", 32, kRoce400, kNetLatency,
                      "stated: 32 servers per leaf plane (a 64-port 400 Gb/s switch, 32 ports down, 32 up)"});
  p.levels.push_back({"spine", 32,
                      Figure{kRoce400.value, "stated: leaf -> spine 1:1, so each GPU keeps its 400 Gb/s"},
                      kUpperLevelLatency, "stated: 32 leaves per pod (64-port spine, 32 down, 32 up)"});
  p.levels.push_back({"core", 0, kRoceCoreShare, kUpperLevelLatency, "any number of pods"});
  p.default_nodes = 64;
  p.routing = kRoceRouting;
  p.transport = kRoceTransport;
  p.fabric_sharp = {"", ""};  // Ethernet switches do not reduce
  p.transport_options = kConnectXDcqcn;
  return p;
}

Preset dgx_a100() {
  Preset p;
  p.name = "dgx-a100";
  p.summary = "DGX A100: 8 A100 SXM on NVSwitch (12 x 25 GB/s), 8 x 200 Gb/s HDR ConnectX-6, one rail per GPU";
  p.gpu = &kA100Sxm;
  p.compute_efficiency = kA100AtScaleEfficiency;
  p.nvswitch_bandwidth = kA100Nvswitch;
  p.nvswitch_latency = kNvlinkLatency;
  p.levels.push_back({"rail leaf", 20, kConnectX6Hdr, kNetLatency,
                      "DGX SuperPOD A100 reference architecture: a scalable unit is 20 nodes, one HDR leaf per rail"});
  p.levels.push_back({"spine", 0,
                      Figure{kConnectX6Hdr.value, "spec sheet: the reference architecture's spine is 1:1, so each "
                                                  "GPU keeps its 200 Gb/s across scalable units"},
                      kUpperLevelLatency, "any number of scalable units"});
  p.routing = kIbRouting;
  p.transport = kIbTransport;
  p.fabric_sharp = kQuantumHdrSharp;
  return p;
}

Preset p5() {
  Preset p;
  p.name = "p5";
  p.summary = "AWS p5.48xlarge: 8 H100 SXM on NVSwitch, 32 x 100 Gb/s EFA (400 Gb/s per GPU), non-blocking";
  p.gpu = &kH100Sxm;
  p.nvswitch_bandwidth = kH100Nvswitch;
  p.nvswitch_latency = kNvlinkLatency;
  p.levels.push_back({"EFA network", 0, kEfaP5, kEfaLatency,
                      "an EC2 UltraCluster, taken as one non-blocking level (AWS publishes no per-tier figures)"});
  p.nccl_version = {"2.27", "the NCCL of AWS's deep learning AMIs and containers in 2025; the public p5 "
                            "benchmark of docs/public-data.md ran 2.27.7 with aws-ofi-nccl 1.16.3"};
  p.routing = kEfaRouting;
  p.nccl_tuner = {"aws-p5", "aws-ofi-nccl's region tuner for p5/p5e, installed with the EFA software (docs/nccl.md)"};
  p.nccl_nvls_chunk = {"512KiB", "set on p5/p5e by aws-ofi-nccl, the EFA plugin, when NCCL loads it: "
                                 "src/platform-aws.cpp, platform_data_map; it lifts NCCL's 64 KiB NVLS-tree cap "
                                 "from 4 nodes on (docs/nccl.md)"};
  p.nccl_buffsize = {"8MiB", "set on p5/p5e by aws-ofi-nccl when NCCL loads it (src/platform-aws.cpp, "
                            "platform_data_map); NCCL's default is 4 MiB"};
  p.nccl_p2p_net_chunk = {"512KiB", "set on p5/p5e by aws-ofi-nccl when NCCL loads it (src/platform-aws.cpp, "
                                    "platform_data_map); NCCL's default is 128 KiB"};
  p.nccl_net_write_cost = {"2us", "AWS's p5 model in aws-ofi-nccl (tuner/nccl_ofi_model.cpp) charges 3 us per "
                                  "completion, about 2 us of it in the device and 1 us to the host; the plugin "
                                  "writes a message in stripes of at least 128 KiB, one per rail (OFI_NCCL_MIN_STRIPE_SIZE)"};
  p.nccl_net_rails = {"4", "spec sheet: 4 x 100 Gb/s EFA per GPU, one device of 4 rails to NCCL (aws-ofi-nccl's multi-rail)"};
  p.nccl_proxy = {"1768.099ns", "fit (see the header)"};
  p.nccl_net_latency = {"44978.137ns", "fit (see the header)"};
  p.fitted = {{"system", "collective.algorithms.*:overhead", "21666.107ns"},
              {"system", "collective.algorithms.all_reduce:copy_bw", "284.731GB/s"}};
  p.fit_note =
      "Fitted by `sim calibrate CURVE --preset p5 --filter nodes=2 --filter nodes=4 --sizes 32MiB:256MiB` on the\n"
      "8 two- and four-node all-reduce rows of 32-256 MiB of the public p5 curve (docs/public-data.md,\n"
      "p5_efa_allreduce_2-32nodes.csv): NCCL's per-call overhead 21666.107ns [1us, 400us], proxy 1768.099ns per\n"
      "network message [200ns, 5us], network hop 44978.137ns [2us, 60us], NVLS's copy warps 284.731GB/s\n"
      "[209.375GB/s, 1675GB/s]; rms log error 0.027 on those rows (the two-node rows alone fix the overhead\n"
      "plus two hops, not the hop: docs/calibrate.md). The link rates are the spec sheet's. Held out (every\n"
      "other row of the file): docs/nccl.md.";
  return p;
}

// dgx-h100 with the parameters `sim calibrate` fitted on the measured
// one-node all-reduce curve (docs/calibrate.md has the command and the
// errors on the rows it was not fitted on).
Preset dgx_h100_calibrated() {
  Preset p = dgx_h100();
  p.name = "dgx-h100-calibrated";
  p.summary = "dgx-h100 with NVLS's efficiency and NCCL's per-call overhead fitted to a measured curve";
  p.fitted = {
      {"system", "collective.algorithms.all_reduce:nvls_efficiency", "0.861495"},
      {"system", "collective.algorithms.*:overhead", "17601.724ns"},
  };
  p.fit_note =
      "Fitted by `sim calibrate` on all-reduce, 16 MiB-256 MiB (5 rows), of the measured one-node curve\n"
      "../shared/testdata/reference-curves/h100_sxm_x8_xla.csv (XLA's sm_90 table), NCCL's algorithms\n"
      "(all-reduce NVLS from 512 KiB on, ring LL below; all-gather and reduce-scatter ring):\n"
      "  nvls_efficiency 0.861495 (NCCL 2.28's own model: 0.85 on Hopper), overhead 17601.724ns per\n"
      "  call (XLA's and the launch's); rms log error 0.036 on the fitting rows (-3.2% to +7.2%).\n"
      "Held out (time): all-reduce 0.5-2 GiB -0.8% to -1.2%; all-gather >= 16 MiB -9.0% to +3.5%;\n"
      "reduce-scatter >= 16 MiB -11.6% to +8.8% (256 MiB-1 GiB 10.3-11.6% fast): docs/calibrate.md.\n"
      "The network keeps its sources (spec sheet, NCCL).";
  return p;
}

}  // namespace

const std::vector<Preset>& catalog() {
  static const std::vector<Preset> presets = {dgx_h100(), dgx_h100_calibrated(), dgx_h100_superpod(),
                                              h100_roce_clos(), dgx_a100(), p5()};
  return presets;
}

}  // namespace sim::presets
