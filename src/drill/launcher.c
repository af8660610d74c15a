/* launcher.c — the node choice of `vigil launch`; see launcher.h. */
#include "drill/launcher.h"
#include <string.h>

static bool up(const char *name, const struct vg_node_state *states, size_t ns)
{
    for (size_t i = 0; i < ns; i++)
        if (!strcmp(states[i].name, name)) return !states[i].down && !states[i].drain && states[i].responding;
    return false;
}

size_t vg_launch_pick(char *const *names, size_t n, const struct vg_node_state *states, size_t ns, size_t want,
                      const char **out)
{
    size_t got = 0;
    for (size_t i = 0; i < n; i++) {
        if (!up(names[i], states, ns)) continue;
        if (got < want) out[got] = names[i];
        got++;
    }
    return got;
}

bool vg_launch_any_out(char *const *names, size_t n, const struct vg_node_state *states, size_t ns)
{
    for (size_t i = 0; i < n; i++)
        if (!up(names[i], states, ns)) return true;
    return false;
}
