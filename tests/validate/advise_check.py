"""advise_check.py [--fb build/fragbench] [--out DIR] [CASE...] - on a GPU host: does the
setting `fragbench advise` recommends behave in real PyTorch as it predicts?

Reruns: advise_check.py --out DIR --rerun BUILD.pickle --heldout H.pickle... [--limit L |
--oom-message FILE] [--job 'gpt varlen=1 batch=32 seq=1024 steps=16' --job-seeds 2,3] -
advise on one run's snapshot (BUILD) under the limit, then, for the recommendation,
PyTorch's default and expandable segments alone: each held-out run of the same job (another
data order; never given to advise) replayed through PyTorch's allocator under the same
limit (and predicted on sim), its smallest working limit on sim (mincap, as a multiple of
its own peak requested, against the spread advise's variations gave), and with --job the
real job itself rerun with that data order (tests/validate/torch_jobs.py run JOB --seed S
--conf CONF --fraction LIMIT/TOTAL, the job the recordings were made with) under the limit.
Writes DIR/rerun.csv and a table; exit 1 when the recommendation runs out of memory anywhere.

For each case (a PyTorch snapshot, optionally with a budget: 'FILE' or 'FILE@BUDGET'):
runs `fragbench advise` (on sim), exports the snapshot's alloc/free sequence once
(`fragbench export`), replays it through PyTorch's allocator with the recommended
PYTORCH_CUDA_ALLOC_CONF (tests/validate/torch_replay.py; with a budget, under
torch.cuda.set_per_process_memory_fraction(budget / device total)), and prints predicted
and real peak reserved, whether each completed, and the difference. Closing line:
'N as predicted, M not'. Exit 1 when any case differs."""
import argparse
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = ["tests/data/gpt_train.pickle.gz", "tests/data/leaky_losses.pickle.gz", "tests/data/resnet_varsize.pickle.gz",
           "tests/data/gpt_train_short_frames.pickle", "tests/data/gpt_train.pickle.gz@10G"]

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("cases", nargs="*", default=DEFAULT)
ap.add_argument("--fb", default="build/fragbench")
ap.add_argument("--out", default="build/advise_check")
ap.add_argument("--tolerance", type=float, default=0.01, help="relative difference still 'as predicted' (default 1%%)")
ap.add_argument("--rerun", default=None, help="reruns mode: the snapshot advise builds from")
ap.add_argument("--heldout", nargs="*", default=[], help="reruns mode: other runs of the same job (only to test)")
ap.add_argument("--limit", default=None, help="reruns mode: the limit (fragbench --limit syntax)")
ap.add_argument("--oom-message", default=None, help="reruns mode: PyTorch's OOM text giving the limit")
ap.add_argument("--job", default=None, help="reruns mode: rerun the real job too: torch_jobs.py's JOB [k=v ...]")
ap.add_argument("--job-seeds", default="2,3")
ap.add_argument("--total", type=int, default=0, help="device total for the fraction (default: torch's)")
args = ap.parse_args()
os.makedirs(args.out, exist_ok=True)


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def first_row(path):
    rows = rows_of(path)
    if not rows:
        sys.exit(f"{path}: no rows: advise tried no setting")
    return rows[0]


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode not in (0, 3) or not lines:   # torch_jobs.py: 3 = ran out of memory (its JSON says so)
        return {"error": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    return json.loads(lines[-1])


def device_total():
    p = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.get_device_properties(0).total_memory)"],
                       capture_output=True, text=True)
    return int(p.stdout.strip() or 85017493504)


def reruns():
    """advise on args.rerun; its pick, the default and expandable on every held-out run"""
    adv_csv = os.path.join(args.out, "rerun.advise.csv")
    cmd = [args.fb, "advise", "--trace", args.rerun, "--out", adv_csv]
    cmd += ["--limit", args.limit] if args.limit else []
    cmd += ["--oom-message", args.oom_message] if args.oom_message else []
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(args.out, "rerun.advise.stderr.txt"), "w") as f:
        f.write(p.stderr)
    if p.returncode not in (0, 1):
        sys.exit(f"advise_check: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    adv = rows_of(adv_csv)
    limit = int(adv[0]["cap_bytes"] or 0)
    want = [adv[0]] + [r for r in adv[1:] if r["allocator"] != "recorded"
                       and r["alloc_conf"] in ("expandable_segments:False", "expandable_segments:True")]
    settings, seen = [], set()
    for r in want:
        if r["alloc_conf"] not in seen:
            seen.add(r["alloc_conf"])
            settings.append(r)
    print(f"advise on {args.rerun}: limit {limit} bytes; recommended {adv[0]['alloc_conf']} "
          f"(fits {adv[0].get('fits_variations')} variations, headroom {adv[0].get('headroom_bytes')} bytes)")
    out_rows, pick_failed = [], 0
    for i, r in enumerate(settings):
        conf = r["alloc_conf"]
        for h in args.heldout:
            name = os.path.basename(h).removesuffix(".gz")
            ev_csv = os.path.join(args.out, name + ".events.csv")
            if not os.path.exists(ev_csv):
                subprocess.run([args.fb, "export", "--trace", h, "--out", ev_csv], check=True, capture_output=True)
            sim_csv = os.path.join(args.out, "rerun.sim.csv")
            subprocess.run([args.fb, "run", "--trace", h, "--alloc-conf", conf, "--quiet", "--out", sim_csv]
                           + (["--limit", str(limit)] if limit else []), capture_output=True, text=True)
            sim = rows_of(sim_csv)[0] if os.path.exists(sim_csv) and rows_of(sim_csv) else {}
            mc_csv = os.path.join(args.out, "rerun.mincap.csv")
            subprocess.run([args.fb, "mincap", "--trace", h, "--alloc-conf", conf, "--precision", "0.001", "--quiet",
                            "--out", mc_csv], capture_output=True, text=True)
            mc = rows_of(mc_csv)[0] if os.path.exists(mc_csv) and rows_of(mc_csv) else {}
            real = run_json([sys.executable, os.path.join(HERE, "torch_replay.py"), ev_csv, "--conf", conf]
                            + (["--budget-bytes", str(limit)] if limit else []))
            real_ok = "error" not in real and real.get("oom_at") is None
            out_rows.append({"setting": conf, "recommended": int(i == 0), "run": name, "how": "replay",
                             "limit_bytes": limit, "sim_status": sim.get("status", ""),
                             "sim_peak_reserved": sim.get("peak_reserved", ""), "sim_mincap_bytes": mc.get("mincap_bytes", ""),
                             "sim_mincap_x": mc.get("mincap_x", ""), "variations_need_x": f"{r.get('need_x_min', '')}..{r.get('need_x_max', '')}",
                             "real_completed": int(real_ok), "real_peak_reserved": real.get("peak_reserved", ""),
                             "error": real.get("error", "")})
            pick_failed += i == 0 and not real_ok
        if args.job:
            total = args.total or device_total()
            for seed in [int(x) for x in args.job_seeds.split(",") if x]:
                cmd = [sys.executable, os.path.join(HERE, "torch_jobs.py"), "run"] + args.job.split() + [
                    "--seed", str(seed), "--conf", conf]
                if limit:
                    cmd += ["--fraction", f"{limit / total:.9f}"]
                real = run_json(cmd)
                real_ok = "error" not in real and real.get("ok")
                out_rows.append({"setting": conf, "recommended": int(i == 0), "run": f"job seed {seed}", "how": "job",
                                 "limit_bytes": limit, "sim_status": "", "sim_peak_reserved": "", "sim_mincap_bytes": "",
                                 "sim_mincap_x": "", "variations_need_x": "", "real_completed": int(bool(real_ok)),
                                 "real_peak_reserved": real.get("peak_reserved", ""), "error": real.get("error", real.get("oom", ""))})
                pick_failed += i == 0 and not real_ok
    with open(os.path.join(args.out, "rerun.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()))
        w.writeheader()
        w.writerows(out_rows)
    print(f"{'setting':48} {'run':22} {'how':6} {'sim':>10} {'sim peak':>14} {'real':>9} {'real peak':>14} "
          f"{'mincap x':>9} {'variations x':>14}")
    for o in out_rows:
        print(f"{('* ' if o['recommended'] else '  ') + o['setting'][:46]:48} {o['run'][:22]:22} {o['how']:6} "
              f"{o['sim_status'][:10]:>10} {str(o['sim_peak_reserved']):>14} {'completes' if o['real_completed'] else 'OOM':>9} "
              f"{str(o['real_peak_reserved']):>14} {str(o['sim_mincap_x']):>9} {o['variations_need_x']:>14}")
    print(f"recommendation: {'ran out of memory ' + str(pick_failed) + ' time(s)' if pick_failed else 'completed on every rerun'}"
          f" (* = recommended; table in {os.path.join(args.out, 'rerun.csv')})")
    sys.exit(1 if pick_failed else 0)


if args.rerun:
    reruns()

good = bad = 0
print(f"{'case':40} {'recommended PYTORCH_CUDA_ALLOC_CONF':52} {'predicted':>14} {'PyTorch':>14} {'diff':>8}  verdict")
for case in args.cases:
    trace, _, budget = case.partition("@")
    name = os.path.basename(trace).removesuffix(".gz") + (f"@{budget}" if budget else "")
    out_csv = os.path.join(args.out, name + ".advise.csv")
    cmd = [args.fb, "advise", "--trace", trace, "--quiet", "--out", out_csv] + (["--budget", budget] if budget else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"advise_check: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    row = first_row(out_csv)
    conf = row.get("alloc_conf", "")
    predicted = int(row["peak_reserved"] or 0)   # the recorded sequence's (worst_peak_reserved: over the variations)
    predicted_ok = row["status"] == "ok"
    events = os.path.join(args.out, os.path.basename(trace).removesuffix(".gz") + ".events.csv")
    if not os.path.exists(events):
        subprocess.run([args.fb, "export", "--trace", trace, "--out", events], check=True, capture_output=True)
    cmd = [sys.executable, os.path.join(HERE, "torch_replay.py"), events, "--conf", conf]
    if budget:
        cmd += ["--budget-bytes", str(int(row["cap_bytes"] or 0))]
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode or not lines:
        print(f"{name:40} {conf:52} torch_replay failed ({p.returncode}): {p.stderr.strip()[-300:]}")
        bad += 1
        continue
    real = json.loads(lines[-1])
    real_ok = real.get("oom_at") is None
    diff = (predicted - real["peak_reserved"]) / real["peak_reserved"] if real["peak_reserved"] else 0.0
    same = predicted_ok == real_ok and (not real_ok or abs(diff) <= args.tolerance)
    good += same
    bad += not same
    state = lambda ok: "completes" if ok else "runs out"
    print(f"{name:40} {conf:52} {predicted:14d} {real['peak_reserved']:14d} {100 * diff:+7.2f}%  "
          f"{'as predicted' if same else 'NOT as predicted'} (predicted {state(predicted_ok)}, PyTorch {state(real_ok)})")
print(f"{good} as predicted, {bad} not")
sys.exit(1 if bad else 0)
