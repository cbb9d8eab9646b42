#version 450
#extension GL_EXT_control_flow_attributes : require
// tapelab kernel: tape asian-6, 60 nodes, tangent, time loop rolled (1 trips of 4), fp32, 2 market(s), value + Greeks, dialect glsl
// config: workgroup=64,lanes=4,sums=local,market_order=sequential,markets=copies,draws=redraw,prefill_ahead=0,layout=soa,math=ieee,philox=rolled,loops=rolled,loop_trip=calls,closed_forms=off,tangent_fma=off,tangent_chunk=0,opaque=on,first_terms=set,rolled_adjoints=parity,outline_draws=off,shared_inputs=on
// inputs every market shares, read once: strike vol rate maturity
// config unused: first_terms=set: no adjoints (a tangent kernel, or no Greeks)
// config unused: math=ieee: a Vulkan shader's exp, log and division are GLSL.std.450's (math=glsl)
uint tl_mulhi(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); return hi; }
// opq: the identity on every bit pattern, opaque to the compiler (z is always 0).
float tl_opq(float x, uint z) { return uintBitsToFloat(floatBitsToUint(x) + uint(z)); }
float tl_sel(bool c, float x, float y) { return c ? x : y; }
// Philox4x32-10, its four words (tape/philox.h).
uvec4 tl_philox(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1) {
  [[dont_unroll]] for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    uint hi0 = tl_mulhi(0xD2511F53u, c0); uint lo0 = 0xD2511F53u * c0;
    uint hi1 = tl_mulhi(0xCD9E8D57u, c2); uint lo1 = 0xCD9E8D57u * c2;
    uint n0 = hi1 ^ c1 ^ k0; uint n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
  }
  return uvec4(c0, c1, c2, c3);
}
// Box-Muller: draws 2p and 2p + 1 from the pair of words (a, b) (tape/philox.h).
vec2 tl_boxMuller(uint a, uint b) {
  precise float u = fma(float(a >> 9u), 1.1920929e-07, 5.9604645e-08);
  precise float r2 = (-2.0) * log(u);
  precise float rho = sqrt(r2 > 0.0 ? r2 : 0.0);
  const uint n = b >> 30u;
  precise float f = fma(float((b >> 9u) & 2097151u), 4.7683716e-07, (-0.49999976));
  precise float th = f * 1.5707964;
  precise float t = th * th;
  precise float s = th * fma(fma(fma(fma(fma((-2.5052108e-08), t, 2.7557319e-06), t, (-0.0001984127)), t, 0.008333334), t, (-0.16666667)), t, 1.0);
  precise float c = fma(fma(fma(fma(fma(fma(2.0876756e-09, t, (-2.755732e-07)), t, 2.4801588e-05), t, (-0.0013888889)), t, 0.041666668), t, (-0.5)), t, 1.0);
  const bool odd = (n & 1u) != 0u;
  precise float x = odd ? s : c;
  precise float y = odd ? c : s;
  return vec2(rho * (n == 1u || n == 2u ? -x : x), rho * (n >= 2u ? -y : y));
}
// The words of draws 4g .. 4g+3 of path (pathHi:pathLo) under key (k0, k1): counter {g, 0, pathLo, pathHi}.
uvec4 tl_drawWords(uint g, uint pathLo, uint pathHi, uint k0, uint k1) {
  return tl_philox(g, 0u, pathLo, pathHi, k0, k1);
}
layout(local_size_x = 64) in;
layout(push_constant) uniform PushConstants {
  uint seedLo; uint seedHi; uint pathLo; uint pathHi; uint count; uint zero; uint invocations;
} pc;
layout(std430, set = 0, binding = 0) readonly buffer Inputs { float inputs[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Partials { float partials[]; };
layout(std430, set = 0, binding = 2) buffer Scratch { float scratch[]; };
shared float tl_red[3072];
void main() {
  const uint tl_lid = gl_LocalInvocationID.x;
  const uint tl_g = gl_WorkGroupID.x;
  float tl_in0_0 = inputs[0u];
  float tl_in0_1 = inputs[1u];
  float tl_in0_2 = inputs[2u];
  float tl_in0_3 = inputs[3u];
  float tl_in0_4 = inputs[4u];
  float tl_in1_0 = inputs[5u];
  // Kahan sums per market: value, adjoints, then their squares.
  // In local memory: sum i of this lane at tl_red[i * WG + lid], its compensation at [(sums + i) * WG + lid].
  tl_red[0u + tl_lid] = 0.0;
  tl_red[64u + tl_lid] = 0.0;
  tl_red[128u + tl_lid] = 0.0;
  tl_red[192u + tl_lid] = 0.0;
  tl_red[256u + tl_lid] = 0.0;
  tl_red[320u + tl_lid] = 0.0;
  tl_red[384u + tl_lid] = 0.0;
  tl_red[448u + tl_lid] = 0.0;
  tl_red[512u + tl_lid] = 0.0;
  tl_red[576u + tl_lid] = 0.0;
  tl_red[640u + tl_lid] = 0.0;
  tl_red[704u + tl_lid] = 0.0;
  tl_red[768u + tl_lid] = 0.0;
  tl_red[832u + tl_lid] = 0.0;
  tl_red[896u + tl_lid] = 0.0;
  tl_red[960u + tl_lid] = 0.0;
  tl_red[1024u + tl_lid] = 0.0;
  tl_red[1088u + tl_lid] = 0.0;
  tl_red[1152u + tl_lid] = 0.0;
  tl_red[1216u + tl_lid] = 0.0;
  tl_red[1280u + tl_lid] = 0.0;
  tl_red[1344u + tl_lid] = 0.0;
  tl_red[1408u + tl_lid] = 0.0;
  tl_red[1472u + tl_lid] = 0.0;
  tl_red[1536u + tl_lid] = 0.0;
  tl_red[1600u + tl_lid] = 0.0;
  tl_red[1664u + tl_lid] = 0.0;
  tl_red[1728u + tl_lid] = 0.0;
  tl_red[1792u + tl_lid] = 0.0;
  tl_red[1856u + tl_lid] = 0.0;
  tl_red[1920u + tl_lid] = 0.0;
  tl_red[1984u + tl_lid] = 0.0;
  tl_red[2048u + tl_lid] = 0.0;
  tl_red[2112u + tl_lid] = 0.0;
  tl_red[2176u + tl_lid] = 0.0;
  tl_red[2240u + tl_lid] = 0.0;
  tl_red[2304u + tl_lid] = 0.0;
  tl_red[2368u + tl_lid] = 0.0;
  tl_red[2432u + tl_lid] = 0.0;
  tl_red[2496u + tl_lid] = 0.0;
  tl_red[2560u + tl_lid] = 0.0;
  tl_red[2624u + tl_lid] = 0.0;
  tl_red[2688u + tl_lid] = 0.0;
  tl_red[2752u + tl_lid] = 0.0;
  tl_red[2816u + tl_lid] = 0.0;
  tl_red[2880u + tl_lid] = 0.0;
  tl_red[2944u + tl_lid] = 0.0;
  tl_red[3008u + tl_lid] = 0.0;
  for (uint tl_j = 0u; tl_j < 4u; ++tl_j) {
    uint tl_p = tl_g * 256u + tl_j * 64u + tl_lid;
    if (tl_p < pc.count) {
      uint tl_pathLo = pc.pathLo + tl_p;
      uint tl_pathHi = pc.pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      uint tl_fk0 = pc.seedLo; uint tl_fk1 = pc.seedHi;
      // forward sweep, each value followed by its tangents (tape/tangent.h)
      precise float v0_0 = tl_in0_0;
      precise float v0_1 = tl_in1_0;
      precise float t0_0_0 = 1.0;
      precise float t0_0_1 = 1.0;
      precise float v1 = tl_in0_1;
      precise float t1_1 = 1.0;
      precise float v2 = tl_in0_2;
      precise float t2_2 = 1.0;
      precise float v3 = tl_in0_3;
      precise float t3_3 = 1.0;
      precise float v4 = tl_in0_4;
      precise float t4_4 = 1.0;
      precise float v5 = v2 * v2;
      precise float t5_2 = (t2_2 * v2) + (t2_2 * v2);
      precise float v6 = tl_opq(0.5, pc.zero);
      precise float v7 = v6 * v5;
      precise float t7_2 = (t5_2 * v6);
      precise float v8 = v3 - v7;
      precise float t8_2 = (-t7_2);
      precise float t8_3 = (t3_3);
      precise float v9 = tl_opq(0.16666667, pc.zero);
      precise float v10 = v4 * v9;
      precise float t10_4 = (t4_4 * v9);
      precise float v11 = v8 * v10;
      precise float t11_2 = (t8_2 * v10);
      precise float t11_3 = (t8_3 * v10);
      precise float t11_4 = (t10_4 * v8);
      precise float v12 = tl_opq(sqrt(tl_opq(v10, pc.zero)), pc.zero);
      precise float t12_4 = (t10_4 / (v12 + v12));
      precise float v13 = v2 * v12;
      precise float t13_2 = (t2_2 * v12);
      precise float t13_4 = (t12_4 * v2);
      precise float v14 = tl_opq(0.0, pc.zero);
      // the time loop's carried values (planner/loops.h), set to what its first iteration reads
      precise float vc4_0 = v0_0;
      precise float vc4_1 = v0_1;
      precise float tc4_0_0 = t0_0_0;
      precise float tc4_2_0 = 0.0;
      precise float tc4_3_0 = 0.0;
      precise float tc4_4_0 = 0.0;
      precise float tc4_0_1 = t0_0_1;
      precise float tc4_2_1 = 0.0;
      precise float tc4_3_1 = 0.0;
      precise float tc4_4_1 = 0.0;
      precise float vc5_0 = v14;
      precise float vc5_1 = v14;
      precise float tc5_0_0 = 0.0;
      precise float tc5_2_0 = 0.0;
      precise float tc5_3_0 = 0.0;
      precise float tc5_4_0 = 0.0;
      precise float tc5_0_1 = 0.0;
      precise float tc5_2_1 = 0.0;
      precise float tc5_3_1 = 0.0;
      precise float tc5_4_1 = 0.0;
      [[dont_unroll]] for (uint tl_it = 0u; tl_it < 1u; ++tl_it) {  // the time loop: 1 trips of 4 step(s)
        const uvec4 vg0 = tl_drawWords(0u + tl_it * 1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const vec2 vg0n0 = tl_boxMuller(vg0.x, vg0.y);
        precise float v21 = vg0n0.x;
        precise float v22 = v13 * v21;
        precise float t22_2 = (t13_2 * v21);
        precise float t22_4 = (t13_4 * v21);
        precise float v23 = v11 + v22;
        precise float t23_2 = (t11_2) + (t22_2);
        precise float t23_3 = (t11_3);
        precise float t23_4 = (t11_4) + (t22_4);
        precise float v24 = tl_opq(exp(tl_opq(v23, pc.zero)), pc.zero);
        precise float t24_2 = (t23_2 * v24);
        precise float t24_3 = (t23_3 * v24);
        precise float t24_4 = (t23_4 * v24);
        precise float v25_0 = vc4_0 * v24;
        precise float v25_1 = vc4_1 * v24;
        precise float t25_0_0 = (tc4_0_0 * v24);
        precise float t25_2_0 = (tc4_2_0 * v24) + (t24_2 * vc4_0);
        precise float t25_3_0 = (tc4_3_0 * v24) + (t24_3 * vc4_0);
        precise float t25_4_0 = (tc4_4_0 * v24) + (t24_4 * vc4_0);
        precise float t25_0_1 = (tc4_0_1 * v24);
        precise float t25_2_1 = (tc4_2_1 * v24) + (t24_2 * vc4_1);
        precise float t25_3_1 = (tc4_3_1 * v24) + (t24_3 * vc4_1);
        precise float t25_4_1 = (tc4_4_1 * v24) + (t24_4 * vc4_1);
        precise float v26_0 = vc5_0 + v25_0;
        precise float v26_1 = vc5_1 + v25_1;
        precise float t26_0_0 = (tc5_0_0) + (t25_0_0);
        precise float t26_2_0 = (tc5_2_0) + (t25_2_0);
        precise float t26_3_0 = (tc5_3_0) + (t25_3_0);
        precise float t26_4_0 = (tc5_4_0) + (t25_4_0);
        precise float t26_0_1 = (tc5_0_1) + (t25_0_1);
        precise float t26_2_1 = (tc5_2_1) + (t25_2_1);
        precise float t26_3_1 = (tc5_3_1) + (t25_3_1);
        precise float t26_4_1 = (tc5_4_1) + (t25_4_1);
        precise float v27 = vg0n0.y;
        precise float v28 = v13 * v27;
        precise float t28_2 = (t13_2 * v27);
        precise float t28_4 = (t13_4 * v27);
        precise float v29 = v11 + v28;
        precise float t29_2 = (t11_2) + (t28_2);
        precise float t29_3 = (t11_3);
        precise float t29_4 = (t11_4) + (t28_4);
        precise float v30 = tl_opq(exp(tl_opq(v29, pc.zero)), pc.zero);
        precise float t30_2 = (t29_2 * v30);
        precise float t30_3 = (t29_3 * v30);
        precise float t30_4 = (t29_4 * v30);
        precise float v31_0 = v25_0 * v30;
        precise float v31_1 = v25_1 * v30;
        precise float t31_0_0 = (t25_0_0 * v30);
        precise float t31_2_0 = (t25_2_0 * v30) + (t30_2 * v25_0);
        precise float t31_3_0 = (t25_3_0 * v30) + (t30_3 * v25_0);
        precise float t31_4_0 = (t25_4_0 * v30) + (t30_4 * v25_0);
        precise float t31_0_1 = (t25_0_1 * v30);
        precise float t31_2_1 = (t25_2_1 * v30) + (t30_2 * v25_1);
        precise float t31_3_1 = (t25_3_1 * v30) + (t30_3 * v25_1);
        precise float t31_4_1 = (t25_4_1 * v30) + (t30_4 * v25_1);
        precise float v32_0 = v26_0 + v31_0;
        precise float v32_1 = v26_1 + v31_1;
        precise float t32_0_0 = (t26_0_0) + (t31_0_0);
        precise float t32_2_0 = (t26_2_0) + (t31_2_0);
        precise float t32_3_0 = (t26_3_0) + (t31_3_0);
        precise float t32_4_0 = (t26_4_0) + (t31_4_0);
        precise float t32_0_1 = (t26_0_1) + (t31_0_1);
        precise float t32_2_1 = (t26_2_1) + (t31_2_1);
        precise float t32_3_1 = (t26_3_1) + (t31_3_1);
        precise float t32_4_1 = (t26_4_1) + (t31_4_1);
        const vec2 vg0n1 = tl_boxMuller(vg0.z, vg0.w);
        precise float v33 = vg0n1.x;
        precise float v34 = v13 * v33;
        precise float t34_2 = (t13_2 * v33);
        precise float t34_4 = (t13_4 * v33);
        precise float v35 = v11 + v34;
        precise float t35_2 = (t11_2) + (t34_2);
        precise float t35_3 = (t11_3);
        precise float t35_4 = (t11_4) + (t34_4);
        precise float v36 = tl_opq(exp(tl_opq(v35, pc.zero)), pc.zero);
        precise float t36_2 = (t35_2 * v36);
        precise float t36_3 = (t35_3 * v36);
        precise float t36_4 = (t35_4 * v36);
        precise float v37_0 = v31_0 * v36;
        precise float v37_1 = v31_1 * v36;
        precise float t37_0_0 = (t31_0_0 * v36);
        precise float t37_2_0 = (t31_2_0 * v36) + (t36_2 * v31_0);
        precise float t37_3_0 = (t31_3_0 * v36) + (t36_3 * v31_0);
        precise float t37_4_0 = (t31_4_0 * v36) + (t36_4 * v31_0);
        precise float t37_0_1 = (t31_0_1 * v36);
        precise float t37_2_1 = (t31_2_1 * v36) + (t36_2 * v31_1);
        precise float t37_3_1 = (t31_3_1 * v36) + (t36_3 * v31_1);
        precise float t37_4_1 = (t31_4_1 * v36) + (t36_4 * v31_1);
        precise float v38_0 = v32_0 + v37_0;
        precise float v38_1 = v32_1 + v37_1;
        precise float t38_0_0 = (t32_0_0) + (t37_0_0);
        precise float t38_2_0 = (t32_2_0) + (t37_2_0);
        precise float t38_3_0 = (t32_3_0) + (t37_3_0);
        precise float t38_4_0 = (t32_4_0) + (t37_4_0);
        precise float t38_0_1 = (t32_0_1) + (t37_0_1);
        precise float t38_2_1 = (t32_2_1) + (t37_2_1);
        precise float t38_3_1 = (t32_3_1) + (t37_3_1);
        precise float t38_4_1 = (t32_4_1) + (t37_4_1);
        precise float v39 = vg0n1.y;
        precise float v40 = v13 * v39;
        precise float t40_2 = (t13_2 * v39);
        precise float t40_4 = (t13_4 * v39);
        precise float v41 = v11 + v40;
        precise float t41_2 = (t11_2) + (t40_2);
        precise float t41_3 = (t11_3);
        precise float t41_4 = (t11_4) + (t40_4);
        precise float v42 = tl_opq(exp(tl_opq(v41, pc.zero)), pc.zero);
        precise float t42_2 = (t41_2 * v42);
        precise float t42_3 = (t41_3 * v42);
        precise float t42_4 = (t41_4 * v42);
        precise float v43_0 = v37_0 * v42;
        precise float v43_1 = v37_1 * v42;
        precise float t43_0_0 = (t37_0_0 * v42);
        precise float t43_2_0 = (t37_2_0 * v42) + (t42_2 * v37_0);
        precise float t43_3_0 = (t37_3_0 * v42) + (t42_3 * v37_0);
        precise float t43_4_0 = (t37_4_0 * v42) + (t42_4 * v37_0);
        precise float t43_0_1 = (t37_0_1 * v42);
        precise float t43_2_1 = (t37_2_1 * v42) + (t42_2 * v37_1);
        precise float t43_3_1 = (t37_3_1 * v42) + (t42_3 * v37_1);
        precise float t43_4_1 = (t37_4_1 * v42) + (t42_4 * v37_1);
        precise float v44_0 = v38_0 + v43_0;
        precise float v44_1 = v38_1 + v43_1;
        precise float t44_0_0 = (t38_0_0) + (t43_0_0);
        precise float t44_2_0 = (t38_2_0) + (t43_2_0);
        precise float t44_3_0 = (t38_3_0) + (t43_3_0);
        precise float t44_4_0 = (t38_4_0) + (t43_4_0);
        precise float t44_0_1 = (t38_0_1) + (t43_0_1);
        precise float t44_2_1 = (t38_2_1) + (t43_2_1);
        precise float t44_3_1 = (t38_3_1) + (t43_3_1);
        precise float t44_4_1 = (t38_4_1) + (t43_4_1);
        vc4_0 = v43_0;
        tc4_0_0 = t43_0_0;
        tc4_2_0 = t43_2_0;
        tc4_3_0 = t43_3_0;
        tc4_4_0 = t43_4_0;
        vc4_1 = v43_1;
        tc4_0_1 = t43_0_1;
        tc4_2_1 = t43_2_1;
        tc4_3_1 = t43_3_1;
        tc4_4_1 = t43_4_1;
        vc5_0 = v44_0;
        tc5_0_0 = t44_0_0;
        tc5_2_0 = t44_2_0;
        tc5_3_0 = t44_3_0;
        tc5_4_0 = t44_4_0;
        vc5_1 = v44_1;
        tc5_0_1 = t44_0_1;
        tc5_2_1 = t44_2_1;
        tc5_3_1 = t44_3_1;
        tc5_4_1 = t44_4_1;
      }
      const uvec4 vg1 = tl_drawWords(1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
      const vec2 vg1n0 = tl_boxMuller(vg1.x, vg1.y);
      precise float v39 = vg1n0.x;
      precise float v40 = v13 * v39;
      precise float t40_2 = (t13_2 * v39);
      precise float t40_4 = (t13_4 * v39);
      precise float v41 = v11 + v40;
      precise float t41_2 = (t11_2) + (t40_2);
      precise float t41_3 = (t11_3);
      precise float t41_4 = (t11_4) + (t40_4);
      precise float v42 = tl_opq(exp(tl_opq(v41, pc.zero)), pc.zero);
      precise float t42_2 = (t41_2 * v42);
      precise float t42_3 = (t41_3 * v42);
      precise float t42_4 = (t41_4 * v42);
      precise float v43_0 = vc4_0 * v42;
      precise float v43_1 = vc4_1 * v42;
      precise float t43_0_0 = (tc4_0_0 * v42);
      precise float t43_2_0 = (tc4_2_0 * v42) + (t42_2 * vc4_0);
      precise float t43_3_0 = (tc4_3_0 * v42) + (t42_3 * vc4_0);
      precise float t43_4_0 = (tc4_4_0 * v42) + (t42_4 * vc4_0);
      precise float t43_0_1 = (tc4_0_1 * v42);
      precise float t43_2_1 = (tc4_2_1 * v42) + (t42_2 * vc4_1);
      precise float t43_3_1 = (tc4_3_1 * v42) + (t42_3 * vc4_1);
      precise float t43_4_1 = (tc4_4_1 * v42) + (t42_4 * vc4_1);
      precise float v44_0 = vc5_0 + v43_0;
      precise float v44_1 = vc5_1 + v43_1;
      precise float t44_0_0 = (tc5_0_0) + (t43_0_0);
      precise float t44_2_0 = (tc5_2_0) + (t43_2_0);
      precise float t44_3_0 = (tc5_3_0) + (t43_3_0);
      precise float t44_4_0 = (tc5_4_0) + (t43_4_0);
      precise float t44_0_1 = (tc5_0_1) + (t43_0_1);
      precise float t44_2_1 = (tc5_2_1) + (t43_2_1);
      precise float t44_3_1 = (tc5_3_1) + (t43_3_1);
      precise float t44_4_1 = (tc5_4_1) + (t43_4_1);
      precise float v45 = vg1n0.y;
      precise float v46 = v13 * v45;
      precise float t46_2 = (t13_2 * v45);
      precise float t46_4 = (t13_4 * v45);
      precise float v47 = v11 + v46;
      precise float t47_2 = (t11_2) + (t46_2);
      precise float t47_3 = (t11_3);
      precise float t47_4 = (t11_4) + (t46_4);
      precise float v48 = tl_opq(exp(tl_opq(v47, pc.zero)), pc.zero);
      precise float t48_2 = (t47_2 * v48);
      precise float t48_3 = (t47_3 * v48);
      precise float t48_4 = (t47_4 * v48);
      precise float v49_0 = v43_0 * v48;
      precise float v49_1 = v43_1 * v48;
      precise float t49_0_0 = (t43_0_0 * v48);
      precise float t49_2_0 = (t43_2_0 * v48) + (t48_2 * v43_0);
      precise float t49_3_0 = (t43_3_0 * v48) + (t48_3 * v43_0);
      precise float t49_4_0 = (t43_4_0 * v48) + (t48_4 * v43_0);
      precise float t49_0_1 = (t43_0_1 * v48);
      precise float t49_2_1 = (t43_2_1 * v48) + (t48_2 * v43_1);
      precise float t49_3_1 = (t43_3_1 * v48) + (t48_3 * v43_1);
      precise float t49_4_1 = (t43_4_1 * v48) + (t48_4 * v43_1);
      precise float v50_0 = v44_0 + v49_0;
      precise float v50_1 = v44_1 + v49_1;
      precise float t50_0_0 = (t44_0_0) + (t49_0_0);
      precise float t50_2_0 = (t44_2_0) + (t49_2_0);
      precise float t50_3_0 = (t44_3_0) + (t49_3_0);
      precise float t50_4_0 = (t44_4_0) + (t49_4_0);
      precise float t50_0_1 = (t44_0_1) + (t49_0_1);
      precise float t50_2_1 = (t44_2_1) + (t49_2_1);
      precise float t50_3_1 = (t44_3_1) + (t49_3_1);
      precise float t50_4_1 = (t44_4_1) + (t49_4_1);
      precise float v51 = tl_opq(6.0, pc.zero);
      precise float v52_0 = tl_opq(tl_opq(v50_0, pc.zero) / tl_opq(v51, pc.zero), pc.zero);
      precise float v52_1 = tl_opq(tl_opq(v50_1, pc.zero) / tl_opq(v51, pc.zero), pc.zero);
      precise float t52_0_0 = (t50_0_0 / tl_opq(v51, pc.zero));
      precise float t52_2_0 = (t50_2_0 / tl_opq(v51, pc.zero));
      precise float t52_3_0 = (t50_3_0 / tl_opq(v51, pc.zero));
      precise float t52_4_0 = (t50_4_0 / tl_opq(v51, pc.zero));
      precise float t52_0_1 = (t50_0_1 / tl_opq(v51, pc.zero));
      precise float t52_2_1 = (t50_2_1 / tl_opq(v51, pc.zero));
      precise float t52_3_1 = (t50_3_1 / tl_opq(v51, pc.zero));
      precise float t52_4_1 = (t50_4_1 / tl_opq(v51, pc.zero));
      precise float v53_0 = v52_0 - v1;
      precise float v53_1 = v52_1 - v1;
      precise float t53_0_0 = (t52_0_0);
      precise float t53_1_0 = (-t1_1);
      precise float t53_2_0 = (t52_2_0);
      precise float t53_3_0 = (t52_3_0);
      precise float t53_4_0 = (t52_4_0);
      precise float t53_0_1 = (t52_0_1);
      precise float t53_1_1 = (-t1_1);
      precise float t53_2_1 = (t52_2_1);
      precise float t53_3_1 = (t52_3_1);
      precise float t53_4_1 = (t52_4_1);
      precise float v54 = tl_opq(0.0, pc.zero);
      precise float v55_0 = tl_sel(tl_opq(v53_0, pc.zero) >= tl_opq(v54, pc.zero), v53_0, v54);
      precise float v55_1 = tl_sel(tl_opq(v53_1, pc.zero) >= tl_opq(v54, pc.zero), v53_1, v54);
      precise float t55_0_0 = (tl_sel(tl_opq(v53_0, pc.zero) >= tl_opq(v54, pc.zero), t53_0_0, 0.0));
      precise float t55_1_0 = (tl_sel(tl_opq(v53_0, pc.zero) >= tl_opq(v54, pc.zero), t53_1_0, 0.0));
      precise float t55_2_0 = (tl_sel(tl_opq(v53_0, pc.zero) >= tl_opq(v54, pc.zero), t53_2_0, 0.0));
      precise float t55_3_0 = (tl_sel(tl_opq(v53_0, pc.zero) >= tl_opq(v54, pc.zero), t53_3_0, 0.0));
      precise float t55_4_0 = (tl_sel(tl_opq(v53_0, pc.zero) >= tl_opq(v54, pc.zero), t53_4_0, 0.0));
      precise float t55_0_1 = (tl_sel(tl_opq(v53_1, pc.zero) >= tl_opq(v54, pc.zero), t53_0_1, 0.0));
      precise float t55_1_1 = (tl_sel(tl_opq(v53_1, pc.zero) >= tl_opq(v54, pc.zero), t53_1_1, 0.0));
      precise float t55_2_1 = (tl_sel(tl_opq(v53_1, pc.zero) >= tl_opq(v54, pc.zero), t53_2_1, 0.0));
      precise float t55_3_1 = (tl_sel(tl_opq(v53_1, pc.zero) >= tl_opq(v54, pc.zero), t53_3_1, 0.0));
      precise float t55_4_1 = (tl_sel(tl_opq(v53_1, pc.zero) >= tl_opq(v54, pc.zero), t53_4_1, 0.0));
      precise float v56 = v3 * v4;
      precise float t56_3 = (t3_3 * v4);
      precise float t56_4 = (t4_4 * v3);
      precise float v57 = -v56;
      precise float t57_3 = (-t56_3);
      precise float t57_4 = (-t56_4);
      precise float v58 = tl_opq(exp(tl_opq(v57, pc.zero)), pc.zero);
      precise float t58_3 = (t57_3 * v58);
      precise float t58_4 = (t57_4 * v58);
      precise float v59_0 = v55_0 * v58;
      precise float v59_1 = v55_1 * v58;
      precise float t59_0_0 = (t55_0_0 * v58);
      precise float t59_1_0 = (t55_1_0 * v58);
      precise float t59_2_0 = (t55_2_0 * v58);
      precise float t59_3_0 = (t55_3_0 * v58) + (t58_3 * v55_0);
      precise float t59_4_0 = (t55_4_0 * v58) + (t58_4 * v55_0);
      precise float t59_0_1 = (t55_0_1 * v58);
      precise float t59_1_1 = (t55_1_1 * v58);
      precise float t59_2_1 = (t55_2_1 * v58);
      precise float t59_3_1 = (t55_3_1 * v58) + (t58_3 * v55_1);
      precise float t59_4_1 = (t55_4_1 * v58) + (t58_4 * v55_1);
      { precise float s = tl_red[0u + tl_lid]; precise float y = v59_0 - tl_red[1536u + tl_lid]; precise float t = s + y; tl_red[1536u + tl_lid] = (t - s) - y; tl_red[0u + tl_lid] = t; }
      { precise float s = tl_red[384u + tl_lid]; precise float y = v59_0 * v59_0 - tl_red[1920u + tl_lid]; precise float t = s + y; tl_red[1920u + tl_lid] = (t - s) - y; tl_red[384u + tl_lid] = t; }
      { precise float s = tl_red[64u + tl_lid]; precise float y = t59_0_0 - tl_red[1600u + tl_lid]; precise float t = s + y; tl_red[1600u + tl_lid] = (t - s) - y; tl_red[64u + tl_lid] = t; }
      { precise float s = tl_red[448u + tl_lid]; precise float y = t59_0_0 * t59_0_0 - tl_red[1984u + tl_lid]; precise float t = s + y; tl_red[1984u + tl_lid] = (t - s) - y; tl_red[448u + tl_lid] = t; }
      { precise float s = tl_red[128u + tl_lid]; precise float y = t59_1_0 - tl_red[1664u + tl_lid]; precise float t = s + y; tl_red[1664u + tl_lid] = (t - s) - y; tl_red[128u + tl_lid] = t; }
      { precise float s = tl_red[512u + tl_lid]; precise float y = t59_1_0 * t59_1_0 - tl_red[2048u + tl_lid]; precise float t = s + y; tl_red[2048u + tl_lid] = (t - s) - y; tl_red[512u + tl_lid] = t; }
      { precise float s = tl_red[192u + tl_lid]; precise float y = t59_2_0 - tl_red[1728u + tl_lid]; precise float t = s + y; tl_red[1728u + tl_lid] = (t - s) - y; tl_red[192u + tl_lid] = t; }
      { precise float s = tl_red[576u + tl_lid]; precise float y = t59_2_0 * t59_2_0 - tl_red[2112u + tl_lid]; precise float t = s + y; tl_red[2112u + tl_lid] = (t - s) - y; tl_red[576u + tl_lid] = t; }
      { precise float s = tl_red[256u + tl_lid]; precise float y = t59_3_0 - tl_red[1792u + tl_lid]; precise float t = s + y; tl_red[1792u + tl_lid] = (t - s) - y; tl_red[256u + tl_lid] = t; }
      { precise float s = tl_red[640u + tl_lid]; precise float y = t59_3_0 * t59_3_0 - tl_red[2176u + tl_lid]; precise float t = s + y; tl_red[2176u + tl_lid] = (t - s) - y; tl_red[640u + tl_lid] = t; }
      { precise float s = tl_red[320u + tl_lid]; precise float y = t59_4_0 - tl_red[1856u + tl_lid]; precise float t = s + y; tl_red[1856u + tl_lid] = (t - s) - y; tl_red[320u + tl_lid] = t; }
      { precise float s = tl_red[704u + tl_lid]; precise float y = t59_4_0 * t59_4_0 - tl_red[2240u + tl_lid]; precise float t = s + y; tl_red[2240u + tl_lid] = (t - s) - y; tl_red[704u + tl_lid] = t; }
      { precise float s = tl_red[768u + tl_lid]; precise float y = v59_1 - tl_red[2304u + tl_lid]; precise float t = s + y; tl_red[2304u + tl_lid] = (t - s) - y; tl_red[768u + tl_lid] = t; }
      { precise float s = tl_red[1152u + tl_lid]; precise float y = v59_1 * v59_1 - tl_red[2688u + tl_lid]; precise float t = s + y; tl_red[2688u + tl_lid] = (t - s) - y; tl_red[1152u + tl_lid] = t; }
      { precise float s = tl_red[832u + tl_lid]; precise float y = t59_0_1 - tl_red[2368u + tl_lid]; precise float t = s + y; tl_red[2368u + tl_lid] = (t - s) - y; tl_red[832u + tl_lid] = t; }
      { precise float s = tl_red[1216u + tl_lid]; precise float y = t59_0_1 * t59_0_1 - tl_red[2752u + tl_lid]; precise float t = s + y; tl_red[2752u + tl_lid] = (t - s) - y; tl_red[1216u + tl_lid] = t; }
      { precise float s = tl_red[896u + tl_lid]; precise float y = t59_1_1 - tl_red[2432u + tl_lid]; precise float t = s + y; tl_red[2432u + tl_lid] = (t - s) - y; tl_red[896u + tl_lid] = t; }
      { precise float s = tl_red[1280u + tl_lid]; precise float y = t59_1_1 * t59_1_1 - tl_red[2816u + tl_lid]; precise float t = s + y; tl_red[2816u + tl_lid] = (t - s) - y; tl_red[1280u + tl_lid] = t; }
      { precise float s = tl_red[960u + tl_lid]; precise float y = t59_2_1 - tl_red[2496u + tl_lid]; precise float t = s + y; tl_red[2496u + tl_lid] = (t - s) - y; tl_red[960u + tl_lid] = t; }
      { precise float s = tl_red[1344u + tl_lid]; precise float y = t59_2_1 * t59_2_1 - tl_red[2880u + tl_lid]; precise float t = s + y; tl_red[2880u + tl_lid] = (t - s) - y; tl_red[1344u + tl_lid] = t; }
      { precise float s = tl_red[1024u + tl_lid]; precise float y = t59_3_1 - tl_red[2560u + tl_lid]; precise float t = s + y; tl_red[2560u + tl_lid] = (t - s) - y; tl_red[1024u + tl_lid] = t; }
      { precise float s = tl_red[1408u + tl_lid]; precise float y = t59_3_1 * t59_3_1 - tl_red[2944u + tl_lid]; precise float t = s + y; tl_red[2944u + tl_lid] = (t - s) - y; tl_red[1408u + tl_lid] = t; }
      { precise float s = tl_red[1088u + tl_lid]; precise float y = t59_4_1 - tl_red[2624u + tl_lid]; precise float t = s + y; tl_red[2624u + tl_lid] = (t - s) - y; tl_red[1088u + tl_lid] = t; }
      { precise float s = tl_red[1472u + tl_lid]; precise float y = t59_4_1 * t59_4_1 - tl_red[3008u + tl_lid]; precise float t = s + y; tl_red[3008u + tl_lid] = (t - s) - y; tl_red[1472u + tl_lid] = t; }
    }
  }
  // workgroup reduction: a fixed binary tree in local memory, then one partial per sum
  barrier();
  for (uint tl_st = 32u; tl_st > 0u; tl_st >>= 1u) {
    if (tl_lid < tl_st) {
      tl_red[0u + tl_lid] = tl_red[0u + tl_lid] + tl_red[0u + tl_lid + tl_st];
      tl_red[64u + tl_lid] = tl_red[64u + tl_lid] + tl_red[64u + tl_lid + tl_st];
      tl_red[128u + tl_lid] = tl_red[128u + tl_lid] + tl_red[128u + tl_lid + tl_st];
      tl_red[192u + tl_lid] = tl_red[192u + tl_lid] + tl_red[192u + tl_lid + tl_st];
      tl_red[256u + tl_lid] = tl_red[256u + tl_lid] + tl_red[256u + tl_lid + tl_st];
      tl_red[320u + tl_lid] = tl_red[320u + tl_lid] + tl_red[320u + tl_lid + tl_st];
      tl_red[384u + tl_lid] = tl_red[384u + tl_lid] + tl_red[384u + tl_lid + tl_st];
      tl_red[448u + tl_lid] = tl_red[448u + tl_lid] + tl_red[448u + tl_lid + tl_st];
      tl_red[512u + tl_lid] = tl_red[512u + tl_lid] + tl_red[512u + tl_lid + tl_st];
      tl_red[576u + tl_lid] = tl_red[576u + tl_lid] + tl_red[576u + tl_lid + tl_st];
      tl_red[640u + tl_lid] = tl_red[640u + tl_lid] + tl_red[640u + tl_lid + tl_st];
      tl_red[704u + tl_lid] = tl_red[704u + tl_lid] + tl_red[704u + tl_lid + tl_st];
      tl_red[768u + tl_lid] = tl_red[768u + tl_lid] + tl_red[768u + tl_lid + tl_st];
      tl_red[832u + tl_lid] = tl_red[832u + tl_lid] + tl_red[832u + tl_lid + tl_st];
      tl_red[896u + tl_lid] = tl_red[896u + tl_lid] + tl_red[896u + tl_lid + tl_st];
      tl_red[960u + tl_lid] = tl_red[960u + tl_lid] + tl_red[960u + tl_lid + tl_st];
      tl_red[1024u + tl_lid] = tl_red[1024u + tl_lid] + tl_red[1024u + tl_lid + tl_st];
      tl_red[1088u + tl_lid] = tl_red[1088u + tl_lid] + tl_red[1088u + tl_lid + tl_st];
      tl_red[1152u + tl_lid] = tl_red[1152u + tl_lid] + tl_red[1152u + tl_lid + tl_st];
      tl_red[1216u + tl_lid] = tl_red[1216u + tl_lid] + tl_red[1216u + tl_lid + tl_st];
      tl_red[1280u + tl_lid] = tl_red[1280u + tl_lid] + tl_red[1280u + tl_lid + tl_st];
      tl_red[1344u + tl_lid] = tl_red[1344u + tl_lid] + tl_red[1344u + tl_lid + tl_st];
      tl_red[1408u + tl_lid] = tl_red[1408u + tl_lid] + tl_red[1408u + tl_lid + tl_st];
      tl_red[1472u + tl_lid] = tl_red[1472u + tl_lid] + tl_red[1472u + tl_lid + tl_st];
    }
    barrier();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 24u + 0u] = tl_red[0u];
    partials[tl_g * 24u + 1u] = tl_red[64u];
    partials[tl_g * 24u + 2u] = tl_red[128u];
    partials[tl_g * 24u + 3u] = tl_red[192u];
    partials[tl_g * 24u + 4u] = tl_red[256u];
    partials[tl_g * 24u + 5u] = tl_red[320u];
    partials[tl_g * 24u + 6u] = tl_red[384u];
    partials[tl_g * 24u + 7u] = tl_red[448u];
    partials[tl_g * 24u + 8u] = tl_red[512u];
    partials[tl_g * 24u + 9u] = tl_red[576u];
    partials[tl_g * 24u + 10u] = tl_red[640u];
    partials[tl_g * 24u + 11u] = tl_red[704u];
    partials[tl_g * 24u + 12u] = tl_red[768u];
    partials[tl_g * 24u + 13u] = tl_red[832u];
    partials[tl_g * 24u + 14u] = tl_red[896u];
    partials[tl_g * 24u + 15u] = tl_red[960u];
    partials[tl_g * 24u + 16u] = tl_red[1024u];
    partials[tl_g * 24u + 17u] = tl_red[1088u];
    partials[tl_g * 24u + 18u] = tl_red[1152u];
    partials[tl_g * 24u + 19u] = tl_red[1216u];
    partials[tl_g * 24u + 20u] = tl_red[1280u];
    partials[tl_g * 24u + 21u] = tl_red[1344u];
    partials[tl_g * 24u + 22u] = tl_red[1408u];
    partials[tl_g * 24u + 23u] = tl_red[1472u];
  }
}
