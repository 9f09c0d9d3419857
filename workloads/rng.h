/* rng.h - the generators' deterministic random numbers: splitmix64-seeded xoshiro256**,
 * one instance per open workload (no global state), derived from (seed, rank, purpose) so
 * that ranks and independent draws get independent streams. */
#ifndef FB_RNG_H
#define FB_RNG_H
#include <math.h>
#include <stdint.h>

struct rng { uint64_t s[4]; };

static inline uint64_t rng_splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed, uint64_t rank, uint64_t purpose) {
  uint64_t x = seed ^ (rank * 0xd1342543de82ef95ull) ^ (purpose * 0xaf251af3b0f025b5ull);
  for (int i = 0; i < 4; i++) r->s[i] = rng_splitmix(&x);
}

static inline uint64_t rng_next(struct rng *r) {
  uint64_t *s = r->s, x = s[1] * 5, res = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
  s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return res;
}

/* uniform in [0, 1) with 53 bits */
static inline double rng_unit(struct rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* uniform integer in [lo, hi] (lo <= hi), unbiased by rejection */
static inline uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi) {
  uint64_t span = hi - lo + 1;
  if (span == 0) return rng_next(r);
  uint64_t limit = UINT64_MAX - UINT64_MAX % span, v;
  do v = rng_next(r); while (v >= limit);
  return lo + v % span;
}

/* standard normal (Box-Muller; one draw per call, deterministic) */
static inline double rng_normal(struct rng *r) {
  double u = rng_unit(r), v = rng_unit(r);
  if (u < 1e-300) u = 1e-300;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

#endif
