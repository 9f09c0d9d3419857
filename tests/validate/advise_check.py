"""advise_check.py [--fb build/fragbench] [--out DIR] [CASE...] - on a GPU host: does the
setting `fragbench advise` recommends behave in real PyTorch as it predicts?

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
args = ap.parse_args()
os.makedirs(args.out, exist_ok=True)


def first_row(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    if not rows:
        sys.exit(f"{path}: no rows: advise tried no setting")
    return rows[0]


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
    predicted = int(row["peak_reserved"] or 0)
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
