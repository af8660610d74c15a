/* fake_state.h — the state file of the fake GPU libraries (tests/fake_nvml,
 * tests/fake_amdsmi): `key=value` lines in the file named by the environment
 * variable FAKE_STATE_ENV (defined by the includer), read again on every call
 * so a test, the lab or `vigil inject` changes a GPU live.  `gpuN.key` beats
 * `gpu*.key`; the last line wins among equals; gpu -1 looks up a global key.
 * Header-only: each fake is one shared object of its own. */
#ifndef VG_FAKE_STATE_H
#define VG_FAKE_STATE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lookup(int gpu, const char *key, char *val, size_t n)
{
    const char *path = getenv(FAKE_STATE_ENV);
    FILE *f = path ? fopen(path, "re") : NULL;
    if (!f) return 0;
    char line[512], want[96], any[96];
    if (gpu >= 0) {
        snprintf(want, sizeof want, "gpu%d.%s=", gpu, key);
        snprintf(any, sizeof any, "gpu*.%s=", key);
    } else {
        snprintf(want, sizeof want, "%s=", key);
        any[0] = 0;
    }
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        const char *v = NULL;
        if (strncmp(line, want, strlen(want)) == 0) v = line + strlen(want), found = 2;
        else if (any[0] && found < 2 && strncmp(line, any, strlen(any)) == 0) v = line + strlen(any), found = 1;
        if (v) snprintf(val, n, "%s", v);
    }
    fclose(f);
    return found > 0;
}

static unsigned long long num(int gpu, const char *key, unsigned long long def)
{
    char v[64];
    return lookup(gpu, key, v, sizeof v) ? strtoull(v, NULL, 0) : def;
}

/* Whether name is in the comma-separated list of key. */
static int listed(int gpu, const char *key, const char *name)
{
    char v[512];
    if (!lookup(gpu, key, v, sizeof v)) return 0;
    for (char *t = strtok(v, ", "); t; t = strtok(NULL, ", "))
        if (strcmp(t, name) == 0) return 1;
    return 0;
}

#endif
