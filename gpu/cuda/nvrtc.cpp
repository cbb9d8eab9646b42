#include "gpu/cuda/nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "util/files.h"
#include "util/hash.h"

namespace tapelab::cu {
namespace {

// NVRTC, loaded at run time like the driver: a binary built here starts (and
// its other engines work) on machines without the CUDA toolkit; the cuda
// engine then says NVRTC is missing. nvrtc.h supplies types and signatures.
#define TAPELAB_NVRTC_FUNCTIONS(X)                                                                          \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcCompileProgram)                      \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize) \
  X(nvrtcGetCUBIN) X(nvrtcDestroyProgram)

struct Api {
#define TAPELAB_NVRTC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TAPELAB_NVRTC_FUNCTIONS(TAPELAB_NVRTC_DECLARE)
#undef TAPELAB_NVRTC_DECLARE
  bool ok = false;
  std::string library, why;
};

Api loadApi() {
  Api a;
  // The library CMake found, then the sonames a toolkit installs.
  const char* candidates[] = {
#ifdef TAPELAB_NVRTC_LIBRARY
      TAPELAB_NVRTC_LIBRARY,
#endif
      "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"};
  for (const char* name : candidates) {
    void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    bool all = true;
#define TAPELAB_NVRTC_RESOLVE(fn)                                    \
  a.fn = reinterpret_cast<decltype(a.fn)>(dlsym(lib, #fn)); \
  all = all && a.fn;
    TAPELAB_NVRTC_FUNCTIONS(TAPELAB_NVRTC_RESOLVE)
#undef TAPELAB_NVRTC_RESOLVE
    if (all) {
      a.ok = true;
      a.library = name;
      return a;
    }
    dlclose(lib);
  }
  a.why = "NVRTC (libnvrtc.so) not found: the CUDA toolkit is not installed here";
  return a;
}

const Api& api() {
  static const Api a = loadApi();
  return a;
}

// The statistics of the entry tapelab_kernel (a module may hold other kernels: the CUDA engine's
// reduction), else of the first function the log names.
void parsePtxasStats(NvrtcOutput& out) {
  if (!out.ptx.empty()) {
    out.ptxInstructions = ptxInstructions(out.ptx, "tapelab_kernel");
    if (out.ptxInstructions == 0) out.ptxInstructions = ptxInstructions(out.ptx);
  }
  const std::string entry = "Compiling entry function 'tapelab_kernel'";
  std::string log = out.log;
  if (const size_t at = log.find(entry); at != std::string::npos) {
    const size_t next = log.find("Compiling entry function", at + entry.size());
    log = log.substr(at, next == std::string::npos ? std::string::npos : next - at);
  }
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"(Used (\d+) registers)"))) out.registers = std::stoi(m[1]);
  if (std::regex_search(log, m, std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    out.stackBytes = std::stoll(m[1]);
    out.spillStoreBytes = std::stoll(m[2]);
    out.spillLoadBytes = std::stoll(m[3]);
  }
}

}  // namespace

long long ptxInstructions(const std::string& ptx, const std::string& entry) {
  long long count = 0;
  int depth = 0;
  bool counting = entry.empty();
  size_t begin = 0;
  while (begin < ptx.size()) {
    size_t end = ptx.find('\n', begin);
    if (end == std::string::npos) end = ptx.size();
    const std::string_view line(ptx.data() + begin, end - begin);
    begin = end + 1;
    const size_t at = line.find_first_not_of(" \t");
    if (at == std::string_view::npos) continue;
    const std::string_view s = line.substr(at);
    if (depth == 0 && !entry.empty()) {
      // A function's header: ".visible .entry NAME(" or ".func ... NAME(" at the top level.
      const size_t e = s.find(".entry ");
      const size_t f = s.find(".func ");
      if (e != std::string_view::npos || f != std::string_view::npos) {
        const size_t paren = s.find('(');
        const std::string_view head = s.substr(0, paren);
        const size_t name = head.find_last_of(" \t");
        counting = head.substr(name == std::string_view::npos ? 0 : name + 1) == entry;
      }
    }
    if (s[0] == '{') ++depth;
    if (s[0] == '}') --depth;
    if (depth <= 0 || !counting || s[0] == '.' || s[0] == '/' || s[0] == '{' || s[0] == '}' || s.back() == ':') continue;
    if (s.find(';') != std::string_view::npos) ++count;
  }
  return count;
}

std::string NvrtcOutput::statsLine() const {
  if (registers < 0) return "";
  return std::to_string(registers) + " registers, " + std::to_string(stackBytes) + " bytes stack frame, " +
         std::to_string(spillStoreBytes) + " bytes spill stores, " + std::to_string(spillLoadBytes) +
         " bytes spill loads";
}

namespace {

// Exactness (ARCHITECTURE.md): no contraction into fused multiply-adds (an fmaf the source calls, as the
// draws' polynomials do, stays one), IEEE division and sqrt, denormals kept.
const char* const kExactOptions[] = {"--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "--std=c++17"};

NvrtcOutput run(const std::string& source, const std::string& fileName, const std::string& arch, bool real) {
  const auto t0 = std::chrono::steady_clock::now();
  NvrtcOutput out;
  out.arch = arch;
  const Api& a = api();
  if (!a.ok) {
    out.log = a.why;
    return out;
  }
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = a.nvrtcCreateProgram(&prog, source.c_str(), fileName.c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    out.log = std::string("nvrtcCreateProgram: ") + a.nvrtcGetErrorString(rc);
    return out;
  }
  const std::string archOpt = "-arch=" + out.arch;
  std::vector<const char*> opts{archOpt.c_str()};
  for (const char* o : kExactOptions) opts.push_back(o);
  if (real) opts.push_back("--ptxas-options=-v");  // registers, stack frame, spills in the log
  rc = a.nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t logSize = 0;
  if (a.nvrtcGetProgramLogSize(prog, &logSize) == NVRTC_SUCCESS && logSize > 1) {
    out.log.resize(logSize);
    a.nvrtcGetProgramLog(prog, out.log.data());
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  }
  if (rc == NVRTC_SUCCESS) {
    size_t n = 0;
    if (a.nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      out.ptx.resize(n);
      a.nvrtcGetPTX(prog, out.ptx.data());
      while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
    }
    if (real && a.nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      out.cubin.resize(n);
      a.nvrtcGetCUBIN(prog, out.cubin.data());
    }
    out.ok = !out.ptx.empty();
    if (!out.ok) out.log += "\nNVRTC produced no PTX";
    parsePtxasStats(out);
  } else {
    out.log = std::string(a.nvrtcGetErrorString(rc)) + (out.log.empty() ? "" : ": " + out.log);
  }
  a.nvrtcDestroyProgram(&prog);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void putBlob(std::string& o, const char* data, size_t n) {
  o += std::to_string(n) + '\n';
  o.append(data, n);
}

bool getBlob(std::istream& in, std::string& s) {
  std::string len;
  if (!std::getline(in, len) || len.empty() || len.size() > 12) return false;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(len.c_str(), &end, 10);
  if (*end) return false;
  s.assign(n, '\0');
  return static_cast<bool>(in.read(s.data(), static_cast<std::streamsize>(n)));
}

}  // namespace

NvrtcOutput compileCuda(const std::string& source, const std::string& fileName, int smMajor, int smMinor) {
  return run(source, fileName, "sm_" + std::to_string(smMajor) + std::to_string(smMinor), true);
}

NvrtcOutput compilePtxOnly(const std::string& source, const std::string& fileName, int smMajor, int smMinor) {
  return run(source, fileName, "compute_" + std::to_string(smMajor) + std::to_string(smMinor), false);
}

NvrtcOutput compileCudaCached(const std::string& source, const std::string& fileName, int smMajor, int smMinor,
                              const std::string& cacheDir, bool* cacheHit) {
  *cacheHit = false;
  const std::string& dir = cacheDir;
  const std::string arch = "sm_" + std::to_string(smMajor) + std::to_string(smMinor);
  std::string key = "tapelab-nvrtc-v3|" + nvrtcVersionString() + "|" + arch + "|";
  for (const char* o : kExactOptions) key += std::string(o) + " ";
  key += "|" + contentHash(source) + "|" + std::to_string(source.size());
  // The file is named by a hash of the key and holds the key itself (the source's hash and length
  // among it), compared on a hit (util/files.h).
  const std::string path = dir.empty() ? "" : (std::filesystem::path(dir) / "cuda" / (contentHash(key) + ".nvrtc")).string();
  if (!path.empty()) {
    std::istringstream in(readCacheEntry(path, key).value_or(""));  // "" when missing, foreign or damaged
    std::string log, ptx, cubin;
    if (getBlob(in, log) && getBlob(in, ptx) && getBlob(in, cubin) && !ptx.empty()) {
      NvrtcOutput out;
      out.ok = true;
      out.arch = arch;
      out.log = log;
      out.ptx = ptx;
      out.cubin.assign(cubin.begin(), cubin.end());
      parsePtxasStats(out);
      *cacheHit = true;
      return out;
    }
  }
  NvrtcOutput out = compileCuda(source, fileName, smMajor, smMinor);
  if (out.ok && !path.empty()) {
    std::string entry;
    putBlob(entry, out.log.data(), out.log.size());
    putBlob(entry, out.ptx.data(), out.ptx.size());
    putBlob(entry, out.cubin.data(), out.cubin.size());
    writeCacheEntry(path, key, entry);  // an unwritable cache is ignored
  }
  return out;
}

bool nvrtcAvailable(std::string* why) {
  if (!api().ok && why) *why = api().why;
  return api().ok;
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (!api().ok || api().nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "?";
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace tapelab::cu
