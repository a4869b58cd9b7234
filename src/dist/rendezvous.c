// Passing NCCL's unique id from rank 0 to the other processes of a multi-process run
// (src/dist/dist.h): through a shared file (file:/path, written whole by rename) or TCP
// (tcp://host:port, rank 0 listens). Pure POSIX: tested on the CPU with several processes.
#include "dist/dist.h"
#include "core/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static void nap(void) {
    struct timespec t = {0, 20 * 1000 * 1000};
    nanosleep(&t, NULL);
}

static cb_status by_file(const char *path, int rank, void *blob, size_t n, double timeout_s, cb_error *err) {
    if (rank == 0) return cb_write_whole(path, blob, n, err);
    double end = now_s() + timeout_s;
    for (;;) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(blob, 1, n, f);
            int extra = fgetc(f);
            fclose(f);
            if (got == n && extra == EOF) return CB_OK;
            return cb_fail(err, CB_STATUS_IO, path, NULL, "rendezvous file holds %s than the %zu bytes of an id", got < n ? "less" : "more", n);
        }
        if (now_s() > end)
            return cb_fail(err, CB_STATUS_IO, path, NULL, "rendezvous: rank 0 did not write the file within %.0f s", timeout_s);
        nap();
    }
}

// host:port of tcp://host:port
static bool split_hostport(const char *hp, char *host, size_t hn, char *port, size_t pn) {
    const char *c = strrchr(hp, ':');
    if (!c || c == hp || !c[1] || (size_t)(c - hp) >= hn || strlen(c + 1) >= pn) return false;
    memcpy(host, hp, (size_t)(c - hp));
    host[c - hp] = 0;
    snprintf(port, pn, "%s", c + 1);
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9') return false;
    return true;
}

static bool send_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w, n -= (size_t)w;
    }
    return true;
}

static cb_status by_tcp(const char *spec, const char *hp, int rank, int world, void *blob, size_t n, double timeout_s, cb_error *err) {
    char host[256], port[16];
    if (!split_hostport(hp, host, sizeof host, port, sizeof port))
        return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "--rendezvous '%s': expected tcp://HOST:PORT", spec);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = rank == 0 ? AI_PASSIVE : 0}, *ai = NULL;
    int g = getaddrinfo(rank == 0 ? NULL : host, port, &hints, &ai);
    if (g) return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "--rendezvous '%s': %s", spec, gai_strerror(g));
    double end = now_s() + timeout_s;
    cb_status st = CB_OK;
    if (rank == 0) {
        int ls = socket(ai->ai_family, SOCK_STREAM, 0), one = 1;
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ls < 0 || bind(ls, ai->ai_addr, ai->ai_addrlen) || listen(ls, world)) {
            st = cb_fail(err, CB_STATUS_IO, NULL, NULL, "--rendezvous '%s': cannot listen on port %s: %s", spec, port, strerror(errno));
        } else {
            for (int k = 1; k < world && st == CB_OK; k++) {
                struct pollfd pf = {ls, POLLIN, 0};
                int left_ms = (int)((end - now_s()) * 1e3);
                if (left_ms <= 0 || poll(&pf, 1, left_ms) <= 0) {
                    st = cb_fail(err, CB_STATUS_IO, NULL, NULL, "--rendezvous '%s': %d of %d ranks connected within %.0f s", spec, k - 1,
                                 world - 1, timeout_s);
                    break;
                }
                int c = accept(ls, NULL, NULL);
                if (c < 0) continue;
                if (!send_all(c, blob, n)) st = cb_fail(err, CB_STATUS_IO, NULL, NULL, "--rendezvous '%s': send: %s", spec, strerror(errno));
                close(c);
            }
        }
        if (ls >= 0) close(ls);
    } else {
        for (;;) {
            int s = socket(ai->ai_family, SOCK_STREAM, 0);
            if (s >= 0 && connect(s, ai->ai_addr, ai->ai_addrlen) == 0) {
                size_t got = 0;
                while (got < n) {
                    ssize_t r = recv(s, (char *)blob + got, n - got, 0);
                    if (r < 0 && errno == EINTR) continue;
                    if (r <= 0) break;
                    got += (size_t)r;
                }
                close(s);
                if (got != n) st = cb_fail(err, CB_STATUS_IO, NULL, NULL, "--rendezvous '%s': the id came short (%zu of %zu bytes)", spec, got, n);
                break;
            }
            if (s >= 0) close(s);
            if (now_s() > end) {
                st = cb_fail(err, CB_STATUS_IO, NULL, NULL, "--rendezvous '%s': rank 0 did not answer within %.0f s", spec, timeout_s);
                break;
            }
            nap();
        }
    }
    freeaddrinfo(ai);
    return st;
}

cb_status cb_rendezvous(const char *spec, int rank, int world, void *blob, size_t n, double timeout_s, cb_error *err) {
    if (world < 1 || rank < 0 || rank >= world) return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "rendezvous: rank %d of %d", rank, world);
    if (world == 1) return CB_OK;
    if (!spec) return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "a multi-process run needs --rendezvous file:PATH or tcp://HOST:PORT");
    if (!strncmp(spec, "file:", 5) && spec[5]) return by_file(spec + 5, rank, blob, n, timeout_s, err);
    if (!strncmp(spec, "tcp://", 6)) return by_tcp(spec, spec + 6, rank, world, blob, n, timeout_s, err);
    return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "--rendezvous '%s': expected file:PATH or tcp://HOST:PORT", spec);
}
