#version 450
#extension GL_EXT_control_flow_attributes : require
// tapelab kernel: tape golden-small, 21 nodes, register (3 segments, golden), markets sequential, fp32, 2 market(s), value + Greeks, dialect glsl
// config: workgroup=64,lanes=4,sums=local,market_order=sequential,markets=copies,draws=redraw,prefill_ahead=0,layout=soa,math=ieee,philox=rolled,loops=unrolled,loop_trip=calls,closed_forms=off,tangent_fma=off,tangent_chunk=0,opaque=on,first_terms=set,rolled_adjoints=parity,outline_draws=off,shared_inputs=on
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
shared float tl_red[1536];
void main() {
  const uint tl_lid = gl_LocalInvocationID.x;
  const uint tl_g = gl_WorkGroupID.x;
  float tl_in0_0 = inputs[0u];
  float tl_in0_1 = inputs[1u];
  float tl_in1_0 = inputs[2u];
  float tl_in1_1 = inputs[3u];
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
  for (uint tl_j = 0u; tl_j < 4u; ++tl_j) {
    uint tl_p = tl_g * 256u + tl_j * 64u + tl_lid;
    if (tl_p < pc.count) {
      uint tl_pathLo = pc.pathLo + tl_p;
      uint tl_pathHi = pc.pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      uint tl_fk0 = pc.seedLo; uint tl_fk1 = pc.seedHi;
      // persistent values: bookmarks, inputs, output
      precise float v0_0;
      precise float v0_1;
      precise float v1_0;
      precise float v1_1;
      precise float v3;
      precise float v4_0;
      precise float v4_1;
      precise float v8_0;
      precise float v8_1;
      precise float v9_0;
      precise float v9_1;
      precise float v16_0;
      precise float v16_1;
      precise float v20_0;
      precise float v20_1;
      // forward sweep, one block per segment
      {  // segment 0: nodes [0, 9)
        v0_0 = tl_in0_0;
        v0_1 = tl_in1_0;
        v1_0 = tl_in0_1;
        v1_1 = tl_in1_1;
        const uvec4 vg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const vec2 vg0n0 = tl_boxMuller(vg0.x, vg0.y);
        precise float v2 = vg0n0.x;
        v3 = vg0n0.y;
        v4_0 = tl_opq(sqrt(tl_opq(v1_0, pc.zero)), pc.zero);
        v4_1 = tl_opq(sqrt(tl_opq(v1_1, pc.zero)), pc.zero);
        precise float v5_0 = v0_0 * v2;
        precise float v5_1 = v0_1 * v2;
        precise float v6 = tl_opq(0.5, pc.zero);
        precise float v7_0 = v5_0 * v6;
        precise float v7_1 = v5_1 * v6;
        v8_0 = tl_opq(exp(tl_opq(v7_0, pc.zero)), pc.zero);
        v8_1 = tl_opq(exp(tl_opq(v7_1, pc.zero)), pc.zero);
      }
      {  // segment 1: nodes [9, 17)
        v9_0 = v8_0 + v4_0;
        v9_1 = v8_1 + v4_1;
        precise float v10_0 = tl_opq(tl_opq(v1_0, pc.zero) / tl_opq(v0_0, pc.zero), pc.zero);
        precise float v10_1 = tl_opq(tl_opq(v1_1, pc.zero) / tl_opq(v0_1, pc.zero), pc.zero);
        precise float v11_0 = tl_opq(log(tl_opq(v9_0, pc.zero)), pc.zero);
        precise float v11_1 = tl_opq(log(tl_opq(v9_1, pc.zero)), pc.zero);
        precise float v12_0 = v11_0 - v10_0;
        precise float v12_1 = v11_1 - v10_1;
        precise float v13_0 = tl_sel(tl_opq(v3, pc.zero) <= tl_opq(v1_0, pc.zero), v3, v1_0);
        precise float v13_1 = tl_sel(tl_opq(v3, pc.zero) <= tl_opq(v1_1, pc.zero), v3, v1_1);
        precise float v14_0 = -v9_0;
        precise float v14_1 = -v9_1;
        precise float v15_0 = tl_sel(tl_opq(v12_0, pc.zero) >= tl_opq(v14_0, pc.zero), v12_0, v14_0);
        precise float v15_1 = tl_sel(tl_opq(v12_1, pc.zero) >= tl_opq(v14_1, pc.zero), v12_1, v14_1);
        v16_0 = v15_0 * v13_0;
        v16_1 = v15_1 * v13_1;
      }
      {  // segment 2: nodes [17, 21)
        precise float v17_0 = -v16_0;
        precise float v17_1 = -v16_1;
        precise float v18_0 = tl_sel(tl_opq(v17_0, pc.zero) < 0.0, -v17_0, v17_0);
        precise float v18_1 = tl_sel(tl_opq(v17_1, pc.zero) < 0.0, -v17_1, v17_1);
        precise float v19_0 = v18_0 + v0_0;
        precise float v19_1 = v18_1 + v0_1;
        v20_0 = v19_0 * v9_0;
        v20_1 = v19_1 * v9_1;
      }
      // reverse sweep: segments last to first, each recomputed from its bookmarks
      precise float d0_0 = 0.0;
      precise float d0_1 = 0.0;
      precise float d1_0 = 0.0;
      precise float d1_1 = 0.0;
      precise float d4_0 = 0.0;
      precise float d4_1 = 0.0;
      precise float d8_0 = 0.0;
      precise float d8_1 = 0.0;
      precise float d9_0 = 0.0;
      precise float d9_1 = 0.0;
      precise float d16_0 = 0.0;
      precise float d16_1 = 0.0;
      precise float d20_0 = 1.0;
      precise float d20_1 = 1.0;
      {  // segment 2
        {  // market 0
          precise float w0_0 = tl_opq(v0_0, pc.zero);
          precise float w9_0 = tl_opq(v9_0, pc.zero);
          precise float w16_0 = tl_opq(v16_0, pc.zero);
          precise float w17_0 = -w16_0;
          precise float w18_0 = tl_sel(tl_opq(w17_0, pc.zero) < 0.0, -w17_0, w17_0);
          precise float w19_0 = w18_0 + w0_0;
          precise float d19_0 = d20_0 * w9_0;
          d9_0 += d20_0 * w19_0;
          precise float d18_0 = d19_0;
          d0_0 += d19_0;
          precise float d17_0 = tl_sel(tl_opq(w17_0, pc.zero) < 0.0, -d18_0, d18_0);
          d16_0 += -d17_0;
        }
        {  // market 1
          precise float w0_1 = tl_opq(v0_1, pc.zero);
          precise float w9_1 = tl_opq(v9_1, pc.zero);
          precise float w16_1 = tl_opq(v16_1, pc.zero);
          precise float w17_1 = -w16_1;
          precise float w18_1 = tl_sel(tl_opq(w17_1, pc.zero) < 0.0, -w17_1, w17_1);
          precise float w19_1 = w18_1 + w0_1;
          precise float d19_1 = d20_1 * w9_1;
          d9_1 += d20_1 * w19_1;
          precise float d18_1 = d19_1;
          d0_1 += d19_1;
          precise float d17_1 = tl_sel(tl_opq(w17_1, pc.zero) < 0.0, -d18_1, d18_1);
          d16_1 += -d17_1;
        }
      }
      {  // segment 1
        precise float w3 = tl_opq(v3, pc.zero);
        {  // market 0
          precise float w0_0 = tl_opq(v0_0, pc.zero);
          precise float w1_0 = tl_opq(v1_0, pc.zero);
          precise float w4_0 = tl_opq(v4_0, pc.zero);
          precise float w8_0 = tl_opq(v8_0, pc.zero);
          precise float w9_0 = w8_0 + w4_0;
          precise float w10_0 = tl_opq(tl_opq(w1_0, pc.zero) / tl_opq(w0_0, pc.zero), pc.zero);
          precise float w11_0 = tl_opq(log(tl_opq(w9_0, pc.zero)), pc.zero);
          precise float w12_0 = w11_0 - w10_0;
          precise float w13_0 = tl_sel(tl_opq(w3, pc.zero) <= tl_opq(w1_0, pc.zero), w3, w1_0);
          precise float w14_0 = -w9_0;
          precise float w15_0 = tl_sel(tl_opq(w12_0, pc.zero) >= tl_opq(w14_0, pc.zero), w12_0, w14_0);
          precise float d15_0 = d16_0 * w13_0;
          precise float d13_0 = d16_0 * w15_0;
          precise float d12_0 = tl_sel(tl_opq(w12_0, pc.zero) >= tl_opq(w14_0, pc.zero), d15_0, 0.0);
          precise float d14_0 = tl_sel(tl_opq(w12_0, pc.zero) >= tl_opq(w14_0, pc.zero), 0.0, d15_0);
          d9_0 += -d14_0;
          d1_0 += tl_sel(tl_opq(w3, pc.zero) <= tl_opq(w1_0, pc.zero), 0.0, d13_0);
          precise float d11_0 = d12_0;
          precise float d10_0 = -d12_0;
          d9_0 += d11_0 / tl_opq(w9_0, pc.zero);
          d1_0 += d10_0 / tl_opq(w0_0, pc.zero);
          d0_0 += -(d10_0 * w10_0) / tl_opq(w0_0, pc.zero);
          d8_0 += d9_0;
          d4_0 += d9_0;
        }
        {  // market 1
          precise float w0_1 = tl_opq(v0_1, pc.zero);
          precise float w1_1 = tl_opq(v1_1, pc.zero);
          precise float w4_1 = tl_opq(v4_1, pc.zero);
          precise float w8_1 = tl_opq(v8_1, pc.zero);
          precise float w9_1 = w8_1 + w4_1;
          precise float w10_1 = tl_opq(tl_opq(w1_1, pc.zero) / tl_opq(w0_1, pc.zero), pc.zero);
          precise float w11_1 = tl_opq(log(tl_opq(w9_1, pc.zero)), pc.zero);
          precise float w12_1 = w11_1 - w10_1;
          precise float w13_1 = tl_sel(tl_opq(w3, pc.zero) <= tl_opq(w1_1, pc.zero), w3, w1_1);
          precise float w14_1 = -w9_1;
          precise float w15_1 = tl_sel(tl_opq(w12_1, pc.zero) >= tl_opq(w14_1, pc.zero), w12_1, w14_1);
          precise float d15_1 = d16_1 * w13_1;
          precise float d13_1 = d16_1 * w15_1;
          precise float d12_1 = tl_sel(tl_opq(w12_1, pc.zero) >= tl_opq(w14_1, pc.zero), d15_1, 0.0);
          precise float d14_1 = tl_sel(tl_opq(w12_1, pc.zero) >= tl_opq(w14_1, pc.zero), 0.0, d15_1);
          d9_1 += -d14_1;
          d1_1 += tl_sel(tl_opq(w3, pc.zero) <= tl_opq(w1_1, pc.zero), 0.0, d13_1);
          precise float d11_1 = d12_1;
          precise float d10_1 = -d12_1;
          d9_1 += d11_1 / tl_opq(w9_1, pc.zero);
          d1_1 += d10_1 / tl_opq(w0_1, pc.zero);
          d0_1 += -(d10_1 * w10_1) / tl_opq(w0_1, pc.zero);
          d8_1 += d9_1;
          d4_1 += d9_1;
        }
      }
      {  // segment 0
        uint tl_rk0 = pc.seedLo ^ pc.zero; uint tl_rk1 = pc.seedHi ^ pc.zero;
        const uvec4 wg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_rk0, tl_rk1);
        const vec2 wg0n0 = tl_boxMuller(wg0.x, wg0.y);
        precise float w2 = wg0n0.x;
        precise float w6 = tl_opq(0.5, pc.zero);
        {  // market 0
          precise float w0_0 = tl_opq(v0_0, pc.zero);
          precise float w1_0 = tl_opq(v1_0, pc.zero);
          precise float w4_0 = tl_opq(sqrt(tl_opq(w1_0, pc.zero)), pc.zero);
          precise float w5_0 = w0_0 * w2;
          precise float w7_0 = w5_0 * w6;
          precise float w8_0 = tl_opq(exp(tl_opq(w7_0, pc.zero)), pc.zero);
          precise float d7_0 = d8_0 * w8_0;
          precise float d5_0 = d7_0 * w6;
          d0_0 += d5_0 * w2;
          d1_0 += d4_0 / (w4_0 + w4_0);
        }
        {  // market 1
          precise float w0_1 = tl_opq(v0_1, pc.zero);
          precise float w1_1 = tl_opq(v1_1, pc.zero);
          precise float w4_1 = tl_opq(sqrt(tl_opq(w1_1, pc.zero)), pc.zero);
          precise float w5_1 = w0_1 * w2;
          precise float w7_1 = w5_1 * w6;
          precise float w8_1 = tl_opq(exp(tl_opq(w7_1, pc.zero)), pc.zero);
          precise float d7_1 = d8_1 * w8_1;
          precise float d5_1 = d7_1 * w6;
          d0_1 += d5_1 * w2;
          d1_1 += d4_1 / (w4_1 + w4_1);
        }
      }
      { precise float s = tl_red[0u + tl_lid]; precise float y = v20_0 - tl_red[768u + tl_lid]; precise float t = s + y; tl_red[768u + tl_lid] = (t - s) - y; tl_red[0u + tl_lid] = t; }
      { precise float s = tl_red[192u + tl_lid]; precise float y = v20_0 * v20_0 - tl_red[960u + tl_lid]; precise float t = s + y; tl_red[960u + tl_lid] = (t - s) - y; tl_red[192u + tl_lid] = t; }
      { precise float s = tl_red[64u + tl_lid]; precise float y = d0_0 - tl_red[832u + tl_lid]; precise float t = s + y; tl_red[832u + tl_lid] = (t - s) - y; tl_red[64u + tl_lid] = t; }
      { precise float s = tl_red[256u + tl_lid]; precise float y = d0_0 * d0_0 - tl_red[1024u + tl_lid]; precise float t = s + y; tl_red[1024u + tl_lid] = (t - s) - y; tl_red[256u + tl_lid] = t; }
      { precise float s = tl_red[128u + tl_lid]; precise float y = d1_0 - tl_red[896u + tl_lid]; precise float t = s + y; tl_red[896u + tl_lid] = (t - s) - y; tl_red[128u + tl_lid] = t; }
      { precise float s = tl_red[320u + tl_lid]; precise float y = d1_0 * d1_0 - tl_red[1088u + tl_lid]; precise float t = s + y; tl_red[1088u + tl_lid] = (t - s) - y; tl_red[320u + tl_lid] = t; }
      { precise float s = tl_red[384u + tl_lid]; precise float y = v20_1 - tl_red[1152u + tl_lid]; precise float t = s + y; tl_red[1152u + tl_lid] = (t - s) - y; tl_red[384u + tl_lid] = t; }
      { precise float s = tl_red[576u + tl_lid]; precise float y = v20_1 * v20_1 - tl_red[1344u + tl_lid]; precise float t = s + y; tl_red[1344u + tl_lid] = (t - s) - y; tl_red[576u + tl_lid] = t; }
      { precise float s = tl_red[448u + tl_lid]; precise float y = d0_1 - tl_red[1216u + tl_lid]; precise float t = s + y; tl_red[1216u + tl_lid] = (t - s) - y; tl_red[448u + tl_lid] = t; }
      { precise float s = tl_red[640u + tl_lid]; precise float y = d0_1 * d0_1 - tl_red[1408u + tl_lid]; precise float t = s + y; tl_red[1408u + tl_lid] = (t - s) - y; tl_red[640u + tl_lid] = t; }
      { precise float s = tl_red[512u + tl_lid]; precise float y = d1_1 - tl_red[1280u + tl_lid]; precise float t = s + y; tl_red[1280u + tl_lid] = (t - s) - y; tl_red[512u + tl_lid] = t; }
      { precise float s = tl_red[704u + tl_lid]; precise float y = d1_1 * d1_1 - tl_red[1472u + tl_lid]; precise float t = s + y; tl_red[1472u + tl_lid] = (t - s) - y; tl_red[704u + tl_lid] = t; }
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
    }
    barrier();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 12u + 0u] = tl_red[0u];
    partials[tl_g * 12u + 1u] = tl_red[64u];
    partials[tl_g * 12u + 2u] = tl_red[128u];
    partials[tl_g * 12u + 3u] = tl_red[192u];
    partials[tl_g * 12u + 4u] = tl_red[256u];
    partials[tl_g * 12u + 5u] = tl_red[320u];
    partials[tl_g * 12u + 6u] = tl_red[384u];
    partials[tl_g * 12u + 7u] = tl_red[448u];
    partials[tl_g * 12u + 8u] = tl_red[512u];
    partials[tl_g * 12u + 9u] = tl_red[576u];
    partials[tl_g * 12u + 10u] = tl_red[640u];
    partials[tl_g * 12u + 11u] = tl_red[704u];
  }
}
