// util/: the content hash, atomic file writes, inputs and outputs a user names, cache records, the cache directory.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "util/files.h"
#include "util/hash.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

fs::path freshDir() {
  const fs::path d = fs::temp_directory_path() /
                     ("tapelab-util-test-" + std::to_string(::getpid()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  return d;
}

}  // namespace

// XXH3-128: 32 hex digits, the library's known values, sensitive to every byte.
TEST(UtilHash, Xxh3_128AsHex) {
  EXPECT_EQ(contentHash(""), "99aa06d3014798d86001c324468d497f");
  const std::string h = contentHash("tapelab");
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(h, contentHash(std::string("tapelab")));
  std::set<std::string> seen;
  std::string text(200, 'a');
  for (size_t i = 0; i < text.size(); ++i) {
    std::string t = text;
    t[i] = 'b';
    seen.insert(contentHash(t));
  }
  EXPECT_EQ(seen.size(), text.size());
}

TEST(UtilFiles, AtomicWriteCreatesReplacesAndLeavesNoTemporaries) {
  const fs::path dir = freshDir();
  const fs::path file = dir / "a" / "b" / "entry.bin";
  EXPECT_FALSE(readFile(file).has_value());
  ASSERT_TRUE(writeFileAtomic(file, std::string("first\0with a zero", 17)));
  EXPECT_EQ(readFile(file), std::string("first\0with a zero", 17));
  ASSERT_TRUE(writeFileAtomic(file, "second"));
  EXPECT_EQ(readFile(file), "second");
  // Writers racing on one file leave one of their whole texts, and no temporary file.
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 20; ++i) writeFileAtomic(file, std::string(1000 + w, char('a' + w)));
    });
  for (auto& t : writers) t.join();
  const std::string last = readFile(file).value_or("");
  ASSERT_GE(last.size(), 1000u);
  EXPECT_EQ(last, std::string(last.size(), last[0]));
  int files = 0;
  for (const auto& e : fs::directory_iterator(file.parent_path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  // An impossible place: false and the reason, no throw.
  std::string why;
  EXPECT_FALSE(writeFileAtomic(file / "under-a-file", "x", &why));
  EXPECT_FALSE(why.empty());
  fs::remove_all(dir);
}

TEST(UtilFiles, TempSuffixesAreUnique) {
  std::set<std::string> s;
  for (int i = 0; i < 100; ++i) s.insert(uniqueTempSuffix());
  EXPECT_EQ(s.size(), 100u);
  EXPECT_NE(s.begin()->find(std::to_string(::getpid())), std::string::npos);
}

TEST(UtilFiles, CacheDirectory) {
  EXPECT_EQ(resolveCacheDir("/c", "/x", "/h"), "/c");
  EXPECT_EQ(resolveCacheDir("off", "/x", "/h"), "");
  EXPECT_EQ(resolveCacheDir("", "/x", "/h"), "/x/tapelab");
  EXPECT_EQ(resolveCacheDir(nullptr, nullptr, "/h"), "/h/.cache/tapelab");
  EXPECT_EQ(resolveCacheDir(nullptr, "", ""), "");
}

// A cache entry reads back only whole, unchanged and for its own key: truncated, one byte
// flipped, the format before the key was stored, another key's entry or an empty file are
// misses (rebuilt, never loaded).
TEST(UtilFiles, CacheEntryDetectsTruncationCorruptionAndAnotherKey) {
  const fs::path d = freshDir();
  const fs::path p = d / "entry.bin";
  const std::string key = "tapelab-test-v1|compiler 1.0|source 4096|0123456789abcdef";
  std::string payload;
  for (int i = 0; i < 4096; ++i) payload += static_cast<char>(i * 37);
  ASSERT_TRUE(writeCacheEntry(p, key, payload));
  ASSERT_EQ(readCacheEntry(p, key), payload);
  EXPECT_EQ(cacheEntryKey(p), key);
  EXPECT_FALSE(readCacheEntry(p, key + "x")) << "a longer key";
  EXPECT_FALSE(readCacheEntry(p, key.substr(0, key.size() - 1))) << "a shorter key";
  EXPECT_FALSE(readCacheEntry(p, "")) << "no key";
  const std::string whole = readFile(p).value();
  for (size_t keep : {size_t{0}, size_t{1}, size_t{30}, whole.size() / 2, whole.size() - 1}) {
    ASSERT_TRUE(writeFileAtomic(p, std::string_view(whole).substr(0, keep)));
    EXPECT_FALSE(readCacheEntry(p, key)) << "truncated to " << keep << " bytes";
  }
  for (size_t at : {size_t{0}, size_t{25}, size_t{60}, whole.size() - payload.size() - 3, whole.size() - 1}) {
    std::string bad = whole;
    bad[at] ^= 0x10;
    ASSERT_TRUE(writeFileAtomic(p, bad));
    EXPECT_FALSE(readCacheEntry(p, key)) << "byte " << at << " flipped";
  }
  ASSERT_TRUE(writeFileAtomic(p, whole + "x"));
  EXPECT_FALSE(readCacheEntry(p, key)) << "a byte appended";
  ASSERT_TRUE(writeFileAtomic(p, payload));  // no record at all
  EXPECT_FALSE(readCacheEntry(p, key));
  EXPECT_FALSE(readCacheEntry(d / "missing", key));
  // Another kernel's entry copied under this name: whole, but not this key's.
  const fs::path other = d / "other.bin";
  ASSERT_TRUE(writeCacheEntry(other, key + "-other", payload));
  fs::copy_file(other, p, fs::copy_options::overwrite_existing);
  EXPECT_FALSE(readCacheEntry(p, key));
  EXPECT_EQ(readCacheEntry(p, key + "-other"), payload);
  // The size cap: a whole entry larger than the reader allows is a miss.
  ASSERT_TRUE(writeCacheEntry(p, key, payload));
  EXPECT_FALSE(readCacheEntry(p, key, payload.size()));
  EXPECT_EQ(readCacheEntry(p, key, whole.size()), payload);
  fs::remove_all(d);
}

// An entry's place taken by something that is not a regular file: a link to /dev/zero (never
// read whole), a FIFO (never waited on), a directory, a link to a valid entry: each is a miss,
// at once, and writing the entry again replaces it.
TEST(UtilFiles, SpecialFilesInAnEntrysPlaceAreMissesAndReplaced) {
  const fs::path d = freshDir();
  fs::create_directories(d);
  const std::string key = "k";
  const fs::path valid = d / "valid.bin";
  ASSERT_TRUE(writeCacheEntry(valid, key, "payload"));
  auto check = [&](const fs::path& p, const std::string& what) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(readCacheEntry(p, key)) << what;
    EXPECT_FALSE(readCacheFile(p)) << what;
    EXPECT_FALSE(checkCacheSum(p, key)) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << what;
    std::string why;
    ASSERT_TRUE(writeCacheEntry(p, key, "rebuilt", &why)) << what << ": " << why;
    EXPECT_EQ(readCacheEntry(p, key), "rebuilt") << what;
    struct stat l {};
    ASSERT_EQ(::lstat(p.c_str(), &l), 0);
    EXPECT_TRUE(S_ISREG(l.st_mode)) << what;
  };
  fs::create_symlink("/dev/zero", d / "zero.bin");
  check(d / "zero.bin", "a link to /dev/zero");
  ASSERT_EQ(::mkfifo((d / "fifo.bin").c_str(), 0600), 0);
  check(d / "fifo.bin", "a FIFO");
  fs::create_directories(d / "dir.bin" / "inside");
  check(d / "dir.bin", "a directory");
  fs::create_symlink(valid, d / "link.bin");
  check(d / "link.bin", "a link to a valid entry");
  EXPECT_EQ(readCacheEntry(valid, key), "payload") << "the link's target is left alone";
  fs::remove_all(d);
}

// The sidecar record of a file that must stay as it is (cpu-jit's .so): its key and the file's hash.
TEST(UtilFiles, CacheSumHoldsTheKeyAndTheFilesHash) {
  const fs::path d = freshDir();
  const fs::path so = d / "kernel.so";
  const std::string bytes(5000, 'x');
  ASSERT_TRUE(writeFileAtomic(so, bytes));
  EXPECT_FALSE(checkCacheSum(so, "k1"));
  ASSERT_TRUE(writeCacheSum(so, "k1"));
  EXPECT_TRUE(checkCacheSum(so, "k1"));
  EXPECT_EQ(cacheSumKey(so), "k1");
  EXPECT_FALSE(checkCacheSum(so, "k2")) << "another key";
  EXPECT_FALSE(checkCacheSum(so, "k1", bytes.size() - 1)) << "over the size cap";
  ASSERT_TRUE(writeFileAtomic(so, bytes.substr(0, bytes.size() - 3)));
  EXPECT_FALSE(checkCacheSum(so, "k1")) << "truncated";
  // Another kernel's .so and .sum copied under this name: whole, but not this key's.
  const fs::path other = d / "other.so";
  ASSERT_TRUE(writeFileAtomic(other, "another kernel"));
  ASSERT_TRUE(writeCacheSum(other, "k2"));
  fs::copy_file(other, so, fs::copy_options::overwrite_existing);
  fs::copy_file(other.string() + ".sum", so.string() + ".sum", fs::copy_options::overwrite_existing);
  EXPECT_FALSE(checkCacheSum(so, "k1"));
  EXPECT_TRUE(checkCacheSum(so, "k2"));
  fs::remove_all(d);
}

// Inputs a user names: read in chunks up to a limit; a file that cannot be opened says why.
TEST(UtilFiles, InputFileStatesItsLimitAndWhyAFileCannotBeOpened) {
  const fs::path d = freshDir();
  fs::create_directories(d);
  auto openError = [](const fs::path& p) {
    try {
      InputFile f(p.string(), 1 << 20);
      while (!f.next().empty()) {
      }
      return std::string("(read)");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(openError(d / "missing"), "no such file");
  fs::create_symlink(d / "nowhere", d / "dangling");
  EXPECT_EQ(openError(d / "dangling"), "a symbolic link to '" + (d / "nowhere").string() + "', which does not exist");
  fs::create_symlink(d / "loop2", d / "loop1");
  fs::create_symlink(d / "loop1", d / "loop2");
  EXPECT_NE(openError(d / "loop1").find("a loop of symbolic links"), std::string::npos) << openError(d / "loop1");
  EXPECT_EQ(openError(d), "a directory, not a file");
  // /dev/zero never ends: the limit ends it.
  try {
    InputFile z("/dev/zero", 1 << 20);
    uint64_t n = 0;
    for (std::string_view c; !(c = z.next()).empty();) n += c.size();
    ADD_FAILURE() << "read " << n << " bytes of /dev/zero";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "larger than the limit of 1 MiB");
  }
  // A regular file over the limit is refused before it is read.
  ASSERT_TRUE(writeFileAtomic(d / "big", std::string(5000, 'a')));
  try {
    InputFile big((d / "big").string(), 4096);
    ADD_FAILURE() << "opened a file over the limit";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "larger than the limit of 4 KiB (5000 bytes)");
  }
  InputFile ok((d / "big").string(), 5000);
  std::string all;
  for (std::string_view c; !(c = ok.next()).empty();) all += c;
  EXPECT_EQ(all, std::string(5000, 'a'));
  EXPECT_EQ(ok.bytesRead(), 5000u);
  EXPECT_EQ(byteCount(1 << 30), "1 GiB");
  EXPECT_EQ(byteCount(1000), "1000 bytes");
  fs::remove_all(d);
}

// Every --out: through links, special files written in place (never replaced), directories and
// the run's own inputs refused, ENOSPC and EACCES naming the file.
TEST(UtilFiles, OutputFilesNeverClobber) {
  const fs::path d = freshDir();
  fs::create_directories(d);
  auto refusal = [](const std::string& path, const std::vector<std::string>& inputs) {
    try {
      writeOutputFile(path, "new\n", inputs);
      return std::string("(written)");
    } catch (const OutputRefused& e) {
      return "refused: " + std::string(e.what());
    } catch (const std::runtime_error& e) {
      return "failed: " + std::string(e.what());
    }
  };
  // A new file, then over an existing one, keeping its permission bits.
  const std::string plain = (d / "plain.txt").string();
  EXPECT_EQ(refusal(plain, {}), "(written)");
  EXPECT_EQ(readFile(plain), "new\n");
  ::chmod(plain.c_str(), 0640);
  ASSERT_TRUE(writeFileAtomic(d / "x", "x"));
  EXPECT_EQ(refusal(plain, {}), "(written)");
  struct stat st {};
  ASSERT_EQ(::stat(plain.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  // Through a link: the target is written, the link stays a link.
  ASSERT_TRUE(writeFileAtomic(d / "target.txt", "old"));
  fs::create_symlink(d / "target.txt", d / "link.txt");
  EXPECT_EQ(refusal((d / "link.txt").string(), {}), "(written)");
  EXPECT_TRUE(fs::is_symlink(d / "link.txt"));
  EXPECT_EQ(readFile(d / "target.txt"), "new\n");
  fs::create_symlink(d / "made-by-link.txt", d / "dangling.txt");
  EXPECT_EQ(refusal((d / "dangling.txt").string(), {}), "(written)");
  EXPECT_TRUE(fs::is_symlink(d / "dangling.txt"));
  EXPECT_EQ(readFile(d / "made-by-link.txt"), "new\n");
  // Special files: a character device and a FIFO are written in place and stay what they are.
  EXPECT_EQ(refusal("/dev/null", {}), "(written)");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  const fs::path fifo = d / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = [&] {
                         std::ifstream in(fifo);
                         return std::string(std::istreambuf_iterator<char>(in), {});
                       }(); });
  EXPECT_EQ(refusal(fifo.string(), {}), "(written)");
  reader.join();
  EXPECT_EQ(got, "new\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  // Refused: a directory, and an input of the same run under any name.
  EXPECT_EQ(refusal(d.string(), {}), "refused: --out " + d.string() + ": a directory, not a file");
  EXPECT_EQ(refusal(plain, {plain}), "refused: --out " + plain + ": is an input of this run; refusing to overwrite it");
  fs::create_symlink(plain, d / "alias.txt");
  EXPECT_EQ(refusal((d / "alias.txt").string(), {plain}).rfind("refused: --out " + (d / "alias.txt").string() + " (-> ", 0), 0u);
  ASSERT_EQ(::link(plain.c_str(), (d / "hard.txt").c_str()), 0);
  EXPECT_NE(refusal((d / "hard.txt").string(), {plain}).find("is " + plain + ", an input of this run"), std::string::npos);
  // ENOSPC names the file and the reason; no temporary file is left anywhere.
  EXPECT_EQ(refusal("/dev/full", {}), "failed: --out /dev/full: cannot write: No space left on device");
  EXPECT_EQ(refusal((d / "no-such-dir" / "x").string(), {}),
            "failed: --out " + (d / "no-such-dir" / "x").string() + ": cannot write: No such file or directory");
  for (const auto& e : fs::directory_iterator(d)) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  // EACCES: as a user who may not write the directory (a child process drops root's rights).
  fs::create_directories(d / "locked");
  ::chmod((d / "locked").c_str(), 0555);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::getuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const std::string r = refusal((d / "locked" / "out.txt").string(), {});
    ::_exit(r == "failed: --out " + (d / "locked" / "out.txt").string() + ": cannot write: Permission denied" ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "EACCES was not reported as such";
  fs::remove_all(d);
}

// A streamed --out (experiments/*.cpp, rows as they finish): the refusals of writeOutputFile, checked
// before the file is emptied; rows there as they are written; special files written in place; write
// failures naming the file.
TEST(UtilFiles, StreamedOutputFilesRefuseWhatWriteOutputFileRefuses) {
  const fs::path d = freshDir();
  fs::create_directories(d);
  auto opened = [](const std::string& path, const std::vector<std::string>& inputs) {
    try {
      OutputFile out(path, inputs);
      return std::string("(opened)");
    } catch (const OutputRefused& e) {
      return "refused: " + std::string(e.what());
    } catch (const std::runtime_error& e) {
      return "failed: " + std::string(e.what());
    }
  };
  // In place: each row is in the file as soon as it is written, none held back until close().
  const std::string csv = (d / "rows.csv").string();
  ASSERT_TRUE(writeFileAtomic(csv, "an older and longer file\n"));
  {
    OutputFile out(csv);
    EXPECT_EQ(readFile(csv), "") << "not emptied when opened";
    out.write("a,b\n");
    EXPECT_EQ(readFile(csv), "a,b\n");
    out.write("1,2\n");
    EXPECT_EQ(readFile(csv), "a,b\n1,2\n");
    out.close();
    EXPECT_THROW(out.write("3,4\n"), std::runtime_error);
  }
  for (const auto& e : fs::directory_iterator(d)) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  // The run's own input, under its name, a link and a hard link: refused, and left as it was.
  const std::string tape = (d / "in.tape").string();
  ASSERT_TRUE(writeFileAtomic(tape, "the input\n"));
  fs::create_symlink(tape, d / "alias.tape");
  ASSERT_EQ(::link(tape.c_str(), (d / "hard.tape").c_str()), 0);
  EXPECT_EQ(opened(tape, {tape}), "refused: --out " + tape + ": is an input of this run; refusing to overwrite it");
  EXPECT_EQ(opened((d / "alias.tape").string(), {tape}),
            "refused: --out " + (d / "alias.tape").string() + " (-> " + tape + "): is " + tape +
                ", an input of this run; refusing to overwrite it");
  EXPECT_NE(opened((d / "hard.tape").string(), {"", csv, tape}).find("is " + tape + ", an input of this run"),
            std::string::npos);
  EXPECT_THROW(checkOutputFile(tape, {tape}), OutputRefused);
  EXPECT_EQ(readFile(tape), "the input\n");
  // checkOutputFile writes nothing, creates nothing.
  checkOutputFile((d / "later.csv").string(), {tape});
  EXPECT_FALSE(fs::exists(d / "later.csv"));
  // A directory, a socket and a block device are refused before anything is opened.
  EXPECT_EQ(opened(d.string(), {}), "refused: --out " + d.string() + ": a directory, not a file");
  const fs::path sock = d / "sock";
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.string().size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(opened(sock.string(), {}), "refused: --out " + sock.string() + ": a socket, not a file");
  ::close(s);
  std::string block;  // any block device here; never written (the refusal comes before the open)
  for (const auto& e : fs::directory_iterator("/dev"))
    if (e.is_block_file() && block.empty()) block = e.path().string();
  if (!block.empty()) EXPECT_EQ(opened(block, {}), "refused: --out " + block + ": a block device; refusing to write to it");
  else std::printf("(no block device in /dev: that refusal is not checked here)\n");
  // Through a link: the file it names is written, the link stays.
  ASSERT_TRUE(writeFileAtomic(d / "target.csv", "old"));
  fs::create_symlink(d / "target.csv", d / "link.csv");
  {
    OutputFile out((d / "link.csv").string());
    EXPECT_EQ(out.name(), (d / "link.csv").string() + " (-> " + (d / "target.csv").string() + ")");
    out.write("row\n");
    out.close();
  }
  EXPECT_TRUE(fs::is_symlink(d / "link.csv"));
  EXPECT_EQ(readFile(d / "target.csv"), "row\n");
  // A FIFO and a character device: written in place, still what they were.
  const fs::path fifo = d / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo);
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  {
    OutputFile out(fifo.string());
    out.write("one\n");
    out.write("two\n");
    out.close();
  }
  reader.join();
  EXPECT_EQ(got, "one\ntwo\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  {
    OutputFile out("/dev/null");
    out.write("gone\n");
    out.close();
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  // ENOSPC on a write, ENOENT at the open: each names the file and the reason.
  OutputFile full("/dev/full");
  try {
    full.write("row\n");
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "--out /dev/full: cannot write: No space left on device");
  }
  EXPECT_EQ(opened((d / "no-such-dir" / "x.csv").string(), {}),
            "failed: --out " + (d / "no-such-dir" / "x.csv").string() + ": cannot write: No such file or directory");
  fs::remove_all(d);
}
