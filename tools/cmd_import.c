// convbench import MODEL.onnx [-o NET.json]: an ONNX model as a Paleo-format description; with
// --weights-out, its initializers as a convbench weights file (docs/weights-format.md) for it.
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv) {
    long batch = -1;
    const char *out = NULL, *weights_out = NULL;
    const cli_opt opts[] = {
        {"-o", CLI_STR, &out, "FILE", "write the description to FILE (whole or not at all; default stdout)"},
        {"--output", CLI_STR, &out, "FILE", "the same as -o"},
        {"--batch", CLI_INT, &batch, "N", "the input's batch size (replaces a fixed or symbolic one; a symbolic one is 1 otherwise)"},
        {"--weights-out", CLI_STR, &weights_out, "FILE", "write the initializers as a convbench weights file for the description"},
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_import, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    if (batch != -1 && (batch < 1 || batch > 1 << 30))
        return cli_usage_error(&cmd_import, "--batch: %ld must be in [1, %d]", batch, 1 << 30);
    cb_error err = {0};
    char *json = cb_onnx_import(pos[0], batch > 0 ? batch : 0, &err);
    if (!json) return cli_fail(&cmd_import, &err);
    if (weights_out) { // through the engine, so that the file matches the network it loads into
        cb_net *net = cb_net_load(pos[0], &err);
        cb_exec_opts eo;
        cb_exec_opts_default(&eo);
        eo.train = false;
        cb_exec *e = net && (batch < 1 || cb_net_set_batch(net, batch, &err) == CB_OK) ? cb_exec_create(net, &eo, &err) : NULL;
        cb_status st = e ? cb_exec_save_weights(e, weights_out, &err) : err.status;
        cb_exec_destroy(e);
        cb_net_free(net);
        if (st != CB_OK) {
            free(json);
            return cli_fail(&cmd_import, &err);
        }
    }
    size_t n = strlen(json);
    json[n] = '\n'; // cJSON_Print's buffer ends in the NUL we overwrite; the length says where to stop
    cb_status st = cb_write_file(out, json, n + 1, &err);
    free(json);
    return st == CB_OK ? 0 : cli_fail(&cmd_import, &err);
}

const cli_cmd cmd_import = {"import", "an ONNX model as a Paleo-format description (and its weights)",
                            "MODEL.onnx [-o NET.json] [--weights-out FILE]", run};
