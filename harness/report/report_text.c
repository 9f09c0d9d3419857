/* report_text.c - numbers and names as report.md writes them (see report_text.h). */
#include "report_text.h"
#include <stdlib.h>
#include <string.h>

double rt_num(const char *s) { return s && *s ? strtod(s, NULL) : 0; }

const char *rt_bytes_d(double b, char *buf, size_t len) {
  if (b >= 1073741824.0) snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
  else if (b >= 1048576.0) snprintf(buf, len, "%.1f MiB", b / 1048576.0);
  else if (b >= 1024.0) snprintf(buf, len, "%.1f KiB", b / 1024.0);
  else snprintf(buf, len, "%.0f B", b);
  return buf;
}

const char *rt_bytes(const char *v, char *buf, size_t len) {
  if (!v || !*v) { buf[0] = 0; return buf; }
  return rt_bytes_d(rt_num(v), buf, len);
}

const char *rt_x_d(double x, char *buf, size_t len) {
  snprintf(buf, len, x < 1.1 ? "%.3fx" : "%.2fx", x);
  return buf;
}

const char *rt_x(const char *v, char *buf, size_t len) {
  if (!v || !*v) { buf[0] = 0; return buf; }
  return rt_x_d(rt_num(v), buf, len);
}

const char *rt_md(const char *s, char *buf, size_t len) {
  size_t k = 0;
  for (; s && *s && k + 2 < len; s++) {
    if (*s == '|') buf[k++] = '\\';
    buf[k++] = *s;
  }
  buf[k] = 0;
  return buf;
}
