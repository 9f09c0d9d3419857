"""graph_jobs.py - GPU-host driver (not part of the product): PyTorch jobs that use CUDA graphs
and memory pools, recorded for fragbench's private-pool model (issue 43). One process per run.

  python3 graph_jobs.py JOB [k=v ...] [--conf CONF] [--snapshot FILE.pickle]

prints one JSON line {job, params, conf, peak_reserved, peak_allocated, reserved_end, seconds, pools}.

Jobs:
  graphed     make_graphed_callables on a GPT's blocks (forward and backward graphed) for
              `steps` steps, then `eager` eager steps of varying shapes on a second model
  step_graph  a whole training step (forward, backward, capturable AdamW) captured with
              torch.cuda.graph and replayed `steps` times, then eager evaluations of other shapes
  compiled    torch.compile(mode="reduce-overhead") on an MLP stack (cudagraph trees), trained
              `steps` steps at two batch sizes, then the model deleted and an eager job
  mempool     torch.cuda.MemPool: tensors made inside use_mem_pool, a graph captured into a
              shared pool (two graphs, one pool), the pool and graphs deleted, eager work after
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_jobs  # noqa: E402

JOBS = {
    "graphed": dict(d=1024, layers=4, heads=16, batch=8, seq=512, steps=8, eager=8, seed=1),
    "step_graph": dict(d=1024, layers=4, heads=16, batch=8, seq=512, steps=6, evals=6, seed=1),
    "compiled": dict(d=2048, layers=6, batch=64, steps=6, seed=1),
    "mempool": dict(d=2048, n=12, steps=4, seed=1),
}


def params(job, kvs):
    p = dict(JOBS[job])
    for kv in kvs:
        k, _, v = kv.partition("=")
        if k not in p:
            sys.exit(f"graph_jobs: {job}: unknown parameter {k!r}")
        p[k] = int(v)
    return p


def gpt(torch, p):
    Block = torch_jobs.gpt_block(torch, p["d"], p["heads"], 4 * p["d"])   # the same block as torch_jobs.py's GPT
    return torch.nn.Sequential(*[Block() for _ in range(p["layers"])]).cuda()


def job_graphed(torch, p):
    m = gpt(torch, p)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    x0 = torch.randn(p["batch"], p["seq"], p["d"], device="cuda", requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(m, (x0,))
    for _ in range(p["steps"]):
        x = torch.randn(p["batch"], p["seq"], p["d"], device="cuda", requires_grad=True)
        graphed(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    m2 = gpt(torch, dict(p, layers=2))
    opt2 = torch.optim.AdamW(m2.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(p["seed"])
    for _ in range(p["eager"]):
        b = int(torch.randint(2, p["batch"] * 2 + 1, (1,), generator=g))
        s = int(torch.randint(64, p["seq"] * 2 + 1, (1,), generator=g))
        m2(torch.randn(b, s, p["d"], device="cuda")).float().pow(2).mean().backward()
        opt2.step()
        opt2.zero_grad(set_to_none=True)


def job_step_graph(torch, p):
    m = gpt(torch, p)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, capturable=True)
    x = torch.randn(p["batch"], p["seq"], p["d"], device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):   # warm-up on a side stream, as the docs do
            opt.zero_grad(set_to_none=True)
            m(x).float().pow(2).mean().backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss = m(x).float().pow(2).mean()
        loss.backward()
        opt.step()
    for _ in range(p["steps"]):
        x.copy_(torch.randn_like(x))
        g.replay()
    gen = torch.Generator().manual_seed(p["seed"])
    with torch.no_grad():
        for _ in range(p["evals"]):
            b = int(torch.randint(1, p["batch"] * 2 + 1, (1,), generator=gen))
            t = int(torch.randint(64, p["seq"] * 2 + 1, (1,), generator=gen))
            m(torch.randn(b, t, p["d"], device="cuda")).sum().item()
    del g, loss
    torch.cuda.synchronize()


def job_compiled(torch, p):
    nn = torch.nn
    layers = []
    for _ in range(p["layers"]):
        layers += [nn.Linear(p["d"], p["d"]), nn.GELU()]
    m = nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    cm = torch.compile(m, mode="reduce-overhead")
    for b in (p["batch"], p["batch"] * 2):
        for _ in range(p["steps"]):
            x = torch.randn(b, p["d"], device="cuda")
            cm(x).float().pow(2).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    del cm, m, opt
    torch._dynamo.reset()
    torch.cuda.synchronize()
    y = [torch.randn(p["batch"] * 4, p["d"], device="cuda") for _ in range(4)]
    del y


def job_mempool(torch, p):
    pool = torch.cuda.MemPool()
    keep = []
    with torch.cuda.use_mem_pool(pool):
        for i in range(p["n"]):
            keep.append(torch.randn(p["d"] * (i + 1), p["d"] // 4, device="cuda"))
    for i in range(0, p["n"], 2):
        keep[i] = None
    w = torch.randn(p["d"], p["d"], device="cuda")
    x = torch.randn(64, p["d"], device="cuda")
    gpool = torch.cuda.graph_pool_handle()
    graphs = []
    for k in range(2):
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            (x @ w).relu()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g, pool=gpool):
            y = (x @ w).relu() @ w.t()
            z = y * (k + 1)
        graphs.append((g, z))
    for _ in range(p["steps"]):
        for g, _ in graphs:
            g.replay()
    del graphs, g, y, z
    keep = None
    del pool
    torch.cuda.synchronize()
    eager = [torch.randn(p["d"] * 2, p["d"], device="cuda") for _ in range(6)]
    del eager


def main():
    import argparse
    ap = argparse.ArgumentParser(prog="graph_jobs.py")
    ap.add_argument("job", choices=list(JOBS))
    ap.add_argument("params", nargs="*")
    ap.add_argument("--conf", default="")
    ap.add_argument("--snapshot")
    a = ap.parse_args()
    p = params(a.job, a.params)
    if a.conf:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = a.conf
    else:
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    import torch
    torch.manual_seed(p["seed"])
    if a.snapshot:
        torch.cuda.memory._record_memory_history(max_entries=2000000, context=None, stacks="python")
    t0 = time.time()
    {"graphed": job_graphed, "step_graph": job_step_graph, "compiled": job_compiled, "mempool": job_mempool}[a.job](torch, p)
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    if a.snapshot:
        import pickle
        with open(a.snapshot, "wb") as f:
            pickle.dump(snap, f)
    pools = sorted({str(tuple(s.get("segment_pool_id", (0, 0)))) for s in snap["segments"]})
    st = torch.cuda.memory_stats()
    print(json.dumps({"job": a.job, "params": p, "conf": a.conf, "peak_reserved": int(torch.cuda.max_memory_reserved()),
                      "peak_allocated": int(st.get("allocated_bytes.all.peak", 0)),
                      "reserved_end": int(torch.cuda.memory_reserved()), "torch": torch.__version__,
                      "seconds": round(time.time() - t0, 2), "pools_at_end": pools}), flush=True)


if __name__ == "__main__":
    main()
