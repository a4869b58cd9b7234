// Result files written whole or not at all, through symbolic links, never over special files.
#define _XOPEN_SOURCE 700 // realpath
#include "core/net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cb_status cb_write_whole(const char *path, const void *data, size_t n, cb_error *err) {
    // Where the bytes go: PATH itself, or what a symbolic link PATH resolves to (the link stays).
    // A device, pipe, socket or directory is refused: renaming over it would replace it (as root,
    // --output /dev/stdout would replace /dev/stdout); redirect standard output to write there.
    // The null device alone is accepted, as a discard.
    struct stat st;
    char *target = NULL;
    bool exists = lstat(path, &st) == 0;
    if (exists && S_ISLNK(st.st_mode)) {
        target = realpath(path, NULL);
        if (!target)
            return cb_fail(err, CB_STATUS_IO, path, NULL, "cannot write: a symbolic link that does not resolve (%s)",
                           strerror(errno));
        exists = stat(target, &st) == 0;
    }
    struct stat null_st;
    if (exists && S_ISCHR(st.st_mode) && stat("/dev/null", &null_st) == 0 && S_ISCHR(null_st.st_mode) &&
        st.st_rdev == null_st.st_rdev) {
        free(target); // the null device: the habitual way to discard a result, so nothing to write
        return CB_OK;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        free(target);
        return cb_fail(err, CB_STATUS_IO, path, NULL,
                       "cannot write: not a regular file (a %s); write to standard output and redirect it instead",
                       S_ISDIR(st.st_mode) ? "directory" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "device" : "pipe or socket");
    }
    const char *dst = target ? target : path;
    size_t tl = strlen(dst) + 32;
    char *tmp = malloc(tl);
    if (!tmp) abort();
    snprintf(tmp, tl, "%s.tmp.%ld", dst, (long)getpid());
    cb_status rc = CB_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, exists ? (st.st_mode & 07777) : 0666);
    if (fd < 0) {
        rc = cb_fail(err, CB_STATUS_IO, path, NULL, "cannot write: %s", strerror(errno));
    } else {
        const char *p = data;
        size_t left = n;
        int e = 0;
        while (left && !e) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) e = w < 0 ? errno : EIO;
            else p += w, left -= (size_t)w;
        }
        if (!e && fsync(fd) != 0 && errno != EINVAL) e = errno;
        if (close(fd) != 0 && !e) e = errno;
        if (!e && rename(tmp, dst) != 0) e = errno;
        if (e) {
            remove(tmp);
            rc = cb_fail(err, CB_STATUS_IO, path, NULL, "cannot write: %s", strerror(e));
        }
    }
    free(tmp);
    free(target);
    return rc;
}
