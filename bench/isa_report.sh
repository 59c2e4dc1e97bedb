#!/usr/bin/env bash
# bash bench/isa_report.sh [OUTDIR]
#
# What ringtorch's kernels do on this machine's instruction sets, in one pass meant for a machine
# other than the development one (e.g. one with AVX-512 and AVX512_BF16, which the 2-core
# development VMs may lack): the CPU's flags, the numeric test folders (every ISA path the CPU
# runs is checked against the portable one and the reference backend), then the GEMM, bf16 and
# training benches beside the strongest PyTorch here, and last the rest of the test suite.
# Each bench is pinned to its own physical cores (one logical CPU per core, so no two jobs share
# a core's execution units) and runs at the same time as the others: figures are comparable
# within a job (ringtorch beside its peer), and the jobs share the L3 and memory bandwidth.
#
# Environment: NODE (default node), PEER_PYTHON (bench/peer.ts), BF16_STEPS (300),
# PEER_BF16_STEPS (60: the peer's bf16 run gives tokens/s; the loss target is ringtorch's own
# fp32 vs bf16), BENCH_TIMEOUT / TEST_TIMEOUT seconds per job (400 / 300), GEMM_ARGS (bench/gemm.ts's
# options, "--threads 1,2 --rounds 2"), NUMERIC_TESTS / REST_TESTS (the test files or folders of each
# phase, space-separated; by default the numeric folders, then every other test file), TOTAL (seconds
# the whole report may take: the last phase gets what is left, and is skipped under a minute).
set -u
cd "$(dirname "$0")/.."
out=${1:-/tmp/isa_report}
mkdir -p "$out"
NODE=${NODE:-node}
TS=("$NODE" --import tsx --conditions=source)
BENCH_TIMEOUT=${BENCH_TIMEOUT:-400}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
start=$SECONDS

{
  grep -m1 'model name' /proc/cpuinfo
  echo "logical CPUs: $(nproc)"
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  for f in avx2 fma avx512f avx512bw avx512vl avx512_vnni avx512_bf16 amx_tile amx_bf16; do
    case "$flags" in *" $f "*) echo "  $f: yes" ;; *) echo "  $f: no" ;; esac
  done
  lscpu 2>/dev/null | grep -E 'Thread|Core|Socket|L1d|L2|L3' || true
} | tee "$out/cpu.txt"

# One logical CPU per physical core, in order.
mapfile -t cores < <(lscpu -p=CPU,CORE,SOCKET 2>/dev/null | grep -v '^#' | sort -t, -k3,3n -k2,2n -u | cut -d, -f1)
if [ "${#cores[@]}" -lt 2 ]; then mapfile -t cores < <(seq 0 $(($(nproc) - 1))); fi
echo "physical cores (one CPU each): ${cores[*]}" | tee -a "$out/cpu.txt"
pin() { # pin FIRST COUNT CMD...: run CMD on cores[FIRST..FIRST+COUNT-1], or unpinned when the machine has fewer
  local first=$1 count=$2; shift 2
  if [ $((first + count)) -le "${#cores[@]}" ] && command -v taskset >/dev/null; then
    local list; list=$(IFS=,; echo "${cores[*]:first:count}")
    taskset -c "$list" "$@"
  else "$@"; fi
}

"${TS[@]}" --input-type=module -e 'const { getBackend } = await import("./src/index.ts"); const b = getBackend(); console.log("ringtorch kernels:", b.isa?.() ?? "?", "| bf16 GEMM path:", b.bf16GemmPath?.() ?? "?")' 2>&1 | tee -a "$out/cpu.txt"

echo "== numeric tests (every ISA this CPU runs)"
read -r -a numeric <<<"${NUMERIC_TESTS:-test/backend test/ops test/tensor test/autograd test/nn test/optim test/parallel/ddp_bf16.test.ts test/trainer/bf16.test.ts}"
TEST_CONCURRENCY=$(nproc) RINGTORCH_REQUIRE_NATIVE=1 timeout "$TEST_TIMEOUT" "$NODE" scripts/run-tests.js "${numeric[@]}" >"$out/tests_numeric.txt" 2>&1
echo "numeric tests exit $?"; grep -E '^(#|ℹ) (tests|pass|fail|skipped)' "$out/tests_numeric.txt"

echo "== benches, in parallel on separate cores"
pin 0 2 timeout "$BENCH_TIMEOUT" bash -c "${TS[*]} bench/gemm.ts ${GEMM_ARGS:---threads 1,2 --rounds 2}; for t in 1 2; do OPENBLAS_NUM_THREADS=\$t OMP_NUM_THREADS=\$t \${PEER_PYTHON:-python3} bench/torch/mm_numpy.py \$t; done" >"$out/gemm.txt" 2>&1 &
pin 2 2 timeout "$BENCH_TIMEOUT" "${TS[@]}" bench/gemm_bf16.ts --threads 1,2 >"$out/gemm_bf16.txt" 2>&1 &
pin 4 1 timeout "$BENCH_TIMEOUT" "${TS[@]}" bench/bf16_gpt.ts --steps "${BF16_STEPS:-300}" --only fp32 --no-peer >"$out/bf16_gpt_fp32.txt" 2>&1 &
pin 5 1 timeout "$BENCH_TIMEOUT" "${TS[@]}" bench/bf16_gpt.ts --steps "${BF16_STEPS:-300}" --only bf16 --no-peer >"$out/bf16_gpt_bf16.txt" 2>&1 &
pin 6 1 timeout "$BENCH_TIMEOUT" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NT=1 STEPS="${PEER_BF16_STEPS:-60}" "${PEER_PYTHON:-python3}" bench/torch/bf16_gpt.py >"$out/bf16_gpt_peer.txt" 2>&1 &
pin 7 1 timeout "$BENCH_TIMEOUT" bash -c "${TS[*]} bench/mlp.ts --threads 1; ${TS[*]} bench/gpt.ts --threads 1" >"$out/mlp_gpt.txt" 2>&1 &
wait
for f in gemm gemm_bf16 bf16_gpt_fp32 bf16_gpt_bf16 bf16_gpt_peer mlp_gpt; do echo "-- $f"; tail -n 40 "$out/$f.txt"; done

echo "== the rest of the suite"
rest=${REST_TESTS:-$(find test -name '*.test.ts' | sort | grep -v -E '^test/(backend|ops|tensor|autograd|nn|optim)/|ddp_bf16|trainer/bf16')}
left=$(( ${TOTAL:-100000} - (SECONDS - start) - 10 ))
if [ "$left" -lt 60 ]; then echo "skipped: ${left}s left of TOTAL"; else
  # shellcheck disable=SC2086
  TEST_CONCURRENCY=$(nproc) RINGTORCH_REQUIRE_NATIVE=1 timeout "$(( left < TEST_TIMEOUT ? left : TEST_TIMEOUT ))" "$NODE" scripts/run-tests.js $rest >"$out/tests_rest.txt" 2>&1
  echo "rest of the suite exit $?"; grep -E '^(#|ℹ) (tests|pass|fail|skipped)' "$out/tests_rest.txt"
fi
grep -E '^not ok|✖' "$out"/tests_*.txt | head -40 || echo 'no failed test'
