/* torch_percall.cpp - PyTorch's own host cost per allocator call, in C++ (no Python in the
 * loop): replays a fragbench native trace CSV (workloads/trace_native.h; write one with
 * `fragbench export`) through c10::cuda::CUDACachingAllocator::raw_alloc(size) and
 * raw_delete(ptr), PASSES times in one process without emptying the cache between passes
 * (the first pass grows the cache: its cudaMalloc / cuMemMap calls mostly disappear after
 * it), and prints the best pass's ns per call. PYTORCH_CUDA_ALLOC_CONF picks the backend
 * as in any PyTorch program (expandable_segments:True for expandable segments).
 *
 * Each pass is timed whole with clock_gettime around the loop; a call is an alloc or a
 * free (what fragbench's ns_per_op divides by). Ids are resolved to array slots before
 * timing, so the loop does one array load or store per call besides the call itself.
 * As fragbench does, zero-size allocations, allocations of an id already live and frees
 * of an unknown id are skipped; what a pass leaves live is freed after its clock stops.
 * empty_cache rows call emptyCache() with the clock paused; iter rows are ignored;
 * stream and pool columns are ignored (every call on the current stream, pool 0: a
 * trace that uses them is reported, as its figure is then only indicative).
 *
 * Usage: torch_percall EVENTS.csv [PASSES]     (default 5)
 * Output (stdout, one line):
 *   torch_percall calls=N passes=P best_ns_per_call=X pass_ns_per_call=a,b,... peak_reserved=R peak_allocated=A
 * peak_* are PyTorch's own stats after the first pass (from an empty cache: comparable with
 * tests/data/reference.csv); built with -DFB_MINIMAL they are left out (-1).
 * Build: see torch_percall.sh. Exit 0; 2 bad input; 3 PyTorch error (OOM included). */
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

enum Kind : uint8_t { K_ALLOC = 0, K_FREE = 1, K_EMPTY = 2 };

struct Op {
  uint64_t size;   /* alloc: bytes */
  uint32_t slot;   /* alloc / free: index into the pointer array */
  uint8_t kind;
};

uint64_t now_ns() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

[[noreturn]] void bad(const char *path, unsigned long line, const char *what) {
  std::fprintf(stderr, "torch_percall: %s:%lu: %s\n", path, line, what);
  std::exit(2);
}

/* split a row at commas into at most 7 fields (the 7th takes the rest) */
int split(char *s, char **f) {
  int n = 0;
  f[n++] = s;
  for (char *p = s; *p && n < 7; p++)
    if (*p == ',') { *p = 0; f[n++] = p + 1; }
  return n;
}

bool number(const char *s, int base, uint64_t *out) {
  if (!*s) { *out = 0; return true; }
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s, &end, base);
  if (errno || *end || *s == '-') return false;
  *out = v;
  return true;
}

struct Trace {
  std::vector<Op> ops;
  std::vector<uint32_t> leftover;   /* slots still live after one pass, freed untimed */
  uint32_t slots = 0;
  uint64_t calls = 0, skipped = 0, other_streams = 0, pool_rows = 0, other_devices = 0;
};

Trace read_trace(const char *path) {
  FILE *f = std::fopen(path, "r");
  if (!f) { std::fprintf(stderr, "torch_percall: %s: %s\n", path, std::strerror(errno)); std::exit(2); }
  Trace t;
  std::unordered_map<uint64_t, uint32_t> live;   /* id -> slot */
  std::vector<char> buf(4096);
  unsigned long line = 0;
  long device = -1;   /* the first device with events (fragbench's default: the lowest; the bundled traces have one) */
  while (std::fgets(buf.data(), (int)buf.size(), f)) {
    line++;
    size_t len = std::strlen(buf.data());
    if (len && buf[len - 1] != '\n' && !std::feof(f)) bad(path, line, "line too long");
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = 0;
    if (line == 1) {
      if (std::strncmp(buf.data(), "# fragbench-trace", 17)) bad(path, line, "expected '# fragbench-trace v1' (write it with fragbench export)");
      continue;
    }
    if (buf[0] == '#' || !len) continue;
    if (line == 2) {
      if (std::strncmp(buf.data(), "op,id,size,stream,device", 24)) bad(path, line, "expected the header op,id,size,stream,device");
      continue;
    }
    char *fl[7];
    int n = split(buf.data(), fl);
    if (n < 5 || n > 6) bad(path, line, "expected 5 or 6 fields: op,id,size,stream,device[,pool]");
    uint64_t id, size, dev, pool = 0;
    if (!number(fl[4], 10, &dev)) bad(path, line, "bad device");
    if (n == 6 && !number(fl[5], 10, &pool)) bad(path, line, "bad pool");
    if (device < 0) device = (long)dev;
    if ((long)dev != device) { t.other_devices++; continue; }
    if (pool) t.pool_rows++;
    const char *op = fl[0];
    if (!std::strcmp(op, "alloc")) {
      uint64_t stream;
      if (!*fl[1] || !number(fl[1], 0, &id)) bad(path, line, "alloc without a valid id");
      if (!*fl[2] || !number(fl[2], 10, &size)) bad(path, line, "alloc without a valid size");
      if (!number(fl[3], 10, &stream)) bad(path, line, "bad stream");
      if (stream) t.other_streams++;
      if (size == 0 || live.count(id)) { t.skipped++; continue; }
      uint32_t slot = t.slots++;
      live[id] = slot;
      t.ops.push_back(Op{size, slot, K_ALLOC});
      t.calls++;
    } else if (!std::strcmp(op, "free")) {
      if (!*fl[1] || !number(fl[1], 0, &id)) bad(path, line, "free without a valid id");
      auto it = live.find(id);
      if (it == live.end()) { t.skipped++; continue; }
      t.ops.push_back(Op{0, it->second, K_FREE});
      live.erase(it);
      t.calls++;
    } else if (!std::strcmp(op, "empty_cache")) {
      t.ops.push_back(Op{0, 0, K_EMPTY});
    } else if (!std::strcmp(op, "iter") || !std::strcmp(op, "pool_release")) {
      continue;
    } else {
      bad(path, line, "expected alloc, free, empty_cache, iter or pool_release");
    }
  }
  if (std::ferror(f)) { std::fprintf(stderr, "torch_percall: %s: read error\n", path); std::exit(2); }
  std::fclose(f);
  for (auto &kv : live) t.leftover.push_back(kv.second);
  if (!t.calls) bad(path, line, "no alloc or free events");
  return t;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: torch_percall EVENTS.csv [PASSES]\n");
    return 2;
  }
  int passes = argc == 3 ? std::atoi(argv[2]) : 5;
  if (passes < 1 || passes > 1000) { std::fprintf(stderr, "torch_percall: PASSES must be 1..1000\n"); return 2; }
  Trace t = read_trace(argv[1]);
  if (t.other_streams || t.pool_rows || t.other_devices)
    std::fprintf(stderr, "torch_percall: warning: %s: %llu allocs on other streams, %llu rows of private pools, %llu rows of other "
                 "devices: replayed on the current stream, pool 0, one device\n", argv[1], (unsigned long long)t.other_streams,
                 (unsigned long long)t.pool_rows, (unsigned long long)t.other_devices);
  if (t.skipped)
    std::fprintf(stderr, "torch_percall: %s: %llu events skipped (zero size, id already live, unknown id), as fragbench skips them\n",
                 argv[1], (unsigned long long)t.skipped);

  std::vector<void *> ptr(t.slots ? t.slots : 1, nullptr);
  std::vector<double> per_call;
  long long peak_reserved = -1, peak_allocated = -1;
  try {
    c10::cuda::set_device(0);
    c10::cuda::CUDACachingAllocator::init(c10::cuda::device_count());
    for (int p = 0; p < passes; p++) {
      uint64_t paused = 0;
      uint64_t t0 = now_ns();
      for (const Op &o : t.ops) {
        if (o.kind == K_ALLOC) {
          ptr[o.slot] = c10::cuda::CUDACachingAllocator::raw_alloc(o.size);
        } else if (o.kind == K_FREE) {
          c10::cuda::CUDACachingAllocator::raw_delete(ptr[o.slot]);
        } else {
          uint64_t e0 = now_ns();
#ifndef FB_MINIMAL
          c10::cuda::CUDACachingAllocator::emptyCache();
#endif
          paused += now_ns() - e0;
        }
      }
      uint64_t el = now_ns() - t0 - paused;
      for (uint32_t s : t.leftover) c10::cuda::CUDACachingAllocator::raw_delete(ptr[s]);
      per_call.push_back((double)el / (double)t.calls);
#ifndef FB_MINIMAL
      if (p == 0) {
        auto st = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
        peak_reserved = (long long)st.reserved_bytes[0].peak;
        peak_allocated = (long long)st.allocated_bytes[0].peak;
      }
#endif
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "torch_percall: %s: PyTorch error: %.2000s\n", argv[1], e.what());
    return 3;
  }
  double best = per_call[0];
  std::string all;
  char num[64];
  for (size_t i = 0; i < per_call.size(); i++) {
    if (per_call[i] < best) best = per_call[i];
    std::snprintf(num, sizeof num, "%s%.1f", i ? "," : "", per_call[i]);
    all += num;
  }
  std::printf("torch_percall calls=%llu passes=%d best_ns_per_call=%.1f pass_ns_per_call=%s peak_reserved=%lld peak_allocated=%lld\n",
              (unsigned long long)t.calls, passes, best, all.c_str(), peak_reserved, peak_allocated);
  return 0;
}
