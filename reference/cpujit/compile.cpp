#include "reference/cpujit/compile.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <xsimd/config/xsimd_config.hpp>

extern char** environ;

namespace tapelab {
namespace fs = std::filesystem;
namespace {

#ifndef TAPELAB_XSIMD_INCLUDE
#define TAPELAB_XSIMD_INCLUDE ""
#endif

std::string compilerCommand() {
  const char* c = std::getenv("TAPELAB_CXX");
  return c && *c ? c : "c++";
}

std::vector<std::string> baseFlags() {
  std::vector<std::string> f = {"-O2",   "-march=native", "-ffp-contract=off", "-fno-fast-math",
                                "-fPIC", "-std=c++20",    "-w",                "-fvisibility=hidden"};
  const std::string inc = TAPELAB_XSIMD_INCLUDE;
  if (!inc.empty() && inc != "/usr/include" && inc != "/usr/local/include") f.push_back("-I" + inc);
  return f;
}

struct ProcessResult {
  int status = -1;  // exit status, or -1 when it could not be started / was killed
  std::string output;
  std::string error;  // why it could not be started
};

// Runs argv (PATH lookup), stdin from /dev/null, stdout and stderr captured.
ProcessResult runProcess(const std::vector<std::string>& argv) {
  ProcessResult r;
  int fds[2];
  if (pipe(fds) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.error = std::strerror(rc);
    return r;
  }
  char buf[4096];
  for (ssize_t k; (k = read(fds[0], buf, sizeof buf)) != 0;) {
    if (k < 0) {
      if (errno == EINTR) continue;
      break;
    }
    r.output.append(buf, static_cast<size_t>(k));
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (!WIFEXITED(st)) r.error = "killed by signal " + std::to_string(WTERMSIG(st));
  return r;
}

// 128-bit FNV-1a (two 64-bit lanes with different offsets): names cache files;
// the stored source is compared on a hit, so a collision costs a recompile, not a wrong kernel.
std::string hashHex(const std::string& s) {
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  for (unsigned char c : s) {
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = (h2 ^ static_cast<unsigned char>(c + 0x5b)) * 0x100000001b3ull;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string uniqueSuffix() {
  static std::atomic<unsigned> counter{0};
  std::string s(1, '.');
  s += std::to_string(getpid());
  s += '.';
  s += std::to_string(counter.fetch_add(1));
  s += ".tmp";
  return s;
}

// Writes atomically (temp file + rename) so concurrent processes never see half a file.
void writeAtomically(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + uniqueSuffix();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cpu-jit: cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw std::runtime_error("cpu-jit: cannot write " + p.string() + ": " + ec.message());
}

struct CompilerIdentity {
  bool ok = false;
  std::string reason;  // when !ok
  std::string text;    // predefined macros: compiler version and target features
  bool gcc = false;    // precompiled headers are GCC's .gch
};

const CompilerIdentity& identity() {
  static const CompilerIdentity id = [] {
    CompilerIdentity c;
    std::vector<std::string> argv = {compilerCommand(), "-march=native", "-std=c++20", "-E", "-dM", "-x", "c++",
                                     "/dev/null"};
    const ProcessResult r = runProcess(argv);
    if (r.status != 0) {
      c.reason = "cannot run the C++ compiler '" + compilerCommand() + "'" +
                 (r.error.empty() ? " (exit " + std::to_string(r.status) + ")" : ": " + r.error) +
                 "; install g++ or set TAPELAB_CXX";
      return c;
    }
    c.ok = true;
    c.text = r.output;
    c.gcc = r.output.find("__clang__") == std::string::npos && r.output.find("__GNUC__") != std::string::npos;
    return c;
  }();
  return id;
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
// per cache; "" when unavailable (then every compile parses xsimd itself).
std::string precompiledHeader(const fs::path& dir, const std::string& key) {
  const char* env = std::getenv("TAPELAB_JIT_PCH");
  if ((env && std::string(env) == "0") || !identity().gcc) return "";
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const fs::path pdir = dir / ("pch-" + key.substr(0, 16));
  const fs::path header = pdir / "tl_xsimd.hpp";
  const fs::path gch = pdir / "tl_xsimd.hpp.gch";
  std::error_code ec;
  if (fs::exists(gch, ec) && fs::exists(header, ec)) return header.string();
  fs::create_directories(pdir, ec);
  if (ec) return "";
  try {
    writeAtomically(header, "#include <xsimd/xsimd.hpp>\n");
  } catch (const std::exception&) {
    return "";
  }
  const std::string tmp = gch.string() + uniqueSuffix();
  std::vector<std::string> argv = {compilerCommand()};
  for (const auto& f : baseFlags()) argv.push_back(f);
  for (const char* a : {"-x", "c++-header"}) argv.push_back(a);
  argv.push_back(header.string());
  argv.push_back("-o");
  argv.push_back(tmp);
  if (runProcess(argv).status != 0) {
    fs::remove(tmp, ec);
    return "";
  }
  fs::rename(tmp, gch, ec);
  return ec ? "" : header.string();
}

}  // namespace

void* JitLibrary::symbol(const char* name) const {
  void* p = dlsym(handle.get(), name);
  if (!p) throw std::runtime_error("cpu-jit: " + libraryPath + " lacks symbol " + name);
  return p;
}

std::string jitCacheDir() {
  fs::path dir;
  if (const char* c = std::getenv("TAPELAB_CACHE_DIR"); c && *c) {
    dir = c;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = fs::path(x) / "tapelab" / "cpujit";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = fs::path(h) / ".cache" / "tapelab" / "cpujit";
  } else {
    dir = fs::temp_directory_path() / "tapelab-cpujit";
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw std::runtime_error("cpu-jit: cannot create the cache directory " + dir.string() +
                             " (set TAPELAB_CACHE_DIR): " + ec.message());
  return dir.string();
}

bool jitCompilerUsable(std::string& reason) {
  const CompilerIdentity& id = identity();
  reason = id.ok ? "C++ compiler '" + compilerCommand() + "'" : id.reason;
  return id.ok;
}

namespace {

// One compiler run; on failure, the one-line message (the log goes next to the source).
std::string runCompiler(const std::vector<std::string>& args, const fs::path& src, const fs::path& log) {
  std::vector<std::string> argv = {compilerCommand()};
  for (const auto& f : baseFlags()) argv.push_back(f);
  for (const auto& a : args) argv.push_back(a);
  const ProcessResult r = runProcess(argv);
  if (r.status == 0) return "";
  try {
    writeAtomically(log, r.output);
  } catch (const std::exception&) {
  }
  std::string why = r.error.empty() ? firstErrorLine(r.output) : r.error;
  if (why.empty()) why = "no compiler output";
  if (why.size() > 300) why = why.substr(0, 300) + "...";
  return "cpu-jit: '" + compilerCommand() + "' failed (exit " + std::to_string(r.status) + ") compiling " +
         src.string() + ": " + why + " (log: " + log.string() + ")";
}

}  // namespace

JitLibrary loadJit(const std::vector<std::string>& parts, const std::string& hint) {
  if (parts.empty()) throw std::invalid_argument("cpu-jit: nothing to compile");
  const CompilerIdentity& id = identity();
  if (!id.ok) throw std::runtime_error("cpu-jit: " + id.reason);
  const fs::path dir = jitCacheDir();
  std::string flagText;
  for (const auto& f : baseFlags()) flagText += f + " ";
  const std::string idKey = hashHex(flagText + "\nxsimd " + std::to_string(XSIMD_VERSION_MAJOR) + "." +
                                    std::to_string(XSIMD_VERSION_MINOR) + "." + std::to_string(XSIMD_VERSION_PATCH) +
                                    "\n" + id.text);
  std::string all;
  for (const auto& p : parts) all += p + "\n//--- part ---\n";
  const std::string key = hashHex(all + idKey);
  const std::string stem = sanitizeHint(hint) + "-" + key.substr(0, 24);
  std::vector<fs::path> srcs;
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
    return true;
  };
  std::error_code ec;
  auto cached = [&] {
    if (!fs::exists(lib, ec)) return false;
    for (size_t i = 0; i < parts.size(); ++i)
      if (!fs::exists(srcs[i], ec) || readFile(srcs[i]) != parts[i]) return false;
    return true;
  };
  if (cached() && open()) {
    out.cacheHit = true;
    return out;
  }
  for (size_t i = 0; i < parts.size(); ++i) writeAtomically(srcs[i], parts[i]);
  const std::string pch = precompiledHeader(dir, idKey);
  std::vector<std::string> usePch;
  if (!pch.empty()) usePch = {"-include", pch};
  const std::string tmp = lib.string() + uniqueSuffix();
  auto logOf = [&](size_t i) { return fs::path(srcs[i].string().substr(0, srcs[i].string().size() - 4) + ".log"); };
  std::string failure;
  if (parts.size() == 1) {
    std::vector<std::string> args = usePch;
    for (const std::string& a : {std::string("-shared"), srcs[0].string(), std::string("-o"), tmp}) args.push_back(a);
    failure = runCompiler(args, srcs[0], logOf(0));
  } else {
    // Each part to an object, as many compilers at a time as cores; then one link.
    std::vector<std::string> objects(parts.size()), errors(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) objects[i] = srcs[i].string() + uniqueSuffix() + ".o";
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < parts.size();) {
        std::vector<std::string> args = usePch;
        for (const std::string& a : {std::string("-c"), srcs[i].string(), std::string("-o"), objects[i]})
          args.push_back(a);
        errors[i] = runCompiler(args, srcs[i], logOf(i));
      }
    };
    const size_t width = std::min<size_t>(parts.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t w = 1; w < width; ++w) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    for (const auto& e : errors)
      if (failure.empty() && !e.empty()) failure = e;
    if (failure.empty()) {
      std::vector<std::string> args = {"-shared"};
      for (const auto& o : objects) args.push_back(o);
      args.push_back("-o");
      args.push_back(tmp);
      failure = runCompiler(args, srcs[0], logOf(0));
    }
    for (const auto& o : objects) fs::remove(o, ec);
  }
  if (!failure.empty()) {
    fs::remove(tmp, ec);
    throw std::runtime_error(failure);
  }
  fs::rename(tmp, lib, ec);
  if (ec) throw std::runtime_error("cpu-jit: cannot move the compiled object to " + lib.string() + ": " + ec.message());
  if (!open()) {
    const char* e = dlerror();
    throw std::runtime_error("cpu-jit: cannot load " + lib.string() + " (from " + srcs[0].string() +
                             "): " + (e ? e : "dlopen failed"));
  }
  return out;
}

}  // namespace tapelab
