// convbench: the command-line entry. One file per command in tools/.
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_cmd *const COMMANDS[] = {&cmd_summary, &cmd_fullpass, &cmd_profile, &cmd_layers, &cmd_train, &cmd_infer,
                                          &cmd_predict, &cmd_model_eval, &cmd_simulate, &cmd_allreduce, &cmd_calibrate, &cmd_algos, &cmd_import,
                                          &cmd_history, &cmd_compare, &cmd_report};

static void usage(FILE *f) {
    fprintf(f, "usage: convbench COMMAND [options]   (convbench COMMAND --help for each)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i]->name, COMMANDS[i]->summary);
    fprintf(f, "\nNET is a Paleo-format JSON file, an ONNX model (.onnx) or a built-in name (nets/*.json: alexnet, vgg16, ...).\n");
}

int main(int argc, char **argv) {
    cb_report_set_argv(argc, argv);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("convbench %s (commit %s)\n", cb_version(), cb_env_commit());
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(argv[1], COMMANDS[i]->name) == 0) return COMMANDS[i]->run(argc - 1, argv + 1);
    fprintf(stderr, "convbench: unknown command '%s' (see convbench --help)\n", argv[1]);
    return 2;
}
