/* audit_security.c — `vigil audit --security`: runs the tenant-isolation and
 * security posture checks (src/security/) and reports them.  It runs only
 * those checks (the CVE audit is a separate `vigil audit` run; `vigil score`
 * reads both reports).  Exit: 0 no fail at or above --fail-on (default high),
 * 1 such a fail, 2 usage or configuration error. */
#include "security/security.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: vigil audit --security [--root DIR] [--config FILE] [--targets FILE] [--only FAMILY,…]\n"
    "                   [--no-scontrol] [--json] [--format table|json|markdown]\n"
    "                   [--fail-on none|low|medium|high|critical]\n"
    "families: slurm, infiniband, node, network\n";

static int load_conf(const char *path, struct vg_sec_config *c)
{
    char *text, err[512];
    if (vg_read_file(NULL, path, 1u << 20, &text, NULL)) return vg_input_error("%s: %s", path, strerror(errno));
    int rc = vg_sec_config_parse(text, path, c, err, sizeof err);
    free(text);
    return rc ? vg_input_error("%s", err) : 0;
}

/* Appends b's targets to a (--targets after --config). */
static void merge_targets(struct vg_sec_config *a, struct vg_sec_config *b)
{
    a->targets = vg_xrealloc(a->targets, (a->ntargets + b->ntargets + 1) * sizeof *a->targets);
    memcpy(a->targets + a->ntargets, b->targets, b->ntargets * sizeof *b->targets);
    a->ntargets += b->ntargets;
    vg_sec_config_free(b);
}

int vg_audit_security(int argc, char **argv)
{
    const char *root = "/", *config = NULL, *targets = NULL, *only = NULL;
    int fmt = 0;   /* 0 table, 1 json, 2 markdown */
    bool fail_none = false, no_scontrol = false;
    enum vg_severity fail_on = VG_SEV_HIGH;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "--root") || !strcmp(a, "--config") || !strcmp(a, "--targets") || !strcmp(a, "--only") ||
                     !strcmp(a, "--format") || !strcmp(a, "--fail-on");
        if (takes && !val) return vg_input_error("audit --security: %s needs a value", a);
        if (!strcmp(a, "--security")) continue;
        else if (!strcmp(a, "--json")) fmt = 1;
        else if (!strcmp(a, "--no-scontrol")) no_scontrol = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(usage_text, stdout); return VG_EXIT_OK; }
        else if (!strcmp(a, "--root")) root = val;
        else if (!strcmp(a, "--config")) config = val;
        else if (!strcmp(a, "--targets")) targets = val;
        else if (!strcmp(a, "--only")) only = val;
        else if (!strcmp(a, "--format")) {
            if (!strcmp(val, "table")) fmt = 0;
            else if (!strcmp(val, "json")) fmt = 1;
            else if (!strcmp(val, "markdown")) fmt = 2;
            else return vg_input_error("audit --security: --format '%s': expected table, json or markdown", val);
        } else if (!strcmp(a, "--fail-on")) {
            fail_none = !strcmp(val, "none");
            if (!fail_none && !vg_severity_parse(val, &fail_on))
                return vg_input_error("audit --security: --fail-on '%s': expected none, low, medium, high or critical", val);
        } else return vg_input_error("audit --security: '%s' does not combine with --security (vigil audit --security --help)", a);
        if (takes) i++;
    }
    if (strcmp(root, "/") && !vg_path_exists(NULL, root)) return vg_input_error("audit --security: --root %s: no such directory", root);
    struct vg_sec_config conf = { .timeout_ms = 500 }, tconf;
    if (config && load_conf(config, &conf)) return VG_EXIT_INPUT;
    if (targets) {
        if (load_conf(targets, &tconf)) {
            vg_sec_config_free(&conf);
            return VG_EXIT_INPUT;
        }
        merge_targets(&conf, &tconf);
    }
    struct vg_sec_ctx c;
    vg_sec_init(&c, root, &conf);
    if (no_scontrol) c.live_slurm = false;
    vg_sec_run(&c, only);
    if (fmt == 1) vg_json_print(stdout, vg_sec_json(&c), 0);
    else vg_sec_print(&c, stdout, fmt == 2);
    int rc = !fail_none && vg_sec_failures(&c, fail_on) ? VG_EXIT_FINDINGS : VG_EXIT_OK;
    vg_sec_free(&c);
    vg_sec_config_free(&conf);
    return rc;
}
