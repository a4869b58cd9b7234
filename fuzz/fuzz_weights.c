// libFuzzer: the weights-file reader (cb_exec_load_weights) against a small network with every
// kind of parameter. A file is applied whole or not at all: on failure the weights must be
// unchanged. FUZZ_WRITE_SEED=PATH writes a valid file for the seed corpus and exits.
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cb_exec *e;
static float *before, *after;
static size_t nvals;

// every parameter of the exec, in order, into buf (NULL: count only)
static size_t snapshot(float *buf) {
    size_t n = 0;
    for (int i = 0; i < cb_exec_net(e)->nlayers; i++) {
        cb_param ps[8];
        int np = cb_exec_params(e, i, ps, 8);
        for (int j = 0; j < np; j++) {
            if (buf) cb_exec_param_get(e, &ps[j], buf + n);
            n += (size_t)ps[j].count;
        }
    }
    return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "ref";
    cb_error err = {0};
    e = cb_exec_create(fuzz_net(), &o, &err);
    if (!e) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    const char *seed = getenv("FUZZ_WRITE_SEED");
    if (seed) exit(cb_exec_save_weights(e, seed, &err) == CB_OK ? 0 : 1);
    nvals = snapshot(NULL);
    before = malloc(nvals * sizeof *before);
    after = malloc(nvals * sizeof *after);
    if (!before || !after) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("w.cbw", data, size);
    snapshot(before);
    cb_error err = {0};
    cb_status st = cb_exec_load_weights(e, path, &err);
    if (st != CB_OK) {
        FUZZ_ASSERT(err.msg[0] && !strchr(err.msg, '\n'));
        snapshot(after);
        FUZZ_ASSERT(memcmp(before, after, nvals * sizeof *before) == 0); // nothing set
    }
    return 0;
}
