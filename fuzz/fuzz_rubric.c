/* fuzz_rubric.c — libFuzzer target for the scorecard's inputs: the bytes are
 * parsed as a rubric; when that fails, the bundled-shape fallback rubric
 * scores the bytes parsed as a questionnaire and as an evidence document
 * (shape detection and the rules' path language). */
#include "score/score.h"
#include <stdint.h>
#include <stdlib.h>

static const char base[] =
    "{\"title\":\"t\",\"follows\":\"f\",\"criteria\":[{\"name\":\"A\",\"weight\":1}],"
    "\"rules\":[{\"id\":\"x\",\"criterion\":\"A\",\"source\":\"questionnaire\",\"path\":\"a\",\"op\":\"le\",\"value\":3,"
    "\"points\":2,\"otherwise\":-1,\"text\":\"t\"},"
    "{\"id\":\"y\",\"criterion\":\"A\",\"source\":\"security\",\"path\":\"security[status=fail]#\",\"op\":\"eq\",\"value\":0,"
    "\"points\":1,\"text\":\"t\"},"
    "{\"id\":\"z\",\"criterion\":\"A\",\"source\":\"drill\",\"path\":\"detect.median\",\"op\":\"le\",\"value\":120,"
    "\"points\":1,\"null_means_missed\":true,\"text\":\"t\"}],"
    "\"tiers\":[{\"name\":\"G\",\"min_score\":50,\"min_coverage\":0.5},{\"name\":\"U\",\"min_score\":0}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    struct vg_rubric r;
    struct vg_evidence ev = { 0 };
    if (vg_rubric_parse((const char *)data, size, "fuzz", &r, err, sizeof err)) {
        if (vg_rubric_parse(base, sizeof base - 1, "base", &r, err, sizeof err)) abort();
        ev.doc[VG_EV_QUESTIONNAIRE] = vg_questionnaire_parse((const char *)data, size, "fuzz", err, sizeof err);
        json_error_t je;
        json_t *doc = json_loadb((const char *)data, size, 0, &je);
        int kind = vg_ev_detect(doc);
        if (kind >= 0 && !ev.doc[kind]) ev.doc[kind] = doc;
        else json_decref(doc);
        for (int k = 0; k < VG_EV_NKINDS; k++)
            if (ev.doc[k]) ev.file[k] = (char *)"fuzz";   /* not freed: vg_evidence_free is not called */
    }
    struct vg_score s;
    vg_score_compute(&r, &ev, &s);
    json_decref(vg_score_json(&s, &ev));
    free(vg_score_html(&s, &ev));
    vg_score_free(&s);
    vg_rubric_free(&r);
    for (int k = 0; k < VG_EV_NKINDS; k++) json_decref(ev.doc[k]);
    return 0;
}
