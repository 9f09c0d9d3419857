#!/bin/sh
# torch_percall.sh [FRAGBENCH] - on a GPU host with PyTorch: host ns per allocator call of
# PyTorch's own C++ allocators (torch_percall.cpp: raw_alloc / raw_delete, best of PASSES
# passes in one process) against fragbench's caching and expandable (`fragbench percall`:
# run's ns_per_op, the fastest of RUNS passes in one process, on sim and on cuda: warm - one
# strategy, its cache kept between passes, as PyTorch's is - and fresh - a new strategy each
# pass), on each bundled trace; one table.
#
#   sh tests/probes/torch_percall.sh [build/fragbench]      (run `make` first)
#
#   PERCALL_OUT=DIR       exports, build, logs, rows.tsv and table.txt (default build/percall)
#   PERCALL_TRACES="..."  traces (default: the four bundled PyTorch snapshots)
#   PERCALL_RUNS=N        fragbench passes per cell in one process, fastest kept (default 5)
#   PERCALL_PASSES=N      PyTorch passes per process, best kept (default 5)
#   PERCALL_ROUNDS=N      rounds of (PyTorch, fragbench sim, fragbench cuda) one after the
#                         other, each side's best over them kept (default 5)
#   PYTHON=python3        the Python that has torch
#   CXX=g++
#
# PyTorch is pointed at its own CUDA allocator only: PYTORCH_CUDA_ALLOC_CONF unset for
# caching, expandable_segments:True for expandable (PYTORCH_ALLOC_CONF unset for both).
# PyTorch's peak reserved after its first pass (from an empty cache) is shown beside
# fragbench's, as a check that both replayed the same thing under the same setting.
# Exit 0 when every cell was measured, 1 when some were not (table printed all the same),
# 2 when nothing could be built.
set -eu
FB=${1:-build/fragbench}
OUT=${PERCALL_OUT:-build/percall}
PY=${PYTHON:-python3}
CXX=${CXX:-g++}
RUNS=${PERCALL_RUNS:-5}
ROUNDS=${PERCALL_ROUNDS:-5}
PASSES=${PERCALL_PASSES:-5}
TRACES=${PERCALL_TRACES:-"tests/data/gpt_train.pickle.gz tests/data/leaky_losses.pickle.gz tests/data/resnet_varsize.pickle.gz tests/data/gpt_train_short_frames.pickle"}
HERE=$(dirname "$0")
die() { echo "torch_percall.sh: $*" >&2; exit 2; }
log() { echo "torch_percall.sh: $* ($(date -u +%H:%M:%S))" >&2; }

[ -x "$FB" ] || die "$FB not built: run make first (with the CUDA toolkit, for the cuda column)"
command -v "$PY" >/dev/null 2>&1 || die "$PY not found (PYTHON=... names the Python that has torch)"
command -v "$CXX" >/dev/null 2>&1 || die "$CXX not found (CXX=... names a C++ compiler)"
mkdir -p "$OUT"

# 1. what to build against: torch's headers and libraries, the CUDA headers, the C++ ABI
"$PY" - > "$OUT/torch_flags.txt" 2> "$OUT/torch_flags.log" <<'EOF' || { cat "$OUT/torch_flags.log" >&2; die "cannot read torch's build settings with $PY (is PyTorch installed for it?)"; }
import glob, os, shutil, sys
import torch
if not torch.cuda.is_available():
    sys.exit("torch %s sees no CUDA device (torch.cuda.is_available() is False)" % torch.__version__)
tdir = os.path.dirname(torch.__file__)
inc, cuda_home = [], None
try:   # cpp_extension needs setuptools; without it, torch's own include folders
    import torch.utils.cpp_extension as ce
    cuda_home = getattr(ce, "CUDA_HOME", None)
    for kw in ({"device_type": "cuda"}, {"cuda": True}, {}):
        try:
            inc = list(ce.include_paths(**kw))
            break
        except Exception:
            continue
except Exception:
    pass
if not inc:
    inc = [os.path.join(tdir, "include"), os.path.join(tdir, "include", "torch", "csrc", "api", "include")]
if not any(os.path.exists(os.path.join(d, "c10", "cuda", "CUDACachingAllocator.h")) for d in inc):
    sys.exit("c10/cuda/CUDACachingAllocator.h not found under %s (a PyTorch without its C++ headers?)" % ", ".join(inc))
cands = []
if cuda_home:
    cands.append(os.path.join(cuda_home, "include"))
nvcc = shutil.which("nvcc")
if nvcc:
    cands.append(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include"))
for env in ("CUDA_HOME", "CUDA_PATH"):
    if os.environ.get(env):
        cands.append(os.path.join(os.environ[env], "include"))
cands.append("/usr/local/cuda/include")
site = os.path.dirname(os.path.dirname(torch.__file__))
cands += sorted(glob.glob(os.path.join(site, "nvidia", "*", "include")))
cands += sorted(glob.glob(os.path.join(site, "nvidia", "*", "*", "include")))
if not any(os.path.exists(os.path.join(d, "cuda_runtime_api.h")) for d in inc):
    hit = [d for d in cands if os.path.exists(os.path.join(d, "cuda_runtime_api.h"))]
    if not hit:
        sys.exit("no cuda_runtime_api.h found (looked in %s): install the CUDA toolkit (nvcc) or set CUDA_HOME" % ", ".join(cands))
    inc.append(hit[0])
lib = os.path.join(tdir, "lib")
for name in ("libc10.so", "libc10_cuda.so"):
    if not os.path.exists(os.path.join(lib, name)):
        sys.exit("%s not in %s" % (name, lib))
extra = sorted(set(os.path.dirname(p) for p in glob.glob(os.path.join(site, "nvidia", "**", "lib*.so*"), recursive=True)))
print("TORCH_VERSION=%s" % torch.__version__)
print("ABI=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI))
print("INC=%s" % " ".join("-I" + d for d in inc))
print("LIB=%s" % lib)
print("LINKPATHS=%s" % " ".join("-Wl,-rpath-link," + d for d in extra))
EOF
TORCH_VERSION=$(sed -n 's/^TORCH_VERSION=//p' "$OUT/torch_flags.txt")
ABI=$(sed -n 's/^ABI=//p' "$OUT/torch_flags.txt")
INC=$(sed -n 's/^INC=//p' "$OUT/torch_flags.txt")
TLIB=$(sed -n 's/^LIB=//p' "$OUT/torch_flags.txt")
LINKPATHS=$(sed -n 's/^LINKPATHS=//p' "$OUT/torch_flags.txt")
log "torch $TORCH_VERSION, libraries in $TLIB, _GLIBCXX_USE_CXX11_ABI=$ABI"
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] ||
  log "warning: nvcc not on PATH (only the CUDA headers are needed here; fragbench's cuda column needs a CUDA build of it)"

# 2. build the probe: C++20 or C++17, whichever torch's headers take; -DFB_MINIMAL (no
# emptyCache / stats calls) as a last resort against an API change
PROBE="$OUT/torch_percall"
built=""
for std in c++20 c++17; do
  for min in "" "-DFB_MINIMAL"; do
    # shellcheck disable=SC2086
    if "$CXX" -std=$std -O2 $min -D_GLIBCXX_USE_CXX11_ABI="$ABI" $INC "$HERE/torch_percall.cpp" -o "$PROBE" \
         -L"$TLIB" -Wl,-rpath,"$TLIB" $LINKPATHS -Wl,--allow-shlib-undefined -lc10_cuda -lc10 \
         > "$OUT/build_${std}${min:+_min}.log" 2>&1; then
      built="-std=$std $min"; break 2
    fi
  done
done
[ -n "$built" ] || { sed -n 1,40p "$OUT/build_c++20.log" >&2; die "the probe did not build (logs: $OUT/build_*.log)"; }
log "probe built ($built)"

# 3. per trace: export once, then per strategy PyTorch's probe, fragbench on sim and on cuda
csv_field() {   # csv_field FILE COLUMN: the last row's COLUMN of a fragbench results CSV
  "$PY" - "$1" "$2" <<'EOF' || true
import csv, sys
try:
    rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
    row = dict(zip(rows[0], rows[-1]))
    print(row.get(sys.argv[2], "") if row.get("status", "").startswith("ok") else "")
except Exception:
    print("")
EOF
}
best_of() {   # best_of TRACE STRATEGY DEVICE: "warm fresh peak_reserved" (the fastest of RUNS passes each way, in one process), or "- - -"
  f="$OUT/run_$(basename "$1")_$2_$3.csv"
  o="$OUT/run_$(basename "$1")_$2_$3.out"
  rm -f "$f"
  if ! "$FB" percall --trace "$1" --allocator "$2" --device "$3" --passes "$RUNS" --quiet --out "$f" > "$o" 2> "$OUT/run_$(basename "$1")_$2_$3.log"; then
    log "fragbench $2 on $3 for $1 failed (see $OUT/run_$(basename "$1")_$2_$3.log)"
    echo "- - -"
    return 0
  fi
  fresh=$(awk -v a="$2" 'NR > 1 && $2 == a {print $4; exit}' "$o")
  warm=$(awk -v a="$2" 'NR > 1 && $2 == a && $5 != "nan" {print $5; exit}' "$o")
  peak=$(csv_field "$f" peak_reserved)
  echo "${warm:--} ${fresh:--} ${peak:--}"
}

lower() {   # lower A B: 1 when A is a number and B is "-" or a larger number
  awk -v a="$1" -v b="$2" 'BEGIN {print (a != "-" && a != "" && (b == "-" || b == "" || a + 0 < b + 0)) ? 1 : 0}'
}

ROWS="$OUT/rows.tsv"
printf 'trace\tstrategy\ttorch_ns\ttorch_passes\ttorch_peak_reserved\tsim_ns\tsim_fresh_ns\tsim_peak_reserved\tcuda_ns\tcuda_fresh_ns\tcuda_peak_reserved\n' > "$ROWS"
for t in $TRACES; do
  [ -f "$t" ] || { log "no such trace $t (run from the repository root)"; continue; }
  name=$(basename "$t")
  ev="$OUT/$name.events.csv"
  "$FB" export --trace "$t" --out "$ev" --quiet > "$OUT/$name.export.log" 2>&1 ||
    { log "export of $t failed (see $OUT/$name.export.log)"; continue; }
  for s in caching expandable; do
    case $s in
      caching) conf="";;
      expandable) conf="expandable_segments:True";;
    esac
    # ROUNDS rounds, each PyTorch's probe then fragbench on sim and on cuda, one right after
    # the other; each side's best over the rounds: a slow spell of the shared host (seen:
    # the same binary 50% slower from one minute to the next) then weighs on both sides
    tns="" tpass="" tpeak="" sim_w="-" sim_f="-" sim_p="-" cuda_w="-" cuda_f="-" cuda_p="-"
    r=0
    while [ "$r" -lt "$ROUNDS" ]; do
      r=$((r + 1))
      line=""
      if [ -n "$conf" ]; then
        line=$(env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF="$conf" timeout 600 "$PROBE" "$ev" "$PASSES" 2> "$OUT/torch_${name}_$s.log") || line=""
      else
        line=$(env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF timeout 600 "$PROBE" "$ev" "$PASSES" 2> "$OUT/torch_${name}_$s.log") || line=""
      fi
      [ -n "$line" ] || log "PyTorch probe failed for $name $s (see $OUT/torch_${name}_$s.log)"
      b=$(echo "$line" | sed -n 's/.*best_ns_per_call=\([^ ]*\).*/\1/p')
      if [ -n "$b" ] && { [ -z "$tns" ] || [ "$(lower "$b" "$tns")" = 1 ]; }; then
        tns=$b
        tpass=$(echo "$line" | sed -n 's/.*pass_ns_per_call=\([^ ]*\).*/\1/p')
      fi
      [ -n "$tpeak" ] || tpeak=$(echo "$line" | sed -n 's/.*peak_reserved=\([^ ]*\).*/\1/p')
      set -- $(best_of "$t" "$s" sim)
      [ "$(lower "$1" "$sim_w")" = 1 ] && sim_w=$1
      [ "$(lower "$2" "$sim_f")" = 1 ] && sim_f=$2
      [ "$sim_p" = - ] && sim_p=$3
      set -- $(best_of "$t" "$s" cuda)
      [ "$(lower "$1" "$cuda_w")" = 1 ] && cuda_w=$1
      [ "$(lower "$2" "$cuda_f")" = 1 ] && cuda_f=$2
      [ "$cuda_p" = - ] && cuda_p=$3
    done
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$s" "${tns:--}" "${tpass:--}" "${tpeak:--}" \
      "$sim_w" "$sim_f" "$sim_p" "$cuda_w" "$cuda_f" "$cuda_p" >> "$ROWS"
    log "$name $s: torch ${tns:--} ns/call; fragbench warm (fresh) sim $sim_w ($sim_f), cuda $cuda_w ($cuda_f) ns/op"
  done
done

# 4. the table (exit 1 when a cell is missing)
rc=0
"$PY" - "$ROWS" "$TORCH_VERSION" "$RUNS" "$PASSES" "$ROUNDS" > "$OUT/table.txt" <<'EOF' || rc=$?
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
def ratio(a, b):
    a, b = num(a), num(b)
    return "%.1fx" % (a / b) if a and b else "-"
print("PyTorch %s raw_alloc/raw_delete (best of %s passes, one process, its cache kept between them; the best of %s such processes,"
      % (sys.argv[2], sys.argv[4], sys.argv[5]))
print("each followed by fragbench's on sim and cuda) against fragbench percall's")
print("ns_per_op, best of %s passes in one process: warm (one strategy, its cache kept between passes: the same method) and," % sys.argv[3])
print("in brackets, fresh (a new strategy each pass, its pool grown from empty: run's ns_per_op); the ratios are torch / warm")
hdr = ("trace", "strategy", "torch ns/call", "fb sim ns/op", "fb cuda ns/op", "torch/sim", "torch/cuda",
       "torch peak reserved", "fb peak reserved", "same")
fmt = "%-30s %-10s %13s %14s %15s %9s %10s %19s %17s %4s"
print(fmt % hdr)
missing = 0
for r in rows:
    same = "-"
    if num(r["torch_peak_reserved"]) is not None and num(r["torch_peak_reserved"]) >= 0 and num(r["sim_peak_reserved"]) is not None:
        same = "yes" if int(float(r["torch_peak_reserved"])) == int(float(r["sim_peak_reserved"])) else "no"
    print(fmt % (r["trace"], r["strategy"], r["torch_ns"], "%s (%s)" % (r["sim_ns"], r["sim_fresh_ns"]),
                 "%s (%s)" % (r["cuda_ns"], r["cuda_fresh_ns"]), ratio(r["torch_ns"], r["sim_ns"]),
                 ratio(r["torch_ns"], r["cuda_ns"]), r["torch_peak_reserved"], r["sim_peak_reserved"], same))
    missing += sum(num(r[k]) is None for k in ("torch_ns", "sim_ns", "cuda_ns"))
for s in ("caching", "expandable"):
    for dev in ("sim", "cuda"):
        v = [num(r["torch_ns"]) / num(r[dev + "_ns"]) for r in rows
             if r["strategy"] == s and num(r["torch_ns"]) and num(r[dev + "_ns"])]
        if v:
            f = [num(r["torch_ns"]) / num(r[dev + "_fresh_ns"]) for r in rows
                 if r["strategy"] == s and num(r["torch_ns"]) and num(r[dev + "_fresh_ns"])]
            print("%s on %s: PyTorch/fragbench %.1fx..%.1fx warm over %d traces (lowest first: the issue asks >= 8x on each); fresh %s" %
                  (s, dev, min(v), max(v), len(v), "%.1fx..%.1fx" % (min(f), max(f)) if f else "-"))
print("pass-by-pass PyTorch ns/call (the first pass grows the cache):")
for r in rows:
    print("  %-30s %-10s %s" % (r["trace"], r["strategy"], r["torch_passes"]))
if missing:
    print("%d cells not measured (see the logs in the output folder)" % missing)
sys.exit(1 if missing else 0)
EOF
cat "$OUT/table.txt"
exit $rc
