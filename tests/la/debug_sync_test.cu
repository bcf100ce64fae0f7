// LA_DEBUG_SYNC must be capture-aware: the launch check synchronizes outside graph capture
// (so a fault is reported at its kernel) and does not synchronize inside it (which would
// invalidate the capture). This file compiles the check with LA_DEBUG_SYNC on.
#define LA_DEBUG_SYNC 1
#include <la/context.hpp>
#include <la/error.hpp>

#include "test_util.hpp"

namespace la {
namespace {

__global__ void add_one(int* p) { *p += 1; }

TEST(DebugSync, LaunchCheckInsideGraphCaptureDoesNotBreakIt) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  auto buf = ctx.allocate<int>(1);
  ASSERT_EQ(cudaMemsetAsync(buf.data(), 0, sizeof(int), ctx.stream()), cudaSuccess);
  ctx.synchronize();

  add_one<<<1, 1, 0, ctx.stream()>>>(buf.data());
  EXPECT_NO_THROW(LA_CHECK_LAUNCH(ctx.stream()));  // outside capture: synchronizes

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(ctx.stream(), cudaStreamCaptureModeGlobal), cudaSuccess);
  add_one<<<1, 1, 0, ctx.stream()>>>(buf.data());
  EXPECT_NO_THROW(LA_CHECK_LAUNCH(ctx.stream()));  // inside capture: must not synchronize
  ASSERT_EQ(cudaStreamEndCapture(ctx.stream(), &graph), cudaSuccess) << "the launch check broke the capture";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, ctx.stream()), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, ctx.stream()), cudaSuccess);
  int v = 0;
  ASSERT_EQ(cudaMemcpyAsync(&v, buf.data(), sizeof v, cudaMemcpyDeviceToHost, ctx.stream()), cudaSuccess);
  ctx.synchronize();
  EXPECT_EQ(v, 3);  // once directly, twice through the graph
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

}  // namespace
}  // namespace la
