"""torch_replay.py EVENTS.csv [--conf PYTORCH_CUDA_ALLOC_CONF] [--input NAME] - replays a
native trace through PyTorch's CUDA allocator with the given configuration (e.g.
'expandable_segments:True', 'backend:cudaMallocAsync', 'max_split_size_mb:128'; default:
the native caching allocator as configured by the environment): every alloc is
torch.cuda.caching_allocator_alloc(size), every free caching_allocator_delete, every
empty_cache torch.cuda.empty_cache(). Prints one JSON line with torch's own peaks
(max_memory_reserved, max_memory_allocated)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import events as ev  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("events")
ap.add_argument("--conf", default=None, help="PYTORCH_CUDA_ALLOC_CONF for this run")
ap.add_argument("--input", default="")
args = ap.parse_args()
if args.conf is not None:
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = args.conf
trace = ev.read(args.events)

import torch  # noqa: E402  (reads PYTORCH_CUDA_ALLOC_CONF at its first CUDA allocation)

torch.cuda.init()
dev = torch.device("cuda", 0)


def alloc(size, stream):
    try:
        p = torch.cuda.caching_allocator_alloc(size, 0)
    except torch.OutOfMemoryError as e:
        raise MemoryError(str(e))
    return p, 0


def free(p):
    torch.cuda.caching_allocator_delete(p)


r = ev.replay(trace, alloc, free, empty_cache=torch.cuda.empty_cache, progress="torch")
st = torch.cuda.memory_stats(dev)
free_b, total_b = torch.cuda.mem_get_info(dev)
r.update({
    "allocator": "torch",
    "input": args.input,
    "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    "torch": torch.__version__,
    "peak_reserved": torch.cuda.max_memory_reserved(dev),
    "peak_in_use": torch.cuda.max_memory_allocated(dev),
    "num_alloc_retries": st.get("num_alloc_retries"),
    "device_total": total_b,
})
ev.emit(r)
