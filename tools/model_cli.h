// Shared by predict, simulate and calibrate: the device (database entry, calibration file)
// named on the command line.
#ifndef CB_TOOLS_MODEL_CLI_H
#define CB_TOOLS_MODEL_CLI_H

#include "cli.h"
#include "model/model.h"

// Loads the database (db_path NULL: the default) and resolves --device / --calibration into
// *dev. With only a calibration file, that file is the device; so is a --device that names a
// file (a path with '/' or a name ending in .json). Returns -1 to go on or an exit
// status after a one-line message. *db stays loaded for interconnect look-ups (free it); it is
// read only when needed: a device name, links (interconnects wanted) or an explicit db_path.
int model_cli_device(const cli_cmd *cmd, const char *db_path, const char *name, const char *calibration, bool links,
                     cb_devdb *db, cb_device *dev);
// the database entry of a GPU by its name ("NVIDIA H200" -> h200); NULL when none
const cb_device *model_cli_gpu_entry(const cb_devdb *db, const char *gpu);
// simulate's defaults: the database entry of this machine's GPU (its name in the GPU's, "h200"
// in "NVIDIA H200"), else the database's first GPU; and that GPU's usual interconnect (NVLink 4
// for H100/H200, NVLink 3 for A100, else PCIe 3: the entry's "link" in data/devices.json, or that of
// the database's entry of its GPU model). why: a line saying what was chosen and why.
const char *model_cli_default_device(const cb_devdb *db, char *why, size_t n);
const char *model_cli_default_link(const cb_devdb *db, const cb_device *device);
// One direction of a `convbench profile --format json` result, matched to a network's layers.
typedef struct model_measure {
    cb_phase phase;
    bool train_fwd;                     // forward timed as a training forward (profile --direction all)
    bool held;                          // profile --hold on (since 2026-11-30): no pass waited for the host's first call
    double *ms;                         // per layer index, NAN where absent
    char (*alg)[48];                    // the algorithm the backend ran ("" where absent)
    char backend[16];                   // the profile's backend these times are of
} model_measure;
// A profile's header: network name, batch and precision. Returns -1 or an exit status after one line.
int model_cli_profile_header(const cli_cmd *cmd, const char *path, char *network, size_t cap, long *batch, cb_precision *prec,
                             cb_layout *layout);
// a result's layout: its "layout", else its argv's --layout, else NCHW
struct cJSON;
cb_layout model_cli_json_layout(const struct cJSON *root);
// Reads the directions of one profile (1, or 3 from --direction all) into m[*n..], up to cap in
// all, the times of `backend` where the profile has several (else its first); refuses (one line naming the file, exit 2) a profile of another network, batch or
// precision than net and prec. Returns -1 or an exit status. Free each m with model_cli_measure_free.
int model_cli_load_measure(const cli_cmd *cmd, const char *path, const cb_net *net, cb_precision prec, cb_layout layout, const char *backend,
                           model_measure *m, int *n, int cap);
void model_cli_measure_free(model_measure *m);
// One layer and direction with a measured time, and what the model and Paleo's method predict.
typedef struct model_row {
    int layer;
    cb_phase phase;
    double measured_ms, paleo_ms, err_pct, paleo_err_pct;
    const char *measured_alg;           // into the measure ("" where the profile names none)
    bool held;                          // of a held profile (model_measure.held)
    cb_pred pred;
} model_row;
// Whether --kinds K1,K2 (conv, fc, pool, other, all; NULL = all) selects layers of op.
bool model_cli_kind_selected(const char *kinds, cb_op op);
// "'X' is not a kind" check of a --kinds list: -1 or an exit status after one line.
int model_cli_kinds_check(const cli_cmd *cmd, const char *kinds);
// Every layer and direction of m[0..nm) with a measured time whose kind `kinds` selects, in
// malloc'd rows (*n of them); backward-data rows of layers fed only by the input (their time is
// the activation's gradient alone) are left out and counted in *skipped. A forward timed alone
// is predicted as inference, one from profile --direction all as a training forward.
model_row *model_cli_compare(const cb_device *d, const cb_net *net, const model_measure *m, int nm, const char *kinds,
                             cb_model_opts mo, int *n, int *skipped);
// Layer i's prediction in phase ph as model_cli_compare makes it (*out): cb_predict_layer, plus the
// idle GPU's wait where (i, ph) is a pass's first piece (cb_pass_first, cb_pass_start_s) of a profile not held
void model_cli_predict_row(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *mo, bool held, cb_pred *out);
// median and 90th percentile (linear interpolation) of v[0..n); v is sorted in place
void model_cli_percentiles(double *v, int n, double *median, double *p90);

// An entry saved before devices had l2_bytes (2026-11-27 late) takes its GPU's from the database
// (db_path, or the default), matched by model name; none found: 0, and the passes' fit goes
// without the spill term (cb_cal_mop)
void model_cli_fill_l2(const char *db_path, cb_device *dev);

#endif
