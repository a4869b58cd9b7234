// libFuzzer: the Paleo JSON reader (cb_net_load_string), then everything a loaded network feeds
// without running it: per-layer and total costs, a batch change, the roofline, calibrated and
// Paleo models.
// A loaded network must be consistent: shapes positive, costs non-negative, totals exact.
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    cb_error err = {0};
    cb_net *net = cb_net_load_string(text, "fuzz.json", &err);
    free(text);
    if (!net) {
        FUZZ_ASSERT(err.status != CB_OK && err.msg[0] && !strchr(err.msg, '\n'));
        return 0;
    }
    for (int pass = 0; pass < 2; pass++) {
        cb_net_cost t;
        cb_net_cost_total(net, &t);
        FUZZ_ASSERT(t.total.params >= 0 && t.activation_bytes > 0 && t.train_bytes >= t.activation_bytes);
        for (int i = 0; i < net->nlayers; i++) {
            const cb_layer *L = &net->layers[i];
            FUZZ_ASSERT(cb_shape_count(L->out) > 0);
            for (int j = 0; j < L->nparents; j++) FUZZ_ASSERT(L->parents[j] >= 0 && L->parents[j] < i);
            cb_cost c;
            cb_layer_cost(net, i, &c);
            FUZZ_ASSERT(c.params >= 0 && c.fwd_flops >= 0 && c.bwd_data_flops >= 0 && c.bwd_filter_flops >= 0);
        }
        fuzz_predict(fuzz_device(), net);
        fuzz_predict(fuzz_cal_device(), net);
        // a batch change infers every shape again; a large one must fail cleanly or fit
        int64_t b = pass == 0 ? 1 + (int64_t)(net->nlayers % 7) * 150000000 : 3;
        if (cb_net_set_batch(net, b, &err) != CB_OK) break;
    }
    cb_net_free(net);
    return 0;
}
