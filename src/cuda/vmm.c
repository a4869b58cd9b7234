// A growable device buffer for the engine's activation arena (be->alloc_growable, be->grow).
// The arena is placed before the plan, and the plan alone knows each layer's workspace. A workspace
// that fits no gap of the arena can still lie past its end: growing the arena there costs the
// bytes past the end, where a buffer of its own costs the workspace whole (AlexNet b128 tf32 on
// the H200: conv1's backward filter asks 206.8 MiB while 169 MiB of the 267 MiB arena is live).
// So the arena is physical memory mapped into a larger range of reserved addresses (CUDA's virtual
// memory management: cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), and grows in
// place, every buffer keeping its address. The driver's entry points come through the runtime
// (cudaGetDriverEntryPointByVersion): nothing links against libcuda, and where they or the device
// lack the feature the arena is an ordinary cudaMalloc that does not grow.
#include "cuda/backend.h"

#include <cuda.h>
#include <stdint.h>
#include <string.h>

typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*addr_free_fn)(CUdeviceptr, size_t);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*gran_fn)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
typedef CUresult (*dev_get_fn)(CUdevice *, int);
typedef CUresult (*attr_fn)(int *, CUdevice_attribute, CUdevice);

static struct {
    int state; // 0 not looked up, 1 found, -1 missing
    reserve_fn reserve;
    addr_free_fn addr_free;
    create_fn create;
    release_fn release;
    map_fn map;
    unmap_fn unmap;
    access_fn access;
    gran_fn gran;
    dev_get_fn dev_get;
    attr_fn attr;
} drv;

static void *entry(const char *name) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess)
        return cudaGetLastError(), NULL;
    return fn;
}
static bool drv_ok(void) {
    if (!drv.state) {
        drv.reserve = (reserve_fn)entry("cuMemAddressReserve");
        drv.addr_free = (addr_free_fn)entry("cuMemAddressFree");
        drv.create = (create_fn)entry("cuMemCreate");
        drv.release = (release_fn)entry("cuMemRelease");
        drv.map = (map_fn)entry("cuMemMap");
        drv.unmap = (unmap_fn)entry("cuMemUnmap");
        drv.access = (access_fn)entry("cuMemSetAccess");
        drv.gran = (gran_fn)entry("cuMemGetAllocationGranularity");
        drv.dev_get = (dev_get_fn)entry("cuDeviceGet");
        drv.attr = (attr_fn)entry("cuDeviceGetAttribute");
        drv.state = drv.reserve && drv.addr_free && drv.create && drv.release && drv.map && drv.unmap && drv.access && drv.gran &&
                            drv.dev_get && drv.attr ? 1 : -1;
    }
    return drv.state > 0;
}

static CUmemAllocationProp prop_of(int dev) {
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
}

// maps [base + from, base + to) with one new physical allocation; false (nothing left mapped) on failure
static bool map_more(cb_cuda_vmm *v, size_t from, size_t to) {
    if (v->nh >= CB_CUDA_VMM_PIECES) return false;
    CUmemAllocationProp p = prop_of(v->dev);
    CUmemGenericAllocationHandle h;
    if (drv.create(&h, to - from, &p, 0) != CUDA_SUCCESS) return false;
    if (drv.map(v->base + from, to - from, 0, h, 0) != CUDA_SUCCESS) {
        drv.release(h);
        return false;
    }
    CUmemAccessDesc a;
    memset(&a, 0, sizeof a);
    a.location = p.location;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (drv.access(v->base + from, to - from, &a, 1) != CUDA_SUCCESS) {
        drv.unmap(v->base + from, to - from);
        drv.release(h);
        return false;
    }
    v->h[v->nh] = (unsigned long long)h, v->hbytes[v->nh++] = to - from;
    v->mapped = to;
    return true;
}

static size_t round_up(size_t x, size_t g) { return (x + g - 1) / g * g; }

void *cb_cuda_alloc_growable(cb_exec *e, size_t bytes, size_t reserve) {
    cb_cuda_state *s = e->state;
    cb_cuda_vmm *v = &s->vmm;
    int dev = 0, supported = 0;
    CUdevice cu = 0;
    size_t g = 0;
    CUmemAllocationProp p = prop_of(0);
    if (v->base || !drv_ok() || cudaGetDevice(&dev) != cudaSuccess || drv.dev_get(&cu, dev) != CUDA_SUCCESS ||
        drv.attr(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cu) != CUDA_SUCCESS || !supported ||
        (p = prop_of(dev), drv.gran(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) != CUDA_SUCCESS || !g)
        return cudaGetLastError(), cb_cuda_alloc(e, bytes);
    size_t want = round_up(bytes ? bytes : 1, g), span = round_up(reserve > bytes ? reserve : bytes, g);
    CUdeviceptr base = 0;
    if (drv.reserve(&base, span, 0, 0, 0) != CUDA_SUCCESS) return cb_cuda_alloc(e, bytes);
    *v = (cb_cuda_vmm){.base = base, .reserved = span, .gran = g, .dev = dev};
    if (!map_more(v, 0, want)) {
        drv.addr_free(base, span);
        memset(v, 0, sizeof *v);
        s->alloc_err = (int)cudaErrorMemoryAllocation;
        return NULL;
    }
    return (void *)(uintptr_t)base;
}

bool cb_cuda_grow(cb_exec *e, void *ptr, size_t bytes) {
    cb_cuda_vmm *v = &((cb_cuda_state *)e->state)->vmm;
    if (!v->base || (uintptr_t)ptr != (uintptr_t)v->base) return false; // (an ordinary allocation)
    size_t to = round_up(bytes, v->gran);
    if (to <= v->mapped) return true;
    if (to > v->reserved) return false;
    if (!map_more(v, v->mapped, to)) {
        ((cb_cuda_state *)e->state)->alloc_err = (int)cudaErrorMemoryAllocation;
        return false;
    }
    return true;
}

bool cb_cuda_vmm_release(cb_exec *e, void *ptr) {
    cb_cuda_vmm *v = e->state ? &((cb_cuda_state *)e->state)->vmm : NULL;
    if (!v || !v->base || (uintptr_t)ptr != (uintptr_t)v->base) return false;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != v->dev) cudaSetDevice(v->dev); // (its device's queue, whichever is current)
    cudaDeviceSynchronize(); // (unmapping memory a queued kernel still reads)
    if (cur >= 0 && cur != v->dev) cudaSetDevice(cur);
    size_t at = 0;
    for (int k = 0; k < v->nh; k++) {
        drv.unmap(v->base + at, v->hbytes[k]);
        drv.release((CUmemGenericAllocationHandle)v->h[k]);
        at += v->hbytes[k];
    }
    drv.addr_free(v->base, v->reserved);
    memset(v, 0, sizeof *v);
    return true;
}
