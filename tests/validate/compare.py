"""compare.py OUTDIR INPUT... - the table `make validate` prints: for each input and each
fragbench strategy with a real counterpart, the real allocator's own peak (from the
driver's JSON line) against fragbench's on sim and on cuda (from its results CSV), one
line per figure, and the closing line `N within 1%, M outside` (a line is within when
every fragbench figure present is within 1% of the real one)."""
import csv
import json
import os
import sys

# fragbench strategy, its file-name form, real run, figures compared (real key, fragbench column)
PAIRS = [
    ("bfc:preset=jax", "jax-prealloc", [("peak_in_use", "peak_allocated"), ("peak_reserved", "peak_reserved")]),
    ("bfc:preset=jax,allow_growth=1", "jax-growth", [("peak_reserved", "peak_reserved"), ("peak_in_use", "peak_allocated")]),
    ("cupy", "cupy", [("peak_reserved", "peak_reserved"), ("peak_in_use", "peak_allocated")]),
    ("caching", "torch-caching", [("peak_reserved", "peak_reserved"), ("peak_in_use", "peak_allocated")]),
    ("expandable", "torch-expandable", [("peak_reserved", "peak_reserved"), ("peak_in_use", "peak_allocated")]),
    ("async", "torch-async", [("peak_reserved", "peak_reserved")]),
    ("pool", None, [(None, "peak_reserved")]),
]
FIG = {"peak_reserved": "reserved", "peak_in_use": "in use", None: "reserved"}


def fname(s):
    return s.replace(":", "_").replace(",", ".").replace("=", "_")


def fb_row(out, inp, strat, dev):
    p = os.path.join(out, f"{inp}__{fname(strat)}__{dev}.csv")
    try:
        with open(p) as f:
            lines = [l for l in f if not l.startswith("#")]
        rows = list(csv.DictReader(lines))
        return rows[0] if rows else None
    except OSError:
        return None


def real(out, inp, name):
    if not name:
        return None
    try:
        with open(os.path.join(out, f"{inp}__{name}.json")) as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


def pct(a, b):
    return 100.0 * (b - a) / a if a else (0.0 if b == a else float("inf"))


def main():
    out, inputs = sys.argv[1], sys.argv[2:]
    within = outside = unval = 0
    hdr = f"{'input':<34} {'strategy':<30} {'figure':<9} {'real':>14} {'sim':>14} {'diff':>8} {'cuda':>14} {'diff':>8}  verdict"
    print(hdr)
    print("-" * len(hdr))
    for inp in inputs:
        for strat, name, figs in PAIRS:
            r = real(out, inp, name)
            rows = {d: fb_row(out, inp, strat, d) for d in ("sim", "cuda")}
            for rkey, col in figs:
                cells, verdict = [], ""
                rv = r.get(rkey) if r and rkey else None
                ok = True
                for d in ("sim", "cuda"):
                    row = rows[d]
                    if row is None or row.get("status") not in ("ok",):
                        cells += [(row or {}).get("status", "-") if row else "-", ""]
                        if d == "sim":
                            ok = False
                        continue
                    v = int(row[col])
                    if rv is None:
                        cells += [str(v), ""]
                    else:
                        dd = pct(rv, v)
                        ok = ok and abs(dd) <= 1.0
                        cells += [str(v), f"{dd:+.2f}%"]
                if name is None:
                    verdict = "unvalidated (no real counterpart on this host)"
                    unval += 1
                elif r is None:
                    verdict = "no real run (driver not available)"
                    unval += 1
                elif "error" in r:
                    verdict = f"real run failed: {r['error']}"
                    outside += 1
                elif r.get("oom_at") is not None:
                    verdict = f"real OOM at event {r['oom_at']}"
                    outside += 1
                elif rv is None:
                    verdict = "real figure missing"
                    unval += 1
                else:
                    verdict = "within 1%" if ok else "OUTSIDE 1%"
                    within += ok
                    outside += not ok
                print(f"{inp:<34} {strat:<30} {FIG[rkey]:<9} {str(rv if rv is not None else '-'):>14} "
                      f"{cells[0]:>14} {cells[1]:>8} {cells[2]:>14} {cells[3]:>8}  {verdict}")
    print(f"{within} within 1%, {outside} outside" + (f" ({unval} unvalidated)" if unval else ""))
    return 0 if outside == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
