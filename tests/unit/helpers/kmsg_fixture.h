/* kmsg_fixture.h — runs the kernel-log parser over a fixture of
 * tests/fixtures/logs/ and asserts its events field by field, the lines and
 * malformed lines counted, and that feeding it a byte at a time, or
 * through the portable fast path, gives the same events (test_kmsg.c, test_kmsg_aer.c, a new recognizer's test). */
#ifndef VG_TEST_KMSG_FIXTURE_H
#define VG_TEST_KMSG_FIXTURE_H
#include <stdint.h>

struct want {
    const char *time;  /* RFC 3339, or NULL for unknown */
    const char *pci;
    int gpu, code;
    const char *kind;
    int line;          /* raw = this line of the fixture (1-based) */
};

/* Parses the fixture `name` (boot_ms: the boot time, 0 = unknown; the year
 * of stamps without one is 2024) and asserts it gives the nw events of w. */
void kmsg_fixture_run(const char *name, int64_t boot_ms, const struct want *w, int nw, uint64_t lines,
                      uint64_t malformed);
/* The same where a recognizer folds later lines into an event: raw = the line
 * followed by fold[i] (NULL: nothing folded). */
void kmsg_fixture_run_folded(const char *name, int64_t boot_ms, const struct want *w, const char *const *fold, int nw,
                             uint64_t lines, uint64_t malformed);

#endif
