/* audit_opts.h — option values shared by `vigil audit`, `vigil audit merge`,
 * `vigil audit --security` and `vigil advisories` (audit_opts.c), and the
 * entry points cmd_audit dispatches to. */
#ifndef VG_AUDIT_OPTS_H
#define VG_AUDIT_OPTS_H
#include "advisory/advisory.h"
#include <stdbool.h>

enum vg_out_fmt { VG_FMT_TABLE, VG_FMT_JSON, VG_FMT_MARKDOWN };

/* "table" | "json" | "markdown"; on a bad value prints one line naming
 * `what` and returns VG_EXIT_INPUT, else 0. */
int vg_opt_format(const char *what, const char *val, enum vg_out_fmt *fmt);
/* "none" | low … critical: *none set for "none". */
int vg_opt_fail_on(const char *what, const char *val, bool *none, enum vg_severity *sev);

/* `vigil audit --security …` (audit_security.c): the exit code. */
int vg_audit_security(int argc, char **argv);

#endif
