/* report.c — `vigil report DRILL.json… [--html FILE] [--json]`: drill reports
 * (as `vigil drill --save` writes them) side by side — vigil against plain
 * Slurm, stage by stage — in the terminal and as one HTML page.  Exit 0, or 2
 * when a file is not a drill report. */
#include "cmd/cmd.h"
#include "drill/drill.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_USAGE "usage: vigil report DRILL.json… [--html FILE] [--json]\n"
#define MAX_REPORTS 16

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        { "html", required_argument, 0, 'H' }, { "json", no_argument, 0, 'j' }, { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *html = NULL;
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H': html = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(REPORT_USAGE, stdout); return VG_EXIT_OK;
        default: fputs(REPORT_USAGE, stderr); return vg_input_error("report: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    size_t n = (size_t)(argc - optind);
    if (!n) return vg_input_error("report: no drill report given\n%s", REPORT_USAGE);
    if (n > MAX_REPORTS) return vg_input_error("report: at most %d reports", MAX_REPORTS);
    json_t *reps[MAX_REPORTS];
    int rc = VG_EXIT_OK;
    size_t k = 0;
    for (; k < n && rc == VG_EXIT_OK; k++) {
        json_error_t e;
        const char *path = argv[optind + (int)k];
        reps[k] = json_load_file(path, 0, &e);
        if (!reps[k]) rc = vg_input_error("%s:%d: %s", path, e.line, e.text), k--;
        else if (!json_is_array(json_object_get(reps[k], "runs")) || !json_is_string(json_object_get(reps[k], "fault")))
            rc = vg_input_error("%s: field 'runs'/'fault': not a vigil drill report", path);
    }
    if (rc == VG_EXIT_OK && html) {
        FILE *f = fopen(html, "we");
        if (!f) rc = vg_input_error("report: --html %s: %s", html, strerror(errno));
        else if (vg_drill_compare_html(f, reps, n) | fclose(f)) rc = vg_input_error("report: --html %s: write failed", html);
    }
    if (rc == VG_EXIT_OK) {
        if (json) {
            json_t *doc = json_array();
            for (size_t i = 0; i < n; i++) {
                char label[160];
                vg_drill_label(reps[i], label, sizeof label);
                json_t *row = json_pack("{s:s, s:s}", "label", label, "fault", vg_json_str(reps[i], "fault", ""));
                for (int s = 0; s < VG_ST_COUNT; s++) {
                    const char *name = vg_stage_name((enum vg_stage)s);
                    json_t *m = json_object_get(json_object_get(reps[i], name), "median");
                    json_object_set(row, name, m ? m : json_null());
                }
                json_array_append_new(doc, row);
            }
            vg_json_print(stdout, doc, 0);
        } else
            vg_drill_compare_print(stdout, reps, n);
    }
    for (size_t i = 0; i < k; i++) json_decref(reps[i]);
    return rc;
}
