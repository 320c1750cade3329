#!/bin/sh
# The in-job reduction of the I/O report (DR_HOOK_OPT=prof,io,reduce:
# drhook.io.job) against `drhook io --json --top 0` of the per-rank
# reports of the same run, at 2..32 ranks (or the counts given in
# RANKS), with drhook-ffi/tests/progs/attach/mpi_io_job.c (each rank its
# own file, all ranks one shared file).
# Usage: benches/mpi_reduce/io.sh [TARGET_DIR]
#   (release build first: cargo build --release -p drhook-preload -p drhook-cli -p drhook-ffi --lib --bins)
# Prints, per rank count: the reduction's time on rank 0, its receives and
# largest message (from the "Writing the job's I/O report" line), the
# job file's size, then the wall time and peak RSS of the offline summary.
set -eu
T=${1:-${CARGO_TARGET_DIR:-target}/release}
T=$(cd "$T" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)/../../drhook-ffi/tests/progs/attach/mpi_io_job.c
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
mpicc -O1 -o mpi_io_job "$SRC"
ROOT=""
[ "$(id -u)" = 0 ] && ROOT=--allow-run-as-root
echo "ranks reduce_s receives largest_msg_bytes job_bytes offline_s offline_maxrss_kib"
for P in ${RANKS:-2 4 8 16 32}; do
  rm -f drhook.* own.* shared
  DR_HOOK_OPT=prof,io,reduce,ranks "$T/drhook" run --no-out-dir -- \
    mpirun $ROOT --oversubscribe -n "$P" ./mpi_io_job >/dev/null 2>err
  line=$(grep "Writing the job's I/O report" err)
  secs=$(echo "$line" | sed 's/.*bytes, \([0-9.]*\) s on rank 0.*/\1/')
  recv=$(echo "$line" | sed 's/.*reduced, \([0-9]*\) receives.*/\1/')
  bytes=$(echo "$line" | sed 's/.*largest message \([0-9]*\) bytes.*/\1/')
  files=$(ls drhook.io.* | grep -E '^drhook\.io\.[0-9]+$' | sort -t. -k3 -n)
  /usr/bin/time -f '%e %M' -o mtime "$T/drhook" io --json --top 0 $files >/dev/null
  echo "$P $secs $recv $bytes $(wc -c < drhook.io.job) $(cat mtime)"
done
