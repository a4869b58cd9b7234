// libFuzzer: device descriptions. The input is read as a device database (cb_devdb_load), as one
// device entry with calibration samples and a stored interconnect (cb_device_load_file,
// cb_cal_samples_from_json), and every device that loads predicts a small network: a device that
// passes the reader must give the model numbers, never NaN, a negative time or an overflowing
// conversion.
#include "common.h"
#include "core/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cb_net *net;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    net = fuzz_net();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("dev.json", data, size);
    cb_error err = {0};
    cb_devdb db;
    if (cb_devdb_load(path, &db, &err) == CB_OK) {
        for (int i = 0; i < db.ndev; i++) fuzz_predict(&db.dev[i], net);
        for (int i = 0; i < db.nlink; i++) {
            double s = cb_allreduce_s(CB_AR_RING, 8, 1e8, &db.link[i]);
            FUZZ_ASSERT(s >= 0);
        }
        cb_devdb_free(&db);
    } else FUZZ_ASSERT(err.msg[0] && !strchr(err.msg, '\n'));
    cb_device d;
    if (cb_device_load_file(path, &d, &err) == CB_OK) {
        fuzz_predict(&d, net);
        if (d.interconnect.bw > 0) FUZZ_ASSERT(cb_allreduce_s(CB_AR_RING, 8, 1e8, &d.interconnect) >= 0); // a stored link
        cJSON *root = cb_json_read(path, &err);
        FUZZ_ASSERT(root);
        cb_cal_sample *s = NULL;
        int n = 0;
        if (cb_cal_samples_from_json(cJSON_GetObjectItemCaseSensitive(root, "samples"), &s, &n, path, &err) == CB_OK && n > 0 &&
            n <= 64 && d.cal.backend[0] && cb_cal_fit(s, n, &d, &err) == CB_OK)
            fuzz_predict(&d, net);
        free(s);
        cJSON_Delete(root);
    }
    return 0;
}
