#!/usr/bin/env python3
"""async_heldout.py - the sim model of cudaMallocAsync (`async` on sim) against PyTorch's
backend:cudaMallocAsync on recorded jobs, split into the jobs the model may be built from
and the jobs it is only tested on (issue 31).

  python3 tests/probes/async_heldout.py BIN DATADIR OUTDIR [--split build|heldout|all]
                                        [--model K=V,...] [--cuda N] [--fresh]

DATADIR holds, per job, JOB.pickle (a snapshot under PyTorch's native allocator),
async_ref.csv (job,run,peak_reserved,peak_allocated: the same job under
backend:cudaMallocAsync, several runs; with a `backend` column, its `native` rows are the
native allocator's figure and only `async` rows count), optionally fragbench_cuda.csv
(job,...,allocator,run,peak_reserved,status: earlier `run --device cuda` figures; --fresh:
only this call's --cuda runs count) and SPLIT.txt (which jobs are "build" and which
"heldout": a line per label, `build: a b c` / `heldout: d e`, or `JOB LABEL` lines).
For each job of the split: the sim rows of async (with --model's parameters), caching and
expandable; PyTorch's async range (lowest, median, highest); with --cuda N (a GPU host)
also N runs of `BIN run --device cuda --allocator async` (the driver through fragbench).
Prints one line per job and a summary per split, and writes OUTDIR/heldout.csv.
The ranking check: where PyTorch's async and the native caching figure (the snapshot's
own peak reserved) differ by more than PyTorch's own run-to-run spread, the sim rows must
rank async against caching the same way; expandable has no real figure here, the sim's
(an exact model) stands for it.
"""
import csv
import os
import re
import statistics
import subprocess
import sys


def usage():
    sys.exit(__doc__.split("\n\n")[1])


def parse_split(path):
    labels = {}
    if not os.path.exists(path):
        return labels
    words = {"build": "build", "heldout": "heldout", "held-out": "heldout", "held_out": "heldout", "test": "heldout"}
    for line in open(path):
        line = line.split("#", 1)[0]
        toks = [t for t in re.split(r"[\s,:=]+", line) if t]
        if not toks:
            continue
        if toks[0].lower() in words:
            for j in toks[1:]:
                labels[j] = words[toks[0].lower()]
        elif toks[-1].lower() in words:
            for j in toks[:-1]:
                labels[j] = words[toks[-1].lower()]
    return labels


def fb_run(bin_, trace, device, allocs, out):
    cmd = [bin_, "run", "--trace", trace, "--device", device, "--quiet", "--out", out]
    for a in allocs:
        cmd += ["--allocator", a]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
    if r.returncode not in (0, 1) or not rows:
        sys.stderr.write("%s: %s\n" % (" ".join(cmd), r.stderr.strip()[-400:]))
        return []
    return rows


def pct(a, b):
    return 100.0 * (a - b) / b if b else float("nan")


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        usage()
    bin_, data, out = args[:3]
    split, model, cuda_n, fresh = "all", "", 0, False
    rest = args[3:]
    while rest:
        k = rest.pop(0)
        if k == "--split" and rest:
            split = rest.pop(0)
        elif k == "--model" and rest:
            model = rest.pop(0)
        elif k == "--cuda" and rest:
            cuda_n = int(rest.pop(0))
        elif k == "--fresh":
            fresh = True
        else:
            usage()
    os.makedirs(out, exist_ok=True)
    labels = parse_split(os.path.join(data, "SPLIT.txt"))
    ref, native_ref, cuda_ref = {}, {}, {}
    refpath = os.path.join(data, "async_ref.csv")
    if os.path.exists(refpath):
        for r in csv.DictReader(open(refpath)):
            if not r.get("peak_reserved", "").strip().isdigit():
                continue
            if r.get("backend", "async") == "native":   # the same job under the native allocator
                native_ref[r["job"]] = int(r["peak_reserved"])
            elif r.get("backend", "async") == "async":
                ref.setdefault(r["job"], []).append(int(r["peak_reserved"]))
    # the driver through fragbench, recorded earlier (job,...,allocator,run,peak_reserved,status)
    cpath = os.path.join(data, "fragbench_cuda.csv")
    if os.path.exists(cpath) and not fresh:
        for r in csv.DictReader(open(cpath)):
            if r.get("allocator", "async") == "async" and r.get("status", "ok").startswith("ok") and r["peak_reserved"].isdigit():
                cuda_ref.setdefault(r["job"], []).append(int(r["peak_reserved"]))
    names = os.listdir(data)   # JOB.pickle, or JOB.pickle.gz as committed in tests/data/recorded/async
    jobs = sorted(f.split(".pickle")[0] for f in names if f.endswith(".pickle") or f.endswith(".pickle.gz"))
    if split != "all":
        jobs = [j for j in jobs if labels.get(j) == split]
    if not jobs:
        sys.exit("async_heldout: no job of split %r in %s (SPLIT.txt: %s)" % (split, data, labels or "missing"))
    asy = "async:" + model if model else "async"
    rows = []
    print("%-22s %-8s %14s %14s %14s %14s %8s %-14s %-10s %14s %14s %-22s %s" % (
        "job", "split", "sim async", "pytorch lo", "pytorch med", "pytorch hi", "vs med", "vs range", "model rng",
        "sim caching", "sim expand", "cuda (driver) range", "ranking"))
    for j in jobs:
        trace = os.path.join(data, j + ".pickle")
        if not os.path.exists(trace):
            trace += ".gz"
        sim = {r["allocator"]: r for r in fb_run(bin_, trace, "sim", [asy, "caching", "expandable"], os.path.join(out, "sim_%s.csv" % j))}
        if "async" not in sim:
            continue
        s = int(sim["async"]["peak_reserved"])
        sc = int(sim["caching"]["peak_reserved"]) if "caching" in sim else 0
        se = int(sim["expandable"]["peak_reserved"]) if "expandable" in sim else 0
        native = native_ref.get(j) or int(sim["async"].get("trace_peak_reserved") or 0)
        cuda = list(cuda_ref.get(j, []))
        for i in range(cuda_n):
            cr = fb_run(bin_, trace, "cuda", ["async"], os.path.join(out, "cuda_%s_%d.csv" % (j, i)))
            if cr and cr[0]["peak_reserved"].isdigit():
                cuda.append(int(cr[0]["peak_reserved"]))
        pt = sorted(ref.get(j, []))
        row = dict(job=j, split=labels.get(j, "?"), model=asy, sim_async=s, sim_caching=sc, sim_expandable=se,
                   native_caching=native, pytorch_runs=len(pt), cuda_runs=len(cuda))
        where, rank = "", ""
        if pt:
            lo, hi, med = pt[0], pt[-1], statistics.median(pt)
            row.update(pytorch_lo=lo, pytorch_med=int(med), pytorch_hi=hi, err_vs_med=round(pct(s, med), 2),
                       spread=round(pct(hi, lo), 2))
            where = "inside" if lo <= s <= hi else ("%+.1f%% above" % pct(s, hi) if s > hi else "%+.1f%% below" % pct(s, lo))
            row["vs_range"] = where
            # the row's range: peak_reserved +/- model_err (the model's two bounds and its residual)
            e = float(sim["async"].get("model_err") or 0)
            row.update(model_err=e, in_model_range=int(s * (1 - e) <= med <= s * (1 + e)))
            # ranking against caching, where the real figures differ by more than the spread;
            # the sim ranks async against caching only outside async's model range
            if native:
                real = pct(med, native)
                simd = pct(s, sc)
                if abs(s - sc) <= e * s:
                    rank = "vs caching not ranked (inside +/-%.0f%%; real %+.1f%%, sim %+.1f%%)" % (100 * e, real, simd)
                elif abs(real) > max(pct(hi, lo), 0.0):
                    ok = (real < 0) == (simd < 0)
                    rank = "vs caching %s (real %+.1f%%, sim %+.1f%%)" % ("ok" if ok else "WRONG", real, simd)
                else:
                    rank = "vs caching within spread (real %+.1f%%, sim %+.1f%%)" % (real, simd)
                row["rank_caching"] = rank
            row["sim_async_vs_expandable"] = round(pct(s, se), 2) if se else ""
        if cuda:
            row.update(cuda_lo=min(cuda), cuda_hi=max(cuda), err_vs_cuda=round(pct(s, statistics.median(cuda)), 2))
        rows.append(row)
        print("%-22s %-8s %14d %14s %14s %14s %8s %-14s %-10s %14d %14d %-22s %s" % (
            j, row["split"], s, row.get("pytorch_lo", "-"), row.get("pytorch_med", "-"), row.get("pytorch_hi", "-"),
            ("%+.1f%%" % row["err_vs_med"]) if "err_vs_med" in row else "-", where or "-",
            ("+/-%.0f%% %s" % (100 * row["model_err"], "in" if row["in_model_range"] else "OUT")) if "model_err" in row else "-", sc, se,
            ("%d..%d" % (min(cuda), max(cuda))) if cuda else "-", rank))
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(os.path.join(out, "heldout.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    for lab in sorted(set(r["split"] for r in rows)):
        errs = [r["err_vs_med"] for r in rows if r["split"] == lab and "err_vs_med" in r]
        if not errs:
            continue
        inside = sum(1 for r in rows if r["split"] == lab and r.get("vs_range") == "inside")
        wrong = sum(1 for r in rows if r["split"] == lab and "WRONG" in r.get("rank_caching", ""))
        unranked = sum(1 for r in rows if r["split"] == lab and "not ranked" in r.get("rank_caching", ""))
        in_model = sum(r.get("in_model_range", 0) for r in rows if r["split"] == lab)
        print("summary %-8s %s: %d jobs, |error vs PyTorch median| max %.1f%% mean %.1f%% (signed %s), %d inside PyTorch's range, "
              "%d with PyTorch's median inside the row's model range, %d ranked the wrong way against caching, "
              "%d not ranked (inside the model range)" % (lab, asy, len(errs), max(abs(e) for e in errs),
                                                          sum(abs(e) for e in errs) / len(errs),
                                                          " ".join("%+.1f" % e for e in errs), inside, in_model, wrong, unranked))


if __name__ == "__main__":
    main()
