// libFuzzer: the ONNX reader (cb_onnx_load: protobuf-c, the operator converters, the initializers
// as weights), then what a loaded network feeds without running it: costs, a batch change, the
// models. A model the reader takes must be a consistent network; one it refuses gets one line.
#include "common.h"
#include "core/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("model.onnx", data, size);
    cb_error err = {0};
    cb_net *net = cb_onnx_load(path, &err);
    if (!net) {
        FUZZ_ASSERT(err.status != CB_OK && err.msg[0] && !strchr(err.msg, '\n'));
        return 0;
    }
    cb_net_cost t;
    cb_net_cost_total(net, &t);
    FUZZ_ASSERT(t.total.params >= 0 && t.activation_bytes > 0);
    for (int i = 0; i < net->nlayers; i++) {
        const cb_layer *L = &net->layers[i];
        FUZZ_ASSERT(cb_shape_count(L->out) > 0);
        for (int j = 0; j < L->nparents; j++) FUZZ_ASSERT(L->parents[j] >= 0 && L->parents[j] < i);
    }
    fuzz_predict(fuzz_device(), net);
    if (cb_net_set_batch(net, 3, &err) == CB_OK) fuzz_predict(fuzz_device(), net);
    cb_net_free(net);
    return 0;
}
