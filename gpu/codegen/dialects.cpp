// The dialect tables: everything that differs between GLSL, OpenCL C, CUDA C
// and HIP. The kernel ABI they spell is documented in emit.h.
#include <stdexcept>

#include "gpu/codegen/emit.h"

namespace tapelab {
namespace {

// The ABI's scalar parameters, in order, for the C dialects.
const char* kCParams = "$U seedLo, $U seedHi, $U pathLo, $U pathHi, $U count, $U zero, $U invocations";

Dialect makeGlsl() {
  Dialect d;
  d.name = "glsl";
  d.fp64 = false;  // GLSL has no exp/log in double
  d.prologue = "#version 450\n";
  d.fp64Prologue = "";
  d.scalar[0] = "float";
  d.scalar[1] = "double";
  d.literalSuffix[0] = "";
  d.literalSuffix[1] = "lf";
  d.uintType = "uint";
  d.cCasts = false;
  d.floatToBits[0] = "floatBitsToUint";
  d.bitsToFloat[0] = "uintBitsToFloat";
  d.bitsType[0] = "uint";
  d.floatToBits[1] = "unpackDouble2x32";
  d.bitsToFloat[1] = "packDouble2x32";
  d.bitsType[1] = "uvec2";
  d.mulHi = "tl_mulhi";
  d.helpers = "uint tl_mulhi(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); return hi; }\n";
  d.math[0][0] = d.math[1][0] = "exp";
  d.math[0][1] = d.math[1][1] = "log";
  d.math[0][2] = d.math[1][2] = "sqrt";
  d.precise = "precise ";
  d.funcQualifier = "";
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
  d.param = "pc.";
  d.localId = "gl_LocalInvocationID.x";
  d.groupId = "gl_WorkGroupID.x";
  d.barrier = "barrier();";
  d.dontUnroll = "[[dont_unroll]] ";
  d.dontUnrollPrologue = "#extension GL_EXT_control_flow_attributes : require\n";
  return d;
}

Dialect makeOpenCL() {
  Dialect d;
  d.name = "opencl";
  d.prologue = "#pragma OPENCL FP_CONTRACT OFF\n";
  d.fp64Prologue = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  d.scalar[0] = "float";
  d.scalar[1] = "double";
  d.literalSuffix[0] = "f";
  d.literalSuffix[1] = "";
  d.uintType = "uint";
  d.cCasts = true;
  d.floatToBits[0] = "as_uint";
  d.bitsToFloat[0] = "as_float";
  d.bitsType[0] = "uint";
  d.floatToBits[1] = "as_ulong";
  d.bitsToFloat[1] = "as_double";
  d.bitsType[1] = "ulong";
  d.mulHi = "mul_hi";
  d.math[0][0] = d.math[1][0] = "exp";
  d.math[0][1] = d.math[1][1] = "log";
  d.math[0][2] = d.math[1][2] = "sqrt";
  d.precise = "";
  d.funcQualifier = "static inline ";
  d.kernelBegin = std::string(
                      "__kernel __attribute__((reqd_work_group_size($WG, 1, 1)))\n"
                      "void $ENTRY(__global const $T* restrict inputs, __global $T* restrict partials, "
                      "__global $T* restrict scratch,\n    ") +
                  kCParams + ") {\n  __local $T tl_red[$RED];\n";
  d.kernelEnd = "}\n";
  d.entry = "tapelab_kernel";
  d.param = "";
  d.localId = "(uint)get_local_id(0)";
  d.groupId = "(uint)get_group_id(0)";
  d.barrier = "barrier(CLK_LOCAL_MEM_FENCE);";
  d.dontUnroll = "__attribute__((opencl_unroll_hint(1))) ";
  return d;
}

Dialect makeCuda() {
  Dialect d;
  d.name = "cuda";
  d.prologue = "// CUDA C++ for NVRTC: compile with --fmad=false, without --use_fast_math.\n";
  d.fp64Prologue = "";
  d.scalar[0] = "float";
  d.scalar[1] = "double";
  d.literalSuffix[0] = "f";
  d.literalSuffix[1] = "";
  d.uintType = "unsigned int";
  d.cCasts = true;
  d.floatToBits[0] = "__float_as_uint";
  d.bitsToFloat[0] = "__uint_as_float";
  d.bitsType[0] = "unsigned int";
  d.floatToBits[1] = "__double_as_longlong";
  d.bitsToFloat[1] = "__longlong_as_double";
  d.bitsType[1] = "long long";
  d.mulHi = "__umulhi";
  d.math[0][0] = "expf";
  d.math[0][1] = "logf";
  d.math[0][2] = "sqrtf";
  d.math[1][0] = "exp";
  d.math[1][1] = "log";
  d.math[1][2] = "sqrt";
  d.precise = "";
  d.funcQualifier = "static __device__ __forceinline__ ";
  d.kernelBegin = std::string(
                      "extern \"C\" __global__ void __launch_bounds__($WG)\n"
                      "$ENTRY(const $T* __restrict__ inputs, $T* __restrict__ partials, $T* __restrict__ scratch,\n    ") +
                  kCParams + ") {\n  __shared__ $T tl_red[$RED];\n";
  d.kernelEnd = "}\n";
  d.entry = "tapelab_kernel";
  d.param = "";
  d.localId = "threadIdx.x";
  d.groupId = "blockIdx.x";
  d.barrier = "__syncthreads();";
  d.dontUnroll = "\n#pragma unroll 1\n  ";
  return d;
}

Dialect makeHip() {
  Dialect d = makeCuda();  // HIP spells kernels as CUDA does; only its name and note differ
  d.name = "hip";
  d.prologue = "// HIP for hipRTC: compile with -ffp-contract=off, without -ffast-math.\n";
  return d;
}

}  // namespace

const Dialect& glslDialect() {
  static const Dialect d = makeGlsl();
  return d;
}
const Dialect& openclDialect() {
  static const Dialect d = makeOpenCL();
  return d;
}
const Dialect& cudaDialect() {
  static const Dialect d = makeCuda();
  return d;
}
const Dialect& hipDialect() {
  static const Dialect d = makeHip();
  return d;
}

const Dialect& dialectByName(const std::string& name) {
  if (name == "glsl") return glslDialect();
  if (name == "opencl") return openclDialect();
  if (name == "cuda") return cudaDialect();
  if (name == "hip") return hipDialect();
  throw std::invalid_argument("unknown dialect '" + name + "' (known: glsl, opencl, cuda, hip)");
}

}  // namespace tapelab
