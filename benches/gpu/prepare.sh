#!/bin/bash
# Fills the carry folder for check.sh (run here, where cargo, gcc and pip
# are): release drhook + libdrhook_preload.so, cuda_regions linked with the
# release libdrhook.a, libcupti.so.12 from the nvidia-cuda-cupti-cu12 wheel
# (12.2: works with drivers from 535 on).
# Usage (repository root): bash benches/gpu/prepare.sh [CARRY]
set -eu
CARRY=${1:-.gpu-carry}
T=${CARGO_TARGET_DIR:-target}
mkdir -p "$CARRY"
# One cargo run per kind of target (a target filter applies to every package).
cargo build --release -p drhook-cli --bin drhook
cargo build --release -p drhook-preload -p drhook-ffi --lib
cp "$T/release/drhook" "$T/release/libdrhook_preload.so" "$CARRY/"
gcc -std=c99 -O1 -Wall -Wextra -D_GNU_SOURCE -Idrhook-ffi/include -o "$CARRY/cuda_regions" \
  benches/gpu/cuda_regions.c "$T/release/libdrhook.a" -ldl -lpthread -lm
if [ ! -f "$CARRY/libcupti.so.12" ]; then
  d=$(mktemp -d)
  pip download --no-deps nvidia-cuda-cupti-cu12==12.2.142 -d "$d"
  (cd "$d" && unzip -q -o ./*.whl 'nvidia/cuda_cupti/lib/libcupti.so.12')
  cp "$d/nvidia/cuda_cupti/lib/libcupti.so.12" "$CARRY/"
  rm -rf "$d"
fi
strip "$CARRY/drhook" "$CARRY/libdrhook_preload.so" "$CARRY/cuda_regions" 2>/dev/null || true
du -sh "$CARRY"
