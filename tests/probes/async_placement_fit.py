"""async_placement_fit.py - how well placement rules explain the driver's own choices
(docs/async-pool.md, "What is not reached, and why"). Not part of the product.

Input: a native trace (`fragbench export`) and the log of the same trace replayed through
the real pool by tests/probes/async_replay.cu (run_async_replays.sh writes both). At each
allocation the driver's free ranges are rebuilt from its own live blocks (teacher
forcing: the driver's state, not a model's), and every rule is asked which range it would
take; a rule scores when it names the range the driver used. Only allocations with at
least two ranges that fit (the unused top counts as one) are scored. Also counted: blocks that
start inside a free range rather than at its start, and whether they start where a block
was freed or split (the driver had not coalesced those neighbours yet).

usage: python3 async_placement_fit.py TRACE.csv REPLAY.log[.gz] [TRACE.csv REPLAY.log ...]
(run_async_replays.sh OUTDIR leaves OUTDIR/NAME.csv and OUTDIR/NAME.full.default.log.gz)
Single-stream traces only (the bundled ones and torch_async_ref.py's jobs are)."""
import bisect
import gzip
import sys

TOP = 1 << 62     # size of the unused range above the highest block
BANDS = [(0, 4096), (4096, 1 << 20), (1 << 20, 4 << 20), (4 << 20, 1 << 62)]


def rounded(n):
    return (max(n, 1) + 511) // 512 * 512


def size_class(n, steps):
    """n's class with `steps` classes per power of two (TLSF second level)"""
    fl = n.bit_length() - 1
    sh = steps.bit_length() - 1
    return fl * steps + ((n >> (fl - sh)) & (steps - 1)) if fl >= sh else fl * steps


def class_needed(n, steps):
    """the lowest class all of whose ranges fit n (n rounded up to its class's step)"""
    step = max(1, (1 << (n.bit_length() - 1)) >> (steps.bit_length() - 1))
    return size_class((n + step - 1) // step * step, steps)


def read_pairs(trace, log):
    """[(op, id, size, addr)] with the driver's address for every alloc"""
    with (gzip.open(log, "rt") if log.endswith(".gz") else open(log)) as f:
        addrs = [int(l.split()[3], 16) for l in f if l.startswith("A ")]
    out, k = [], 0
    for line in open(trace):
        f = line.rstrip("\n").split(",")
        if f[0] == "alloc":
            out.append(("alloc", int(f[1]), int(f[2]), addrs[k]))
            k += 1
        elif f[0] == "free":
            out.append(("free", int(f[1]), 0, 0))
    if k != len(addrs):
        sys.exit("%s: %d allocations, %s logs %d" % (trace, k, log, len(addrs)))
    return out


def decisions(events):
    """per scored allocation: (size, ranges that fit [(addr, size, last_change)], addr chosen)"""
    starts, end_of, live = [], {}, {}
    changed = {}       # start of a free piece -> when it was freed or split
    base, t, out, inside, off_piece = None, 0, [], 0, 0
    for op, ident, size, addr in events:
        t += 1
        if op == "free":
            if ident not in live:
                continue
            a = live.pop(ident)
            starts.pop(bisect.bisect_left(starts, a))
            del end_of[a]
            changed[a] = t
            continue
        if base is None:
            base = addr
        sz = rounded(size)
        ranges, prev = [], base
        for s in starts:
            if s > prev:
                stamp = max([v for k, v in changed.items() if prev <= k < s] or [-1])
                ranges.append((prev, s - prev, stamp))
            prev = max(prev, end_of[s])
        ranges.append((prev, TOP, -2))
        fits = [r for r in ranges if r[1] >= sz]
        hit = [r for r in fits if r[0] <= addr < r[0] + r[1]]
        if hit and addr != hit[0][0]:
            inside += 1
            if addr not in changed:
                off_piece += 1
        if len(fits) > 1 and hit:
            out.append((sz, fits, hit[0][0]))
        bisect.insort(starts, addr)
        end_of[addr] = addr + sz
        live[ident] = addr
        for k in [k for k in changed if addr <= k < addr + sz]:
            del changed[k]
        if hit and hit[0][1] != TOP and addr + sz < hit[0][0] + hit[0][1]:
            changed[addr + sz] = t
    return out, inside, off_piece


def rules():
    r = {
        "best fit, lowest address": lambda sz, f: min(f, key=lambda g: (g[1], g[0])),
        "best fit, most recent": lambda sz, f: min(f, key=lambda g: (g[1], -g[2])),
        "first fit": lambda sz, f: min(f, key=lambda g: g[0]),
        "most recently freed (LIFO)": lambda sz, f: max(f, key=lambda g: (g[2], g[0])),
    }
    orders = {"lowest": lambda g: g[0], "highest": lambda g: -g[0], "most recent": lambda g: (-g[2], -g[0]),
              "oldest": lambda g: g[2]}

    def good_fit(steps, order):   # the first class that surely fits, else any that fits
        def pick(sz, f):
            need = class_needed(sz, steps)
            sure = [g for g in f if g[1] < TOP and size_class(g[1], steps) >= need]
            if not sure:
                inner = [g for g in f if g[1] < TOP]
                return min(inner, key=orders[order]) if inner else f[-1]
            c = min(size_class(g[1], steps) for g in sure)
            return min([g for g in sure if size_class(g[1], steps) == c], key=orders[order])
        return pick

    def segregated(steps, order):   # the request's own class first (any that fits), then up
        def pick(sz, f):
            inner = [g for g in f if g[1] < TOP]
            if not inner:
                return f[-1]
            c = min(max(size_class(g[1], steps), size_class(sz, steps)) for g in inner)
            return min([g for g in inner if max(size_class(g[1], steps), size_class(sz, steps)) == c],
                       key=orders[order])
        return pick

    for steps in (1, 2, 4, 8, 16):
        for order in orders:
            r["good fit %d/2x, %s" % (steps, order)] = good_fit(steps, order)
            r["segregated %d/2x, %s" % (steps, order)] = segregated(steps, order)
    return r


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    rs = rules()
    names, score = [], {k: [] for k in rs}
    band_score = {k: {} for k in rs}
    for trace, log in zip(args[0::2], args[1::2]):
        data, inside, off_piece = decisions(read_pairs(trace, log))
        names.append(trace.split("/")[-1].split(".")[0][:12])
        print("%s: %d allocations with a choice; %d blocks start inside a free range (at the start of a"
              " block freed or split there: %d; elsewhere: %d)" % (trace, len(data), inside, inside - off_piece, off_piece))
        for k, pick in rs.items():
            hits = [pick(sz, f)[0] == ch for sz, f, ch in data]
            score[k].append(sum(hits) / max(1, len(hits)))
            for (lo, hi) in BANDS:
                h = [x for x, (sz, _, _) in zip(hits, data) if lo <= sz < hi]
                band_score[k].setdefault((lo, hi), []).append(sum(h) / len(h) if h else None)
    print("\n%-34s %s  mean   by size: <4K  <1M  <4M  >=4M (mean over inputs)" % ("rule", " ".join("%12s" % n for n in names)))
    for k in sorted(rs, key=lambda k: -sum(score[k])):
        bands = []
        for b in BANDS:
            v = [x for x in band_score[k][b] if x is not None]
            bands.append("%.2f" % (sum(v) / len(v)) if v else "  - ")
        print("%-34s %s  %.3f  %s" % (k, " ".join("%12.3f" % x for x in score[k]), sum(score[k]) / len(score[k]),
                                     " ".join(bands)))


if __name__ == "__main__":
    main()
