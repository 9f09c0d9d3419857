"""jax_replay.py EVENTS.csv [--name NAME] [--out-dir DIR] - replays a native trace through XLA's BFC
allocator as JAX runs it: every alloc is a jax.device_put of an exact-size uint8 buffer
(a view of one host buffer made once, so no host allocation per event) and
block_until_ready; every free is .delete(). Prints one JSON line with the device's own
memory_stats() peaks (peak_bytes_in_use, peak_pool_bytes, bytes_limit). The preallocation
mode is JAX's: set XLA_PYTHON_CLIENT_PREALLOCATE / XLA_PYTHON_CLIENT_MEM_FRACTION in the
environment (run.sh does). Run each mode in its own process."""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import events as ev  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("events")
ap.add_argument("--name", default="jax")
ap.add_argument("--out-dir", default=None)
args = ap.parse_args()

import jax  # noqa: E402  (after the environment is final)

dev = jax.devices()[0]


def one(trace, inp):
    host = np.zeros(max(trace[2]) if trace[2] else 1, dtype=np.uint8)   # made once, viewed per alloc

    def alloc(size, stream):
        try:
            x = jax.device_put(host[:size], dev)
            x.block_until_ready()
        except Exception as e:  # XlaRuntimeError RESOURCE_EXHAUSTED
            if "RESOURCE_EXHAUSTED" in str(e) or "out of memory" in str(e).lower():
                raise MemoryError(str(e))
            raise
        return x, size

    r = ev.replay(trace, alloc, lambda x: x.delete(), progress="jax")
    st = dev.memory_stats() or {}
    r.update({
        "mode": "prealloc" if os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true").lower() not in ("false", "0")
        else "growth",
        "mem_fraction": os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", ".75"),
        "jax": jax.__version__,
        "peak_reserved": st.get("peak_pool_bytes", st.get("peak_bytes_reserved")),
        "peak_in_use": st.get("peak_bytes_in_use"),
        "bytes_limit": st.get("bytes_limit"),
        "stats": {k: v for k, v in st.items() if isinstance(v, int)},
    })
    return r


# one file per process: XLA's peaks cannot be reset, and its pool is never given back
ev.run_each([args.events], one, args.out_dir, args.name)
