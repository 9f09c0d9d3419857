/* html_md.c - report.md's Markdown as HTML (see html_md.h). Line by line: a block ends
 * at a blank line or where another kind starts. */
#include "html_md.h"
#include <stdlib.h>
#include <string.h>
#include "html_page.h"

static int starts(const char *s, size_t n, const char *p) {
  size_t k = strlen(p);
  return n >= k && !strncmp(s, p, k);
}

/* the closing delimiter d (unescaped) in s[i..n), or n */
static size_t find_close(const char *s, size_t i, size_t n, const char *d) {
  size_t k = strlen(d);
  for (; i + k <= n; i++) {
    if (s[i] == '\\' && d[0] != '`') { i++; continue; }
    if (!strncmp(s + i, d, k)) return i;
  }
  return n;
}

void html_md_inline(FILE *o, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '\\' && i + 1 < n && strchr("\\`*_{}[]()#+-.!|<>", s[i + 1])) {
      html_text_n(o, s + i + 1, 1);
      i++;
    } else if (c == '`') {
      size_t e = find_close(s, i + 1, n, "`");
      if (e == n) { fputc('`', o); continue; }
      fputs("<code>", o);
      html_text_n(o, s + i + 1, e - i - 1);
      fputs("</code>", o);
      i = e;
    } else if (c == '*' && i + 1 < n && s[i + 1] == '*') {
      size_t e = find_close(s, i + 2, n, "**");
      if (e == n) { fputs("**", o); i++; continue; }
      fputs("<strong>", o);
      html_md_inline(o, s + i + 2, e - i - 2);
      fputs("</strong>", o);
      i = e + 1;
    } else if (c == '[') {
      size_t e = find_close(s, i + 1, n, "](");
      size_t f = e < n ? find_close(s, e + 2, n, ")") : n;
      if (f == n) { fputc('[', o); continue; }
      fputs("<a href=\"", o);
      html_text_n(o, s + e + 2, f - e - 2);
      fputs("\">", o);
      html_md_inline(o, s + i + 1, e - i - 1);
      fputs("</a>", o);
      i = f;
    } else {
      html_text_n(o, s + i, 1);
    }
  }
}

/* the cells of a table row "| a | b \| c |": [start, end) pairs, trimmed; the count */
static int cells(const char *s, size_t n, size_t *st, size_t *en, int max) {
  int k = 0;
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '|')) { if (s[i] == '|') { i++; break; } i++; }
  size_t from = i;
  int code = 0;
  for (; i <= n && k < max; i++) {
    if (i < n && s[i] == '\\') { i++; continue; }
    if (i < n && s[i] == '`') code = !code;
    if (i == n || (s[i] == '|' && !code)) {
      size_t a = from, b = i;
      while (a < b && s[a] == ' ') a++;
      while (b > a && s[b - 1] == ' ') b--;
      if (i == n && a == b) break;   /* after the closing pipe */
      st[k] = a;
      en[k] = b;
      k++;
      from = i + 1;
    }
  }
  return k;
}

static void slug(FILE *o, const char *s, size_t n) {
  int dash = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) { fputc(c, o); dash = 0; }
    else if (c >= 'A' && c <= 'Z') { fputc(c | 32, o); dash = 0; }
    else if (!dash) { fputc('-', o); dash = 1; }
  }
}

#define MAXCOL 64

static void table(FILE *o, const char **lines, const size_t *lens, int n) {
  size_t st[MAXCOL], en[MAXCOL];
  char align[MAXCOL];
  int nc = n > 1 ? cells(lines[1], lens[1], st, en, MAXCOL) : 0;
  for (int c = 0; c < MAXCOL; c++) align[c] = 'l';
  for (int c = 0; c < nc; c++) {
    int left = lines[1][st[c]] == ':', right = en[c] > st[c] && lines[1][en[c] - 1] == ':';
    align[c] = left && right ? 'c' : right ? 'r' : 'l';
  }
  fputs("<div class=\"tablewrap\"><table>\n", o);
  for (int r = 0; r < n; r++) {
    if (r == 1) continue;
    int k = cells(lines[r], lens[r], st, en, MAXCOL);
    fputs(r == 0 ? "<thead><tr>" : "<tr>", o);
    for (int c = 0; c < k; c++) {
      const char *tag = r == 0 ? "th" : "td";
      if (align[c] == 'l') fprintf(o, "<%s>", tag);
      else fprintf(o, "<%s class=\"%s\">", tag, align[c] == 'r' ? "num" : "mid");
      html_md_inline(o, lines[r] + st[c], en[c] - st[c]);
      fprintf(o, "</%s>", tag);
    }
    fputs(r == 0 ? "</tr></thead>\n<tbody>\n" : "</tr>\n", o);
  }
  fputs("</tbody></table></div>\n", o);
}

/* "![alt](src)" alone on the line: 1 with alt and src */
static int image_line(const char *s, size_t n, char *alt, size_t na, char *src, size_t ns) {
  if (!starts(s, n, "![") || s[n - 1] != ')') return 0;
  size_t e = find_close(s, 2, n, "](");
  if (e == n) return 0;
  snprintf(alt, na, "%.*s", (int)(e - 2), s + 2);
  snprintf(src, ns, "%.*s", (int)(n - 1 - e - 2), s + e + 2);
  return 1;
}

void html_md(FILE *o, const char *md, html_md_image_fn img, void *ctx) {
  /* the lines, without their newlines */
  size_t nl = 0, cap = 256;
  const char **line = malloc(cap * sizeof *line);
  size_t *len = malloc(cap * sizeof *len);
  if (!line || !len) { free(line); free(len); return; }
  for (const char *p = md; *p;) {
    const char *e = strchr(p, '\n');
    size_t k = e ? (size_t)(e - p) : strlen(p);
    if (nl == cap) {
      cap *= 2;
      const char **l2 = realloc(line, cap * sizeof *line);
      if (!l2) break;
      line = l2;
      size_t *n2 = realloc(len, cap * sizeof *len);
      if (!n2) break;
      len = n2;
    }
    line[nl] = p;
    len[nl++] = k > 0 && p[k - 1] == '\r' ? k - 1 : k;
    p += k + (e ? 1 : 0);
  }
  char alt[600], src[600];
  for (size_t i = 0; i < nl;) {
    const char *s = line[i];
    size_t n = len[i];
    if (!n) { i++; continue; }
    if (s[0] == '#') {
      int h = 0;
      while ((size_t)h < n && s[h] == '#') h++;
      size_t t = (size_t)h;
      while (t < n && s[t] == ' ') t++;
      if (h > 6) h = 6;
      fprintf(o, "<h%d id=\"", h);
      slug(o, s + t, n - t);
      fputs("\">", o);
      html_md_inline(o, s + t, n - t);
      fprintf(o, "</h%d>\n", h);
      i++;
    } else if (s[0] == '|') {
      size_t j = i;
      while (j < nl && len[j] && line[j][0] == '|') j++;
      table(o, line + i, len + i, (int)(j - i));
      i = j;
    } else if (image_line(s, n, alt, sizeof alt, src, sizeof src)) {
      if (!img || !img(ctx, o, alt, src)) {
        fputs("<p class=\"missing\">(", o);
        html_text(o, alt);
        fputs(": no picture)</p>\n", o);
      }
      i++;
    } else if (starts(s, n, "- ") || starts(s, n, "* ")) {
      fputs("<ul>\n", o);
      while (i < nl && (starts(line[i], len[i], "- ") || starts(line[i], len[i], "* "))) {
        fputs("<li>", o);
        html_md_inline(o, line[i] + 2, len[i] - 2);
        fputs("</li>\n", o);
        i++;
      }
      fputs("</ul>\n", o);
    } else if (starts(s, n, "```")) {
      fputs("<pre>", o);
      for (i++; i < nl && !starts(line[i], len[i], "```"); i++) { html_text_n(o, line[i], len[i]); fputc('\n', o); }
      fputs("</pre>\n", o);
      i++;
    } else {
      fputs("<p>", o);
      size_t j = i;
      while (j < nl && len[j] && line[j][0] != '#' && line[j][0] != '|' && !starts(line[j], len[j], "- ") &&
             !starts(line[j], len[j], "```") && !image_line(line[j], len[j], alt, sizeof alt, src, sizeof src)) {
        if (j > i) fputc('\n', o);
        html_md_inline(o, line[j], len[j]);
        j++;
      }
      fputs("</p>\n", o);
      i = j;
    }
  }
  free(line);
  free(len);
}
