#version 450
#extension GL_EXT_control_flow_attributes : require
// tapelab kernel: tape golden-small, 21 nodes, register (3 segments, golden), draws prefilled into scratch, fp32, 1 market(s), value + Greeks, dialect glsl
// config: workgroup=64,lanes=4,sums=local,market_order=joint,markets=copies,draws=prefill,prefill_ahead=0,layout=soa,math=ieee,philox=rolled,loops=unrolled,loop_trip=calls,closed_forms=off,tangent_fma=off,tangent_chunk=0,opaque=on,first_terms=set,rolled_adjoints=parity,outline_draws=off,shared_inputs=on
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
shared float tl_red[768];
void main() {
  const uint tl_lid = gl_LocalInvocationID.x;
  const uint tl_g = gl_WorkGroupID.x;
  const uint tl_tid = tl_g * 64u + tl_lid;
  float tl_in0_0 = inputs[0u];
  float tl_in0_1 = inputs[1u];
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
  for (uint tl_j = 0u; tl_j < 4u; ++tl_j) {
    uint tl_p = tl_g * 256u + tl_j * 64u + tl_lid;
    if (tl_p < pc.count) {
      uint tl_inv = pc.invocations + (tl_j & pc.zero);  // loop-variant: see scratchStore
      uint tl_pathLo = pc.pathLo + tl_p;
      uint tl_pathHi = pc.pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      uint tl_fk0 = pc.seedLo; uint tl_fk1 = pc.seedHi;
      // persistent values: bookmarks, inputs, output
      precise float v0;
      precise float v1;
      precise float v3;
      precise float v4;
      precise float v8;
      precise float v9;
      precise float v16;
      precise float v20;
      // draws=prefill: every draw of the path into its scratch slot, then the sweeps read them
      {
        const uvec4 tl_dw = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const vec2 tl_dn0 = tl_boxMuller(tl_dw.x, tl_dw.y);
        scratch[0u * tl_inv + tl_tid] = tl_dn0.x;
        scratch[1u * tl_inv + tl_tid] = tl_dn0.y;
      }
      // forward sweep, one block per segment
      {  // segment 0: nodes [0, 9)
        v0 = tl_in0_0;
        v1 = tl_in0_1;
        precise float v2 = scratch[0u * (tl_inv ^ (pc.seedLo & pc.zero)) + tl_tid];
        v3 = scratch[1u * (tl_inv ^ (pc.seedLo & pc.zero)) + tl_tid];
        v4 = tl_opq(sqrt(tl_opq(v1, pc.zero)), pc.zero);
        precise float v5 = v0 * v2;
        precise float v6 = tl_opq(0.5, pc.zero);
        precise float v7 = v5 * v6;
        v8 = tl_opq(exp(tl_opq(v7, pc.zero)), pc.zero);
      }
      {  // segment 1: nodes [9, 17)
        const uint tl_dk1 = uint(floatBitsToUint(v8)) & pc.zero;  // 0: this segment's draws are loaded after the previous segment
        v9 = v8 + v4;
        precise float v10 = tl_opq(tl_opq(v1, pc.zero) / tl_opq(v0, pc.zero), pc.zero);
        precise float v11 = tl_opq(log(tl_opq(v9, pc.zero)), pc.zero);
        precise float v12 = v11 - v10;
        precise float v13 = tl_sel(tl_opq(v3, pc.zero) <= tl_opq(v1, pc.zero), v3, v1);
        precise float v14 = -v9;
        precise float v15 = tl_sel(tl_opq(v12, pc.zero) >= tl_opq(v14, pc.zero), v12, v14);
        v16 = v15 * v13;
      }
      {  // segment 2: nodes [17, 21)
        const uint tl_dk2 = uint(floatBitsToUint(v16)) & pc.zero;  // 0: this segment's draws are loaded after the previous segment
        precise float v17 = -v16;
        precise float v18 = tl_sel(tl_opq(v17, pc.zero) < 0.0, -v17, v17);
        precise float v19 = v18 + v0;
        v20 = v19 * v9;
      }
      // reverse sweep: segments last to first, each recomputed from its bookmarks
      precise float d0 = 0.0;
      precise float d1 = 0.0;
      precise float d4 = 0.0;
      precise float d8 = 0.0;
      precise float d9 = 0.0;
      precise float d16 = 0.0;
      precise float d20 = 1.0;
      {  // segment 2
        precise float w0 = tl_opq(v0, pc.zero);
        precise float w9 = tl_opq(v9, pc.zero);
        precise float w16 = tl_opq(v16, pc.zero);
        precise float w17 = -w16;
        precise float w18 = tl_sel(tl_opq(w17, pc.zero) < 0.0, -w17, w17);
        precise float w19 = w18 + w0;
        precise float d19 = d20 * w9;
        d9 += d20 * w19;
        precise float d18 = d19;
        d0 += d19;
        precise float d17 = tl_sel(tl_opq(w17, pc.zero) < 0.0, -d18, d18);
        d16 += -d17;
      }
      {  // segment 1
        precise float w0 = tl_opq(v0, pc.zero);
        precise float w1 = tl_opq(v1, pc.zero);
        precise float w3 = tl_opq(v3, pc.zero);
        precise float w4 = tl_opq(v4, pc.zero);
        precise float w8 = tl_opq(v8, pc.zero);
        precise float w9 = w8 + w4;
        precise float w10 = tl_opq(tl_opq(w1, pc.zero) / tl_opq(w0, pc.zero), pc.zero);
        precise float w11 = tl_opq(log(tl_opq(w9, pc.zero)), pc.zero);
        precise float w12 = w11 - w10;
        precise float w13 = tl_sel(tl_opq(w3, pc.zero) <= tl_opq(w1, pc.zero), w3, w1);
        precise float w14 = -w9;
        precise float w15 = tl_sel(tl_opq(w12, pc.zero) >= tl_opq(w14, pc.zero), w12, w14);
        precise float d15 = d16 * w13;
        precise float d13 = d16 * w15;
        precise float d12 = tl_sel(tl_opq(w12, pc.zero) >= tl_opq(w14, pc.zero), d15, 0.0);
        precise float d14 = tl_sel(tl_opq(w12, pc.zero) >= tl_opq(w14, pc.zero), 0.0, d15);
        d9 += -d14;
        d1 += tl_sel(tl_opq(w3, pc.zero) <= tl_opq(w1, pc.zero), 0.0, d13);
        precise float d11 = d12;
        precise float d10 = -d12;
        d9 += d11 / tl_opq(w9, pc.zero);
        d1 += d10 / tl_opq(w0, pc.zero);
        d0 += -(d10 * w10) / tl_opq(w0, pc.zero);
        d8 += d9;
        d4 += d9;
      }
      {  // segment 0
        precise float w0 = tl_opq(v0, pc.zero);
        precise float w1 = tl_opq(v1, pc.zero);
        precise float w2 = scratch[0u * (tl_inv ^ pc.zero) + tl_tid];
        precise float w4 = tl_opq(sqrt(tl_opq(w1, pc.zero)), pc.zero);
        precise float w5 = w0 * w2;
        precise float w6 = tl_opq(0.5, pc.zero);
        precise float w7 = w5 * w6;
        precise float w8 = tl_opq(exp(tl_opq(w7, pc.zero)), pc.zero);
        precise float d7 = d8 * w8;
        precise float d5 = d7 * w6;
        d0 += d5 * w2;
        d1 += d4 / (w4 + w4);
      }
      { precise float s = tl_red[0u + tl_lid]; precise float y = v20 - tl_red[384u + tl_lid]; precise float t = s + y; tl_red[384u + tl_lid] = (t - s) - y; tl_red[0u + tl_lid] = t; }
      { precise float s = tl_red[192u + tl_lid]; precise float y = v20 * v20 - tl_red[576u + tl_lid]; precise float t = s + y; tl_red[576u + tl_lid] = (t - s) - y; tl_red[192u + tl_lid] = t; }
      { precise float s = tl_red[64u + tl_lid]; precise float y = d0 - tl_red[448u + tl_lid]; precise float t = s + y; tl_red[448u + tl_lid] = (t - s) - y; tl_red[64u + tl_lid] = t; }
      { precise float s = tl_red[256u + tl_lid]; precise float y = d0 * d0 - tl_red[640u + tl_lid]; precise float t = s + y; tl_red[640u + tl_lid] = (t - s) - y; tl_red[256u + tl_lid] = t; }
      { precise float s = tl_red[128u + tl_lid]; precise float y = d1 - tl_red[512u + tl_lid]; precise float t = s + y; tl_red[512u + tl_lid] = (t - s) - y; tl_red[128u + tl_lid] = t; }
      { precise float s = tl_red[320u + tl_lid]; precise float y = d1 * d1 - tl_red[704u + tl_lid]; precise float t = s + y; tl_red[704u + tl_lid] = (t - s) - y; tl_red[320u + tl_lid] = t; }
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
    }
    barrier();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 6u + 0u] = tl_red[0u];
    partials[tl_g * 6u + 1u] = tl_red[64u];
    partials[tl_g * 6u + 2u] = tl_red[128u];
    partials[tl_g * 6u + 3u] = tl_red[192u];
    partials[tl_g * 6u + 4u] = tl_red[256u];
    partials[tl_g * 6u + 5u] = tl_red[320u];
  }
}
