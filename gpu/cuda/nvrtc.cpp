#include "gpu/cuda/nvrtc.h"

#include <nvrtc.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <regex>
#include <stdexcept>

#include "gpu/codegen/host.h"

namespace tapelab::cu {
namespace {

void parsePtxasStats(NvrtcOutput& out) {
  std::smatch m;
  if (std::regex_search(out.log, m, std::regex(R"(Used (\d+) registers)"))) out.registers = std::stoi(m[1]);
  if (std::regex_search(out.log, m, std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    out.stackBytes = std::stoll(m[1]);
    out.spillStoreBytes = std::stoll(m[2]);
    out.spillLoadBytes = std::stoll(m[3]);
  }
}

}  // namespace

std::string NvrtcOutput::statsLine() const {
  if (registers < 0) return "";
  return std::to_string(registers) + " registers, " + std::to_string(stackBytes) + " bytes stack frame, " +
         std::to_string(spillStoreBytes) + " bytes spill stores, " + std::to_string(spillLoadBytes) +
         " bytes spill loads";
}

namespace {

// Exactness (DESIGN.md): no fused multiply-add, IEEE division and sqrt, denormals kept.
const char* const kExactOptions[] = {"--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "--std=c++17"};

NvrtcOutput run(const std::string& source, const std::string& fileName, const std::string& arch, bool real) {
  const auto t0 = std::chrono::steady_clock::now();
  NvrtcOutput out;
  out.arch = arch;
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = nvrtcCreateProgram(&prog, source.c_str(), fileName.c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    out.log = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(rc);
    return out;
  }
  const std::string archOpt = "-arch=" + out.arch;
  std::vector<const char*> opts{archOpt.c_str()};
  for (const char* o : kExactOptions) opts.push_back(o);
  if (real) opts.push_back("--ptxas-options=-v");  // registers, stack frame, spills in the log
  rc = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(prog, &logSize) == NVRTC_SUCCESS && logSize > 1) {
    out.log.resize(logSize);
    nvrtcGetProgramLog(prog, out.log.data());
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  }
  if (rc == NVRTC_SUCCESS) {
    size_t n = 0;
    if (nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      out.ptx.resize(n);
      nvrtcGetPTX(prog, out.ptx.data());
      while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
    }
    if (real && nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      out.cubin.resize(n);
      nvrtcGetCUBIN(prog, out.cubin.data());
    }
    out.ok = !out.ptx.empty();
    if (!out.ok) out.log += "\nNVRTC produced no PTX";
    parsePtxasStats(out);
  } else {
    out.log = std::string(nvrtcGetErrorString(rc)) + (out.log.empty() ? "" : ": " + out.log);
  }
  nvrtcDestroyProgram(&prog);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void putBlob(std::ostream& o, const char* data, size_t n) {
  o << n << '\n';
  o.write(data, static_cast<std::streamsize>(n));
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
                              bool* cacheHit) {
  *cacheHit = false;
  const std::string dir = gpuCacheDir();
  const std::string arch = "sm_" + std::to_string(smMajor) + std::to_string(smMinor);
  std::string key = "tapelab-nvrtc-v1|" + nvrtcVersionString() + "|" + arch + "|";
  for (const char* o : kExactOptions) key += std::string(o) + " ";
  key += "|" + contentHash(source) + "|" + std::to_string(source.size());
  const std::string path = dir.empty() ? "" : dir + "/cuda/" + contentHash(key) + ".nvrtc";
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    std::string header, log, ptx, cubin;
    if (in && std::getline(in, header) && header == key && getBlob(in, log) && getBlob(in, ptx) && getBlob(in, cubin) &&
        !ptx.empty()) {
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
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "-" +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    {
      std::ofstream f(tmp, std::ios::binary);
      f << key << '\n';
      putBlob(f, out.log.data(), out.log.size());
      putBlob(f, out.ptx.data(), out.ptx.size());
      putBlob(f, out.cubin.data(), out.cubin.size());
    }
    std::filesystem::rename(tmp, path, ec);  // atomic; an unwritable cache is ignored
    if (ec) std::filesystem::remove(tmp, ec);
  }
  return out;
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "?";
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace tapelab::cu
