#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test: format check, unit, lint and e2e tests in a
# -Werror build, unit tests and the agent's e2e tests again under AddressSanitizer+UBSan, and
# the fuzz targets for a bounded time. Run as root on Debian bookworm (e2e tests need network
# namespaces). About 22 minutes on a 2-vCPU VM (docs/testing.md says how to run a part).
set -euo pipefail
cd "$(dirname "$0")/.."

extra=(clang libclang-rt-14-dev clang-format python3 jq bc util-linux hostname iperf3 iperf sockperf qperf
  zsh fish                          # zsh, fish: e2e.completion
  file                              # e2e.agent_static_build (is the documented agent static?)
  prometheus prometheus-pushgateway # e2e.prometheus_push, lint.alert_rules (promtool comes with prometheus)
  chromium                          # e2e.compare_html, e2e.report_html (headless)
  podman debootstrap                # e2e.k8s_podman_image (images), e2e.deb_install (packages)
  docker-registry skopeo openssl file # e2e.images_publish (test/tools/registry.sh, scripts/images.sh)
  crossbuild-essential-arm64 qemu-user-static libuv1-dev:arm64 libjansson-dev:arm64
  libyaml-dev:arm64                 # e2e.agent_arm64 (the arm64 agent, cross-built, under qemu)
  shellcheck pyflakes3              # lint.shellcheck, lint.pyflakes
  containernetworking-plugins       # kube-sim pod networks (e2e.kubesim_*, e2e.k8s_*, e2e.local_cni)
  dnsmasq-base                      # kube-sim --dns: the cluster DNS (e2e.kubesim_dns)
  docker-registry                   # every kube-sim test: a registry per cluster (kubesim_pull)
  nodejs                            # unit.kubesim_vap, e2e.k8s_policy: kube-sim's CEL (get-cel.sh; npm comes with it here)
)
missing=()
for p in "${extra[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # the :arm64 libraries are Debian multiarch packages: dpkg must know the architecture first
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "== format check"
git ls-files '*.c' '*.h' | xargs -r clang-format --dry-run --Werror

echo "== build (-Werror)"
KPERF_CMAKE_ARGS="-DKPERF_WERROR=ON" bash scripts/setup.sh

echo "== release build (-O3 -Werror: more warnings than -O2; compile only)"
cmake -S . -B build-release -DKPERF_WERROR=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)" >/dev/null

echo "== unit and e2e tests"
export KUBECTL="${KUBECTL:-$(bash test/tools/get-kubectl.sh)}" # pinned kubectl 1.35: never skip
export HELM="${HELM:-$(bash test/tools/get-helm.sh)}"          # pinned helm 4, same download
# unit and lint tests share nothing (fixture servers take free ports): all cores; the e2e tests
# share the machine's network stack (fixed namespace names, ports): one at a time
ctest --test-dir build --output-on-failure -L 'unit|lint' -LE unstable -j"$(nproc)"
ctest --test-dir build --output-on-failure -L e2e -LE unstable # unstable: test/CMakeLists.txt says which and why

echo "== unit tests and the agent's e2e tests under AddressSanitizer + UBSan"
cmake -S . -B build-asan -DKPERF_WERROR=ON -DKPERF_SANITIZE=address,undefined \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null
ctest --test-dir build-asan -L unit --output-on-failure
# The agent e2e tests drive kperf-agent (client, server, probe) through bad input, floods and
# signals: the paths unit tests reach least. Any report fails the process (exit 1, or 23 for a
# leak at exit), which the tests check; the report itself goes to the test's output.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -R '^e2e\.agent_' --output-on-failure

# A fixed seed makes this stage repeat what it did on the last run (a gate, not a search); a
# search for new inputs is KPERF_FUZZ_SEED=0 (random) with a longer KPERF_FUZZ_SECONDS.
echo "== fuzz targets (bounded)"
CC=clang cmake -S . -B build-fuzz -DKPERF_FUZZ=ON -DKPERF_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j"$(nproc)" >/dev/null
for f in build-fuzz/test/fuzz/fuzz_*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  corpus="test/fuzz/corpus/${name#fuzz_}"
  mkdir -p "build-fuzz/corpus-$name"
  corpora=("build-fuzz/corpus-$name")
  [ -d "$corpus" ] && corpora+=("$corpus")
  echo "fuzz: $name for ${KPERF_FUZZ_SECONDS:-30}s (seed ${KPERF_FUZZ_SEED:-1})"
  "$f" -max_total_time="${KPERF_FUZZ_SECONDS:-30}" -seed="${KPERF_FUZZ_SEED:-1}" -print_final_stats=0 \
    "${corpora[@]}" 2>&1 | tail -2
done
echo "all tests passed"
