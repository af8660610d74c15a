/* spawn.h — runs an external program from an argv array (execvp, never a
 * shell) with a deadline, capturing stdout and stderr. */
#ifndef VG_SPAWN_H
#define VG_SPAWN_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct vg_spawn_result {
    int status;      /* exit code; 128+signal when killed; -1 when exec failed */
    bool timed_out;  /* killed at the deadline */
    char *out;       /* captured stdout, NUL-terminated (never NULL after a run) */
    size_t out_len;
    char *err;       /* captured stderr */
    size_t err_len;
};

/* Runs argv[0] (searched in PATH) with argv; env_extra is a NULL-terminated
 * list of "NAME=value" added to the environment (or NULL).  stdin_data, when
 * not NULL, is written to the child's stdin.  timeout_ms <= 0 means none.
 * The child gets its own process group; at the deadline the whole group is
 * killed.  It is killed too when the caller dies (PR_SET_PDEATHSIG).  Returns 0 when the program ran (see r->status), -1 when it could not
 * be started (r->status = -1, r->err says why). */
int vg_spawn(const char *const argv[], const char *const env_extra[], const char *stdin_data,
             int timeout_ms, struct vg_spawn_result *r);
void vg_spawn_result_free(struct vg_spawn_result *r);
/* Starts argv as a daemon detached from the caller: double fork (so it is
 * re-parented to init, never the caller's zombie), its own session, stdin
 * /dev/null, stdout and stderr appended to log_path (or /dev/null), every
 * other descriptor closed, env_extra added.  pre_exec, when not NULL, runs in
 * the daemon just before exec (namespaces, hostname); non-zero aborts it.
 * Returns the daemon's pid once it has exec'd, or -1 with errno set. */
pid_t vg_spawn_daemon(const char *const argv[], const char *const env_extra[], const char *log_path,
                      int (*pre_exec)(void *arg), void *arg);
/* Formats argv as one line for messages (not for execution). */
char *vg_argv_str(const char *const argv[]);

#endif
