#include "reference/cpujit/compile.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <xsimd/config/xsimd_config.hpp>

#include "engine/compile_watch.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/process.h"

namespace tapelab {
namespace fs = std::filesystem;
namespace {

#ifndef TAPELAB_XSIMD_INCLUDE
#define TAPELAB_XSIMD_INCLUDE ""
#endif

std::vector<std::string> baseFlags() {
  std::vector<std::string> f = {"-O2",   "-march=native", "-ffp-contract=off", "-fno-fast-math",
                                "-fPIC", "-std=c++20",    "-w",                "-fvisibility=hidden"};
  const std::string inc = TAPELAB_XSIMD_INCLUDE;
  if (!inc.empty() && inc != "/usr/include" && inc != "/usr/local/include") f.push_back("-I" + inc);
  return f;
}

// Writes atomically (util/files.h), so concurrent processes never see half a file; whatever is
// not a regular file in its place (a directory, a FIFO, a link) is replaced.
void writeAtomically(const fs::path& p, const std::string& text) {
  std::string why;
  if (!writeCacheFile(p, text, &why)) throw std::runtime_error("cpu-jit: " + why);
}

struct CompilerIdentity {
  bool ok = false;
  std::string reason;  // when !ok
  std::string text;    // predefined macros: compiler version and target features
  bool gcc = false;    // precompiled headers are GCC's .gch
};

CompilerIdentity probeCompiler(const std::string& compiler) {
  CompilerIdentity c;
  std::vector<std::string> argv = {compiler, "-march=native", "-std=c++20", "-E", "-dM", "-x", "c++", "/dev/null"};
  const ProcessResult r = runProcess(argv);
  if (r.status != 0) {
    c.reason = "cannot run the C++ compiler '" + compiler + "'" +
               (r.error.empty() ? " (exit " + std::to_string(r.status) + ")" : ": " + r.error) +
               "; install g++ or set TAPELAB_CXX";
    return c;
  }
  c.ok = true;
  c.text = r.output;
  c.gcc = r.output.find("__clang__") == std::string::npos && r.output.find("__GNUC__") != std::string::npos;
  return c;
}

// Each compiler is asked once per process.
const CompilerIdentity& identity(const std::string& compiler) {
  static std::mutex mu;
  static auto& known = *new std::map<std::string, CompilerIdentity>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(compiler);
  if (it == known.end()) it = known.emplace(compiler, probeCompiler(compiler)).first;
  return it->second;
}

std::string sanitizeHint(const std::string& hint) {
  std::string r;
  for (char ch : hint)
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-') r += ch;
  if (r.size() > 40) r.resize(40);
  return r.empty() ? "kernel" : r;
}

std::string firstErrorLine(const std::string& log) {
  std::istringstream in(log);
  std::string line, first;
  while (std::getline(in, line)) {
    if (first.empty() && !line.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first;
}

// The precompiled xsimd header for this compiler and these flags, built once
// per cache; "" when unavailable (then every compile parses xsimd itself). The
// .gch has a sum naming its key (util/files.h), so a truncated, corrupt or
// foreign one is rebuilt, never handed to the compiler.
std::string precompiledHeader(const JitToolchain& tc, const fs::path& dir, const std::string& key,
                              std::chrono::steady_clock::time_point deadline) {
  if (!tc.precompiledHeader || !identity(tc.compiler).gcc) return "";
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const fs::path pdir = dir / ("pch-" + key.substr(0, 16));
  const fs::path header = pdir / "tl_xsimd.hpp";
  const fs::path gch = pdir / "tl_xsimd.hpp.gch";
  const std::string headerText = "#include <xsimd/xsimd.hpp>\n";
  const std::string pchKey = "tapelab-cpujit-pch-v2|" + tc.compiler + "|" + key;
  if (checkCacheSum(gch, pchKey) && readCacheFile(header) == headerText) return header.string();
  std::error_code ec;
  if (!clearCacheSlot(pdir) || (fs::create_directories(pdir, ec), ec) || !writeCacheFile(header, headerText)) return "";
  const TempFile tmp(gch.string() + uniqueTempSuffix());
  const TempFile tmpSum(tmp.path() + ".sum");
  std::vector<std::string> argv = {tc.compiler};
  for (const auto& f : baseFlags()) argv.push_back(f);
  for (const char* a : {"-x", "c++-header"}) argv.push_back(a);
  argv.push_back(header.string());
  argv.push_back("-o");
  argv.push_back(tmp.path());
  if (runProcess(argv, deadline).status != 0 || !writeCacheSum(tmp.path(), pchKey) || !clearCacheSlot(gch) ||
      !clearCacheSlot(gch.string() + ".sum"))
    return "";
  // The sum first: a reader that sees the new .gch with an older sum rebuilds it.
  fs::rename(tmp.path() + ".sum", gch.string() + ".sum", ec);
  if (!ec) fs::rename(tmp.path(), gch, ec);
  return ec ? "" : header.string();
}

// A C++ string literal of `s`.
std::string cLiteral(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 32 || c > 126) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

void* JitLibrary::symbol(const char* name) const {
  void* p = dlsym(handle.get(), name);
  if (!p) throw std::runtime_error("cpu-jit: " + libraryPath + " lacks symbol " + name);
  return p;
}

JitToolchain jitToolchain(const EngineSettings& settings) {
  JitToolchain tc;
  tc.compiler = settings.cpuJit.compiler;
  tc.precompiledHeader = settings.cpuJit.precompiledHeader;
  tc.compileTimeout = settings.compileTimeout;
  tc.cacheDir = settings.cacheDir.empty() ? (fs::temp_directory_path() / "tapelab-cpujit").string()
                                          : (fs::path(settings.cacheDir) / "cpujit").string();
  return tc;
}

bool jitCompilerUsable(const std::string& compiler, std::string& reason) {
  const CompilerIdentity& id = identity(compiler);
  reason = id.ok ? "C++ compiler '" + compiler + "'" : id.reason;
  return id.ok;
}

namespace {

constexpr const char* kTimedOut = "timed out";  // runCompiler's answer past the watch's deadline

// One compiler run; on failure, the one-line message (the log goes next to the source).
std::string runCompiler(const std::string& compiler, const std::vector<std::string>& args, const fs::path& src,
                        const fs::path& log, const CompileWatch& watch) {
  std::vector<std::string> argv = {compiler};
  for (const auto& f : baseFlags()) argv.push_back(f);
  for (const auto& a : args) argv.push_back(a);
  const ProcessResult r = runProcess(argv, watch.deadline());
  if (r.status == 0) return "";
  if (r.interrupted) return "interrupted";  // the caller throws Interrupted
  if (r.timedOut) return kTimedOut;         // the caller throws CompileTimeout
  try {
    writeAtomically(log, r.output);
  } catch (const std::exception&) {
  }
  std::string why = r.error.empty() ? firstErrorLine(r.output) : r.error;
  if (why.empty()) why = "no compiler output";
  if (why.size() > 300) why = why.substr(0, 300) + "...";
  return "cpu-jit: '" + compiler + "' failed (exit " + std::to_string(r.status) + ") compiling " +
         src.string() + ": " + why + " (log: " + log.string() + ")";
}

}  // namespace

JitLibrary loadJit(const std::vector<std::string>& parts, const std::string& hint, const JitToolchain& tc) {
  if (parts.empty()) throw std::invalid_argument("cpu-jit: nothing to compile");
  const CompilerIdentity& id = identity(tc.compiler);
  if (!id.ok) throw std::runtime_error("cpu-jit: " + id.reason);
  const fs::path dir = tc.cacheDir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw std::runtime_error("cpu-jit: cannot create the cache directory " + dir.string() +
                             " (set TAPELAB_CACHE_DIR): " + ec.message());
  std::string flagText;
  for (const auto& f : baseFlags()) flagText += f + " ";
  const std::string idKey = contentHash(flagText + "\nxsimd " + std::to_string(XSIMD_VERSION_MAJOR) + "." +
                                    std::to_string(XSIMD_VERSION_MINOR) + "." + std::to_string(XSIMD_VERSION_PATCH) +
                                    "\n" + id.text);
  std::string all;
  for (const auto& p : parts) all += p + "\n//--- part ---\n";
  const std::string key = contentHash(all + idKey);
  // The full key, kept in the .so's sum and compiled into the .so itself (tapelab_cpujit_key):
  // an object is used only by the key it was built for.
  const std::string cacheKey = "tapelab-cpujit-v3|" + tc.compiler + "|" + flagText + "|xsimd " +
                               std::to_string(XSIMD_VERSION_MAJOR) + "." + std::to_string(XSIMD_VERSION_MINOR) + "." +
                               std::to_string(XSIMD_VERSION_PATCH) + "|compiler " + contentHash(id.text) + "|source " +
                               key + " " + std::to_string(all.size());
  const std::string stem = sanitizeHint(hint) + "-" + key.substr(0, 24);
  std::vector<fs::path> srcs;
  std::vector<std::string> texts = parts;
  texts[0] += "\nextern \"C\" __attribute__((visibility(\"default\"))) const char* tapelab_cpujit_key() { return " +
              cLiteral(cacheKey) + "; }\n";
  for (size_t i = 0; i < parts.size(); ++i)
    srcs.push_back(dir / (stem + (i == 0 ? std::string() : ".part" + std::to_string(i)) + ".cpp"));
  const fs::path lib = dir / (stem + ".so");

  JitLibrary out;
  out.sourcePath = srcs[0].string();
  out.libraryPath = lib.string();
  auto open = [&]() -> bool {
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    out.handle = std::shared_ptr<void>(h, [](void* p) { dlclose(p); });
    using KeyFn = const char* (*)();
    const auto keyFn = reinterpret_cast<KeyFn>(dlsym(h, "tapelab_cpujit_key"));
    if (keyFn && keyFn() == cacheKey) return true;
    out.handle.reset();  // another key's object: never run
    return false;
  };
  // The .so's bytes and key must match its .sum (util/files.h), and the stored sources the parts:
  // a truncated, corrupt or foreign object, or a hash collision, is rebuilt, never loaded.
  auto cached = [&] {
    if (!checkCacheSum(lib, cacheKey)) return false;
    for (size_t i = 0; i < parts.size(); ++i)
      if (readCacheFile(srcs[i]) != texts[i]) return false;
    return true;
  };
  if (cached() && open()) {
    out.cacheHit = true;
    return out;
  }
  for (size_t i = 0; i < parts.size(); ++i) writeAtomically(srcs[i], texts[i]);
  // Under --compile-timeout from here (engine/compile_watch.h): the precompiled header, every part, the link.
  const CompileWatch watch("cpu-jit", tc.subject.empty() ? "the kernel " + sanitizeHint(hint) : tc.subject, all.size(),
                           tc.compileTimeout);
  const std::string pch = precompiledHeader(tc, dir, idKey, watch.deadline());
  std::vector<std::string> usePch;
  if (!pch.empty()) usePch = {"-include", pch};
  // Temporary files are registered: a stopped process removes them (util/process.h).
  const TempFile tmp(lib.string() + uniqueTempSuffix());
  const TempFile tmpSum(tmp.path() + ".sum");
  auto logOf = [&](size_t i) { return fs::path(srcs[i].string().substr(0, srcs[i].string().size() - 4) + ".log"); };
  std::string failure;
  if (parts.size() == 1) {
    std::vector<std::string> args = usePch;
    for (const std::string& a : {std::string("-shared"), srcs[0].string(), std::string("-o"), tmp.path()}) args.push_back(a);
    failure = runCompiler(tc.compiler, args, srcs[0], logOf(0), watch);
  } else {
    // Each part to an object, as many compilers at a time as cores; then one link.
    std::vector<std::unique_ptr<TempFile>> objects;
    std::vector<std::string> errors(parts.size());
    for (size_t i = 0; i < parts.size(); ++i)
      objects.push_back(std::make_unique<TempFile>(srcs[i].string() + uniqueTempSuffix() + ".o"));
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < parts.size();) {
        if (interruptRequested() || CompileWatch::Clock::now() > watch.deadline()) break;
        std::vector<std::string> args = usePch;
        for (const std::string& a : {std::string("-c"), srcs[i].string(), std::string("-o"), objects[i]->path()})
          args.push_back(a);
        errors[i] = runCompiler(tc.compiler, args, srcs[i], logOf(i), watch);
      }
    };
    const size_t width = std::min<size_t>(parts.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t w = 1; w < width; ++w) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    for (const auto& e : errors)
      if (failure.empty() && !e.empty()) failure = e;
    if (failure.empty() && CompileWatch::Clock::now() > watch.deadline()) failure = kTimedOut;  // parts left undone
    if (failure.empty() && !interruptRequested()) {
      std::vector<std::string> args = {"-shared"};
      for (const auto& o : objects) args.push_back(o->path());
      args.push_back("-o");
      args.push_back(tmp.path());
      failure = runCompiler(tc.compiler, args, srcs[0], logOf(0), watch);
    }
  }
  throwIfInterrupted();
  if (failure == kTimedOut) watch.timedOut();
  if (!failure.empty()) throw std::runtime_error(failure);
  // The sum first: a reader that sees the new .so with an older sum rebuilds, never loads a wrong one.
  std::string sumError;
  if (!writeCacheSum(tmp.path(), cacheKey, &sumError)) throw std::runtime_error("cpu-jit: " + sumError);
  if (!clearCacheSlot(lib.string() + ".sum", &sumError) || !clearCacheSlot(lib, &sumError))
    throw std::runtime_error("cpu-jit: " + sumError);
  fs::rename(tmp.path() + ".sum", lib.string() + ".sum", ec);
  if (!ec) fs::rename(tmp.path(), lib, ec);
  if (ec) throw std::runtime_error("cpu-jit: cannot move the compiled object to " + lib.string() + ": " + ec.message());
  if (!open()) {
    const char* e = dlerror();
    throw std::runtime_error("cpu-jit: cannot load " + lib.string() + " (from " + srcs[0].string() +
                             "): " + (e ? e : "its key is not this kernel's"));
  }
  return out;
}

}  // namespace tapelab
