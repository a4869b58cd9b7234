#include "runs_common.h"
#include "bench/db.h"
#include "core/net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *runs_str(const cJSON *o, const char *key) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(x) ? x->valuestring : "";
}

double runs_num(const cJSON *o, const char *key) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

const char *runs_verb(const cJSON *doc) {
    const char *v = runs_str(doc, "verb");
    return *v ? v : runs_str(doc, "command");
}

static int64_t newest(const cli_cmd *cmd, const char *db, long back, int *rc) {
    cb_db_run *runs = NULL;
    int n = 0;
    cb_error err = {0};
    if (cb_db_list(db, NULL, (int)back, &runs, &n, &err) != CB_OK) {
        *rc = cli_fail(cmd, &err);
        return -1;
    }
    int64_t id = n >= back ? runs[0].id : -1;
    free(runs);
    if (id < 0) *rc = cli_usage_error(cmd, "%s: has %d runs, not %ld", db, n, back);
    return id;
}

cJSON *runs_load(const cli_cmd *cmd, const char *db, const char *spec, int *rc) {
    cb_error err = {0};
    char *text;
    if (db) {
        char *end;
        long id = strtol(spec, &end, 10);
        if (!*spec || *end || id == 0) {
            *rc = cli_usage_error(cmd, "'%s' is not a run id of %s (see convbench history --db %s)", spec, db, db);
            return NULL;
        }
        if (id < 0 && (id = (long)newest(cmd, db, -id, rc)) < 0) return NULL;
        text = cb_db_json(db, id, &err);
    } else text = cb_read_text(spec, &err);
    if (!text) {
        *rc = cli_fail(cmd, &err);
        return NULL;
    }
    cJSON *doc = cJSON_Parse(text);
    free(text);
    if (!doc || !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "tables"))) {
        cJSON_Delete(doc);
        *rc = cli_usage_error(cmd, "%s: not a convbench JSON result (no \"tables\")", spec);
        return NULL;
    }
    return doc;
}

void runs_label(const cJSON *doc, const char *spec, bool from_db, char *out, size_t n) {
    const char *base = strrchr(spec, '/');
    const cJSON *dirty = cJSON_GetObjectItemCaseSensitive(doc, "convbench_dirty");
    snprintf(out, n, "%s%s %s%s %.10s", from_db ? "#" : "", base ? base + 1 : spec, runs_str(doc, "convbench_commit"),
             cJSON_IsTrue(dirty) ? "-dirty" : "", runs_str(doc, "date"));
}
