// CUDA C++ for NVRTC: compile with --fmad=false, without --use_fast_math.
// tapelab kernel: tape asian-6, 60 nodes, tangent, time loop rolled (1 trips of 4), fp32, 1 market(s), value + Greeks, dialect cuda
// config: workgroup=64,lanes=4,sums=local,market_order=sequential,markets=copies,draws=redraw,prefill_ahead=0,layout=soa,math=ieee,philox=rolled,loops=rolled,loop_trip=calls,closed_forms=on,tangent_fma=on,tangent_chunk=0,opaque=on,first_terms=set,loads_ahead=off,workgroup_rows=0,market_unroll=1,rolled_adjoints=parity,min_blocks=0,shared_constants=on,outline_draws=off,shared_inputs=on
// config unused: first_terms=set: no adjoints (a tangent kernel, or no Greeks)
// opq: the identity on every bit pattern, opaque to the compiler (z is always 0).
static __device__ __forceinline__ float tl_opq(float x, unsigned int z) { return __uint_as_float(__float_as_uint(x) + (unsigned int)(z)); }
static __device__ __forceinline__ float tl_sel(bool c, float x, float y) { return c ? x : y; }
// Philox4x32-10, its four words (tape/philox.h).
static __device__ __forceinline__ uint4 tl_philox(unsigned int c0, unsigned int c1, unsigned int c2, unsigned int c3, unsigned int k0, unsigned int k1) {
  #pragma unroll 1
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    unsigned int hi0 = __umulhi(0xD2511F53u, c0); unsigned int lo0 = 0xD2511F53u * c0;
    unsigned int hi1 = __umulhi(0xCD9E8D57u, c2); unsigned int lo1 = 0xCD9E8D57u * c2;
    unsigned int n0 = hi1 ^ c1 ^ k0; unsigned int n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
  }
  return make_uint4(c0, c1, c2, c3);
}
// Box-Muller: draws 2p and 2p + 1 from the pair of words (a, b) (tape/philox.h).
static __device__ __forceinline__ float2 tl_boxMuller(unsigned int a, unsigned int b) {
  float u = fmaf((float)(a >> 9u), 1.1920929e-07f, 5.9604645e-08f);
  float r2 = (-2.0f) * logf(u);
  float rho = sqrtf(r2 > 0.0f ? r2 : 0.0f);
  const unsigned int n = b >> 30u;
  float f = fmaf((float)((b >> 9u) & 2097151u), 4.7683716e-07f, (-0.49999976f));
  float th = f * 1.5707964f;
  float t = th * th;
  float s = th * fmaf(fmaf(fmaf(fmaf(fmaf((-2.5052108e-08f), t, 2.7557319e-06f), t, (-0.0001984127f)), t, 0.008333334f), t, (-0.16666667f)), t, 1.0f);
  float c = fmaf(fmaf(fmaf(fmaf(fmaf(fmaf(2.0876756e-09f, t, (-2.755732e-07f)), t, 2.4801588e-05f), t, (-0.0013888889f)), t, 0.041666668f), t, (-0.5f)), t, 1.0f);
  const bool odd = (n & 1u) != 0u;
  float x = odd ? s : c;
  float y = odd ? c : s;
  return make_float2(rho * (n == 1u || n == 2u ? -x : x), rho * (n >= 2u ? -y : y));
}
// The words of draws 4g .. 4g+3 of path (pathHi:pathLo) under key (k0, k1): counter {g, 0, pathLo, pathHi}.
static __device__ __forceinline__ uint4 tl_drawWords(unsigned int g, unsigned int pathLo, unsigned int pathHi, unsigned int k0, unsigned int k1) {
  return tl_philox(g, 0u, pathLo, pathHi, k0, k1);
}
extern "C" __global__ void __launch_bounds__(64)
tapelab_kernel(const float* __restrict__ inputs, float* __restrict__ partials, float* __restrict__ scratch,
    unsigned int seedLo, unsigned int seedHi, unsigned int pathLo, unsigned int pathHi, unsigned int count, unsigned int zero, unsigned int invocations) {
  __shared__ float tl_red[1536];
  const unsigned int tl_lid = threadIdx.x;
  const unsigned int tl_g = blockIdx.x;
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
  tl_red[256u + tl_lid] = 0.0f;
  tl_red[320u + tl_lid] = 0.0f;
  tl_red[384u + tl_lid] = 0.0f;
  tl_red[448u + tl_lid] = 0.0f;
  tl_red[512u + tl_lid] = 0.0f;
  tl_red[576u + tl_lid] = 0.0f;
  tl_red[640u + tl_lid] = 0.0f;
  tl_red[704u + tl_lid] = 0.0f;
  tl_red[768u + tl_lid] = 0.0f;
  tl_red[832u + tl_lid] = 0.0f;
  tl_red[896u + tl_lid] = 0.0f;
  tl_red[960u + tl_lid] = 0.0f;
  tl_red[1024u + tl_lid] = 0.0f;
  tl_red[1088u + tl_lid] = 0.0f;
  tl_red[1152u + tl_lid] = 0.0f;
  tl_red[1216u + tl_lid] = 0.0f;
  tl_red[1280u + tl_lid] = 0.0f;
  tl_red[1344u + tl_lid] = 0.0f;
  tl_red[1408u + tl_lid] = 0.0f;
  tl_red[1472u + tl_lid] = 0.0f;
  for (unsigned int tl_j = 0u; tl_j < 4u; ++tl_j) {
    unsigned int tl_p = tl_g * 256u + tl_j * 64u + tl_lid;
    if (tl_p < count) {
      unsigned int tl_pathLo = pathLo + tl_p;
      unsigned int tl_pathHi = pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      unsigned int tl_fk0 = seedLo; unsigned int tl_fk1 = seedHi;
      float tl_ix0 = 1.0f / tl_in0_0;
      float tl_ix2 = 1.0f / tl_in0_2;
      float tl_ix3 = 1.0f / tl_in0_3;
      float tl_ix4 = 1.0f / tl_in0_4;
      // forward sweep, each value followed by its tangents (tape/tangent.h)
      float v0 = tl_in0_0;
      float t0_0 = 1.0f;
      float v1 = tl_in0_1;
      float t1_1 = 1.0f;
      float v2 = tl_in0_2;
      float t2_2 = 1.0f;
      float v3 = tl_in0_3;
      float t3_3 = 1.0f;
      float v4 = tl_in0_4;
      float t4_4 = 1.0f;
      float v5 = v2 * v2;
      float t5_2 = fmaf(t2_2, v2, (t2_2 * v2));
      float v6 = tl_opq(0.5f, zero);
      float v7 = v6 * v5;
      float t7_2 = (t5_2 * v6);
      float v8 = v3 - v7;
      float t8_2 = (-t7_2);
      float t8_3 = (t3_3);
      float v9 = tl_opq(0.16666667f, zero);
      float v10 = v4 * v9;
      float v11 = v8 * v10;
      float t11_2 = (t8_2 * v10);
      float t11_3 = (t8_3 * v10);
      float v12 = tl_opq(sqrtf(tl_opq(v10, zero)), zero);
      float t12_4 = ((v10 * tl_ix4) / (v12 + v12));
      float v13 = v2 * v12;
      float t13_4 = (t12_4 * v2);
      float v14 = tl_opq(0.0f, zero);
      // the time loop's carried values (planner/loops.h), set to what its first iteration reads
      float vc4 = v0;
      float tc4_2 = 0.0f;
      float tc4_3 = 0.0f;
      float tc4_4 = 0.0f;
      float vc5 = v14;
      float tc5_2 = 0.0f;
      float tc5_3 = 0.0f;
      float tc5_4 = 0.0f;
      #pragma unroll 1
      for (unsigned int tl_it = 0u; tl_it < 1u; ++tl_it) {  // the time loop: 1 trips of 4 step(s)
        const uint4 vg0 = tl_drawWords(0u + tl_it * 1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg0n0 = tl_boxMuller(vg0.x, vg0.y);
        float v21 = vg0n0.x;
        float v22 = v13 * v21;
        float t22_4 = (t13_4 * v21);
        float v23 = v11 + v22;
        float t23_2 = (t11_2) + ((v22 * tl_ix2));
        float t23_3 = (t11_3);
        float t23_4 = ((v11 * tl_ix4)) + (t22_4);
        float v24 = tl_opq(expf(tl_opq(v23, zero)), zero);
        float t24_2 = (t23_2 * v24);
        float t24_3 = (t23_3 * v24);
        float t24_4 = (t23_4 * v24);
        float v25 = vc4 * v24;
        float t25_2 = fmaf(t24_2, vc4, (tc4_2 * v24));
        float t25_3 = fmaf(t24_3, vc4, (tc4_3 * v24));
        float t25_4 = fmaf(t24_4, vc4, (tc4_4 * v24));
        float v26 = vc5 + v25;
        float t26_2 = (tc5_2) + (t25_2);
        float t26_3 = (tc5_3) + (t25_3);
        float t26_4 = (tc5_4) + (t25_4);
        float v27 = vg0n0.y;
        float v28 = v13 * v27;
        float t28_4 = (t13_4 * v27);
        float v29 = v11 + v28;
        float t29_2 = (t11_2) + ((v28 * tl_ix2));
        float t29_3 = (t11_3);
        float t29_4 = ((v11 * tl_ix4)) + (t28_4);
        float v30 = tl_opq(expf(tl_opq(v29, zero)), zero);
        float t30_2 = (t29_2 * v30);
        float t30_3 = (t29_3 * v30);
        float t30_4 = (t29_4 * v30);
        float v31 = v25 * v30;
        float t31_2 = fmaf(t30_2, v25, (t25_2 * v30));
        float t31_3 = fmaf(t30_3, v25, (t25_3 * v30));
        float t31_4 = fmaf(t30_4, v25, (t25_4 * v30));
        float v32 = v26 + v31;
        float t32_2 = (t26_2) + (t31_2);
        float t32_3 = (t26_3) + (t31_3);
        float t32_4 = (t26_4) + (t31_4);
        const float2 vg0n1 = tl_boxMuller(vg0.z, vg0.w);
        float v33 = vg0n1.x;
        float v34 = v13 * v33;
        float t34_4 = (t13_4 * v33);
        float v35 = v11 + v34;
        float t35_2 = (t11_2) + ((v34 * tl_ix2));
        float t35_3 = (t11_3);
        float t35_4 = ((v11 * tl_ix4)) + (t34_4);
        float v36 = tl_opq(expf(tl_opq(v35, zero)), zero);
        float t36_2 = (t35_2 * v36);
        float t36_3 = (t35_3 * v36);
        float t36_4 = (t35_4 * v36);
        float v37 = v31 * v36;
        float t37_2 = fmaf(t36_2, v31, (t31_2 * v36));
        float t37_3 = fmaf(t36_3, v31, (t31_3 * v36));
        float t37_4 = fmaf(t36_4, v31, (t31_4 * v36));
        float v38 = v32 + v37;
        float t38_2 = (t32_2) + (t37_2);
        float t38_3 = (t32_3) + (t37_3);
        float t38_4 = (t32_4) + (t37_4);
        float v39 = vg0n1.y;
        float v40 = v13 * v39;
        float t40_4 = (t13_4 * v39);
        float v41 = v11 + v40;
        float t41_2 = (t11_2) + ((v40 * tl_ix2));
        float t41_3 = (t11_3);
        float t41_4 = ((v11 * tl_ix4)) + (t40_4);
        float v42 = tl_opq(expf(tl_opq(v41, zero)), zero);
        float t42_2 = (t41_2 * v42);
        float t42_3 = (t41_3 * v42);
        float t42_4 = (t41_4 * v42);
        float v43 = v37 * v42;
        float t43_2 = fmaf(t42_2, v37, (t37_2 * v42));
        float t43_3 = fmaf(t42_3, v37, (t37_3 * v42));
        float t43_4 = fmaf(t42_4, v37, (t37_4 * v42));
        float v44 = v38 + v43;
        float t44_2 = (t38_2) + (t43_2);
        float t44_3 = (t38_3) + (t43_3);
        float t44_4 = (t38_4) + (t43_4);
        vc4 = v43;
        tc4_2 = t43_2;
        tc4_3 = t43_3;
        tc4_4 = t43_4;
        vc5 = v44;
        tc5_2 = t44_2;
        tc5_3 = t44_3;
        tc5_4 = t44_4;
      }
      const uint4 vg1 = tl_drawWords(1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
      const float2 vg1n0 = tl_boxMuller(vg1.x, vg1.y);
      float v39 = vg1n0.x;
      float v40 = v13 * v39;
      float t40_4 = (t13_4 * v39);
      float v41 = v11 + v40;
      float t41_2 = (t11_2) + ((v40 * tl_ix2));
      float t41_3 = (t11_3);
      float t41_4 = ((v11 * tl_ix4)) + (t40_4);
      float v42 = tl_opq(expf(tl_opq(v41, zero)), zero);
      float t42_2 = (t41_2 * v42);
      float t42_3 = (t41_3 * v42);
      float t42_4 = (t41_4 * v42);
      float v43 = vc4 * v42;
      float t43_2 = fmaf(t42_2, vc4, (tc4_2 * v42));
      float t43_3 = fmaf(t42_3, vc4, (tc4_3 * v42));
      float t43_4 = fmaf(t42_4, vc4, (tc4_4 * v42));
      float v44 = vc5 + v43;
      float t44_2 = (tc5_2) + (t43_2);
      float t44_3 = (tc5_3) + (t43_3);
      float t44_4 = (tc5_4) + (t43_4);
      float v45 = vg1n0.y;
      float v46 = v13 * v45;
      float t46_4 = (t13_4 * v45);
      float v47 = v11 + v46;
      float t47_2 = (t11_2) + ((v46 * tl_ix2));
      float t47_3 = (t11_3);
      float t47_4 = ((v11 * tl_ix4)) + (t46_4);
      float v48 = tl_opq(expf(tl_opq(v47, zero)), zero);
      float t48_2 = (t47_2 * v48);
      float t48_3 = (t47_3 * v48);
      float t48_4 = (t47_4 * v48);
      float v49 = v43 * v48;
      float t49_2 = fmaf(t48_2, v43, (t43_2 * v48));
      float t49_3 = fmaf(t48_3, v43, (t43_3 * v48));
      float t49_4 = fmaf(t48_4, v43, (t43_4 * v48));
      float v50 = v44 + v49;
      float t50_2 = (t44_2) + (t49_2);
      float t50_3 = (t44_3) + (t49_3);
      float t50_4 = (t44_4) + (t49_4);
      float v51 = tl_opq(6.0f, zero);
      float v52 = tl_opq(tl_opq(v50, zero) / tl_opq(v51, zero), zero);
      float t52_2 = (t50_2 / tl_opq(v51, zero));
      float t52_3 = (t50_3 / tl_opq(v51, zero));
      float t52_4 = (t50_4 / tl_opq(v51, zero));
      float v53 = v52 - v1;
      float t53_0 = ((v52 * tl_ix0));
      float t53_1 = (-t1_1);
      float t53_2 = (t52_2);
      float t53_3 = (t52_3);
      float t53_4 = (t52_4);
      float v54 = tl_opq(0.0f, zero);
      float v55 = tl_sel(tl_opq(v53, zero) >= tl_opq(v54, zero), v53, v54);
      float t55_0 = (tl_sel(tl_opq(v53, zero) >= tl_opq(v54, zero), t53_0, 0.0f));
      float t55_1 = (tl_sel(tl_opq(v53, zero) >= tl_opq(v54, zero), t53_1, 0.0f));
      float t55_2 = (tl_sel(tl_opq(v53, zero) >= tl_opq(v54, zero), t53_2, 0.0f));
      float t55_3 = (tl_sel(tl_opq(v53, zero) >= tl_opq(v54, zero), t53_3, 0.0f));
      float t55_4 = (tl_sel(tl_opq(v53, zero) >= tl_opq(v54, zero), t53_4, 0.0f));
      float v56 = v3 * v4;
      float v57 = -v56;
      float v58 = tl_opq(expf(tl_opq(v57, zero)), zero);
      float t58_3 = ((v57 * tl_ix3) * v58);
      float t58_4 = ((v57 * tl_ix4) * v58);
      float v59 = v55 * v58;
      float t59_0 = (t55_0 * v58);
      float t59_1 = (t55_1 * v58);
      float t59_2 = (t55_2 * v58);
      float t59_3 = fmaf(t58_3, v55, (t55_3 * v58));
      float t59_4 = fmaf(t58_4, v55, (t55_4 * v58));
      { float s = tl_red[0u + tl_lid]; float y = v59 - tl_red[768u + tl_lid]; float t = s + y; tl_red[768u + tl_lid] = (t - s) - y; tl_red[0u + tl_lid] = t; }
      { float s = tl_red[384u + tl_lid]; float y = v59 * v59 - tl_red[1152u + tl_lid]; float t = s + y; tl_red[1152u + tl_lid] = (t - s) - y; tl_red[384u + tl_lid] = t; }
      { float s = tl_red[64u + tl_lid]; float y = t59_0 - tl_red[832u + tl_lid]; float t = s + y; tl_red[832u + tl_lid] = (t - s) - y; tl_red[64u + tl_lid] = t; }
      { float s = tl_red[448u + tl_lid]; float y = t59_0 * t59_0 - tl_red[1216u + tl_lid]; float t = s + y; tl_red[1216u + tl_lid] = (t - s) - y; tl_red[448u + tl_lid] = t; }
      { float s = tl_red[128u + tl_lid]; float y = t59_1 - tl_red[896u + tl_lid]; float t = s + y; tl_red[896u + tl_lid] = (t - s) - y; tl_red[128u + tl_lid] = t; }
      { float s = tl_red[512u + tl_lid]; float y = t59_1 * t59_1 - tl_red[1280u + tl_lid]; float t = s + y; tl_red[1280u + tl_lid] = (t - s) - y; tl_red[512u + tl_lid] = t; }
      { float s = tl_red[192u + tl_lid]; float y = t59_2 - tl_red[960u + tl_lid]; float t = s + y; tl_red[960u + tl_lid] = (t - s) - y; tl_red[192u + tl_lid] = t; }
      { float s = tl_red[576u + tl_lid]; float y = t59_2 * t59_2 - tl_red[1344u + tl_lid]; float t = s + y; tl_red[1344u + tl_lid] = (t - s) - y; tl_red[576u + tl_lid] = t; }
      { float s = tl_red[256u + tl_lid]; float y = t59_3 - tl_red[1024u + tl_lid]; float t = s + y; tl_red[1024u + tl_lid] = (t - s) - y; tl_red[256u + tl_lid] = t; }
      { float s = tl_red[640u + tl_lid]; float y = t59_3 * t59_3 - tl_red[1408u + tl_lid]; float t = s + y; tl_red[1408u + tl_lid] = (t - s) - y; tl_red[640u + tl_lid] = t; }
      { float s = tl_red[320u + tl_lid]; float y = t59_4 - tl_red[1088u + tl_lid]; float t = s + y; tl_red[1088u + tl_lid] = (t - s) - y; tl_red[320u + tl_lid] = t; }
      { float s = tl_red[704u + tl_lid]; float y = t59_4 * t59_4 - tl_red[1472u + tl_lid]; float t = s + y; tl_red[1472u + tl_lid] = (t - s) - y; tl_red[704u + tl_lid] = t; }
    }
  }
  // workgroup reduction: a fixed binary tree in local memory, then one partial per sum
  __syncthreads();
  for (unsigned int tl_st = 32u; tl_st > 0u; tl_st >>= 1u) {
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
    __syncthreads();
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
