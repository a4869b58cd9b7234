// The results database on SQLite (schema in db.h).
#include "bench/db.h"
#include "core/net.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *SCHEMA =
    "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY AUTOINCREMENT, date TEXT, verb TEXT, command TEXT,"
    " network TEXT, backend TEXT, precision TEXT, layout TEXT, batch INTEGER, commit_id TEXT, dirty INTEGER,"
    " host TEXT, cpu TEXT, gpu TEXT, json TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS fields(run INTEGER NOT NULL REFERENCES runs(id), key TEXT NOT NULL, value);"
    "CREATE TABLE IF NOT EXISTS cells(run INTEGER NOT NULL REFERENCES runs(id), tbl TEXT NOT NULL, row INTEGER NOT NULL,"
    " col TEXT NOT NULL, num REAL, text TEXT);"
    "CREATE INDEX IF NOT EXISTS cells_run ON cells(run, tbl);";

static cb_status db_fail(cb_error *err, const char *path, sqlite3 *db, const char *what) {
    return cb_fail(err, CB_STATUS_IO, path, NULL, "%s: %s", what, db ? sqlite3_errmsg(db) : "cannot open");
}

static cb_status db_open(const char *path, bool create, sqlite3 **db, cb_error *err) {
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK) {
        cb_status st = db_fail(err, path, *db, create ? "cannot open or create the database" : "cannot open the database");
        sqlite3_close(*db);
        *db = NULL;
        return st;
    }
    sqlite3_busy_timeout(*db, 10000); // another run appending at the same time
    char *msg = NULL;
    if (sqlite3_exec(*db, SCHEMA, NULL, NULL, &msg) != SQLITE_OK) {
        cb_status st = cb_fail(err, CB_STATUS_IO, path, NULL, "not a convbench database: %s", msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_close(*db);
        *db = NULL;
        return st;
    }
    return CB_OK;
}

static const char *str_of(const cJSON *o, const char *k) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

// binds a JSON value: numbers and booleans as numbers, strings as text, anything else NULL
static void bind_value(sqlite3_stmt *s, int i, const cJSON *v) {
    if (cJSON_IsNumber(v)) sqlite3_bind_double(s, i, v->valuedouble);
    else if (cJSON_IsBool(v)) sqlite3_bind_int(s, i, cJSON_IsTrue(v));
    else if (cJSON_IsString(v)) sqlite3_bind_text(s, i, v->valuestring, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(s, i);
}

static bool step_done(sqlite3_stmt *s) {
    bool ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return ok;
}

cb_status cb_db_append(const char *path, const char *json, int64_t *id, cb_error *err) {
    cJSON *doc = cJSON_Parse(json);
    if (!doc) return cb_fail(err, CB_STATUS_PARSE, path, NULL, "the run's JSON does not parse");
    sqlite3 *db = NULL;
    cb_status st = db_open(path, true, &db, err);
    if (st != CB_OK) {
        cJSON_Delete(doc);
        return st;
    }
    sqlite3_stmt *run = NULL, *field = NULL, *cell = NULL;
    bool ok = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
    ok = ok && sqlite3_prepare_v2(db,
                                  "INSERT INTO runs(date, verb, command, network, backend, precision, layout, batch,"
                                  " commit_id, dirty, host, cpu, gpu, json) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                  -1, &run, NULL) == SQLITE_OK;
    ok = ok && sqlite3_prepare_v2(db, "INSERT INTO fields VALUES(?,?,?)", -1, &field, NULL) == SQLITE_OK;
    ok = ok && sqlite3_prepare_v2(db, "INSERT INTO cells VALUES(?,?,?,?,?,?)", -1, &cell, NULL) == SQLITE_OK;
    if (ok) {
        const char *keys[] = {"date", "verb", "command", "network", "backend", "precision", "layout"};
        for (int i = 0; i < 7; i++) sqlite3_bind_text(run, i + 1, str_of(doc, keys[i]), -1, SQLITE_TRANSIENT);
        bind_value(run, 8, cJSON_GetObjectItemCaseSensitive(doc, "batch"));
        sqlite3_bind_text(run, 9, str_of(doc, "convbench_commit"), -1, SQLITE_TRANSIENT);
        bind_value(run, 10, cJSON_GetObjectItemCaseSensitive(doc, "convbench_dirty"));
        sqlite3_bind_text(run, 11, str_of(doc, "host"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(run, 12, str_of(doc, "cpu"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(run, 13, str_of(doc, "gpu"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(run, 14, json, -1, SQLITE_STATIC);
        ok = step_done(run);
    }
    int64_t rid = ok ? sqlite3_last_insert_rowid(db) : 0;
    for (const cJSON *m = doc->child; ok && m; m = m->next) {
        if (!strcmp(m->string, "tables") || !strcmp(m->string, "notes") || !strcmp(m->string, "argv")) continue;
        sqlite3_bind_int64(field, 1, rid);
        sqlite3_bind_text(field, 2, m->string, -1, SQLITE_STATIC);
        bind_value(field, 3, m);
        ok = step_done(field);
    }
    const cJSON *tables = cJSON_GetObjectItemCaseSensitive(doc, "tables");
    for (const cJSON *t = tables ? tables->child : NULL; ok && t; t = t->next) {
        int row = 0;
        for (const cJSON *r = t->child; ok && r; r = r->next, row++)
            for (const cJSON *c = r->child; ok && c; c = c->next) {
                sqlite3_bind_int64(cell, 1, rid);
                sqlite3_bind_text(cell, 2, t->string, -1, SQLITE_STATIC);
                sqlite3_bind_int(cell, 3, row);
                sqlite3_bind_text(cell, 4, c->string, -1, SQLITE_STATIC);
                if (cJSON_IsNumber(c) || cJSON_IsBool(c)) bind_value(cell, 5, c);
                else if (cJSON_IsString(c)) sqlite3_bind_text(cell, 6, c->valuestring, -1, SQLITE_STATIC);
                ok = step_done(cell);
            }
    }
    if (!ok) st = db_fail(err, path, db, "cannot append the run");
    sqlite3_finalize(run);
    sqlite3_finalize(field);
    sqlite3_finalize(cell);
    if (ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        st = db_fail(err, path, db, "cannot commit the run");
        ok = false;
    }
    if (!ok) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    cJSON_Delete(doc);
    if (ok && id) *id = rid;
    return st;
}

static void col_text(sqlite3_stmt *s, int i, char *out, size_t n) {
    const unsigned char *t = sqlite3_column_text(s, i);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

cb_status cb_db_list(const char *path, const char *verb, int limit, cb_db_run **runs, int *n, cb_error *err) {
    *runs = NULL;
    *n = 0;
    sqlite3 *db = NULL;
    cb_status st = db_open(path, false, &db, err);
    if (st != CB_OK) return st;
    sqlite3_stmt *s = NULL;
    const char *sql = "SELECT id, date, verb, network, backend, precision, layout, batch, commit_id, dirty, host, gpu FROM"
                      " (SELECT * FROM runs WHERE ?1 IS NULL OR verb = ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id";
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        st = db_fail(err, path, db, "cannot read the runs");
        sqlite3_close(db);
        return st;
    }
    if (verb) sqlite3_bind_text(s, 1, verb, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, limit > 0 ? limit : -1);
    int cap = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            *runs = realloc(*runs, sizeof **runs * (size_t)cap);
            if (!*runs) abort();
        }
        cb_db_run *r = &(*runs)[(*n)++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(s, 0);
        col_text(s, 1, r->date, sizeof r->date);
        col_text(s, 2, r->verb, sizeof r->verb);
        col_text(s, 3, r->network, sizeof r->network);
        col_text(s, 4, r->backend, sizeof r->backend);
        col_text(s, 5, r->precision, sizeof r->precision);
        col_text(s, 6, r->layout, sizeof r->layout);
        r->batch = sqlite3_column_type(s, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 7);
        col_text(s, 8, r->commit, sizeof r->commit);
        r->dirty = sqlite3_column_int(s, 9) != 0;
        col_text(s, 10, r->host, sizeof r->host);
        col_text(s, 11, r->gpu, sizeof r->gpu);
    }
    if (rc != SQLITE_DONE) st = db_fail(err, path, db, "cannot read the runs");
    sqlite3_finalize(s);
    sqlite3_close(db);
    return st;
}

char *cb_db_json(const char *path, int64_t id, cb_error *err) {
    sqlite3 *db = NULL;
    if (db_open(path, false, &db, err) != CB_OK) return NULL;
    sqlite3_stmt *s = NULL;
    char *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT json FROM runs WHERE id = ?", -1, &s, NULL) != SQLITE_OK) db_fail(err, path, db, "cannot read");
    else {
        sqlite3_bind_int64(s, 1, id);
        if (sqlite3_step(s) == SQLITE_ROW) out = cb_strdup((const char *)sqlite3_column_text(s, 0));
        else cb_fail(err, CB_STATUS_ARG, path, NULL, "no run %lld in the database", (long long)id);
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    return out;
}
