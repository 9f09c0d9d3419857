/* html_page.c - the shared frame of fragbench's pages (see html_page.h). */
#include "html_page.h"
#include <string.h>

void html_text_n(FILE *o, const char *s, size_t n) {
  for (size_t i = 0; i < n && s[i]; i++) {
    switch (s[i]) {
    case '&': fputs("&amp;", o); break;
    case '<': fputs("&lt;", o); break;
    case '>': fputs("&gt;", o); break;
    case '"': fputs("&quot;", o); break;
    case '\'': fputs("&#39;", o); break;
    default: fputc(s[i], o);
    }
  }
}

void html_text(FILE *o, const char *s) { html_text_n(o, s, strlen(s)); }

void html_json_string(FILE *o, const char *s) {
  fputc('"', o);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(o, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", o);
    else if (*p == '<' || *p == '>' || *p == '&' || *p < 0x20) fprintf(o, "\\u%04x", *p);   /* never "</script>" */
    else fputc(*p, o);
  }
  fputc('"', o);
}

static const char base_css[] =
  ":root{--fg:#1d2330;--muted:#5b6472;--line:#d9dde3;--bg:#fff;--panel:#f7f8fa;"
  "--alloc:#4e79a7;--free:#59a14f;--inactive:#f28e2b;--unmapped:#c9ccd1;--req:#d62728;--fits:#8e6bbf}\n"
  "*{box-sizing:border-box}\n"
  "body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:var(--fg);background:var(--bg)}\n"
  "h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:18px 0 8px}h3{font-size:15px;margin:12px 0 6px}\n"
  "code,pre{font:12.5px/1.4 ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace}\n"
  ".muted{color:var(--muted)}\n"
  ".sw{display:inline-block;width:13px;height:13px;border-radius:2px;vertical-align:-2px;margin-right:5px;border:1px solid rgba(0,0,0,.25)}\n"
  "#fbtip{position:fixed;z-index:10;display:none;max-width:560px;background:#fffffb;border:1px solid #888;border-radius:5px;"
  "box-shadow:0 3px 12px rgba(0,0,0,.25);padding:8px 10px;font-size:13px;pointer-events:none;white-space:normal}\n"
  ".fr{font:12px/1.35 ui-monospace,'DejaVu Sans Mono',monospace;white-space:pre-wrap;word-break:break-all;margin-top:4px}\n";

void html_begin(FILE *o, const char *title, const char *css) {
  fputs("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", o);
  html_text(o, title);
  fprintf(o, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<div id=\"fbtip\" role=\"tooltip\"></div>\n", base_css, css ? css : "");
}

static const char base_js[] =
  "'use strict';\n"
  "function fbEsc(s){return String(s).replace(/[&<>\"']/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','\"':'&quot;',\"'\":'&#39;'}[c];});}\n"
  "function fbBytes(b){b=Number(b);var u=['B','KiB','MiB','GiB','TiB'],i=0;while(b>=1024&&i<4){b/=1024;i++;}return i?b.toFixed(2)+' '+u[i]:b+' B';}\n"
  "function fbTip(ev,html){var t=document.getElementById('fbtip');t.innerHTML=html;t.style.display='block';"
  "var w=t.offsetWidth,h=t.offsetHeight,x=ev.clientX+14,y=ev.clientY+14;"
  "if(x+w>innerWidth-4)x=Math.max(4,ev.clientX-w-14);if(y+h>innerHeight-4)y=Math.max(4,ev.clientY-h-14);"
  "t.style.left=x+'px';t.style.top=y+'px';}\n"
  "function fbHide(){document.getElementById('fbtip').style.display='none';}\n";

void html_end(FILE *o, const char *js) {
  fprintf(o, "<script>\n%s%s</script>\n</body>\n</html>\n", base_js, js ? js : "");
}
