#!/bin/sh
# Before/after of the I/O wrappers in one run: two preload libraries
# (BEFORE.so AFTER.so, e.g. copies of target/release/libdrhook_preload.so
# built at two commits) on progs/bench_io.c, for each MODE (write, fwrite,
# fprintf): callgrind instructions per call (the difference of 50 000 and
# 150 000 calls, one batch) and ns per call (ROUNDS rounds interleaved,
# each the median of 7 batches of 10^6 calls; the median of the rounds),
# plain and under each library with io off (DR_HOOK_OPT=prof) and on (io).
#
#   sh drhook-ffi/benches/io_ab.sh BEFORE.so AFTER.so [ROUNDS] [MODES...]
set -eu
before=$1 after=$2
rounds=${3:-5}
shift 2; [ $# -gt 0 ] && shift
modes=${*:-write fwrite fprintf}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/bench_io" "$(dirname "$0")/progs/bench_io.c"
cd "$work"
run() { # LIB OPT ARGS...: the program's output (plain when LIB is -)
    lib=$1 opt=$2; shift 2
    if [ "$lib" = - ]; then "$@"
    else LD_PRELOAD=$lib DR_HOOK=1 DR_HOOK_SILENT=1 DR_HOOK_OPT=$opt "$@" 2>/dev/null; fi
}
refs() { # LIB OPT MODE N: instructions of the whole run
    run "$1" "$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --log-file=vg.log ./bench_io "$3" "$4" 1 >/dev/null
    sed -n 's/.*refs: *//p' vg.log | tr -d ,
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
configs="- prof|$before prof|$after prof|$before io|$after io"
for mode in $modes; do
    echo "== $mode"
    echo "| configuration | instructions/call | ns/call (median of $rounds rounds) |"
    echo "|---|---:|---:|"
    : >ns.txt
    for r in $(seq "$rounds"); do
        echo "$configs" | tr '|' '\n' | while read -r lib opt; do
            echo "$lib $opt $(run "$lib" "$opt" ./bench_io "$mode" 1000000 7)" >>ns.txt
        done
    done
    echo "$configs" | tr '|' '\n' | while read -r lib opt; do
        a=$(refs "$lib" "$opt" "$mode" 50000)
        b=$(refs "$lib" "$opt" "$mode" 150000)
        ns=$(awk -v l="$lib" -v o="$opt" '$1 == l && $2 == o {print $3}' ns.txt | median)
        name=$( [ "$lib" = - ] && echo plain || echo "$(basename "$lib"), $opt")
        echo "| $name | $(echo "scale=1; ($b - $a) / 100000" | bc) | $ns |"
    done
done
