/* The Metal device: choice by the `device` option, the command queue,
 * caps, and pipelines with each kernel's specialization constants as
 * function constants, from the library compiled ahead at build time
 * (BERTH_METALLIB, where Xcode's Metal compiler was there) or else from
 * the kernel's embedded MSL, compiled on first use. */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msl_kernels.h"
#include "msl_sources.h"
#include "mtl_internal.h"
#if BERTH_METALLIB
#include "msl_metallib.h"
#endif

enum { OPT_DEVICE, OPT_COUNT };
const berth_option_decl mtl_options_decl[OPT_COUNT] = {
    [OPT_DEVICE] = {"device", BERTH_OPTION_STRING, NULL, NULL, 0, 0,
                    "the device: an index, or a piece of its name (default: the system's default device)"},
};

static NSArray<id<MTLDevice>> *all_devices(void) {
#if TARGET_OS_OSX
    return MTLCopyAllDevices();
#else
    id<MTLDevice> d = MTLCreateSystemDefaultDevice();
    return d ? @[ d ] : @[];
#endif
}

/* The device the option names (an index, or part of a name), else the default. */
static id<MTLDevice> choose(const char *want, char *why, size_t cap) {
    NSArray<id<MTLDevice>> *devs = all_devices();
    if (!want) {
        id<MTLDevice> d = MTLCreateSystemDefaultDevice();
        if (!d && devs.count) d = devs[0];
        if (!d) snprintf(why, cap, "no Metal device");
        return d;
    }
    char *end;
    long index = strtol(want, &end, 10);
    if (*end == 0) {
        if (index >= 0 && (NSUInteger)index < devs.count) return devs[(NSUInteger)index];
        snprintf(why, cap, "device %ld: there are %lu Metal devices", index, (unsigned long)devs.count);
        return nil;
    }
    for (id<MTLDevice> d in devs)
        if (strstr(d.name.UTF8String, want)) return d;
    snprintf(why, cap, "no Metal device's name contains '%s'", want);
    return nil;
}

berth_status mtl_device_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    *out = NULL;
    bk_option_value v[OPT_COUNT];
    berth_status st = bk_options_read(host, "metal", mtl_options_decl, OPT_COUNT, v, err);
    if (st) return st;
    @autoreleasepool {
        char why[200] = "";
        id<MTLDevice> dev = choose(v[OPT_DEVICE].set ? v[OPT_DEVICE].s : NULL, why, sizeof why);
        if (!dev) {
            bk_errf(err, "metal: %s", why);
            return BERTH_ERR_DEVICE;
        }
        id<MTLCommandQueue> queue = [dev newCommandQueue];
        berth_device *d = calloc(1, sizeof *d);
        void **libs = calloc(MSL_KERNEL_COUNT, sizeof *libs);
        if (!queue || !d || !libs || pthread_mutex_init(&d->lock, NULL)) {
            free(d);
            free(libs);
            bk_errf(err, "metal: %s", queue ? "out of memory opening the device" : "no command queue on the device");
            return queue ? BERTH_ERR_NOMEM : BERTH_ERR_DEVICE;
        }
        d->host = host;
        d->dev = (void *)CFBridgingRetain(dev);
        d->queue = (void *)CFBridgingRetain(queue);
        d->libs = libs;
        d->unified = dev.hasUnifiedMemory;
        d->memory_bytes = dev.recommendedMaxWorkingSetSize;
        snprintf(d->name, sizeof d->name, "%s (Metal%s)", dev.name.UTF8String, d->unified ? ", unified memory" : "");
        *out = d;
    }
    return BERTH_OK;
}

void mtl_device_close(berth_device *d) {
    if (!d) return;
    for (uint32_t i = 0; i < d->n_pipes; i++) CFBridgingRelease(d->pipes[i].state);
    free(d->pipes);
    for (uint32_t i = 0; i < MSL_KERNEL_COUNT; i++)
        if (d->libs[i]) CFBridgingRelease(d->libs[i]);
    free(d->libs);
    if (d->metallib) CFBridgingRelease(d->metallib);
    if (d->queue) CFBridgingRelease(d->queue);
    if (d->dev) CFBridgingRelease(d->dev);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

uint32_t gpu_kernel_index(const char *name) {
    for (uint32_t i = 0; i < MSL_KERNEL_COUNT; i++)
        if (!strcmp(msl_kernels[i].name, name)) return i;
    return GPU_NONE;
}

/* The library holding kernel k. */
static id<MTLLibrary> library(berth_device *d, uint32_t k, berth_error *err) {
#if BERTH_METALLIB
    if (!d->metallib) {
        dispatch_data_t data = dispatch_data_create(msl_metallib, msl_metallib_size, NULL, DISPATCH_DATA_DESTRUCTOR_DEFAULT);
        NSError *e = nil;
        id<MTLLibrary> lib = [(__bridge id<MTLDevice>)d->dev newLibraryWithData:data error:&e];
        if (!lib) {
            bk_errf(err, "metal: loading the kernel library failed: %s", e ? e.localizedDescription.UTF8String : "no reason given");
            return nil;
        }
        d->metallib = (void *)CFBridgingRetain(lib);
    }
    return (__bridge id<MTLLibrary>)d->metallib;
#endif
    if (d->libs[k]) return (__bridge id<MTLLibrary>)d->libs[k];
    const msl_source *src = NULL;
    for (size_t i = 0; i < MSL_SOURCE_COUNT && !src; i++)
        if (!strcmp(msl_sources[i].name, msl_kernels[k].name)) src = &msl_sources[i];
    if (!src) {
        bk_errf(err, "metal: kernel '%s' has no MSL in this build", msl_kernels[k].name);
        return nil;
    }
    id<MTLDevice> dev = (__bridge id<MTLDevice>)d->dev;
    MTLCompileOptions *opts = [MTLCompileOptions new];
    opts.languageVersion = MTLLanguageVersion2_1;
    /* Metal compiles with fast math by default, which may assume no NaN or
     * infinity and fold away the isnan/isinf tests that give the op
     * contract's edge values (edge.glsl). (Deprecated for mathMode on
     * macOS 15, which older SDKs lack.) */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    opts.fastMathEnabled = NO;
#pragma clang diagnostic pop
    NSError *e = nil;
    id<MTLLibrary> lib = [dev newLibraryWithSource:[NSString stringWithUTF8String:src->text] options:opts error:&e];
    if (!lib) {
        bk_errf(err, "metal: compiling kernel '%s' failed: %s", msl_kernels[k].name,
                e ? e.localizedDescription.UTF8String : "no reason given");
        return nil;
    }
    d->libs[k] = (void *)CFBridgingRetain(lib);
    return lib;
}

berth_status mtl_pipeline(berth_device *d, uint32_t kernel, uint32_t n_spec, const uint32_t *spec, void **state,
                          berth_error *err) {
    *state = NULL;
    if (kernel >= MSL_KERNEL_COUNT) {
        bk_errf(err, "metal: no kernel %u", kernel);
        return BERTH_ERR_INTERNAL;
    }
    berth_status st = BERTH_OK;
    pthread_mutex_lock(&d->lock);
    for (uint32_t i = 0; i < d->n_pipes && !*state; i++)
        if (d->pipes[i].kernel == kernel && d->pipes[i].n == n_spec && !memcmp(d->pipes[i].v, spec, sizeof *spec * n_spec))
            *state = d->pipes[i].state;
    if (*state) goto done;
    if (d->n_pipes == d->cap_pipes) {
        uint32_t cap = d->cap_pipes * 2 + 16;
        mtl_pipe *grown = realloc(d->pipes, sizeof *grown * cap);
        if (!grown) {
            bk_errf(err, "metal: out of memory for pipelines");
            st = BERTH_ERR_NOMEM;
            goto done;
        }
        d->pipes = grown;
        d->cap_pipes = cap;
    }
    @autoreleasepool {
        id<MTLLibrary> lib = library(d, kernel, err);
        if (!lib) {
            st = BERTH_ERR_DEVICE;
            goto done;
        }
        const msl_kernel *k = &msl_kernels[kernel];
        MTLFunctionConstantValues *cv = [MTLFunctionConstantValues new];
        for (uint32_t i = 0; i < n_spec; i++) [cv setConstantValue:&spec[i] type:MTLDataTypeUInt atIndex:i];
        NSError *e = nil;
        id<MTLFunction> fn = [lib newFunctionWithName:[NSString stringWithUTF8String:k->entry] constantValues:cv error:&e];
        id<MTLComputePipelineState> ps =
            fn ? [(__bridge id<MTLDevice>)d->dev newComputePipelineStateWithFunction:fn error:&e] : nil;
        if (!ps) {
            bk_errf(err, "metal: the pipeline of kernel '%s' failed: %s", k->name,
                    e ? e.localizedDescription.UTF8String : "no reason given");
            st = BERTH_ERR_DEVICE;
            goto done;
        }
        mtl_pipe *p = &d->pipes[d->n_pipes++];
        p->kernel = kernel;
        p->n = n_spec;
        memcpy(p->v, spec, sizeof *spec * n_spec);
        p->state = (void *)CFBridgingRetain(ps);
        *state = p->state;
    }
done:
    pthread_mutex_unlock(&d->lock);
    return st;
}
