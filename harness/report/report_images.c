/* report_images.c - which pictures report.md may embed: the non-empty files of DIR/plots/
 * (drawn by gnuplot from the plot data, or by `fragbench explain`). */
#include "report.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void report_images_scan(struct report_images *im, const char *dir) {
  memset(im, 0, sizeof *im);
  char path[1200];
  snprintf(path, sizeof path, "%s/plots", dir);
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    char full[1500];
    struct stat st;
    snprintf(full, sizeof full, "%s/%s", path, e->d_name);
    if (e->d_name[0] == '.' || stat(full, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) continue;
    im->name = realloc(im->name, (size_t)(im->n + 1) * sizeof *im->name);
    if (!im->name) abort();
    im->name[im->n] = strdup(e->d_name);
    if (!im->name[im->n]) abort();
    im->n++;
  }
  closedir(d);
}

int report_has_image(const struct report_images *im, const char *name) {
  for (int i = 0; i < im->n; i++) if (!strcmp(im->name[i], name)) return 1;
  return 0;
}

void report_images_free(struct report_images *im) {
  for (int i = 0; i < im->n; i++) free(im->name[i]);
  free(im->name);
  memset(im, 0, sizeof *im);
}
