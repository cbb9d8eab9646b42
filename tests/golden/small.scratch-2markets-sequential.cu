// CUDA C++ for NVRTC: compile with --fmad=false, without --use_fast_math.
// tapelab kernel: tape golden-small, 21 nodes, scratch (3 segments, golden), soa, 9 slots, markets sequential, fp32, 2 market(s), value + Greeks, dialect cuda
// config: workgroup=64,lanes=4,sums=local,market_order=sequential,markets=copies,draws=redraw,prefill_ahead=0,layout=soa,math=ieee,philox=rolled,loops=unrolled,loop_trip=calls,closed_forms=off,tangent_fma=off,tangent_chunk=0,opaque=on,first_terms=set,loads_ahead=off,workgroup_rows=0,market_unroll=1,rolled_adjoints=parity,min_blocks=0,shared_constants=on,outline_draws=off,shared_inputs=on
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
  const unsigned int tl_tid = tl_g * 64u + tl_lid;
  float tl_in0_0 = inputs[0u];
  float tl_in0_1 = inputs[1u];
  float tl_in1_0 = inputs[2u];
  float tl_in1_1 = inputs[3u];
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
      unsigned int tl_inv = invocations + (tl_j & zero);  // loop-variant: see scratchStore
      unsigned int tl_pathLo = pathLo + tl_p;
      unsigned int tl_pathHi = pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      unsigned int tl_fk0 = seedLo; unsigned int tl_fk1 = seedHi;
      // persistent values: bookmarks, inputs, output
      float v0_0;
      float v0_1;
      float v1_0;
      float v1_1;
      float v3;
      float v4_0;
      float v4_1;
      float v8_0;
      float v8_1;
      float v9_0;
      float v9_1;
      float v16_0;
      float v16_1;
      float v20_0;
      float v20_1;
      // forward sweep, one block per segment
      {  // segment 0: nodes [0, 9)
        v0_0 = tl_in0_0;
        v0_1 = tl_in1_0;
        v1_0 = tl_in0_1;
        v1_1 = tl_in1_1;
        const uint4 vg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg0n0 = tl_boxMuller(vg0.x, vg0.y);
        float v2 = vg0n0.x;
        v3 = vg0n0.y;
        v4_0 = tl_opq(sqrtf(tl_opq(v1_0, zero)), zero);
        v4_1 = tl_opq(sqrtf(tl_opq(v1_1, zero)), zero);
        float v5_0 = v0_0 * v2;
        float v5_1 = v0_1 * v2;
        float v6 = tl_opq(0.5f, zero);
        float v7_0 = v5_0 * v6;
        float v7_1 = v5_1 * v6;
        v8_0 = tl_opq(expf(tl_opq(v7_0, zero)), zero);
        v8_1 = tl_opq(expf(tl_opq(v7_1, zero)), zero);
        scratch[0u * tl_inv + tl_tid] = v3;
        scratch[1u * tl_inv + tl_tid] = v4_0;
        scratch[2u * tl_inv + tl_tid] = v4_1;
        scratch[3u * tl_inv + tl_tid] = v8_0;
        scratch[4u * tl_inv + tl_tid] = v8_1;
      }
      {  // segment 1: nodes [9, 17)
        v9_0 = v8_0 + v4_0;
        v9_1 = v8_1 + v4_1;
        float v10_0 = tl_opq(tl_opq(v1_0, zero) / tl_opq(v0_0, zero), zero);
        float v10_1 = tl_opq(tl_opq(v1_1, zero) / tl_opq(v0_1, zero), zero);
        float v11_0 = tl_opq(logf(tl_opq(v9_0, zero)), zero);
        float v11_1 = tl_opq(logf(tl_opq(v9_1, zero)), zero);
        float v12_0 = v11_0 - v10_0;
        float v12_1 = v11_1 - v10_1;
        float v13_0 = tl_sel(tl_opq(v3, zero) <= tl_opq(v1_0, zero), v3, v1_0);
        float v13_1 = tl_sel(tl_opq(v3, zero) <= tl_opq(v1_1, zero), v3, v1_1);
        float v14_0 = -v9_0;
        float v14_1 = -v9_1;
        float v15_0 = tl_sel(tl_opq(v12_0, zero) >= tl_opq(v14_0, zero), v12_0, v14_0);
        float v15_1 = tl_sel(tl_opq(v12_1, zero) >= tl_opq(v14_1, zero), v12_1, v14_1);
        v16_0 = v15_0 * v13_0;
        v16_1 = v15_1 * v13_1;
        scratch[5u * tl_inv + tl_tid] = v9_0;
        scratch[6u * tl_inv + tl_tid] = v9_1;
        scratch[7u * tl_inv + tl_tid] = v16_0;
        scratch[8u * tl_inv + tl_tid] = v16_1;
      }
      {  // segment 2: nodes [17, 21)
        float v17_0 = -v16_0;
        float v17_1 = -v16_1;
        float v18_0 = tl_sel(tl_opq(v17_0, zero) < 0.0f, -v17_0, v17_0);
        float v18_1 = tl_sel(tl_opq(v17_1, zero) < 0.0f, -v17_1, v17_1);
        float v19_0 = v18_0 + v0_0;
        float v19_1 = v18_1 + v0_1;
        v20_0 = v19_0 * v9_0;
        v20_1 = v19_1 * v9_1;
      }
      // reverse sweep: segments last to first, each recomputed from its bookmarks
      float d0_0 = 0.0f;
      float d0_1 = 0.0f;
      float d1_0 = 0.0f;
      float d1_1 = 0.0f;
      float d4_0 = 0.0f;
      float d4_1 = 0.0f;
      float d8_0 = 0.0f;
      float d8_1 = 0.0f;
      float d9_0 = 0.0f;
      float d9_1 = 0.0f;
      float d16_0 = 0.0f;
      float d16_1 = 0.0f;
      float d20_0 = 1.0f;
      float d20_1 = 1.0f;
      {  // segment 2
        {  // market 0
          float w0_0 = tl_opq(v0_0, zero);
          float w9_0 = scratch[5u * (tl_inv ^ zero) + tl_tid];
          float w16_0 = scratch[7u * (tl_inv ^ zero) + tl_tid];
          float w17_0 = -w16_0;
          float w18_0 = tl_sel(tl_opq(w17_0, zero) < 0.0f, -w17_0, w17_0);
          float w19_0 = w18_0 + w0_0;
          float d19_0 = d20_0 * w9_0;
          d9_0 += d20_0 * w19_0;
          float d18_0 = d19_0;
          d0_0 += d19_0;
          float d17_0 = tl_sel(tl_opq(w17_0, zero) < 0.0f, -d18_0, d18_0);
          d16_0 += -d17_0;
        }
        {  // market 1
          float w0_1 = tl_opq(v0_1, zero);
          float w9_1 = scratch[6u * (tl_inv ^ zero) + tl_tid];
          float w16_1 = scratch[8u * (tl_inv ^ zero) + tl_tid];
          float w17_1 = -w16_1;
          float w18_1 = tl_sel(tl_opq(w17_1, zero) < 0.0f, -w17_1, w17_1);
          float w19_1 = w18_1 + w0_1;
          float d19_1 = d20_1 * w9_1;
          d9_1 += d20_1 * w19_1;
          float d18_1 = d19_1;
          d0_1 += d19_1;
          float d17_1 = tl_sel(tl_opq(w17_1, zero) < 0.0f, -d18_1, d18_1);
          d16_1 += -d17_1;
        }
      }
      {  // segment 1
        float w3 = scratch[0u * (tl_inv ^ zero) + tl_tid];
        {  // market 0
          float w0_0 = tl_opq(v0_0, zero);
          float w1_0 = tl_opq(v1_0, zero);
          float w4_0 = scratch[1u * (tl_inv ^ zero) + tl_tid];
          float w8_0 = scratch[3u * (tl_inv ^ zero) + tl_tid];
          float w9_0 = w8_0 + w4_0;
          float w10_0 = tl_opq(tl_opq(w1_0, zero) / tl_opq(w0_0, zero), zero);
          float w11_0 = tl_opq(logf(tl_opq(w9_0, zero)), zero);
          float w12_0 = w11_0 - w10_0;
          float w13_0 = tl_sel(tl_opq(w3, zero) <= tl_opq(w1_0, zero), w3, w1_0);
          float w14_0 = -w9_0;
          float w15_0 = tl_sel(tl_opq(w12_0, zero) >= tl_opq(w14_0, zero), w12_0, w14_0);
          float d15_0 = d16_0 * w13_0;
          float d13_0 = d16_0 * w15_0;
          float d12_0 = tl_sel(tl_opq(w12_0, zero) >= tl_opq(w14_0, zero), d15_0, 0.0f);
          float d14_0 = tl_sel(tl_opq(w12_0, zero) >= tl_opq(w14_0, zero), 0.0f, d15_0);
          d9_0 += -d14_0;
          d1_0 += tl_sel(tl_opq(w3, zero) <= tl_opq(w1_0, zero), 0.0f, d13_0);
          float d11_0 = d12_0;
          float d10_0 = -d12_0;
          d9_0 += d11_0 / tl_opq(w9_0, zero);
          d1_0 += d10_0 / tl_opq(w0_0, zero);
          d0_0 += -(d10_0 * w10_0) / tl_opq(w0_0, zero);
          d8_0 += d9_0;
          d4_0 += d9_0;
        }
        {  // market 1
          float w0_1 = tl_opq(v0_1, zero);
          float w1_1 = tl_opq(v1_1, zero);
          float w4_1 = scratch[2u * (tl_inv ^ zero) + tl_tid];
          float w8_1 = scratch[4u * (tl_inv ^ zero) + tl_tid];
          float w9_1 = w8_1 + w4_1;
          float w10_1 = tl_opq(tl_opq(w1_1, zero) / tl_opq(w0_1, zero), zero);
          float w11_1 = tl_opq(logf(tl_opq(w9_1, zero)), zero);
          float w12_1 = w11_1 - w10_1;
          float w13_1 = tl_sel(tl_opq(w3, zero) <= tl_opq(w1_1, zero), w3, w1_1);
          float w14_1 = -w9_1;
          float w15_1 = tl_sel(tl_opq(w12_1, zero) >= tl_opq(w14_1, zero), w12_1, w14_1);
          float d15_1 = d16_1 * w13_1;
          float d13_1 = d16_1 * w15_1;
          float d12_1 = tl_sel(tl_opq(w12_1, zero) >= tl_opq(w14_1, zero), d15_1, 0.0f);
          float d14_1 = tl_sel(tl_opq(w12_1, zero) >= tl_opq(w14_1, zero), 0.0f, d15_1);
          d9_1 += -d14_1;
          d1_1 += tl_sel(tl_opq(w3, zero) <= tl_opq(w1_1, zero), 0.0f, d13_1);
          float d11_1 = d12_1;
          float d10_1 = -d12_1;
          d9_1 += d11_1 / tl_opq(w9_1, zero);
          d1_1 += d10_1 / tl_opq(w0_1, zero);
          d0_1 += -(d10_1 * w10_1) / tl_opq(w0_1, zero);
          d8_1 += d9_1;
          d4_1 += d9_1;
        }
      }
      {  // segment 0
        unsigned int tl_rk0 = seedLo ^ zero; unsigned int tl_rk1 = seedHi ^ zero;
        const uint4 wg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_rk0, tl_rk1);
        const float2 wg0n0 = tl_boxMuller(wg0.x, wg0.y);
        float w2 = wg0n0.x;
        float w6 = tl_opq(0.5f, zero);
        {  // market 0
          float w0_0 = tl_opq(v0_0, zero);
          float w1_0 = tl_opq(v1_0, zero);
          float w4_0 = tl_opq(sqrtf(tl_opq(w1_0, zero)), zero);
          float w5_0 = w0_0 * w2;
          float w7_0 = w5_0 * w6;
          float w8_0 = tl_opq(expf(tl_opq(w7_0, zero)), zero);
          float d7_0 = d8_0 * w8_0;
          float d5_0 = d7_0 * w6;
          d0_0 += d5_0 * w2;
          d1_0 += d4_0 / (w4_0 + w4_0);
        }
        {  // market 1
          float w0_1 = tl_opq(v0_1, zero);
          float w1_1 = tl_opq(v1_1, zero);
          float w4_1 = tl_opq(sqrtf(tl_opq(w1_1, zero)), zero);
          float w5_1 = w0_1 * w2;
          float w7_1 = w5_1 * w6;
          float w8_1 = tl_opq(expf(tl_opq(w7_1, zero)), zero);
          float d7_1 = d8_1 * w8_1;
          float d5_1 = d7_1 * w6;
          d0_1 += d5_1 * w2;
          d1_1 += d4_1 / (w4_1 + w4_1);
        }
      }
      { float s = tl_red[0u + tl_lid]; float y = v20_0 - tl_red[768u + tl_lid]; float t = s + y; tl_red[768u + tl_lid] = (t - s) - y; tl_red[0u + tl_lid] = t; }
      { float s = tl_red[192u + tl_lid]; float y = v20_0 * v20_0 - tl_red[960u + tl_lid]; float t = s + y; tl_red[960u + tl_lid] = (t - s) - y; tl_red[192u + tl_lid] = t; }
      { float s = tl_red[64u + tl_lid]; float y = d0_0 - tl_red[832u + tl_lid]; float t = s + y; tl_red[832u + tl_lid] = (t - s) - y; tl_red[64u + tl_lid] = t; }
      { float s = tl_red[256u + tl_lid]; float y = d0_0 * d0_0 - tl_red[1024u + tl_lid]; float t = s + y; tl_red[1024u + tl_lid] = (t - s) - y; tl_red[256u + tl_lid] = t; }
      { float s = tl_red[128u + tl_lid]; float y = d1_0 - tl_red[896u + tl_lid]; float t = s + y; tl_red[896u + tl_lid] = (t - s) - y; tl_red[128u + tl_lid] = t; }
      { float s = tl_red[320u + tl_lid]; float y = d1_0 * d1_0 - tl_red[1088u + tl_lid]; float t = s + y; tl_red[1088u + tl_lid] = (t - s) - y; tl_red[320u + tl_lid] = t; }
      { float s = tl_red[384u + tl_lid]; float y = v20_1 - tl_red[1152u + tl_lid]; float t = s + y; tl_red[1152u + tl_lid] = (t - s) - y; tl_red[384u + tl_lid] = t; }
      { float s = tl_red[576u + tl_lid]; float y = v20_1 * v20_1 - tl_red[1344u + tl_lid]; float t = s + y; tl_red[1344u + tl_lid] = (t - s) - y; tl_red[576u + tl_lid] = t; }
      { float s = tl_red[448u + tl_lid]; float y = d0_1 - tl_red[1216u + tl_lid]; float t = s + y; tl_red[1216u + tl_lid] = (t - s) - y; tl_red[448u + tl_lid] = t; }
      { float s = tl_red[640u + tl_lid]; float y = d0_1 * d0_1 - tl_red[1408u + tl_lid]; float t = s + y; tl_red[1408u + tl_lid] = (t - s) - y; tl_red[640u + tl_lid] = t; }
      { float s = tl_red[512u + tl_lid]; float y = d1_1 - tl_red[1280u + tl_lid]; float t = s + y; tl_red[1280u + tl_lid] = (t - s) - y; tl_red[512u + tl_lid] = t; }
      { float s = tl_red[704u + tl_lid]; float y = d1_1 * d1_1 - tl_red[1472u + tl_lid]; float t = s + y; tl_red[1472u + tl_lid] = (t - s) - y; tl_red[704u + tl_lid] = t; }
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
