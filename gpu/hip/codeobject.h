// What an AMD code object says about its kernels, read from the object itself:
// the AMDGPU metadata note (NT_AMDGPU_METADATA, a MessagePack map with
// amdhsa.kernels, code object v3 and later) that the HIP runtime also reads.
// Nothing here needs ROCm: a code object is an ELF file.
#pragma once
#include <string>
#include <vector>

namespace tapelab::hip {

// One entry of amdhsa.kernels; -1 where the object does not say.
struct KernelResources {
  std::string name;               // .name
  int vgprs = -1;                 // .vgpr_count: VGPRs that count against occupancy (gfx90a: arch VGPRs + AGPRs)
  int agprs = -1;                 // .agpr_count (targets with accumulation registers)
  int sgprs = -1;                 // .sgpr_count, with VCC, flat scratch and XNACK
  int vgprSpills = -1;            // .vgpr_spill_count: VGPRs spilled to scratch
  int sgprSpills = -1;            // .sgpr_spill_count: SGPRs spilled (to VGPR lanes, or scratch)
  long long scratchBytes = -1;    // .private_segment_fixed_size: scratch bytes per lane (spills, stack)
  long long ldsBytes = -1;        // .group_segment_fixed_size: LDS bytes per workgroup
  int wavefrontSize = -1;         // .wavefront_size: 32 or 64
  int maxWorkgroupSize = -1;      // .max_flat_workgroup_size
  bool dynamicStack = false;      // .uses_dynamic_stack: scratch size not known at compile time
};

struct CodeObjectInfo {
  std::string target;  // amdhsa.target: "amdgcn-amd-amdhsa--gfx1103"
  std::vector<KernelResources> kernels;
};

// Reads the metadata note of an ELF code object. Throws std::runtime_error
// ("code object: ...") when `bytes` is not one or carries no metadata.
CodeObjectInfo readCodeObject(const std::string& bytes);

// The register file of one target, as the compiler models it (LLVM
// AMDGPUBaseInfo.cpp: getTotalNumVGPRs, getVGPRAllocGranule, getMaxWavesPerEU;
// GCNSubtarget::getOccupancyWithNumSGPRs for GFX8/9).
struct RegisterFile {
  int vgprsPerSimd = 0;   // per lane, at this wavefront size
  int vgprGranule = 0;    // VGPRs are allocated in blocks of this many
  int maxWavesPerSimd = 0;
  bool sgprsLimitWaves = false;  // GFX8/9: 800 SGPRs per SIMD; GFX10 and later: no SGPR limit
};

// The register file of `target` ("gfx1103", "gfx90a:xnack-") at `wavefrontSize`;
// throws std::invalid_argument for a target it does not know.
RegisterFile registerFile(const std::string& target, int wavefrontSize);

// Waves per SIMD that the register counts allow:
//   min(maxWaves, vgprsPerSimd / roundUp(vgprs, granule), sgprWaves(sgprs) on GFX8/9),
// sgprWaves = 10 up to 80 SGPRs, 9 to 88, 8 to 100, else 7. LDS and the
// workgroup size can lower it further; the compiler's own figure includes those.
int wavesPerSimd(const RegisterFile& file, int vgprs, int sgprs);

// "gfx1103" from "gfx1103:xnack-" or "amdgcn-amd-amdhsa--gfx1103".
std::string processorOf(const std::string& target);

}  // namespace tapelab::hip
