struct Words {
  unsigned x, y, z, w;
};

__device__ __forceinline__ Words philox(unsigned c0, unsigned c1, unsigned c2, unsigned c3, unsigned k0, unsigned k1) {
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const unsigned hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    const unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return {c0, c1, c2, c3};
}

__device__ __forceinline__ float normal(unsigned w) {
  const float u = (float)(w >> 9u) + 0.5f;
  const float uu = u * 1.1920928955078125e-07f;
  const float low = 0.02425f, high = 1.0f - 0.02425f;
  if (uu < low || uu > high) {
    const float tail = uu < low ? uu : 1.0f - uu;
    const float q = sqrtf(-2.0f * logf(tail));
    const float num = ((((-7.784894002430293e-03f * q - 3.223964580411365e-01f) * q - 2.400758277161838e+00f) * q -
                        2.549732539343734e+00f) * q + 4.374664141464968e+00f) * q + 2.938163982698783e+00f;
    const float den = (((7.784695709041462e-03f * q + 3.224671290700398e-01f) * q + 2.445134137142996e+00f) * q +
                       3.754408661907416e+00f) * q + 1.0f;
    const float x = num / den;
    return uu < low ? x : -x;
  }
  const float q = uu - 0.5f, r = q * q;
  const float num = (((((-3.969683028665376e+01f * r + 2.209460984245205e+02f) * r - 2.759285104469687e+02f) * r +
                       1.383577518672690e+02f) * r - 3.066479806614716e+01f) * r + 2.506628277459239e+00f) * q;
  const float den = ((((-5.447609879822406e+01f * r + 1.615858368580409e+02f) * r - 1.556989798598866e+02f) * r +
                      6.680131188771972e+01f) * r - 1.328068155288572e+01f) * r + 1.0f;
  return num / den;
}

// tape/philox.h's boxMuller (version 4): draws 2p and 2p+1 from the words (a, b).
__device__ __forceinline__ float2 boxMuller(unsigned a, unsigned b) {
  const float u = fmaf((float)(a >> 9u), 1.1920928955078125e-07f, 5.9604644775390625e-08f);
  const float r2 = -2.0f * logf(u);
  const float rho = sqrtf(r2 > 0.0f ? r2 : 0.0f);
  const unsigned n = b >> 30u;
  const float f = fmaf((float)((b >> 9u) & 0x1FFFFFu), 4.76837158203125e-07f, -0.49999976158142089844f);
  const float th = f * 1.5707963267948966f, t = th * th;
  const float s = th * fmaf(fmaf(fmaf(fmaf(fmaf(-2.5052108385441720e-08f, t, 2.7557319223985893e-06f), t,
                                          -1.9841269841269841e-04f), t, 8.3333333333333332e-03f), t,
                                 -1.6666666666666666e-01f), t, 1.0f);
  const float c = fmaf(fmaf(fmaf(fmaf(fmaf(fmaf(2.0876756987868100e-09f, t, -2.7557319223985888e-07f), t,
                                          2.4801587301587302e-05f), t, -1.3888888888888889e-03f), t,
                                 4.1666666666666664e-02f), t, -0.5f), t, 1.0f);
  const float x = (n & 1u) ? s : c, y = (n & 1u) ? c : s;
  return make_float2(rho * (n == 1u || n == 2u ? -x : x), rho * (n >= 2u ? -y : y));
}

struct Market {
  float spot, strike, vol, rate, maturity;
};

// sums[0..5]: value and d/d(spot, strike, vol, rate, maturity), over all paths.
// kDraws: 1, 2 or 4, the draws version the kernel maps words with (the head of this file).
template <bool kGreeks, int kDraws>
__device__ __forceinline__ void asian(Market m, int steps, unsigned long long paths, unsigned seedLo,
                                             unsigned seedHi, double* sums) {
  const unsigned long long p = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  float acc[6] = {0, 0, 0, 0, 0, 0};
  if (p < paths) {
    const unsigned plo = (unsigned)p, phi = (unsigned)(p >> 32);
    const float dt = m.maturity / steps, sdt = sqrtf(dt);
    const float mu = m.rate - 0.5f * m.vol * m.vol;
    const float drift = mu * dt, vsd = m.vol * sdt;
    // Tangents of drift and vol*sqrt(dt) with respect to vol, rate, maturity.
    const float dDriftV = -m.vol * dt, dDriftR = dt, dDriftT = mu / steps;
    const float dVsdV = sdt, dVsdT = m.vol * 0.5f / (sdt * steps);
    float s = m.spot, sum = 0.f, sV = 0.f, sR = 0.f, sT = 0.f, sumV = 0.f, sumR = 0.f, sumT = 0.f;
    Words words{};
    float2 pair{};
    for (int k = 0; k < steps; ++k) {
      float z;
      if (kDraws == 4) {
        if ((k & 3) == 0) words = philox((unsigned)k >> 2, 0u, plo, phi, seedLo, seedHi);
        if ((k & 1) == 0) pair = (k & 2) == 0 ? boxMuller(words.x, words.y) : boxMuller(words.z, words.w);
        z = (k & 1) == 0 ? pair.x : pair.y;
      } else if (kDraws == 2) {
        if ((k & 3) == 0) words = philox((unsigned)k >> 2, 0u, plo, phi, seedLo, seedHi);
        const int j = k & 3;
        z = normal(j == 0 ? words.x : j == 1 ? words.y : j == 2 ? words.z : words.w);
      } else {
        z = normal(philox((unsigned)k, 0u, plo, phi, seedLo, seedHi).x);
      }
      const float e = expf(drift + vsd * z);
      const float sn = s * e;
      if (kGreeks) {
        sV = sV * e + sn * (dDriftV + dVsdV * z);
        sR = sR * e + sn * dDriftR;
        sT = sT * e + sn * (dDriftT + dVsdT * z);
        sumV += sV;
        sumR += sR;
        sumT += sT;
      }
      s = sn;
      sum += s;
    }
    const float avg = sum / steps, disc = expf(-(m.rate * m.maturity));
    const float intrinsic = avg - m.strike;
    acc[0] = fmaxf(intrinsic, 0.f) * disc;
    if (kGreeks && intrinsic > 0.f) {
      acc[1] = (sum / m.spot) / steps * disc;  // d s_i / d spot = s_i / spot
      acc[2] = -disc;
      acc[3] = sumV / steps * disc;
      acc[4] = sumR / steps * disc - m.maturity * acc[0];
      acc[5] = sumT / steps * disc - m.rate * acc[0];
    }
  }
  const int n = kGreeks ? 6 : 1;
  for (int i = 0; i < n; ++i) {
    float v = acc[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(&sums[i], (double)v);
  }
}


extern "C" __global__ void __launch_bounds__(256) tapelab_kernel(Market m, int steps, unsigned long long paths, unsigned seedLo, unsigned seedHi, double* sums) {
  asian<true, 4>(m, steps, paths, seedLo, seedHi, sums);
}
