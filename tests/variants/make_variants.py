#!/usr/bin/env python3
"""Valid PyTorch-snapshot-shaped pickles in the shapes Python's pickler writes (protocols
2-5, gzip'd or not, several devices, batches of 1000 plus one, single-key dicts, shared
and unshared strings, frames, decoys, non-default allocator_settings, expandable
segments, OOMs, traces recorded from mid-run), each with what the reader must make of it.

The expectation is computed here, independently of the C reader, from the rules of
DESIGN.md "Recorded traces": frees at free_completed (stream 2^64 - 1 when other events
came between free_requested and free_completed: record_stream), EMPTY_CACHE for a run of
segment_free/segment_unmap unless a segment_alloc/segment_map/oom follows before the next
alloc (but a growth of S bytes after a run that began with R bytes reserved, R + S at most
the trace's peak, leaves it an EMPTY_CACHE: for a map S is at least PyTorch's segment size
for the alloc that follows), an oom replays its request (alloc + free of id 2^63 + k), trace_peak_reserved from
the segment events, usable memory from the first oom.

Writes tests/variants/<name>.pickle[.gz] and <name>.d<device>.expect:
    peak=N  usable=N  settings=S  recorded=caching|expandable  mask=N  ignored=N
    events:
    alloc ID SIZE STREAM DEVICE | free ID 0 0 DEVICE | empty_cache 0 0 0 DEVICE

Run from the repository root: python3 tests/variants/make_variants.py
"""
import gzip
import os
import pickle
import random

OUT = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20
OOM_ID = 1 << 63
KNOWN_EVENT_KEYS = {'action', 'addr', 'size', 'stream', 'time_us', 'compile_context',
                    'user_metadata', 'frames', 'device_free', 'device'}
KNOWN_ACTIONS = {'alloc', 'free_requested', 'free_completed', 'segment_alloc', 'segment_free',
                 'segment_map', 'segment_unmap', 'oom', 'snapshot'}


def default_settings(**kw):
    s = {'PYTORCH_CUDA_ALLOC_CONF': '', 'max_split_size': -1, 'garbage_collection_threshold': 0.0,
         'expandable_segments': False, 'pinned_num_register_threads': 1,
         'release_lock_on_cudamalloc': False, 'pinned_use_cuda_host_register': False,
         'graph_capture_record_stream_reuse': False,
         'roundup_power2_divisions': {str(1 << i): 0 for i in range(16)}}
    s.update(kw)
    return s


def ev(action, t, **kw):
    e = {'action': action}
    e.update(kw)
    e.setdefault('stream', 0)
    e['time_us'] = 1795310685194778 + t
    e['compile_context'] = 'N/A'
    e['user_metadata'] = ''
    return e


class Gen:
    """a plausible allocation history: segments first, blocks carved from them"""

    def __init__(self, seed, base=0x7f0000000000):
        self.r = random.Random(seed)
        self.t = 0
        self.next_addr = base
        self.live = []
        self.out = []

    def add(self, action, **kw):
        self.t += 1
        self.out.append(ev(action, self.t, **kw))

    def segment(self, size, action='segment_alloc'):
        a = self.next_addr
        self.next_addr += size + 2 * MIB
        self.add(action, addr=a, size=size)
        return a

    def alloc(self, size=None, stream=0):
        size = size or self.r.choice([512, 4096, 1 << 16, 3 * MIB, 24 * MIB])
        a = self.next_addr
        self.next_addr += size + 512
        self.add('alloc', addr=a, size=size, stream=stream)
        self.live.append((a, size, stream))
        return a

    def free(self, i=None, requested=True):
        if not self.live:
            return
        i = self.r.randrange(len(self.live)) if i is None else i
        a, size, stream = self.live.pop(i)
        if requested:
            self.add('free_requested', addr=a, size=size, stream=stream)
        self.add('free_completed', addr=a, size=size, stream=stream)

    def churn(self, n, stream=0):
        for _ in range(n):
            if self.live and self.r.random() < 0.45:
                self.free()
            else:
                self.alloc(stream=stream)


class Script(Gen):
    """a history written step by step as PyTorch's caching allocator would record it:
    each big request gets a segment of its own (sizes are multiples of 2 MiB)"""

    def big(self, size, stream=0, frames=None):
        a = self.segment(size)
        self.add('alloc', addr=a, size=size, stream=stream)
        if frames:
            self.out[-1]['frames'] = frames
        return a

    def drop(self, a, size):
        self.add('free_requested', addr=a, size=size)
        self.add('free_completed', addr=a, size=size)

    def release(self, a, size):
        self.add('segment_free', addr=a, size=size)


def oom_scripts():
    """snapshots that end in an OOM, with the limit they ran under known by construction
    (tests/test_cap_infer.c checks the interval and the replay against these numbers)"""
    frames = [{'name': 'forward', 'filename': 'model.py', 'line': 42},
              {'name': 'train_step', 'filename': 'train.py', 'line': 7}]
    # a memory fraction of 1000 MiB: reserved + segment > 1000 MiB is refused
    g = Script(100)
    a = g.big(200 * MIB)
    b = g.big(300 * MIB)
    g.drop(a, 200 * MIB)
    g.big(400 * MIB)                     # reserved 900 MiB
    g.release(a, 200 * MIB)              # 900 + 250 > 1000: release the cached 200 and retry
    g.big(250 * MIB)                     # reserved 950 MiB: the most ever held
    g.drop(b, 300 * MIB)
    g.release(b, 300 * MIB)              # 950 + 480 > 1000: release, 650 + 480 > 1000: OOM
    g.add('oom', device_free=70 * 1024 * MIB, size=480 * MIB, stream=0, frames=frames)
    write('oom_fraction', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})
    # the device itself full: 500 MiB free after the release, the request needs 600
    g = Script(101)
    a = g.big(200 * MIB)
    g.big(300 * MIB)                     # reserved 500 MiB
    g.drop(a, 200 * MIB)
    g.release(a, 200 * MIB)
    g.add('oom', device_free=500 * MIB, size=600 * MIB, stream=0)
    write('oom_device', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})
    # a fraction of 1000 MiB again, with two release-and-retry bursts before the OOM; the
    # first bounds the limit tighter (below 1050 MiB) than the OOM does (below 1070 MiB)
    g = Script(102)
    a = g.big(100 * MIB)
    b = g.big(300 * MIB)
    c = g.big(400 * MIB)                 # reserved 800 MiB
    g.drop(a, 100 * MIB)
    g.release(a, 100 * MIB)              # 800 + 250 > 1000: retry
    g.big(250 * MIB)                     # 950
    g.drop(b, 300 * MIB)
    g.release(b, 300 * MIB)              # 950 + 320 > 1000: retry
    g.big(320 * MIB)                     # 970: the most ever held
    g.drop(c, 400 * MIB)
    g.release(c, 400 * MIB)              # 970 + 500 > 1000: release, 570 + 500 > 1000: OOM
    g.add('oom', device_free=70 * 1024 * MIB, size=500 * MIB, stream=0)
    write('oom_retries', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})
    # fragmentation: a fraction of 60 MiB; 20 small 2 MiB segments each keep one 512 KiB
    # block of four, so 25 MiB (a 26 MiB segment) does not fit beside their 40 MiB,
    # though only 10 MiB is in use: a strategy that needs less than the limit exists
    g = Script(103)
    blocks = []
    for k in range(20):
        s = g.segment(2 * MIB)
        for j in range(4):
            g.add('alloc', addr=s + j * 512 * 1024, size=512 * 1024, stream=0)
            blocks.append(s + j * 512 * 1024)
    for i, a in enumerate(blocks):
        if i % 4:
            g.drop(a, 512 * 1024)
    g.add('oom', device_free=70 * 1024 * MIB, size=25 * MIB, stream=0)
    write('oom_fragmented', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})
    # the failing request's stack shared through the memo with earlier events, as PyTorch
    # writes frames: the same frame dicts (and their long strings) referenced again
    pool = [{'name': 'fn_%d' % i, 'filename': '/very/long/path/to/the/module/number/%d/mod.py' % i, 'line': i}
            for i in range(8)]
    g = Script(104)
    a = g.big(200 * MIB, frames=[pool[0], pool[1], pool[2]])
    g.big(300 * MIB, frames=[pool[3], pool[1], pool[2]])
    g.drop(a, 200 * MIB)
    g.release(a, 200 * MIB)
    g.add('oom', device_free=500 * MIB, size=600 * MIB, stream=7, frames=[pool[3], pool[1], pool[2]])
    write('oom_frames', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})


# ---- the reference translation ----

def expected(snap, d):
    traces = snap['device_traces']
    mask = sum(1 << i for i, t in enumerate(traces) if t)
    if d == -1:
        d = min(i for i, t in enumerate(traces) if t)
    t = traces[d]
    # the running sum of segment events before each event, and its peak
    before, run_sum, peak = [], 0, 0
    for e in t:
        before.append(run_sum)
        if e['action'] in ('segment_alloc', 'segment_map'):
            run_sum += e['size']
        elif e['action'] in ('segment_free', 'segment_unmap'):
            run_sum -= e['size']
        peak = max(peak, run_sum)

    def segment_size(size):   # PyTorch's get_allocation_size of the request rounded to 512
        r = max(512, (size + 511) // 512 * 512)
        return 2 * MIB if r <= MIB else 20 * MIB if r < 10 * MIB else (r + 2 * MIB - 1) // (2 * MIB) * 2 * MIB

    # empty_cache decisions per run start
    ec_at = {}
    i = 0
    while i < len(t):
        if t[i]['action'] in ('segment_free', 'segment_unmap'):
            j = i
            while j < len(t) and t[j]['action'] in ('segment_free', 'segment_unmap'):
                j += 1
            ec = True
            for k in range(j, len(t)):
                a = t[k]['action']
                if a == 'alloc':
                    break
                if a == 'oom':
                    ec = False
                    break
                if a in ('segment_alloc', 'segment_map'):
                    need = before[i] + t[k]['size']
                    if a == 'segment_map':
                        nxt = next((x for x in t[k + 1:] if x['action'] == 'alloc'), None)
                        if nxt is not None:
                            need = max(need, before[i] + segment_size(nxt['size']))
                    ec = need <= peak
                    break
            ec_at[i] = ec
            i = j
        else:
            i += 1
    events = []
    oom_no = 0
    reserved = lo = hi = 0
    oom_at = None
    ignored = sum(1 for k in snap if k not in ('segments', 'device_traces', 'allocator_settings'))
    req_open = None     # the last event was free_requested of this address
    deferred = set()    # free_requested whose free_completed came later: record_stream
    for i, e in enumerate(t):
        a = e['action']
        if req_open is not None and not (a == 'free_completed' and e['addr'] == req_open):
            deferred.add(req_open)
            req_open = None
        ignored += sum(1 for k in e if k not in KNOWN_EVENT_KEYS)
        if a not in KNOWN_ACTIONS:
            ignored += 1
        if a == 'alloc':
            events.append('alloc %d %d %d %d' % (e['addr'], e['size'], e['stream'] % (1 << 64), d))
        elif a == 'free_requested':
            req_open = e['addr']
        elif a == 'free_completed':
            waited = req_open is None and e['addr'] in deferred
            deferred.discard(e['addr'])
            req_open = None
            # a free that waited for other streams: stream = EV_FREE_RECORDED (2^64 - 1)
            events.append('free %d 0 %d %d' % (e['addr'], (1 << 64) - 1 if waited else 0, d))
        elif a in ('segment_free', 'segment_unmap'):
            if ec_at.get(i):
                events.append('empty_cache 0 0 0 %d' % d)
            reserved -= e['size']
            lo = min(lo, reserved)
        elif a in ('segment_alloc', 'segment_map'):
            reserved += e['size']
            hi = max(hi, reserved)
        elif a == 'oom':
            oid = OOM_ID + oom_no
            oom_no += 1
            events.append('alloc %d %d %d %d' % (oid, e['size'], e['stream'] % (1 << 64), d))
            events.append('free %d 0 0 %d' % (oid, d))
            if oom_at is None:
                oom_at = (reserved, e['device_free'])
    settings = snap.get('allocator_settings', {})
    expandable = settings.get('expandable_segments',
                              any(e['action'] == 'segment_map' for e in t))
    start = -lo
    if start > 0 and 'segments' in snap and not expandable:
        seg_total = sum(s['total_size'] for s in snap['segments'] if s.get('device', 0) == d)
        start = max(start, seg_total - reserved)
    usable = 0 if oom_at is None else oom_at[1] + start + oom_at[0]
    parts = []
    mss = settings.get('max_split_size', -1)
    if 0 < mss < (1 << 62):
        parts.append('max_split_size_mb=%d' % (mss >> 20))
    gc = settings.get('garbage_collection_threshold', 0)
    if gc > 0:
        parts.append('garbage_collection_threshold=%g' % gc)
    rp = settings.get('roundup_power2_divisions', {})
    if any(rp.values()):
        parts.append('roundup_power2_divisions=[%s]' % ','.join('%d:%d' % (1 << i, rp[str(1 << i)])
                                                                 for i in range(16)))
    info = ['peak=%d' % (start + hi), 'usable=%d' % usable, 'settings=%s' % ','.join(parts),
            'recorded=%s' % ('expandable' if expandable else 'caching'), 'mask=%d' % mask,
            'ignored=%d' % ignored]
    return d, info, events


def write(name, snap, protocol=4, gz=False, devices=(-1,)):
    data = pickle.dumps(snap, protocol=protocol)
    path = os.path.join(OUT, name + ('.pickle.gz' if gz else '.pickle'))
    with open(path, 'wb') as f:
        f.write(gzip.compress(data, compresslevel=9, mtime=0) if gz else data)
    for want in devices:
        d, info, events = expected(snap, want)
        with open(os.path.join(OUT, '%s.d%d.expect' % (name, d)), 'w') as f:
            f.write('\n'.join(info) + '\nevents:\n' + '\n'.join(events) + '\n')


def basic(seed):
    g = Gen(seed)
    g.segment(20 * MIB)
    g.segment(2 * MIB)
    g.churn(40)
    g.add('segment_free', addr=0x7f0000000000, size=20 * MIB)   # program's empty_cache()
    g.add('segment_free', addr=0x7f0001600000, size=2 * MIB)
    g.alloc(512)
    g.churn(20)
    g.add('segment_free', addr=0x7f0000000000, size=2 * MIB)    # released inside an allocation
    g.add('segment_alloc', addr=0x7f0100000000, size=64 * MIB)
    g.alloc(40 * MIB)
    g.churn(20, stream=140234567)
    g.add('snapshot', addr=0, size=0)
    g.add('segment_free', addr=0x7f0100000000, size=64 * MIB)   # at the very end: empty_cache()
    segs = [{'device': 0, 'address': 0x7f0000000000, 'total_size': 22 * MIB, 'frames': [], 'blocks': []}]
    return {'segments': segs, 'device_traces': [g.out], 'allocator_settings': default_settings(),
            'external_annotations': []}


def main():
    for proto in (2, 3, 5):
        write('proto%d' % proto, basic(proto), protocol=proto)
    write('gzipped', basic(4), protocol=4, gz=True)

    # release runs followed by a growth: a retry only when the growth could have failed
    # (R + S above the trace's peak); else the program's empty_cache() before it
    g = Gen(61)
    a0, a1, a2 = g.segment(40 * MIB), g.segment(20 * MIB), g.segment(20 * MIB)   # peak 80 MiB
    g.churn(20)
    g.add('segment_free', addr=a2, size=20 * MIB)       # R 80 + S 20 > 80: a retry
    g.segment(20 * MIB)
    g.alloc(16 * MIB)
    g.churn(10)
    g.add('segment_free', addr=a1, size=20 * MIB)       # R 80 + S 2 > 80: a retry
    g.segment(2 * MIB)
    g.alloc(4096)
    g.add('segment_free', addr=a0, size=40 * MIB)       # R 62 + S 12 <= 80: empty_cache()
    g.segment(12 * MIB)
    g.alloc(12 * MIB)
    g.churn(10)
    write('cache_before_growth', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})

    # several devices, one without events
    g0, g2 = Gen(10), Gen(12, base=0x7e0000000000)
    g0.segment(20 * MIB); g0.churn(30)
    g2.segment(2 * MIB); g2.churn(50, stream=7); g2.add('segment_free', addr=0x7e0000000000, size=2 * MIB)
    write('multi_device', {'segments': [], 'device_traces': [g0.out, [], g2.out],
                           'allocator_settings': default_settings()}, devices=(-1, 2))

    # one batch of 1000 plus single items: APPEND, SETITEM
    g = Gen(20)
    g.segment(20 * MIB)
    while len(g.out) < 1000:
        g.churn(1)
    g.out.append({'action': 'snapshot'})                        # a one-key dict: SETITEM
    snap = {'device_traces': [g.out],
            'segments': [{'device': 0, 'total_size': 20 * MIB}]}  # one segment: APPEND
    write('batch_plus_one', snap)

    # expandable segments and non-default settings
    g = Gen(30)
    g.segment(20 * MIB, action='segment_map')
    g.churn(30)
    g.segment(40 * MIB, action='segment_map')
    g.churn(30)
    g.add('segment_unmap', addr=0x7f0000000000, size=20 * MIB)
    g.alloc(1024)
    rp = {str(1 << i): (4 if i < 4 else 8 if i < 10 else 0) for i in range(16)}
    settings = default_settings(max_split_size=200 * MIB, garbage_collection_threshold=0.6,
                                expandable_segments=True, roundup_power2_divisions=rp,
                                PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True')
    write('expandable', {'segments': [], 'device_traces': [g.out], 'allocator_settings': settings})

    # a run that ends in OOM after releasing its cache
    g = Gen(40)
    g.segment(20 * MIB)
    g.segment(60 * MIB)
    g.churn(30)
    g.add('segment_free', addr=0x7f0000000000, size=20 * MIB)
    g.add('oom', device_free=123 * MIB, size=900 * MIB, stream=0)
    g.churn(5)
    write('oom', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})

    # strings not shared between events (each a new object: memoized, never re-used)
    g = Gen(50)
    g.segment(20 * MIB)
    g.churn(200)
    fresh = [{''.join(list(k)): (''.join(list(v)) if isinstance(v, str) else v) for k, v in e.items()}
             for e in g.out]
    write('unshared_strings', {'device_traces': [fresh], 'allocator_settings': default_settings()})

    # odd but plain values, unknown actions and keys, a decoy list shaped like device_traces
    g = Gen(60)
    g.segment(20 * MIB)
    g.churn(20)
    g.add('user_defined', addr=0, size=0)
    g.add('weird_new_action', addr=1, size=2)
    g.out[3]['frames'] = ({'name': 'f', 'filename': 'x.py', 'line': 3},)
    g.out[4]['user_metadata'] = {'k': [1.5, None, b'\x00\x01', (1, 2), {3, 4}, frozenset([5])]}
    g.out[5]['extra_key'] = 2 ** 80
    g.out[6]['another'] = -7.25
    decoy = [[{'action': 'alloc', 'addr': 1, 'size': 2, 'stream': 0}],
             [{'action': 'alloc', 'addr': 3, 'size': 4, 'stream': 0}, {'action': 'free_completed', 'addr': 3}]]
    snap = {'aaa_decoy': decoy, 'decoy2': {'device_traces': decoy}, 'segments': [],
            'device_traces': [g.out], 'allocator_settings': default_settings(), 'zzz': (decoy, decoy)}
    write('odd_values', snap)

    # recorded from mid-run: the trace frees segments it never saw allocated
    g = Gen(70)
    g.add('segment_free', addr=0x7a0000000000, size=2048 * MIB)
    g.alloc(4096)
    g.segment(20 * MIB)
    g.churn(30)
    segs = [{'device': 0, 'total_size': 8192 * MIB}, {'device': 1, 'total_size': 999 * MIB}]
    write('mid_run', {'segments': segs, 'device_traces': [g.out], 'allocator_settings': default_settings()})

    # record_stream: a block freed by the program is reusable only when the side stream's
    # work completes (free_completed, several events later), and streams other than 0
    g = Gen(90)
    g.segment(20 * MIB)
    side = 0x55d0c1a2b3c0
    for k in range(12):
        g.churn(5)
        a = g.alloc(MIB * (k % 3 + 1), stream=side if k % 2 else 0)
        g.live.pop()
        g.add('free_requested', addr=a, size=MIB, stream=0)
        g.churn(4)
        g.add('free_completed', addr=a, size=MIB, stream=0)
    write('record_stream', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})

    # stack frames as PyTorch writes them: frame dicts shared through the memo, long strings
    g = Gen(80)
    g.segment(20 * MIB)
    g.churn(100)
    frames = [{'name': 'fn_%d_' % i + 'x' * (i * 7), 'filename': '/very/long/path/' * (i % 30) + 'mod.py',
               'line': i} for i in range(60)]
    for i, e in enumerate(g.out):
        e['frames'] = [frames[(i + j) % 60] for j in range(25)]
    write('frames', {'segments': [], 'device_traces': [g.out], 'allocator_settings': default_settings()})


if __name__ == '__main__':
    main()
    oom_scripts()
