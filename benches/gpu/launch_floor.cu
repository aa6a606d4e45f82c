// The host's cost of one kernel launch on this machine, without any library around it: the
// floor under `small_add_f32` (a 1000-element addition evaluated 10,000 times, see
// benches/peers.rs). Times, per launch, back to back on one stream and then synchronised once:
//   runtime        the runtime API's triple-chevron launch of a 1000-element addition
//   driver         cuLaunchKernel of the same kernel, its parameters as an array of pointers
//   driver_extra   the same with the parameters packed in one buffer (CU_LAUNCH_PARAM_*)
//   driver_legacy  cuLaunchKernel on the legacy default stream
//   driver_ctx     cuCtxGetCurrent, then cuLaunchKernel (a library that checks its context)
//   graph          cuGraphLaunch of a graph holding that one launch
//   graph_update   cuGraphExecKernelNodeSetParams (the output alternating between two
//                  buffers), then cuGraphLaunch: one launch replayed with new arguments
//   graph10        cuGraphLaunch of a graph of ten such launches, per launch held
// Build and run on the GPU machine (it has nvcc):
//   nvcc -O2 -arch=sm_90 -o /tmp/launch_floor benches/gpu/launch_floor.cu -lcuda && /tmp/launch_floor
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" __global__ void add(const float* a, const float* b, float* c, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

#define CHECK(x)                                                                   \
  do {                                                                             \
    auto e = (x);                                                                  \
    if (e != 0) {                                                                  \
      fprintf(stderr, "%s failed: %d at line %d\n", #x, (int)e, __LINE__);         \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

template <class F>
double us_per_call(F f, cudaStream_t s, int reps) {
  for (int i = 0; i < 100; i++) f();
  CHECK(cudaStreamSynchronize(s));
  auto t = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; i++) f();
  CHECK(cudaStreamSynchronize(s));
  auto d = std::chrono::steady_clock::now() - t;
  return std::chrono::duration<double, std::micro>(d).count() / reps;
}

int main() {
  const long long n = 1000;
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, n * 4));
  CHECK(cudaMalloc(&b, n * 4));
  CHECK(cudaMalloc(&c, n * 4));
  CHECK(cudaMemset(a, 0, n * 4));
  CHECK(cudaMemset(b, 0, n * 4));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int reps = 20000;
  double rt = us_per_call([&] { add<<<4, 256, 0, s>>>(a, b, c, n); }, s, reps);
  CHECK(cudaGetLastError());

  CUfunction fn;
  CHECK(cudaGetFuncBySymbol((cudaFunction_t*)&fn, (const void*)add));
  long long nn = n;
  void* params[] = {&a, &b, &c, &nn};
  double drv = us_per_call(
      [&] { CHECK(cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, (CUstream)s, params, nullptr)); }, s,
      reps);

  struct {
    float *a, *b, *c;
    long long n;
  } packed = {a, b, c, nn};
  size_t packed_size = sizeof(packed);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &packed_size, CU_LAUNCH_PARAM_END};
  double drv_extra = us_per_call(
      [&] { CHECK(cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, (CUstream)s, nullptr, extra)); }, s,
      reps);
  double drv_legacy = us_per_call(
      [&] { CHECK(cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr)); }, 0,
      reps);
  double drv_ctx = us_per_call(
      [&] {
        CUcontext cur;
        CHECK(cuCtxGetCurrent(&cur));
        CHECK(cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, (CUstream)s, params, nullptr));
      },
      s, reps);

  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  add<<<4, 256, 0, s>>>(a, b, c, n);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  double gr = us_per_call([&] { CHECK(cudaGraphLaunch(ge, s)); }, s, reps);

  // the one node's parameters replaced before each launch
  size_t count = 1;
  CUgraphNode node;
  CHECK(cuGraphGetNodes((CUgraph)g, &node, &count));
  float* c2;
  CHECK(cudaMalloc(&c2, n * 4));
  float* outs[2] = {c, c2};
  int flip = 0;
  CUDA_KERNEL_NODE_PARAMS kp = {};
  CHECK(cuGraphKernelNodeGetParams(node, &kp));
  double gr_up = us_per_call(
      [&] {
        float* o = outs[flip ^= 1];
        void* p2[] = {&a, &b, &o, &nn};
        kp.kernelParams = p2;
        CHECK(cuGraphExecKernelNodeSetParams((CUgraphExec)ge, node, &kp));
        CHECK(cuGraphLaunch((CUgraphExec)ge, (CUstream)s));
      },
      s, reps);

  cudaGraph_t g10;
  cudaGraphExec_t ge10;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < 10; k++) add<<<4, 256, 0, s>>>(a, b, c, n);
  CHECK(cudaStreamEndCapture(s, &g10));
  CHECK(cudaGraphInstantiate(&ge10, g10, 0));
  double gr10 = us_per_call([&] { CHECK(cudaGraphLaunch(ge10, s)); }, s, reps / 10) / 10;

  printf(
      "launch_floor runtime_us=%.3f driver_us=%.3f driver_extra_us=%.3f driver_legacy_us=%.3f "
      "driver_ctx_us=%.3f graph_us=%.3f graph_update_us=%.3f graph10_per_launch_us=%.3f\n",
      rt, drv, drv_extra, drv_legacy, drv_ctx, gr, gr_up, gr10);
  return 0;
}
