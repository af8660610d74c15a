/* leader.h — which of several controllers sharing one store a reader asks:
 * given `URL1,URL2,…` (what `vigil lab env` puts in VIGIL_CONTROLLER), the
 * one whose /healthz says `role leader`, else the first that answers. */
#ifndef VG_LEADER_H
#define VG_LEADER_H
#include <stddef.h>

/* What one controller's /healthz said. */
struct vg_ctl_health {
    char role[16];      /* "leader", "follower", "single" (no role line: one controller on its own file store),
                         * or "down" (no answer, or not 200) */
    long long term;     /* -1 when not said */
    char leader[256];   /* the leader's URL it names, or "" */
};

/* GET url/healthz within timeout_ms into h.  0 when it answered 200, else -1
 * (h->role "down"). */
int vg_ctl_health(const char *url, int timeout_ms, struct vg_ctl_health *h);

/* A /healthz body (`ok`, then `role R`, `term N`, `leader URL` lines; the
 * body is cut up) into h: role "single" when it names none. */
void vg_ctl_health_parse(char *body, struct vg_ctl_health *h);

/* list: one URL, or URLs separated by commas.  out gets the leader's URL (a
 * single URL is copied as given, with nothing asked).  0; -1 when the list
 * holds an empty item or a URL longer than n (err says which, naming what);
 * when no controller answers, out gets the first and 0 is returned (the
 * command's own request then says what is wrong). */
int vg_ctl_pick_leader(const char *list, char *out, size_t n, char *err, size_t errlen);

#endif
