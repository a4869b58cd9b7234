// Data and weights tests: the IDX reader (raw and gzip, and each way a file can be wrong), the
// bilinear resize against hand-computed values, weights files (round trip and every rejection),
// and a training smoke test through cb_train on a synthetic, separable 4-class task.
// Files are made in a mkdtemp directory and removed at the end.
#include "bench/train.h"
#include "data/idx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static int n_pass, n_fail;
static char dir[256];

static void check(bool ok, const char *name, const char *detail) {
    if (ok) n_pass++, printf("ok   %s\n", name);
    else n_fail++, printf("FAIL %s: %s\n", name, detail ? detail : "");
}

static void path_of(char *out, size_t n, const char *base) { snprintf(out, n, "%s/%s", dir, base); }

static void be32(unsigned char *p, uint32_t v) { p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = (unsigned char)v; }

// An IDX file: magic, dims, then `bytes` of the given data (fewer than the dims say = truncated).
static void write_idx(const char *base, bool gz, uint32_t magic, int nd, const uint32_t *dims, const uint8_t *data,
                      size_t bytes) {
    char p[512];
    path_of(p, sizeof p, base);
    unsigned char h[16];
    be32(h, magic);
    for (int i = 0; i < nd; i++) be32(h + 4 + 4 * i, dims[i]);
    if (gz) {
        gzFile f = gzopen(p, "wb");
        gzwrite(f, h, (unsigned)(4 + 4 * nd));
        if (bytes) gzwrite(f, data, (unsigned)bytes);
        gzclose(f);
    } else {
        FILE *f = fopen(p, "wb");
        fwrite(h, 1, (size_t)(4 + 4 * nd), f);
        fwrite(data, 1, bytes, f);
        fclose(f);
    }
}

enum { NI = 5, HI = 4, WI = 3 };
static uint8_t pix[NI * HI * WI], lab[NI];

static void test_idx(void) {
    for (int i = 0; i < NI * HI * WI; i++) pix[i] = (uint8_t)(i * 37 + 11);
    for (int i = 0; i < NI; i++) lab[i] = (uint8_t)(i % 10);
    uint32_t di[3] = {NI, HI, WI}, dl[1] = {NI};
    char sub[512];
    // raw split in dir/raw, gzip split in dir/gz
    snprintf(sub, sizeof sub, "%s/raw", dir);
    mkdir(sub, 0700);
    snprintf(sub, sizeof sub, "%s/gz", dir);
    mkdir(sub, 0700);
    write_idx("raw/train-images-idx3-ubyte", false, 0x803, 3, di, pix, sizeof pix);
    write_idx("raw/train-labels-idx1-ubyte", false, 0x801, 1, dl, lab, sizeof lab);
    write_idx("gz/train-images-idx3-ubyte.gz", true, 0x803, 3, di, pix, sizeof pix);
    write_idx("gz/train-labels-idx1-ubyte.gz", true, 0x801, 1, dl, lab, sizeof lab);

    cb_error err = {0};
    cb_dataset raw = {0}, gz = {0};
    char p[512];
    path_of(p, sizeof p, "raw");
    cb_status st = cb_dataset_load(p, "train", false, 0, &raw, &err);
    bool ok = st == CB_OK && raw.n == NI && raw.h == HI && raw.w == WI;
    for (int i = 0; ok && i < NI * HI * WI; i++) ok = raw.x[i] == (float)pix[i] / 255.0f || fabsf(raw.x[i] - pix[i] / 255.0f) < 1e-6f;
    for (int i = 0; ok && i < NI; i++) ok = raw.y[i] == lab[i];
    check(ok, "idx raw round trip", err.msg);
    path_of(p, sizeof p, "gz");
    st = cb_dataset_load(p, "train", false, 0, &gz, &err);
    ok = st == CB_OK && gz.n == raw.n && memcmp(gz.x, raw.x, sizeof(float) * NI * HI * WI) == 0 &&
         memcmp(gz.y, raw.y, sizeof(int32_t) * NI) == 0;
    check(ok, "idx gzip equals raw", err.msg);
    cb_dataset_free(&gz);

    cb_dataset nd = {0};
    path_of(p, sizeof p, "raw");
    st = cb_dataset_load(p, "train", true, 3, &nd, &err);
    float want = (pix[7] / 255.0f - CB_FASHION_MEAN) / CB_FASHION_STD;
    check(st == CB_OK && nd.n == 3 && fabsf(nd.x[7] - want) < 1e-5f, "idx normalise and --limit", err.msg);
    cb_dataset_free(&nd);
    cb_dataset_free(&raw);

    // missing
    memset(&err, 0, sizeof err);
    path_of(p, sizeof p, "raw");
    st = cb_dataset_load(p, "t10k", false, 0, &nd, &err);
    check(st == CB_STATUS_IO && strstr(err.msg, "t10k-images-idx3-ubyte"), "idx missing file names the file", err.msg);

    // truncated: the header says 5 images, the data hold 4.5
    uint8_t *u8 = NULL;
    int64_t n = 0;
    int h = 0, w = 0;
    write_idx("trunc-images", true, 0x803, 3, di, pix, sizeof pix - 6);
    path_of(p, sizeof p, "trunc-images");
    memset(&err, 0, sizeof err);
    st = cb_idx_read_images(p, &u8, &n, &h, &w, &err);
    check(st == CB_STATUS_PARSE && strstr(err.msg, p) && strstr(err.msg, "truncated"), "idx truncated", err.msg);

    // bad magic: a label file given as images
    path_of(p, sizeof p, "raw/train-labels-idx1-ubyte");
    memset(&err, 0, sizeof err);
    st = cb_idx_read_images(p, &u8, &n, &h, &w, &err);
    check(st == CB_STATUS_PARSE && strstr(err.msg, p) && strstr(err.msg, "bad magic") && strstr(err.msg, "label"),
          "idx bad magic (labels as images)", err.msg);

    // absurd dimensions
    uint32_t dz[3] = {NI, 0, 100000};
    write_idx("absurd-images", false, 0x803, 3, dz, pix, sizeof pix);
    path_of(p, sizeof p, "absurd-images");
    memset(&err, 0, sizeof err);
    st = cb_idx_read_images(p, &u8, &n, &h, &w, &err);
    check(st == CB_STATUS_PARSE && strstr(err.msg, p) && strstr(err.msg, "absurd"), "idx absurd dimensions", err.msg);

    // count mismatch: 5 images, 4 labels
    snprintf(sub, sizeof sub, "%s/mis", dir);
    mkdir(sub, 0700);
    uint32_t d4[1] = {4};
    write_idx("mis/train-images-idx3-ubyte", false, 0x803, 3, di, pix, sizeof pix);
    write_idx("mis/train-labels-idx1-ubyte.gz", true, 0x801, 1, d4, lab, 4);
    path_of(p, sizeof p, "mis");
    memset(&err, 0, sizeof err);
    st = cb_dataset_load(p, "train", false, 0, &nd, &err);
    check(st == CB_STATUS_PARSE && strstr(err.msg, "train-labels-idx1-ubyte.gz") && strstr(err.msg, "4 labels") &&
              strstr(err.msg, "5 images"),
          "idx image and label counts disagree", err.msg);
}

static void test_resize(void) {
    // PyTorch: F.interpolate(tensor([[0,1],[2,3]]).view(1,1,2,2), size=4, mode="bilinear",
    // align_corners=False) = the table below. By hand, dst(1,1): src = (1+0.5)*0.5-0.5 = 0.25 on
    // both axes: 0*.75*.75 + 1*.75*.25 + 2*.25*.75 + 3*.25*.25 = 0.75.
    const float src[4] = {0, 1, 2, 3};
    const float want[16] = {0, 0.25f, 0.75f, 1, 0.5f, 0.75f, 1.25f, 1.5f, 1.5f, 1.75f, 2.25f, 2.5f, 2, 2.25f, 2.75f, 3};
    float dst[16];
    cb_resize_bilinear(src, 2, 2, dst, 4, 4);
    double e = 0;
    for (int i = 0; i < 16; i++) e = fmax(e, fabs(dst[i] - want[i]));
    char msg[64];
    snprintf(msg, sizeof msg, "max error %g", e);
    check(e < 1e-6, "resize 2x2 -> 4x4 bilinear (align_corners=false)", msg);
    // identity size and a downscale by 2 (averages pixel pairs exactly)
    float s4[16], d2[4];
    for (int i = 0; i < 16; i++) s4[i] = (float)i;
    cb_resize_bilinear(s4, 4, 4, d2, 2, 2);
    check(fabsf(d2[0] - 2.5f) < 1e-6f && fabsf(d2[3] - 12.5f) < 1e-6f, "resize 4x4 -> 2x2", NULL);
}

// ---- weights ----
static const char *TINY = "{\"name\": \"tiny\", \"layers\": {"
                          "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%d, 8, 8, 1]},"
                          "\"conv1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 1, %d],"
                          " \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": null},"
                          "\"pool1\": {\"parents\": [\"conv1\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1],"
                          " \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
                          "\"fc2\": {\"parents\": [\"pool1\"], \"type\": \"InnerProduct\", \"num_outputs\": 4, \"activation_fn\": null},"
                          "\"softmax\": {\"parents\": [\"fc2\"], \"type\": \"Softmax\", \"num_classes\": 4}}}";

static cb_net *tiny_net(int batch, int filters) {
    char js[2048];
    snprintf(js, sizeof js, TINY, batch, filters);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(js, "tiny.json", &err);
    if (!net) {
        printf("FAIL tiny net: %s\n", err.msg);
        exit(1);
    }
    return net;
}

static cb_exec *exec_of(cb_net *net, uint64_t seed, bool train) {
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.seed = seed;
    o.train = train;
    o.lr = 0.05f;
    o.weight_decay = 0;
    cb_error err = {0};
    cb_exec *e = cb_exec_create(net, &o, &err);
    if (!e) {
        printf("FAIL exec: %s\n", err.msg);
        exit(1);
    }
    return e;
}

static bool same_params(cb_exec *a, cb_exec *b) {
    for (int i = 0; i < cb_exec_net(a)->nlayers; i++) {
        cb_param pa[8], pb[8];
        int na = cb_exec_params(a, i, pa, 8), nb = cb_exec_params(b, i, pb, 8);
        if (na != nb) return false;
        for (int j = 0; j < na; j++) {
            if (pa[j].count != pb[j].count) return false;
            float *x = malloc(sizeof(float) * (size_t)pa[j].count), *y = malloc(sizeof(float) * (size_t)pa[j].count);
            cb_exec_param_get(a, &pa[j], x);
            cb_exec_param_get(b, &pb[j], y);
            bool eq = memcmp(x, y, sizeof(float) * (size_t)pa[j].count) == 0;
            free(x), free(y);
            if (!eq) return false;
        }
    }
    return true;
}

static void corrupt(const char *from, const char *to, long truncate_to, long flip_at) {
    FILE *f = fopen(from, "rb");
    unsigned char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (truncate_to >= 0 && (size_t)truncate_to < n) n = (size_t)truncate_to;
    if (flip_at >= 0 && (size_t)flip_at < n) buf[flip_at] ^= 0x40;
    f = fopen(to, "wb");
    fwrite(buf, 1, n, f);
    fclose(f);
}

static void test_weights(void) {
    cb_net *net = tiny_net(2, 4), *other = tiny_net(2, 6);
    cb_exec *a = exec_of(net, 1, true), *b = exec_of(net, 2, false), *c = exec_of(other, 1, false);
    char p[512], q[512], tmp[520];
    path_of(p, sizeof p, "tiny.cbw");
    cb_error err = {0};
    cb_status st = cb_exec_save_weights(a, p, &err);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    check(st == CB_OK && access(p, F_OK) == 0 && access(tmp, F_OK) != 0, "weights save (no .tmp left)", err.msg);
    bool differ = !same_params(a, b);
    st = cb_exec_load_weights(b, p, &err);
    check(differ && st == CB_OK && same_params(a, b), "weights round trip (train exec -> inference exec)", err.msg);

    path_of(q, sizeof q, "bad.cbw");
    corrupt(p, q, 30, -1);
    memset(&err, 0, sizeof err);
    st = cb_exec_load_weights(b, q, &err);
    check(st == CB_STATUS_PARSE && strstr(err.msg, q) && strstr(err.msg, "truncated"), "weights truncated", err.msg);
    corrupt(p, q, -1, 60);
    memset(&err, 0, sizeof err);
    st = cb_exec_load_weights(b, q, &err);
    check(st == CB_STATUS_PARSE && strstr(err.msg, "checksum"), "weights flipped byte -> checksum", err.msg);
    corrupt(p, q, -1, 1);
    memset(&err, 0, sizeof err);
    st = cb_exec_load_weights(b, q, &err);
    check(st == CB_STATUS_PARSE && strstr(err.msg, "magic"), "weights bad magic", err.msg);
    memset(&err, 0, sizeof err);
    st = cb_exec_load_weights(c, p, &err);
    check(st == CB_STATUS_SHAPE && strstr(err.msg, "layer 'conv1': weight has 36 values, the network needs 54"),
          "weights from another network", err.msg);
    path_of(q, sizeof q, "absent.cbw");
    memset(&err, 0, sizeof err);
    st = cb_exec_load_weights(b, q, &err);
    check(st == CB_STATUS_IO && strstr(err.msg, q), "weights missing file", err.msg);
    cb_exec_destroy(a), cb_exec_destroy(b), cb_exec_destroy(c);
    cb_net_free(net), cb_net_free(other);
}

// ---- training smoke test: class c has a bright quadrant c on noise ----
static void synth(cb_dataset *d, int n, uint64_t seed) {
    d->n = n, d->h = 8, d->w = 8;
    d->x = malloc(sizeof(float) * 64 * (size_t)n);
    d->y = malloc(sizeof(int32_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        int c = i % 4;
        d->y[i] = c;
        for (int r = 0; r < 8; r++)
            for (int s = 0; s < 8; s++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                float noise = (float)(seed >> 40) / 16777216.0f * 0.6f;
                bool hot = (r / 4) * 2 + s / 4 == c;
                d->x[i * 64 + r * 8 + s] = noise + (hot ? 0.5f : 0);
            }
    }
}

static void test_train(void) {
    cb_dataset tr, te;
    synth(&tr, 512, 7);
    synth(&te, 100, 99);
    cb_net *net = tiny_net(16, 4);
    cb_exec *e = exec_of(net, 3, true);
    cb_train_opts o = {.epochs = 2, .lr = 0.05f, .schedule = CB_SCHEDULE_COSINE, .seed = 5};
    cb_epoch_stats s[2];
    cb_error err = {0};
    double acc0 = 0;
    cb_evaluate(e, &te, &acc0, NULL, &err);
    cb_status st = cb_train(e, &tr, &te, &o, s, &err);
    char msg[700];
    snprintf(msg, sizeof msg, "%s loss %.3f -> %.3f, test accuracy %.3f -> %.3f", err.msg, s[0].loss, s[1].loss, acc0,
             s[1].test_acc);
    check(st == CB_OK && s[0].loss < 1.2 && s[1].loss < s[0].loss && s[1].test_acc > 0.9, "train smoke: loss falls", msg);
    printf("     (%s)\n", msg + strlen(err.msg));
    // evaluation with a padded last batch counts the real rows only
    cb_dataset part = te;
    part.n = 37;
    double acc = -1;
    cb_eval_times t = {0};
    st = cb_evaluate(e, &part, &acc, &t, &err);
    check(st == CB_OK && t.batches == 3 && acc >= 0.9 && acc <= 1, "evaluate pads the last batch", err.msg);
    cb_exec_destroy(e);
    cb_net_free(net);
    cb_dataset_free(&tr), cb_dataset_free(&te);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s/cbtest-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_idx();
    test_resize();
    test_weights();
    test_train();
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
