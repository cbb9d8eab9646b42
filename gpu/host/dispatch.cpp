#include "gpu/codegen/host.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tapelab {

std::vector<Dispatch> planDispatches(const EmittedKernel& k, uint64_t firstPath, uint64_t paths, uint64_t seed,
                                     uint32_t maxGroups) {
  const uint64_t block = k.pathsPerGroup();
  // Keep a dispatch's path count and group index products inside 32 bits.
  const uint64_t cap =
      std::max<uint64_t>(1, std::min<uint64_t>(maxGroupsFromEnvironment(maxGroups), (uint64_t{1} << 31) / block));
  std::vector<Dispatch> out;
  for (uint64_t done = 0; done < paths;) {
    const uint64_t blocksLeft = (paths - done + block - 1) / block;
    const uint64_t groups = std::min(blocksLeft, cap);
    const uint64_t count = std::min(paths - done, groups * block);
    const uint64_t first = firstPath + done;
    Dispatch d;
    d.groups = static_cast<uint32_t>(groups);
    d.params.seedLo = static_cast<uint32_t>(seed);
    d.params.seedHi = static_cast<uint32_t>(seed >> 32);
    d.params.pathLo = static_cast<uint32_t>(first);
    d.params.pathHi = static_cast<uint32_t>(first >> 32);
    d.params.count = static_cast<uint32_t>(count);
    d.params.zero = 0;
    d.params.invocations = static_cast<uint32_t>(groups * k.workgroupSize);
    out.push_back(d);
    done += count;
  }
  return out;
}

uint64_t pathOffsetFromEnvironment() { return envUnsigned("TAPELAB_PATH_OFFSET", 0); }

uint32_t maxGroupsFromEnvironment(uint32_t engineLimit) {
  return static_cast<uint32_t>(
      std::min<uint64_t>(engineLimit, envUnsigned("TAPELAB_MAX_GROUPS", engineLimit, 1, UINT32_MAX)));
}

uint64_t scratchBudgetFromEnvironment() { return envUnsigned("TAPELAB_SCRATCH_BUDGET", 0, 1); }

EmitOptions emitOptionsFromEnvironment() {
  EmitOptions e;
  if (const char* env = std::getenv("TAPELAB_OPAQUE"); env && *env) {
    const std::string v = env;
    if (v == "0") e.opaque = false;
    else if (v != "1") throw std::invalid_argument("TAPELAB_OPAQUE: expected 0 or 1, got '" + v + "'");
  }
  if (const char* env = std::getenv("TAPELAB_UNROLL_DRAWS"); env && *env) {
    const std::string v = env;
    if (v == "0") e.unrollDraws = false;
    else if (v != "1") throw std::invalid_argument("TAPELAB_UNROLL_DRAWS: expected 0 or 1, got '" + v + "'");
  }
  return e;
}

std::vector<unsigned char> packInputs(const EmittedKernel& k, const std::vector<std::vector<double>>& inputs) {
  if (inputs.size() != static_cast<size_t>(k.markets))
    throw std::invalid_argument("kernel prices " + std::to_string(k.markets) + " market(s) per dispatch, got " +
                                std::to_string(inputs.size()));
  std::vector<unsigned char> bytes(std::max<size_t>(1, inputs.size() * k.numInputs) * k.scalarBytes(), 0);
  size_t at = 0;
  for (const auto& m : inputs) {
    if (m.size() != static_cast<size_t>(k.numInputs))
      throw std::invalid_argument("market has " + std::to_string(m.size()) + " inputs, the tape " +
                                  std::to_string(k.numInputs));
    for (double x : m) {
      if (k.precision == Precision::F32) {
        const float f = static_cast<float>(x);
        std::memcpy(&bytes[at], &f, 4);
        at += 4;
      } else {
        std::memcpy(&bytes[at], &x, 8);
        at += 8;
      }
    }
  }
  return bytes;
}

PartialSums::PartialSums(const EmittedKernel& k) : shape_(k) {
  shape_.source.clear();
  sums_.assign(static_cast<size_t>(k.partialsPerGroup()), 0.0);
}

void PartialSums::add(const void* partials, uint32_t groups) {
  const size_t per = sums_.size();
  for (uint32_t g = 0; g < groups; ++g)
    for (size_t i = 0; i < per; ++i) {
      const size_t at = g * per + i;
      if (shape_.precision == Precision::F32) {
        float f;
        std::memcpy(&f, static_cast<const unsigned char*>(partials) + at * 4, 4);
        sums_[i] += static_cast<double>(f);
      } else {
        double x;
        std::memcpy(&x, static_cast<const unsigned char*>(partials) + at * 8, 8);
        sums_[i] += x;
      }
    }
}

RunResult PartialSums::finish(uint64_t paths, uint64_t seed) const {
  RunResult r;
  r.paths = paths;
  r.seed = seed;
  const size_t w = static_cast<size_t>(shape_.width);
  for (int m = 0; m < shape_.markets; ++m) {
    const double* base = &sums_[static_cast<size_t>(m) * 2 * w];
    std::vector<double> s(base, base + w), sq(base + w, base + 2 * w);
    MarketResult mr = finishMoments(s, sq, paths);
    mr.greeks.resize(static_cast<size_t>(shape_.numInputs), 0.0);
    mr.greeksStderr.resize(static_cast<size_t>(shape_.numInputs), 0.0);
    r.markets.push_back(std::move(mr));
  }
  return r;
}

std::string contentHash(const std::string& text) {
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  for (unsigned char c : text) {
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = (h2 ^ c) * 0x100000001b3ull;
    h2 ^= h2 >> 29;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

std::string dumpDirFor(const KernelOptions& options) {
  if (!options.dumpDir.empty()) return options.dumpDir;
  const char* env = std::getenv("TAPELAB_DUMP");
  return env ? env : "";
}

std::string dumpSource(const std::string& dir, const std::string& stem, const std::string& ext,
                       const std::string& source) {
  if (dir.empty()) return "";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path =
      (std::filesystem::path(dir) / ("tapelab-" + stem + "-" + contentHash(source).substr(0, 12) + "." + ext)).string();
  std::ofstream f(path, std::ios::binary);
  f << source;
  f.close();
  if (!f) throw std::runtime_error("cannot write generated source to " + path + " (TAPELAB_DUMP)");
  return path;
}

std::string sourceForError(const std::string& dumped, const std::string& stem, const std::string& ext,
                           const std::string& source) noexcept {
  if (!dumped.empty()) return dumped;
  try {
    return dumpSource((std::filesystem::temp_directory_path() / "tapelab-failed").string(), stem, ext, source);
  } catch (...) {
    return "not dumped: set TAPELAB_DUMP=DIR";
  }
}

std::string gpuCacheDir() {
  if (const char* env = std::getenv("TAPELAB_CACHE_DIR"); env && *env) {
    if (std::string(env) == "off") return "";
    return env;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/tapelab";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/tapelab";
  return "";
}

}  // namespace tapelab
