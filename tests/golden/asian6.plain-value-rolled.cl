#pragma OPENCL FP_CONTRACT OFF
// tapelab kernel: tape asian-6, 60 nodes, plain, time loop rolled (1 trips of 4), fp32, 1 market(s), value only, dialect opencl
// config: workgroup=64,lanes=4,sums=local,market_order=sequential,markets=copies,draws=redraw,prefill_ahead=0,layout=soa,math=ieee,philox=rolled,loops=rolled,loop_trip=calls,closed_forms=off,tangent_fma=off,tangent_chunk=0,opaque=on,first_terms=set,loads_ahead=off,market_unroll=1,rolled_adjoints=parity,outline_draws=off,shared_inputs=on
// config unused: first_terms=set: no adjoints (a tangent kernel, or no Greeks)
// opq: the identity on every bit pattern, opaque to the compiler (z is always 0).
static inline float tl_opq(float x, uint z) { return as_float(as_uint(x) + (uint)(z)); }
static inline float tl_sel(bool c, float x, float y) { return c ? x : y; }
// Philox4x32-10, its four words (tape/philox.h).
static inline uint4 tl_philox(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1) {
  #pragma unroll 1
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    uint hi0 = mul_hi(0xD2511F53u, c0); uint lo0 = 0xD2511F53u * c0;
    uint hi1 = mul_hi(0xCD9E8D57u, c2); uint lo1 = 0xCD9E8D57u * c2;
    uint n0 = hi1 ^ c1 ^ k0; uint n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
  }
  return (uint4)(c0, c1, c2, c3);
}
// Box-Muller: draws 2p and 2p + 1 from the pair of words (a, b) (tape/philox.h).
static inline float2 tl_boxMuller(uint a, uint b) {
  float u = fma((float)(a >> 9u), 1.1920929e-07f, 5.9604645e-08f);
  float r2 = (-2.0f) * log(u);
  float rho = sqrt(r2 > 0.0f ? r2 : 0.0f);
  const uint n = b >> 30u;
  float f = fma((float)((b >> 9u) & 2097151u), 4.7683716e-07f, (-0.49999976f));
  float th = f * 1.5707964f;
  float t = th * th;
  float s = th * fma(fma(fma(fma(fma((-2.5052108e-08f), t, 2.7557319e-06f), t, (-0.0001984127f)), t, 0.008333334f), t, (-0.16666667f)), t, 1.0f);
  float c = fma(fma(fma(fma(fma(fma(2.0876756e-09f, t, (-2.755732e-07f)), t, 2.4801588e-05f), t, (-0.0013888889f)), t, 0.041666668f), t, (-0.5f)), t, 1.0f);
  const bool odd = (n & 1u) != 0u;
  float x = odd ? s : c;
  float y = odd ? c : s;
  return (float2)(rho * (n == 1u || n == 2u ? -x : x), rho * (n >= 2u ? -y : y));
}
// The words of draws 4g .. 4g+3 of path (pathHi:pathLo) under key (k0, k1): counter {g, 0, pathLo, pathHi}.
static inline uint4 tl_drawWords(uint g, uint pathLo, uint pathHi, uint k0, uint k1) {
  return tl_philox(g, 0u, pathLo, pathHi, k0, k1);
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void tapelab_kernel(__global const float* restrict inputs, __global float* restrict partials, __global float* restrict scratch,
    uint seedLo, uint seedHi, uint pathLo, uint pathHi, uint count, uint zero, uint invocations) {
  __local float tl_red[256];
  const uint tl_lid = (uint)get_local_id(0);
  const uint tl_g = (uint)get_group_id(0);
  float tl_in0_0 = inputs[0u];
  float tl_in0_1 = inputs[1u];
  float tl_in0_2 = inputs[2u];
  float tl_in0_3 = inputs[3u];
  float tl_in0_4 = inputs[4u];
  // Kahan sums per market: value, adjoints, then their squares.
  // In local memory: sum i of this lane at tl_red[i * WG + lid], its compensation at [(sums + i) * WG + lid].
  tl_red[0u + tl_lid] = 0.0f;
  tl_red[64u + tl_lid] = 0.0f;
  tl_red[128u + tl_lid] = 0.0f;
  tl_red[192u + tl_lid] = 0.0f;
  for (uint tl_j = 0u; tl_j < 4u; ++tl_j) {
    uint tl_p = tl_g * 256u + tl_j * 64u + tl_lid;
    if (tl_p < count) {
      uint tl_pathLo = pathLo + tl_p;
      uint tl_pathHi = pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      uint tl_fk0 = seedLo; uint tl_fk1 = seedHi;
      // forward sweep
      float v0 = tl_in0_0;
      float v1 = tl_in0_1;
      float v2 = tl_in0_2;
      float v3 = tl_in0_3;
      float v4 = tl_in0_4;
      float v5 = v2 * v2;
      float v6 = tl_opq(0.5f, zero);
      float v7 = v6 * v5;
      float v8 = v3 - v7;
      float v9 = tl_opq(0.16666667f, zero);
      float v10 = v4 * v9;
      float v11 = v8 * v10;
      float v12 = tl_opq(sqrt(tl_opq(v10, zero)), zero);
      float v13 = v2 * v12;
      float v14 = tl_opq(0.0f, zero);
      // the time loop's carried values (planner/loops.h), set to what its first iteration reads
      float vc4 = v0;
      float vc5 = v14;
      #pragma unroll 1
      for (uint tl_it = 0u; tl_it < 1u; ++tl_it) {  // the time loop: 1 trips of 4 step(s)
        const uint4 vg0 = tl_drawWords(0u + tl_it * 1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg0n0 = tl_boxMuller(vg0.x, vg0.y);
        float v21 = vg0n0.x;
        float v22 = v13 * v21;
        float v23 = v11 + v22;
        float v24 = tl_opq(exp(tl_opq(v23, zero)), zero);
        float v25 = vc4 * v24;
        float v26 = vc5 + v25;
        float v27 = vg0n0.y;
        float v28 = v13 * v27;
        float v29 = v11 + v28;
        float v30 = tl_opq(exp(tl_opq(v29, zero)), zero);
        float v31 = v25 * v30;
        float v32 = v26 + v31;
        const float2 vg0n1 = tl_boxMuller(vg0.z, vg0.w);
        float v33 = vg0n1.x;
        float v34 = v13 * v33;
        float v35 = v11 + v34;
        float v36 = tl_opq(exp(tl_opq(v35, zero)), zero);
        float v37 = v31 * v36;
        float v38 = v32 + v37;
        float v39 = vg0n1.y;
        float v40 = v13 * v39;
        float v41 = v11 + v40;
        float v42 = tl_opq(exp(tl_opq(v41, zero)), zero);
        float v43 = v37 * v42;
        float v44 = v38 + v43;
        vc4 = v43;
        vc5 = v44;
      }
      const uint4 vg1 = tl_drawWords(1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
      const float2 vg1n0 = tl_boxMuller(vg1.x, vg1.y);
      float v39 = vg1n0.x;
      float v40 = v13 * v39;
      float v41 = v11 + v40;
      float v42 = tl_opq(exp(tl_opq(v41, zero)), zero);
      float v43 = vc4 * v42;
      float v44 = vc5 + v43;
      float v45 = vg1n0.y;
      float v46 = v13 * v45;
      float v47 = v11 + v46;
      float v48 = tl_opq(exp(tl_opq(v47, zero)), zero);
      float v49 = v43 * v48;
      float v50 = v44 + v49;
      float v51 = tl_opq(6.0f, zero);
      float v52 = tl_opq(tl_opq(v50, zero) / tl_opq(v51, zero), zero);
      float v53 = v52 - v1;
      float v54 = tl_opq(0.0f, zero);
      float v55 = tl_sel(tl_opq(v53, zero) >= tl_opq(v54, zero), v53, v54);
      float v56 = v3 * v4;
      float v57 = -v56;
      float v58 = tl_opq(exp(tl_opq(v57, zero)), zero);
      float v59 = v55 * v58;
      { float s = tl_red[0u + tl_lid]; float y = v59 - tl_red[128u + tl_lid]; float t = s + y; tl_red[128u + tl_lid] = (t - s) - y; tl_red[0u + tl_lid] = t; }
      { float s = tl_red[64u + tl_lid]; float y = v59 * v59 - tl_red[192u + tl_lid]; float t = s + y; tl_red[192u + tl_lid] = (t - s) - y; tl_red[64u + tl_lid] = t; }
    }
  }
  // workgroup reduction: a fixed binary tree in local memory, then one partial per sum
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint tl_st = 32u; tl_st > 0u; tl_st >>= 1u) {
    if (tl_lid < tl_st) {
      tl_red[0u + tl_lid] = tl_red[0u + tl_lid] + tl_red[0u + tl_lid + tl_st];
      tl_red[64u + tl_lid] = tl_red[64u + tl_lid] + tl_red[64u + tl_lid + tl_st];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tl_lid == 0u) {
    partials[tl_g * 2u + 0u] = tl_red[0u];
    partials[tl_g * 2u + 1u] = tl_red[64u];
  }
}
