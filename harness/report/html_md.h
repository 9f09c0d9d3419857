/* html_md.h - the Markdown report.md is written in, as HTML: headings (with ids), paragraphs,
 * "- " lists, pipe tables (with their column alignment), **bold**, `code`, [links](url),
 * backslash escapes; a line that is only an image, ![alt](src), is handed to the
 * caller (img), which writes the picture in its place. Only the Markdown report_*.c
 * writes is known; anything else passes through as escaped text. */
#ifndef FB_HTML_MD_H
#define FB_HTML_MD_H
#include <stdio.h>

/* writes what stands for the image; returns 0 when it wrote nothing (then alt is shown) */
typedef int (*html_md_image_fn)(void *ctx, FILE *o, const char *alt, const char *src);

void html_md(FILE *o, const char *md, html_md_image_fn img, void *ctx);
/* one line's inline Markdown as HTML */
void html_md_inline(FILE *o, const char *s, size_t n);

#endif
