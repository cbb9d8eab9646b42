// HIP for hipRTC: compile with -ffp-contract=off, without -ffast-math.
// tapelab kernel: tape golden-small, 21 nodes, register (3 segments, golden), fp32, 1 market(s), value + Greeks, dialect hip
// config: workgroup=64,lanes=4,sums=local,market_order=joint,markets=copies,draws=redraw,prefill_ahead=0,layout=soa,math=ieee,philox=rolled,loops=unrolled,loop_trip=calls,closed_forms=off,tangent_fma=off,tangent_chunk=0,opaque=on,first_terms=set,loads_ahead=off,workgroup_rows=0,market_unroll=1,rolled_adjoints=parity,min_blocks=0,shared_constants=on,outline_draws=off,shared_inputs=on
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
  __shared__ float tl_red[768];
  const unsigned int tl_lid = threadIdx.x;
  const unsigned int tl_g = blockIdx.x;
  float tl_in0_0 = inputs[0u];
  float tl_in0_1 = inputs[1u];
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
  for (unsigned int tl_j = 0u; tl_j < 4u; ++tl_j) {
    unsigned int tl_p = tl_g * 256u + tl_j * 64u + tl_lid;
    if (tl_p < count) {
      unsigned int tl_pathLo = pathLo + tl_p;
      unsigned int tl_pathHi = pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      unsigned int tl_fk0 = seedLo; unsigned int tl_fk1 = seedHi;
      // persistent values: bookmarks, inputs, output
      float v0;
      float v1;
      float v3;
      float v4;
      float v8;
      float v9;
      float v16;
      float v20;
      // forward sweep, one block per segment
      {  // segment 0: nodes [0, 9)
        v0 = tl_in0_0;
        v1 = tl_in0_1;
        const uint4 vg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg0n0 = tl_boxMuller(vg0.x, vg0.y);
        float v2 = vg0n0.x;
        v3 = vg0n0.y;
        v4 = tl_opq(sqrtf(tl_opq(v1, zero)), zero);
        float v5 = v0 * v2;
        float v6 = tl_opq(0.5f, zero);
        float v7 = v5 * v6;
        v8 = tl_opq(expf(tl_opq(v7, zero)), zero);
      }
      {  // segment 1: nodes [9, 17)
        v9 = v8 + v4;
        float v10 = tl_opq(tl_opq(v1, zero) / tl_opq(v0, zero), zero);
        float v11 = tl_opq(logf(tl_opq(v9, zero)), zero);
        float v12 = v11 - v10;
        float v13 = tl_sel(tl_opq(v3, zero) <= tl_opq(v1, zero), v3, v1);
        float v14 = -v9;
        float v15 = tl_sel(tl_opq(v12, zero) >= tl_opq(v14, zero), v12, v14);
        v16 = v15 * v13;
      }
      {  // segment 2: nodes [17, 21)
        float v17 = -v16;
        float v18 = tl_sel(tl_opq(v17, zero) < 0.0f, -v17, v17);
        float v19 = v18 + v0;
        v20 = v19 * v9;
      }
      // reverse sweep: segments last to first, each recomputed from its bookmarks
      float d0 = 0.0f;
      float d1 = 0.0f;
      float d4 = 0.0f;
      float d8 = 0.0f;
      float d9 = 0.0f;
      float d16 = 0.0f;
      float d20 = 1.0f;
      {  // segment 2
        float w0 = tl_opq(v0, zero);
        float w9 = tl_opq(v9, zero);
        float w16 = tl_opq(v16, zero);
        float w17 = -w16;
        float w18 = tl_sel(tl_opq(w17, zero) < 0.0f, -w17, w17);
        float w19 = w18 + w0;
        float d19 = d20 * w9;
        d9 += d20 * w19;
        float d18 = d19;
        d0 += d19;
        float d17 = tl_sel(tl_opq(w17, zero) < 0.0f, -d18, d18);
        d16 += -d17;
      }
      {  // segment 1
        float w0 = tl_opq(v0, zero);
        float w1 = tl_opq(v1, zero);
        float w3 = tl_opq(v3, zero);
        float w4 = tl_opq(v4, zero);
        float w8 = tl_opq(v8, zero);
        float w9 = w8 + w4;
        float w10 = tl_opq(tl_opq(w1, zero) / tl_opq(w0, zero), zero);
        float w11 = tl_opq(logf(tl_opq(w9, zero)), zero);
        float w12 = w11 - w10;
        float w13 = tl_sel(tl_opq(w3, zero) <= tl_opq(w1, zero), w3, w1);
        float w14 = -w9;
        float w15 = tl_sel(tl_opq(w12, zero) >= tl_opq(w14, zero), w12, w14);
        float d15 = d16 * w13;
        float d13 = d16 * w15;
        float d12 = tl_sel(tl_opq(w12, zero) >= tl_opq(w14, zero), d15, 0.0f);
        float d14 = tl_sel(tl_opq(w12, zero) >= tl_opq(w14, zero), 0.0f, d15);
        d9 += -d14;
        d1 += tl_sel(tl_opq(w3, zero) <= tl_opq(w1, zero), 0.0f, d13);
        float d11 = d12;
        float d10 = -d12;
        d9 += d11 / tl_opq(w9, zero);
        d1 += d10 / tl_opq(w0, zero);
        d0 += -(d10 * w10) / tl_opq(w0, zero);
        d8 += d9;
        d4 += d9;
      }
      {  // segment 0
        unsigned int tl_rk0 = seedLo ^ zero; unsigned int tl_rk1 = seedHi ^ zero;
        float w0 = tl_opq(v0, zero);
        float w1 = tl_opq(v1, zero);
        const uint4 wg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_rk0, tl_rk1);
        const float2 wg0n0 = tl_boxMuller(wg0.x, wg0.y);
        float w2 = wg0n0.x;
        float w4 = tl_opq(sqrtf(tl_opq(w1, zero)), zero);
        float w5 = w0 * w2;
        float w6 = tl_opq(0.5f, zero);
        float w7 = w5 * w6;
        float w8 = tl_opq(expf(tl_opq(w7, zero)), zero);
        float d7 = d8 * w8;
        float d5 = d7 * w6;
        d0 += d5 * w2;
        d1 += d4 / (w4 + w4);
      }
      { float s = tl_red[0u + tl_lid]; float y = v20 - tl_red[384u + tl_lid]; float t = s + y; tl_red[384u + tl_lid] = (t - s) - y; tl_red[0u + tl_lid] = t; }
      { float s = tl_red[192u + tl_lid]; float y = v20 * v20 - tl_red[576u + tl_lid]; float t = s + y; tl_red[576u + tl_lid] = (t - s) - y; tl_red[192u + tl_lid] = t; }
      { float s = tl_red[64u + tl_lid]; float y = d0 - tl_red[448u + tl_lid]; float t = s + y; tl_red[448u + tl_lid] = (t - s) - y; tl_red[64u + tl_lid] = t; }
      { float s = tl_red[256u + tl_lid]; float y = d0 * d0 - tl_red[640u + tl_lid]; float t = s + y; tl_red[640u + tl_lid] = (t - s) - y; tl_red[256u + tl_lid] = t; }
      { float s = tl_red[128u + tl_lid]; float y = d1 - tl_red[512u + tl_lid]; float t = s + y; tl_red[512u + tl_lid] = (t - s) - y; tl_red[128u + tl_lid] = t; }
      { float s = tl_red[320u + tl_lid]; float y = d1 * d1 - tl_red[704u + tl_lid]; float t = s + y; tl_red[704u + tl_lid] = (t - s) - y; tl_red[320u + tl_lid] = t; }
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
    }
    __syncthreads();
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
