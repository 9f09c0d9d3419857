"""torch_replay.py EVENTS.csv... [--conf PYTORCH_CUDA_ALLOC_CONF] [--name NAME] [--out-dir DIR]
- replays native traces, one after another, through PyTorch's CUDA allocator with the
given configuration (and, with --budget-bytes, under a memory fraction) (e.g. 'expandable_segments:True', 'backend:cudaMallocAsync',
'max_split_size_mb:128,garbage_collection_threshold:0.8'; without --conf: the native
caching allocator with PYTORCH_CUDA_ALLOC_CONF unset): every alloc is
torch.cuda.caching_allocator_alloc(size), every free caching_allocator_delete, every
empty_cache torch.cuda.empty_cache(); --touch writes each block once. Prints one JSON line per file with torch's own
peaks (max_memory_reserved, max_memory_allocated); between files the cache is emptied
and the peaks reset. With --out-dir also writes DIR/INPUT__NAME.json."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import events as ev  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("events", nargs="+")
ap.add_argument("--conf", default=None, help="PYTORCH_CUDA_ALLOC_CONF for this run")
ap.add_argument("--name", default="torch")
ap.add_argument("--budget-bytes", type=int, default=0,
                help="cap PyTorch at this many bytes: set_per_process_memory_fraction(N / device total)")
ap.add_argument("--touch", action="store_true",
                help="write every block once after allocation (a uint8 tensor, zero_() on the current stream), "
                     "as a program's kernels would: the driver's pool (backend:cudaMallocAsync) reuses by how far "
                     "the GPU got, so an untouched replay describes no real program; fragbench's async does the same "
                     "on cuda by default")
ap.add_argument("--out-dir", default=None)
args = ap.parse_args()
os.environ.pop("PYTORCH_ALLOC_CONF", None)
if args.conf is not None:
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = args.conf
else:
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)

import torch  # noqa: E402  (reads PYTORCH_CUDA_ALLOC_CONF at its first CUDA allocation)

torch.cuda.init()
dev = torch.device("cuda", 0)
if args.budget_bytes:
    torch.cuda.set_per_process_memory_fraction(args.budget_bytes / torch.cuda.mem_get_info(dev)[1], dev)


def one(trace, inp):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)

    def alloc(size, stream):
        try:
            if args.touch:   # the same request size; freed when the replay drops its reference
                return torch.empty(size, dtype=torch.uint8, device=dev).zero_(), 0
            return torch.cuda.caching_allocator_alloc(size, 0), 0
        except torch.OutOfMemoryError as e:
            raise MemoryError(str(e))

    def free(p):
        if not args.touch:
            torch.cuda.caching_allocator_delete(p)

    r = ev.replay(trace, alloc, free, empty_cache=torch.cuda.empty_cache, progress="torch")
    torch.cuda.synchronize()
    st = torch.cuda.memory_stats(dev)
    r.update({
        "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "touch": args.touch,
        "torch": torch.__version__,
        "peak_reserved": torch.cuda.max_memory_reserved(dev),
        "peak_in_use": torch.cuda.max_memory_allocated(dev),
        "num_alloc_retries": st.get("num_alloc_retries"),
        "device_total": torch.cuda.mem_get_info(dev)[1],
    })
    return r


ev.run_each(args.events, one, args.out_dir, args.name)
