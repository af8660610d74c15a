/* store_target.h — the database a store test runs on: a file in the test's
 * directory (SQLite), or the private PostgreSQL server tests/run starts
 * ($VIGIL_TEST_PG, a libpq conninfo), emptied before each test.  A suite
 * runs its store tests once per engine: the store's contract is the same on
 * both. */
#ifndef VG_STORE_TARGET_H
#define VG_STORE_TARGET_H
#include <stdbool.h>
#include <stddef.h>

/* The engine the tests now run on (the suite's main sets it between groups). */
extern bool store_on_pg;
/* The store's target for a test whose scratch directory is dir. */
const char *store_target(const char *dir, char *buf, size_t n);
/* On PostgreSQL, drops every table of the test database (a group's setup of
 * each test); 0, or -1 with a line on stderr (no server given, or it fails). */
int store_target_reset(void);

#endif
