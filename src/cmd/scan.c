/* scan.c — `vigil scan [FILE…|-]`: reads kernel logs (files, stdin, or the
 * live /dev/kmsg), extracts GPU fault events, classifies them with the fault
 * catalog (and a site policy), folds repeats and links consequences to their
 * causes, and prints the incidents (table, or --json lines in the event's JSON
 * form) or, with --summary, one line per GPU with its worst verdict.  Exit 1
 * when any incident's action is reset-gpu or worse. */
#include "catalog/catalog.h"
#include "cmd/cmd.h"
#include "report/table.h"
#include "catalog/dedup.h"
#include "catalog/repeat.h"
#include "signal/kmsg.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCAN_BUF (1u << 20)
#define SCAN_GPUS 256

struct gpu_sum {
    char node[64], pci[16];
    int gpu;
    enum vg_action worst;
    long incidents, faults, events;
    char worst_kind[24];
    int worst_code;
};

struct scan {
    bool json, summary, follow;
    struct vg_catalog *cat;
    struct vg_dedup *dd;
    struct vg_repeat *rep;
    struct vg_table *table;
    enum vg_action worst;
    long incidents;
    struct gpu_sum gpus[SCAN_GPUS];
    int ngpus;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: vigil scan [FILE…|-] [--json] [--summary] [--window S] [--policy FILE]\n"
               "                  [--node NAME] [--follow] [--boot-time RFC3339|EPOCH] [--year Y]\n"
               "                  [--catalog FILE] [--root DIR]\n"
               "  With no FILE, reads the live /dev/kmsg (under --root).\n");
}

static void summarize(struct scan *s, const struct vg_event *e)
{
    struct gpu_sum *g = NULL;
    for (int i = 0; i < s->ngpus; i++)
        if (strcmp(s->gpus[i].node, e->node) == 0 && strcmp(s->gpus[i].pci, e->pci) == 0 &&
            (e->pci[0] || s->gpus[i].gpu == e->gpu))
            g = &s->gpus[i];
    if (!g) {
        g = &s->gpus[s->ngpus < SCAN_GPUS ? s->ngpus++ : SCAN_GPUS - 1];
        memset(g, 0, sizeof *g);
        vg_strlcpy(g->node, e->node, sizeof g->node);
        vg_strlcpy(g->pci, e->pci, sizeof g->pci);
        g->gpu = e->gpu;
        g->worst_code = -1;
    }
    if (g->gpu < 0) g->gpu = e->gpu;
    g->incidents++;
    g->events += e->count;
    if (!e->cause[0]) g->faults++;
    if (e->action > g->worst || !g->worst_kind[0]) {
        if (e->action >= g->worst) {
            g->worst = e->action;
            vg_strlcpy(g->worst_kind, e->kind, sizeof g->worst_kind);
            g->worst_code = e->code;
        }
    }
}

static void on_incident(const struct vg_event *e, void *arg)
{
    struct scan *s = arg;
    s->incidents++;
    if (e->action > s->worst) s->worst = e->action;
    if (s->summary) {
        summarize(s, e);
        return;
    }
    if (s->json) {
        vg_json_print(stdout, vg_event_to_json(e), 1);
        if (s->follow) fflush(stdout);
        return;
    }
    char t[32] = "-", code[16] = "-", gpu[16] = "-";
    if (e->time_ms > 0) vg_format_time(e->time_ms, t);
    if (e->code >= 0) snprintf(code, sizeof code, "%d", e->code);
    if (e->gpu >= 0) snprintf(gpu, sizeof gpu, "%d", e->gpu);
    char raw[81];
    vg_strlcpy(raw, e->raw, sizeof raw);
    if (s->follow) {
        printf("%-24s %-3s %-12s %-14s %-5s %-11s %5d %s\n", t, gpu, e->pci[0] ? e->pci : "-", e->kind, code,
               vg_action_name(e->action), e->count, raw);
        fflush(stdout);
        return;
    }
    vg_table_rowf(s->table, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s", t, gpu, e->pci[0] ? e->pci : "-", e->kind,
                  code, vg_action_name(e->action), e->count, e->cause[0] ? e->cause : "-", raw);
}

static void on_event(const struct vg_event *ev, void *arg)
{
    struct scan *s = arg;
    struct vg_event e = *ev, rep[4];
    vg_catalog_classify(s->cat, &e);
    int n = vg_repeat_add(s->rep, &e, rep, 4);
    vg_dedup_add(s->dd, &e);
    for (int i = 0; i < n; i++) on_event(&rep[i], s);   /* a repeat rule completed */
}

static void print_summary(struct scan *s)
{
    if (s->json) {
        for (int i = 0; i < s->ngpus; i++) {
            struct gpu_sum *g = &s->gpus[i];
            json_t *j = json_object();
            vg_json_set_str(j, "node", g->node);
            vg_json_set_str(j, "pci", g->pci);
            json_object_set_new(j, "gpu", g->gpu >= 0 ? json_integer(g->gpu) : json_null());
            json_object_set_new(j, "action", json_string(vg_action_name(g->worst)));
            vg_json_set_str(j, "kind", g->worst_kind);
            json_object_set_new(j, "code", g->worst_code >= 0 ? json_integer(g->worst_code) : json_null());
            json_object_set_new(j, "faults", json_integer(g->faults));
            json_object_set_new(j, "incidents", json_integer(g->incidents));
            json_object_set_new(j, "events", json_integer(g->events));
            vg_json_print(stdout, j, 1);
        }
        return;
    }
    static const char *const h[] = { "NODE", "PCI", "GPU", "WORST", "BY", "FAULTS", "INCIDENTS", "EVENTS" };
    struct vg_table *t = vg_table_new(8, h);
    for (int i = 0; i < s->ngpus; i++) {
        struct gpu_sum *g = &s->gpus[i];
        char gpu[16] = "-", by[48];
        if (g->gpu >= 0) snprintf(gpu, sizeof gpu, "%d", g->gpu);
        if (g->worst_code >= 0) snprintf(by, sizeof by, "%s %d", g->worst_kind, g->worst_code);
        else vg_strlcpy(by, g->worst_kind, sizeof by);
        vg_table_rowf(t, "%s\t%s\t%s\t%s\t%s\t%ld\t%ld\t%ld", g->node[0] ? g->node : "-", g->pci[0] ? g->pci : "-",
                      gpu, vg_action_name(g->worst), by, g->faults, g->incidents, g->events);
    }
    vg_table_print(t, stdout);
    vg_table_free(t);
}

static bool parse_boot_time(const char *s, int64_t *ms)
{
    long v;
    if (vg_parse_long(s, &v) && v > 0) {
        *ms = (int64_t)v * 1000;
        return true;
    }
    return vg_parse_time(s, ms);
}

/* The live kernel log refused (EPERM, EACCES): why, and what to do instead. */
static int kmsg_denied(const char *path, int err)
{
    char r[8] = "";
    bool restricted = vg_read_line(NULL, "/proc/sys/kernel/dmesg_restrict", r, sizeof r) == 0 && !strcmp(r, "1");
    return vg_input_error("scan: %s: %s: reading the kernel log needs root or CAP_SYSLOG%s; run it as root "
                          "(sudo vigil scan), or scan a saved log: vigil scan FILE (/var/log/kern.log, or "
                          "`journalctl -k > FILE` as a member of the adm or systemd-journal group)",
                          path, strerror(err),
                          restricted ? " (kernel.dmesg_restrict is 1 here: `sysctl kernel.dmesg_restrict=0` "
                                       "lets every user read it)" : "");
}

/* Reads fd to its end (or forever with follow); returns 0 or -1 (errno). */
static int read_all(struct scan *s, struct vg_kmsg *k, int fd, char *buf, bool is_kmsg)
{
    for (;;) {
        ssize_t n = read(fd, buf, SCAN_BUF);
        if (n > 0) {
            vg_kmsg_feed(k, buf, (size_t)n);
            if (is_kmsg && buf[n - 1] != '\n') vg_kmsg_feed(k, "\n", 1);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && is_kmsg && errno == EPIPE) continue; /* records overwritten: go on */
        if (n < 0 && errno != EAGAIN) return -1;
        if (!s->follow) return 0;
        vg_kmsg_finish(k);
        vg_dedup_tick(s->dd, vg_now_ms());
        vg_sleep_ms(200);
    }
}

int cmd_scan(int argc, char **argv)
{
    struct scan *s = vg_xcalloc(1, sizeof *s);
    const char *policy = NULL, *catalog = NULL, *root = NULL, *node = NULL;
    const char **files = vg_xcalloc((size_t)argc + 1, sizeof *files);
    int nfiles = 0, rc = VG_EXIT_OK;
    struct vg_kmsg_opts ko = { 0, 0, NULL };
    struct vg_dedup_opts dopt = { 60000, 0, 0 };
    bool boot_given = false;
    char *buf = NULL;
    struct vg_kmsg *k = NULL;
    enum { O_JSON = 256, O_SUMMARY, O_FOLLOW, O_HELP, O_POLICY, O_CATALOG, O_ROOT, O_NODE, O_WINDOW, O_YEAR,
           O_BOOT };
    static const struct option opts[] = {
        { "json", no_argument, 0, O_JSON },           { "summary", no_argument, 0, O_SUMMARY },
        { "follow", no_argument, 0, O_FOLLOW },       { "help", no_argument, 0, O_HELP },
        { "policy", required_argument, 0, O_POLICY }, { "catalog", required_argument, 0, O_CATALOG },
        { "root", required_argument, 0, O_ROOT },     { "node", required_argument, 0, O_NODE },
        { "window", required_argument, 0, O_WINDOW }, { "year", required_argument, 0, O_YEAR },
        { "boot-time", required_argument, 0, O_BOOT }, { 0, 0, 0, 0 },
    };
    int c;
    long v;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        switch (c) {
        case O_JSON: s->json = true; break;
        case O_SUMMARY: s->summary = true; break;
        case 'f': case O_FOLLOW: s->follow = true; break;
        case 'h': case O_HELP: usage(stdout); goto out;
        case O_POLICY: policy = optarg; break;
        case O_CATALOG: catalog = optarg; break;
        case O_ROOT: root = optarg; break;
        case O_NODE: node = optarg; break;
        case O_WINDOW:
            if (!vg_parse_long(optarg, &v) || v < 1 || v > 86400 * 365) {
                rc = vg_input_error("scan: --window '%s': expected seconds (1 or more)", optarg);
                goto out;
            }
            dopt.window_ms = v * 1000;
            break;
        case O_YEAR:
            if (!vg_parse_long(optarg, &v) || v < 1970 || v > 9999) {
                rc = vg_input_error("scan: --year '%s': expected a year", optarg);
                goto out;
            }
            ko.year = (int)v;
            break;
        case O_BOOT:
            if (!parse_boot_time(optarg, &ko.boot_ms)) {
                rc = vg_input_error("scan: --boot-time '%s': expected RFC 3339 or epoch seconds", optarg);
                goto out;
            }
            boot_given = true;
            break;
        default:
            usage(stderr);
            rc = vg_input_error("scan: unknown or incomplete option '%s'", argv[optind - 1]);
            goto out;
        }
    }
    for (int i = optind; i < argc; i++) files[nfiles++] = argv[i];
    char err[512];
    s->cat = vg_catalog_open(root, catalog, policy, err, sizeof err);
    if (!s->cat) {
        rc = vg_input_error("%s", err);
        goto out;
    }
    ko.node = node;
    if (nfiles == 0 && !boot_given) ko.boot_ms = vg_kmsg_boot_ms(root);
    s->dd = vg_dedup_new(&dopt, s->cat, on_incident, s);
    s->rep = vg_repeat_new(s->cat);
    static const char *const h[] = { "TIME", "GPU", "PCI", "KIND", "CODE", "ACTION", "COUNT", "CAUSE", "RAW" };
    if (!s->json && !s->summary && !s->follow) s->table = vg_table_new(9, h);
    k = vg_xmalloc(sizeof *k);
    vg_kmsg_init(k, &ko, on_event, s);
    buf = vg_xmalloc(SCAN_BUF);
    if (nfiles == 0) files[nfiles++] = NULL; /* the live /dev/kmsg */
    for (int i = 0; i < nfiles && rc == VG_EXIT_OK; i++) {
        const char *f = files[i];
        int fd;
        char *path = NULL;
        bool is_kmsg = f == NULL;
        if (f && !strcmp(f, "-")) fd = STDIN_FILENO;
        else {
            path = vg_root_path(is_kmsg ? root : NULL, is_kmsg ? "/dev/kmsg" : f);
            fd = open(path, O_RDONLY | O_CLOEXEC | (is_kmsg && !s->follow ? O_NONBLOCK : 0));
        }
        if (fd < 0 || read_all(s, k, fd, buf, is_kmsg && fd >= 0)) {
            bool live = is_kmsg && (!root || !strcmp(root, "/"));
            if (live && (errno == EPERM || errno == EACCES)) rc = kmsg_denied(path, errno);
            else rc = vg_input_error("scan: %s: %s", path ? path : "(stdin)", strerror(errno));
        }
        if (fd > STDIN_FILENO) close(fd);
        free(path);
        vg_kmsg_finish(k);
    }
    vg_dedup_finish(s->dd);
    if (rc == VG_EXIT_OK) {
        if (s->summary) print_summary(s);
        else if (s->table) vg_table_print(s->table, stdout);
        const struct vg_dedup_stats *st = vg_dedup_stats(s->dd);
        fflush(stdout);
        fprintf(stderr, "%llu lines, %llu events, %llu malformed lines skipped\n", (unsigned long long)k->lines,
                (unsigned long long)k->events, (unsigned long long)k->malformed);
        if (st->storm_dropped)
            vg_warn("scan: storm guard: %llu events counted but not shown", (unsigned long long)st->storm_dropped);
        rc = s->worst >= VG_ACT_RESET_GPU ? VG_EXIT_FINDINGS : VG_EXIT_OK;
    }
out:
    free(buf);
    free(k);
    if (s->table) vg_table_free(s->table);
    vg_dedup_free(s->dd);
    vg_repeat_free(s->rep);
    vg_catalog_free(s->cat);
    free(files);
    free(s);
    return rc;
}
