#include "gpu/hip/compiler.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <regex>
#include <semaphore>
#include <thread>
#include <sstream>
#include <stdexcept>

#include "gpu/hip/codeobject.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/process.h"

namespace tapelab::hip {
namespace fs = std::filesystem;
namespace {

// A target hipcc is always asked about: every ROCm release has its device libraries.
constexpr const char* kProbeTarget = "--offload-arch=gfx90a";

// The double-quoted words of a `clang -###` line, unescaped.
std::vector<std::string> quotedWords(const std::string& line) {
  std::vector<std::string> words;
  static const std::regex quoted(R"re("((?:[^"\\]|\\.)*)")re");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), quoted); it != std::sregex_iterator(); ++it) {
    std::string w;
    const std::string raw = (*it)[1];
    for (size_t i = 0; i < raw.size(); ++i) w += raw[i] == '\\' && i + 1 < raw.size() ? raw[++i] : raw[i];
    words.push_back(w);
  }
  return words;
}

Toolchain probe() {
  Toolchain t;
  for (const char* hipcc : {"hipcc", "/opt/rocm/bin/hipcc"}) {
    const ProcessResult r = runProcess({hipcc, kProbeTarget, "--version"});
    if (r.status != 0 || r.output.find("HIP version") == std::string::npos) continue;
    t.ok = true;
    t.hipcc = hipcc;
    t.versionText = r.output;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);)
      if (line.find("HIP version") != std::string::npos || line.find("clang version") != std::string::npos)
        t.version += (t.version.empty() ? "" : ", ") + line;
    break;
  }
  if (!t.ok) {
    t.why = "hipcc not found (install hipcc, libamdhip64-dev and rocm-device-libs: scripts/setup.sh)";
    return t;
  }
  // What hipcc runs, to find its clang and its device libraries.
  const ProcessResult r = runProcess({t.hipcc, "-###", "-x", "hip", kProbeTarget, "--cuda-device-only", "-c",
                                      "/dev/null", "-o", "/dev/null"});
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> words = quotedWords(line);
    for (size_t i = 0; i < words.size(); ++i) {
      if (t.clang.empty() && i + 1 < words.size() && words[i + 1] == "-cc1") t.clang = words[i];
      const fs::path p(words[i]);
      if (t.deviceLibDir.empty() && p.filename() == "ocml.bc") t.deviceLibDir = p.parent_path().string();
    }
  }
  return t;
}

// gfx11 (RDNA3) targets whose device-library ISA file may be missing: LLVM 15
// compiles them, Debian's rocm-device-libs 5.2.3 stops at gfx1036.
bool isGfx11(const std::string& processor) {
  return processor == "gfx1100" || processor == "gfx1101" || processor == "gfx1102" || processor == "gfx1103";
}

std::string isaLibraryName(const std::string& processor) { return "oclc_isa_version_" + processor.substr(3) + ".bc"; }

// __oclc_ISA_version as the device libraries encode it: major * 1000 + minor * 100 + stepping.
std::string isaVersionNumber(const std::string& processor) {
  const std::string v = processor.substr(3);  // "1103", "90a"
  const int major = std::stoi(v.substr(0, v.size() - 2));
  const int minor = std::stoi(v.substr(v.size() - 2, 1), nullptr, 16);
  const int stepping = std::stoi(v.substr(v.size() - 1), nullptr, 16);
  return std::to_string(major * 1000 + minor * 100 + stepping);
}

// A device-library folder for gfx11 on a ROCm that lacks its ISA files: the
// installed libraries linked in, plus oclc_isa_version_110x.bc made with
// hipcc's clang. Upstream's file for gfx1103 (ROCm-Device-Libs
// oclc/src/isa_version_1103.cl) is this one constant, 11003; ocml and ockl 5.2
// only compare it with versions below 9011 (8000, 9000, 9006, 9008, 9010), so
// every gfx11 target gets the same library code as gfx1036, and LLVM 15's own
// gfx11 backend makes the code object. Built once per toolchain, in the cache
// (cacheDir/hip), each made file with a record of its key beside it, checked
// at every use and rebuilt when the check fails; with no cache directory, in a
// folder private to the process (isaLibraryFolder).
const std::string kDeviceLibPathFlag = "--hip-device-lib-path=";

bool needsIsaLibrary(const Toolchain& tc, const std::string& target) {
  const std::string processor = processorOf(target);
  return isGfx11(processor) && !tc.deviceLibDir.empty() &&
         !fs::exists(fs::path(tc.deviceLibDir) / isaLibraryName(processor));
}

constexpr const char* kGfx11Processors[] = {"gfx1100", "gfx1101", "gfx1102", "gfx1103"};

// The one-constant module upstream's oclc/src/isa_version_110x.cl compiles to.
std::string isaLibraryIr(const std::string& processor) {
  return "target triple = \"amdgcn-amd-amdhsa\"\n"
         "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 " +
         isaVersionNumber(processor) + ", align 4\n";
}

// What a made ISA file's record holds (util/files.h's writeCacheSum): the toolchain, where its
// libraries are, the processor and the module, so that another toolchain's or processor's file
// under this name, or one whose bytes changed, fails the check.
std::string isaLibraryKey(const Toolchain& tc, const std::string& processor) {
  return "tapelab-hip-isa-library-v1|" + contentHash(tc.versionText) + "|" + tc.deviceLibDir + "|" + processor + "|" +
         contentHash(isaLibraryIr(processor));
}

// Whether `dir` is a directory (not a link to one) holding what makeIsaLibraryFolder makes for
// `tc`: each installed library as a symbolic link to it, each made ISA file whole and for its key.
// A README alone, a file changed or copied from another processor, a link pointing elsewhere: not.
bool isaLibraryFolderValid(const Toolchain& tc, const fs::path& dir) {
  struct stat l {};
  if (::lstat(dir.c_str(), &l) != 0 || !S_ISDIR(l.st_mode)) return false;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tc.deviceLibDir, ec)) {
    if (e.path().extension() != ".bc") continue;
    const fs::path link = dir / e.path().filename();
    if (!fs::is_symlink(fs::symlink_status(link, ec)) || fs::read_symlink(link, ec) != e.path() || ec) return false;
  }
  if (ec) return false;
  for (const char* processor : kGfx11Processors) {
    if (fs::exists(fs::path(tc.deviceLibDir) / isaLibraryName(processor))) continue;  // installed: a link, checked above
    if (!checkCacheSum(dir / isaLibraryName(processor), isaLibraryKey(tc, processor), 1 << 20)) return false;
  }
  return true;
}

// Makes the folder at `dir` (which must not exist): links to the installed libraries, each missing
// gfx11 ISA file assembled by hipcc's clang with its record beside it, and a README.
void makeIsaLibraryFolder(const Toolchain& tc, const fs::path& dir) {
  if (tc.clang.empty() || tc.deviceLibDir.empty())
    throw std::runtime_error("hip: cannot build gfx11 device libraries: hipcc -### named no clang or ocml.bc");
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(tc.deviceLibDir))
    if (e.path().extension() == ".bc") fs::create_symlink(e.path(), dir / e.path().filename());
  std::string made;
  for (const char* processor : kGfx11Processors) {
    const fs::path bc = dir / isaLibraryName(processor);
    if (fs::exists(bc)) continue;
    const fs::path ll = dir / (std::string(processor) + ".ll");
    std::string why;
    if (!writeFileAtomic(ll, isaLibraryIr(processor), &why)) throw std::runtime_error("hip: " + why);
    const ProcessResult r = runProcess({tc.clang, "--target=amdgcn-amd-amdhsa", "-nogpulib", "-c", "-emit-llvm", "-x",
                                        "ir", ll.string(), "-o", bc.string()});
    if (r.status != 0)
      throw std::runtime_error("hip: " + tc.clang + " could not assemble " + ll.filename().string() + ": " + r.output + r.error);
    fs::remove(ll);
    if (!writeCacheSum(bc, isaLibraryKey(tc, processor), &why)) throw std::runtime_error("hip: " + why);
    made += " " + bc.filename().string();
  }
  writeFileAtomic(dir / "README",
                  "Made by tapelab (gpu/hip/compiler.cpp): the device libraries of " + tc.deviceLibDir +
                      " linked in, plus" + made + ", each one constant __oclc_ISA_version as upstream's\n" +
                      "oclc/src/isa_version_110x.cl defines it, which this ROCm lacks. Each made file's .sum holds\n" +
                      "its key; a folder that fails the check is made again.\n");
}

// With no cache directory: a folder private to this process (mkdtemp, mode 0700), made on first
// use and removed at exit; never a shared /tmp folder another user could have filled.
struct PrivateIsaFolder {
  fs::path root, dir;
  ~PrivateIsaFolder() {
    std::error_code ec;
    if (!root.empty()) fs::remove_all(root, ec);
  }
};

fs::path isaLibraryFolder(const Toolchain& tc, const std::string& cacheDir) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const std::string name = "device-libs-" + contentHash(tc.versionText + "|" + tc.deviceLibDir).substr(0, 16);
  if (cacheDir.empty()) {
    static PrivateIsaFolder folder;
    if (!folder.dir.empty() && isaLibraryFolderValid(tc, folder.dir)) return folder.dir;
    if (folder.root.empty()) {
      std::string tmpl = (fs::temp_directory_path() / "tapelab-hip-device-libs-XXXXXX").string();
      if (!::mkdtemp(tmpl.data())) throw std::runtime_error("hip: cannot make a private folder " + tmpl + ": " + std::strerror(errno));
      folder.root = tmpl;
    }
    folder.dir = folder.root / name;
    std::error_code ec;
    fs::remove_all(folder.dir, ec);
    makeIsaLibraryFolder(tc, folder.dir);
    return folder.dir;
  }
  const fs::path base = fs::path(cacheDir) / "hip", dir = base / name;
  if (isaLibraryFolderValid(tc, dir)) return dir;
  // Rebuilt under a lock, so that no process removes a folder another has just put in place.
  fs::create_directories(base);
  const fs::path lockPath = base / (name + ".lock");
  std::string why;
  if (!clearCacheSlot(lockPath, &why)) throw std::runtime_error("hip: " + why);
  const int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
  if (fd < 0) throw std::runtime_error("hip: cannot open " + lockPath.string() + ": " + std::strerror(errno));
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }  // releases the lock
  } unlock{fd};
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) throw std::runtime_error("hip: cannot lock " + lockPath.string() + ": " + std::strerror(errno));
  if (isaLibraryFolderValid(tc, dir)) return dir;  // another process made it meanwhile
  // Whatever is in its place (a folder that failed the check, a link, a file) goes.
  if (!clearCacheSlot(dir, &why)) throw std::runtime_error("hip: " + why);
  std::error_code ec;
  fs::remove(dir, ec);
  const fs::path tmp = base / ("device-libs" + uniqueTempSuffix());
  try {
    makeIsaLibraryFolder(tc, tmp);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::rename(tmp, dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    throw std::runtime_error("hip: cannot move the made device libraries to " + dir.string());
  }
  return dir;
}

void putBlob(std::string& out, const std::string& bytes) {
  out += std::to_string(bytes.size()) + '\n';
  out += bytes;
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

// hipcc processes at once: one per core. A 1,536-node kernel keeps clang busy
// for a minute and holds a few hundred MB; `tapelab compare` asks for many at once.
std::counting_semaphore<>& hipccSlots() {
  static std::counting_semaphore<> slots(std::max<std::ptrdiff_t>(1, std::thread::hardware_concurrency()));
  return slots;
}

int occupancyRemark(const std::string& log) {
  std::smatch m;
  static const std::regex remark(R"(Occupancy \[waves/SIMD\]: (\d+))");
  return std::regex_search(log, m, remark) ? std::stoi(m[1]) : -1;
}

}  // namespace

const Toolchain& toolchain() {
  static const Toolchain t = probe();
  return t;
}

const std::vector<std::string>& exactnessFlags() {
  static const std::vector<std::string> flags = {
      "-O3", "-std=c++17", "-ffp-contract=off", "-fno-fast-math", "-fhip-fp32-correctly-rounded-divide-sqrt",
      "-fno-gpu-flush-denormals-to-zero", "-include", "hip/hip_runtime.h"};
  return flags;
}

bool isGfx11Target(const std::string& target) { return isGfx11(processorOf(target)); }

std::vector<std::string> liftGfx11VgprLimit(const std::string& target) {
  if (!isGfx11Target(target)) return {};
  return {"-Xclang", "-mllvm", "-Xclang", "-amdgpu-limit-to-128-vgprs=false"};  // code generation only: lld rejects it
}

std::vector<std::string> parseTargets(const std::string& list) {
  static const std::regex target(R"(gfx[0-9]{1,2}[0-9a-f]{2}(:[a-z]+[+-])*)");
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    if (!std::regex_match(item, target))
      throw std::invalid_argument("TAPELAB_HIP_ARCH: '" + item +
                                  "' is not an AMD GPU target (expected gfx<id>[:feature+|-], e.g. gfx1103 or gfx90a:xnack-)");
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) throw std::invalid_argument("TAPELAB_HIP_ARCH: no target in '" + list + "'");
  return out;
}

std::vector<std::string> hipccArguments(const std::string& target, const std::string& cacheDir) {
  const Toolchain& tc = toolchain();
  if (!tc.ok) throw std::runtime_error("hip: " + tc.why);
  std::vector<std::string> args = {"-x", "hip", "--offload-arch=" + target, "--cuda-device-only", "--no-gpu-bundle-output"};
  for (const std::string& f : exactnessFlags()) args.push_back(f);
  if (needsIsaLibrary(tc, target)) args.push_back(kDeviceLibPathFlag + isaLibraryFolder(tc, cacheDir).string());
  return args;
}

CodeObject compileHip(const std::string& source, const std::string& target, const std::string& cacheDir,
                      const std::vector<std::string>& extra, std::chrono::steady_clock::time_point deadline) {
  const auto t0 = std::chrono::steady_clock::now();
  const Toolchain& tc = toolchain();
  CodeObject out;
  out.target = target;
  std::vector<std::string> args = hipccArguments(target, cacheDir);
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("-Rpass-analysis=kernel-resource-usage");  // the compiler's occupancy, in the log
  args.push_back("-c");
  out.syntheticIsaLibrary = needsIsaLibrary(tc, target);

  // The key names the made folder by what it holds, not where it is.
  std::string key = "tapelab-hipcc-v2|" + contentHash(tc.versionText) + "|" + tc.deviceLibDir + "|";
  for (const std::string& a : args) key += (a.rfind(kDeviceLibPathFlag, 0) == 0 ? "isa-library-made-here" : a) + " ";
  key += "|" + contentHash(source) + "|" + std::to_string(source.size());
  const std::string path = cacheDir.empty() ? "" : (fs::path(cacheDir) / "hip" / (contentHash(key) + ".hipco")).string();
  if (!path.empty()) {
    std::istringstream in(readCacheEntry(path, key).value_or(""));  // "" when missing, foreign or damaged
    if (getBlob(in, out.log) && getBlob(in, out.bytes) && !out.bytes.empty()) {
      out.cacheHit = true;
      out.compilerOccupancy = occupancyRemark(out.log);
      out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return out;
    }
    out.log.clear();
    out.bytes.clear();
  }

  const fs::path work = fs::temp_directory_path() / ("tapelab-hip" + uniqueTempSuffix());
  // Registered: a stopped process removes them (util/process.h).
  const TempFile sourceFile((work / "tapelab_kernel.hip").string()), objectFile((work / "tapelab_kernel.co").string());
  std::string why;
  if (!writeFileAtomic(work / "tapelab_kernel.hip", source, &why)) throw std::runtime_error("hip: " + why);
  std::vector<std::string> argv = {tc.hipcc};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back((work / "tapelab_kernel.hip").string());
  argv.push_back("-o");
  argv.push_back((work / "tapelab_kernel.co").string());
  hipccSlots().acquire();
  const ProcessResult r = runProcess(argv, deadline);
  hipccSlots().release();
  out.log = r.output;
  out.timedOut = r.timedOut;
  if (out.syntheticIsaLibrary && cacheDir.empty())
    out.log += (out.log.empty() ? "" : "\n") + std::string("tapelab: no cache directory: the gfx11 device libraries were made in ") +
               isaLibraryFolder(tc, cacheDir).parent_path().string() + ", private to this process (removed at exit)";
  if (r.status == 0) out.bytes = readFile(work / "tapelab_kernel.co").value_or("");
  else if (!r.error.empty()) out.log += (out.log.empty() ? "" : "\n") + tc.hipcc + ": " + r.error;
  std::error_code ec;
  fs::remove_all(work, ec);
  if (out.bytes.empty() && r.status == 0) out.log += "\nhipcc wrote no code object";
  out.compilerOccupancy = occupancyRemark(out.log);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.bytes.empty() && !path.empty()) {
    std::string entry;
    putBlob(entry, out.log);
    putBlob(entry, out.bytes);
    writeCacheEntry(path, key, entry);  // an unwritable cache is ignored (util/files.h: the key inside)
  }
  return out;
}

}  // namespace tapelab::hip
