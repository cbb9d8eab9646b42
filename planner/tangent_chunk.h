// auto's tangent chunk: where nothing names config tangent_chunk, how many inputs one tangent kernel of a GPU
// engine carries, so that no kernel's source outgrows what a compiler takes in a minute or so.
//
// A tangent kernel's source grows with its terms (tape/tangent.h: a node's argument times the slots it carries,
// about 38 bytes of CUDA a term: lmm-40's 585,934 terms at every input are 22.6 MB, which NVRTC compiled for 55
// minutes to 24 GB before the build VM's OOM killer ended it, 2026-12-06d), and NVRTC's time faster than the
// source (18, 89, 169 and 210-270 s for 1.4, 2.4, 3.2 and 3.5-3.8 MB on the VM). A rolled time loop is written
// once: the terms of its later iterations are not written out (planner/loops.h; the Heston basket's 340,343 terms
// roll into a small kernel). Where the written-out terms pass kTangentChunkTerms (about 1.3 MB of CUDA), the
// kernel is split into the fewest chunks of equal inputs whose every chunk's written-out terms are within it
// (lmm-40: 27 chunks of 3 inputs, at most 33,028 terms each); where that needs more than kTangentChunksMost
// kernels (the neural SDE's 341 inputs: 171 at 2), the whole kernel stays and --max-nodes decides (a forward
// sweep a chunk: the adjoint kernel is the answer there, which --kernel auto picks). The bound was 55,000 until
// the H100's host compiled lmm-40's 17 chunks of 5 inputs (2.1-2.7 MB each), 16 at a time: none had finished
// after 125 s (runs/h100-2026-12-06f, call 1); the total compile grows with a chunk's size (NVRTC's time faster
// than its source), so the smaller chunks compile sooner, at a forward sweep more a chunk.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

constexpr int64_t kTangentChunkTerms = 35'000;
constexpr int kTangentChunksMost = 32;

struct AutoTangentChunk {
  int chunk = 0;             // inputs a kernel (0: every input in one kernel)
  int kernels = 1;           // kernels at that chunk
  int64_t wholeTerms = 0;    // the whole kernel's written-out terms
  int64_t chunkTerms = 0;    // the largest chunk's (the whole kernel's where chunk is 0)
  std::string why() const;   // "tangent_chunk=3 (auto): 27 kernels of at most 33,028 terms, the whole 585,934 ..."
};

// inputs: the kernel's differentiated input ordinals, ascending; rolls: its time loop is written once (config
// loops=rolled and a loop planner/loops.h finds: its first four iterations and last three are counted, what the
// rolled loop writes out at most); markets a dispatch, sharedInputs the inputs they share (a value only they reach
// is written once, the others once a market).
AutoTangentChunk autoTangentChunk(const Tape& tape, const std::vector<int>& inputs, bool rolls, int markets = 1,
                                  const std::vector<int>& sharedInputs = {});

}  // namespace tapelab
