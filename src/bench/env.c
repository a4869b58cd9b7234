// The environment a result was measured in: host, CPU, threads, libraries, GPU, commit, date.
#include "bench/report.h"

#include <cjson/cJSON.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifdef CB_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#ifndef CB_COMMIT
#define CB_COMMIT "unknown"
#endif
#ifndef CB_DIRTY
#define CB_DIRTY 0
#endif

extern char *openblas_get_config(void);
extern int openblas_get_num_threads(void);

const char *cb_env_cpu_model(void) {
    static char model[256];
    if (model[0]) return model;
    snprintf(model, sizeof model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return model;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ') c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(model, sizeof model, "%s", c);
            }
            break;
        }
    }
    fclose(f);
    return model;
}

const char *cb_env_commit(void) { return CB_COMMIT; }
bool cb_env_dirty(void) { return CB_DIRTY; }

int cb_env_threads(void) { return omp_get_max_threads(); }

double cb_env_max_rss_mb(void) {
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? (double)u.ru_maxrss / 1024 : 0; // ru_maxrss: KiB on Linux
}

void cb_env_add(cb_report *r) {
    char buf[512];
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        cb_report_meta_str(r, "os", buf);
        cb_report_meta_str(r, "host", u.nodename);
    }
    cb_report_meta_str(r, "cpu", cb_env_cpu_model());
    cb_report_meta_num(r, "cpu_cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cb_report_meta_num(r, "threads", cb_env_threads());
    cb_report_meta_str(r, "blas", openblas_get_config());
    snprintf(buf, sizeof buf, "zlib %s, cJSON %s", zlibVersion(), cJSON_Version());
    cb_report_meta_str(r, "libraries", buf);
    cb_report_meta_str(r, "convbench_version", cb_version());
    cb_report_meta_str(r, "convbench_commit", CB_COMMIT);
    cb_report_meta_bool(r, "convbench_dirty", CB_DIRTY);
#ifdef CB_HAVE_CUDA
    cb_gpu_info g;
    cb_gpu_info_get(&g);
    cb_report_meta_str(r, "gpu", g.present ? g.name : "none");
    if (g.present) {
        cb_report_meta_str(r, "cuda_driver", g.driver);
        cb_report_meta_str(r, "cuda_runtime", g.runtime);
        cb_report_meta_str(r, "cudnn", g.cudnn);
        if (g.cublas[0]) cb_report_meta_str(r, "cublas", g.cublas);
        cb_report_meta_str(r, "gpu_cc", g.cc);
        cb_report_meta_num(r, "gpu_sms", g.sms);
        cb_report_meta_num(r, "gpu_mem_gib", g.mem_gib);
    }
#endif
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cb_report_meta_str(r, "date", buf);
}
