#!/usr/bin/env python3
"""capture.py - from a PyTorch job that runs out of GPU memory to fragbench's answer.

Use it as a wrapper (the script runs as __main__ with its arguments, as `python -m runpy`):

    python3 <fragbench>/scripts/capture.py [--out DIR] train.py ARGS...
    python3 <fragbench>/scripts/capture.py [--out DIR] -m package.module ARGS...

or as two lines at the top of a script or notebook (PYTHONPATH=<fragbench>/scripts):

    import capture
    capture.start(out="oom")

It turns PyTorch's memory history on (torch.cuda.memory._record_memory_history, with
frames) and registers PyTorch's out-of-memory observer, so the first OOM is captured
whether the script catches it or not. It writes, into DIR (default ./fragbench-capture):

    snapshot.pickle.gz   torch.cuda.memory._snapshot(), pickled and gzip'd
    oom_message.txt      PyTorch's exact error text, when the exception is seen (an
                         uncaught OOM, or a caught one once Python builds the exception)
    snapshot.meta.json   what a replay needs that a snapshot does not record: the exact
                         limit (memory fraction x the device's total, as PyTorch computes it,
                         or PyTorch's reserved + free at the OOM when no fraction was set),
                         PYTORCH_CUDA_ALLOC_CONF, torch version, device name and total, the
                         failed request, and the observer's own numbers

and prints the fragbench commands to run on them: explain, advise and fit read the side
file beside the snapshot without being told (harness/engine/snapshot_meta.h). Nothing to
install beyond PyTorch; only the first OOM of the process is written (later ones are
counted in the side file). PyTorch only (CUDA's caching allocator). docs/capture.md.
"""
import argparse
import datetime
import gzip
import json
import os
import pickle
import runpy
import shlex
import sys
import threading

FORMAT = "fragbench-capture 1"
SNAPSHOT = "snapshot.pickle.gz"
MESSAGE = "oom_message.txt"
META = "snapshot.meta.json"
HERE = os.path.dirname(os.path.abspath(__file__))

_state = None   # the one capture of this process (start() is idempotent)


class _Capture:
    def __init__(self, torch, out, max_entries, stacks, at_exit, quiet):
        self.torch = torch
        self.out = out
        self.max_entries = max_entries
        self.stacks = stacks
        self.at_exit = at_exit
        self.quiet = quiet
        self.lock = threading.Lock()
        self.fractions = {}        # device -> fraction, as set_per_process_memory_fraction was called
        self.runtime_settings = [] # torch.cuda.memory._set_allocator_settings(...) calls
        self.meta = None           # the side file's fields once an OOM was written
        self.written = False
        self.message_written = False
        self.oom_count = 0

    # -- what a replay needs --------------------------------------------------------------
    def device_index(self, device):
        if device is None:
            return self.torch.cuda.current_device()
        if isinstance(device, int):
            return device
        idx = getattr(device, "index", None)
        if idx is None and isinstance(device, str) and ":" in device:
            idx = int(device.split(":", 1)[1])
        return self.torch.cuda.current_device() if idx is None else idx

    def fraction_of(self, device):
        """The memory fraction in force on the device: tracked, else PyTorch's getter."""
        if device in self.fractions:
            return self.fractions[device]
        get = getattr(self.torch.cuda, "get_per_process_memory_fraction", None)
        if get is None:
            get = getattr(getattr(self.torch.cuda, "memory", None), "get_per_process_memory_fraction", None)
        if get is not None:
            try:
                return float(get(device))
            except Exception:
                return None
        return None

    def alloc_conf(self):
        var, conf = "", ""
        for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
            if os.environ.get(name):
                var, conf = name, os.environ[name]
                break
        if self.runtime_settings:
            conf = ",".join([c for c in [conf] + self.runtime_settings if c])
        return var, conf

    def totals(self, device):
        """(the device's total as get_device_properties says, as cudaMemGetInfo says)"""
        props = None
        try:
            props = int(self.torch.cuda.get_device_properties(device).total_memory)
        except Exception:
            pass
        info = None
        try:
            info = int(self.torch.cuda.mem_get_info(device)[1])
        except Exception:
            pass
        return props, info

    def build_meta(self, device, alloc, device_allocated, device_free, via):
        """The side file's fields. device_allocated is the observer's third number: PyTorch
        passes the allowed maximum (fraction x total) when a fraction is set, else the total."""
        torch = self.torch
        frac = self.fraction_of(device)
        props, info = self.totals(device)
        total = props or info
        var, conf = self.alloc_conf()
        try:
            reserved = int(torch.cuda.memory_reserved(device))
        except Exception:
            reserved = None
        try:
            allocated = int(torch.cuda.memory_allocated(device))
        except Exception:
            allocated = None
        try:
            name = torch.cuda.get_device_name(device)
        except Exception:
            name = ""
        m = {
            "format": FORMAT,
            "torch_version": str(getattr(torch, "__version__", "")),
            "device_index": device,
            "device_name": name,
            "device_total_bytes": total,
            "memory_fraction": None,
            "limit_bytes": None,
            "limit_source": None,
            "alloc_conf": conf,
            "alloc_conf_var": var,
            "failed_request_bytes": alloc,
            "reserved_bytes_at_oom": reserved,
            "allocated_bytes_at_oom": allocated,
            "oom_via": via,
            "observer_device": device if via == "observer" else None,
            "observer_alloc_bytes": alloc if via == "observer" else None,
            "observer_device_allocated": device_allocated,
            "observer_device_free": device_free,
            "oom_message_file": None,
            "caught": None,
            "oom_count": 1,
            "captured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        set_fraction = frac is not None and frac < 1.0
        if set_fraction:
            # PyTorch: allowed = (size_t)(fraction * (double)total), total from
            # get_device_properties (2.8+) or cudaMemGetInfo (before): the one that gives the
            # observer's number is the one PyTorch used
            pick = None
            for t in (props, info):
                if t and (device_allocated is None or int(frac * float(t)) == device_allocated):
                    pick = t
                    break
            if pick is not None:
                m["memory_fraction"] = frac
                m["device_total_bytes"] = pick
                m["limit_bytes"] = int(frac * float(pick))
                m["limit_source"] = "fraction"
            else:   # the observer's number is PyTorch's own limit: trust it, say the fraction aside
                m["memory_fraction_set"] = frac
                m["limit_bytes"] = device_allocated
                m["limit_source"] = "observer_allowed"
        elif device_allocated is not None and total and device_allocated < total and \
                (info is None or device_allocated < info):
            # a fraction set where this script could not see it: the observer's number is it
            m["limit_bytes"] = device_allocated
            m["limit_source"] = "observer_allowed"
        elif reserved is not None and device_free is not None and total and reserved + device_free < total:
            m["limit_bytes"] = reserved + device_free   # what PyTorch could hold at the OOM
            m["limit_source"] = "reserved_plus_free"
        elif total:
            m["limit_bytes"] = total
            m["limit_source"] = "total"
        return m

    # -- writing --------------------------------------------------------------------------
    def _write(self, name, data, binary):
        os.makedirs(self.out, exist_ok=True)
        path = os.path.join(self.out, name)
        tmp = path + ".tmp%d" % os.getpid()
        with open(tmp, "wb" if binary else "w") as f:
            f.write(data)
        os.replace(tmp, path)   # whole or not at all
        return path

    def write_snapshot(self):
        snap = self.torch.cuda.memory._snapshot()
        self._write(SNAPSHOT, gzip.compress(pickle.dumps(snap, protocol=4)), True)

    def write_meta(self):
        self._write(META, json.dumps(self.meta, indent=1) + "\n", False)

    def say(self, text):
        if not self.quiet:
            sys.stderr.write(text)
            sys.stderr.flush()

    def commands(self):
        return fragbench_commands(self.out)

    def on_oom(self, device, alloc, device_allocated, device_free, via):
        with self.lock:
            self.oom_count += 1
            if self.written:
                if self.meta is not None:
                    self.meta["oom_count"] = self.oom_count
                    self.write_meta()
                return
            self.written = True
            self.meta = self.build_meta(device, alloc, device_allocated, device_free, via)
            self.write_snapshot()
            self.write_meta()
        self.say("capture: out of memory on cuda:%s (a request of %s bytes): wrote %s and %s\n%s" % (
            device, alloc, os.path.join(self.out, SNAPSHOT), os.path.join(self.out, META), self.commands()))

    def observer(self, device, alloc, device_allocated, device_free):
        try:
            self.on_oom(int(device), int(alloc), int(device_allocated), int(device_free), "observer")
        except Exception as e:   # never turn an OOM into another error
            self.say("capture: could not write the capture: %s\n" % e)

    def on_message(self, text, caught):
        """PyTorch's exception text for the OOM written (once), the side file updated."""
        with self.lock:
            if not self.written or self.message_written:
                if self.meta is not None and caught is False and self.meta.get("caught") is None:
                    self.meta["caught"] = False
                    self.write_meta()
                return
            self.message_written = True
            self._write(MESSAGE, text if text.endswith("\n") else text + "\n", False)
            self.meta["oom_message_file"] = MESSAGE
            if caught is not None:
                self.meta["caught"] = caught
            self.write_meta()

    def on_uncaught(self, exc):
        if not self.written:   # no observer call (another allocator backend): the state now
            device = self.torch.cuda.current_device()
            self.on_oom(device, None, None, None, "exception")
        self.on_message(str(exc), False)

    def finish(self):
        """At exit: an OOM not seen uncaught was caught by the script; --at-exit's snapshot."""
        with self.lock:
            if self.meta is not None and self.meta.get("caught") is None and self.meta["oom_via"] != "exit":
                self.meta["caught"] = True
                self.write_meta()
        self.at_exit_snapshot()

    def at_exit_snapshot(self):
        with self.lock:
            if self.written or not self.at_exit:
                return
            self.written = True
            device = self.torch.cuda.current_device()
            self.meta = self.build_meta(device, None, None, None, "exit")
            self.meta["oom_count"] = 0
            self.write_snapshot()
            self.write_meta()
        self.say("capture: the job ended without running out of memory: wrote %s\n%s" % (
            os.path.join(self.out, SNAPSHOT), self.commands()))

    # -- hooks into PyTorch -----------------------------------------------------------------
    def install(self):
        torch = self.torch
        mem = torch.cuda.memory
        try:
            mem._record_memory_history(enabled="all", context="all", stacks=self.stacks, max_entries=self.max_entries)
        except TypeError:   # PyTorch before 2.1: the older keywords
            mem._record_memory_history(True, trace_alloc_max_entries=self.max_entries, trace_alloc_record_context=True)
        torch._C._cuda_attach_out_of_memory_observer(self.observer)

        # the memory fraction, as the job sets it
        orig_set = torch.cuda.set_per_process_memory_fraction

        def set_per_process_memory_fraction(fraction, device=None):
            r = orig_set(fraction, device)
            self.fractions[self.device_index(device)] = float(fraction)
            return r
        set_per_process_memory_fraction.__wrapped__ = orig_set
        torch.cuda.set_per_process_memory_fraction = set_per_process_memory_fraction
        if getattr(mem, "set_per_process_memory_fraction", None) is orig_set:
            mem.set_per_process_memory_fraction = set_per_process_memory_fraction
        orig_settings = getattr(mem, "_set_allocator_settings", None)
        if orig_settings is not None:
            def _set_allocator_settings(env):
                r = orig_settings(env)
                self.runtime_settings.append(str(env))
                return r
            mem._set_allocator_settings = _set_allocator_settings

        # PyTorch's exception text: when Python builds the exception (caught or not) ...
        oom = oom_error_class(torch)
        if oom is not None:
            orig_init = oom.__init__

            def __init__(exc, *args, **kwargs):
                orig_init(exc, *args, **kwargs)
                try:
                    self.on_message(str(exc), None)
                except Exception:
                    pass
            try:
                oom.__init__ = __init__
            except (TypeError, AttributeError):
                pass   # a static type: the text comes with an uncaught exception only
        # ... and when it reaches the top uncaught
        prev_hook = sys.excepthook

        def excepthook(typ, value, tb):
            if oom is not None and isinstance(value, oom):
                try:
                    self.on_uncaught(value)
                except Exception as e:
                    self.say("capture: could not write the capture: %s\n" % e)
            prev_hook(typ, value, tb)
        sys.excepthook = excepthook
        import atexit
        atexit.register(self.finish)


def oom_error_class(torch):
    return getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)


def fragbench_binary():
    built = os.path.join(os.path.dirname(HERE), "build", "fragbench")
    return built if os.access(built, os.X_OK) else "fragbench"


def fragbench_commands(out):
    """The three commands to run on a capture, one per line."""
    fb = shlex.quote(fragbench_binary())
    snap = shlex.quote(os.path.join(out, SNAPSHOT))
    return ("capture: next, with no other flags (the limit is read from %s beside the snapshot):\n"
            "  %s explain --trace %s      # why it ran out: the memory at the OOM, segment by segment\n"
            "  %s advise --trace %s       # the PYTORCH_CUDA_ALLOC_CONF to use under that limit\n"
            "  %s fit --trace %s --workload GEN --vary batch   # the largest batch under it (GEN: the generator "
            "closest to the job, `%s list`)\n") % (META, fb, snap, fb, snap, fb, snap, fb)


def start(out="fragbench-capture", max_entries=100000, stacks="python", at_exit=False, quiet=False):
    """Turn the capture on for this process (idempotent). Returns the capture."""
    global _state
    if _state is not None:
        return _state
    if stacks not in ("python", "all"):
        raise ValueError("capture.start: stacks must be 'python' or 'all', got %r" % (stacks,))
    import torch
    if not torch.cuda.is_available():
        sys.stderr.write("capture: no CUDA device visible to PyTorch: nothing to capture\n")
    _state = _Capture(torch, os.path.abspath(out), int(max_entries), stacks, at_exit, quiet)
    _state.install()
    return _state


def split_argv(argv):
    """capture.py's own options, then SCRIPT or -m MODULE: everything after is the job's."""
    takes_value = ("--out", "--max-entries", "--stacks")
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            return argv[:i], None, argv[i + 1] if i + 1 < len(argv) else None, argv[i + 2:], i + 1 >= len(argv)
        if a == "--":
            return argv[:i], argv[i + 1] if i + 1 < len(argv) else None, None, argv[i + 2:], False
        if not a.startswith("-"):
            return argv[:i], a, None, argv[i + 1:], False
        i += 2 if a in takes_value else 1
    return argv, None, None, [], False


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(
        prog="capture.py", usage="python3 capture.py [--out DIR] [--max-entries N] [--stacks python|all] "
        "[--at-exit] [--quiet] (SCRIPT | -m MODULE) [ARGS...]",
        description="Run a PyTorch script with its OOM captured for fragbench (docs/capture.md).")
    p.add_argument("--out", default="fragbench-capture", help="where the files go (default ./fragbench-capture)")
    p.add_argument("--max-entries", type=int, default=100000, help="memory history entries kept (default 100000)")
    p.add_argument("--stacks", choices=("python", "all"), default="python",
                   help="frames recorded: python (default, cheap) or all (C++ too)")
    p.add_argument("--at-exit", action="store_true", help="also write a snapshot when the job ends without an OOM")
    p.add_argument("--quiet", action="store_true", help="say nothing on stderr")
    own, script, module, args, no_module = split_argv(argv)
    a = p.parse_args(own)
    if no_module:
        p.error("-m: give the module to run")
    if module is None and script is None:
        p.error("give the script to run (or -m MODULE)")
    if a.max_entries < 1:
        p.error("--max-entries must be at least 1")
    if script is not None and not os.path.exists(script):
        p.error("%s: no such file" % script)
    start(out=a.out, max_entries=a.max_entries, stacks=a.stacks, at_exit=a.at_exit, quiet=a.quiet)
    if module is not None:
        sys.argv = [module] + args
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [script] + args
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    # the wrapper is imported by the two-line form too: one module, one state
    sys.modules.setdefault("capture", sys.modules[__name__])
    sys.exit(main())
