/* sockcut.c — a unix-socket forwarder whose traffic can be cut off silently,
 * for the tests of a controller whose database connection goes quiet while
 * the others keep theirs.  It forwards every connection made to LISTEN to
 * TARGET, byte for byte, until it is cut: from then on nothing passes either
 * way and nothing is closed (the peers see a network gone silent, not a
 * reset), new connections included.
 *   sockcut LISTEN TARGET [--after TEXT]
 * SIGUSR2 cuts at once.  SIGUSR1 arms --after: the next chunk a client sends
 * that holds TEXT is passed on, then everything is cut (the server has run
 * it: a lock it took stays taken).  "cut" is printed on stdout when it is.
 * SIGTERM ends it. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PAIRS 64

static volatile sig_atomic_t armed, cut_now, stop;

static void on_signal(int sig)
{
    if (sig == SIGUSR1) armed = 1;
    else if (sig == SIGUSR2) cut_now = 1;
    else stop = 1;
}

static int unix_addr(const char *path, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a->sun_path) return -1;
    strcpy(a->sun_path, path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--after"))) {
        fprintf(stderr, "usage: sockcut LISTEN TARGET [--after TEXT]\n");
        return 2;
    }
    const char *after = argc == 5 ? argv[4] : NULL;
    struct sockaddr_un la, ta;
    if (unix_addr(argv[1], &la) || unix_addr(argv[2], &ta)) {
        fprintf(stderr, "sockcut: socket path too long\n");
        return 2;
    }
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    unlink(argv[1]);
    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0 || bind(ls, (struct sockaddr *)&la, sizeof la) || listen(ls, 64)) {
        fprintf(stderr, "sockcut: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    int fds[MAX_PAIRS][2];   /* [client, server] */
    int n = 0;
    bool cut = false;
    setvbuf(stdout, NULL, _IONBF, 0);
    while (!stop) {
        if (cut_now && !cut) cut = true, printf("cut\n");
        struct pollfd p[1 + 2 * MAX_PAIRS];
        p[0] = (struct pollfd){ .fd = ls, .events = POLLIN };
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 2; k++) p[1 + 2 * i + k] = (struct pollfd){ .fd = cut ? -1 : fds[i][k], .events = POLLIN };
        if (poll(p, 1 + 2 * n, 100) < 0) continue;   /* a signal */
        if ((p[0].revents & POLLIN) && n < MAX_PAIRS) {
            int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
            int s = c < 0 || cut ? -1 : socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (s >= 0 && connect(s, (struct sockaddr *)&ta, sizeof ta)) close(s), s = -1;
            if (c >= 0 && s < 0 && !cut) close(c);   /* the server is not there: refused, as it would be */
            if (c >= 0 && (s >= 0 || cut)) fds[n][0] = c, fds[n][1] = s, n++;   /* cut: held open, silent */
        }
        for (int i = 0; i < n && !cut; i++) {
            for (int k = 0; k < 2; k++) {
                if (!(p[1 + 2 * i + k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                char buf[65536];
                ssize_t got = read(fds[i][k], buf, sizeof buf);
                if (got <= 0) {   /* one side closed: so is the other */
                    close(fds[i][0]);
                    close(fds[i][1]);
                    fds[i][0] = fds[n - 1][0], fds[i][1] = fds[n - 1][1];
                    n--;
                    goto next;   /* the poll's answers no longer match the pairs */
                }
                for (ssize_t off = 0; off < got;) {
                    ssize_t w = write(fds[i][!k], buf + off, (size_t)(got - off));
                    if (w <= 0) break;
                    off += w;
                }
                if (k == 0 && armed && after && memmem(buf, (size_t)got, after, strlen(after))) {
                    cut = true;
                    printf("cut\n");
                    break;
                }
            }
        }
    next:;
    }
    unlink(argv[1]);
    return 0;
}
