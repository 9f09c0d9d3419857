/* fuzz_mutate.h - the structure-aware half of the fuzz targets (LLVMFuzzerCustomMutator):
 * besides libFuzzer's byte mutations it grows inputs the way real and hostile traces are
 * large (a slice repeated: many events, MEMOIZE floods, one stream per row), writes the
 * values the readers bound (2^63 pointers, 2^64-1 sizes, new stream ids), and, for a
 * gzip'd input, mutates the inflated bytes and compresses them again (so the readers see
 * past a valid CRC) or breaks the trailer on purpose. The including target defines
 * FUZZ_TEXT: 1 for the CSV readers (mutations by line), 0 for the pickle reader. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint32_t fm_rng;
static uint32_t fm_next(void) {
  fm_rng ^= fm_rng << 13; fm_rng ^= fm_rng >> 17; fm_rng ^= fm_rng << 5;
  return fm_rng;
}

/* repeat data[a, b) k times in place (as room allows) */
static size_t fm_repeat(uint8_t *data, size_t size, size_t max_size) {
  if (size < 2) return size;
  size_t a = fm_next() % size, len = 1 + fm_next() % (size - a < 256 ? size - a : 256);
#if FUZZ_TEXT   /* whole lines: from a line start to the next newline */
  while (a > 0 && data[a - 1] != '\n') a--;
  uint8_t *nl = memchr(data + a, '\n', size - a);
  len = nl ? (size_t)(nl - (data + a)) + 1 : size - a;
#endif
  uint32_t r = fm_next() % 100;   /* mostly a few copies, now and then thousands */
  size_t k = 1 + fm_next() % (r < 70 ? 16 : r < 95 ? 256 : 4096);
  if (len == 0) return size;
  if (k > (max_size - size) / len) k = (max_size - size) / len;
  if (!k) return size;
  memmove(data + a + len * (k + 1), data + a + len, size - a - len);
  for (size_t i = 1; i <= k; i++) memcpy(data + a + len * i, data + a, len);
  return size + len * k;
}

/* overwrite a few bytes with a value a reader must bound */
static size_t fm_value(uint8_t *data, size_t size, size_t max_size) {
#if FUZZ_TEXT
  static const char *v[] = {"0x8000000000000000", "18446744073709551615", "0xffffffffffffffff", "1125899906842624",
                            "9223372036854775807", "nan", "", "0x7fffffffffff", ",", "\n"};
  const char *s = v[fm_next() % (sizeof v / sizeof *v)];
  size_t n = strlen(s);
#else   /* pickle: BININT of extremes, LONG1 of 2^63, MEMOIZE, BINFLOAT nan */
  static const uint8_t v[][11] = {{0x4a, 0xff, 0xff, 0xff, 0x7f}, {0x8a, 0x09, 0, 0, 0, 0, 0, 0, 0, 0x80, 0},
                                  {0x94}, {0x47, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, {0x4a, 0, 0, 0, 0x80}};
  static const size_t vn[] = {5, 11, 1, 9, 5};
  size_t i = fm_next() % 5;
  const uint8_t *s = v[i];
  size_t n = vn[i];
#endif
  if (size + n > max_size || size == 0) return size;
  size_t at = fm_next() % size;
  memmove(data + at + n, data + at, size - at);
  memcpy(data + at, s, n);
  return size + n;
}

/* gzip'd input: inflate, mutate, deflate again (sometimes with its trailer broken). The
 * inflated bytes are bounded by max_size too, as a plain input's are: the reader's time
 * goes with the bytes it reads (two to four passes over them), and a gzip'd input of a
 * few KiB that inflated to 4 x max_size (the bound before) cost the reader 20 to 60 ms,
 * so that the gzip'd half of a grown corpus took 94% of its time */
static size_t fm_gzip(uint8_t *data, size_t size, size_t max_size) {
  /* one buffer and one inflate/deflate state for the whole run (reset per call): a
   * mutation must cost far less than the reader's run */
  static uint8_t *raw;
  static size_t cap;
  static z_stream z, d;
  static int ready;
  if (cap < max_size) {
    free(raw);
    cap = max_size;
    raw = malloc(cap);
    if (!raw) { cap = 0; return size; }
  }
  if (!ready) {
    if (inflateInit2(&z, 15 + 16) != Z_OK) return size;
    if (deflateInit2(&d, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) { inflateEnd(&z); return size; }
    ready = 1;
  }
  inflateReset(&z);
  z.next_in = data; z.avail_in = (uInt)size; z.next_out = raw; z.avail_out = (uInt)cap;
  inflate(&z, Z_FINISH);
  size_t n = cap - z.avail_out;
  if (!n) return size;
  n = fm_next() % 8 ? LLVMFuzzerMutate(raw, n, n * 2 + 64 < cap ? n * 2 + 64 : cap) : fm_repeat(raw, n, cap);
  deflateReset(&d);
  d.next_in = raw; d.avail_in = (uInt)n; d.next_out = data; d.avail_out = (uInt)max_size;
  int rc = deflate(&d, Z_FINISH);
  size_t out = max_size - d.avail_out;
  if (rc != Z_STREAM_END) return size;   /* did not fit: data holds part of it (any bytes are an input) */
  switch (fm_next() % 16) {
  case 0: if (out > 8) data[out - 1 - fm_next() % 8] ^= 1; break;   /* CRC or ISIZE wrong */
  case 1: out -= out > 4 ? 1 + fm_next() % 4 : 0; break;             /* cut inside the trailer */
  case 2: if (out < max_size) data[out++] = (uint8_t)fm_next(); break;   /* trailing garbage */
  }
  return out;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  fm_rng = seed ? seed : 1;
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b && fm_next() % 4) return fm_gzip(data, size, max_size);
  /* libFuzzer's own mutations grow an input a little at a time (as its length control
   * would without a custom mutator): long inputs come from the repeats, now and then */
  size_t soft = size * 2 + 64 < max_size ? size * 2 + 64 : max_size;
  switch (fm_next() % 32) {
  case 0: return fm_repeat(data, size, max_size);
  case 1: case 2: return fm_value(data, size, soft);
  default: return LLVMFuzzerMutate(data, size, soft);
  }
}
