/* sec_network.c — can a tenant reach the management network?  A TCP connect
 * (non-blocking, poll with a timeout of at most 1 s) to each management
 * address the configuration lists (BMC 623/443, switch management, the
 * subnet manager) — never to any other address.  Connected = fail. */
#include "security/security.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum reach { REACH_OPEN, REACH_CLOSED, REACH_ERROR };

/* Tries one address; *why says what happened. */
static enum reach try_connect(const struct vg_sec_target *t, int timeout_ms, char *why, size_t n)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *ai;
    char port[16];
    snprintf(port, sizeof port, "%d", t->port);
    int g = getaddrinfo(t->host, port, &hints, &ai);
    if (g) {
        snprintf(why, n, "cannot resolve: %s", gai_strerror(g));
        return REACH_ERROR;
    }
    enum reach r = REACH_ERROR;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) snprintf(why, n, "socket: %s", strerror(errno));
    else {
        int64_t t0 = vg_mono_ms();
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        int err = rc == 0 ? 0 : errno;
        if (err == EINPROGRESS) {
            struct pollfd p = { .fd = fd, .events = POLLOUT };
            int pr = poll(&p, 1, timeout_ms);
            socklen_t l = sizeof err;
            if (pr == 0) err = ETIMEDOUT;
            else if (pr < 0) err = errno;
            else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l)) err = errno;
        }
        long ms = (long)(vg_mono_ms() - t0);
        if (err == 0) r = REACH_OPEN, snprintf(why, n, "connected in %ld ms", ms);
        else if (err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH)
            r = REACH_CLOSED, snprintf(why, n, "%s after %ld ms", err == ETIMEDOUT ? "no answer" : strerror(err), ms);
        else snprintf(why, n, "%s", strerror(err));
        close(fd);
    }
    freeaddrinfo(ai);
    return r;
}

static void mgmt(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!c->conf || !c->conf->ntargets) {
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, "no `target` in the configuration",
                    "could not check: no management address configured (--config or --targets)");
        return;
    }
    int timeout = c->conf->timeout_ms > 0 && c->conf->timeout_ms <= 1000 ? c->conf->timeout_ms : 500;
    for (size_t i = 0; i < c->conf->ntargets; i++) {
        const struct vg_sec_target *t = &c->conf->targets[i];
        char why[128], e[512];
        enum reach r = try_connect(t, timeout, why, sizeof why);
        snprintf(e, sizeof e, "tcp %s port %d (%s): %s", t->host, t->port, t->name, why);
        if (r == REACH_OPEN) vg_sec_emit(c, k, VG_SEC_FAIL, e, "%s (%s:%d) is reachable from a tenant", t->name, t->host, t->port);
        else if (r == REACH_CLOSED) vg_sec_emit(c, k, VG_SEC_PASS, e, "%s (%s:%d) is not reachable", t->name, t->host, t->port);
        else vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check %s: %s", t->name, why);
    }
}

static const struct vg_sec_check checks[] = {
    { "net.mgmt-reachable", "management addresses (BMC, switch, SM) are not reachable from tenants", VG_SEV_HIGH,
      "firewall the management network from tenant nodes (separate VLAN/VRF, ACLs)", mgmt },
};

const struct vg_sec_family vg_sec_network = { "network", checks, sizeof checks / sizeof checks[0] };
