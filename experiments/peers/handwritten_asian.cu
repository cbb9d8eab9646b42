// The ceiling an expert sets by hand: the main job's single market (252-step
// arithmetic Asian call, fp32, value + 5 Greeks) as a forward-pathwise CUDA
// kernel: one path per thread, the five Greeks carried as tangents along the
// forward sweep (no reverse sweep, no stored values), contraction allowed
// (nvcc's default), tapelab's draw mappings (Philox4x32-10, u = ((w >> 9) +
// 0.5) 2^-23; versions 1-3 Acklam's quantile in Horner order, version 4
// Box-Muller pairs as tape/philox.h spells them; nvcc contracts what tapelab
// writes as separate steps: close to tapelab's bits, not promised equal).
//
//   nvcc -O3 -arch=sm_90 -o handwritten_asian experiments/peers/handwritten_asian.cu
//   ./handwritten_asian [--paths 1000000,4000000] [--steps 252] [--repeats 5]
//
// Variants, each price-only and value + 5 Greeks:
//   draws v1   one Philox call per draw, word 0 (tapelab's draws before version 2)
//   draws v2   one call per four draws, words 0..3, Acklam's quantile (tapelab's versions 2 and 3)
//   draws v4   one call per four draws, two Box-Muller pairs (tapelab's version 4, tape/philox.h)
//   ladder7    the 7-point spot ladder (spots 97..103, 1% apart, as `tapelab compare`'s) in one launch, draws
//              v4: one path per thread, the draws and everything spot does not reach (the step's
//              exponential, its tangents in vol, rate and maturity) once per step, each market's spot, sum
//              and three tangents forward; delta and the strike's Greek in closed form per market.
// Prints CSV: variant,pass,paths,markets,median_ms,mpaths_per_s,value,delta,vega,min_ms,max_ms (CUDA
// events around each launch, median of --repeats after a warm-up; min_ms and max_ms their spread;
// mpaths_per_s counts market-paths: a ladder of 7 markets over N paths is 7N; value, delta, vega: the
// ladder's middle market, spot 100).
// NVRTC compiles the device half alone (__CUDACC_RTC__): scripts/sass-count.py --entry asian|ladder counts the
// instantiations at the end of this file on sm_90 without a GPU (runs/sass-sm90-2026-12-06).
#ifndef __CUDACC_RTC__
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)
#endif

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
__global__ void __launch_bounds__(256) asian(Market m, int steps, unsigned long long paths, unsigned seedLo,
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

// The ladder: kMarkets spots (m.spot * (1 + 0.01 (k - kMarkets/2))) in one launch, draws v4.
// sums[6k .. 6k+5]: market k's value and d/d(spot, strike, vol, rate, maturity).
template <bool kGreeks, int kMarkets>
__global__ void __launch_bounds__(256) ladder(Market m, int steps, unsigned long long paths, unsigned seedLo,
                                              unsigned seedHi, double* sums) {
  const unsigned long long p = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  float acc[kMarkets][6];
#pragma unroll
  for (int k = 0; k < kMarkets; ++k)
    for (int g = 0; g < 6; ++g) acc[k][g] = 0.f;
  if (p < paths) {
    const unsigned plo = (unsigned)p, phi = (unsigned)(p >> 32);
    const float dt = m.maturity / steps, sdt = sqrtf(dt);
    const float mu = m.rate - 0.5f * m.vol * m.vol;
    const float drift = mu * dt, vsd = m.vol * sdt;
    const float dDriftV = -m.vol * dt, dDriftR = dt, dDriftT = mu / steps;
    const float dVsdV = sdt, dVsdT = m.vol * 0.5f / (sdt * steps);
    float s[kMarkets], sum[kMarkets], sV[kMarkets], sR[kMarkets], sT[kMarkets], sumV[kMarkets], sumR[kMarkets], sumT[kMarkets];
#pragma unroll
    for (int k = 0; k < kMarkets; ++k) {
      s[k] = m.spot * (1.f + 0.01f * (k - kMarkets / 2));
      sum[k] = sV[k] = sR[k] = sT[k] = sumV[k] = sumR[k] = sumT[k] = 0.f;
    }
    Words words{};
    float2 pair{};
    for (int i = 0; i < steps; ++i) {
      if ((i & 3) == 0) words = philox((unsigned)i >> 2, 0u, plo, phi, seedLo, seedHi);
      if ((i & 1) == 0) pair = (i & 2) == 0 ? boxMuller(words.x, words.y) : boxMuller(words.z, words.w);
      const float z = (i & 1) == 0 ? pair.x : pair.y;
      const float e = expf(drift + vsd * z);  // once per step: no market reaches it
      const float xV = dDriftV + dVsdV * z, xT = dDriftT + dVsdT * z;
#pragma unroll
      for (int k = 0; k < kMarkets; ++k) {
        const float sn = s[k] * e;
        if (kGreeks) {
          sV[k] = sV[k] * e + sn * xV;
          sR[k] = sR[k] * e + sn * dDriftR;
          sT[k] = sT[k] * e + sn * xT;
          sumV[k] += sV[k];
          sumR[k] += sR[k];
          sumT[k] += sT[k];
        }
        s[k] = sn;
        sum[k] += sn;
      }
    }
    const float disc = expf(-(m.rate * m.maturity));
#pragma unroll
    for (int k = 0; k < kMarkets; ++k) {
      const float spot = m.spot * (1.f + 0.01f * (k - kMarkets / 2));
      const float intrinsic = sum[k] / steps - m.strike;
      acc[k][0] = fmaxf(intrinsic, 0.f) * disc;
      if (kGreeks && intrinsic > 0.f) {
        acc[k][1] = (sum[k] / spot) / steps * disc;
        acc[k][2] = -disc;
        acc[k][3] = sumV[k] / steps * disc;
        acc[k][4] = sumR[k] / steps * disc - m.maturity * acc[k][0];
        acc[k][5] = sumT[k] / steps * disc - m.rate * acc[k][0];
      }
    }
  }
  const int n = kGreeks ? 6 : 1;
#pragma unroll
  for (int k = 0; k < kMarkets; ++k)
    for (int g = 0; g < n; ++g) {
      float v = acc[k][g];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
      if ((threadIdx.x & 31) == 0) atomicAdd(&sums[6 * k + g], (double)v);
    }
}

#ifdef __CUDACC_RTC__
// What sass-count.py counts: value + 5 Greeks, draws version 4, one market and the 7-point ladder.
template __global__ void asian<true, 4>(Market, int, unsigned long long, unsigned, unsigned, double*);
template __global__ void ladder<true, 7>(Market, int, unsigned long long, unsigned, unsigned, double*);
#else
struct Times {
  float median, fastest, slowest;  // ms of the timed launches
};

constexpr int kBlock = 256;
unsigned gridFor(unsigned long long paths) { return (unsigned)((paths + kBlock - 1) / kBlock); }

template <bool G, int F>
Times timeOne(const Market& m, int steps, unsigned long long paths, int repeats, double* dSums, double* out) {
  return timeLaunches([&](unsigned seed) { asian<G, F><<<gridFor(paths), kBlock>>>(m, steps, paths, seed, 0u, dSums); }, 1,
                      paths, repeats, dSums, out);
}

template <bool G, int M>
Times timeLadder(const Market& m, int steps, unsigned long long paths, int repeats, double* dSums, double* out) {
  return timeLaunches([&](unsigned seed) { ladder<G, M><<<gridFor(paths), kBlock>>>(m, steps, paths, seed, 0u, dSums); }, M,
                      paths, repeats, dSums, out);
}

// Times `launch(seedLo)` (one kernel over every path): a warm-up, then --repeats timed launches; out: the
// sums of `markets` markets over the paths.
template <class Launch>
Times timeLaunches(Launch launch, int markets, unsigned long long paths, int repeats, double* dSums, double* out) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = -1; r < repeats; ++r) {
    CHECK(cudaMemset(dSums, 0, 6 * markets * sizeof(double)));
    CHECK(cudaEventRecord(a));
    launch(42u + (r < 0 ? 7u : 0u));
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    if (r >= 0) ms.push_back(t);
  }
  CHECK(cudaMemcpy(out, dSums, 6 * markets * sizeof(double), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 6 * markets; ++i) out[i] /= double(paths);
  std::sort(ms.begin(), ms.end());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// A whole number in [1, most] or a one-line error naming the flag (exit 2).
unsigned long long positive(const char* flag, const std::string& text, unsigned long long most) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = text.empty() || text[0] == '-' ? 0 : std::strtoull(text.c_str(), &end, 10);
  if (v == 0 || errno != 0 || end == nullptr || *end != '\0' || v > most) {
    std::fprintf(stderr, "handwritten_asian: %s: '%s' is not a whole number from 1 to %llu\n", flag, text.c_str(),
                 most);
    std::exit(2);
  }
  return v;
}

int main(int argc, char** argv) {
  std::vector<unsigned long long> pathList{1000000ull, 4000000ull};
  int steps = 252, repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "handwritten_asian: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--paths") {
      pathList.clear();
      const std::string v = next();
      for (size_t at = 0; at <= v.size();) {
        const size_t comma = v.find(',', at);
        pathList.push_back(positive("--paths", v.substr(at, comma - at), 1ull << 40));
        at = comma == std::string::npos ? v.size() + 1 : comma + 1;
      }
    } else if (a == "--steps") {
      steps = (int)positive("--steps", next(), 1u << 20);
    } else if (a == "--repeats") {
      repeats = (int)positive("--repeats", next(), 1000);
    } else {
      std::fprintf(stderr, "handwritten_asian: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# handwritten_asian on %s, %d steps, fp32, contraction allowed\n", prop.name, steps);
  std::printf("variant,pass,paths,markets,median_ms,mpaths_per_s,value,delta,vega,min_ms,max_ms\n");
  constexpr int kLadder = 7;
  double* dSums;
  CHECK(cudaMalloc(&dSums, 6 * kLadder * sizeof(double)));
  const Market m{100.f, 100.f, 0.2f, 0.03f, 1.f};
  for (unsigned long long paths : pathList) {
    double o[6 * kLadder] = {};
    auto row = [&](const char* variant, const char* pass, Times t, int markets = 1) {
      const double* mid = o + 6 * (markets / 2);  // the middle market: spot 100
      std::printf("%s,%s,%llu,%d,%.4f,%.1f,%.9g,%.9g,%.9g,%.4f,%.4f\n", variant, pass, paths, markets, t.median,
                  double(markets) * paths / (t.median * 1e3), mid[0], mid[1], mid[3], t.fastest, t.slowest);
    };
    row("draws-v1", "price", timeOne<false, 1>(m, steps, paths, repeats, dSums, o));
    row("draws-v1", "value+5greeks", timeOne<true, 1>(m, steps, paths, repeats, dSums, o));
    row("draws-v2", "price", timeOne<false, 2>(m, steps, paths, repeats, dSums, o));
    row("draws-v2", "value+5greeks", timeOne<true, 2>(m, steps, paths, repeats, dSums, o));
    row("draws-v4", "price", timeOne<false, 4>(m, steps, paths, repeats, dSums, o));
    row("draws-v4", "value+5greeks", timeOne<true, 4>(m, steps, paths, repeats, dSums, o));
    row("ladder7-draws-v4", "price", timeLadder<false, kLadder>(m, steps, paths, repeats, dSums, o), kLadder);
    row("ladder7-draws-v4", "value+5greeks", timeLadder<true, kLadder>(m, steps, paths, repeats, dSums, o), kLadder);
  }
  CHECK(cudaFree(dSums));
  return 0;
}
#endif  // __CUDACC_RTC__
