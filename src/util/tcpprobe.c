/* tcpprobe.c — liveness of a daemon behind a TCP port; see tcpprobe.h. */
#include "util/tcpprobe.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Waits for events on fd until the deadline; 1 ready, 0 timed out. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - vg_mono_ms();
        if (left <= 0) return 0;
        struct pollfd p = { fd, events, 0 };
        int r = poll(&p, 1, (int)left);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return 0;
    }
}

enum vg_tcp_alive vg_tcp_probe(const char *addr, int port, int timeout_ms)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
    if (getaddrinfo(addr, ps, &hints, &ai)) return VG_TCP_UNKNOWN;
    int64_t deadline = vg_mono_ms() + timeout_ms;
    enum vg_tcp_alive res = VG_TCP_DEAD;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        int err = rc ? errno : 0;
        if (err == EINPROGRESS && wait_fd(fd, POLLOUT, deadline)) {
            socklen_t l = sizeof err;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l)) err = errno;
        } else if (err == EINPROGRESS)
            err = ETIMEDOUT;
        /* connected: a live daemon reads these bytes, rejects them and closes
         * (or answers); a frozen one never reads them */
        static const char junk[] = "\0\0\0\x10vigil-liveness!!";
        if (!err && send(fd, junk, sizeof junk - 1, MSG_NOSIGNAL) >= 0 && wait_fd(fd, POLLIN, deadline))
            res = VG_TCP_ALIVE;
        close(fd);
    }
    freeaddrinfo(ai);
    return res;
}
