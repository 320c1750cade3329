/* The GPU check of DR_HOOK_OPT=gpu (issue 25): kernels launched from three
 * Dr.Hook regions through the CUDA driver API only (libcuda.so.1, opened
 * with dlopen; a hand-written PTX kernel loaded with cuModuleLoadData: no
 * nvcc, no NVRTC, no CUDA headers). Each region's GPU time is also
 * measured by CUDA events around its kernels; the program prints
 *   REGION <name> events_ms=<ms> kernels=<n>
 * for check.sh to compare with the -gpu profile.
 *
 * The kernel spins for a given number of GPU clock cycles (each kernel
 * lasts milliseconds, so the gaps between kernels inside the event pair are
 * negligible). Build: gcc -O1 -I<drhook include> cuda_regions.c
 * libdrhook.a -ldl -lpthread -lm */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drhook.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuCtxCreate)(CUcontext *, unsigned, CUdevice);
static CUresult (*cuCtxDestroy)(CUcontext);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuMemFree)(CUdeviceptr);
static CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void **, void **);
static CUresult (*cuEventCreate)(CUevent *, unsigned);
static CUresult (*cuEventRecord)(CUevent, CUstream);
static CUresult (*cuEventSynchronize)(CUevent);
static CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);

#define CHECK(call)                                                   \
  do {                                                                \
    CUresult r_ = (call);                                             \
    if (r_ != 0) {                                                    \
      fprintf(stderr, "%s failed: CUDA error %d\n", #call, r_);       \
      exit(2);                                                        \
    }                                                                 \
  } while (0)

static void *sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (!p) {
    fprintf(stderr, "libcuda.so.1 has no %s\n", name);
    exit(2);
  }
  return p;
}

static const char *PTX =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry spin(.param .u64 out, .param .u64 cycles)\n"
    "{\n"
    "  .reg .u64 %rd<8>;\n"
    "  .reg .pred %p<2>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [cycles];\n"
    "  mov.u64 %rd3, %clock64;\n"
    "LOOP:\n"
    "  mov.u64 %rd4, %clock64;\n"
    "  sub.u64 %rd5, %rd4, %rd3;\n"
    "  setp.lt.u64 %p1, %rd5, %rd2;\n"
    "  @%p1 bra LOOP;\n"
    "  cvta.to.global.u64 %rd6, %rd1;\n"
    "  st.global.u64 [%rd6], %rd5;\n"
    "  ret;\n"
    "}\n";

static CUfunction spin;
static CUdeviceptr out;
static uint64_t cycles_per_ms;

static void launch(double ms) {
  uint64_t cycles = (uint64_t)(ms * (double)cycles_per_ms);
  void *args[] = {&out, &cycles};
  CHECK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
}

/* Launches `n` kernels of `ms` each between two events; prints the time. */
static void timed(const char *region, int n, double ms) {
  CUevent a, b;
  float got = 0;
  int i;
  CHECK(cuEventCreate(&a, 0));
  CHECK(cuEventCreate(&b, 0));
  CHECK(cuEventRecord(a, NULL));
  for (i = 0; i < n; i++) launch(ms);
  CHECK(cuEventRecord(b, NULL));
  CHECK(cuEventSynchronize(b));
  CHECK(cuEventElapsedTime(&got, a, b));
  printf("REGION %s events_ms=%.3f kernels=%d\n", region, got, n);
}

static void region_a(void) {
  DRHOOK_START(GPU_A);
  timed("GPU_A", 4, 15.0);
  DRHOOK_END();
}

static void region_b(void) {
  size_t bytes = 64u << 20;
  char *host = malloc(bytes);
  CUdeviceptr d;
  DRHOOK_START(GPU_B);
  memset(host, 1, bytes);
  CHECK(cuMemAlloc(&d, bytes));
  CHECK(cuMemcpyHtoD(d, host, bytes));
  timed("GPU_B", 2, 40.0);
  CHECK(cuMemcpyDtoH(host, d, bytes));
  CHECK(cuMemFree(d));
  DRHOOK_END();
  free(host);
}

static void region_c(void) {
  DRHOOK_START(GPU_C);
  timed("GPU_C", 10, 3.0);
  DRHOOK_END();
}

int main(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  int khz = 0;
  if (!h) {
    fprintf(stderr, "libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  cuInit = sym(h, "cuInit");
  cuDeviceGet = sym(h, "cuDeviceGet");
  cuCtxCreate = sym(h, "cuCtxCreate_v2");
  cuCtxDestroy = sym(h, "cuCtxDestroy_v2");
  cuCtxSynchronize = sym(h, "cuCtxSynchronize");
  cuModuleLoadData = sym(h, "cuModuleLoadData");
  cuModuleGetFunction = sym(h, "cuModuleGetFunction");
  cuMemAlloc = sym(h, "cuMemAlloc_v2");
  cuMemFree = sym(h, "cuMemFree_v2");
  cuMemcpyHtoD = sym(h, "cuMemcpyHtoD_v2");
  cuMemcpyDtoH = sym(h, "cuMemcpyDtoH_v2");
  cuLaunchKernel = sym(h, "cuLaunchKernel");
  cuEventCreate = sym(h, "cuEventCreate");
  cuEventRecord = sym(h, "cuEventRecord");
  cuEventSynchronize = sym(h, "cuEventSynchronize");
  cuEventElapsedTime = sym(h, "cuEventElapsedTime");
  cuDeviceGetAttribute = sym(h, "cuDeviceGetAttribute");
  DRHOOK_START(main);
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuCtxCreate(&ctx, 0, dev));
  CHECK(cuModuleLoadData(&mod, PTX));
  CHECK(cuModuleGetFunction(&spin, mod, "spin"));
  CHECK(cuMemAlloc(&out, 8));
  /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13 (kHz). */
  CHECK(cuDeviceGetAttribute(&khz, 13, dev));
  cycles_per_ms = (uint64_t)khz;
  launch(1.0); /* warm-up, outside the checked regions' events */
  CHECK(cuCtxSynchronize());
  region_a();
  region_b();
  region_c();
  CHECK(cuCtxSynchronize());
  CHECK(cuMemFree(out));
  DRHOOK_END();
  /* Destroying the context delivers CUPTI's last records. */
  CHECK(cuCtxDestroy(ctx));
  return 0;
}
