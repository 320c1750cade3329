#!/usr/bin/env python3
"""Darshan's POSIX counters and the I/O report's, side by side (issue 23).

Runs a program under Darshan's runtime (LD_PRELOAD of libdarshan.so,
DARSHAN_ENABLE_NONMPI=1) and under `drhook run --opt io`, each in a fresh
copy of the working directory, then prints, per file both saw, every
counter that carries Darshan's name with the two values and a mark where
they differ. Not part of CI: Darshan is built outside the repository.

    DARSHAN=/work/ext/darshan-inst python3 benches/darshan/side_by_side.py \
        [--drhook target/release/drhook] [--processes] -- PROGRAM [ARGS...]

With --processes (a program that starts several processes: `mpirun -n 4
ior ...`) the counters that add up (calls, bytes, sequential and
consecutive accesses, size bins) are summed per file over the processes,
Darshan's logs and the I/O reports alike.

Without a program it builds and runs drhook-ffi/tests/progs/attach/darshan.c
(the program whose counters tests/io_counters.rs checks by Darshan's
definitions).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (the I/O report's name, Darshan's POSIX counter)
PLAIN = [
    ("opens", "POSIX_OPENS"),
    ("reads", "POSIX_READS"),
    ("writes", "POSIX_WRITES"),
    ("read_bytes", "POSIX_BYTES_READ"),
    ("write_bytes", "POSIX_BYTES_WRITTEN"),
    ("seq_reads", "POSIX_SEQ_READS"),
    ("seq_writes", "POSIX_SEQ_WRITES"),
    ("consec_reads", "POSIX_CONSEC_READS"),
    ("consec_writes", "POSIX_CONSEC_WRITES"),
    ("max_byte_read", "POSIX_MAX_BYTE_READ"),
    ("max_byte_written", "POSIX_MAX_BYTE_WRITTEN"),
    ("rw_switches", "POSIX_RW_SWITCHES"),
    ("mem_not_aligned", "POSIX_MEM_NOT_ALIGNED"),
    ("file_not_aligned", "POSIX_FILE_NOT_ALIGNED"),
    ("file_alignment", "POSIX_FILE_ALIGNMENT"),
    ("mem_alignment", "POSIX_MEM_ALIGNMENT"),
    ("dups", "POSIX_DUPS"),
    ("renames_from", "POSIX_RENAME_SOURCES"),
    ("renames_to", "POSIX_RENAME_TARGETS"),
    ("max_read_time_size", "POSIX_MAX_READ_TIME_SIZE"),
    ("max_write_time_size", "POSIX_MAX_WRITE_TIME_SIZE"),
]
BINS = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
        "10M_100M", "100M_1G", "1G_PLUS"]


def darshan_counters(prefix, workdir, argv, env, processes):
    logs = tempfile.mkdtemp(prefix="darshan-logs-")
    e = dict(env, LD_PRELOAD=os.path.join(prefix, "lib", "libdarshan.so"),
             DARSHAN_ENABLE_NONMPI="1", DARSHAN_LOGPATH=logs)
    subprocess.run(argv, cwd=workdir, env=e, check=True, stdout=subprocess.DEVNULL)
    files = [os.path.join(logs, f) for f in os.listdir(logs)]
    if not files:
        sys.exit("darshan wrote no log (DARSHAN_LOGPATH=%s)" % logs)
    per = {}
    for log in files if processes else files[:1]:
        out = subprocess.run([os.path.join(prefix, "bin", "darshan-parser"), log],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            if not line.startswith("POSIX\t"):
                continue
            parts = line.split("\t")
            counter, value, path = parts[3], parts[4], parts[5]
            v = float(value) if "." in value else int(value)
            d = per.setdefault(path, {})
            d[counter] = d.get(counter, 0) + v if processes else v
    shutil.rmtree(logs, ignore_errors=True)
    return per


def drhook_counters(drhook, workdir, argv, env, processes):
    e = {k: v for k, v in env.items() if not k.startswith(("DR_HOOK", "DRHOOK_"))}
    subprocess.run([drhook, "run", "--no-out-dir", "--opt", "io", "--"] + argv, cwd=workdir, env=e,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    names = sorted(n for n in os.listdir(workdir) if n.startswith("drhook.io."))
    per = {}
    for name in names if processes else ["drhook.io.1"]:
        with open(os.path.join(workdir, name)) as f:
            rep = json.load(f)
        for f in rep["files"]:
            d = per.get(f["path"])
            if d is None or not processes:
                per[f["path"]] = dict(f)
                continue
            for k, v in f.items():
                if isinstance(v, int) and k in SUMMED:
                    d[k] = d.get(k, 0) + v
                elif k in ("read_hist", "write_hist"):
                    d[k] = [a + b for a, b in zip(d[k], v)]
    return per


# Counters that add up over processes (the --processes comparison).
SUMMED = {"opens", "reads", "writes", "read_bytes", "write_bytes", "seq_reads",
          "seq_writes", "consec_reads", "consec_writes", "rw_switches",
          "mem_not_aligned", "file_not_aligned", "dups", "renames_from", "renames_to"}


def ours(f, name):
    if name.startswith("SIZE_"):
        kind, b = name.split("_", 2)[1:]
        return f["read_hist" if kind == "READ" else "write_hist"][BINS.index(b)]
    return f.get(name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--drhook", default=os.path.join(ROOT, "target", "release", "drhook"))
    ap.add_argument("--processes", action="store_true")
    ap.add_argument("program", nargs="*")
    a = ap.parse_args()
    prefix = os.environ.get("DARSHAN")
    if not prefix:
        sys.exit("set DARSHAN to Darshan's installation prefix (lib/libdarshan.so, bin/darshan-parser)")
    src = tempfile.mkdtemp(prefix="side-by-side-")
    argv = a.program
    if not argv:
        subprocess.run(["gcc", "-std=gnu11", "-O1", "-o", os.path.join(src, "darshan"),
                        os.path.join(ROOT, "drhook-ffi/tests/progs/attach/darshan.c")], check=True)
        argv = ["./darshan"]
    env = dict(os.environ)
    runs = []
    for _ in range(2):
        d = tempfile.mkdtemp(prefix="run-")
        for name in os.listdir(src):
            shutil.copy(os.path.join(src, name), d)
        runs.append(d)
    dar = darshan_counters(prefix, runs[0], argv, env, a.processes)
    dr = drhook_counters(a.drhook, runs[1], argv, env, a.processes)
    rows = [(o, d) for o, d in PLAIN if not a.processes or o in SUMMED]
    rows += [("SIZE_READ_" + b, "POSIX_SIZE_READ_" + b) for b in BINS]
    rows += [("SIZE_WRITE_" + b, "POSIX_SIZE_WRITE_" + b) for b in BINS]
    differ = 0
    for dpath in sorted(dar):
        rel = os.path.relpath(dpath, runs[0]) if dpath.startswith(runs[0]) else None
        if rel is None:
            continue
        mine = dr.get(os.path.join(runs[1], rel))
        print("\n%s" % rel)
        if mine is None:
            print("  (not in the I/O report)")
            continue
        print("  %-34s %14s %14s" % ("counter (Darshan's name)", "Darshan", "drhook"))
        for o, d in rows:
            x, y = dar[dpath].get(d), ours(mine, o)
            mark = "" if x == y else "   <- differs"
            differ += x != y
            print("  %-34s %14s %14s%s" % (d, x, y, mark))
        for k in range(0 if a.processes else 4):
            x = (dar[dpath].get("POSIX_ACCESS%d_ACCESS" % (k + 1)), dar[dpath].get("POSIX_ACCESS%d_COUNT" % (k + 1)))
            c = mine.get("common_access_sizes", [])
            y = tuple(c[k]) if k < len(c) else (0, 0)
            print("  %-34s %14s %14s%s" % ("POSIX_ACCESS%d (size, count)" % (k + 1), x, y, "" if x == y else "   <- differs"))
            x = (dar[dpath].get("POSIX_STRIDE%d_STRIDE" % (k + 1)), dar[dpath].get("POSIX_STRIDE%d_COUNT" % (k + 1)))
            c = mine.get("common_strides", [])
            y = tuple(c[k]) if k < len(c) else (0, 0)
            print("  %-34s %14s %14s%s" % ("POSIX_STRIDE%d (stride, count)" % (k + 1), x, y, "" if x == y else "   <- differs"))
    print("\n%d counters differ" % differ)


if __name__ == "__main__":
    main()
