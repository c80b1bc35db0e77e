#!/usr/bin/env bash
# Installs what `sim` needs from Debian 12, builds a Release `sim` in build/,
# and runs the bundled default simulation. Safe to run again: installed
# packages are skipped and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ make pkg-config
  libprotobuf-dev protobuf-compiler   # Chakra ET (our proto/et_def.proto)
  libyaml-cpp-dev                     # topology and system configs
  libspdlog-dev                       # warnings and logs
  libcli11-dev                        # command line
  nlohmann-json3-dev                  # JSON traces and reports
  zlib1g-dev                          # gzip-compressed ETs
  libpugixml-dev                      # MSCCL-IR XML in converted collective ETs (collective check)
  libgtest-dev libgmock-dev           # tests
  libssl-dev                          # SHA-256 keys of sweep points (workflows/sweep/content_hash.h)
  libopenmpi-dev openmpi-bin          # optional: `mpirun -n K sim sweep` (built only when found)
  python3 python3-matplotlib python3-yaml  # scripts/fig4.py, scripts/plot_results.py (sim plot)
  time                                # /usr/bin/time in scripts/bench/bench.sh
  libns3-dev libgsl-dev libsqlite3-dev  # optional ns3 packet-level backend (its pkg-config link line names GSL and SQLite)
  clang libclang-rt-14-dev            # libFuzzer harnesses (fuzz/, scripts/checks/fuzz.sh in .ci/run)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${SIM_WERROR:+-DSIM_WERROR=ON}
cmake --build build -j"$(nproc)"
./build/sim
