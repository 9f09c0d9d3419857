/* report_text.h - how numbers and names are written in report.md: byte sizes, multiples,
 * Markdown-safe cells (shared by the report's sections). */
#ifndef FB_REPORT_TEXT_H
#define FB_REPORT_TEXT_H
#include <stddef.h>
#include <stdio.h>

/* "9.12 GiB", "380.5 MiB", "1.5 KiB", "512 B"; "" for "" */
const char *rt_bytes(const char *value, char *buf, size_t len);
const char *rt_bytes_d(double b, char *buf, size_t len);
/* a multiple: "1.004x" below 1.1, "1.95x" above; "" for "" */
const char *rt_x(const char *value, char *buf, size_t len);
const char *rt_x_d(double x, char *buf, size_t len);
/* s with '|' escaped, into buf */
const char *rt_md(const char *s, char *buf, size_t len);
/* a number or 0 */
double rt_num(const char *s);

#endif
