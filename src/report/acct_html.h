/* acct_html.h — the reliability accounting (controller/accounting.h's
 * document) as one self-contained HTML page (acct_html.c). */
#ifndef VG_ACCT_HTML_H
#define VG_ACCT_HTML_H
#include <jansson.h>
#include <stdio.h>

/* Writes the page for doc (vg_accounting's, with a "goodput" object
 * (drill/goodput.h) when there is one; the goodput alone when doc has no
 * "window"); 0, or -1 when writing failed. */
int vg_accounting_html(FILE *f, const json_t *doc);

#endif
