#!/usr/bin/env python3
"""The bad-input corpus of the trace readers: each tests/bad/<name>.<ext> must make
trace_detect / open / next fail (never crash, never pass silently) with a message that
names the file and contains the fragment in tests/bad/<name>.expect.

Pickles come from Python's own pickler where Python can write the defect (wrong nesting,
missing keys, bad values) and are assembled from opcodes where it cannot (truncation,
unknown opcodes, broken stack discipline). Run from the repository root:
    python3 tests/bad/make_corpus.py
Crashers found by `make fuzz` are added by hand as fuzz_<reader>_<n>.<ext> with their
.expect (see tests/fuzz/run.sh).
"""
import gzip
import os
import pickle
import struct

OUT = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20


def ev(action_, **kw):
    e = {'action': action_, 'addr': 0x7f0000000000, 'size': 512, 'stream': 0,
         'time_us': 1795310685194778, 'compile_context': 'N/A', 'user_metadata': ''}
    e.update(kw)
    return {k: v for k, v in e.items() if v is not DROP}


DROP = object()


def snap(events=None, **top):
    if events is None:
        events = [ev('segment_alloc', size=20 * MIB), ev('alloc'), ev('free_requested'), ev('free_completed')]
    s = {'segments': [], 'device_traces': [events],
         'allocator_settings': {'max_split_size': -1, 'expandable_segments': False,
                                'garbage_collection_threshold': 0.0,
                                'roundup_power2_divisions': {str(1 << i): 0 for i in range(16)}}}
    s.update(top)
    return s


def put(name, data, expect):
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(data)
    with open(os.path.join(OUT, name.split('.')[0] + '.expect'), 'w') as f:
        f.write(expect + '\n')


def pk(obj, protocol=4):
    return pickle.dumps(obj, protocol=protocol)


# opcodes for hand-made pickles
PROTO4 = b'\x80\x04'
def s(text):  # SHORT_BINUNICODE
    b = text.encode()
    return b'\x8c' + bytes([len(b)]) + b


def main():
    good = pk(snap())

    # -- pickle: truncation and framing --
    put('truncated_mid.pickle', good[:len(good) // 2], 'truncated pickle')
    put('truncated_end.pickle', good[:-1], 'truncated pickle')          # everything but STOP
    put('only_proto.pickle', PROTO4, 'file ends inside the pickle')
    gz = gzip.compress(pk(snap([ev('alloc', addr=0x7f0000000000 + 4096 * i) for i in range(3000)])), mtime=0)
    put('truncated.pickle.gz', gz[:len(gz) // 2], 'truncated gzip data')
    put('empty.pickle', b'', 'empty file')
    put('protocol1.pickle', pk(snap(), protocol=1), 'not a trace format')
    put('protocol6.pickle', b'\x80\x06' + good[2:], 'not a trace format')

    # -- pickle: opcodes --
    put('unknown_opcode.pickle', PROTO4 + b'}\x94(' + s('device_traces') + b']\xff', 'unknown pickle opcode 0xff')
    import collections
    put('global_opcode.pickle', pk(snap(extra=collections.OrderedDict(a=1))), 'STACK_GLOBAL')
    put('global_opcode_proto2.pickle', pk(snap(extra=collections.OrderedDict(a=1)), protocol=2), 'GLOBAL')
    put('protocol0_ops.pickle', PROTO4 + b'I12\n.', 'INT (protocol 0)')
    put('memo_get_undefined.pickle', PROTO4 + b'}\x94(' + s('device_traces') + b'h\x63u.', 'memo GET of index 99')
    put('setitems_without_mark.pickle', PROTO4 + b'}' + s('device_traces') + b']u.', 'SETITEMS without a MARK')
    put('setitems_odd.pickle', PROTO4 + b'}(' + s('device_traces') + b']' + s('x') + b'u.', 'odd number of items')
    put('setitem_onto_list.pickle', PROTO4 + b']' + s('k') + b'K\x01s.', 'SETITEM onto a list')
    put('append_onto_dict.pickle', PROTO4 + b'}K\x01a.', 'APPEND onto a dict')
    put('pop_empty.pickle', PROTO4 + b'0.', 'POP on an empty stack')
    put('stop_empty.pickle', PROTO4 + b'.', 'STOP needs 1 value on the stack')
    put('long4_negative.pickle', PROTO4 + b'\x8b\xff\xff\xff\xff', 'LONG4 with a negative length')
    put('string_past_end.pickle', PROTO4 + b'\x8d' + struct.pack('<Q', 1 << 60) + b'abc', 'file ends inside a string')
    put('list_opcode_trace.pickle',
        PROTO4 + b'}(' + s('device_traces') + b']((}(' + s('action') + s('alloc') + s('addr') + b'K\x01' +
        s('size') + b'K\x02ul' + b'au.', 'built with the LIST opcode')
    put('deep_stack.pickle.gz', gzip.compress(PROTO4 + b']' * 140000, mtime=0), 'more than 131072 values on the pickle stack')
    # events handed out from a list that then turns out to be inside a tuple, not device_traces
    ev_ops = b'}(' + s('action') + s('alloc') + s('addr') + b'K\x01' + s('size') + b'K\x02' + s('stream') + b'K\x00u'
    put('events_in_tuple.pickle', PROTO4 + b'}' + s('device_traces') + b']](' + ev_ops + ev_ops + b'ea\x85s.',
        'turns out not to be device_traces')

    # -- pickle: wrong nesting --
    put('top_not_dict.pickle', pk([snap()]), 'expected a dict at the top level')
    put('no_device_traces.pickle', pk({'segments': [], 'allocator_settings': {}}), "no 'device_traces' key")
    put('device_traces_dict.pickle', pk(snap(device_traces={0: []})), 'device_traces: expected a list')
    # a tuple where a list belongs: noticed when its first item no longer fits device_traces
    put('device_traces_tuple.pickle', pk(snap(device_traces=([ev('alloc')], [ev('alloc')]))),
        'device_traces[0]: expected a list of event dicts, got dict')
    put('device_traces_tuple1.pickle', pk(snap(device_traces=([[ev('alloc')]],))), 'turns out not to be device_traces')
    put('device_list_dict.pickle', pk(snap(device_traces=[ev('alloc')])), 'device_traces[0]: expected a list of event dicts, got dict')
    put('device_list_int.pickle', pk(snap(device_traces=[[ev('alloc')], 5])), 'device_traces[1]: expected a list of event dicts, got int')
    put('event_int.pickle', pk(snap([ev('alloc'), 7])), 'device_traces[0][1]: expected an event dict, got int')
    put('event_list.pickle', pk(snap([[ev('alloc')]])), 'device_traces[0][0]: expected an event dict, got list')
    put('segments_dict.pickle', pk(snap(segments={})), 'segments: expected a list')
    put('settings_list.pickle', pk(snap(allocator_settings=[])), 'allocator_settings: expected a dict')
    put('too_many_devices.pickle', pk(snap(device_traces=[[] for _ in range(65)])), 'more than 64 devices')
    put('too_many_devices_events.pickle', pk(snap(device_traces=[[ev('alloc'), ev('free_completed')] for _ in range(70)])),
        'more than 64 devices')

    # -- pickle: missing keys, bad values --
    put('no_action.pickle', pk(snap([ev('alloc', action=DROP)])), "event without an 'action' key")
    put('alloc_no_size.pickle', pk(snap([ev('alloc', size=DROP)])), "'alloc' event without 'size'")
    put('alloc_no_addr.pickle', pk(snap([ev('alloc', addr=DROP)])), "'alloc' event without 'addr'")
    put('free_no_addr.pickle', pk(snap([ev('alloc'), ev('free_completed', addr=DROP)])), "'free_completed' event without 'addr'")
    put('segment_no_size.pickle', pk(snap([ev('segment_alloc', size=DROP)])), "'segment_alloc' event without 'size'")
    put('oom_no_device_free.pickle', pk(snap([ev('oom')])), "'oom' event without 'device_free'")
    put('size_string.pickle', pk(snap([ev('alloc', size='512')])), "'size': expected an int, got str")
    put('size_float.pickle', pk(snap([ev('alloc', size=512.0)])), "'size': expected an int, got float")
    put('size_none.pickle', pk(snap([ev('alloc', size=None)])), "'size': expected an int, got None")
    put('action_int.pickle', pk(snap([ev(3)])), "'action': expected a string, got int")
    put('size_huge.pickle', pk(snap([ev('alloc', size=1 << 60)])), 'size 1152921504606846976 out of range')
    put('size_negative.pickle', pk(snap([ev('alloc', size=-5)])), 'size -5 out of range')
    put('size_bigint.pickle', pk(snap([ev('alloc', size=1 << 80)])), "'size': expected an int, got int beyond 64 bits")
    put('addr_negative.pickle', pk(snap([ev('alloc', addr=-4096)])), 'addr -4096 out of range')
    put('device_free_huge.pickle', pk(snap([ev('oom', device_free=1 << 62)])), 'device_free 4611686018427387904 out of range')
    st = snap()['allocator_settings']
    put('settings_max_split_str.pickle', pk(snap(allocator_settings=dict(st, max_split_size='none'))),
        'max_split_size: expected an int')
    put('settings_roundup_key.pickle',
        pk(snap(allocator_settings=dict(st, roundup_power2_divisions={'3': 1}))), "expected keys '1', '2', '4'")
    put('settings_roundup_value.pickle',
        pk(snap(allocator_settings=dict(st, roundup_power2_divisions={'4': 'x'}))), "roundup_power2_divisions['4']: expected a non-negative int")
    put('settings_roundup_list.pickle',
        pk(snap(allocator_settings=dict(st, roundup_power2_divisions=[0] * 16))), 'roundup_power2_divisions: expected a dict')
    put('settings_gc_str.pickle', pk(snap(allocator_settings=dict(st, garbage_collection_threshold='0.5'))),
        'garbage_collection_threshold: expected a number')
    # values PyTorch itself refuses: the snapshot's key, its value and the byte, never a parameter
    for name, gc in (('nan', float('nan')), ('negative', -0.5), ('inf', float('inf')), ('one', 1.0)):
        put('settings_gc_%s.pickle' % name, pk(snap(allocator_settings=dict(st, garbage_collection_threshold=gc))),
            'allocator_settings.garbage_collection_threshold is %g: expected 0 (off) or a fraction' % gc)
    put('settings_max_split_one.pickle', pk(snap(allocator_settings=dict(st, max_split_size=1))),
        'allocator_settings.max_split_size is 1: expected at least 21 MiB')
    put('settings_max_split_negative.pickle', pk(snap(allocator_settings=dict(st, max_split_size=-7))),
        'allocator_settings.max_split_size is -7')

    # -- bounds: a reader's memory does not grow with a crafted file --
    # 1.1 M MEMOIZE of one int (a few KB gzip'd): the memo bound, not gigabytes
    put('memo_flood.pickle.gz', gzip.compress(PROTO4 + b'K\x07' + b'\x94' * (1100 * 1000) + b'.', mtime=0),
        'more than 1048576 memo values kept')
    # segment events summing past 2^63 bytes: refused, never a signed overflow
    put('reserved_overflow.pickle.gz',
        gzip.compress(pk(snap([ev('segment_alloc', size=1 << 50, addr=(i + 1) << 51) for i in range(1100)])), mtime=0),
        'segment events sum to')

    # one stream per event: the allocators' per-stream pools would grow without bound
    put('too_many_streams.pickle.gz',
        gzip.compress(pk(snap([ev('alloc', addr=0x7f0000000000 + 4096 * i, stream=i + 1) for i in range(1100)])), mtime=0),
        'stream 1025: more than 1024 distinct streams')

    # -- gzip: the trailer (CRC-32, ISIZE) checked, nothing after the last member --
    gz = gzip.compress(good, mtime=0)
    put('gz_cut_trailer.pickle.gz', gz[:-3], 'truncated gzip data')
    put('gz_trailing_garbage.pickle.gz', gz + b'garbage', 'trailing garbage after the gzip stream')
    bad_crc = bytearray(gz)
    bad_crc[-8] ^= 0x01
    put('gz_bad_crc.pickle.gz', bytes(bad_crc), 'gzip CRC-32 mismatch')
    bad_len = bytearray(gz)
    bad_len[-4] ^= 0x01
    put('gz_bad_length.pickle.gz', bytes(bad_len), 'gzip length mismatch')

    # -- RMM logs --
    H = b'Thread,Time,Action,Pointer,Size,Stream\n'
    row = b'2342727,01:27:50.125087,allocate,0x7ff7e0000000,67108864,0\n'
    put('rmm_bad_time.csv', H + row + b'2342727,25:00:00.000000,free,0x7ff7e0000000,67108864,0\n',
        ':3: time \'25:00:00.000000\': expected HH:MM:SS.uuuuuu')
    put('rmm_time_text.csv', H + b'2342727,noon,allocate,0x7ff7e0000000,64,0\n', ':2: time')
    put('rmm_bad_action.csv', H + b'2342727,01:27:50.125087,allocat,0x7ff7e0000000,64,0\n',
        ":2: action 'allocat': expected allocate, free or allocate failure")
    put('rmm_bad_pointer.csv', H + b'2342727,01:27:50.125087,allocate,0xZZ,64,0\n', ':2: pointer \'0xZZ\'')
    put('rmm_bad_size.csv', H + b'2342727,01:27:50.125087,allocate,0x10,-5,0\n', ":2: size '-5': expected a number of bytes")
    put('rmm_huge_size.csv', H + b'2342727,01:27:50.125087,allocate,0x10,1152921504606846976,0\n', ':2: size 1152921504606846976 out of range')
    put('rmm_overflow_size.csv', H + b'2342727,01:27:50.125087,allocate,0x10,99999999999999999999999,0\n', ':2: size')
    put('rmm_bad_stream.csv', H + b'2342727,01:27:50.125087,allocate,0x10,64,stream7\n', ":2: stream 'stream7'")
    put('rmm_missing_field.csv', H + b'2342727,01:27:50.125087,allocate,0x10,64\n', ':2: 5 fields, expected 6')
    put('rmm_extra_field.csv', H + b'2342727,01:27:50.125087,allocate,0x10,64,0,9\n', ':2: 7 fields, expected 6')
    put('rmm_truncated.csv', H + row + b'2342727,01:27:57.30', ':3: 2 fields, expected 6')
    put('rmm_bad_thread.csv', H + b'main,01:27:50.125087,allocate,0x10,64,0\n', ":2: thread 'main'")
    put('rmm_nul.csv', H + b'2342727,01:27:50.125087,allo\x00cate,0x10,64,0\n', ':2: unexpected NUL byte')
    put('rmm_long_line.csv', H + b'2342727,' + b'9' * 5000 + b'\n', ':2: line longer than 4095 characters')
    # 0x8000000000000000 and up are the ids of failed requests: no device address is there
    put('rmm_pointer_high.csv', H + b'2342727,01:27:50.125087,allocate,0x8000000000000000,64,0\n',
        ':2: pointer 0x8000000000000000 out of range')
    put('rmm_too_many_streams.csv', H + b''.join(b'2342727,01:27:50.125087,allocate,0x%x,64,0x%x\n' % (0x10000 * (i + 1), i + 1)
                                                 for i in range(1100)), ':1026: stream 0x401: more than 1024 distinct streams')
    put('rmm_header_only_bad.csv', b'Thread,Time,Action,Pointer,Size\n' + row, 'not a trace format')
    rows = b''.join(b'2342727,01:27:50.%06d,allocate,0x%x,%d,0\n' % (i, 0x7ff7e0000000 + 4096 * i, 512 * (i % 7 + 1))
                    for i in range(400))
    gzrows = gzip.compress(H + rows, mtime=0)
    put('rmm_gz_truncated.csv.gz', gzrows[:len(gzrows) // 2], 'truncated gzip data')

    # -- native traces --
    N = b'# fragbench-trace v1\nop,id,size,stream,device\n'
    put('native_bad_op.csv', N + b'allocate,1,2,0,0\n', ":3: op 'allocate': expected alloc, free, empty_cache or iter")
    put('native_missing_size.csv', N + b'alloc,1,,0,0\n', ':3: alloc without a size')
    put('native_missing_id.csv', N + b'free,,,,0\n', ':3: free without an id')
    put('native_bad_id.csv', N + b'free,xyz,,,0\n', ":3: id 'xyz': expected a non-negative integer")
    put('native_huge_size.csv', N + b'alloc,1,1152921504606846976,0,0\n', ':3: size 1152921504606846976 out of range')
    put('native_bad_device.csv', N + b'alloc,1,2,0,-1\n', ":3: device '-1'")
    put('native_device_range.csv', N + b'alloc,1,2,0,64\n', ':3: device 64 out of range')
    put('native_fields.csv', N + b'alloc,1,2,0\n', ':3: 4 fields, expected 5')
    put('native_version.csv', b'# fragbench-trace v2\nalloc,1,2,0,0\n', 'not a trace format')
    put('native_too_many_streams.csv', N + b''.join(b'alloc,%d,64,%d,0\n' % (i, i + 1) for i in range(1100)),
        ':1027: stream 1025: more than 1024 distinct streams')
    put('native_late_error.csv', N + b'alloc,1,2,0,0\n' * 100 + b'free,1,,,zero\n', ":103: device 'zero'")


if __name__ == '__main__':
    main()
