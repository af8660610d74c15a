/* store_sqlite.h — the SQLite driver's migration of stores written by older
 * releases (store_sqlite_migrate.c). */
#ifndef VG_STORE_SQLITE_H
#define VG_STORE_SQLITE_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

/* The columns and tables added since the first release, and the incidents'
 * free-text states of stores written before the state was an enum. */
int vg_store_sqlite_migrate(sqlite3 *db, char *err, size_t errlen);
/* Whether db holds incidents written before they had a detail (not migrated yet). */
bool vg_store_sqlite_legacy(sqlite3 *db);

#endif
