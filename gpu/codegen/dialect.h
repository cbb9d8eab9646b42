// A target language as a table of spellings: GLSL, OpenCL C, CUDA C, HIP.
//
// The printer (print.h) spells the kernel IR through a Dialect; the tables live in dialects.cpp, the
// C dialects built from one C base, GLSL on its own (tinygrad's CStyleLanguage and its renderers).
// Nothing here knows a kernel kind or a configuration field.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "tape/op.h"

namespace tapelab {

// What a dialect spells differently in fp32 and fp64 kernels.
struct PrecisionSpelling {
  std::string scalar;         // "float", "double"
  std::string literalSuffix;  // "f" for a float in C, "lf" for a double in GLSL, else ""
  // Bit casts between the float and its same-width unsigned integer(s), and that
  // integer type; fp64 in GLSL goes through uvec2 (unpackDouble2x32).
  std::string floatToBits, bitsToFloat, bitsType;
  // The functions tape/ops.def's rules call, keyed by their identifier there
  // (exp, log, sqrt, sel), and fma (the draws' polynomials): a rule calling one
  // missing here fails at emit time.
  std::map<std::string, std::string, std::less<>> functions;
  // config math=approx: the hardware's approximate spellings of some of those functions (CUDA and HIP
  // fp32: __expf, __logf; CUDA sqrt.approx; OpenCL fp32: native_exp, native_log, native_sqrt); empty where
  // the dialect has none or is approximate already (GLSL's exp and log are).
  std::map<std::string, std::string, std::less<>> approxFunctions;
  std::string approxHelpers;  // helper functions those spellings call, in the prelude of such kernels only
  // Two T (a Box-Muller pair of draws), components .x .y, and what builds one from two T
  // (then "(a, b)").
  std::string vector2, makeVector2;
};

// A target language as a table of spellings (dialects.cpp builds the C
// dialects from one C base, GLSL on its own).
struct Dialect {
  std::string name;          // "glsl", "opencl", "cuda", "hip"
  std::string engine;        // the engine that runs it: "vulkan", "opencl", "cuda", "hip" (its config fields)
  bool hasFp64 = true;       // fp64 kernels (GLSL has no exp/log in double)
  std::string prologue;      // first lines: #version, extensions, pragmas
  std::string fp64Prologue;  // added after the prologue for fp64 kernels

  PrecisionSpelling fp32, fp64;
  const PrecisionSpelling& spelling(Precision precision) const {
    return precision == Precision::F32 ? fp32 : fp64;
  }
  // The name of ops.def's function `identifier` in `precision` (`approx`: its approxFunctions
  // spelling where it has one, config math=approx); throws std::invalid_argument naming both
  // when the dialect has none.
  const std::string& function(Precision precision, std::string_view identifier, bool approx = false) const;

  std::string uintType;         // "uint", "unsigned int"
  // Four U words (one Philox call's output), components .x .y .z .w in every
  // dialect: the type, and what builds one from four U (then "(a, b, c, d)").
  std::string uint4Type;        // "uvec4", "uint4"
  std::string makeUint4;        // "uvec4", "(uint4)", "make_uint4"
  bool cCasts = true;           // (T)(x) rather than T(x)
  std::string mulHi;            // high 32 bits of a 32x32 product: f(a, b)
  std::string precise;          // "precise " in GLSL; "" where contraction is off globally
  std::string helperQualifier;  // helper functions: "", "static inline ", "static __device__ __forceinline__ "
  std::string outlineQualifier;  // helpers kept out of line (config outline_draws): CUDA/HIP __noinline__, OpenCL
                                 // noinline; "" = none (GLSL: the Vulkan engine marks outlinedDrawHelpers() in SPIR-V)
  std::string helpers;          // dialect-only helpers (GLSL: tl_mulhi over umulExtended)
  // Declares a workgroup-shared array anywhere in the kernel's body (CUDA, HIP: "__shared__ "); "" where
  // the dialect allows that only at kernel scope (GLSL, OpenCL C): config shared_constants is off there.
  std::string blockShared;

  // The kernel's frame, with $T (scalar), $U (uint), $WG (workgroup size),
  // $RED (local reduction array length), $MINBLOCKS ("" or ", N": the launch
  // bound's minimum blocks, config min_blocks) and $ENTRY substituted. kernelBegin
  // declares the ABI's parameters and buffers, the local array `tl_red`, and
  // opens the body; kernelEnd closes it.
  std::string kernelBegin, kernelEnd;
  std::string entry;            // entry-point name ("main" in GLSL)
  std::string paramPrefix;      // before a scalar parameter's name: "pc." or ""
  std::string localId, groupId; // as U expressions
  std::string barrier;          // workgroup barrier with local-memory fence, a statement
  // Asking the compiler to keep a loop rolled: a line before the loop (C dialects: "#pragma unroll 1",
  // which OpenCL C 1.2 takes as NVIDIA's cl_nv_pragma_unroll and clang does too), or an attribute
  // before its `for` (GLSL: "[[dont_unroll]] "); and what either needs (GLSL: an extension).
  std::string dontUnrollPragma;
  std::string unrollPragma;  // a rolled loop unrolled N trips at a time: this, then N (C dialects: "#pragma unroll ")
  std::string dontUnrollAttribute;
  std::string dontUnrollPrologue;
  // A statement that fetches the cache line of the element $X (of a global buffer) into L2 ahead of its read
  // (CUDA: PTX's prefetch.L2 on its generic address; OpenCL C: prefetch()); "" where the dialect has none.
  std::string prefetch;
};

const Dialect& glslDialect();    // Vulkan GLSL 450, compiled by shaderc
const Dialect& openclDialect();  // OpenCL C 1.2
const Dialect& cudaDialect();    // CUDA C++ for NVRTC
const Dialect& hipDialect();     // HIP for hipRTC
// By name ("glsl", "opencl", "cuda", "hip"); throws std::invalid_argument.
const Dialect& dialectByName(const std::string& name);

// The helpers outline_draws keeps out of line, by name: where the dialect has no qualifier for it
// (GLSL), the runtime marks them in its compiler's output (Vulkan: SPIR-V's DontInline).
const std::vector<std::string>& outlinedDrawHelpers();

// A literal of `value` rounded to the precision, exact when parsed (used for
// constants; exposed for tests).
std::string spellLiteral(double value, Precision precision, const Dialect& dialect);

// Ops whose arguments (fencedArgs) and result (fencedResult) every kernel reads
// through the opaque identity tl_opq(x, zero); emit.cpp says why.
bool fencedArgs(Op op);
bool fencedResult(Op op);
// Spells an op table rule of `op` (tape/spell.h), telling rename(identifier,
// fenced) whether that occurrence of an argument is read through opq.
std::string spellFenced(std::string_view expr, Op op,
                        const std::function<std::string(std::string_view, bool)>& rename);

}  // namespace tapelab
