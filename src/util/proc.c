/* proc.c — reads /proc/<pid>/{stat,environ} and /proc/net/tcp{,6}; see proc.h. */
#include "util/proc.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The state letter and parent from /proc/<pid>/stat ("pid (comm) S ppid …",
 * comm may hold spaces and parentheses). */
static bool proc_stat(pid_t pid, char *state, pid_t *ppid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *r = strrchr(buf, ')');
    int pp;
    if (!r || sscanf(r + 1, " %c %d", state, &pp) != 2) return false;
    *ppid = pp;
    return true;
}

bool vg_proc_alive(pid_t pid)
{
    char st;
    pid_t pp;
    return pid > 0 && proc_stat(pid, &st, &pp) && st != 'Z' && st != 'X';
}

pid_t vg_proc_ppid(pid_t pid)
{
    char st;
    pid_t pp;
    return proc_stat(pid, &st, &pp) ? pp : -1;
}

bool vg_proc_has_env(pid_t pid, const char *entry)
{
    char path[64], *env;
    size_t len, el = strlen(entry);
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    if (vg_read_file(NULL, path, 1u << 20, &env, &len)) return false;
    bool found = false;
    for (size_t i = 0; i < len && !found; i += strlen(env + i) + 1)
        found = len - i >= el && !memcmp(env + i, entry, el) && env[i + el] == 0;
    free(env);
    return found;
}

int vg_proc_env(pid_t pid, const char *name, char *buf, size_t n)
{
    char path[64], *env;
    size_t len, nl = strlen(name);
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    if (vg_read_file(NULL, path, 1u << 20, &env, &len)) return -1;
    int rc = -1;
    for (size_t i = 0; i < len && rc; i += strlen(env + i) + 1)
        if (len - i > nl && !memcmp(env + i, name, nl) && env[i + nl] == '=') {
            vg_strlcpy(buf, env + i + nl + 1, n);
            rc = 0;
        }
    free(env);
    return rc;
}

bool vg_proc_has_fd_under(pid_t pid, const char *dir)
{
    char path[64], target[4096];
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        found = (size_t)n > dl && !strncmp(target, dir, dl) && target[dl] == '/';
    }
    closedir(d);
    return found;
}

int vg_proc_comm(pid_t pid, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    return vg_read_line(NULL, path, buf, n);
}

int vg_proc_list(pid_t **pids)
{
    *pids = NULL;
    DIR *d = opendir("/proc");
    if (!d) return -1;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long v;
        if (!vg_parse_long(e->d_name, &v) || v <= 0) continue;
        if (n == cap) *pids = vg_xrealloc(*pids, (cap = cap ? cap * 2 : 256) * sizeof **pids);
        (*pids)[n++] = (pid_t)v;
    }
    closedir(d);
    return (int)n;
}

bool vg_proc_is_self_or_ancestor(pid_t pid)
{
    for (pid_t p = getpid(); p > 0; p = vg_proc_ppid(p))
        if (p == pid) return true;
    return false;
}

static void add_ports(const char *path, int **ports, size_t *n)
{
    FILE *f = fopen(path, "re");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char local[128];
        unsigned port, st;
        /* "  0: 0100007F:41A0 00000000:0000 0A …"; state 0A is LISTEN */
        if (sscanf(line, " %*d: %127s %*s %x", local, &st) != 2 || st != 0x0A) continue;
        char *c = strrchr(local, ':');
        if (!c || sscanf(c + 1, "%x", &port) != 1) continue;
        *ports = vg_xrealloc(*ports, (*n + 1) * sizeof **ports);
        (*ports)[(*n)++] = (int)port;
    }
    fclose(f);
}

int vg_listen_ports(int **ports)
{
    size_t n = 0;
    *ports = NULL;
    add_ports("/proc/net/tcp", ports, &n);
    add_ports("/proc/net/tcp6", ports, &n);
    return (int)n;
}
