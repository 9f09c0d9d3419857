#!/usr/bin/env python3
"""Small PyTorch-snapshot-shaped pickles for the pool rules of workloads/trace_pools.h
(R1-R7) and the empty_cache rule of trace_pytorch.c, one per rule; tests/test_pools_reader.c
says what the reader must make of each. Shapes as PyTorch 2.11 writes them: segments with
address, total_size, stream, segment_pool_id (a tuple), is_expandable, segment_type; trace
entries with action, addr, size, stream, time_us, compile_context, user_metadata.

Run from the repository root: python3 tests/pools/make_pools.py
"""
import os
import pickle

OUT = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20
BASE = 0x7f0000000000


def settings(expandable=False):
    return {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True' if expandable else '', 'max_split_size': -1,
            'garbage_collection_threshold': 0.0, 'expandable_segments': expandable,
            'pinned_num_register_threads': 1, 'release_lock_on_cudamalloc': False,
            'pinned_use_cuda_host_register': False, 'graph_capture_record_stream_reuse': False,
            'roundup_power2_divisions': {str(1 << i): 0 for i in range(16)}}


class T:
    def __init__(self):
        self.out = []

    def e(self, action, addr, size, stream=0):
        self.out.append({'action': action, 'addr': addr, 'size': size, 'stream': stream,
                         'time_us': 1795310685194778 + len(self.out), 'compile_context': 'N/A', 'user_metadata': ''})

    def seg(self, addr, size, stream=0, action='segment_alloc'):
        self.e(action, addr, size, stream)

    def alloc(self, addr, size, stream=0):
        self.e('alloc', addr, size, stream)

    def free(self, addr, size=512, stream=0):
        self.e('free_requested', addr, size, stream)
        self.e('free_completed', addr, size, stream)


def listed(addr, size, pool=(0, 0), stream=0, expandable=False):
    return {'device': 0, 'address': addr, 'total_size': size, 'allocated_size': 0, 'active_size': 0,
            'requested_size': 0, 'stream': stream, 'segment_type': 'small' if size == 2 * MIB else 'large',
            'segment_pool_id': pool, 'is_expandable': expandable, 'frames': [], 'blocks': []}


def write(name, segments, t, expandable=False):
    snap = {'segments': segments, 'device_traces': [t.out], 'allocator_settings': settings(expandable),
            'external_annotations': []}
    with open(os.path.join(OUT, name + '.pickle'), 'wb') as f:
        pickle.dump(snap, f, protocol=4)


def m(x):
    return BASE + x * MIB


# R1 (numbering by listed address), R2 (a freed incarnation at a listed address is pool 0,
# the final one the listed pool), R5 (an allocation in a segment from before the trace)
t = T()
t.seg(m(100), 20 * MIB, 7); t.alloc(m(100), 4 * MIB, 7)          # B: (0,3) -> pool 1
t.seg(m(0), 20 * MIB); t.alloc(m(0), 4 * MIB)                     # A: general
t.seg(m(300), 20 * MIB, 7); t.alloc(m(300), 4 * MIB, 7)           # D: (1,0) -> pool 2
t.alloc(m(400), 4 * MIB, 7)                                       # E: listed (0,3), no segment event
t.seg(m(200), 2 * MIB); t.alloc(m(200), 4096); t.free(m(200))      # C, first incarnation: general
t.seg(m(200), 2 * MIB, action='segment_free')
t.seg(m(200), 2 * MIB, 7); t.alloc(m(200), 4096, 7)               # C again: (0,3) -> pool 1
write('listed', [listed(m(0), 20 * MIB), listed(m(100), 20 * MIB, (0, 3), 7), listed(m(200), 2 * MIB, (0, 3), 7),
                 listed(m(300), 20 * MIB, (1, 0), 7), listed(m(400), 20 * MIB, (0, 3), 7)], t)

# R3 (a map takes the pool of the listed segment containing it) and R6 (a run that unmaps
# a private pool's pages: the pool is released first, the run is emptyCache(pool))
t = T()
t.seg(m(0), 40 * MIB, 5, 'segment_map'); t.alloc(m(0), 4 * MIB, 5); t.alloc(m(20), 16 * MIB, 5)
t.free(m(20), 16 * MIB, 5)
t.seg(m(20), 20 * MIB, 5, 'segment_unmap')
t.alloc(m(4), 1 * MIB + 4096, 5)
t.seg(m(20), 20 * MIB, 5, 'segment_map'); t.alloc(m(20), 16 * MIB, 5)
t.seg(m(1000), 20 * MIB, 0, 'segment_map'); t.alloc(m(1000), 4 * MIB)
write('mapped', [listed(m(0), 40 * MIB, (0, 1), 5, True), listed(m(1000), 20 * MIB, (0, 0), 0, True)], t, True)

# R7 with a witness: a run frees one unlisted segment and leaves a listed (0, 0) segment
# wholly free behind: emptyCache(P) of a pool that went away
t = T()
t.seg(m(0), 2 * MIB); t.alloc(m(0), 4096)                          # G: listed general
t.seg(m(100), 20 * MIB, 3); t.alloc(m(100), 4 * MIB, 3)            # L: listed (0,5): pool 1
t.seg(m(200), 20 * MIB, 3); t.alloc(m(200), 4 * MIB, 3)            # P: freed below
t.free(m(0)); t.free(m(200), 4 * MIB, 3)
t.seg(m(200), 20 * MIB, 3, 'segment_free')
t.alloc(m(0), 4096)
write('witness', [listed(m(0), 2 * MIB), listed(m(100), 20 * MIB, (0, 5), 3)], t)

# R7 by majority: the run leaves two unlisted wholly free segments behind and frees one;
# with a private pool listed it was emptyCache(P); without (majority_nolisted) it stays general
for name, pool in (('majority', (0, 5)), ('majority_nolisted', (0, 0))):
    t = T()
    t.seg(m(100), 20 * MIB, 3); t.alloc(m(100), 4 * MIB, 3)        # L: listed
    t.seg(m(300), 20 * MIB); t.alloc(m(300), 4 * MIB); t.free(m(300), 4 * MIB)
    t.seg(m(400), 20 * MIB); t.alloc(m(400), 4 * MIB); t.free(m(400), 4 * MIB)
    t.seg(m(200), 20 * MIB, 3); t.alloc(m(200), 4 * MIB, 3); t.free(m(200), 4 * MIB, 3)
    t.seg(m(200), 20 * MIB, 3, 'segment_free')
    t.alloc(m(100) + 4 * MIB, 4 * MIB, 3)
    t.seg(m(300), 20 * MIB, 0, 'segment_free'); t.seg(m(400), 20 * MIB, 0, 'segment_free')
    write(name, [listed(m(100), 20 * MIB, pool, 3)], t)

# the empty_cache rule: a run followed by a segment_alloc of S bytes from R reserved is the
# allocation's own release-and-retry only if R + S > the trace's peak
t = T()
t.seg(m(0), 40 * MIB); t.alloc(m(0), 40 * MIB)
t.seg(m(100), 40 * MIB); t.alloc(m(100), 40 * MIB)
t.seg(m(200), 20 * MIB); t.alloc(m(200), 20 * MIB)                 # peak 100 MiB
t.free(m(200), 20 * MIB); t.free(m(0), 40 * MIB)
t.seg(m(200), 20 * MIB, action='segment_free'); t.seg(m(0), 40 * MIB, action='segment_free')
t.seg(m(300), 20 * MIB); t.alloc(m(300), 20 * MIB)                 # R 100 + S 20 > 100: a retry
t.free(m(300), 20 * MIB)
t.seg(m(300), 20 * MIB, action='segment_free')
t.seg(m(400), 20 * MIB); t.alloc(m(400), 20 * MIB)                 # R 60 + S 20 <= 100: empty_cache()
write('fit', [listed(m(100), 40 * MIB), listed(m(400), 20 * MIB)], t)
# the same in a job that lists a private pool and has no oom: every run is empty_cache()
t.seg(m(500), 2 * MIB, 3); t.alloc(m(500), 4096, 3)
write('fit_pools', [listed(m(100), 40 * MIB), listed(m(400), 20 * MIB), listed(m(500), 2 * MIB, (0, 1), 3)], t)

# an action the reader does not know
t = T()
t.seg(m(0), 20 * MIB); t.alloc(m(0), 4 * MIB)
t.e('mystery_action', m(0), 4 * MIB)
t.free(m(0), 4 * MIB)
write('unknown_action', [listed(m(0), 20 * MIB)], t)

# a segment_pool_id this reader cannot read (not a pair of ints)
t = T()
t.seg(m(0), 20 * MIB); t.alloc(m(0), 4 * MIB)
bad = listed(m(0), 20 * MIB)
bad['segment_pool_id'] = 'graph-7'
write('bad_pool_id', [bad], t)

# a run followed by a growth of a private pool is empty_cache(), even when R + S passes the peak
t = T()
t.seg(m(0), 40 * MIB); t.alloc(m(0), 40 * MIB); t.free(m(0), 40 * MIB)
t.seg(m(0), 40 * MIB, action='segment_free')
t.seg(m(100), 20 * MIB, 3); t.alloc(m(100), 20 * MIB, 3)          # R 40 + S 20 > 40, but pool (0,1)
write('capture_after_empty_cache', [listed(m(100), 20 * MIB, (0, 1), 3)], t)

# R8: a general growth while a wholly free segment that would fit was cached on its stream:
# that segment was a private pool's (one gone before the snapshot)
t = T()
t.seg(m(100), 20 * MIB, 3); t.alloc(m(100), 4 * MIB, 3)            # L: listed (0,5): pool 1
t.seg(m(200), 40 * MIB); t.alloc(m(200), 40 * MIB); t.free(m(200), 40 * MIB)
t.seg(m(300), 16 * MIB); t.alloc(m(300), 16 * MIB)                  # G: listed general; 200 would fit
t.seg(m(200), 40 * MIB, action='segment_free')
t.alloc(m(100) + 4 * MIB, 4 * MIB, 3)
write('growth', [listed(m(100), 20 * MIB, (0, 5), 3), listed(m(300), 16 * MIB)], t)

# R8 with expandable segments: a general growth (a map inside a listed (0, 0) segment of its
# stream) while a pool-0 mapping on that stream had a wholly free page the request fits in:
# that mapping was a private pool's, and so is the mapping touching it (the same segment)
t = T()
t.seg(m(500), 20 * MIB, 3, 'segment_map'); t.alloc(m(500), 4 * MIB, 3)     # L: listed (0,5): pool 1
t.seg(m(0), 20 * MIB, 0, 'segment_map'); t.seg(m(20), 20 * MIB, 0, 'segment_map')
t.alloc(m(0), 4 * MIB); t.alloc(m(20), 16 * MIB); t.free(m(20), 16 * MIB)
t.seg(m(1000), 20 * MIB, 0, 'segment_map'); t.alloc(m(1000), 16 * MIB)   # G: listed general
t.free(m(0), 4 * MIB)
t.seg(m(0), 40 * MIB, 0, 'segment_unmap')
t.alloc(m(504), 4 * MIB, 3)
write('growth_mapped', [listed(m(500), 20 * MIB, (0, 5), 3, True), listed(m(1000), 20 * MIB, (0, 0), 0, True)], t, True)
