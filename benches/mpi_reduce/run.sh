#!/bin/sh
# The in-job reduction (DR_HOOK_OPT=reduce) against the offline
# `drhook merge` of the per-rank files of the same run, at 2..64 ranks.
# Usage: [OPT=...] benches/mpi_reduce/run.sh [ROUTINES] [TARGET_DIR]
#   OPT: DR_HOOK_OPT (default prof,reduce,ranks; e.g.
#   prof,callpath,memprof,io,reduce,ranks for the call-path, memory and
#   I/O tables too: their job files are compared with the merge as well)
#   (release build first: cargo build --release -p drhook-preload -p drhook-cli -p drhook-ffi --lib --bins)
# Prints, per rank count: the reduction's time on rank 0 and its largest
# message (from the job profile's "Reduction:" line), then the wall time
# and peak RSS of `drhook merge` of the same run's rank files.
set -eu
N=${1:-1000}
OPT=${OPT:-prof,reduce,ranks}
T=${2:-${CARGO_TARGET_DIR:-target}/release}
T=$(cd "$T" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
INC=$SRC/../../drhook-ffi/include
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
mpicc -O1 -I"$INC" -o routines "$SRC/routines.c" -L"$T" -Wl,-rpath,"$T" -ldrhook
ROOT=""
[ "$(id -u)" = 0 ] && ROOT=--allow-run-as-root
echo "ranks routines reduce_s largest_msg_bytes merge_s merge_maxrss_kib"
for P in 2 4 8 16 32 64; do
  rm -f drhook.prof*
  DR_HOOK_OPT=$OPT DR_HOOK_SILENT=1 "$T/drhook" run -- \
    mpirun $ROOT --oversubscribe -n "$P" ./routines "$N" >/dev/null 2>&1
  line=$(grep '^# Reduction:' drhook.prof.job)
  secs=$(echo "$line" | sed 's/.*, \([0-9.]*\) s on rank 0.*/\1/')
  bytes=$(echo "$line" | sed 's/.*largest message \([0-9]*\) bytes.*/\1/')
  files=$(ls drhook.prof.* | grep -E '^drhook\.prof\.[0-9]+$')
  /usr/bin/time -f '%e %M' -o mtime "$T/drhook" merge --jobs 1 $files > merged.txt
  sed '1,/^$/d' drhook.prof.job | cmp -s - merged.txt || echo "ranks $P: job profile and merge differ" >&2
  for k in mem io; do
    [ -f drhook.prof-$k.job ] || continue
    "$T/drhook" merge $(ls drhook.prof.* | grep -E "^drhook\.prof\.[0-9]+-$k\$") > merged-$k.txt
    sed '1,/^$/d' drhook.prof-$k.job | cmp -s - merged-$k.txt || echo "ranks $P: -$k job profile and merge differ" >&2
  done
  echo "$P $N $secs $bytes $(cat mtime)"
done
