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
// simulate's defaults: the database entry of this machine's GPU (its name in the GPU's, "h200"
// in "NVIDIA H200"), else the database's first GPU; and that GPU's usual interconnect (NVLink 4
// for H100/H200, NVLink 3 for A100, else PCIe 3). why: a line saying what was chosen and why.
// the database entry of a GPU by its name ("NVIDIA H200" -> h200); NULL when none
const cb_device *model_cli_gpu_entry(const cb_devdb *db, const char *gpu);
const char *model_cli_default_device(const cb_devdb *db, char *why, size_t n);
const char *model_cli_default_link(const cb_devdb *db, const char *device);
// median and 90th percentile (linear interpolation) of v[0..n); v is sorted in place
void model_cli_percentiles(double *v, int n, double *median, double *p90);

#endif
