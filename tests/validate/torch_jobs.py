"""torch_jobs.py - GPU-host driver (not part of the product): the real PyTorch training jobs
that fragbench's models are checked against, one process per run.

  python3 torch_jobs.py run JOB [k=v ...] [--seed S] [--conf CONF] [--fraction F]
                        [--snapshot FILE.pickle] [--oom-text FILE]
      one run; prints one JSON line {job, params, seed, conf, fraction, limit, ok,
      peak_reserved, peak_allocated, total, seconds}; exit 0 completed, 3 out of memory
      (the snapshot, if asked, is written either way: at the OOM it shows the failure).
  python3 torch_jobs.py bisect JOB [k=v ...] --vary batch --lo 1 --hi 64 --fraction F
                        [--conf CONF] [--csv FILE]
      the largest value of the parameter that completes under the fraction (one process
      per trial); one CSV row per trial (job,conf,fraction,limit_bytes,vary,value,ok,
      peak_reserved,peak_allocated,params).

Jobs (parameters and defaults in JOBS below):
  gpt     decoder-only transformer (pre-LN blocks, causal SDPA, GELU MLP, tied-free head),
          AdamW; amp=none|bf16|fp16 (autocast), ckpt=N (checkpoint every N-th block; 0 off),
          varlen=1 (batch in [bmin,batch], seq in [smin,seq] drawn every step from the seed),
          side=1 (next batch prefetched on a side stream, record_stream on the compute
          stream), evals=N (an eval forward under no_grad after each train step),
          accum=N (gradient accumulation micro-steps per optimizer step)
  resnet  torchvision ResNet-50, SGD momentum; varsize=1 (side in [128,size] step 32 drawn
          every step), cl=1 (channels-last), amp
  mixed   gpt (train steps + evals) then resnet in the same process, the gpt freed between
  ddp     gpt whose gradients go through 25 MiB flat buckets after backward, as DDP does
  mlp_var, tfm_var, conv_var   the jobs of tests/probes/torch_async_ref.py
"""
import json
import os
import subprocess
import sys
import time

JOBS = {
    "gpt": dict(d=1024, layers=8, heads=16, ffn=4096, vocab=32000, batch=8, seq=512, steps=4, amp="none", ckpt=0,
                varlen=0, bmin=4, smin=64, side=0, evals=0, accum=1),
    "resnet": dict(batch=64, size=224, steps=4, varsize=0, cl=0, amp="none"),
    "mixed": dict(d=1024, layers=8, heads=16, ffn=4096, vocab=32000, batch=8, seq=512, steps=3, evals=1, amp="none",
                  rbatch=64, size=224, rsteps=3),
    "ddp": dict(d=1024, layers=8, heads=16, ffn=4096, vocab=32000, batch=8, seq=512, steps=4, amp="none", bucket_mb=25),
    "mlp_var": dict(steps=40),
    "tfm_var": dict(steps=20),
    "conv_var": dict(steps=30),
}


def parse_params(job, kvs):
    if job not in JOBS:
        sys.exit(f"torch_jobs: unknown job {job!r}; known: {' '.join(JOBS)}")
    p = dict(JOBS[job])
    for kv in kvs:
        k, _, v = kv.partition("=")
        if k not in p:
            sys.exit(f"torch_jobs: job {job}: unknown parameter {k!r}; known: {' '.join(p)}")
        p[k] = type(p[k])(v) if not isinstance(p[k], str) else v
    return p


def autocast(torch, amp):
    if amp == "none":
        import contextlib
        return contextlib.nullcontext()
    return torch.autocast("cuda", dtype=torch.bfloat16 if amp == "bf16" else torch.float16)


def gpt_block(torch, d, heads, ffn):
    """One pre-norm transformer block (causal attention, GELU MLP): the module class;
    graph_jobs.py builds its blocks from it too."""
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, ffn)
            self.fc2 = nn.Linear(ffn, d)

        def forward(self, x):
            b, t, dd = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, heads, dd // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, dd))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    return Block


def make_gpt(torch, p):
    import torch.utils.checkpoint  # noqa: F401 (torch.utils.checkpoint.checkpoint)
    nn = torch.nn
    Block = gpt_block(torch, p["d"], p["heads"], p["ffn"])

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(p["vocab"], p["d"])
            self.pos = nn.Embedding(max(p["seq"], 1024), p["d"])
            self.blocks = nn.ModuleList(Block() for _ in range(p["layers"]))
            self.ln = nn.LayerNorm(p["d"])
            self.head = nn.Linear(p["d"], p["vocab"], bias=False)

        def forward(self, idx, ckpt=0):
            t = idx.shape[1]
            x = self.emb(idx) + self.pos(torch.arange(t, device=idx.device))
            for i, blk in enumerate(self.blocks):
                if ckpt and self.training and i % ckpt == 0:
                    x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
                else:
                    x = blk(x)
            return self.head(self.ln(x))

    return GPT().cuda()


def gpt_shapes(torch, p, seed, steps):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        if p.get("varlen", 0):
            b = int(torch.randint(p["bmin"], p["batch"] + 1, (1,), generator=g))
            s = int(torch.randint(p["smin"], p["seq"] + 1, (1,), generator=g))
        else:
            b, s = p["batch"], p["seq"]
        yield b, s, int(torch.randint(0, 2**31 - 1, (1,), generator=g))


def run_gpt(torch, p, seed, buckets=None):
    F = torch.nn.functional
    m = make_gpt(torch, p)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    side = torch.cuda.Stream() if p.get("side", 0) else None
    main = torch.cuda.current_stream()

    def batch_on(stream, b, s, bseed):
        gg = torch.Generator(device="cpu").manual_seed(bseed)
        cpu = torch.randint(0, p["vocab"], (b, s + 1), generator=gg).pin_memory() if side else \
            torch.randint(0, p["vocab"], (b, s + 1), generator=gg)
        with torch.cuda.stream(stream):
            x = cpu.cuda(non_blocking=True)
        if stream is not main:
            main.wait_stream(stream)
            x.record_stream(main)
        return x

    shapes = list(gpt_shapes(torch, p, seed, p["steps"]))
    nxt = batch_on(side or main, *shapes[0])
    for i, _ in enumerate(shapes):
        x = nxt
        if i + 1 < len(shapes):
            nxt = batch_on(side or main, *shapes[i + 1])
        m.train()
        accum = max(1, p.get("accum", 1))
        for a in range(accum):
            xa = x if accum == 1 else x.chunk(accum)[a]
            with autocast(torch, p["amp"]):
                logits = m(xa[:, :-1], ckpt=p.get("ckpt", 0))
                loss = F.cross_entropy(logits.float().view(-1, p["vocab"]), xa[:, 1:].reshape(-1))
            (loss / accum).backward()
            del logits, loss
        if buckets:
            buckets(m)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x
        for _ in range(p.get("evals", 0)):
            m.eval()
            with torch.no_grad(), autocast(torch, p["amp"]):
                b, s, bseed = shapes[i]
                y = batch_on(main, b, s, bseed + 1)
                out = m(y[:, :-1])
                _ = F.cross_entropy(out.float().view(-1, p["vocab"]), y[:, 1:].reshape(-1)).item()
                del out, y
    torch.cuda.synchronize()
    return m, opt


def ddp_buckets(torch, bucket_mb):
    from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

    def go(m):
        grads = [q.grad for q in m.parameters() if q.grad is not None][::-1]
        bucket, size = [], 0
        for gr in grads + [None]:
            if gr is not None:
                bucket.append(gr)
                size += gr.numel() * gr.element_size()
            if bucket and (gr is None or size >= bucket_mb << 20):
                flat = _flatten_dense_tensors(bucket)
                flat.mul_(1.0)   # the all-reduce of one rank
                for dst, src in zip(bucket, _unflatten_dense_tensors(flat, bucket)):
                    dst.copy_(src)
                del flat
                bucket, size = [], 0
    return go


def run_resnet(torch, p, seed, batch=None, steps=None):
    import torchvision
    F = torch.nn.functional
    m = torchvision.models.resnet50().cuda()
    if p.get("cl", 0):
        m = m.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(seed)
    b = batch or p["batch"]
    for _ in range(steps or p["steps"]):
        side = p["size"]
        if p.get("varsize", 0):
            side = 128 + 32 * int(torch.randint(0, (p["size"] - 128) // 32 + 1, (1,), generator=g))
        x = torch.randn(b, 3, side, side, device="cuda")
        if p.get("cl", 0):
            x = x.to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (b,), device="cuda")
        with autocast(torch, p.get("amp", "none")):
            loss = F.cross_entropy(m(x).float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss
    torch.cuda.synchronize()


def run_job(torch, job, p, seed):
    if job == "gpt":
        run_gpt(torch, p, seed)
    elif job == "ddp":
        run_gpt(torch, p, seed, buckets=ddp_buckets(torch, p["bucket_mb"]))
    elif job == "resnet":
        run_resnet(torch, p, seed)
    elif job == "mixed":
        gp = dict(p, varlen=0, side=0, ckpt=0, accum=1)
        m, opt = run_gpt(torch, gp, seed)
        del m, opt
        run_resnet(torch, dict(size=p["size"], amp=p["amp"]), seed, batch=p["rbatch"], steps=p["rsteps"])
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probes"))
        import torch_async_ref
        torch_async_ref.job(job, torch)


def cmd_run(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="torch_jobs.py run")
    ap.add_argument("job")
    ap.add_argument("params", nargs="*")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--conf", default="")
    ap.add_argument("--fraction", type=float, default=0)
    ap.add_argument("--snapshot")
    ap.add_argument("--oom-text")
    a = ap.parse_args(argv)
    p = parse_params(a.job, a.params)
    if a.conf:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = a.conf
    else:
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    import torch
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = False
    total = torch.cuda.get_device_properties(0).total_memory
    if a.fraction:
        torch.cuda.set_per_process_memory_fraction(a.fraction)
    if a.snapshot:
        torch.cuda.memory._record_memory_history(max_entries=2000000, context=None, stacks="python")
    t0 = time.time()
    ok, msg = True, ""
    try:
        run_job(torch, a.job, p, a.seed)
    except torch.cuda.OutOfMemoryError as e:
        ok, msg = False, str(e)
    if a.snapshot:
        import pickle
        with open(a.snapshot, "wb") as f:
            pickle.dump(torch.cuda.memory._snapshot(), f)
    if a.oom_text and msg:
        with open(a.oom_text, "w") as f:
            f.write(msg + "\n")
    st = torch.cuda.memory_stats()
    res = {"job": a.job, "params": p, "seed": a.seed, "conf": a.conf, "fraction": a.fraction,
           "limit": int(a.fraction * total) if a.fraction else 0, "ok": ok,
           "peak_reserved": int(torch.cuda.max_memory_reserved()),
           "peak_allocated": int(st.get("allocated_bytes.all.peak", torch.cuda.max_memory_allocated())),
           "total": int(total), "seconds": round(time.time() - t0, 2)}
    if msg:
        res["oom"] = msg.splitlines()[0][:400]
    print(json.dumps(res), flush=True)
    return 0 if ok else 3


def trial(job, params, value, vary, a):
    cmd = [sys.executable, os.path.abspath(__file__), "run", job] + params + [f"{vary}={value}", "--fraction",
                                                                             str(a.fraction), "--conf", a.conf]
    r = subprocess.run(cmd, capture_output=True, text=True)
    line = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode not in (0, 3) or not line:
        sys.stderr.write(f"torch_jobs: trial {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stderr[-2000:]}\n")
        return None
    return json.loads(line[-1])


def cmd_bisect(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="torch_jobs.py bisect")
    ap.add_argument("job")
    ap.add_argument("params", nargs="*")
    ap.add_argument("--vary", default="batch")
    ap.add_argument("--lo", type=int, default=1)
    ap.add_argument("--hi", type=int, default=64)
    ap.add_argument("--fraction", type=float, required=True)
    ap.add_argument("--conf", default="")
    ap.add_argument("--csv")
    ap.add_argument("--name", default="")
    a = ap.parse_args(argv)
    rows = []

    def probe(v):
        r = trial(a.job, a.params, v, a.vary, a)
        if r is None:
            return None
        rows.append(r)
        return r["ok"]

    lo, hi = a.lo - 1, a.hi + 1          # lo: largest known ok (or below range), hi: smallest known OOM
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok = probe(mid)
        if ok is None:
            break
        if ok:
            lo = mid
        else:
            hi = mid
    if a.csv:
        new = not os.path.exists(a.csv)
        with open(a.csv, "a") as f:
            if new:
                f.write("job,conf,fraction,limit_bytes,vary,value,ok,peak_reserved,peak_allocated,params\n")
            for r in rows:
                f.write("%s,%s,%g,%d,%s,%d,%d,%d,%d,\"%s\"\n" % (a.name or a.job, a.conf or "default", a.fraction,
                        r["limit"], a.vary, r["params"][a.vary], int(r["ok"]), r["peak_reserved"], r["peak_allocated"],
                        " ".join(a.params)))
    print(json.dumps({"job": a.name or a.job, "conf": a.conf or "default", "fraction": a.fraction, "vary": a.vary,
                      "max_value": lo, "first_oom": hi if hi <= a.hi else None}), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "bisect"):
        sys.exit(__doc__)
    sys.exit({"run": cmd_run, "bisect": cmd_bisect}[sys.argv[1]](sys.argv[2:]))
