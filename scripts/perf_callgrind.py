#!/usr/bin/env python3
"""perf_callgrind.py - instructions per event, repeatable on a loaded machine: runs
`fragbench run` under valgrind --tool=callgrind and splits the replay's timed region
into the harness's part and the strategy's part (see docs/performance.md).

  python3 scripts/perf_callgrind.py [--bin build/fragbench] [--keep DIR] ALLOC INPUT...
      INPUT: a workload spec (random:events=300000,live=1000) or a trace path

Per (ALLOC, INPUT) it prints
  events       replayed events (alloc + free calls: what ns_per_op divides by)
  timed/ev     instructions per event in the timed region: the replay engine's per-event
               code (do_event and what it calls), the strategy's calls included; not the
               workload's event generation (nor replay.c's batch-fill loop), not setup;
               teardown's frees of what is left live are included (live/events of them)
  strategy/op  instructions per alloc/free call inside the strategy (its ops->alloc and
               ops->free, inclusive)
  harness/ev   timed/ev minus the strategy's alloc/free: livemap, metrics, timing samples,
               the query() a new reserved peak triggers
  gen/ev       the workload's event generation per event (outside the timed region)
The callgrind profile's top functions by exclusive cost go to stdout with -v.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

# the replay engine's own functions (their exclusive cost is per-event code, inlined
# helpers included, apart from the lines that come from workload.h: event generation)
HARNESS = {"replay_run", "replay_loop", "do_event", "do_event_plain", "do_alloc", "alloc_plain", "alloc_sampled",
           "alloc_failed", "do_free", "free_entry", "free_sampled", "free_unknown", "note_reserved", "timeline_track",
           "timeline_sample"}
# what the engine calls per event (besides the strategy)
PER_EVENT = re.compile(r"^(livemap_\w+|hist_add|metrics_\w+|validator_\w+|clock_gettime\S*|__vdso_clock_gettime\S*|"
                       r"__clock_gettime\S*|dev_\w+)$")
# strategy entry points per allocator name: (alloc, free, query, empty_cache)
STRATEGY_FNS = {
    "raw": ("raw_alloc", "raw_free", "raw_query", "raw_empty_cache"),
    "caching": ("caching_alloc", "caching_free", "caching_query", "caching_empty_cache"),
    "expandable": ("exp_alloc", "exp_free", "exp_query", "exp_empty_cache"),
    "bfc": ("bfc_alloc", "bfc_free", "bfc_query", "bfc_empty_cache"),
    "pool": ("pool_alloc", "pool_free", "pool_query", "pool_empty_cache"),
    "stitch": ("stitch_alloc", "stitch_free", "stitch_query", "stitch_empty_cache"),
}


def parse(path):
    """exclusive cost per (fn, file, line), call cost per (caller, callee), calls per callee"""
    excl = defaultdict(int)          # (fn, file, line) -> Ir
    callcost = defaultdict(int)      # (caller, callee) -> inclusive Ir of those calls
    calls = defaultdict(int)         # callee -> number of calls
    names = {"fn": {}, "fl": {}}
    fn = fl = fi = callee = None
    pending_call = None
    total = 0
    last = 0                         # positions are lines, compressed relative to the last one

    def name_of(kind, text):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", text)
        if not m:
            return text
        table = names["fn" if kind == "fn" else "fl"]
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                tok = parts[0]
                last = last if tok == "*" else last + int(tok) if tok[0] in "+-" else int(tok)
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    callcost[(fn, pending_call)] += cost
                    pending_call = None
                else:
                    excl[(fn, fi or fl, last)] += cost
                continue
            if line.startswith(("summary:", "totals:")):
                total = int(line.split(":", 1)[1].split()[0])
                continue
            key, _, val = line.partition("=")
            if key == "fn":
                fn = name_of("fn", val)
                fi = None
            elif key == "fl":
                fl = name_of("fl", val)
                fi = None
            elif key in ("fi", "fe"):
                fi = name_of("fl", val)
            elif key == "cfn":
                callee = name_of("fn", val)
            elif key in ("cfi", "cfl"):
                name_of("fl", val)
            elif key == "calls":
                calls[callee] += int(val.split()[0])
                pending_call = callee
    return excl, callcost, calls, total


def fill_lines(src="harness/engine/replay.c"):
    """replay.c's batch-fill line(s): event generation, outside the timed region"""
    try:
        with open(src) as f:
            return {i + 1 for i, l in enumerate(f) if "workload_next(&x->w, &buf[" in l}
    except OSError:
        return set()


def csv_row(path):
    with open(path) as f:
        rows = list(csv.reader(l for l in f if not l.startswith("#")))
    return dict(zip(rows[0], rows[-1]))


def measure(binary, alloc, inp, keep=None, verbose=False):
    tmp = keep or tempfile.mkdtemp(prefix="fbcg.")
    tag = re.sub(r"[^A-Za-z0-9]+", "_", f"{alloc}_{os.path.basename(inp)}")[:80]
    out, rows = os.path.join(tmp, f"cg.{tag}.out"), os.path.join(tmp, f"run.{tag}.csv")
    src = ["--trace", inp] if os.path.exists(inp) else ["--workload", inp]
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "run", *src,
           "--allocator", alloc, "--device", "sim", "--quiet", "--out", rows]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    excl, callcost, calls, total = parse(out)
    row = csv_row(rows)
    events = int(row["allocs"]) + int(row["frees"])
    a, fr, q, ec = STRATEGY_FNS.get(alloc, (f"{alloc}_alloc", f"{alloc}_free", f"{alloc}_query", f"{alloc}_empty_cache"))
    timed = strategy = query = gen = 0
    fill = fill_lines()
    for (fn, file, line), cost in excl.items():
        if fn in HARNESS:
            if file and (file.endswith("workload.h") or (file.endswith("replay.c") and line in fill)):
                gen += cost
            else:
                timed += cost
    for (caller, callee), cost in callcost.items():
        if caller not in HARNESS or callee in HARNESS:
            continue
        if callee in (a, fr):
            strategy += cost
            timed += cost
        elif callee in (q, ec):
            query += cost
            timed += cost
        elif PER_EVENT.match(callee):
            timed += cost
    gen_fn = {(caller, callee): c for (caller, callee), c in callcost.items() if caller in HARNESS}
    for (caller, callee), cost in gen_fn.items():
        if callee.endswith("_next") and callee not in HARNESS:
            gen += cost
    ops = calls.get(a, 0) + calls.get(fr, 0)
    res = {"alloc": alloc, "input": inp, "events": events, "timed": timed / events,
           "strategy": strategy / ops if ops else float("nan"), "harness": (timed - strategy) / events,
           "query": query / events, "gen": gen / events, "total": total, "out": out}
    if verbose:
        byfn = defaultdict(int)
        for (fn, file, _), c in excl.items():
            byfn[(fn, file)] += c
        top = sorted(((c, fn, file) for (fn, file), c in byfn.items()), reverse=True)[:25]
        print(f"top exclusive ({alloc}, {inp}; {total} Ir total):")
        for c, fn, file in top:
            print(f"  {c:>12,} {100.0 * c / total:5.1f}%  {fn}  ({file})")
    if not keep:
        os.remove(out)
        os.remove(rows)
        os.rmdir(tmp)
    return res


def main(argv):
    binary, keep, verbose = "build/fragbench", None, False
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--bin":
            binary = argv[i + 1]; i += 2
        elif argv[i] == "--keep":
            keep = argv[i + 1]; os.makedirs(keep, exist_ok=True); i += 2
        elif argv[i] == "-v":
            verbose = True; i += 1
        else:
            args.append(argv[i]); i += 1
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    alloc, inputs = args[0], args[1:]
    print(f"{'allocator':<11} {'input':<40} {'events':>9} {'timed/ev':>9} {'strategy/op':>11} "
          f"{'harness/ev':>10} {'(query)':>8} {'gen/ev':>8}")
    for inp in inputs:
        r = measure(binary, alloc, inp, keep, verbose)
        print(f"{r['alloc']:<11} {os.path.basename(r['input'])[:40]:<40} {r['events']:>9} {r['timed']:>9.1f} "
              f"{r['strategy']:>11.1f} {r['harness']:>10.1f} {r['query']:>8.1f} {r['gen']:>8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
