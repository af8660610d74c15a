/* score.c — `vigil score EVIDENCE… [--questionnaire FILE] [--rubric FILE]
 * [--json] [--format table|json|markdown] [--html FILE]`: a ClusterMAX-style
 * scorecard from vigil's reports (src/score/).  Exit: 0 at or above the
 * rubric's pass_tier, 1 below it, 2 usage or input error. */
#include "cmd/cmd.h"
#include "score/score.h"
#include "util/datadir.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: vigil score EVIDENCE.json… [--questionnaire FILE] [--rubric FILE] [--json]\n"
    "                   [--format table|json|markdown] [--html FILE]\n"
    "EVIDENCE: vigil audit, audit --security, check, drill or audit merge JSON reports (told apart by shape)\n";

static int write_html(const char *path, const char *html)
{
    FILE *f = fopen(path, "w");
    if (!f) return vg_input_error("score: --html %s: %s", path, strerror(errno));
    bool ok = fputs(html, f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok ? 0 : vg_input_error("score: --html %s: write failed", path);
}

int cmd_score(int argc, char **argv)
{
    const char *rubric = NULL, *quest = NULL, *html = NULL;
    int fmt = 0;
    struct vg_evidence ev = { 0 };
    char err[768];
    int rc = VG_EXIT_INPUT, nev = 0;
    static const struct option opts[] = {
        { "json", no_argument, 0, 'j' },          { "rubric", required_argument, 0, 'r' },
        { "questionnaire", required_argument, 0, 'q' }, { "html", required_argument, 0, 'H' },
        { "format", required_argument, 0, 'f' },  { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(usage_text, stdout); rc = VG_EXIT_OK; goto out;
        case 'j': fmt = 1; break;
        case 'r': rubric = optarg; break;
        case 'q': quest = optarg; break;
        case 'H': html = optarg; break;
        case 'f':
            if (!strcmp(optarg, "table")) fmt = 0;
            else if (!strcmp(optarg, "json")) fmt = 1;
            else if (!strcmp(optarg, "markdown")) fmt = 2;
            else { vg_input_error("score: --format '%s': expected table, json or markdown", optarg); goto out; }
            break;
        default: vg_input_error("score: unknown or incomplete option '%s' (vigil score --help)", argv[optind - 1]); goto out;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (vg_evidence_add(&ev, argv[i], err, sizeof err)) { vg_input_error("%s", err); goto out; }
        nev++;
    }
    if (quest && vg_evidence_questionnaire(&ev, quest, err, sizeof err)) { vg_input_error("%s", err); goto out; }
    if (!nev && !quest) { vg_input_error("score: no evidence file given (vigil score --help)"); goto out; }
    char *rpath = rubric ? vg_xstrdup(rubric) : vg_data_path("rubric.json");
    struct vg_rubric r;
    int lr = vg_rubric_load(rpath, &r, err, sizeof err);
    free(rpath);
    if (lr) { vg_input_error("%s", err); goto out; }
    struct vg_score s;
    vg_score_compute(&r, &ev, &s);
    rc = s.tier > r.pass_tier ? VG_EXIT_FINDINGS : VG_EXIT_OK;
    if (html) {
        char *page = vg_score_html(&s, &ev);
        if (write_html(html, page)) rc = VG_EXIT_INPUT;
        free(page);
    }
    if (rc != VG_EXIT_INPUT) {
        if (fmt == 1) vg_json_print(stdout, vg_score_json(&s, &ev), 0);
        else vg_score_print(&s, &ev, stdout, fmt == 2);
    }
    vg_score_free(&s);
    vg_rubric_free(&r);
out:
    vg_evidence_free(&ev);
    return rc;
}
