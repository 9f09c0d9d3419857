/* html_page.h - what every page fragbench writes shares: one self-contained HTML file
 * (the style, the scripts and the data inline; nothing fetched, so it opens from disk
 * offline), text escaped for HTML and for JSON inside a <script>, and the tooltip that
 * follows the pointer (fbTip in the page's script). */
#ifndef FB_HTML_PAGE_H
#define FB_HTML_PAGE_H
#include <stdio.h>

void html_text(FILE *o, const char *s);            /* s as HTML text (also fine inside "attributes") */
void html_text_n(FILE *o, const char *s, size_t n);
void html_json_string(FILE *o, const char *s);     /* s as a JSON string that cannot end a <script> */
/* <!doctype html> ... <body>: the shared style, then css */
void html_begin(FILE *o, const char *title, const char *css);
/* the shared script (fbTip(event, html), fbHide(), fbBytes(n), fbEsc(s)), then js, </body></html> */
void html_end(FILE *o, const char *js);

#endif
