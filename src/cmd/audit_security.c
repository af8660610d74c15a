/* audit_security.c — `vigil audit --security`: runs the tenant-isolation and
 * security posture checks (src/security/) and reports them.  It runs only
 * those checks (the CVE audit is a separate `vigil audit` run; `vigil score`
 * reads both reports).  Exit: 0 no fail at or above --fail-on (default high),
 * 1 such a fail, 2 usage or configuration error. */
#include "cmd/audit_opts.h"
#include "security/security.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: vigil audit --security [--root DIR] [--config FILE] [--targets FILE] [--only FAMILY,…]\n"
    "                   [--no-scontrol] [--json] [--format table|json|markdown]\n"
    "                   [--fail-on none|low|medium|high|critical]\n"
    "families: slurm, infiniband, node, network, storage, devices\n";

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
    static const char what[] = "audit --security";
    const char *root = "/", *config = NULL, *targets = NULL, *only = NULL;
    enum vg_out_fmt fmt = VG_FMT_TABLE;
    bool fail_none = false, no_scontrol = false;
    enum vg_severity fail_on = VG_SEV_HIGH;
    enum { O_SECURITY = 256, O_ROOT, O_CONFIG, O_TARGETS, O_ONLY, O_FORMAT, O_FAILON, O_JSON, O_NOSCONTROL, O_HELP };
    static const struct option opts[] = {
        { "security", no_argument, 0, O_SECURITY },   { "root", required_argument, 0, O_ROOT },
        { "config", required_argument, 0, O_CONFIG }, { "targets", required_argument, 0, O_TARGETS },
        { "only", required_argument, 0, O_ONLY },     { "format", required_argument, 0, O_FORMAT },
        { "fail-on", required_argument, 0, O_FAILON }, { "json", no_argument, 0, O_JSON },
        { "no-scontrol", no_argument, 0, O_NOSCONTROL }, { "help", no_argument, 0, O_HELP },
        { 0, 0, 0, 0 },
    };
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (opt) {
        case O_SECURITY: break;
        case O_ROOT: root = optarg; break;
        case O_CONFIG: config = optarg; break;
        case O_TARGETS: targets = optarg; break;
        case O_ONLY: only = optarg; break;
        case O_JSON: fmt = VG_FMT_JSON; break;
        case O_NOSCONTROL: no_scontrol = true; break;
        case 'h':
        case O_HELP: fputs(usage_text, stdout); return VG_EXIT_OK;
        case O_FORMAT:
            if (vg_opt_format(what, optarg, &fmt)) return VG_EXIT_INPUT;
            break;
        case O_FAILON:
            if (vg_opt_fail_on(what, optarg, &fail_none, &fail_on)) return VG_EXIT_INPUT;
            break;
        case ':': return vg_input_error("%s: %s needs a value", what, argv[optind - 1]);
        default:
            return vg_input_error("%s: '%s' does not combine with --security (vigil audit --security --help)", what,
                                  argv[optind - 1]);
        }
    }
    if (optind < argc)
        return vg_input_error("%s: '%s' does not combine with --security (vigil audit --security --help)", what, argv[optind]);
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
    if (fmt == VG_FMT_JSON) vg_json_print(stdout, vg_sec_json(&c), 0);
    else vg_sec_print(&c, stdout, fmt == VG_FMT_MARKDOWN);
    int rc = !fail_none && vg_sec_failures(&c, fail_on) ? VG_EXIT_FINDINGS : VG_EXIT_OK;
    vg_sec_free(&c);
    vg_sec_config_free(&conf);
    return rc;
}
