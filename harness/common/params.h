/* params.h - "name:k=v,k=v" parameter lists, typed parameter specs, and byte sizes.
 * Every workload and allocator declares its keys in a param_spec table; the harness
 * checks given keys and values against it before open/create, so getters cannot fail. */
#ifndef FB_PARAMS_H
#define FB_PARAMS_H
#include <stddef.h>
#include <stdint.h>

enum ptype { P_INT, P_BYTES, P_FLOAT, P_BOOL, P_STR };

struct param_spec {
  const char *key;
  enum ptype type;
  const char *def;     /* default, as text; "" = unset (getters return 0 / "") */
  const char *help;
};

#define PARAMS_MAX 32
struct params {
  int n;
  char key[PARAMS_MAX][32];
  char val[PARAMS_MAX][256];
  const struct param_spec *spec;   /* set by params_check */
  uint64_t percent_base;           /* what "N%" byte values are taken of (device total) */
};

/* Split "name:k=v,k=[a,b:c]" into name (nameout, namelen) and params. Brackets may hold
 * commas and colons. Returns 0, or -1 with err set. */
int params_parse_spec(const char *text, char *nameout, size_t namelen, struct params *out, char *err);
/* Check every given key is in spec and every value parses as its type. Sets p->spec. */
int params_check(struct params *p, const struct param_spec *spec, const char *owner, char *err);
/* Add or replace key=val (used to adopt a trace's allocator_settings). */
int params_set(struct params *p, const char *key, const char *val);
int params_has(const struct params *p, const char *key);   /* given explicitly */

const char *param_str(const struct params *p, const char *key);
int64_t param_int(const struct params *p, const char *key);
uint64_t param_bytes(const struct params *p, const char *key);
double param_float(const struct params *p, const char *key);
int param_bool(const struct params *p, const char *key);
/* the index of val among the words of "a|b|c", -1 when it is none of them */
int params_word_index(const char *words, const char *val);

/* Render given params as "k=v,k=v" (no name). */
void params_format(const struct params *p, char *out, size_t outlen);

/* Byte sizes: a decimal number (never hex) with a unit, any case: none or B = bytes;
 * K/M/G/T, Ki/Mi/Gi/Ti and KiB/MiB/GiB/TiB = 1024^n (PyTorch's users think in GiB: 10G is
 * 10 GiB); KB/MB/GB/TB = 1000^n (10GB is 10^10 bytes); or "N%" of percent_base (0 = %
 * not allowed). Returns 0 or -1. */
int parse_bytes(const char *s, uint64_t percent_base, uint64_t *out);
/* the multiplier of a unit as parse_bytes reads it ("" and "B": 1): 0, or -1 unknown */
int bytes_unit(const char *u, double *mul);
int parse_u64(const char *s, uint64_t *out);
int parse_double(const char *s, double *out);

/* Human-readable bytes ("1.50 GiB") into buf. */
const char *fmt_bytes(uint64_t b, char *buf, size_t len);

/* Print a spec table (for `fragbench list`). */
void params_print_spec(const struct param_spec *spec, const char *indent);

#endif
