/* async_replay.cu - replays a fragbench native trace (`fragbench export` CSV: op,id,size,
 * stream,...) through cudaMallocFromPoolAsync/cudaFreeAsync directly, and logs every
 * allocation's address and the pool's reserved bytes: the ground truth a model of the pool
 * is fitted to. usage: async_replay TRACE.csv MODE POOL > log
 *   MODE: none (no GPU work), touch1 (a 1-byte memset per block on its stream), full (the
 *   whole block memset)   POOL: new (explicit pool, threshold UINT64_MAX) or default (the
 *   device's default pool, threshold UINT64_MAX, as PyTorch's backend:cudaMallocAsync)
 * Output: "A <seq> <size> <addr> <reserved>" per alloc, "F <seq> <reserved>" per free,
 * then "FINDING replay <trace> <mode> <pool>: peak reserved N (ReservedMemHigh)". */
#include "probe.h"

#define MAXID (1u << 20)
struct ent { uint64_t id, addr; int used, stream; };
static struct ent tab[MAXID];

static struct ent *slot(uint64_t id, int create) {
  uint64_t h = (id * 0x9E3779B97F4A7C15ull) >> 44;
  for (;; h = (h + 1) & (MAXID - 1)) {
    if (tab[h].used == 1 && tab[h].id == id) return &tab[h];
    if (tab[h].used == 0) { if (!create) return NULL; tab[h].id = id; return &tab[h]; }
  }
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: async_replay TRACE.csv none|touch1|full new|default\n"); return 2; }
  FILE *f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  int mode = !strcmp(argv[2], "none") ? 0 : !strcmp(argv[2], "touch1") ? 1 : 2;
  cudaMemPool_t p;
  if (!strcmp(argv[3], "default")) {
    CHECK(cudaDeviceGetDefaultMemPool(&p, 0));
    uint64_t thr = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &thr));
  } else {
    p = new_pool(0, UINT64_MAX);
  }
  cudaStream_t ss[8];
  for (int i = 0; i < 8; i++) CHECK(cudaStreamCreateWithFlags(&ss[i], cudaStreamNonBlocking));
  char line[512], op[32];
  unsigned long long id, size, stream;
  uint64_t seq = 0, peak = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "%31[^,],%llu,%llu,%llu", op, &id, &size, &stream) < 2) continue;
    cudaStream_t s = ss[stream % 8];
    if (!strcmp(op, "alloc")) {
      struct ent *e = slot(id, 1);
      e->addr = palloc(p, size ? size : 1, s);
      e->used = 1; e->stream = (int)(stream % 8);
      if (mode == 1) touch1(e->addr, s);
      if (mode == 2) CHECK(cudaMemsetAsync((void *)(uintptr_t)e->addr, 0, size, s));
      uint64_t r = reserved(p);
      if (r > peak) peak = r;
      printf("A %llu %llu %#llx %llu\n", (unsigned long long)seq, size, (unsigned long long)e->addr, (unsigned long long)r);
    } else if (!strcmp(op, "free")) {
      struct ent *e = slot(id, 0);
      if (!e) continue;
      pfree(e->addr, ss[e->stream]);
      e->used = 2;   /* tombstone */
      printf("F %llu %llu\n", (unsigned long long)seq, (unsigned long long)reserved(p));
    } else continue;
    seq++;
  }
  CHECK(cudaDeviceSynchronize());
  printf("FINDING replay %s %s %s: peak reserved %llu (ReservedMemHigh %llu)\n", argv[1], argv[2], argv[3],
         (unsigned long long)peak, (unsigned long long)reserved_high(p));
  return 0;
}
