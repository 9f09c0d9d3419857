"""advise_oom_record.py - GPU-host recorder (not part of the product) for advise's OOM check
(issue 37): for each job, the run that dies and the reruns that judge advise's answer.

  python3 advise_oom_record.py OUTDIR FRAGBENCH [JOB ...]

Per job (JOBS below; torch_jobs.py specs), in OUTDIR/JOB/:
  whole.pickle      seed S0 uncapped: the whole job (what advise would see if the job fit)
  limit.json        the limit L chosen: between what expandable segments and PyTorch's default
                    need on that whole run (fragbench mincap on sim, exact for these two), so
                    that the default dies under L and expandable segments does not
  oom.pickle        seed S0 under L with PyTorch's default: the snapshot of the run that died
  oom.txt           PyTorch's own message of that OOM
  reruns.jsonl      HELD OUT: seeds S0+1, S0+2 under L, run for real with the default and with
                    expandable_segments:True (torch_jobs.py run ... --fraction L/total)
Every run is one torch_jobs.py process; one JSON line each (runs.jsonl / reruns.jsonl).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = {
    # name: (torch_jobs spec, first seed)
    "gpt_varlen_fp32": ("gpt varlen=1 batch=24 seq=1024 steps=14", 21),
    "gpt_varlen_bf16": ("gpt varlen=1 batch=40 seq=1024 steps=14 amp=bf16", 31),
    "gpt_varlen_fp16_ckpt2": ("gpt varlen=1 batch=40 bmin=8 seq=1024 steps=14 amp=fp16 ckpt=2", 41),
    "gpt_varlen_ckpt_bf16": ("gpt varlen=1 batch=32 seq=1024 steps=14 amp=bf16 ckpt=1", 51),
    "resnet_varsize": ("resnet batch=64 size=320 varsize=1 steps=12", 61),
    # the same ResNet again, the limit set lower (SHRINK): under a limit cuDNN picks smaller
    # workspaces, so the midway limit of the uncapped run let PyTorch's default complete
    "resnet_varsize_b": ("resnet batch=64 size=320 varsize=1 steps=12", 71),
}
SHRINK = {"resnet_varsize_b": 0.975}


def torch_run(spec, seed, extra, log):
    cmd = [sys.executable, os.path.join(HERE, "torch_jobs.py"), "run"] + spec.split() + ["--seed", str(seed)] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    line = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode not in (0, 3) or not line:
        sys.stderr.write("advise_oom_record: %s failed (exit %d): %s\n" % (" ".join(cmd), r.returncode, r.stderr[-1500:]))
        return None
    rec = json.loads(line[-1])
    rec["spec"] = spec
    with open(log, "a") as f:
        f.write(json.dumps(rec) + "\n")
    return rec


def mincap(fb, trace, alloc):
    r = subprocess.run([fb, "mincap", "--trace", trace, "--allocator", alloc, "--quiet"], capture_output=True, text=True)
    rows = r.stdout.splitlines()
    if len(rows) < 2:
        sys.stderr.write("advise_oom_record: mincap %s %s: %s\n" % (trace, alloc, r.stderr[-800:]))
        return 0
    head = rows[0].split(",")
    return int(rows[1].split(",")[head.index("mincap_bytes")])


def record(out, fb, name):
    spec, s0 = JOBS[name]
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    runs = os.path.join(d, "runs.jsonl")
    whole = os.path.join(d, "whole.pickle")
    w = torch_run(spec, s0, ["--snapshot", whole], runs)
    if not w:
        return
    need_default = mincap(fb, whole, "caching")
    need_exp = mincap(fb, whole, "expandable")
    total = w["total"]
    if not need_default or not need_exp or need_default <= need_exp * 1.01:
        limit = int(w["peak_allocated"] * 1.01)
        why = "default and expandable need about the same (%d, %d): 1.01 x peak allocated" % (need_default, need_exp)
    else:
        limit = (need_default + need_exp) // 2
        why = "midway between expandable's need %d and the default's %d (sim mincap of the whole run)" % (need_exp, need_default)
    limit = int(limit * SHRINK.get(name, 1.0))
    frac = limit / total
    with open(os.path.join(d, "limit.json"), "w") as f:
        json.dump({"job": name, "spec": spec, "seed": s0, "limit": int(frac * total), "fraction": frac, "total": total,
                   "why": why, "need_default": need_default, "need_expandable": need_exp}, f)
        f.write("\n")
    torch_run(spec, s0, ["--fraction", repr(frac), "--snapshot", os.path.join(d, "oom.pickle"),
                         "--oom-text", os.path.join(d, "oom.txt")], runs)
    reruns = os.path.join(d, "reruns.jsonl")
    for seed in (s0 + 1, s0 + 2):
        for conf in ("", "expandable_segments:True"):
            torch_run(spec, seed, ["--fraction", repr(frac), "--conf", conf], reruns)
    print("advise_oom_record: %s done: limit %d (%s)" % (name, int(frac * total), why), flush=True)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, fb = sys.argv[1], sys.argv[2]
    for name in sys.argv[3:] or list(JOBS):
        record(out, fb, name)


if __name__ == "__main__":
    main()
