// Parsing untrusted JSON (network and device descriptions) with cJSON, strictly.
#ifndef CB_CORE_JSON_H
#define CB_CORE_JSON_H

#include "convbench.h"

#include <cjson/cJSON.h>

// Parse a NUL-terminated text. Refuses, with one line naming src: a syntax error (with its line
// and column), nesting deeper than CB_MAX_JSON_DEPTH, trailing text, and a key repeated within
// one object (cJSON would quietly keep the first). NULL with err set on failure.
cJSON *cb_json_parse(const char *text, const char *src, cb_error *err);
// The same for a file (cb_read_text: at most CB_MAX_FILE_BYTES, no NUL bytes).
cJSON *cb_json_read(const char *path, cb_error *err);

#endif
