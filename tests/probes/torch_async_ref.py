"""torch_async_ref.py - GPU-host driver (not part of the product): runs small training jobs
under PyTorch's native allocator (recording a memory snapshot) and under
backend:cudaMallocAsync (recording its peak reserved), so that the async model can be
checked against real programs that are not in the repository.
usage: python3 torch_async_ref.py OUTDIR            (runs every job, one process per backend)
       python3 torch_async_ref.py OUTDIR JOB BACKEND (one run; used by the first form)
Writes OUTDIR/JOB.pickle (native run's snapshot) and OUTDIR/ref.csv
(job,backend,peak_reserved,peak_allocated)."""
import os, subprocess, sys

JOBS = ["mlp_var", "tfm_var", "conv_var"]


def job(name, torch):
    nn = torch.nn
    dev = "cuda"
    g = torch.Generator().manual_seed(0)
    if name == "mlp_var":
        m = nn.Sequential(nn.Linear(2048, 6144), nn.GELU(), nn.Linear(6144, 6144), nn.GELU(), nn.Linear(6144, 1000)).to(dev)
        opt = torch.optim.Adam(m.parameters())
        for step in range(40):
            b = 64 + int(torch.randint(0, 960, (1,), generator=g))
            x = torch.randn(b, 2048, device=dev)
            loss = m(x).logsumexp(1).mean()
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    elif name == "tfm_var":
        layer = nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True)
        m = nn.TransformerEncoder(layer, 6).to(dev)
        head = nn.Linear(768, 8000).to(dev)
        opt = torch.optim.AdamW(list(m.parameters()) + list(head.parameters()))
        for step in range(20):
            seq = 64 + 32 * int(torch.randint(0, 14, (1,), generator=g))
            x = torch.randn(8, seq, 768, device=dev)
            loss = head(m(x)).logsumexp(-1).mean()
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    elif name == "conv_var":
        m = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(),
                          nn.Conv2d(128, 256, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(256, 100)).to(dev)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        for step in range(30):
            side = 64 + 16 * int(torch.randint(0, 13, (1,), generator=g))
            x = torch.randn(32, 3, side, side, device=dev)
            loss = m(x).logsumexp(1).mean()
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


def one(out, name, backend):
    if backend == "async":
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
    import torch
    torch.manual_seed(0)
    if backend == "native":
        torch.cuda.memory._record_memory_history(context=None)
    job(name, torch)
    st = torch.cuda.memory_stats()
    if backend == "native":
        import pickle
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            pickle.dump(torch.cuda.memory._snapshot(), f)
    res = torch.cuda.max_memory_reserved()
    alloc = st.get("allocated_bytes.all.peak", torch.cuda.max_memory_allocated())
    with open(os.path.join(out, "ref.csv"), "a") as f:
        f.write("%s,%s,%d,%d\n" % (name, backend, res, alloc))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    if len(sys.argv) == 4:
        one(out, sys.argv[2], sys.argv[3])
        return
    with open(os.path.join(out, "ref.csv"), "w") as f:
        f.write("job,backend,peak_reserved,peak_allocated\n")
    for name in JOBS:
        for backend in ("native", "async"):
            r = subprocess.run([sys.executable, __file__, out, name, backend])
            print(name, backend, "exit", r.returncode, flush=True)
    print(open(os.path.join(out, "ref.csv")).read())


if __name__ == "__main__":
    main()
