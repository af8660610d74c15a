/* escape.h — text from elsewhere (a node's report, a file under --root, a
 * controller's answer) made safe for where it is shown.  A terminal never
 * receives a control character (C0, DEL, C1: escape sequences that set its
 * title, clear it or move the cursor), a bidirectional control or a line
 * separator (which reorder or split what follows), nor a byte that is not
 * UTF-8: each is shown instead, as \e, \n, \t, \r, \\, \xNN or \uNNNN.
 * Markdown gets the same, and what would be markup (<, >, &, |, `, [, ],
 * \) escaped, so a report's text can never become a tag, a link or a table
 * cell of its own. */
#ifndef VG_ESCAPE_H
#define VG_ESCAPE_H
#include "util/sbuf.h"
#include <stdbool.h>
#include <stdio.h>

/* Appends s as a terminal may show it (NULL appends nothing). */
void vg_term_escape(struct sbuf *b, const char *s);
/* Appends s as a Markdown cell or line may hold it. */
void vg_md_escape(struct sbuf *b, const char *s);
/* fputs of s escaped for a terminal, or for Markdown when md. */
void vg_put_text(FILE *f, const char *s, bool md);
/* fputs of s inside a Markdown code span (`…`): as for a terminal, and a
 * backquote, which would end the span, as \x60. */
void vg_put_code(FILE *f, const char *s);

#endif
