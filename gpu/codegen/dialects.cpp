// The dialect tables: everything that differs between GLSL, OpenCL C, CUDA C
// and HIP. The kernel ABI they spell is documented in emit.h. OpenCL C, CUDA
// and HIP extend one C base (cStyle) and override what they spell otherwise;
// GLSL is a base of its own.
#include <stdexcept>

#include "gpu/codegen/emit.h"

namespace tapelab {

const std::string& Dialect::function(Precision precision, std::string_view identifier, bool approx) const {
  if (approx) {
    const auto& fast = spelling(precision).approxFunctions;
    if (const auto it = fast.find(identifier); it != fast.end()) return it->second;
  }
  const auto& functions = spelling(precision).functions;
  if (const auto it = functions.find(identifier); it != functions.end()) return it->second;
  throw std::invalid_argument("the " + name + " dialect has no " + toString(precision) + " spelling of `" +
                              std::string(identifier) + "` (a function in tape/ops.def's rules)");
}

namespace {

// tape/ops.def's functions under their standard names, and fma (one rounding: the draws' Horner
// steps, draws.cpp); sel is the helper tl_sel (c ? x : y) that every kernel's prelude defines.
// A function, not a global: a dialect may be built during another file's static initialisation.
std::map<std::string, std::string, std::less<>> standardFunctions() {
  return {{"exp", "exp"},   {"log", "log"}, {"sqrt", "sqrt"},  {"pow", "pow"},
          {"tanh", "tanh"}, {"fma", "fma"}, {"sel", "tl_sel"}};
}

// The ABI's scalar parameters, in order, for the C dialects.
const char* kCParams = "$U seedLo, $U seedHi, $U pathLo, $U pathHi, $U count, $U zero, $U invocations";

// The C dialects' kernel frame: `launch` comes before the entry's name
// (qualifiers, attributes, return type), `addressSpace` before each buffer,
// `restrictKeyword` after its pointer, `localMemory` before the reduction array.
std::string cKernelBegin(const std::string& launch, const std::string& addressSpace,
                         const std::string& restrictKeyword, const std::string& localMemory) {
  auto buffer = [&](const std::string& type, const std::string& name) {
    return addressSpace + type + "* " + restrictKeyword + " " + name;
  };
  return launch + "$ENTRY(" + buffer("const $T", "inputs") + ", " + buffer("$T", "partials") + ", " +
         buffer("$T", "scratch") + ",\n    " + kCParams + ") {\n  " + localMemory + "$T tl_red[$RED];\n";
}

Dialect glsl() {
  Dialect d;
  d.name = "glsl";
  d.engine = "vulkan";
  d.hasFp64 = false;
  d.prologue = "#version 450\n";
  d.fp32 = {.scalar = "float", .literalSuffix = "", .floatToBits = "floatBitsToUint",
            .bitsToFloat = "uintBitsToFloat", .bitsType = "uint", .functions = standardFunctions(),
            .approxFunctions = {}, .approxHelpers = "", .vector2 = "vec2", .makeVector2 = "vec2"};
  d.fp64 = {.scalar = "double", .literalSuffix = "lf", .floatToBits = "unpackDouble2x32",
            .bitsToFloat = "packDouble2x32", .bitsType = "uvec2", .functions = standardFunctions(),
            .approxFunctions = {}, .approxHelpers = "", .vector2 = "dvec2", .makeVector2 = "dvec2"};
  d.fp64.functions.erase("exp");  // GLSL.std.450's Exp, Log, Pow and Tanh take 16- and 32-bit floats only
  d.fp64.functions.erase("log");
  d.fp64.functions.erase("pow");
  d.fp64.functions.erase("tanh");
  d.uintType = "uint";
  d.uint4Type = "uvec4";
  d.makeUint4 = "uvec4";
  d.cCasts = false;
  d.mulHi = "tl_mulhi";
  d.helpers = "uint tl_mulhi(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); return hi; }\n";
  d.precise = "precise ";
  d.kernelBegin =
      "layout(local_size_x = $WG) in;\n"
      "layout(push_constant) uniform PushConstants {\n"
      "  uint seedLo; uint seedHi; uint pathLo; uint pathHi; uint count; uint zero; uint invocations;\n"
      "} pc;\n"
      "layout(std430, set = 0, binding = 0) readonly buffer Inputs { $T inputs[]; };\n"
      "layout(std430, set = 0, binding = 1) writeonly buffer Partials { $T partials[]; };\n"
      "layout(std430, set = 0, binding = 2) buffer Scratch { $T scratch[]; };\n"
      "shared $T tl_red[$RED];\n"
      "void main() {\n";
  d.kernelEnd = "}\n";
  d.entry = "main";
  d.paramPrefix = "pc.";
  d.localId = "gl_LocalInvocationID.x";
  d.groupId = "gl_WorkGroupID.x";
  d.barrier = "barrier();";
  d.dontUnrollAttribute = "[[dont_unroll]] ";
  d.dontUnrollPrologue = "#extension GL_EXT_control_flow_attributes : require\n";
  return d;
}

// What the C dialects share: C casts and literals, standard math names in both
// precisions, kernel arguments for parameters, contraction off globally (no
// `precise`). C has no bit casts: each C dialect sets its own, and its mul-hi,
// frame and indices.
Dialect cStyle() {
  Dialect d;
  d.fp32.scalar = "float";
  d.fp32.literalSuffix = "f";
  d.fp32.functions = standardFunctions();
  d.fp64.scalar = "double";
  d.fp64.literalSuffix = "";
  d.fp64.functions = standardFunctions();
  d.uintType = "unsigned int";
  d.cCasts = true;
  d.precise = "";
  d.dontUnrollPragma = "#pragma unroll 1";
  d.unrollPragma = "#pragma unroll ";
  d.kernelEnd = "}\n";
  d.entry = "tapelab_kernel";
  d.paramPrefix = "";
  return d;
}

Dialect openCL() {
  Dialect d = cStyle();
  d.name = "opencl";
  d.engine = "opencl";
  d.prologue = "#pragma OPENCL FP_CONTRACT OFF\n";
  d.fp64Prologue = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  d.fp32.floatToBits = "as_uint";
  d.fp32.bitsToFloat = "as_float";
  d.fp32.bitsType = "uint";
  d.fp64.floatToBits = "as_ulong";
  d.fp64.bitsToFloat = "as_double";
  d.fp64.bitsType = "ulong";
  d.uintType = "uint";
  d.uint4Type = "uint4";
  d.makeUint4 = "(uint4)";
  d.mulHi = "mul_hi";
  d.fp32.vector2 = "float2";
  d.fp32.makeVector2 = "(float2)";
  d.fp64.vector2 = "double2";
  d.fp64.makeVector2 = "(double2)";
  d.helperQualifier = "static inline ";
  // Clang's (and so PoCL's) GNU attribute; NVIDIA's OpenCL compiler, NVVM-based, reads it too (timed on the
  // H200 as config outline_draws).
  d.outlineQualifier = "static __attribute__((noinline)) ";
  d.kernelBegin = cKernelBegin("__kernel __attribute__((reqd_work_group_size($WG, 1, 1)))\nvoid ", "__global ",
                               "restrict", "__local ");
  d.localId = "(uint)get_local_id(0)";
  d.groupId = "(uint)get_group_id(0)";
  d.barrier = "barrier(CLK_LOCAL_MEM_FENCE);";
  d.prefetch = "prefetch(&$X, 1);";  // OpenCL C 1.2's built-in: the cache the implementation chooses
  // Not OpenCL 2.0's opencl_unroll_hint: kernels build as OpenCL C 1.2 (cStyle's pragma: emit.h).
  // OpenCL C's native_* functions: implementation-defined accuracy, on NVIDIA the same special-function
  // unit instructions as CUDA's __expf, __logf and sqrt.approx (OpenCL C 3.0, 6.15.2).
  d.fp32.approxFunctions = {{"exp", "native_exp"}, {"log", "native_log"}, {"sqrt", "native_sqrt"}};
  return d;
}

Dialect cuda() {
  Dialect d = cStyle();
  d.name = "cuda";
  d.engine = "cuda";
  d.prologue = "// CUDA C++ for NVRTC: compile with --fmad=false, without --use_fast_math.\n";
  d.fp32.floatToBits = "__float_as_uint";
  d.fp32.bitsToFloat = "__uint_as_float";
  d.fp32.bitsType = "unsigned int";
  d.fp64.floatToBits = "__double_as_longlong";
  d.fp64.bitsToFloat = "__longlong_as_double";
  d.fp64.bitsType = "long long";
  d.fp32.functions["exp"] = "expf";  // fp32 calls C's float functions
  d.fp32.functions["log"] = "logf";
  d.fp32.functions["sqrt"] = "sqrtf";
  d.fp32.functions["pow"] = "powf";
  d.fp32.functions["tanh"] = "tanhf";
  d.fp32.functions["fma"] = "fmaf";
  // The special-function unit's approximations (CUDA C Programming Guide, intrinsic functions); CUDA
  // has no intrinsic for an approximate square root, so PTX's sqrt.approx.f32 (what --prec-sqrt=false
  // gives) is written inline.
  d.fp32.approxFunctions = {{"exp", "__expf"}, {"log", "__logf"}, {"sqrt", "tl_sqrt_approx"}};
  d.fp32.approxHelpers =
      "static __device__ __forceinline__ float tl_sqrt_approx(float x) { float r; "
      "asm(\"sqrt.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n";
  d.uint4Type = "uint4";  // CUDA's (and HIP's) vector type, built by a function
  d.makeUint4 = "make_uint4";
  d.mulHi = "__umulhi";
  d.helperQualifier = "static __device__ __forceinline__ ";
  d.outlineQualifier = "static __device__ __noinline__ ";
  d.blockShared = "__shared__ ";
  d.fp32.vector2 = "float2";
  d.fp32.makeVector2 = "make_float2";
  d.fp64.vector2 = "double2";
  d.fp64.makeVector2 = "make_double2";
  d.kernelBegin = cKernelBegin("extern \"C\" __global__ void __launch_bounds__($WG$MINBLOCKS)\n", "", "__restrict__",
                               d.blockShared);
  d.localId = "threadIdx.x";
  d.groupId = "blockIdx.x";
  d.barrier = "__syncthreads();";
  d.prefetch = "asm volatile(\"prefetch.L2 [%0];\" :: \"l\"(&$X));";
  return d;
}

Dialect hip() {
  Dialect d = cuda();  // HIP spells kernels as CUDA does; only its name and note differ
  d.name = "hip";
  d.engine = "hip";
  d.prologue = "// HIP for hipRTC: compile with -ffp-contract=off, without -ffast-math.\n";
  d.fp32.approxFunctions.erase("sqrt");  // no PTX here: HIP's approximate math keeps sqrtf
  d.fp32.approxHelpers.clear();
  d.prefetch.clear();  // PTX; hipRTC's __builtin_prefetch not tried (no AMD device here)
  return d;
}

}  // namespace

const Dialect& glslDialect() {
  static const Dialect d = glsl();
  return d;
}
const Dialect& openclDialect() {
  static const Dialect d = openCL();
  return d;
}
const Dialect& cudaDialect() {
  static const Dialect d = cuda();
  return d;
}
const Dialect& hipDialect() {
  static const Dialect d = hip();
  return d;
}

const Dialect& dialectByName(const std::string& name) {
  for (const Dialect* d : {&glslDialect(), &openclDialect(), &cudaDialect(), &hipDialect()})
    if (d->name == name) return *d;
  throw std::invalid_argument("unknown dialect '" + name + "' (known: glsl, opencl, cuda, hip)");
}

}  // namespace tapelab
