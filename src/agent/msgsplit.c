/* msgsplit.c — cuts a list of events into runs that each fit one message to
 * the controller: at most max_events events and at most max_bytes bytes of
 * compact JSON for the events array.  Every event goes into some run: one
 * event larger than max_bytes alone gets a run of its own (it cannot happen
 * with the agent's own events: their fields have fixed sizes, see
 * test_largest_event in tests/unit/test_sender.c), so nothing is ever left out because of its size. */
#include "agent/agent_int.h"
#include "util/strutil.h"

size_t msg_split(const json_t *events, size_t max_events, size_t max_bytes, size_t **ends)
{
    size_t n = json_array_size(events), k = 0, in_run = 0, bytes = 2;   /* "[]" */
    *ends = vg_xmalloc((n ? n : 1) * sizeof **ends);
    for (size_t i = 0; i < n; i++) {
        size_t sz = json_dumpb(json_array_get(events, i), NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
        size_t add = sz + (in_run ? 1 : 0);   /* the comma before it */
        if (in_run && (in_run == max_events || bytes + add > max_bytes)) {
            (*ends)[k++] = i;   /* close the run before event i */
            in_run = 0, bytes = 2, add = sz;
        }
        in_run++;
        bytes += add;
    }
    if (in_run) (*ends)[k++] = n;
    return k;
}
