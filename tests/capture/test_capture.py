#!/usr/bin/env python3
"""test_capture.py - scripts/capture.py's own logic where PyTorch is absent: each test runs a
small job through the wrapper or the two-line form, in a child process whose `torch` is
tests/capture/fake_torch (an allocator that fails as PyTorch's does and calls the OOM
observers with PyTorch's numbers), then checks the files written and, when build/fragbench
is built, that fragbench reads the side file. Run by `make test` (tests/test_capture.c) or
`python3 tests/capture/test_capture.py` from the repository root. The real thing on a GPU:
tests/validate/capture_check.sh."""
import gzip
import json
import os
import pickle
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(ROOT, "tests", "capture", "fake_torch")
SCRIPTS = os.path.join(ROOT, "scripts")
CAPTURE = os.path.join(SCRIPTS, "capture.py")
SNAPSHOT = os.path.join(ROOT, "tests", "variants", "oom_fraction.pickle")
FRAGBENCH = os.path.join(ROOT, "build", "fragbench")
TOTAL = 85017493504
MIB = 1 << 20


class Capture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "cap")

    def tearDown(self):
        self.tmp.cleanup()

    def run_job(self, body, wrapper=True, args=(), env=None, extra=()):
        job = os.path.join(self.dir, "job.py")
        with open(job, "w") as f:
            f.write(textwrap.dedent(body))
        e = dict(os.environ)
        e.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        e.pop("PYTORCH_ALLOC_CONF", None)
        e.update({"PYTHONPATH": FAKE + os.pathsep + SCRIPTS, "FAKE_TORCH_SNAPSHOT": SNAPSHOT, "CAPTURE_OUT": self.out})
        e.update(env or {})
        cmd = [sys.executable, CAPTURE, "--out", self.out] + list(extra) + [job] + list(args) if wrapper \
            else [sys.executable, job] + list(args)
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=60, cwd=self.dir)
        return p

    def meta(self):
        with open(os.path.join(self.out, "snapshot.meta.json")) as f:
            return json.load(f)

    def message(self):
        with open(os.path.join(self.out, "oom_message.txt")) as f:
            return f.read()

    UNCAUGHT = """
        import sys, torch
        assert __name__ == "__main__", __name__
        assert sys.argv[1:] == ["--batch", "64"], sys.argv
        torch.cuda.set_per_process_memory_fraction(0.0125)
        torch.cuda.fake_alloc(700 << 20)
        torch.cuda.fake_alloc(480 << 20)   # over 1013.49 MiB allowed
        print("not reached")
    """

    def test_uncaught_oom_under_the_wrapper_writes_the_three_files_and_the_commands(self):
        p = self.run_job(self.UNCAUGHT, args=["--batch", "64"], env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("OutOfMemoryError", p.stderr)          # the traceback, as without the wrapper
        self.assertNotIn("not reached", p.stdout)
        with gzip.open(os.path.join(self.out, "snapshot.pickle.gz")) as f:
            with open(SNAPSHOT, "rb") as g:
                self.assertEqual(pickle.load(f), pickle.load(g))
        m = self.meta()
        self.assertEqual(m["format"], "fragbench-capture 1")
        self.assertEqual(m["memory_fraction"], 0.0125)
        self.assertEqual(m["device_total_bytes"], TOTAL)
        self.assertEqual(m["limit_bytes"], int(0.0125 * TOTAL))            # PyTorch's (size_t)(fraction * total)
        self.assertEqual(m["limit_bytes"], m["observer_device_allocated"])  # = what the observer was told
        self.assertEqual(m["limit_source"], "fraction")
        self.assertEqual(m["failed_request_bytes"], 480 * MIB)
        self.assertEqual(m["alloc_conf"], "expandable_segments:True")
        self.assertEqual(m["alloc_conf_var"], "PYTORCH_CUDA_ALLOC_CONF")
        self.assertEqual(m["torch_version"], "2.11.0+fake")
        self.assertEqual(m["device_name"], "NVIDIA H100 80GB HBM3")
        self.assertEqual(m["oom_via"], "observer")
        self.assertIs(m["caught"], False)
        self.assertEqual(m["oom_message_file"], "oom_message.txt")
        msg = self.message()
        self.assertTrue(msg.startswith("CUDA out of memory. Tried to allocate 480.00 MiB."), msg)
        self.assertIn("1013.49 MiB allowed;", msg)
        for cmd in ("explain --trace", "advise --trace", "fit --trace"):
            self.assertIn(cmd + " " + os.path.join(self.out, "snapshot.pickle.gz"), p.stderr)

    def test_caught_oom_in_the_two_line_form_is_captured_with_its_message(self):
        p = self.run_job("""
            import os, torch
            import capture
            capture.start(out=os.environ["CAPTURE_OUT"])
            torch.cuda.set_per_process_memory_fraction(0.0125)
            torch.cuda.fake_alloc(700 << 20)
            try:
                torch.cuda.fake_alloc(480 << 20)
            except torch.OutOfMemoryError:
                print("caught")
            torch.cuda.fake_alloc(100 << 20)
        """, wrapper=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("caught", p.stdout)
        m = self.meta()
        self.assertIs(m["caught"], True)
        self.assertEqual(m["limit_bytes"], int(0.0125 * TOTAL))
        self.assertEqual(m["oom_count"], 1)
        self.assertIn("480.00 MiB", self.message())
        self.assertTrue(os.path.exists(os.path.join(self.out, "snapshot.pickle.gz")))

    def test_only_the_first_oom_is_written_and_later_ones_counted(self):
        p = self.run_job("""
            import torch
            torch.cuda.set_per_process_memory_fraction(0.0125)
            for n in (2000, 3000):
                try:
                    torch.cuda.fake_alloc(n << 20)
                except torch.OutOfMemoryError:
                    pass
        """)
        self.assertEqual(p.returncode, 0, p.stderr)
        m = self.meta()
        self.assertEqual(m["failed_request_bytes"], 2000 * MIB)
        self.assertEqual(m["oom_count"], 2)
        self.assertIn("Tried to allocate 1.95 GiB", self.message())

    def test_without_a_fraction_the_limit_is_reserved_plus_free(self):
        p = self.run_job("""
            import torch
            torch.cuda.fake_alloc(70 << 30)
            torch.cuda.fake_alloc(10 << 30)
        """)
        self.assertEqual(p.returncode, 1, p.stderr)
        m = self.meta()
        self.assertIsNone(m["memory_fraction"])
        self.assertEqual(m["limit_source"], "reserved_plus_free")
        self.assertEqual(m["limit_bytes"], TOTAL - (4 << 30))   # the fake's others hold 4 GiB
        self.assertEqual(m["limit_bytes"], m["reserved_bytes_at_oom"] + m["observer_device_free"])
        self.assertEqual(m["observer_device_allocated"], TOTAL)  # PyTorch passes the total then
        self.assertNotIn("allowed", self.message())

    def test_a_fraction_set_before_start_without_a_getter_is_the_observers_number(self):
        p = self.run_job("""
            import os, torch
            torch.cuda.set_per_process_memory_fraction(0.0125)   # before the capture: not tracked
            import capture
            capture.start(out=os.environ["CAPTURE_OUT"])
            torch.cuda.fake_alloc(2 << 30)
        """, wrapper=False, env={"FAKE_TORCH_NO_GETTER": "1"})
        self.assertEqual(p.returncode, 1, p.stderr)
        m = self.meta()
        self.assertEqual(m["limit_source"], "observer_allowed")
        self.assertEqual(m["limit_bytes"], int(0.0125 * TOTAL))
        self.assertIsNone(m["memory_fraction"])

    def test_the_total_pytorch_used_is_the_one_that_gives_its_limit(self):
        # before 2.8 PyTorch took the total from cudaMemGetInfo, not the device's properties
        p = self.run_job(self.UNCAUGHT, args=["--batch", "64"], env={"FAKE_TORCH_OLD_TOTAL": "1", "FAKE_TORCH_NO_GETTER": "1"})
        self.assertEqual(p.returncode, 1, p.stderr)
        m = self.meta()
        self.assertEqual(m["device_total_bytes"], 84974239744)
        self.assertEqual(m["limit_bytes"], int(0.0125 * 84974239744))
        self.assertEqual(m["memory_fraction"], 0.0125)   # tracked through the wrapped setter

    def test_at_exit_writes_a_snapshot_of_a_job_that_did_not_run_out(self):
        p = self.run_job("import torch\ntorch.cuda.fake_alloc(1 << 20)\n", extra=["--at-exit"])
        self.assertEqual(p.returncode, 0, p.stderr)
        m = self.meta()
        self.assertEqual(m["oom_via"], "exit")
        self.assertEqual(m["oom_count"], 0)
        p = self.run_job("import torch\ntorch.cuda.fake_alloc(1 << 20)\n")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_recording_is_on_with_frames(self):
        p = self.run_job("""
            import torch
            h = torch.cuda.fake_state.history
            assert h["enabled"] == "all" and h["context"] == "all" and h["stacks"] == "python", h
            assert h["max_entries"] == 5000, h
        """, extra=["--max-entries", "5000"])
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_everything_after_the_script_or_module_is_the_jobs(self):
        p = self.run_job("""
            import sys
            assert sys.argv[1:] == ["--out", "x", "-v", "-m", "y"], sys.argv
        """, args=["--out", "x", "-v", "-m", "y"])
        self.assertEqual(p.returncode, 0, p.stderr)
        os.makedirs(os.path.join(self.dir, "pkg"))
        open(os.path.join(self.dir, "pkg", "__init__.py"), "w").close()
        with open(os.path.join(self.dir, "pkg", "job.py"), "w") as f:
            f.write("import sys, torch\nassert __name__ == '__main__'\nassert sys.argv[1:] == ['--x', '1'], sys.argv\n"
                    "torch.cuda.set_per_process_memory_fraction(0.0125)\ntorch.cuda.fake_alloc(2 << 30)\n")
        e = dict(os.environ, PYTHONPATH=os.pathsep.join([FAKE, SCRIPTS, self.dir]), FAKE_TORCH_SNAPSHOT=SNAPSHOT)
        p = subprocess.run([sys.executable, CAPTURE, "--out", self.out, "-m", "pkg.job", "--x", "1"], env=e,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(self.meta()["limit_bytes"], int(0.0125 * TOTAL))

    def test_bad_arguments(self):
        p = subprocess.run([sys.executable, CAPTURE, "--out", self.out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("give the script to run", p.stderr)
        p = subprocess.run([sys.executable, CAPTURE, os.path.join(self.dir, "missing.py")], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=FAKE))
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing.py: no such file", p.stderr)

    @unittest.skipUnless(os.access(FRAGBENCH, os.X_OK), "build/fragbench not built")
    def test_fragbench_reads_the_side_file_without_a_flag(self):
        p = self.run_job(self.UNCAUGHT, args=["--batch", "64"])
        self.assertEqual(p.returncode, 1, p.stderr)
        snap = os.path.join(self.out, "snapshot.pickle.gz")
        f = subprocess.run([FRAGBENCH, "explain", "--trace", snap], capture_output=True, text=True)
        self.assertEqual(f.returncode, 0, f.stderr)
        self.assertIn("limit 1013.49 MiB (%d bytes): from snapshot.meta.json beside the snapshot (memory fraction 0.0125 of "
                      "79.18 GiB)" % int(0.0125 * TOTAL), f.stderr)
        self.assertIn("cap 1013.49 MiB", f.stdout)


if __name__ == "__main__":
    unittest.main()
