// libFuzzer: command-line argument vectors, through the commands that only read (summary,
// predict, simulate, algos, calibrate --refit): one argument per line of the input, the first
// naming the command. What could write or block is left out: --output, --save, --db and --plot
// (each writes a file, so a fuzzed name would litter the directory), paths other
// than the repository's nets/, data/ and tests/data/ (no /dev/stdin), calibration without
// --refit (it would measure). Run from the repository root, with -close_fd_mask=3.
#include "common.h"
#include "../tools/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 24

static bool allowed(const char *a) {
    static const char *writes[] = {"--output", "--save", "--db", "--plot"};
    for (size_t i = 0; i < sizeof writes / sizeof *writes; i++)
        if (!strncmp(a, writes[i], strlen(writes[i]))) return false;
    if (strstr(a, "..")) return false;
    const char *slash = strchr(a, '/'), *eq = strchr(a, '=');
    const char *val = eq && eq < (slash ? slash : a + strlen(a)) ? eq + 1 : a; // --device=PATH
    if (!slash) return true;
    return !strncmp(val, "nets/", 5) || !strncmp(val, "data/", 5) || !strncmp(val, "tests/data/", 11);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    bool refit = false, ok = true;
    for (char *save = NULL, *t = strtok_r(buf, "\n", &save); t && argc < MAX_ARGS; t = strtok_r(NULL, "\n", &save)) {
        if (!allowed(t)) ok = false;
        if (!strncmp(t, "--refit", 7)) refit = true;
        argv[argc++] = t;
    }
    argv[argc] = NULL;
    const cli_cmd *cmd = NULL;
    if (argc && ok) {
        if (!strcmp(argv[0], "summary")) cmd = &cmd_summary;
        else if (!strcmp(argv[0], "predict")) cmd = &cmd_predict;
        else if (!strcmp(argv[0], "simulate")) cmd = &cmd_simulate;
        else if (!strcmp(argv[0], "algos")) cmd = &cmd_algos;
        else if (!strcmp(argv[0], "calibrate") && refit) cmd = &cmd_calibrate;
    }
    if (cmd) {
        int rc = cmd->run(argc, argv);
        FUZZ_ASSERT(rc == 0 || rc == 2 || rc == 3);
    }
    free(buf);
    return 0;
}
