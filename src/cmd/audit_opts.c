/* audit_opts.c — parsing of the --format and --fail-on values the audit
 * subcommands share, with the one-line usage error (audit_opts.h). */
#include "cmd/audit_opts.h"
#include "util/log.h"
#include <string.h>

int vg_opt_format(const char *what, const char *val, enum vg_out_fmt *fmt)
{
    if (!strcmp(val, "table")) *fmt = VG_FMT_TABLE;
    else if (!strcmp(val, "json")) *fmt = VG_FMT_JSON;
    else if (!strcmp(val, "markdown")) *fmt = VG_FMT_MARKDOWN;
    else return vg_input_error("%s: --format '%s': expected table, json or markdown", what, val);
    return 0;
}

int vg_opt_fail_on(const char *what, const char *val, bool *none, enum vg_severity *sev)
{
    *none = !strcmp(val, "none");
    if (!*none && !vg_severity_parse(val, sev))
        return vg_input_error("%s: --fail-on '%s': expected none, low, medium, high or critical", what, val);
    return 0;
}
