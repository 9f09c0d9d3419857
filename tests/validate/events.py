"""events.py - reads fragbench's native trace CSV (workloads/trace_native.c: a
'# fragbench-trace v1' line, then op,id,size,stream,device rows) once into plain lists,
and the replay loop the real-allocator drivers share: each driver gives alloc(size,
stream) -> handle, free(handle) and empty_cache(); the loop keeps the live handles by id.
Used by jax_replay.py, cupy_replay.py and torch_replay.py on the GPU host."""
import json
import os
import sys
import time

ALLOC, FREE, EMPTY, ITER = 0, 1, 2, 3
_OPS = {"alloc": ALLOC, "free": FREE, "empty_cache": EMPTY, "iter": ITER}


def read(path):
    """(ops, ids, sizes, streams): one entry per row, read in one pass."""
    ops, ids, sizes, streams = [], [], [], []
    with open(path) as f:
        first = f.readline()
        if not first.startswith("# fragbench-trace"):
            sys.exit(f"{path}:1: expected '# fragbench-trace v1' (write it with fragbench export)")
        header = f.readline().strip()
        if header != "op,id,size,stream,device":
            sys.exit(f"{path}:2: expected the header op,id,size,stream,device, got '{header[:60]}'")
        for line_no, line in enumerate(f, 3):
            p = line.rstrip("\n").split(",")
            op = _OPS.get(p[0])
            if op is None or len(p) != 5:
                sys.exit(f"{path}:{line_no}: expected alloc|free|empty_cache|iter with 5 fields")
            ops.append(op)
            ids.append(int(p[1]) if p[1] else 0)
            sizes.append(int(p[2]) if p[2] else 0)
            streams.append(int(p[3]) if p[3] and p[3] != "recorded" else 0)   # a free's "recorded": waited for other streams
    return ops, ids, sizes, streams


def replay(events, alloc, free, empty_cache=None, after_alloc=None, progress=None):
    """Replays events; alloc returns (handle, bytes_it_counts_in_use). Returns a dict:
    events, allocs, oom_at (event index or None), peak_live (sum of the counted bytes)."""
    ops, ids, sizes, streams = events
    live = {}
    cur = peak = 0
    allocs = 0
    t0 = time.time()
    n = len(ops)
    for i in range(n):
        op = ops[i]
        if op == ALLOC:
            if sizes[i] == 0:
                continue
            try:
                h, counted = alloc(sizes[i], streams[i])
            except MemoryError as e:  # every driver maps its OOM to MemoryError
                return {"events": i, "allocs": allocs, "oom_at": i, "oom": str(e)[:200], "peak_live": peak}
            live[ids[i]] = (h, counted)
            h = None  # no reference left here: a driver whose frees are reference drops frees at once
            allocs += 1
            cur += counted
            if cur > peak:
                peak = cur
            if after_alloc:
                after_alloc()
        elif op == FREE:
            h = live.pop(ids[i], None)
            if h is not None:
                cur -= h[1]
                free(h[0])
                h = None
        elif op == EMPTY and empty_cache:
            empty_cache()
        if progress and i and i % 100000 == 0:
            print(f"  {progress}: {i}/{n} events, {time.time() - t0:.0f} s", file=sys.stderr)
    for h, _ in live.values():
        free(h)
    return {"events": n, "allocs": allocs, "oom_at": None, "peak_live": peak, "seconds": round(time.time() - t0, 2)}


def emit(result):
    print(json.dumps(result, sort_keys=True))


def input_name(path):
    """the input's name from its export's file name (run.sh writes INPUT.events.csv)"""
    b = os.path.basename(path)
    return b[: -len(".events.csv")] if b.endswith(".events.csv") else b


def run_each(paths, one, out_dir=None, name=""):
    """one(trace, input_name) -> result dict, for each file in turn: printed, and written
    to OUT_DIR/INPUT__NAME.json when out_dir is given; a failure is recorded and the next
    file still runs."""
    for path in paths:
        inp = input_name(path)
        try:
            r = one(read(path), inp)
        except Exception as e:  # recorded, not fatal: the other inputs still count
            r = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        r.setdefault("input", inp)
        r.setdefault("allocator", name)
        emit(r)
        sys.stdout.flush()
        if out_dir:
            with open(os.path.join(out_dir, f"{inp}__{name}.json"), "w") as f:
                f.write(json.dumps(r, sort_keys=True) + "\n")
