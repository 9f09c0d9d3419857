/* html_plots.c - the plot data as JSON for report.html (see html_plots.h). */
#include "html_plots.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "html_page.h"

char *html_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 65536, n = 0;
  char *b = malloc(cap + 1);
  while (b) {
    size_t k = fread(b + n, 1, cap - n, f);
    n += k;
    if (n < cap) break;
    char *m = realloc(b, cap * 2 + 1);
    if (!m) { free(b); b = NULL; break; }
    b = m;
    cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (!b || bad) { free(b); return NULL; }
  b[n] = 0;
  if (len) *len = n;
  return b;
}

/* one field: a number as it is, "-" as null, else a string */
static void field(FILE *o, const char *s, size_t n) {
  char buf[64];
  if (n == 1 && s[0] == '-') { fputs("null", o); return; }
  if (n && n < sizeof buf) {
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (!*end && end != buf && v == v && v - v == 0) { fprintf(o, "%.10g", v); return; }
  }
  char *t = strndup(s, n);
  if (t) html_json_string(o, t);
  else fputs("null", o);
  free(t);
}

void html_dat_json(FILE *o, const char *text) {
  fputc('[', o);
  int blocks = 0, rows = 0, blanks = 0, open = 0;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n && p[n - 1] == '\r') n--;
    if (!n) {
      blanks++;
      if (blanks == 2 && open) { fputs("]}", o); open = 0; }
    } else {
      blanks = 0;
      if (!open) {
        fprintf(o, "%s{\"title\":", blocks++ ? "," : "");
        if (p[0] == '#') {
          size_t k = 1;
          while (k < n && p[k] == ' ') k++;
          char *t = strndup(p + k, n - k);
          html_json_string(o, t ? t : "");
          free(t);
        } else {
          fputs("\"\"", o);
        }
        fputs(",\"rows\":[", o);
        open = 1;
        rows = 0;
      }
      if (p[0] != '#') {
        fprintf(o, "%s[", rows++ ? "," : "");
        int tabs = memchr(p, '\t', n) != NULL, k = 0;
        for (size_t i = 0; i < n;) {
          if (!tabs) while (i < n && p[i] == ' ') i++;
          if (i >= n) break;
          size_t j = i;
          while (j < n && (tabs ? p[j] != '\t' : p[j] != ' ')) j++;
          if (k++) fputc(',', o);
          field(o, p + i, j - i);
          i = j + 1;
        }
        fputc(']', o);
      }
    }
    if (!e) break;
    p = e + 1;
  }
  if (open) fputs("]}", o);
  fputc(']', o);
}

/* a gnuplot value: "text" (with \" and \\ escapes) or a number */
static void value(FILE *o, const char *s) {
  while (*s == ' ') s++;
  if (*s == '"') {
    char *t = malloc(strlen(s) + 1);
    size_t k = 0;
    for (s++; t && *s && *s != '"'; s++) {
      if (*s == '\\' && s[1]) s++;
      t[k++] = *s;
    }
    if (t) t[k] = 0;
    html_json_string(o, t ? t : "");
    free(t);
    return;
  }
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  field(o, s, n);
}

/* the meta file: "array a[N]", "a[i] = v", "k = v" */
void html_meta_json(FILE *o, const char *text) {
  /* two passes over the lines: scalars, then each array with its elements in order */
  fputc('{', o);
  int first = 1;
  char *copy = strdup(text);
  if (!copy) { fputc('}', o); return; }
  char *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char name[128];
    int size;
    if (sscanf(line, "array %127[a-z_0-9][%d]", name, &size) == 2) {
      fprintf(o, "%s\"%s\":[", first ? "" : ",", name);
      first = 0;
      /* the elements name[1..size] from the whole text */
      for (int i = 1; i <= size; i++) {
        char key[160];
        snprintf(key, sizeof key, "\n%s[%d] = ", name, i);
        const char *at = strstr(text, key);
        if (i > 1) fputc(',', o);
        if (!at) { fputs("null", o); continue; }
        at += strlen(key);
        const char *e = strchr(at, '\n');
        char *v = strndup(at, e ? (size_t)(e - at) : strlen(at));
        if (v) value(o, v);
        else fputs("null", o);
        free(v);
      }
      fputc(']', o);
      continue;
    }
    char *eq = strstr(line, " = ");
    if (!eq) continue;
    *eq = 0;
    if (strchr(line, '[')) continue;   /* an array's element: written with its array */
    fprintf(o, "%s", first ? "" : ",");
    first = 0;
    html_json_string(o, line);
    fputc(':', o);
    value(o, eq + 3);
  }
  free(copy);
  fputc('}', o);
}

int html_plots_json(FILE *o, const char *datadir) {
  char path[1400];
  snprintf(path, sizeof path, "%s/plots.txt", datadir);
  char *list = html_slurp(path, NULL);
  fputc('[', o);
  int n = 0;
  char *save = NULL;
  for (char *line = list ? strtok_r(list, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
    char script[64], name[512];
    if (sscanf(line, "%63s %511s", script, name) != 2) continue;
    snprintf(path, sizeof path, "%s/%s.dat", datadir, name);
    char *dat = html_slurp(path, NULL);
    snprintf(path, sizeof path, "%s/%s.meta.gp", datadir, name);
    /* a leading newline: every "a[i] = " line, the first one too, starts after one */
    size_t ml = 0;
    char *meta = html_slurp(path, &ml), *nmeta = meta ? malloc(ml + 2) : NULL;
    if (nmeta) { nmeta[0] = '\n'; memcpy(nmeta + 1, meta, ml + 1); }
    if (dat && nmeta) {
      fprintf(o, "%s{\"script\":", n++ ? ",\n" : "");
      html_json_string(o, script);
      fputs(",\"name\":", o);
      html_json_string(o, name);
      fputs(",\"meta\":", o);
      html_meta_json(o, nmeta);
      fputs(",\"blocks\":", o);
      html_dat_json(o, dat);
      fputc('}', o);
    }
    free(dat);
    free(meta);
    free(nmeta);
  }
  free(list);
  fputs("]", o);
  return n;
}
