// cpu-jit's kernel runtime: the fixed code every generated translation unit
// starts with (types, the opaque identity, exp/log, Philox, Box-Muller
// pairs, the draw cache). driver.h is the fixed code after the tape.
//
// These are real headers, compiled at build time by the target
// tapelab_cpujit_runtime_check (runtime/check.cpp, for fp32 and fp64 and each
// SIMD level), and embedded at build time as text (cmake/EmbedHeaders.cmake:
// each in-tree #include replaced by that file's text, once), which the emitter
// pastes into every kernel after `namespace tljit { using T = double; }` (or
// float): the kernel's precision is the only thing the emitted code chooses.
#pragma once
// In the order they build on each other, which is the order of the embedded text.
#include "reference/cpujit/runtime/types.h"
#include "reference/cpujit/runtime/math.h"
#include "reference/cpujit/runtime/draws.h"
