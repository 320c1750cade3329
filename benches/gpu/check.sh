#!/bin/bash
# The GPU check of issue 25, for ONE short run on a machine with an NVIDIA
# GPU and its driver (libcuda.so.1), without network, cargo or CUDA
# toolkit. Everything comes prebuilt in a carry folder made by prepare.sh:
#   drhook, libdrhook_preload.so  (release, from this tree)
#   cuda_regions                  (benches/gpu/cuda_regions.c, linked with
#                                  libdrhook.a; driver API only, PTX kernel)
#   libcupti.so.12                (from the nvidia-cuda-cupti-cu12 wheel)
#
# Runs cuda_regions under `drhook run --opt prof,gpu` and compares each
# region's kernel time in drhook.prof.1-gpu with the time CUDA events
# measured around the same kernels (within 5%); then, only if nsys is
# installed, DR_HOOK_NVTX=1 under nsys and the NVTX ranges it saw.
#
# Usage (repository root): bash benches/gpu/check.sh [CARRY]   (default
# .gpu-carry). Results and files go to $OUT (default ./gpu-check-out).
set -u
CARRY=$(cd "${1:-.gpu-carry}" && pwd) || exit 2
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
W=$(mktemp -d)
cd "$W" || exit 2
say() { echo "$@" | tee -a "$OUT/summary.txt"; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
say "GPU: $(cat "$OUT/gpu.txt")"
export DRHOOK_CUPTI_LIBRARY="$CARRY/libcupti.so.12"
timeout 120 "$CARRY/drhook" run --no-out-dir --opt prof,gpu "$CARRY/cuda_regions" > run.out 2> run.err
rc=$?
cp run.out run.err "$OUT/" 2>/dev/null
cp drhook.prof.1* "$OUT/" 2>/dev/null
say "cuda_regions under drhook run --opt prof,gpu: exit $rc"
if [ ! -f drhook.prof.1-gpu ]; then
  say "FAIL: no drhook.prof.1-gpu"; tail -20 run.err; exit 1
fi
grep -E "GPU|gpu" run.err | head -5 | tee -a "$OUT/summary.txt"
fail=0
while read -r _ name ev kn; do
  ms=${ev#events_ms=}
  n=${kn#kernels=}
  line=$(grep -E "  ${name}@1\$" drhook.prof.1-gpu)
  got=$(echo "$line" | awk '{print $2}')
  k=$(echo "$line" | awk '{print $3}')
  verdict=$(awk -v a="$got" -v b="$ms" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; printf "%.2f%% %s", 100 * d, (d <= 0.05 && a != "") ? "OK" : "FAIL" }')
  say "$name: drhook-gpu kernels ${got:-?} ms ($k kernels), CUDA events $ms ms ($n kernels): $verdict"
  case "$verdict" in *FAIL*) fail=1 ;; esac
  [ "$k" = "$n" ] || { say "  FAIL: kernel count"; fail=1; }
done < <(grep '^REGION ' run.out)
[ -n "$(grep '^REGION ' run.out)" ] || { say "FAIL: no REGION lines"; fail=1; }
head -12 drhook.prof.1-gpu | tee -a "$OUT/summary.txt"

# NVTX ranges in Nsight Systems, only where nsys is installed.
if command -v nsys > /dev/null 2>&1; then
  DR_HOOK_NVTX=1 DR_HOOK_NVTX_SPAM_CALL_COUNT=1000000 timeout 150 nsys profile --trace=nvtx,cuda \
    -o nvtx --force-overwrite true "$CARRY/drhook" run --opt prof "$CARRY/cuda_regions" \
    > nsys.out 2>&1
  nsys stats --report nvtx_sum nvtx.nsys-rep > nvtx_sum.txt 2>&1 ||
    nsys stats --report nvtxsum nvtx.nsys-rep > nvtx_sum.txt 2>&1
  cp nsys.out nvtx_sum.txt "$OUT/" 2>/dev/null
  for r in GPU_A GPU_B GPU_C; do
    if grep -q "$r" nvtx_sum.txt; then say "nsys: NVTX range $r seen"; else say "nsys: NVTX range $r MISSING"; fail=1; fi
  done
else
  say "nsys not installed: NVTX under Nsight not checked"
fi
rm -rf "$W"
if [ $fail = 0 ]; then say "GPU CHECK: PASS"; else say "GPU CHECK: FAIL"; fi
exit $fail
