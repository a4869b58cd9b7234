// Shared by predict, simulate and calibrate: the device (database entry, calibration file)
// named on the command line.
#ifndef CB_TOOLS_MODEL_CLI_H
#define CB_TOOLS_MODEL_CLI_H

#include "cli.h"
#include "model/model.h"

// Loads the database (db_path NULL: the default) and resolves --device / --calibration into
// *dev. With only a calibration file, that file is the device; so is a --device that names a
// file (a path with '/' or a name ending in .json). Returns -1 to go on or an exit
// status after a one-line message. *db stays loaded for interconnect look-ups (free it).
int model_cli_device(const cli_cmd *cmd, const char *db_path, const char *name, const char *calibration, cb_devdb *db,
                     cb_device *dev);
// One direction of a `convbench profile --format json` result, matched to a network's layers.
typedef struct model_measure {
    cb_phase phase;
    bool train_fwd;                     // forward timed as a training forward (profile --direction all)
    double *ms;                         // per layer index, NAN where absent
    char (*alg)[48];                    // the algorithm the backend ran ("" where absent)
} model_measure;
// A profile's header: network name, batch and precision. Returns -1 or an exit status after one line.
int model_cli_profile_header(const cli_cmd *cmd, const char *path, char *network, size_t cap, long *batch, cb_precision *prec);
// Reads the directions of one profile (1, or 3 from --direction all) into m[*n..], up to cap in
// all; refuses (one line naming the file, exit 2) a profile of another network, batch or
// precision than net and prec. Returns -1 or an exit status. Free each m with model_cli_measure_free.
int model_cli_load_measure(const cli_cmd *cmd, const char *path, const cb_net *net, cb_precision prec, model_measure *m, int *n,
                           int cap);
void model_cli_measure_free(model_measure *m);
// median and 90th percentile (linear interpolation) of v[0..n); v is sorted in place
void model_cli_percentiles(double *v, int n, double *median, double *p90);

#endif
