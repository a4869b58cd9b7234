// What every program linked with convbench gets without asking: the version, where the data
// (built-in networks, the device database) is, and the OpenMP thread policy.
#ifdef CB_SHARED
#define _GNU_SOURCE // dl_iterate_phdr
#include <link.h>
#endif
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convbench.h"

// CB_DATADIR: PREFIX/share/convbench of `make install`; CB_SRCDIR: the source tree it was built in.
#ifndef CB_DATADIR
#define CB_DATADIR "/usr/local/share/convbench"
#endif
#ifndef CB_SRCDIR
#define CB_SRCDIR "."
#endif

const char *cb_version(void) { return CONVBENCH_VERSION; }

const char *cb_data_dirs(void) {
    static char dirs[8192];
    const char *e = getenv("CONVBENCH_DATA");
    snprintf(dirs, sizeof dirs, "%s:%s%s%s", CB_DATADIR, e && *e ? e : "", e && *e ? ":" : "", CB_SRCDIR);
    return dirs;
}

bool cb_data_file(const char *rel, char *out, size_t n) {
    const char *d = cb_data_dirs();
    while (*d) {
        const char *c = strchr(d, ':');
        int len = c ? (int)(c - d) : (int)strlen(d);
        snprintf(out, n, "%.*s/%s", len, d, rel);
        FILE *f = len ? fopen(out, "rb") : NULL;
        if (f) {
            fclose(f);
            return true;
        }
        if (!c) break;
        d = c + 1;
    }
    snprintf(out, n, "%s/%s", CB_SRCDIR, rel);
    return false;
}

extern void openblas_set_num_threads(int n);

void cb_set_threads(int n) {
    if (n < 1) return;
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
}

// OpenBLAS's threads and OpenMP's spinning team fight over the cores between layers; a passive
// OpenMP wait roughly doubles a CPU training step on 2 cores. libgomp reads OMP_WAIT_POLICY once,
// in its own initialiser, which runs before any of ours (and libc's initialiser resets an
// environment changed earlier), so a program that starts without the variable is started again
// once with it, from this initialiser, before its main. Only at start-up: a library loaded later
// with dlopen (Python's ctypes) does not restart its host, which keeps its own policy; so does a
// program that sets the variable itself (OMP_WAIT_POLICY=active keeps spinning).
#ifdef CB_SHARED
// true when the executable itself names libconvbench.so as a dependency (loaded at start-up)
static int needs_me(struct dl_phdr_info *info, size_t size, void *found) {
    (void)size;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    const char *strtab = NULL;
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_STRTAB) strtab = (const char *)d->d_un.d_ptr;
    for (const ElfW(Dyn) *d = dyn; d && strtab && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_NEEDED && strncmp(strtab + d->d_un.d_val, "libconvbench.so", 15) == 0) *(bool *)found = true;
    return 1; // the first entry is the executable
}
#endif

__attribute__((constructor)) static void thread_policy(int argc, char **argv, char **envp) {
    (void)argc, (void)envp;
    if (getenv("OMP_WAIT_POLICY") || !argv || !argv[0]) return;
#ifdef CB_SHARED
    bool at_start = false;
    dl_iterate_phdr(needs_me, &at_start);
    if (!at_start) return;
#endif
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv); // returns only on failure: then run on as it is
}
