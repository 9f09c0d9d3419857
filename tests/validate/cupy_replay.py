"""cupy_replay.py EVENTS.csv... [--out-dir DIR] - replays native traces, one after another,
each through a fresh CuPy default memory pool (cupy.cuda.MemoryPool over cudaMalloc):
every alloc is pool.malloc(size), every free returns the chunk at once
(PooledMemory.free), every empty_cache is pool.free_all_blocks(). Prints one JSON line
per file: peak total_bytes() (what the pool got from cudaMalloc) and peak bytes in
chunks handed out (sizes after CuPy's 512-byte rounding); with --out-dir also writes
DIR/INPUT__cupy.json. Each pool frees everything before the next file starts."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import events as ev  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("events", nargs="+")
ap.add_argument("--out-dir", default=None)
args = ap.parse_args()

import cupy  # noqa: E402


def one(trace, inp):
    pool = cupy.cuda.MemoryPool()
    peak = [0]

    def alloc(size, stream):
        try:
            p = pool.malloc(size)
        except cupy.cuda.memory.OutOfMemoryError as e:
            raise MemoryError(str(e))
        return p, p.mem.size

    def after_alloc():
        t = pool.total_bytes()
        if t > peak[0]:
            peak[0] = t

    def free(p):
        p.mem.free()  # PooledMemory.free: back to the pool now, not when Python drops it

    r = ev.replay(trace, alloc, free, empty_cache=pool.free_all_blocks, after_alloc=after_alloc, progress="cupy")
    r.update({"cupy": cupy.__version__, "peak_reserved": peak[0], "peak_in_use": r["peak_live"],
              "total_bytes_end": pool.total_bytes()})
    pool.free_all_blocks()
    return r


ev.run_each(args.events, one, args.out_dir, "cupy")
