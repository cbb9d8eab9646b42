// What every GPU runtime needs around compiling a kernel: the generated source dumped (or kept for an error
// message), a compiler log cut to one line, and the kernel of an engine that
// can compile here but not run.
#pragma once
#include <string>

#include "engine/engine.h"
#include "gpu/codegen/emit.h"

namespace tapelab {

// Writes `source` to DIR/tapelab-<stem>-<hash>.<ext> (creating DIR) and
// returns the path; "" when dir is "". Written as every --out (util/files.h
// writeOutputFile): std::runtime_error "--dump FILE: cannot write: why", or
// OutputRefused for a directory in the file's place.
std::string dumpSource(const std::string& dir, const std::string& stem, const std::string& ext,
                       const std::string& source);

// dumpSource of a generated kernel's `source` (its text as compiled: the emitted source, perhaps with a
// runtime's additions), and beside it, as <path>.passes.txt, what each of the compiler's passes decided
// (emit.h passesText). Returns the source's path; "" when dir is "".
std::string dumpKernel(const std::string& dir, const std::string& stem, const std::string& ext, const EmittedKernel& kernel,
                       const std::string& source);

// A file holding `source` for an error message: `dumped` (the --dump copy) when
// there is one, else a copy written now to $TMPDIR/tapelab-failed/, else a hint to
// set TAPELAB_DUMP. Never throws: it runs while another error is being reported.
std::string sourceForError(const std::string& dumped, const std::string& stem, const std::string& ext,
                           const std::string& source) noexcept;

// A per-value plan (planner/plan.h) is a register plan: on the scratch kind it throws EngineUnavailable
// "ENGINE: a per-value plan (strategy X) runs as a register kernel, ..." (the CLI exits 3).
void refusePerValuePlan(const KernelOptions& options, const std::string& engine);

// A compiler log in one line: its first `lines` non-empty lines, trimmed, joined
// by " | ", and " | ..." when there are more.
std::string logHead(const std::string& log, int lines);

// The kernel of an engine that compiles here but cannot run (cuda without a
// driver, hip): its statistics are real; run() throws EngineUnavailable(why).
class CompileOnlyKernel final : public Kernel {
 public:
  CompileOnlyKernel(KernelStats stats, std::string why) : stats_(std::move(stats)), why_(std::move(why)) {}
  RunResult run(const std::vector<std::vector<double>>&, uint64_t, uint64_t) override { throw EngineUnavailable(why_); }
  KernelStats stats() const override { return stats_; }

 private:
  KernelStats stats_;
  std::string why_;
};

}  // namespace tapelab
