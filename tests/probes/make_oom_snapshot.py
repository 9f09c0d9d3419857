"""make_oom_snapshot.py - a PyTorch memory snapshot that ends in an OOM, made from a
bundled one (not part of the product; no torch needed): the device trace is cut at a
share of its events, right after an alloc, and an 'oom' entry for a request of SIZE bytes
follows, as a job under a memory fraction records it (device_free large: the fraction,
not the device, refused). With 'frames', every alloc and the oom carry a short stack, as
_record_memory_history(context='all') records them. Used to look at the report, the plots
and explain on an OOM (issue 32):

  python3 tests/probes/make_oom_snapshot.py tests/data/gpt_train.pickle.gz /tmp/gpt_oom.pickle.gz 0.6 4e9
  python3 tests/probes/make_oom_snapshot.py tests/data/resnet_varsize.pickle.gz /tmp/resnet_oom.pickle.gz 0.5 2e9 frames
  make bench TRACES='tests/data/gpt_train.pickle.gz /tmp/gpt_oom.pickle.gz /tmp/resnet_oom.pickle.gz'
"""
import gzip
import pickle
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    src, dst, share, size = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(float(sys.argv[4]))
    frames = len(sys.argv) > 5 and sys.argv[5] == 'frames'
    with (gzip.open(src) if src.endswith('.gz') else open(src, 'rb')) as f:
        snap = pickle.load(f)
    trace = snap['device_traces'][0]
    n = max(1, int(len(trace) * share))
    while n < len(trace) and trace[n - 1]['action'] != 'alloc':
        n += 1
    out = trace[:n]
    top = [{'name': 'forward', 'filename': 'model.py', 'line': 42}, {'name': 'train_step', 'filename': 'train.py', 'line': 7}]
    if frames:
        for i, e in enumerate(out):
            if e['action'] == 'alloc':
                e['frames'] = [{'name': 'layer%d' % (i % 7), 'filename': 'net.py', 'line': 100 + i % 7}] + top
    out.append({'action': 'oom', 'addr': 0, 'size': size, 'stream': 0, 'time_us': out[-1].get('time_us', 0) + 1,
                'device_free': 70 * 1024 ** 3, 'frames': top if frames else []})
    snap['device_traces'] = [out]
    snap['segments'] = []
    with (gzip.open(dst, 'wb') if dst.endswith('.gz') else open(dst, 'wb')) as f:
        pickle.dump(snap, f, protocol=4)
    print('%s: %d events, ends in an OOM for %d bytes' % (dst, len(out), size))


if __name__ == '__main__':
    main()
