/* datadir.c — locate the bundled data directory; see datadir.h. */
#include "util/datadir.h"
#include "util/strutil.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *vg_data_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0]) return dir;
    const char *env = getenv("VIGIL_DATA");
    if (env && *env) {
        vg_strlcpy(dir, env, sizeof dir);
        return dir;
    }
    /* <tree>/build/vigil → <tree>/data */
    char exe[PATH_MAX - 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        for (int up = 0; up < 2; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash) break;
            *slash = 0;
            char probe[PATH_MAX];
            snprintf(probe, sizeof probe, "%s/data/README.md", exe);
            if (access(probe, R_OK) == 0) {
                snprintf(dir, sizeof dir, "%s/data", exe);
                return dir;
            }
        }
    }
    /* installed: <prefix>/bin/vigil → <prefix>/share/vigil (a package: /usr) */
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        slash = strrchr(exe, '/');
        if (slash && !strcmp(slash, "/bin")) {
            *slash = 0;
            char probe[PATH_MAX];
            snprintf(probe, sizeof probe, "%s/share/vigil/fault-catalog.tsv", exe);
            if (access(probe, R_OK) == 0) {
                snprintf(dir, sizeof dir, "%s/share/vigil", exe);
                return dir;
            }
        }
    }
    vg_strlcpy(dir, "/usr/local/share/vigil", sizeof dir);
    return dir;
}

char *vg_data_path(const char *name)
{
    const char *d = vg_data_dir();
    char *p = vg_xmalloc(strlen(d) + strlen(name) + 2);
    sprintf(p, "%s/%s", d, name);
    return p;
}
