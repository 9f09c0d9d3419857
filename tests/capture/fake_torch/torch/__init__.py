"""A stand-in for the parts of PyTorch that scripts/capture.py touches, for testing it where
PyTorch is absent (tests/capture/test_capture.py puts this folder first on PYTHONPATH).

It models one CUDA device of the H100's size whose caching allocator fails a request as
PyTorch's does: under a memory fraction, when reserved + the request exceeds
(size_t)(fraction * total) (total from get_device_properties, or cudaMemGetInfo's with
FAKE_TORCH_OLD_TOTAL=1, as PyTorch before 2.8); without one, when the device's free memory
is short. Before raising torch.OutOfMemoryError it calls the OOM observers with PyTorch's
four numbers (device, alloc, allowed-or-total, free). torch.cuda.memory._snapshot()
returns the snapshot named by FAKE_TORCH_SNAPSHOT (a real one, so fragbench can read the
capture). FAKE_TORCH_NO_GETTER=1 removes get_per_process_memory_fraction (older PyTorch).
"""
import os
import pickle
import types

__version__ = "2.11.0+fake"

PROPS_TOTAL = 85017493504                   # H100 80GB HBM3: 79.18 GiB
INFO_TOTAL = 84974239744 if os.environ.get("FAKE_TORCH_OLD_TOTAL") else PROPS_TOTAL
OTHERS = 4 << 30                            # held by other processes and the context


class OutOfMemoryError(RuntimeError):
    pass


def _fmt(b):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= m:
            return "%.2f %s" % (b / m, unit)
    return "%d bytes" % b


class _Allocator:
    def __init__(self):
        self.fraction = None
        self.reserved = 0
        self.observers = []
        self.history = None

    def total(self):
        return INFO_TOTAL if os.environ.get("FAKE_TORCH_OLD_TOTAL") else PROPS_TOTAL

    def allowed(self):
        if self.fraction is None or self.fraction >= 1.0:
            return None
        return int(self.fraction * float(self.total()))

    def free(self):
        return INFO_TOTAL - OTHERS - self.reserved

    def alloc(self, n):
        allowed = self.allowed()
        if (allowed is not None and self.reserved + n > allowed) or n > self.free():
            free = self.free()
            for obs in list(self.observers):
                obs(0, n, allowed if allowed is not None else PROPS_TOTAL, free)
            msg = ("CUDA out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which %s is free. "
                   "Including non-PyTorch memory, this process has %s memory in use. %sOf the allocated memory %s is "
                   "allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.") % (
                _fmt(n), _fmt(PROPS_TOTAL), _fmt(free), _fmt(self.reserved + (500 << 20)),
                ("%s allowed; " % _fmt(allowed)) if allowed is not None else "", _fmt(self.reserved))
            raise OutOfMemoryError(msg)
        self.reserved += n
        return n


_A = _Allocator()


def _snapshot():
    with open(os.environ["FAKE_TORCH_SNAPSHOT"], "rb") as f:
        return pickle.load(f)


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=None, device=None):
    _A.history = {"enabled": enabled, "context": context, "stacks": stacks, "max_entries": max_entries}


def set_per_process_memory_fraction(fraction, device=None):
    _A.fraction = float(fraction)


def get_per_process_memory_fraction(device=None):
    return 1.0 if _A.fraction is None else _A.fraction


memory = types.ModuleType("torch.cuda.memory")
memory._snapshot = _snapshot
memory._record_memory_history = _record_memory_history
memory.set_per_process_memory_fraction = set_per_process_memory_fraction
if not os.environ.get("FAKE_TORCH_NO_GETTER"):
    memory.get_per_process_memory_fraction = get_per_process_memory_fraction

cuda = types.ModuleType("torch.cuda")
cuda.memory = memory
cuda.OutOfMemoryError = OutOfMemoryError
cuda.is_available = lambda: True
cuda.current_device = lambda: 0
cuda.get_device_name = lambda device=None: "NVIDIA H100 80GB HBM3"
cuda.get_device_properties = lambda device=None: types.SimpleNamespace(total_memory=PROPS_TOTAL)
cuda.mem_get_info = lambda device=None: (_A.free(), INFO_TOTAL)
cuda.memory_reserved = lambda device=None: _A.reserved
cuda.memory_allocated = lambda device=None: _A.reserved
cuda.set_per_process_memory_fraction = set_per_process_memory_fraction
if not os.environ.get("FAKE_TORCH_NO_GETTER"):
    cuda.get_per_process_memory_fraction = get_per_process_memory_fraction
cuda.fake_alloc = _A.alloc          # the test jobs' "tensor": n bytes from the allocator
cuda.fake_state = _A

_C = types.ModuleType("torch._C")
_C._cuda_attach_out_of_memory_observer = _A.observers.append
