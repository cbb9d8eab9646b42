// CUDA C++ for NVRTC: compile with --fmad=false, without --use_fast_math.
// tapelab kernel: tape asian-252, 1536 nodes, register (16 segments, periodic), markets sequential, segments 1..14 rolled, draws stored in scratch, fp32, 7 market(s), value + Greeks, dialect cuda
// config: workgroup=64,lanes=1,sums=registers,market_order=sequential,markets=loop,draws=stored,prefill_ahead=0,layout=soa,math=ieee,philox=unrolled,loops=rolled,loop_trip=calls,closed_forms=on,tangent_fma=on,tangent_chunk=0,opaque=on,first_terms=set,loads_ahead=on,min_blocks=12,shared_constants=on,outline_draws=off,shared_inputs=on,cuda.reduce=beside,cuda.dispatches=4
// inputs every market shares, read once: strike vol rate maturity
// opq: the identity on every bit pattern, opaque to the compiler (z is always 0).
static __device__ __forceinline__ float tl_opq(float x, unsigned int z) { return __uint_as_float(__float_as_uint(x) + (unsigned int)(z)); }
static __device__ __forceinline__ float tl_sel(bool c, float x, float y) { return c ? x : y; }
// Philox4x32-10, its four words (tape/philox.h).
static __device__ __forceinline__ uint4 tl_philox(unsigned int c0, unsigned int c1, unsigned int c2, unsigned int c3, unsigned int k0, unsigned int k1) {
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
extern "C" __global__ void __launch_bounds__(64, 12)
tapelab_kernel(const float* __restrict__ inputs, float* __restrict__ partials, float* __restrict__ scratch,
    unsigned int seedLo, unsigned int seedHi, unsigned int pathLo, unsigned int pathHi, unsigned int count, unsigned int zero, unsigned int invocations) {
  __shared__ float tl_red[1024];
  const unsigned int tl_lid = threadIdx.x;
  const unsigned int tl_g = blockIdx.x;
  const unsigned int tl_tid = tl_g * 64u + tl_lid;
  float tl_in0_0 = inputs[0u];
  float tl_in0_1 = inputs[1u];
  float tl_in0_2 = inputs[2u];
  float tl_in0_3 = inputs[3u];
  float tl_in0_4 = inputs[4u];
  float tl_in1_0 = inputs[5u];
  float tl_in2_0 = inputs[10u];
  float tl_in3_0 = inputs[15u];
  float tl_in4_0 = inputs[20u];
  float tl_in5_0 = inputs[25u];
  float tl_in6_0 = inputs[30u];
  // Kahan sums per market: value, adjoints, then their squares.
  float tl_s0 = 0.0f; float tl_c0 = 0.0f;
  float tl_s1 = 0.0f; float tl_c1 = 0.0f;
  float tl_s2 = 0.0f; float tl_c2 = 0.0f;
  float tl_s3 = 0.0f; float tl_c3 = 0.0f;
  float tl_s4 = 0.0f; float tl_c4 = 0.0f;
  float tl_s5 = 0.0f; float tl_c5 = 0.0f;
  float tl_s6 = 0.0f; float tl_c6 = 0.0f;
  float tl_s7 = 0.0f; float tl_c7 = 0.0f;
  float tl_s8 = 0.0f; float tl_c8 = 0.0f;
  float tl_s9 = 0.0f; float tl_c9 = 0.0f;
  float tl_s10 = 0.0f; float tl_c10 = 0.0f;
  float tl_s11 = 0.0f; float tl_c11 = 0.0f;
  float tl_s12 = 0.0f; float tl_c12 = 0.0f;
  float tl_s13 = 0.0f; float tl_c13 = 0.0f;
  float tl_s14 = 0.0f; float tl_c14 = 0.0f;
  float tl_s15 = 0.0f; float tl_c15 = 0.0f;
  float tl_s16 = 0.0f; float tl_c16 = 0.0f;
  float tl_s17 = 0.0f; float tl_c17 = 0.0f;
  float tl_s18 = 0.0f; float tl_c18 = 0.0f;
  float tl_s19 = 0.0f; float tl_c19 = 0.0f;
  float tl_s20 = 0.0f; float tl_c20 = 0.0f;
  float tl_s21 = 0.0f; float tl_c21 = 0.0f;
  float tl_s22 = 0.0f; float tl_c22 = 0.0f;
  float tl_s23 = 0.0f; float tl_c23 = 0.0f;
  float tl_s24 = 0.0f; float tl_c24 = 0.0f;
  float tl_s25 = 0.0f; float tl_c25 = 0.0f;
  float tl_s26 = 0.0f; float tl_c26 = 0.0f;
  float tl_s27 = 0.0f; float tl_c27 = 0.0f;
  float tl_s28 = 0.0f; float tl_c28 = 0.0f;
  float tl_s29 = 0.0f; float tl_c29 = 0.0f;
  float tl_s30 = 0.0f; float tl_c30 = 0.0f;
  float tl_s31 = 0.0f; float tl_c31 = 0.0f;
  float tl_s32 = 0.0f; float tl_c32 = 0.0f;
  float tl_s33 = 0.0f; float tl_c33 = 0.0f;
  float tl_s34 = 0.0f; float tl_c34 = 0.0f;
  float tl_s35 = 0.0f; float tl_c35 = 0.0f;
  float tl_s36 = 0.0f; float tl_c36 = 0.0f;
  float tl_s37 = 0.0f; float tl_c37 = 0.0f;
  float tl_s38 = 0.0f; float tl_c38 = 0.0f;
  float tl_s39 = 0.0f; float tl_c39 = 0.0f;
  float tl_s40 = 0.0f; float tl_c40 = 0.0f;
  float tl_s41 = 0.0f; float tl_c41 = 0.0f;
  float tl_s42 = 0.0f; float tl_c42 = 0.0f;
  float tl_s43 = 0.0f; float tl_c43 = 0.0f;
  float tl_s44 = 0.0f; float tl_c44 = 0.0f;
  float tl_s45 = 0.0f; float tl_c45 = 0.0f;
  float tl_s46 = 0.0f; float tl_c46 = 0.0f;
  float tl_s47 = 0.0f; float tl_c47 = 0.0f;
  float tl_s48 = 0.0f; float tl_c48 = 0.0f;
  float tl_s49 = 0.0f; float tl_c49 = 0.0f;
  float tl_s50 = 0.0f; float tl_c50 = 0.0f;
  float tl_s51 = 0.0f; float tl_c51 = 0.0f;
  float tl_s52 = 0.0f; float tl_c52 = 0.0f;
  float tl_s53 = 0.0f; float tl_c53 = 0.0f;
  float tl_s54 = 0.0f; float tl_c54 = 0.0f;
  float tl_s55 = 0.0f; float tl_c55 = 0.0f;
  float tl_s56 = 0.0f; float tl_c56 = 0.0f;
  float tl_s57 = 0.0f; float tl_c57 = 0.0f;
  float tl_s58 = 0.0f; float tl_c58 = 0.0f;
  float tl_s59 = 0.0f; float tl_c59 = 0.0f;
  float tl_s60 = 0.0f; float tl_c60 = 0.0f;
  float tl_s61 = 0.0f; float tl_c61 = 0.0f;
  float tl_s62 = 0.0f; float tl_c62 = 0.0f;
  float tl_s63 = 0.0f; float tl_c63 = 0.0f;
  float tl_s64 = 0.0f; float tl_c64 = 0.0f;
  float tl_s65 = 0.0f; float tl_c65 = 0.0f;
  float tl_s66 = 0.0f; float tl_c66 = 0.0f;
  float tl_s67 = 0.0f; float tl_c67 = 0.0f;
  float tl_s68 = 0.0f; float tl_c68 = 0.0f;
  float tl_s69 = 0.0f; float tl_c69 = 0.0f;
  float tl_s70 = 0.0f; float tl_c70 = 0.0f;
  float tl_s71 = 0.0f; float tl_c71 = 0.0f;
  float tl_s72 = 0.0f; float tl_c72 = 0.0f;
  float tl_s73 = 0.0f; float tl_c73 = 0.0f;
  float tl_s74 = 0.0f; float tl_c74 = 0.0f;
  float tl_s75 = 0.0f; float tl_c75 = 0.0f;
  float tl_s76 = 0.0f; float tl_c76 = 0.0f;
  float tl_s77 = 0.0f; float tl_c77 = 0.0f;
  float tl_s78 = 0.0f; float tl_c78 = 0.0f;
  float tl_s79 = 0.0f; float tl_c79 = 0.0f;
  float tl_s80 = 0.0f; float tl_c80 = 0.0f;
  float tl_s81 = 0.0f; float tl_c81 = 0.0f;
  float tl_s82 = 0.0f; float tl_c82 = 0.0f;
  float tl_s83 = 0.0f; float tl_c83 = 0.0f;
  for (unsigned int tl_j = 0u; tl_j < 1u; ++tl_j) {
    unsigned int tl_p = tl_g * 64u + tl_j * 64u + tl_lid;
    if (tl_p < count) {
      unsigned int tl_inv = invocations + (tl_j & zero);  // loop-variant: see scratchStore
      unsigned int tl_pathLo = pathLo + tl_p;
      unsigned int tl_pathHi = pathHi + (tl_pathLo < tl_p ? 1u : 0u);
      unsigned int tl_fk0 = seedLo; unsigned int tl_fk1 = seedHi;
      // persistent values: bookmarks, inputs, output
      __shared__ float v0[7];
      float v1;
      float v2;
      float v3;
      float v4;
      float v11;
      float v13;
      float v109[7];
      float v110[7];
      float v1535[7];
      // forward sweep, one block per segment
      {  // segment 0: nodes [0, 111)
        v0[0] = tl_in0_0;
        v0[1] = tl_in1_0;
        v0[2] = tl_in2_0;
        v0[3] = tl_in3_0;
        v0[4] = tl_in4_0;
        v0[5] = tl_in5_0;
        v0[6] = tl_in6_0;
        float tl_ahead0 = v0[0];
        v1 = tl_in0_1;
        v2 = tl_in0_2;
        v3 = tl_in0_3;
        v4 = tl_in0_4;
        float v5 = v2 * v2;
        float v6 = tl_opq(0.5f, zero);
        float v7 = v6 * v5;
        float v8 = v3 - v7;
        float v9 = tl_opq(0.003968254f, zero);
        float v10 = v4 * v9;
        v11 = v8 * v10;
        float v12 = tl_opq(sqrtf(tl_opq(v10, zero)), zero);
        v13 = v2 * v12;
        float v14 = tl_opq(0.0f, zero);
        const uint4 vg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg0n0 = tl_boxMuller(vg0.x, vg0.y);
        float v15 = vg0n0.x;
        scratch[0u * tl_inv + tl_tid] = v15;
        float v16 = v13 * v15;
        float v17 = v11 + v16;
        float v18 = tl_opq(expf(tl_opq(v17, zero)), zero);
        float v21 = vg0n0.y;
        scratch[1u * tl_inv + tl_tid] = v21;
        float v22 = v13 * v21;
        float v23 = v11 + v22;
        float v24 = tl_opq(expf(tl_opq(v23, zero)), zero);
        const float2 vg0n1 = tl_boxMuller(vg0.z, vg0.w);
        float v27 = vg0n1.x;
        scratch[2u * tl_inv + tl_tid] = v27;
        float v28 = v13 * v27;
        float v29 = v11 + v28;
        float v30 = tl_opq(expf(tl_opq(v29, zero)), zero);
        float v33 = vg0n1.y;
        scratch[3u * tl_inv + tl_tid] = v33;
        float v34 = v13 * v33;
        float v35 = v11 + v34;
        float v36 = tl_opq(expf(tl_opq(v35, zero)), zero);
        const uint4 vg1 = tl_drawWords(1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg1n0 = tl_boxMuller(vg1.x, vg1.y);
        float v39 = vg1n0.x;
        scratch[4u * tl_inv + tl_tid] = v39;
        float v40 = v13 * v39;
        float v41 = v11 + v40;
        float v42 = tl_opq(expf(tl_opq(v41, zero)), zero);
        float v45 = vg1n0.y;
        scratch[5u * tl_inv + tl_tid] = v45;
        float v46 = v13 * v45;
        float v47 = v11 + v46;
        float v48 = tl_opq(expf(tl_opq(v47, zero)), zero);
        const float2 vg1n1 = tl_boxMuller(vg1.z, vg1.w);
        float v51 = vg1n1.x;
        scratch[6u * tl_inv + tl_tid] = v51;
        float v52 = v13 * v51;
        float v53 = v11 + v52;
        float v54 = tl_opq(expf(tl_opq(v53, zero)), zero);
        float v57 = vg1n1.y;
        scratch[7u * tl_inv + tl_tid] = v57;
        float v58 = v13 * v57;
        float v59 = v11 + v58;
        float v60 = tl_opq(expf(tl_opq(v59, zero)), zero);
        const uint4 vg2 = tl_drawWords(2u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg2n0 = tl_boxMuller(vg2.x, vg2.y);
        float v63 = vg2n0.x;
        scratch[8u * tl_inv + tl_tid] = v63;
        float v64 = v13 * v63;
        float v65 = v11 + v64;
        float v66 = tl_opq(expf(tl_opq(v65, zero)), zero);
        float v69 = vg2n0.y;
        scratch[9u * tl_inv + tl_tid] = v69;
        float v70 = v13 * v69;
        float v71 = v11 + v70;
        float v72 = tl_opq(expf(tl_opq(v71, zero)), zero);
        const float2 vg2n1 = tl_boxMuller(vg2.z, vg2.w);
        float v75 = vg2n1.x;
        scratch[10u * tl_inv + tl_tid] = v75;
        float v76 = v13 * v75;
        float v77 = v11 + v76;
        float v78 = tl_opq(expf(tl_opq(v77, zero)), zero);
        float v81 = vg2n1.y;
        scratch[11u * tl_inv + tl_tid] = v81;
        float v82 = v13 * v81;
        float v83 = v11 + v82;
        float v84 = tl_opq(expf(tl_opq(v83, zero)), zero);
        const uint4 vg3 = tl_drawWords(3u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg3n0 = tl_boxMuller(vg3.x, vg3.y);
        float v87 = vg3n0.x;
        scratch[12u * tl_inv + tl_tid] = v87;
        float v88 = v13 * v87;
        float v89 = v11 + v88;
        float v90 = tl_opq(expf(tl_opq(v89, zero)), zero);
        float v93 = vg3n0.y;
        scratch[13u * tl_inv + tl_tid] = v93;
        float v94 = v13 * v93;
        float v95 = v11 + v94;
        float v96 = tl_opq(expf(tl_opq(v95, zero)), zero);
        const float2 vg3n1 = tl_boxMuller(vg3.z, vg3.w);
        float v99 = vg3n1.x;
        scratch[14u * tl_inv + tl_tid] = v99;
        float v100 = v13 * v99;
        float v101 = v11 + v100;
        float v102 = tl_opq(expf(tl_opq(v101, zero)), zero);
        float v105 = vg3n1.y;
        scratch[15u * tl_inv + tl_tid] = v105;
        float v106 = v13 * v105;
        float v107 = v11 + v106;
        float v108 = tl_opq(expf(tl_opq(v107, zero)), zero);
        #pragma unroll 1
        for (int tl_m = 0; tl_m < 7; ++tl_m) {  // markets, one at a time
          float v19 = tl_ahead0 * v18;
          tl_ahead0 = v0[(tl_m + 1 < 7 ? tl_m + 1 : 6)];
          float v20 = v14 + v19;
          float v25 = v19 * v24;
          float v26 = v20 + v25;
          float v31 = v25 * v30;
          float v32 = v26 + v31;
          float v37 = v31 * v36;
          float v38 = v32 + v37;
          float v43 = v37 * v42;
          float v44 = v38 + v43;
          float v49 = v43 * v48;
          float v50 = v44 + v49;
          float v55 = v49 * v54;
          float v56 = v50 + v55;
          float v61 = v55 * v60;
          float v62 = v56 + v61;
          float v67 = v61 * v66;
          float v68 = v62 + v67;
          float v73 = v67 * v72;
          float v74 = v68 + v73;
          float v79 = v73 * v78;
          float v80 = v74 + v79;
          float v85 = v79 * v84;
          float v86 = v80 + v85;
          float v91 = v85 * v90;
          float v92 = v86 + v91;
          float v97 = v91 * v96;
          float v98 = v92 + v97;
          float v103 = v97 * v102;
          float v104 = v98 + v103;
          v109[tl_m] = v103 * v108;
          v110[tl_m] = v104 + v109[tl_m];
        }
      }
      // segments 1..14 alike: one written, run in a loop; trip t reads its crossing values from row t of the bookmarks and writes row t + 1
      float tl_bm[210];
      tl_bm[0u] = v109[0];
      tl_bm[1u] = v109[1];
      tl_bm[2u] = v109[2];
      tl_bm[3u] = v109[3];
      tl_bm[4u] = v109[4];
      tl_bm[5u] = v109[5];
      tl_bm[6u] = v109[6];
      tl_bm[7u] = v110[0];
      tl_bm[8u] = v110[1];
      tl_bm[9u] = v110[2];
      tl_bm[10u] = v110[3];
      tl_bm[11u] = v110[4];
      tl_bm[12u] = v110[5];
      tl_bm[13u] = v110[6];
      #pragma unroll 1
      for (unsigned int tl_sg = 0u; tl_sg < 14u; ++tl_sg) {  // segments 1..: 14 trips
        {  // segment 1: nodes [111, 207)
          const uint4 vg4 = tl_drawWords(4u + tl_sg * 4u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
          const float2 vg4n0 = tl_boxMuller(vg4.x, vg4.y);
          float v111 = vg4n0.x;
          scratch[(16u + tl_sg * 16u) * tl_inv + tl_tid] = v111;
          float v112 = v13 * v111;
          float v113 = v11 + v112;
          float v114 = tl_opq(expf(tl_opq(v113, zero)), zero);
          float v117 = vg4n0.y;
          scratch[(17u + tl_sg * 16u) * tl_inv + tl_tid] = v117;
          float v118 = v13 * v117;
          float v119 = v11 + v118;
          float v120 = tl_opq(expf(tl_opq(v119, zero)), zero);
          const float2 vg4n1 = tl_boxMuller(vg4.z, vg4.w);
          float v123 = vg4n1.x;
          scratch[(18u + tl_sg * 16u) * tl_inv + tl_tid] = v123;
          float v124 = v13 * v123;
          float v125 = v11 + v124;
          float v126 = tl_opq(expf(tl_opq(v125, zero)), zero);
          float v129 = vg4n1.y;
          scratch[(19u + tl_sg * 16u) * tl_inv + tl_tid] = v129;
          float v130 = v13 * v129;
          float v131 = v11 + v130;
          float v132 = tl_opq(expf(tl_opq(v131, zero)), zero);
          const uint4 vg5 = tl_drawWords(5u + tl_sg * 4u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
          const float2 vg5n0 = tl_boxMuller(vg5.x, vg5.y);
          float v135 = vg5n0.x;
          scratch[(20u + tl_sg * 16u) * tl_inv + tl_tid] = v135;
          float v136 = v13 * v135;
          float v137 = v11 + v136;
          float v138 = tl_opq(expf(tl_opq(v137, zero)), zero);
          float v141 = vg5n0.y;
          scratch[(21u + tl_sg * 16u) * tl_inv + tl_tid] = v141;
          float v142 = v13 * v141;
          float v143 = v11 + v142;
          float v144 = tl_opq(expf(tl_opq(v143, zero)), zero);
          const float2 vg5n1 = tl_boxMuller(vg5.z, vg5.w);
          float v147 = vg5n1.x;
          scratch[(22u + tl_sg * 16u) * tl_inv + tl_tid] = v147;
          float v148 = v13 * v147;
          float v149 = v11 + v148;
          float v150 = tl_opq(expf(tl_opq(v149, zero)), zero);
          float v153 = vg5n1.y;
          scratch[(23u + tl_sg * 16u) * tl_inv + tl_tid] = v153;
          float v154 = v13 * v153;
          float v155 = v11 + v154;
          float v156 = tl_opq(expf(tl_opq(v155, zero)), zero);
          const uint4 vg6 = tl_drawWords(6u + tl_sg * 4u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
          const float2 vg6n0 = tl_boxMuller(vg6.x, vg6.y);
          float v159 = vg6n0.x;
          scratch[(24u + tl_sg * 16u) * tl_inv + tl_tid] = v159;
          float v160 = v13 * v159;
          float v161 = v11 + v160;
          float v162 = tl_opq(expf(tl_opq(v161, zero)), zero);
          float v165 = vg6n0.y;
          scratch[(25u + tl_sg * 16u) * tl_inv + tl_tid] = v165;
          float v166 = v13 * v165;
          float v167 = v11 + v166;
          float v168 = tl_opq(expf(tl_opq(v167, zero)), zero);
          const float2 vg6n1 = tl_boxMuller(vg6.z, vg6.w);
          float v171 = vg6n1.x;
          scratch[(26u + tl_sg * 16u) * tl_inv + tl_tid] = v171;
          float v172 = v13 * v171;
          float v173 = v11 + v172;
          float v174 = tl_opq(expf(tl_opq(v173, zero)), zero);
          float v177 = vg6n1.y;
          scratch[(27u + tl_sg * 16u) * tl_inv + tl_tid] = v177;
          float v178 = v13 * v177;
          float v179 = v11 + v178;
          float v180 = tl_opq(expf(tl_opq(v179, zero)), zero);
          const uint4 vg7 = tl_drawWords(7u + tl_sg * 4u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
          const float2 vg7n0 = tl_boxMuller(vg7.x, vg7.y);
          float v183 = vg7n0.x;
          scratch[(28u + tl_sg * 16u) * tl_inv + tl_tid] = v183;
          float v184 = v13 * v183;
          float v185 = v11 + v184;
          float v186 = tl_opq(expf(tl_opq(v185, zero)), zero);
          float v189 = vg7n0.y;
          scratch[(29u + tl_sg * 16u) * tl_inv + tl_tid] = v189;
          float v190 = v13 * v189;
          float v191 = v11 + v190;
          float v192 = tl_opq(expf(tl_opq(v191, zero)), zero);
          const float2 vg7n1 = tl_boxMuller(vg7.z, vg7.w);
          float v195 = vg7n1.x;
          scratch[(30u + tl_sg * 16u) * tl_inv + tl_tid] = v195;
          float v196 = v13 * v195;
          float v197 = v11 + v196;
          float v198 = tl_opq(expf(tl_opq(v197, zero)), zero);
          float v201 = vg7n1.y;
          scratch[(31u + tl_sg * 16u) * tl_inv + tl_tid] = v201;
          float v202 = v13 * v201;
          float v203 = v11 + v202;
          float v204 = tl_opq(expf(tl_opq(v203, zero)), zero);
          #pragma unroll 1
          for (int tl_m = 0; tl_m < 7; ++tl_m) {  // markets, one at a time
            float v115 = tl_bm[tl_sg * 14u + (unsigned int)(tl_m)] * v114;
            float v116 = tl_bm[tl_sg * 14u + 7u + (unsigned int)(tl_m)] + v115;
            float v121 = v115 * v120;
            float v122 = v116 + v121;
            float v127 = v121 * v126;
            float v128 = v122 + v127;
            float v133 = v127 * v132;
            float v134 = v128 + v133;
            float v139 = v133 * v138;
            float v140 = v134 + v139;
            float v145 = v139 * v144;
            float v146 = v140 + v145;
            float v151 = v145 * v150;
            float v152 = v146 + v151;
            float v157 = v151 * v156;
            float v158 = v152 + v157;
            float v163 = v157 * v162;
            float v164 = v158 + v163;
            float v169 = v163 * v168;
            float v170 = v164 + v169;
            float v175 = v169 * v174;
            float v176 = v170 + v175;
            float v181 = v175 * v180;
            float v182 = v176 + v181;
            float v187 = v181 * v186;
            float v188 = v182 + v187;
            float v193 = v187 * v192;
            float v194 = v188 + v193;
            float v199 = v193 * v198;
            float v200 = v194 + v199;
            tl_bm[(tl_sg + 1u) * 14u + (unsigned int)(tl_m)] = v199 * v204;
            tl_bm[(tl_sg + 1u) * 14u + 7u + (unsigned int)(tl_m)] = v200 + tl_bm[(tl_sg + 1u) * 14u + (unsigned int)(tl_m)];
          }
        }
      }
      {  // segment 15: nodes [1455, 1536)
        float tl_ahead2 = tl_bm[203u + (unsigned int)(0)];
        float tl_ahead1 = tl_bm[196u + (unsigned int)(0)];
        const uint4 vg60 = tl_drawWords(60u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg60n0 = tl_boxMuller(vg60.x, vg60.y);
        float v1455 = vg60n0.x;
        scratch[240u * tl_inv + tl_tid] = v1455;
        float v1456 = v13 * v1455;
        float v1457 = v11 + v1456;
        float v1458 = tl_opq(expf(tl_opq(v1457, zero)), zero);
        float v1461 = vg60n0.y;
        scratch[241u * tl_inv + tl_tid] = v1461;
        float v1462 = v13 * v1461;
        float v1463 = v11 + v1462;
        float v1464 = tl_opq(expf(tl_opq(v1463, zero)), zero);
        const float2 vg60n1 = tl_boxMuller(vg60.z, vg60.w);
        float v1467 = vg60n1.x;
        scratch[242u * tl_inv + tl_tid] = v1467;
        float v1468 = v13 * v1467;
        float v1469 = v11 + v1468;
        float v1470 = tl_opq(expf(tl_opq(v1469, zero)), zero);
        float v1473 = vg60n1.y;
        scratch[243u * tl_inv + tl_tid] = v1473;
        float v1474 = v13 * v1473;
        float v1475 = v11 + v1474;
        float v1476 = tl_opq(expf(tl_opq(v1475, zero)), zero);
        const uint4 vg61 = tl_drawWords(61u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg61n0 = tl_boxMuller(vg61.x, vg61.y);
        float v1479 = vg61n0.x;
        scratch[244u * tl_inv + tl_tid] = v1479;
        float v1480 = v13 * v1479;
        float v1481 = v11 + v1480;
        float v1482 = tl_opq(expf(tl_opq(v1481, zero)), zero);
        float v1485 = vg61n0.y;
        scratch[245u * tl_inv + tl_tid] = v1485;
        float v1486 = v13 * v1485;
        float v1487 = v11 + v1486;
        float v1488 = tl_opq(expf(tl_opq(v1487, zero)), zero);
        const float2 vg61n1 = tl_boxMuller(vg61.z, vg61.w);
        float v1491 = vg61n1.x;
        scratch[246u * tl_inv + tl_tid] = v1491;
        float v1492 = v13 * v1491;
        float v1493 = v11 + v1492;
        float v1494 = tl_opq(expf(tl_opq(v1493, zero)), zero);
        float v1497 = vg61n1.y;
        scratch[247u * tl_inv + tl_tid] = v1497;
        float v1498 = v13 * v1497;
        float v1499 = v11 + v1498;
        float v1500 = tl_opq(expf(tl_opq(v1499, zero)), zero);
        const uint4 vg62 = tl_drawWords(62u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);
        const float2 vg62n0 = tl_boxMuller(vg62.x, vg62.y);
        float v1503 = vg62n0.x;
        scratch[248u * tl_inv + tl_tid] = v1503;
        float v1504 = v13 * v1503;
        float v1505 = v11 + v1504;
        float v1506 = tl_opq(expf(tl_opq(v1505, zero)), zero);
        float v1509 = vg62n0.y;
        scratch[249u * tl_inv + tl_tid] = v1509;
        float v1510 = v13 * v1509;
        float v1511 = v11 + v1510;
        float v1512 = tl_opq(expf(tl_opq(v1511, zero)), zero);
        const float2 vg62n1 = tl_boxMuller(vg62.z, vg62.w);
        float v1515 = vg62n1.x;
        scratch[250u * tl_inv + tl_tid] = v1515;
        float v1516 = v13 * v1515;
        float v1517 = v11 + v1516;
        float v1518 = tl_opq(expf(tl_opq(v1517, zero)), zero);
        float v1521 = vg62n1.y;
        scratch[251u * tl_inv + tl_tid] = v1521;
        float v1522 = v13 * v1521;
        float v1523 = v11 + v1522;
        float v1524 = tl_opq(expf(tl_opq(v1523, zero)), zero);
        float v1527 = tl_opq(252.0f, zero);
        float v1530 = tl_opq(0.0f, zero);
        float v1532 = v3 * v4;
        float v1533 = -v1532;
        float v1534 = tl_opq(expf(tl_opq(v1533, zero)), zero);
        #pragma unroll 1
        for (int tl_m = 0; tl_m < 7; ++tl_m) {  // markets, one at a time
          float v1459 = tl_ahead1 * v1458;
          tl_ahead1 = tl_bm[196u + (unsigned int)((tl_m + 1 < 7 ? tl_m + 1 : 6))];
          float v1460 = tl_ahead2 + v1459;
          tl_ahead2 = tl_bm[203u + (unsigned int)((tl_m + 1 < 7 ? tl_m + 1 : 6))];
          float v1465 = v1459 * v1464;
          float v1466 = v1460 + v1465;
          float v1471 = v1465 * v1470;
          float v1472 = v1466 + v1471;
          float v1477 = v1471 * v1476;
          float v1478 = v1472 + v1477;
          float v1483 = v1477 * v1482;
          float v1484 = v1478 + v1483;
          float v1489 = v1483 * v1488;
          float v1490 = v1484 + v1489;
          float v1495 = v1489 * v1494;
          float v1496 = v1490 + v1495;
          float v1501 = v1495 * v1500;
          float v1502 = v1496 + v1501;
          float v1507 = v1501 * v1506;
          float v1508 = v1502 + v1507;
          float v1513 = v1507 * v1512;
          float v1514 = v1508 + v1513;
          float v1519 = v1513 * v1518;
          float v1520 = v1514 + v1519;
          float v1525 = v1519 * v1524;
          float v1526 = v1520 + v1525;
          float v1528 = tl_opq(tl_opq(v1526, zero) / tl_opq(v1527, zero), zero);
          float v1529 = v1528 - v1;
          float v1531 = tl_sel(tl_opq(v1529, zero) >= tl_opq(v1530, zero), v1529, v1530);
          v1535[tl_m] = v1531 * v1534;
        }
      }
      // reverse sweep: segments last to first, each recomputed from its bookmarks
      float ds0[7];  // set where first written
      float ds1[7];  // set where first written
      float ds2[7];  // set where first written
      float ds3[7];  // set where first written
      float ds4[7];  // set where first written
      float ds5[7];  // set where first written
      float ds6[7];  // set where first written
      float ds7[7];  // set where first written
      float ds8[7];  // set where first written
      float tl_dbm[28];
      {  // segment 15
        float tl_ahead4 = tl_bm[203u + (unsigned int)(0)];
        float tl_ahead3 = tl_bm[196u + (unsigned int)(0)];
        float w1 = tl_opq(v1, zero);
        float w3 = tl_opq(v3, zero);
        float w4 = tl_opq(v4, zero);
        float w11 = tl_opq(v11, zero);
        float w13 = tl_opq(v13, zero);
        float w1455 = scratch[240u * (tl_inv ^ zero) + tl_tid];
        float w1456 = w13 * w1455;
        float w1457 = w11 + w1456;
        float w1458 = tl_opq(expf(tl_opq(w1457, zero)), zero);
        float w1461 = scratch[241u * (tl_inv ^ zero) + tl_tid];
        float w1462 = w13 * w1461;
        float w1463 = w11 + w1462;
        float w1464 = tl_opq(expf(tl_opq(w1463, zero)), zero);
        float w1467 = scratch[242u * (tl_inv ^ zero) + tl_tid];
        float w1468 = w13 * w1467;
        float w1469 = w11 + w1468;
        float w1470 = tl_opq(expf(tl_opq(w1469, zero)), zero);
        float w1473 = scratch[243u * (tl_inv ^ zero) + tl_tid];
        float w1474 = w13 * w1473;
        float w1475 = w11 + w1474;
        float w1476 = tl_opq(expf(tl_opq(w1475, zero)), zero);
        float w1479 = scratch[244u * (tl_inv ^ zero) + tl_tid];
        float w1480 = w13 * w1479;
        float w1481 = w11 + w1480;
        float w1482 = tl_opq(expf(tl_opq(w1481, zero)), zero);
        float w1485 = scratch[245u * (tl_inv ^ zero) + tl_tid];
        float w1486 = w13 * w1485;
        float w1487 = w11 + w1486;
        float w1488 = tl_opq(expf(tl_opq(w1487, zero)), zero);
        float w1491 = scratch[246u * (tl_inv ^ zero) + tl_tid];
        float w1492 = w13 * w1491;
        float w1493 = w11 + w1492;
        float w1494 = tl_opq(expf(tl_opq(w1493, zero)), zero);
        float w1497 = scratch[247u * (tl_inv ^ zero) + tl_tid];
        float w1498 = w13 * w1497;
        float w1499 = w11 + w1498;
        float w1500 = tl_opq(expf(tl_opq(w1499, zero)), zero);
        float w1503 = scratch[248u * (tl_inv ^ zero) + tl_tid];
        float w1504 = w13 * w1503;
        float w1505 = w11 + w1504;
        float w1506 = tl_opq(expf(tl_opq(w1505, zero)), zero);
        float w1509 = scratch[249u * (tl_inv ^ zero) + tl_tid];
        float w1510 = w13 * w1509;
        float w1511 = w11 + w1510;
        float w1512 = tl_opq(expf(tl_opq(w1511, zero)), zero);
        float w1515 = scratch[250u * (tl_inv ^ zero) + tl_tid];
        float w1516 = w13 * w1515;
        float w1517 = w11 + w1516;
        float w1518 = tl_opq(expf(tl_opq(w1517, zero)), zero);
        float w1521 = scratch[251u * (tl_inv ^ zero) + tl_tid];
        float w1522 = w13 * w1521;
        float w1523 = w11 + w1522;
        float w1524 = tl_opq(expf(tl_opq(w1523, zero)), zero);
        float w1527 = tl_opq(252.0f, zero);
        float w1530 = tl_opq(0.0f, zero);
        float w1532 = w3 * w4;
        float w1533 = -w1532;
        float w1534 = tl_opq(expf(tl_opq(w1533, zero)), zero);
        #pragma unroll 1
        for (int tl_m = 0; tl_m < 7; ++tl_m) {  // markets, one at a time
          ds7[tl_m] = 1.0f;
          float w1453 = tl_opq(tl_ahead3, zero);
          tl_ahead3 = tl_bm[196u + (unsigned int)((tl_m + 1 < 7 ? tl_m + 1 : 6))];
          float w1454 = tl_opq(tl_ahead4, zero);
          tl_ahead4 = tl_bm[203u + (unsigned int)((tl_m + 1 < 7 ? tl_m + 1 : 6))];
          float w1459 = w1453 * w1458;
          float w1460 = w1454 + w1459;
          float w1465 = w1459 * w1464;
          float w1466 = w1460 + w1465;
          float w1471 = w1465 * w1470;
          float w1472 = w1466 + w1471;
          float w1477 = w1471 * w1476;
          float w1478 = w1472 + w1477;
          float w1483 = w1477 * w1482;
          float w1484 = w1478 + w1483;
          float w1489 = w1483 * w1488;
          float w1490 = w1484 + w1489;
          float w1495 = w1489 * w1494;
          float w1496 = w1490 + w1495;
          float w1501 = w1495 * w1500;
          float w1502 = w1496 + w1501;
          float w1507 = w1501 * w1506;
          float w1508 = w1502 + w1507;
          float w1513 = w1507 * w1512;
          float w1514 = w1508 + w1513;
          float w1519 = w1513 * w1518;
          float w1520 = w1514 + w1519;
          float w1525 = w1519 * w1524;
          float w1526 = w1520 + w1525;
          float w1528 = tl_opq(tl_opq(w1526, zero) / tl_opq(w1527, zero), zero);
          float w1529 = w1528 - w1;
          float w1531 = tl_sel(tl_opq(w1529, zero) >= tl_opq(w1530, zero), w1529, w1530);
          float d1531 = ds7[tl_m] * w1534;
          float d1534 = ds7[tl_m] * w1531;
          float d1533 = d1534 * w1534;
          float d1532 = -d1533;
          ds1[tl_m] = d1532 * w4;
          ds2[tl_m] = d1532 * w3;
          float d1529 = tl_sel(tl_opq(w1529, zero) >= tl_opq(w1530, zero), d1531, 0.0f);
          float d1528 = d1529;
          ds0[tl_m] = -d1529;
          float d1526 = d1528 / tl_opq(w1527, zero);
          float d1520 = d1526;
          float d1525 = d1526;
          float d1519 = d1525 * w1524;
          float d1524 = d1525 * w1519;
          float d1523 = d1524 * w1524;
          ds3[tl_m] = d1523;
          float d1522 = d1523;
          ds4[tl_m] = d1522 * w1521;
          float d1514 = d1520;
          d1519 += d1520;
          float d1513 = d1519 * w1518;
          float d1518 = d1519 * w1513;
          float d1517 = d1518 * w1518;
          ds3[tl_m] += d1517;
          float d1516 = d1517;
          ds4[tl_m] += d1516 * w1515;
          float d1508 = d1514;
          d1513 += d1514;
          float d1507 = d1513 * w1512;
          float d1512 = d1513 * w1507;
          float d1511 = d1512 * w1512;
          ds3[tl_m] += d1511;
          float d1510 = d1511;
          ds4[tl_m] += d1510 * w1509;
          float d1502 = d1508;
          d1507 += d1508;
          float d1501 = d1507 * w1506;
          float d1506 = d1507 * w1501;
          float d1505 = d1506 * w1506;
          ds3[tl_m] += d1505;
          float d1504 = d1505;
          ds4[tl_m] += d1504 * w1503;
          float d1496 = d1502;
          d1501 += d1502;
          float d1495 = d1501 * w1500;
          float d1500 = d1501 * w1495;
          float d1499 = d1500 * w1500;
          ds3[tl_m] += d1499;
          float d1498 = d1499;
          ds4[tl_m] += d1498 * w1497;
          float d1490 = d1496;
          d1495 += d1496;
          float d1489 = d1495 * w1494;
          float d1494 = d1495 * w1489;
          float d1493 = d1494 * w1494;
          ds3[tl_m] += d1493;
          float d1492 = d1493;
          ds4[tl_m] += d1492 * w1491;
          float d1484 = d1490;
          d1489 += d1490;
          float d1483 = d1489 * w1488;
          float d1488 = d1489 * w1483;
          float d1487 = d1488 * w1488;
          ds3[tl_m] += d1487;
          float d1486 = d1487;
          ds4[tl_m] += d1486 * w1485;
          float d1478 = d1484;
          d1483 += d1484;
          float d1477 = d1483 * w1482;
          float d1482 = d1483 * w1477;
          float d1481 = d1482 * w1482;
          ds3[tl_m] += d1481;
          float d1480 = d1481;
          ds4[tl_m] += d1480 * w1479;
          float d1472 = d1478;
          d1477 += d1478;
          float d1471 = d1477 * w1476;
          float d1476 = d1477 * w1471;
          float d1475 = d1476 * w1476;
          ds3[tl_m] += d1475;
          float d1474 = d1475;
          ds4[tl_m] += d1474 * w1473;
          float d1466 = d1472;
          d1471 += d1472;
          float d1465 = d1471 * w1470;
          float d1470 = d1471 * w1465;
          float d1469 = d1470 * w1470;
          ds3[tl_m] += d1469;
          float d1468 = d1469;
          ds4[tl_m] += d1468 * w1467;
          float d1460 = d1466;
          d1465 += d1466;
          float d1459 = d1465 * w1464;
          float d1464 = d1465 * w1459;
          float d1463 = d1464 * w1464;
          ds3[tl_m] += d1463;
          float d1462 = d1463;
          ds4[tl_m] += d1462 * w1461;
          tl_dbm[7u + (unsigned int)(tl_m)] = d1460;
          d1459 += d1460;
          tl_dbm[(unsigned int)(tl_m)] = d1459 * w1458;
          float d1458 = d1459 * w1453;
          float d1457 = d1458 * w1458;
          ds3[tl_m] += d1457;
          float d1456 = d1457;
          ds4[tl_m] += d1456 * w1455;
        }
      }
      #pragma unroll 1
      for (unsigned int tl_sr = 0u; tl_sr < 14u; ++tl_sr) {  // segments 14..1, last first
        const unsigned int tl_sg = 13u - tl_sr;
        {  // segment 1 + tl_sg
          float tl_ahead5 = tl_bm[tl_sg * 14u + (unsigned int)(0)];
          float w11 = tl_opq(v11, zero);
          float w13 = tl_opq(v13, zero);
          float w111 = scratch[(16u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w112 = w13 * w111;
          float w113 = w11 + w112;
          float w114 = tl_opq(expf(tl_opq(w113, zero)), zero);
          float w117 = scratch[(17u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w118 = w13 * w117;
          float w119 = w11 + w118;
          float w120 = tl_opq(expf(tl_opq(w119, zero)), zero);
          float w123 = scratch[(18u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w124 = w13 * w123;
          float w125 = w11 + w124;
          float w126 = tl_opq(expf(tl_opq(w125, zero)), zero);
          float w129 = scratch[(19u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w130 = w13 * w129;
          float w131 = w11 + w130;
          float w132 = tl_opq(expf(tl_opq(w131, zero)), zero);
          float w135 = scratch[(20u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w136 = w13 * w135;
          float w137 = w11 + w136;
          float w138 = tl_opq(expf(tl_opq(w137, zero)), zero);
          float w141 = scratch[(21u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w142 = w13 * w141;
          float w143 = w11 + w142;
          float w144 = tl_opq(expf(tl_opq(w143, zero)), zero);
          float w147 = scratch[(22u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w148 = w13 * w147;
          float w149 = w11 + w148;
          float w150 = tl_opq(expf(tl_opq(w149, zero)), zero);
          float w153 = scratch[(23u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w154 = w13 * w153;
          float w155 = w11 + w154;
          float w156 = tl_opq(expf(tl_opq(w155, zero)), zero);
          float w159 = scratch[(24u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w160 = w13 * w159;
          float w161 = w11 + w160;
          float w162 = tl_opq(expf(tl_opq(w161, zero)), zero);
          float w165 = scratch[(25u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w166 = w13 * w165;
          float w167 = w11 + w166;
          float w168 = tl_opq(expf(tl_opq(w167, zero)), zero);
          float w171 = scratch[(26u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w172 = w13 * w171;
          float w173 = w11 + w172;
          float w174 = tl_opq(expf(tl_opq(w173, zero)), zero);
          float w177 = scratch[(27u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w178 = w13 * w177;
          float w179 = w11 + w178;
          float w180 = tl_opq(expf(tl_opq(w179, zero)), zero);
          float w183 = scratch[(28u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w184 = w13 * w183;
          float w185 = w11 + w184;
          float w186 = tl_opq(expf(tl_opq(w185, zero)), zero);
          float w189 = scratch[(29u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w190 = w13 * w189;
          float w191 = w11 + w190;
          float w192 = tl_opq(expf(tl_opq(w191, zero)), zero);
          float w195 = scratch[(30u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w196 = w13 * w195;
          float w197 = w11 + w196;
          float w198 = tl_opq(expf(tl_opq(w197, zero)), zero);
          float w201 = scratch[(31u + tl_sg * 16u) * (tl_inv ^ zero) + tl_tid];
          float w202 = w13 * w201;
          float w203 = w11 + w202;
          float w204 = tl_opq(expf(tl_opq(w203, zero)), zero);
          #pragma unroll 1
          for (int tl_m = 0; tl_m < 7; ++tl_m) {  // markets, one at a time
            float w109 = tl_opq(tl_ahead5, zero);
            tl_ahead5 = tl_bm[tl_sg * 14u + (unsigned int)((tl_m + 1 < 7 ? tl_m + 1 : 6))];
            float w115 = w109 * w114;
            float w121 = w115 * w120;
            float w127 = w121 * w126;
            float w133 = w127 * w132;
            float w139 = w133 * w138;
            float w145 = w139 * w144;
            float w151 = w145 * w150;
            float w157 = w151 * w156;
            float w163 = w157 * w162;
            float w169 = w163 * w168;
            float w175 = w169 * w174;
            float w181 = w175 * w180;
            float w187 = w181 * w186;
            float w193 = w187 * w192;
            float w199 = w193 * w198;
            float d200 = tl_dbm[((tl_sg + 1u) & 1u) * 14u + 7u + (unsigned int)(tl_m)];
            tl_dbm[((tl_sg + 1u) & 1u) * 14u + (unsigned int)(tl_m)] += tl_dbm[((tl_sg + 1u) & 1u) * 14u + 7u + (unsigned int)(tl_m)];
            float d199 = tl_dbm[((tl_sg + 1u) & 1u) * 14u + (unsigned int)(tl_m)] * w204;
            float d204 = tl_dbm[((tl_sg + 1u) & 1u) * 14u + (unsigned int)(tl_m)] * w199;
            float d203 = d204 * w204;
            ds3[tl_m] += d203;
            float d202 = d203;
            ds4[tl_m] += d202 * w201;
            float d194 = d200;
            d199 += d200;
            float d193 = d199 * w198;
            float d198 = d199 * w193;
            float d197 = d198 * w198;
            ds3[tl_m] += d197;
            float d196 = d197;
            ds4[tl_m] += d196 * w195;
            float d188 = d194;
            d193 += d194;
            float d187 = d193 * w192;
            float d192 = d193 * w187;
            float d191 = d192 * w192;
            ds3[tl_m] += d191;
            float d190 = d191;
            ds4[tl_m] += d190 * w189;
            float d182 = d188;
            d187 += d188;
            float d181 = d187 * w186;
            float d186 = d187 * w181;
            float d185 = d186 * w186;
            ds3[tl_m] += d185;
            float d184 = d185;
            ds4[tl_m] += d184 * w183;
            float d176 = d182;
            d181 += d182;
            float d175 = d181 * w180;
            float d180 = d181 * w175;
            float d179 = d180 * w180;
            ds3[tl_m] += d179;
            float d178 = d179;
            ds4[tl_m] += d178 * w177;
            float d170 = d176;
            d175 += d176;
            float d169 = d175 * w174;
            float d174 = d175 * w169;
            float d173 = d174 * w174;
            ds3[tl_m] += d173;
            float d172 = d173;
            ds4[tl_m] += d172 * w171;
            float d164 = d170;
            d169 += d170;
            float d163 = d169 * w168;
            float d168 = d169 * w163;
            float d167 = d168 * w168;
            ds3[tl_m] += d167;
            float d166 = d167;
            ds4[tl_m] += d166 * w165;
            float d158 = d164;
            d163 += d164;
            float d157 = d163 * w162;
            float d162 = d163 * w157;
            float d161 = d162 * w162;
            ds3[tl_m] += d161;
            float d160 = d161;
            ds4[tl_m] += d160 * w159;
            float d152 = d158;
            d157 += d158;
            float d151 = d157 * w156;
            float d156 = d157 * w151;
            float d155 = d156 * w156;
            ds3[tl_m] += d155;
            float d154 = d155;
            ds4[tl_m] += d154 * w153;
            float d146 = d152;
            d151 += d152;
            float d145 = d151 * w150;
            float d150 = d151 * w145;
            float d149 = d150 * w150;
            ds3[tl_m] += d149;
            float d148 = d149;
            ds4[tl_m] += d148 * w147;
            float d140 = d146;
            d145 += d146;
            float d139 = d145 * w144;
            float d144 = d145 * w139;
            float d143 = d144 * w144;
            ds3[tl_m] += d143;
            float d142 = d143;
            ds4[tl_m] += d142 * w141;
            float d134 = d140;
            d139 += d140;
            float d133 = d139 * w138;
            float d138 = d139 * w133;
            float d137 = d138 * w138;
            ds3[tl_m] += d137;
            float d136 = d137;
            ds4[tl_m] += d136 * w135;
            float d128 = d134;
            d133 += d134;
            float d127 = d133 * w132;
            float d132 = d133 * w127;
            float d131 = d132 * w132;
            ds3[tl_m] += d131;
            float d130 = d131;
            ds4[tl_m] += d130 * w129;
            float d122 = d128;
            d127 += d128;
            float d121 = d127 * w126;
            float d126 = d127 * w121;
            float d125 = d126 * w126;
            ds3[tl_m] += d125;
            float d124 = d125;
            ds4[tl_m] += d124 * w123;
            float d116 = d122;
            d121 += d122;
            float d115 = d121 * w120;
            float d120 = d121 * w115;
            float d119 = d120 * w120;
            ds3[tl_m] += d119;
            float d118 = d119;
            ds4[tl_m] += d118 * w117;
            tl_dbm[(tl_sg & 1u) * 14u + 7u + (unsigned int)(tl_m)] = d116;
            d115 += d116;
            tl_dbm[(tl_sg & 1u) * 14u + (unsigned int)(tl_m)] = d115 * w114;
            float d114 = d115 * w109;
            float d113 = d114 * w114;
            ds3[tl_m] += d113;
            float d112 = d113;
            ds4[tl_m] += d112 * w111;
          }
        }
      }
      {  // segment 0
        float tl_ahead6 = v0[0];
        float w2 = tl_opq(v2, zero);
        float w3 = tl_opq(v3, zero);
        float w4 = tl_opq(v4, zero);
        float w5 = w2 * w2;
        float w6 = tl_opq(0.5f, zero);
        float w7 = w6 * w5;
        float w8 = w3 - w7;
        float w9 = tl_opq(0.003968254f, zero);
        float w10 = w4 * w9;
        float w11 = w8 * w10;
        float w12 = tl_opq(sqrtf(tl_opq(w10, zero)), zero);
        float w13 = w2 * w12;
        float w15 = scratch[0u * (tl_inv ^ zero) + tl_tid];
        float w16 = w13 * w15;
        float w17 = w11 + w16;
        float w18 = tl_opq(expf(tl_opq(w17, zero)), zero);
        float w21 = scratch[1u * (tl_inv ^ zero) + tl_tid];
        float w22 = w13 * w21;
        float w23 = w11 + w22;
        float w24 = tl_opq(expf(tl_opq(w23, zero)), zero);
        float w27 = scratch[2u * (tl_inv ^ zero) + tl_tid];
        float w28 = w13 * w27;
        float w29 = w11 + w28;
        float w30 = tl_opq(expf(tl_opq(w29, zero)), zero);
        float w33 = scratch[3u * (tl_inv ^ zero) + tl_tid];
        float w34 = w13 * w33;
        float w35 = w11 + w34;
        float w36 = tl_opq(expf(tl_opq(w35, zero)), zero);
        float w39 = scratch[4u * (tl_inv ^ zero) + tl_tid];
        float w40 = w13 * w39;
        float w41 = w11 + w40;
        float w42 = tl_opq(expf(tl_opq(w41, zero)), zero);
        float w45 = scratch[5u * (tl_inv ^ zero) + tl_tid];
        float w46 = w13 * w45;
        float w47 = w11 + w46;
        float w48 = tl_opq(expf(tl_opq(w47, zero)), zero);
        float w51 = scratch[6u * (tl_inv ^ zero) + tl_tid];
        float w52 = w13 * w51;
        float w53 = w11 + w52;
        float w54 = tl_opq(expf(tl_opq(w53, zero)), zero);
        float w57 = scratch[7u * (tl_inv ^ zero) + tl_tid];
        float w58 = w13 * w57;
        float w59 = w11 + w58;
        float w60 = tl_opq(expf(tl_opq(w59, zero)), zero);
        float w63 = scratch[8u * (tl_inv ^ zero) + tl_tid];
        float w64 = w13 * w63;
        float w65 = w11 + w64;
        float w66 = tl_opq(expf(tl_opq(w65, zero)), zero);
        float w69 = scratch[9u * (tl_inv ^ zero) + tl_tid];
        float w70 = w13 * w69;
        float w71 = w11 + w70;
        float w72 = tl_opq(expf(tl_opq(w71, zero)), zero);
        float w75 = scratch[10u * (tl_inv ^ zero) + tl_tid];
        float w76 = w13 * w75;
        float w77 = w11 + w76;
        float w78 = tl_opq(expf(tl_opq(w77, zero)), zero);
        float w81 = scratch[11u * (tl_inv ^ zero) + tl_tid];
        float w82 = w13 * w81;
        float w83 = w11 + w82;
        float w84 = tl_opq(expf(tl_opq(w83, zero)), zero);
        float w87 = scratch[12u * (tl_inv ^ zero) + tl_tid];
        float w88 = w13 * w87;
        float w89 = w11 + w88;
        float w90 = tl_opq(expf(tl_opq(w89, zero)), zero);
        float w93 = scratch[13u * (tl_inv ^ zero) + tl_tid];
        float w94 = w13 * w93;
        float w95 = w11 + w94;
        float w96 = tl_opq(expf(tl_opq(w95, zero)), zero);
        float w99 = scratch[14u * (tl_inv ^ zero) + tl_tid];
        float w100 = w13 * w99;
        float w101 = w11 + w100;
        float w102 = tl_opq(expf(tl_opq(w101, zero)), zero);
        float w105 = scratch[15u * (tl_inv ^ zero) + tl_tid];
        float w106 = w13 * w105;
        float w107 = w11 + w106;
        float w108 = tl_opq(expf(tl_opq(w107, zero)), zero);
        #pragma unroll 1
        for (int tl_m = 0; tl_m < 7; ++tl_m) {  // markets, one at a time
          float w0 = tl_opq(tl_ahead6, zero);
          tl_ahead6 = v0[(tl_m + 1 < 7 ? tl_m + 1 : 6)];
          float w19 = w0 * w18;
          float w25 = w19 * w24;
          float w31 = w25 * w30;
          float w37 = w31 * w36;
          float w43 = w37 * w42;
          float w49 = w43 * w48;
          float w55 = w49 * w54;
          float w61 = w55 * w60;
          float w67 = w61 * w66;
          float w73 = w67 * w72;
          float w79 = w73 * w78;
          float w85 = w79 * w84;
          float w91 = w85 * w90;
          float w97 = w91 * w96;
          float w103 = w97 * w102;
          float d104 = tl_dbm[7u + (unsigned int)(tl_m)];
          tl_dbm[(unsigned int)(tl_m)] += tl_dbm[7u + (unsigned int)(tl_m)];
          float d103 = tl_dbm[(unsigned int)(tl_m)] * w108;
          float d108 = tl_dbm[(unsigned int)(tl_m)] * w103;
          float d107 = d108 * w108;
          ds3[tl_m] += d107;
          float d106 = d107;
          ds4[tl_m] += d106 * w105;
          float d98 = d104;
          d103 += d104;
          float d97 = d103 * w102;
          float d102 = d103 * w97;
          float d101 = d102 * w102;
          ds3[tl_m] += d101;
          float d100 = d101;
          ds4[tl_m] += d100 * w99;
          float d92 = d98;
          d97 += d98;
          float d91 = d97 * w96;
          float d96 = d97 * w91;
          float d95 = d96 * w96;
          ds3[tl_m] += d95;
          float d94 = d95;
          ds4[tl_m] += d94 * w93;
          float d86 = d92;
          d91 += d92;
          float d85 = d91 * w90;
          float d90 = d91 * w85;
          float d89 = d90 * w90;
          ds3[tl_m] += d89;
          float d88 = d89;
          ds4[tl_m] += d88 * w87;
          float d80 = d86;
          d85 += d86;
          float d79 = d85 * w84;
          float d84 = d85 * w79;
          float d83 = d84 * w84;
          ds3[tl_m] += d83;
          float d82 = d83;
          ds4[tl_m] += d82 * w81;
          float d74 = d80;
          d79 += d80;
          float d73 = d79 * w78;
          float d78 = d79 * w73;
          float d77 = d78 * w78;
          ds3[tl_m] += d77;
          float d76 = d77;
          ds4[tl_m] += d76 * w75;
          float d68 = d74;
          d73 += d74;
          float d67 = d73 * w72;
          float d72 = d73 * w67;
          float d71 = d72 * w72;
          ds3[tl_m] += d71;
          float d70 = d71;
          ds4[tl_m] += d70 * w69;
          float d62 = d68;
          d67 += d68;
          float d61 = d67 * w66;
          float d66 = d67 * w61;
          float d65 = d66 * w66;
          ds3[tl_m] += d65;
          float d64 = d65;
          ds4[tl_m] += d64 * w63;
          float d56 = d62;
          d61 += d62;
          float d55 = d61 * w60;
          float d60 = d61 * w55;
          float d59 = d60 * w60;
          ds3[tl_m] += d59;
          float d58 = d59;
          ds4[tl_m] += d58 * w57;
          float d50 = d56;
          d55 += d56;
          float d49 = d55 * w54;
          float d54 = d55 * w49;
          float d53 = d54 * w54;
          ds3[tl_m] += d53;
          float d52 = d53;
          ds4[tl_m] += d52 * w51;
          float d44 = d50;
          d49 += d50;
          float d43 = d49 * w48;
          float d48 = d49 * w43;
          float d47 = d48 * w48;
          ds3[tl_m] += d47;
          float d46 = d47;
          ds4[tl_m] += d46 * w45;
          float d38 = d44;
          d43 += d44;
          float d37 = d43 * w42;
          float d42 = d43 * w37;
          float d41 = d42 * w42;
          ds3[tl_m] += d41;
          float d40 = d41;
          ds4[tl_m] += d40 * w39;
          float d32 = d38;
          d37 += d38;
          float d31 = d37 * w36;
          float d36 = d37 * w31;
          float d35 = d36 * w36;
          ds3[tl_m] += d35;
          float d34 = d35;
          ds4[tl_m] += d34 * w33;
          float d26 = d32;
          d31 += d32;
          float d25 = d31 * w30;
          float d30 = d31 * w25;
          float d29 = d30 * w30;
          ds3[tl_m] += d29;
          float d28 = d29;
          ds4[tl_m] += d28 * w27;
          float d20 = d26;
          d25 += d26;
          float d19 = d25 * w24;
          float d24 = d25 * w19;
          float d23 = d24 * w24;
          ds3[tl_m] += d23;
          float d22 = d23;
          ds4[tl_m] += d22 * w21;
          d19 += d20;
          ds8[tl_m] = d19 * w18;
          float d18 = d19 * w0;
          float d17 = d18 * w18;
          ds3[tl_m] += d17;
          float d16 = d17;
          ds4[tl_m] += d16 * w15;
          ds7[tl_m] = ds4[tl_m] * w12;
          float d12 = ds4[tl_m] * w2;
          float d10 = d12 / (w12 + w12);
          float d8 = ds3[tl_m] * w10;
          d10 += ds3[tl_m] * w8;
          ds2[tl_m] += d10 * w9;
          ds1[tl_m] += d8;
          float d7 = -d8;
          float d5 = d7 * w6;
          ds7[tl_m] += d5 * w2;
          ds7[tl_m] += d5 * w2;
        }
      }
      { float y = v1535[0] - tl_c0; float t = tl_s0 + y; tl_c0 = (t - tl_s0) - y; tl_s0 = t; }
      { float y = v1535[0] * v1535[0] - tl_c6; float t = tl_s6 + y; tl_c6 = (t - tl_s6) - y; tl_s6 = t; }
      { float y = ds8[0] - tl_c1; float t = tl_s1 + y; tl_c1 = (t - tl_s1) - y; tl_s1 = t; }
      { float y = ds8[0] * ds8[0] - tl_c7; float t = tl_s7 + y; tl_c7 = (t - tl_s7) - y; tl_s7 = t; }
      { float y = ds0[0] - tl_c2; float t = tl_s2 + y; tl_c2 = (t - tl_s2) - y; tl_s2 = t; }
      { float y = ds0[0] * ds0[0] - tl_c8; float t = tl_s8 + y; tl_c8 = (t - tl_s8) - y; tl_s8 = t; }
      { float y = ds7[0] - tl_c3; float t = tl_s3 + y; tl_c3 = (t - tl_s3) - y; tl_s3 = t; }
      { float y = ds7[0] * ds7[0] - tl_c9; float t = tl_s9 + y; tl_c9 = (t - tl_s9) - y; tl_s9 = t; }
      { float y = ds1[0] - tl_c4; float t = tl_s4 + y; tl_c4 = (t - tl_s4) - y; tl_s4 = t; }
      { float y = ds1[0] * ds1[0] - tl_c10; float t = tl_s10 + y; tl_c10 = (t - tl_s10) - y; tl_s10 = t; }
      { float y = ds2[0] - tl_c5; float t = tl_s5 + y; tl_c5 = (t - tl_s5) - y; tl_s5 = t; }
      { float y = ds2[0] * ds2[0] - tl_c11; float t = tl_s11 + y; tl_c11 = (t - tl_s11) - y; tl_s11 = t; }
      { float y = v1535[1] - tl_c12; float t = tl_s12 + y; tl_c12 = (t - tl_s12) - y; tl_s12 = t; }
      { float y = v1535[1] * v1535[1] - tl_c18; float t = tl_s18 + y; tl_c18 = (t - tl_s18) - y; tl_s18 = t; }
      { float y = ds8[1] - tl_c13; float t = tl_s13 + y; tl_c13 = (t - tl_s13) - y; tl_s13 = t; }
      { float y = ds8[1] * ds8[1] - tl_c19; float t = tl_s19 + y; tl_c19 = (t - tl_s19) - y; tl_s19 = t; }
      { float y = ds0[1] - tl_c14; float t = tl_s14 + y; tl_c14 = (t - tl_s14) - y; tl_s14 = t; }
      { float y = ds0[1] * ds0[1] - tl_c20; float t = tl_s20 + y; tl_c20 = (t - tl_s20) - y; tl_s20 = t; }
      { float y = ds7[1] - tl_c15; float t = tl_s15 + y; tl_c15 = (t - tl_s15) - y; tl_s15 = t; }
      { float y = ds7[1] * ds7[1] - tl_c21; float t = tl_s21 + y; tl_c21 = (t - tl_s21) - y; tl_s21 = t; }
      { float y = ds1[1] - tl_c16; float t = tl_s16 + y; tl_c16 = (t - tl_s16) - y; tl_s16 = t; }
      { float y = ds1[1] * ds1[1] - tl_c22; float t = tl_s22 + y; tl_c22 = (t - tl_s22) - y; tl_s22 = t; }
      { float y = ds2[1] - tl_c17; float t = tl_s17 + y; tl_c17 = (t - tl_s17) - y; tl_s17 = t; }
      { float y = ds2[1] * ds2[1] - tl_c23; float t = tl_s23 + y; tl_c23 = (t - tl_s23) - y; tl_s23 = t; }
      { float y = v1535[2] - tl_c24; float t = tl_s24 + y; tl_c24 = (t - tl_s24) - y; tl_s24 = t; }
      { float y = v1535[2] * v1535[2] - tl_c30; float t = tl_s30 + y; tl_c30 = (t - tl_s30) - y; tl_s30 = t; }
      { float y = ds8[2] - tl_c25; float t = tl_s25 + y; tl_c25 = (t - tl_s25) - y; tl_s25 = t; }
      { float y = ds8[2] * ds8[2] - tl_c31; float t = tl_s31 + y; tl_c31 = (t - tl_s31) - y; tl_s31 = t; }
      { float y = ds0[2] - tl_c26; float t = tl_s26 + y; tl_c26 = (t - tl_s26) - y; tl_s26 = t; }
      { float y = ds0[2] * ds0[2] - tl_c32; float t = tl_s32 + y; tl_c32 = (t - tl_s32) - y; tl_s32 = t; }
      { float y = ds7[2] - tl_c27; float t = tl_s27 + y; tl_c27 = (t - tl_s27) - y; tl_s27 = t; }
      { float y = ds7[2] * ds7[2] - tl_c33; float t = tl_s33 + y; tl_c33 = (t - tl_s33) - y; tl_s33 = t; }
      { float y = ds1[2] - tl_c28; float t = tl_s28 + y; tl_c28 = (t - tl_s28) - y; tl_s28 = t; }
      { float y = ds1[2] * ds1[2] - tl_c34; float t = tl_s34 + y; tl_c34 = (t - tl_s34) - y; tl_s34 = t; }
      { float y = ds2[2] - tl_c29; float t = tl_s29 + y; tl_c29 = (t - tl_s29) - y; tl_s29 = t; }
      { float y = ds2[2] * ds2[2] - tl_c35; float t = tl_s35 + y; tl_c35 = (t - tl_s35) - y; tl_s35 = t; }
      { float y = v1535[3] - tl_c36; float t = tl_s36 + y; tl_c36 = (t - tl_s36) - y; tl_s36 = t; }
      { float y = v1535[3] * v1535[3] - tl_c42; float t = tl_s42 + y; tl_c42 = (t - tl_s42) - y; tl_s42 = t; }
      { float y = ds8[3] - tl_c37; float t = tl_s37 + y; tl_c37 = (t - tl_s37) - y; tl_s37 = t; }
      { float y = ds8[3] * ds8[3] - tl_c43; float t = tl_s43 + y; tl_c43 = (t - tl_s43) - y; tl_s43 = t; }
      { float y = ds0[3] - tl_c38; float t = tl_s38 + y; tl_c38 = (t - tl_s38) - y; tl_s38 = t; }
      { float y = ds0[3] * ds0[3] - tl_c44; float t = tl_s44 + y; tl_c44 = (t - tl_s44) - y; tl_s44 = t; }
      { float y = ds7[3] - tl_c39; float t = tl_s39 + y; tl_c39 = (t - tl_s39) - y; tl_s39 = t; }
      { float y = ds7[3] * ds7[3] - tl_c45; float t = tl_s45 + y; tl_c45 = (t - tl_s45) - y; tl_s45 = t; }
      { float y = ds1[3] - tl_c40; float t = tl_s40 + y; tl_c40 = (t - tl_s40) - y; tl_s40 = t; }
      { float y = ds1[3] * ds1[3] - tl_c46; float t = tl_s46 + y; tl_c46 = (t - tl_s46) - y; tl_s46 = t; }
      { float y = ds2[3] - tl_c41; float t = tl_s41 + y; tl_c41 = (t - tl_s41) - y; tl_s41 = t; }
      { float y = ds2[3] * ds2[3] - tl_c47; float t = tl_s47 + y; tl_c47 = (t - tl_s47) - y; tl_s47 = t; }
      { float y = v1535[4] - tl_c48; float t = tl_s48 + y; tl_c48 = (t - tl_s48) - y; tl_s48 = t; }
      { float y = v1535[4] * v1535[4] - tl_c54; float t = tl_s54 + y; tl_c54 = (t - tl_s54) - y; tl_s54 = t; }
      { float y = ds8[4] - tl_c49; float t = tl_s49 + y; tl_c49 = (t - tl_s49) - y; tl_s49 = t; }
      { float y = ds8[4] * ds8[4] - tl_c55; float t = tl_s55 + y; tl_c55 = (t - tl_s55) - y; tl_s55 = t; }
      { float y = ds0[4] - tl_c50; float t = tl_s50 + y; tl_c50 = (t - tl_s50) - y; tl_s50 = t; }
      { float y = ds0[4] * ds0[4] - tl_c56; float t = tl_s56 + y; tl_c56 = (t - tl_s56) - y; tl_s56 = t; }
      { float y = ds7[4] - tl_c51; float t = tl_s51 + y; tl_c51 = (t - tl_s51) - y; tl_s51 = t; }
      { float y = ds7[4] * ds7[4] - tl_c57; float t = tl_s57 + y; tl_c57 = (t - tl_s57) - y; tl_s57 = t; }
      { float y = ds1[4] - tl_c52; float t = tl_s52 + y; tl_c52 = (t - tl_s52) - y; tl_s52 = t; }
      { float y = ds1[4] * ds1[4] - tl_c58; float t = tl_s58 + y; tl_c58 = (t - tl_s58) - y; tl_s58 = t; }
      { float y = ds2[4] - tl_c53; float t = tl_s53 + y; tl_c53 = (t - tl_s53) - y; tl_s53 = t; }
      { float y = ds2[4] * ds2[4] - tl_c59; float t = tl_s59 + y; tl_c59 = (t - tl_s59) - y; tl_s59 = t; }
      { float y = v1535[5] - tl_c60; float t = tl_s60 + y; tl_c60 = (t - tl_s60) - y; tl_s60 = t; }
      { float y = v1535[5] * v1535[5] - tl_c66; float t = tl_s66 + y; tl_c66 = (t - tl_s66) - y; tl_s66 = t; }
      { float y = ds8[5] - tl_c61; float t = tl_s61 + y; tl_c61 = (t - tl_s61) - y; tl_s61 = t; }
      { float y = ds8[5] * ds8[5] - tl_c67; float t = tl_s67 + y; tl_c67 = (t - tl_s67) - y; tl_s67 = t; }
      { float y = ds0[5] - tl_c62; float t = tl_s62 + y; tl_c62 = (t - tl_s62) - y; tl_s62 = t; }
      { float y = ds0[5] * ds0[5] - tl_c68; float t = tl_s68 + y; tl_c68 = (t - tl_s68) - y; tl_s68 = t; }
      { float y = ds7[5] - tl_c63; float t = tl_s63 + y; tl_c63 = (t - tl_s63) - y; tl_s63 = t; }
      { float y = ds7[5] * ds7[5] - tl_c69; float t = tl_s69 + y; tl_c69 = (t - tl_s69) - y; tl_s69 = t; }
      { float y = ds1[5] - tl_c64; float t = tl_s64 + y; tl_c64 = (t - tl_s64) - y; tl_s64 = t; }
      { float y = ds1[5] * ds1[5] - tl_c70; float t = tl_s70 + y; tl_c70 = (t - tl_s70) - y; tl_s70 = t; }
      { float y = ds2[5] - tl_c65; float t = tl_s65 + y; tl_c65 = (t - tl_s65) - y; tl_s65 = t; }
      { float y = ds2[5] * ds2[5] - tl_c71; float t = tl_s71 + y; tl_c71 = (t - tl_s71) - y; tl_s71 = t; }
      { float y = v1535[6] - tl_c72; float t = tl_s72 + y; tl_c72 = (t - tl_s72) - y; tl_s72 = t; }
      { float y = v1535[6] * v1535[6] - tl_c78; float t = tl_s78 + y; tl_c78 = (t - tl_s78) - y; tl_s78 = t; }
      { float y = ds8[6] - tl_c73; float t = tl_s73 + y; tl_c73 = (t - tl_s73) - y; tl_s73 = t; }
      { float y = ds8[6] * ds8[6] - tl_c79; float t = tl_s79 + y; tl_c79 = (t - tl_s79) - y; tl_s79 = t; }
      { float y = ds0[6] - tl_c74; float t = tl_s74 + y; tl_c74 = (t - tl_s74) - y; tl_s74 = t; }
      { float y = ds0[6] * ds0[6] - tl_c80; float t = tl_s80 + y; tl_c80 = (t - tl_s80) - y; tl_s80 = t; }
      { float y = ds7[6] - tl_c75; float t = tl_s75 + y; tl_c75 = (t - tl_s75) - y; tl_s75 = t; }
      { float y = ds7[6] * ds7[6] - tl_c81; float t = tl_s81 + y; tl_c81 = (t - tl_s81) - y; tl_s81 = t; }
      { float y = ds1[6] - tl_c76; float t = tl_s76 + y; tl_c76 = (t - tl_s76) - y; tl_s76 = t; }
      { float y = ds1[6] * ds1[6] - tl_c82; float t = tl_s82 + y; tl_c82 = (t - tl_s82) - y; tl_s82 = t; }
      { float y = ds2[6] - tl_c77; float t = tl_s77 + y; tl_c77 = (t - tl_s77) - y; tl_s77 = t; }
      { float y = ds2[6] * ds2[6] - tl_c83; float t = tl_s83 + y; tl_c83 = (t - tl_s83) - y; tl_s83 = t; }
    }
  }
  // workgroup reduction: a fixed binary tree in local memory, then one partial per sum
  tl_red[0u + tl_lid] = tl_s0;
  tl_red[64u + tl_lid] = tl_s1;
  tl_red[128u + tl_lid] = tl_s2;
  tl_red[192u + tl_lid] = tl_s3;
  tl_red[256u + tl_lid] = tl_s4;
  tl_red[320u + tl_lid] = tl_s5;
  tl_red[384u + tl_lid] = tl_s6;
  tl_red[448u + tl_lid] = tl_s7;
  tl_red[512u + tl_lid] = tl_s8;
  tl_red[576u + tl_lid] = tl_s9;
  tl_red[640u + tl_lid] = tl_s10;
  tl_red[704u + tl_lid] = tl_s11;
  tl_red[768u + tl_lid] = tl_s12;
  tl_red[832u + tl_lid] = tl_s13;
  tl_red[896u + tl_lid] = tl_s14;
  tl_red[960u + tl_lid] = tl_s15;
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
      tl_red[768u + tl_lid] = tl_red[768u + tl_lid] + tl_red[768u + tl_lid + tl_st];
      tl_red[832u + tl_lid] = tl_red[832u + tl_lid] + tl_red[832u + tl_lid + tl_st];
      tl_red[896u + tl_lid] = tl_red[896u + tl_lid] + tl_red[896u + tl_lid + tl_st];
      tl_red[960u + tl_lid] = tl_red[960u + tl_lid] + tl_red[960u + tl_lid + tl_st];
    }
    __syncthreads();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 84u + 0u] = tl_red[0u];
    partials[tl_g * 84u + 1u] = tl_red[64u];
    partials[tl_g * 84u + 2u] = tl_red[128u];
    partials[tl_g * 84u + 3u] = tl_red[192u];
    partials[tl_g * 84u + 4u] = tl_red[256u];
    partials[tl_g * 84u + 5u] = tl_red[320u];
    partials[tl_g * 84u + 6u] = tl_red[384u];
    partials[tl_g * 84u + 7u] = tl_red[448u];
    partials[tl_g * 84u + 8u] = tl_red[512u];
    partials[tl_g * 84u + 9u] = tl_red[576u];
    partials[tl_g * 84u + 10u] = tl_red[640u];
    partials[tl_g * 84u + 11u] = tl_red[704u];
    partials[tl_g * 84u + 12u] = tl_red[768u];
    partials[tl_g * 84u + 13u] = tl_red[832u];
    partials[tl_g * 84u + 14u] = tl_red[896u];
    partials[tl_g * 84u + 15u] = tl_red[960u];
  }
  __syncthreads();
  tl_red[0u + tl_lid] = tl_s16;
  tl_red[64u + tl_lid] = tl_s17;
  tl_red[128u + tl_lid] = tl_s18;
  tl_red[192u + tl_lid] = tl_s19;
  tl_red[256u + tl_lid] = tl_s20;
  tl_red[320u + tl_lid] = tl_s21;
  tl_red[384u + tl_lid] = tl_s22;
  tl_red[448u + tl_lid] = tl_s23;
  tl_red[512u + tl_lid] = tl_s24;
  tl_red[576u + tl_lid] = tl_s25;
  tl_red[640u + tl_lid] = tl_s26;
  tl_red[704u + tl_lid] = tl_s27;
  tl_red[768u + tl_lid] = tl_s28;
  tl_red[832u + tl_lid] = tl_s29;
  tl_red[896u + tl_lid] = tl_s30;
  tl_red[960u + tl_lid] = tl_s31;
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
      tl_red[768u + tl_lid] = tl_red[768u + tl_lid] + tl_red[768u + tl_lid + tl_st];
      tl_red[832u + tl_lid] = tl_red[832u + tl_lid] + tl_red[832u + tl_lid + tl_st];
      tl_red[896u + tl_lid] = tl_red[896u + tl_lid] + tl_red[896u + tl_lid + tl_st];
      tl_red[960u + tl_lid] = tl_red[960u + tl_lid] + tl_red[960u + tl_lid + tl_st];
    }
    __syncthreads();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 84u + 16u] = tl_red[0u];
    partials[tl_g * 84u + 17u] = tl_red[64u];
    partials[tl_g * 84u + 18u] = tl_red[128u];
    partials[tl_g * 84u + 19u] = tl_red[192u];
    partials[tl_g * 84u + 20u] = tl_red[256u];
    partials[tl_g * 84u + 21u] = tl_red[320u];
    partials[tl_g * 84u + 22u] = tl_red[384u];
    partials[tl_g * 84u + 23u] = tl_red[448u];
    partials[tl_g * 84u + 24u] = tl_red[512u];
    partials[tl_g * 84u + 25u] = tl_red[576u];
    partials[tl_g * 84u + 26u] = tl_red[640u];
    partials[tl_g * 84u + 27u] = tl_red[704u];
    partials[tl_g * 84u + 28u] = tl_red[768u];
    partials[tl_g * 84u + 29u] = tl_red[832u];
    partials[tl_g * 84u + 30u] = tl_red[896u];
    partials[tl_g * 84u + 31u] = tl_red[960u];
  }
  __syncthreads();
  tl_red[0u + tl_lid] = tl_s32;
  tl_red[64u + tl_lid] = tl_s33;
  tl_red[128u + tl_lid] = tl_s34;
  tl_red[192u + tl_lid] = tl_s35;
  tl_red[256u + tl_lid] = tl_s36;
  tl_red[320u + tl_lid] = tl_s37;
  tl_red[384u + tl_lid] = tl_s38;
  tl_red[448u + tl_lid] = tl_s39;
  tl_red[512u + tl_lid] = tl_s40;
  tl_red[576u + tl_lid] = tl_s41;
  tl_red[640u + tl_lid] = tl_s42;
  tl_red[704u + tl_lid] = tl_s43;
  tl_red[768u + tl_lid] = tl_s44;
  tl_red[832u + tl_lid] = tl_s45;
  tl_red[896u + tl_lid] = tl_s46;
  tl_red[960u + tl_lid] = tl_s47;
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
      tl_red[768u + tl_lid] = tl_red[768u + tl_lid] + tl_red[768u + tl_lid + tl_st];
      tl_red[832u + tl_lid] = tl_red[832u + tl_lid] + tl_red[832u + tl_lid + tl_st];
      tl_red[896u + tl_lid] = tl_red[896u + tl_lid] + tl_red[896u + tl_lid + tl_st];
      tl_red[960u + tl_lid] = tl_red[960u + tl_lid] + tl_red[960u + tl_lid + tl_st];
    }
    __syncthreads();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 84u + 32u] = tl_red[0u];
    partials[tl_g * 84u + 33u] = tl_red[64u];
    partials[tl_g * 84u + 34u] = tl_red[128u];
    partials[tl_g * 84u + 35u] = tl_red[192u];
    partials[tl_g * 84u + 36u] = tl_red[256u];
    partials[tl_g * 84u + 37u] = tl_red[320u];
    partials[tl_g * 84u + 38u] = tl_red[384u];
    partials[tl_g * 84u + 39u] = tl_red[448u];
    partials[tl_g * 84u + 40u] = tl_red[512u];
    partials[tl_g * 84u + 41u] = tl_red[576u];
    partials[tl_g * 84u + 42u] = tl_red[640u];
    partials[tl_g * 84u + 43u] = tl_red[704u];
    partials[tl_g * 84u + 44u] = tl_red[768u];
    partials[tl_g * 84u + 45u] = tl_red[832u];
    partials[tl_g * 84u + 46u] = tl_red[896u];
    partials[tl_g * 84u + 47u] = tl_red[960u];
  }
  __syncthreads();
  tl_red[0u + tl_lid] = tl_s48;
  tl_red[64u + tl_lid] = tl_s49;
  tl_red[128u + tl_lid] = tl_s50;
  tl_red[192u + tl_lid] = tl_s51;
  tl_red[256u + tl_lid] = tl_s52;
  tl_red[320u + tl_lid] = tl_s53;
  tl_red[384u + tl_lid] = tl_s54;
  tl_red[448u + tl_lid] = tl_s55;
  tl_red[512u + tl_lid] = tl_s56;
  tl_red[576u + tl_lid] = tl_s57;
  tl_red[640u + tl_lid] = tl_s58;
  tl_red[704u + tl_lid] = tl_s59;
  tl_red[768u + tl_lid] = tl_s60;
  tl_red[832u + tl_lid] = tl_s61;
  tl_red[896u + tl_lid] = tl_s62;
  tl_red[960u + tl_lid] = tl_s63;
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
      tl_red[768u + tl_lid] = tl_red[768u + tl_lid] + tl_red[768u + tl_lid + tl_st];
      tl_red[832u + tl_lid] = tl_red[832u + tl_lid] + tl_red[832u + tl_lid + tl_st];
      tl_red[896u + tl_lid] = tl_red[896u + tl_lid] + tl_red[896u + tl_lid + tl_st];
      tl_red[960u + tl_lid] = tl_red[960u + tl_lid] + tl_red[960u + tl_lid + tl_st];
    }
    __syncthreads();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 84u + 48u] = tl_red[0u];
    partials[tl_g * 84u + 49u] = tl_red[64u];
    partials[tl_g * 84u + 50u] = tl_red[128u];
    partials[tl_g * 84u + 51u] = tl_red[192u];
    partials[tl_g * 84u + 52u] = tl_red[256u];
    partials[tl_g * 84u + 53u] = tl_red[320u];
    partials[tl_g * 84u + 54u] = tl_red[384u];
    partials[tl_g * 84u + 55u] = tl_red[448u];
    partials[tl_g * 84u + 56u] = tl_red[512u];
    partials[tl_g * 84u + 57u] = tl_red[576u];
    partials[tl_g * 84u + 58u] = tl_red[640u];
    partials[tl_g * 84u + 59u] = tl_red[704u];
    partials[tl_g * 84u + 60u] = tl_red[768u];
    partials[tl_g * 84u + 61u] = tl_red[832u];
    partials[tl_g * 84u + 62u] = tl_red[896u];
    partials[tl_g * 84u + 63u] = tl_red[960u];
  }
  __syncthreads();
  tl_red[0u + tl_lid] = tl_s64;
  tl_red[64u + tl_lid] = tl_s65;
  tl_red[128u + tl_lid] = tl_s66;
  tl_red[192u + tl_lid] = tl_s67;
  tl_red[256u + tl_lid] = tl_s68;
  tl_red[320u + tl_lid] = tl_s69;
  tl_red[384u + tl_lid] = tl_s70;
  tl_red[448u + tl_lid] = tl_s71;
  tl_red[512u + tl_lid] = tl_s72;
  tl_red[576u + tl_lid] = tl_s73;
  tl_red[640u + tl_lid] = tl_s74;
  tl_red[704u + tl_lid] = tl_s75;
  tl_red[768u + tl_lid] = tl_s76;
  tl_red[832u + tl_lid] = tl_s77;
  tl_red[896u + tl_lid] = tl_s78;
  tl_red[960u + tl_lid] = tl_s79;
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
      tl_red[768u + tl_lid] = tl_red[768u + tl_lid] + tl_red[768u + tl_lid + tl_st];
      tl_red[832u + tl_lid] = tl_red[832u + tl_lid] + tl_red[832u + tl_lid + tl_st];
      tl_red[896u + tl_lid] = tl_red[896u + tl_lid] + tl_red[896u + tl_lid + tl_st];
      tl_red[960u + tl_lid] = tl_red[960u + tl_lid] + tl_red[960u + tl_lid + tl_st];
    }
    __syncthreads();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 84u + 64u] = tl_red[0u];
    partials[tl_g * 84u + 65u] = tl_red[64u];
    partials[tl_g * 84u + 66u] = tl_red[128u];
    partials[tl_g * 84u + 67u] = tl_red[192u];
    partials[tl_g * 84u + 68u] = tl_red[256u];
    partials[tl_g * 84u + 69u] = tl_red[320u];
    partials[tl_g * 84u + 70u] = tl_red[384u];
    partials[tl_g * 84u + 71u] = tl_red[448u];
    partials[tl_g * 84u + 72u] = tl_red[512u];
    partials[tl_g * 84u + 73u] = tl_red[576u];
    partials[tl_g * 84u + 74u] = tl_red[640u];
    partials[tl_g * 84u + 75u] = tl_red[704u];
    partials[tl_g * 84u + 76u] = tl_red[768u];
    partials[tl_g * 84u + 77u] = tl_red[832u];
    partials[tl_g * 84u + 78u] = tl_red[896u];
    partials[tl_g * 84u + 79u] = tl_red[960u];
  }
  __syncthreads();
  tl_red[0u + tl_lid] = tl_s80;
  tl_red[64u + tl_lid] = tl_s81;
  tl_red[128u + tl_lid] = tl_s82;
  tl_red[192u + tl_lid] = tl_s83;
  __syncthreads();
  for (unsigned int tl_st = 32u; tl_st > 0u; tl_st >>= 1u) {
    if (tl_lid < tl_st) {
      tl_red[0u + tl_lid] = tl_red[0u + tl_lid] + tl_red[0u + tl_lid + tl_st];
      tl_red[64u + tl_lid] = tl_red[64u + tl_lid] + tl_red[64u + tl_lid + tl_st];
      tl_red[128u + tl_lid] = tl_red[128u + tl_lid] + tl_red[128u + tl_lid + tl_st];
      tl_red[192u + tl_lid] = tl_red[192u + tl_lid] + tl_red[192u + tl_lid + tl_st];
    }
    __syncthreads();
  }
  if (tl_lid == 0u) {
    partials[tl_g * 84u + 80u] = tl_red[0u];
    partials[tl_g * 84u + 81u] = tl_red[64u];
    partials[tl_g * 84u + 82u] = tl_red[128u];
    partials[tl_g * 84u + 83u] = tl_red[192u];
  }
}

// The run's sums on the device (gpu/cuda/cuda.cpp reductionSource): a block per column, groups in order.
// Copies rows [from, from + 256u) of one column (rows `per` values apart) into dst, asynchronously from sm_80.
static __device__ __forceinline__ void tl_fetch(float* dst, const float* col, unsigned int from, unsigned int groups, unsigned int per, unsigned int lane) {
  for (unsigned int k = lane; k < 256u && from + k < groups; k += 128u) {
#if __CUDA_ARCH__ >= 800
    const unsigned int d = (unsigned int)__cvta_generic_to_shared(dst + k);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d), "l"(col + (size_t)(from + k) * per) : "memory");
#else
    dst[k] = col[(size_t)(from + k) * per];
#endif
  }
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
extern "C" __global__ void __launch_bounds__(128, 16) tapelab_reduce(const float* __restrict__ partials, double* __restrict__ totals, unsigned int groups, unsigned int per, unsigned int fresh) {
  __shared__ float tl_rows[2][256u];
  const unsigned int c = blockIdx.x, lane = threadIdx.x;
  const float* col = partials + c;
  tl_fetch(tl_rows[0], col, 0u, groups, per, lane);
  double s = fresh ? 0.0 : totals[c];
  unsigned int b = 0;
  for (unsigned int base = 0; base < groups; base += 256u, b ^= 1u) {
    tl_fetch(tl_rows[b ^ 1u], col, base + 256u, groups, per, lane);
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;" ::: "memory");  // this step's rows landed, the next may not have
#endif
    __syncthreads();
    if (lane == 0) {
      const float* r = tl_rows[b];
      const unsigned int n = groups - base < 256u ? groups - base : 256u;
      unsigned int k = 0;
      for (; k + 8u <= n; k += 8u) {
        double x[8];
        #pragma unroll
        for (int i = 0; i < 8; ++i) x[i] = (double)r[k + i];
        #pragma unroll
        for (int i = 0; i < 8; ++i) s = __dadd_rn(s, x[i]);
      }
      for (; k < n; ++k) s = __dadd_rn(s, (double)r[k]);
    }
    __syncthreads();  // before the next step's copies overwrite these rows
  }
  if (lane == 0) totals[c] = s;
}
