// Private to the Paleo reader (src/spec/paleo*.c): the reader's state and the one-layer parser
// that the block expansion (paleo.c) calls.
#ifndef CB_SPEC_PALEO_READER_H
#define CB_SPEC_PALEO_READER_H
#include "core/net.h"
#include "core/strmap.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct reader {
    const char *src;              // file name for messages
    cb_error *err;
    cb_layer *layers;
    cb_raw_parents *parents;
    int n, cap;
    // block name -> "block/endpoint"; ModelParallel sub-layer name -> splits
    char **ep_block, **ep_target;
    int nep;
    char **split_name;
    int *split_count;
    int nsplit;
    // hashes of the names above: layer name -> index, block -> index in ep_*, name -> index in split_*
    cb_strmap names, eps, splitmap;
    int64_t refs;                 // parent references so far (CB_MAX_PARENT_REFS)
} reader;

typedef struct type_info {
    const char *type;
    cb_op op;
    const char *keys[12];         // allowed keys besides "type" and "parents"
} type_info;

const type_info *paleo_find_type(const char *t);
bool paleo_get_int(reader *r, const char *layer, const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out);
bool paleo_check_keys(reader *r, const char *layer, const cJSON *obj, const type_info *ti);
// a layer's parameters (not its parents) from its JSON object, checked
bool paleo_parse_params(reader *r, cb_layer *L, const cJSON *obj, const type_info *ti, int splits);
#endif
