// The workgroup-rows pass: the per-lane arrays that loops index by a variable, the most used first, moved from
// local memory (the compiler's stack, read through L1TEX) to workgroup memory, a column a lane.
//
// A register kernel's market loop keeps each market's adjoint rows and bookmarks in per-lane arrays indexed by
// the market (`ds3[tl_m] += t`, `tl_dbm[row + tl_m]`): an index the compiler cannot resolve, so the array lives
// in local memory and every first read in a trip waits on the long scoreboard (on the H100 the 7-market Asian's
// register kernel waited on L1TEX in 52.8% of its samples that did not issue, 57% of those at such reads,
// 2026-12-06e call 3). Workgroup memory is read through the shared-memory pipe, with its own short latency and no
// L1 tags shared with the stored draws' global loads. Array A of n elements becomes `A[n * workgroup]`, element
// i of lane l at `(i) * workgroup + l`: consecutive lanes in consecutive banks, no lane reads another's column,
// so no barrier. The same elements hold the same values, written and read by the same statements: the same bits.
//
// Which arrays (config workgroup_rows=N, the most elements a lane moves): every non-shared array declared once
// whose some index is not a literal (an array read only at literal indices is the compiler's registers already);
// weighed by its reads and writes, each counted the product of the trip counts of the loops around it (a loop
// `v < N` with N a literal; 1 where not), the heaviest per element first, each taken while the lane's elements
// stay within N. N bounds the workgroup memory the pass adds: N * workgroup * the scalar's bytes (the launch
// bound's blocks per multiprocessor must fit it beside the sums' tl_red: min_blocks).
//
// CUDA and HIP only (config workgroup_rows applies to them): their __shared__ may be declared in any block,
// where the arrays are declared; OpenCL C and GLSL declare workgroup memory at kernel scope only.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu/codegen/ir.h"

namespace tapelab {

struct WorkgroupRows {
  std::vector<std::pair<std::string, int>> moved;  // the arrays moved, heaviest first, with their elements a lane
  std::vector<std::string> left;                   // arrays indexed by a variable that did not fit, with why
  int elements = 0;                                // a lane's elements moved
  int bytes = 0;                                   // workgroup memory added: elements * workgroup * scalar bytes
};

// The static workgroup memory a CUDA or HIP kernel may declare (48 KiB; more needs dynamic memory and an opt-in).
inline constexpr int64_t kStaticWorkgroupBytes = 48 * 1024;

// Moves the arrays (above) into workgroup memory, at most maxElements a lane and, with tl_red and the shared arrays
// declared already, at most kStaticWorkgroupBytes in all; scalarBytes: 4 (fp32) or 8.
WorkgroupRows moveRowsToWorkgroup(ir::KernelIR& kernel, int maxElements, int scalarBytes);
std::string toText(const WorkgroupRows& rows);

}  // namespace tapelab
