/* rootfs.h — reads files relative to a root directory (`--root DIR`), so a
 * fixture tree, a container rootfs or a mounted node disk reads as if live. */
#ifndef VG_ROOTFS_H
#define VG_ROOTFS_H
#include <stdbool.h>
#include <stddef.h>

/* Joins root and an absolute path; root NULL or "/" gives the path itself.
 * The result is malloc'd. */
char *vg_root_path(const char *root, const char *path);
/* Reads a whole file (at most max bytes; more is an error with errno=EFBIG).
 * Returns 0, or -1 with errno set.  *out is NUL-terminated. */
int vg_read_file(const char *root, const char *path, size_t max, char **out, size_t *len);
/* Looks for key in a file of any size, read in pieces (a binary such as
 * nvcc is tens of megabytes: it is read, never run); on a match copies the key
 * and up to n-1 bytes in all from it into buf (NUL-terminated; a NUL in the
 * file ends it early).  Stops after max bytes.  Returns 1 found, 0 not found,
 * -1 unreadable (errno set). */
int vg_scan_file(const char *root, const char *path, const char *key, size_t max, char *buf, size_t n);
/* Reads the first line, trimmed, into buf.  Returns 0 or -1 (errno set). */
int vg_read_line(const char *root, const char *path, char *buf, size_t n);
bool vg_path_exists(const char *root, const char *path);
/* Lists the entry names of a directory (no . and ..), sorted; returns the count
 * or -1 with errno set.  Free with vg_free_list. */
int vg_list_dir(const char *root, const char *path, char ***names);
void vg_free_list(char **names, int n);
/* Reads the target of a symlink into buf; returns 0 or -1. */
int vg_read_link(const char *root, const char *path, char *buf, size_t n);

#endif
