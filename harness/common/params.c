/* params.c - parameter lists ("name:k=v,k=[a,b]"), typed checks against a spec table,
 * and byte-size parsing (K/M/G/T and Ki/Mi/Gi/Ti, KiB.. powers of 1024; KB/MB/GB/TB powers
 * of 1000; any case; N%). */
#include "params.h"
#include "event.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || !isdigit((unsigned char)*s)) return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

int parse_double(const char *s, double *out) {
  if (!s || !*s) return -1;
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* the length of a plain decimal number at s ("12", "1.5", ".5", "2e9"; never hex, inf or
 * nan, which strtod would also take), 0 when none */
static size_t decimal_len(const char *s) {
  const char *p = s;
  int digits = 0;
  while (isdigit((unsigned char)*p)) { p++; digits++; }
  if (*p == '.') { p++; while (isdigit((unsigned char)*p)) { p++; digits++; } }
  if (!digits) return 0;
  if ((*p == 'e' || *p == 'E') && (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
    p += 2;
    while (isdigit((unsigned char)*p)) p++;
  }
  return (size_t)(p - s);
}

int bytes_unit(const char *u, double *mul) {
  *mul = 1;
  if (!*u) return 0;
  if ((*u == 'B' || *u == 'b') && !u[1]) return 0;
  static const char *units = "KMGT";
  const char *k = strchr(units, toupper((unsigned char)*u));
  if (!k) return -1;
  int pw = (int)(k - units) + 1;
  u++;
  if (*u == 'i' || *u == 'I') { u++; if (*u == 'B' || *u == 'b') u++; *mul = pow(1024.0, pw); }   /* Gi, GiB */
  else if (*u == 'B' || *u == 'b') { u++; *mul = pow(1000.0, pw); }                              /* GB: 10^9 */
  else *mul = pow(1024.0, pw);                                                                   /* G: GiB, as PyTorch's users count */
  return *u ? -1 : 0;
}

int parse_bytes(const char *s, uint64_t percent_base, uint64_t *out) {
  if (!s || !*s) return -1;
  size_t n = decimal_len(s);
  if (!n) return -1;
  errno = 0;
  double v = strtod(s, NULL);
  if (errno || !isfinite(v) || v < 0) return -1;
  const char *u = s + n;
  int integral = 1;
  for (size_t i = 0; i < n; i++) if (!isdigit((unsigned char)s[i])) integral = 0;
  if (*u == '%') {
    if (!percent_base || u[1]) return -1;
    *out = (uint64_t)(v / 100.0 * (double)percent_base);
    return 0;
  }
  double mul;
  if (bytes_unit(u, &mul)) return -1;
  if (integral && mul == 1) {   /* exact for large plain integers */
    uint64_t x;
    char num[32];
    if (n >= sizeof num) return -1;
    memcpy(num, s, n);
    num[n] = 0;
    if (parse_u64(num, &x)) return -1;
    *out = x;
    return 0;
  }
  double r = v * mul;
  if (r >= 18446744073709551615.0) return -1;
  *out = (uint64_t)(r + 0.5);
  return 0;
}

const char *fmt_bytes(uint64_t b, char *buf, size_t len) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)b;
  int i = 0;
  while (v >= 1024 && i < 4) { v /= 1024; i++; }
  if (i == 0) snprintf(buf, len, "%llu B", (unsigned long long)b);
  else snprintf(buf, len, "%.2f %s", v, u[i]);
  return buf;
}

int params_parse_spec(const char *text, char *nameout, size_t namelen, struct params *out, char *err) {
  memset(out, 0, sizeof *out);
  const char *colon = strchr(text, ':');
  size_t nl = colon ? (size_t)(colon - text) : strlen(text);
  if (nl == 0 || nl >= namelen) {
    snprintf(err, FB_ERRLEN, "'%s': expected NAME or NAME:key=value,...", text);
    return -1;
  }
  memcpy(nameout, text, nl);
  nameout[nl] = 0;
  if (!colon) return 0;
  const char *p = colon + 1;
  while (*p) {
    const char *eq = p;
    while (*eq && *eq != '=' && *eq != ',') eq++;
    if (*eq != '=' || eq == p) {
      snprintf(err, FB_ERRLEN, "'%s': expected key=value at '%s'", text, p);
      return -1;
    }
    const char *v = eq + 1, *e = v;
    int depth = 0;
    while (*e && (depth > 0 || *e != ',')) {
      if (*e == '[') depth++;
      else if (*e == ']') depth--;
      e++;
    }
    if (depth != 0) {
      snprintf(err, FB_ERRLEN, "'%s': unbalanced brackets in the value of '%.*s'", text, (int)(eq - p), p);
      return -1;
    }
    if (out->n >= PARAMS_MAX || (size_t)(eq - p) >= sizeof out->key[0] || (size_t)(e - v) >= sizeof out->val[0]) {
      snprintf(err, FB_ERRLEN, "'%s': too many or too long parameters", text);
      return -1;
    }
    char key[32], val[256];
    memcpy(key, p, (size_t)(eq - p)); key[eq - p] = 0;
    memcpy(val, v, (size_t)(e - v)); val[e - v] = 0;
    if (params_has(out, key)) {
      snprintf(err, FB_ERRLEN, "'%s': parameter '%s' given twice", text, key);
      return -1;
    }
    params_set(out, key, val);
    p = *e ? e + 1 : e;
  }
  return 0;
}

static const struct param_spec *spec_find(const struct param_spec *spec, const char *key) {
  for (; spec && spec->key; spec++) if (!strcmp(spec->key, key)) return spec;
  return NULL;
}

static int check_value(const struct param_spec *s, const char *v, uint64_t base) {
  uint64_t u; double d;
  switch (s->type) {
  case P_INT:   /* a 64-bit signed integer: a larger one is refused, never clamped */
    if (v[0] == '-') return parse_u64(v + 1, &u) || u > (uint64_t)INT64_MAX + 1 ? -1 : 0;
    return parse_u64(v, &u) || u > (uint64_t)INT64_MAX ? -1 : 0;
  case P_BYTES: return parse_bytes(v, base, &u);
  case P_FLOAT: return parse_double(v, &d);
  case P_BOOL: return strcmp(v, "0") && strcmp(v, "1") && strcmp(v, "true") && strcmp(v, "false") ? -1 : 0;
  case P_STR: return 0;
  }
  return -1;
}

static const char *type_name(enum ptype t) {
  switch (t) {
  case P_INT: return "an integer (64-bit: at most 9223372036854775807)";
  case P_BYTES: return "a byte size (e.g. 512, 2MiB, 1.5G, 50%)";
  case P_FLOAT: return "a number";
  case P_BOOL: return "0 or 1";
  case P_STR: return "text";
  }
  return "?";
}

int params_check(struct params *p, const struct param_spec *spec, const char *owner, char *err) {
  for (int i = 0; i < p->n; i++) {
    const struct param_spec *s = spec_find(spec, p->key[i]);
    if (!s) {
      int n = snprintf(err, FB_ERRLEN, "%s: unknown parameter '%s'; known:", owner, p->key[i]);
      if (!spec || !spec->key) n += snprintf(err + n, FB_ERRLEN - (size_t)n, " (none)");
      for (const struct param_spec *k = spec; k && k->key && n < FB_ERRLEN; k++)
        n += snprintf(err + n, FB_ERRLEN - (size_t)n, " %s", k->key);
      return -1;
    }
    if (check_value(s, p->val[i], p->percent_base)) {
      snprintf(err, FB_ERRLEN, "%s: parameter '%s=%s': expected %s", owner, p->key[i], p->val[i], type_name(s->type));
      return -1;
    }
  }
  p->spec = spec;
  return 0;
}

int params_set(struct params *p, const char *key, const char *val) {
  for (int i = 0; i < p->n; i++)
    if (!strcmp(p->key[i], key)) {
      snprintf(p->val[i], sizeof p->val[i], "%s", val);
      return 0;
    }
  if (p->n >= PARAMS_MAX) return -1;
  snprintf(p->key[p->n], sizeof p->key[0], "%s", key);
  snprintf(p->val[p->n], sizeof p->val[0], "%s", val);
  p->n++;
  return 0;
}

int params_has(const struct params *p, const char *key) {
  for (int i = 0; i < p->n; i++) if (!strcmp(p->key[i], key)) return 1;
  return 0;
}

const char *param_str(const struct params *p, const char *key) {
  for (int i = 0; i < p->n; i++) if (!strcmp(p->key[i], key)) return p->val[i];
  const struct param_spec *s = spec_find(p->spec, key);
  return s && s->def ? s->def : "";
}

int params_word_index(const char *words, const char *val) {
  size_t n = strlen(val);
  for (int i = 0; *words; i++) {
    const char *e = strchr(words, '|');
    size_t l = e ? (size_t)(e - words) : strlen(words);
    if (l == n && !strncmp(words, val, n)) return i;
    words += l + (e ? 1 : 0);
  }
  return -1;
}

int64_t param_int(const struct params *p, const char *key) {
  const char *v = param_str(p, key);
  return v[0] ? strtoll(v, NULL, 10) : 0;
}

uint64_t param_bytes(const struct params *p, const char *key) {
  uint64_t b = 0;
  const char *v = param_str(p, key);
  if (v[0] && parse_bytes(v, p->percent_base, &b)) return 0;
  return b;
}

double param_float(const struct params *p, const char *key) {
  const char *v = param_str(p, key);
  return v[0] ? strtod(v, NULL) : 0.0;
}

int param_bool(const struct params *p, const char *key) {
  const char *v = param_str(p, key);
  return !strcmp(v, "1") || !strcmp(v, "true");
}

void params_format(const struct params *p, char *out, size_t outlen) {
  size_t n = 0;
  out[0] = 0;
  for (int i = 0; i < p->n && n < outlen; i++)
    n += (size_t)snprintf(out + n, outlen - n, "%s%s=%s", i ? "," : "", p->key[i], p->val[i]);
}

void params_print_spec(const struct param_spec *spec, const char *indent) {
  for (; spec && spec->key; spec++)
    printf("%s%-28s %s (default %s)\n", indent, spec->key, spec->help, spec->def && spec->def[0] ? spec->def : "none");
}
