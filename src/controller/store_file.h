/* store_file.h — a SQLite store's file made ready before it is locked and
 * opened (store_file.c): its directory, its mode. */
#ifndef VG_STORE_FILE_H
#define VG_STORE_FILE_H
#include <stddef.h>

/* The directories down to db created (0700) as `mkdir -p` does, and the
 * file itself created 0600, or made 0600 (with its WAL and shared-memory
 * files) when others could read it, which is said.  0, or -1 with err one
 * line naming the file and --db. */
int vg_store_file_prepare(const char *db, char *err, size_t errlen);

#endif
