/* proc.h — what /proc says about processes and sockets: liveness, parent,
 * environment tags, the process list, listening TCP ports. */
#ifndef VG_PROC_H
#define VG_PROC_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* True when pid exists and is not a zombie. */
bool vg_proc_alive(pid_t pid);
/* The parent's pid, or -1. */
pid_t vg_proc_ppid(pid_t pid);
/* True when the process's environment holds exactly the entry "NAME=value". */
bool vg_proc_has_env(pid_t pid, const char *entry);
/* The value of NAME in the process's environment into buf: 0, or -1 when it
 * has none (or its environment cannot be read). */
int vg_proc_env(pid_t pid, const char *name, char *buf, size_t n);
/* True when one of the process's open files lies under dir (a prefix path). */
bool vg_proc_has_fd_under(pid_t pid, const char *dir);
/* The command name (/proc/<pid>/comm, unchanged by setproctitle) into buf; 0 or -1. */
int vg_proc_comm(pid_t pid, char *buf, size_t n);
/* Every pid in /proc (live or not), malloc'd; returns the count or -1. */
int vg_proc_list(pid_t **pids);
/* True when pid is the caller or one of its ancestors. */
bool vg_proc_is_self_or_ancestor(pid_t pid);
/* TCP ports (IPv4 and IPv6) some socket listens on, malloc'd; count or -1. */
int vg_listen_ports(int **ports);

#endif
