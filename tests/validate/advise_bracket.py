"""advise_bracket.py [--fb build/fragbench] [--limit L] OUTDIR BUILD HELDOUT... - do the
variations `fragbench advise` builds from one run bracket what other runs of the same job
(other data orders) need? Runs anywhere (sim only).

1. `fragbench advise --trace BUILD [--limit L] --out OUTDIR/advise.csv`: the recommendation
   and, for it, PyTorch's default and expandable segments alone, the smallest limit each
   completes under on every variation (need_min_bytes..need_bytes: the spread over the
   variations of BUILD).
2. For each of those settings and each HELDOUT run: `fragbench mincap` (sim, exact for these
   settings) - the smallest limit the held-out run needs.
3. A table: each setting's spread over the variations, BUILD's own need, each held-out
   run's need - as multiples of each run's own peak requested (reruns draw another largest
   step, so their peak requested differs; the setting's overhead is what carries over) and
   in GiB - and whether the worst variation covers them all ("bracketed": every held-out
   need_x <= need_x_max). Also written to OUTDIR/bracket.csv. Exit 1 when one is not covered.

Use BUILD only to build the advice; HELDOUT runs only to test it."""
import argparse
import csv
import os
import subprocess
import sys

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("outdir")
ap.add_argument("build")
ap.add_argument("heldout", nargs="+")
ap.add_argument("--fb", default="build/fragbench")
ap.add_argument("--limit", default=None, help="the limit advise plans for (default: none / the snapshot's)")
ap.add_argument("--variations", default=None)
args = ap.parse_args()
os.makedirs(args.outdir, exist_ok=True)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def gib(b):
    return f"{int(b) / 2**30:.3f}" if b else "-"


adv_csv = os.path.join(args.outdir, "advise.csv")
cmd = [args.fb, "advise", "--trace", args.build, "--out", adv_csv]
if args.limit:
    cmd += ["--limit", args.limit]
if args.variations:
    cmd += ["--variations", args.variations]
p = subprocess.run(cmd, capture_output=True, text=True)
with open(os.path.join(args.outdir, "advise.stderr.txt"), "w") as f:
    f.write(p.stderr)
if p.returncode not in (0, 1):
    sys.exit(f"advise_bracket: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
adv = rows(adv_csv)
picked = [adv[0]] + [r for r in adv[1:] if r["alloc_conf"] in ("expandable_segments:False", "expandable_segments:True")
                     and r["allocator"] != "recorded"]
seen, settings = set(), []
for r in picked:
    if r["alloc_conf"] not in seen:
        seen.add(r["alloc_conf"])
        settings.append(r)


def mincap(trace, conf):
    out = os.path.join(args.outdir, "mincap.csv")
    cmd = [args.fb, "mincap", "--trace", trace, "--alloc-conf", conf, "--precision", "0.001", "--quiet", "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"advise_bracket: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    rs = rows(out)
    if not rs or not rs[0]["mincap_bytes"]:
        return 0, 0.0
    return int(rs[0]["mincap_bytes"]), float(rs[0]["mincap_x"] or 0)


names = [os.path.basename(h) for h in args.heldout]
print(f"advise on {os.path.basename(args.build)} (limit {args.limit or 'none'}); smallest working limit (sim, exact), "
      "as a multiple of each run's own peak requested, and in GiB:")
print(f"{'setting':50} {'variations x':>15} {'build':>6} " + " ".join(f"{n[:10]:>10}" for n in names)
      + "  bracketed (x)  |  GiB: variations  build  held-out")
bad = 0
out_rows = []
for i, r in enumerate(settings):
    conf = r["alloc_conf"]
    lo, hi = int(r.get("need_min_bytes") or 0), int(r.get("need_bytes") or 0)
    xlo, xhi = float(r.get("need_x_min") or 0), float(r.get("need_x_max") or 0)
    own, own_x = mincap(args.build, conf)
    held = [mincap(h, conf) for h in args.heldout]
    # the job's reruns differ in their largest step (their own peak requested), so the
    # setting's overhead - the multiple of each run's own peak requested - is what the
    # variations must cover
    covered = xhi > 0 and all(x and x <= xhi * 1.0005 for _, x in held)
    inside = sum(1 for _, x in held if x and xlo * 0.9995 <= x <= xhi * 1.0005)
    bad += not covered
    tag = "(pick) " if i == 0 else ""
    print(f"{(tag + conf)[:50]:50} {xlo:6.3f}..{xhi:<7.3f} {own_x:6.3f} " + " ".join(f"{x:10.3f}" for _, x in held)
          + f"  {'yes' if covered else 'NO':3} {inside}/{len(held)} inside  |  {gib(lo)}..{gib(hi)}  {gib(own)}  "
          + " ".join(gib(b) for b, _ in held))
    out_rows.append({"setting": conf, "recommended": int(i == 0), "fits_variations": r.get("fits_variations", ""),
                     "headroom_bytes": r.get("headroom_bytes", ""), "need_min_bytes": lo, "need_bytes": hi,
                     "need_x_min": xlo, "need_x_max": xhi, "build_need_bytes": own, "build_need_x": own_x,
                     **{f"heldout_{n}_bytes": b for n, (b, _) in zip(names, held)},
                     **{f"heldout_{n}_x": x for n, (_, x) in zip(names, held)}, "bracketed": int(covered)})
with open(os.path.join(args.outdir, "bracket.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()))
    w.writeheader()
    w.writerows(out_rows)
print(f"{len(settings) - bad} of {len(settings)} settings: every held-out run's need (x its peak requested) within the worst variation's")
sys.exit(1 if bad else 0)
