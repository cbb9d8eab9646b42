#include "gpu/hip/codeobject.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace tapelab::hip {
namespace {

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error("code object: " + why); }

// A MessagePack value: the subset the AMDGPU metadata uses (maps, arrays,
// strings, integers, booleans) read completely; binary, extension and float
// values are skipped over.
struct Value {
  enum class Type { Nil, Bool, Int, Str, Array, Map, Other } type = Type::Nil;
  long long integer = 0;
  std::string text;
  std::vector<Value> items;                       // Array
  std::vector<std::pair<Value, Value>> entries;  // Map

  const Value* find(const char* key) const {
    for (const auto& [k, v] : entries)
      if (k.type == Type::Str && k.text == key) return &v;
    return nullptr;
  }
};

class MsgPackReader {
 public:
  MsgPackReader(const unsigned char* data, size_t size) : p_(data), end_(data + size) {}

  Value read(int depth = 0) {
    if (depth > 32) fail("metadata nested too deeply");
    const unsigned c = byte();
    Value v;
    if (c <= 0x7f) return integer(c);
    if (c >= 0xe0) return integer(static_cast<int8_t>(c));
    if ((c & 0xf0) == 0x80) return map(c & 0x0f, depth);
    if ((c & 0xf0) == 0x90) return array(c & 0x0f, depth);
    if ((c & 0xe0) == 0xa0) return string(c & 0x1f);
    switch (c) {
      case 0xc0: return v;
      case 0xc2: case 0xc3: v.type = Value::Type::Bool; v.integer = c == 0xc3; return v;
      case 0xc4: skip(be(1)); return other();
      case 0xc5: skip(be(2)); return other();
      case 0xc6: skip(be(4)); return other();
      case 0xc7: skip(be(1) + 1); return other();
      case 0xc8: skip(be(2) + 1); return other();
      case 0xc9: skip(be(4) + 1); return other();
      case 0xca: skip(4); return other();
      case 0xcb: skip(8); return other();
      case 0xcc: return integer(static_cast<long long>(be(1)));
      case 0xcd: return integer(static_cast<long long>(be(2)));
      case 0xce: return integer(static_cast<long long>(be(4)));
      case 0xcf: return integer(static_cast<long long>(be(8)));
      case 0xd0: return integer(static_cast<int8_t>(be(1)));
      case 0xd1: return integer(static_cast<int16_t>(be(2)));
      case 0xd2: return integer(static_cast<int32_t>(be(4)));
      case 0xd3: return integer(static_cast<long long>(be(8)));
      case 0xd4: skip(2); return other();
      case 0xd5: skip(3); return other();
      case 0xd6: skip(5); return other();
      case 0xd7: skip(9); return other();
      case 0xd8: skip(17); return other();
      case 0xd9: return string(be(1));
      case 0xda: return string(be(2));
      case 0xdb: return string(be(4));
      case 0xdc: return array(be(2), depth);
      case 0xdd: return array(be(4), depth);
      case 0xde: return map(be(2), depth);
      case 0xdf: return map(be(4), depth);
      default: fail("metadata holds an unknown MessagePack byte " + std::to_string(c));
    }
  }

 private:
  unsigned byte() {
    if (p_ == end_) fail("metadata ends early");
    return *p_++;
  }
  uint64_t be(int n) {
    uint64_t x = 0;
    for (int i = 0; i < n; ++i) x = x << 8 | byte();
    return x;
  }
  void skip(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - p_)) fail("metadata ends early");
    p_ += n;
  }
  static Value integer(long long x) {
    Value v;
    v.type = Value::Type::Int;
    v.integer = x;
    return v;
  }
  static Value other() {
    Value v;
    v.type = Value::Type::Other;
    return v;
  }
  Value string(uint64_t n) {
    const unsigned char* at = p_;
    skip(n);
    Value v;
    v.type = Value::Type::Str;
    v.text.assign(reinterpret_cast<const char*>(at), n);
    return v;
  }
  Value array(uint64_t n, int depth) {
    if (n > static_cast<uint64_t>(end_ - p_)) fail("metadata ends early");  // every item takes a byte
    Value v;
    v.type = Value::Type::Array;
    for (uint64_t i = 0; i < n; ++i) v.items.push_back(read(depth + 1));
    return v;
  }
  Value map(uint64_t n, int depth) {
    if (n > static_cast<uint64_t>(end_ - p_) / 2) fail("metadata ends early");
    Value v;
    v.type = Value::Type::Map;
    for (uint64_t i = 0; i < n; ++i) {
      Value key = read(depth + 1);
      v.entries.emplace_back(std::move(key), read(depth + 1));
    }
    return v;
  }

  const unsigned char* p_;
  const unsigned char* end_;
};

template <typename T>
T load(const std::string& bytes, uint64_t at) {
  if (at > bytes.size() || sizeof(T) > bytes.size() - at) fail("truncated ELF file");
  T x;
  std::memcpy(&x, bytes.data() + at, sizeof(T));
  return x;  // little-endian, checked in the ELF header
}

constexpr uint32_t kShtNote = 7;
constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr uint16_t kEmAmdgpu = 224;

// The descriptor of the note owned by "AMDGPU" of type NT_AMDGPU_METADATA.
std::string metadataNote(const std::string& bytes) {
  if (bytes.size() < 64 || bytes.compare(0, 4, "\x7f" "ELF") != 0) fail("not an ELF file");
  if (bytes[4] != 2 || bytes[5] != 1) fail("not a 64-bit little-endian ELF file");
  if (load<uint16_t>(bytes, 18) != kEmAmdgpu) fail("not an AMDGPU ELF file");
  const uint64_t shoff = load<uint64_t>(bytes, 0x28);
  const uint16_t shentsize = load<uint16_t>(bytes, 0x3a), shnum = load<uint16_t>(bytes, 0x3c);
  if (shentsize < 64) fail("bad section header size");
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t sh = shoff + uint64_t{i} * shentsize;
    if (load<uint32_t>(bytes, sh + 4) != kShtNote) continue;
    const uint64_t offset = load<uint64_t>(bytes, sh + 0x18), size = load<uint64_t>(bytes, sh + 0x20);
    if (offset > bytes.size() || size > bytes.size() - offset) fail("note section outside the file");
    for (uint64_t at = offset; at + 12 <= offset + size;) {
      const uint32_t namesz = load<uint32_t>(bytes, at), descsz = load<uint32_t>(bytes, at + 4),
                     type = load<uint32_t>(bytes, at + 8);
      const uint64_t name = at + 12, desc = name + ((uint64_t{namesz} + 3) & ~uint64_t{3});
      const uint64_t next = desc + ((uint64_t{descsz} + 3) & ~uint64_t{3});
      if (next > offset + size) fail("note runs past its section");
      if (type == kNtAmdgpuMetadata && namesz == 7 && bytes.compare(name, 7, std::string("AMDGPU\0", 7)) == 0)
        return bytes.substr(desc, descsz);
      at = next;
    }
  }
  fail("no AMDGPU metadata note (code object v2, or not a code object)");
}

int intField(const Value& kernel, const char* key) {
  const Value* v = kernel.find(key);
  return v && v->type == Value::Type::Int ? static_cast<int>(v->integer) : -1;
}

long long longField(const Value& kernel, const char* key) {
  const Value* v = kernel.find(key);
  return v && v->type == Value::Type::Int ? v->integer : -1;
}

}  // namespace

CodeObjectInfo readCodeObject(const std::string& bytes) {
  const std::string note = metadataNote(bytes);
  MsgPackReader reader(reinterpret_cast<const unsigned char*>(note.data()), note.size());
  const Value root = reader.read();
  if (root.type != Value::Type::Map) fail("metadata is not a map");
  CodeObjectInfo info;
  if (const Value* t = root.find("amdhsa.target"); t && t->type == Value::Type::Str) info.target = t->text;
  const Value* kernels = root.find("amdhsa.kernels");
  if (!kernels || kernels->type != Value::Type::Array) fail("metadata has no amdhsa.kernels");
  for (const Value& k : kernels->items) {
    if (k.type != Value::Type::Map) fail("an amdhsa.kernels entry is not a map");
    KernelResources r;
    if (const Value* n = k.find(".name"); n && n->type == Value::Type::Str) r.name = n->text;
    r.vgprs = intField(k, ".vgpr_count");
    r.agprs = intField(k, ".agpr_count");
    r.sgprs = intField(k, ".sgpr_count");
    r.vgprSpills = intField(k, ".vgpr_spill_count");
    r.sgprSpills = intField(k, ".sgpr_spill_count");
    r.scratchBytes = longField(k, ".private_segment_fixed_size");
    r.ldsBytes = longField(k, ".group_segment_fixed_size");
    r.wavefrontSize = intField(k, ".wavefront_size");
    r.maxWorkgroupSize = intField(k, ".max_flat_workgroup_size");
    if (const Value* d = k.find(".uses_dynamic_stack"); d && d->type == Value::Type::Bool) r.dynamicStack = d->integer;
    info.kernels.push_back(std::move(r));
  }
  return info;
}

std::string processorOf(const std::string& target) {
  std::string s = target;
  if (const size_t dashes = s.rfind("--"); dashes != std::string::npos) s = s.substr(dashes + 2);
  return s.substr(0, s.find(':'));
}

RegisterFile registerFile(const std::string& target, int wavefrontSize) {
  const std::string p = processorOf(target);
  if (wavefrontSize != 32 && wavefrontSize != 64)
    throw std::invalid_argument("wavefront size " + std::to_string(wavefrontSize) + " (expected 32 or 64)");
  const bool wave32 = wavefrontSize == 32;
  auto is = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return p == n; });
  };
  // GFX90A and GFX940: one file of 512 VGPRs and AGPRs per lane, wave64 only.
  if (is({"gfx90a", "gfx940", "gfx941", "gfx942"})) return {512, 8, 8, true};
  if (!wave32 && p.size() == 6 && (p.compare(0, 4, "gfx8") == 0 || p.compare(0, 4, "gfx9") == 0))
    return {256, 4, 10, true};
  // GFX10.1 (RDNA1): 1024 VGPRs per SIMD32 lane in wave32, 20 waves.
  if (is({"gfx1010", "gfx1011", "gfx1012", "gfx1013"})) return {wave32 ? 1024 : 512, wave32 ? 8 : 4, 20, false};
  // GFX10.3 (RDNA2) and GFX11 (RDNA3) without the larger file: granule 16, 16 waves.
  if (is({"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036", "gfx1102", "gfx1103"}))
    return {wave32 ? 1024 : 512, wave32 ? 16 : 8, 16, false};
  // gfx1100 and gfx1101 (Navi 31/32) have 1.5x the VGPRs (LLVM 16's FeatureGFX11FullVGPRs;
  // LLVM 15 still models them as 1024).
  if (is({"gfx1100", "gfx1101"})) return {wave32 ? 1536 : 768, wave32 ? 24 : 12, 16, false};
  throw std::invalid_argument("no register-file model for AMD target '" + target + "'");
}

int wavesPerSimd(const RegisterFile& file, int vgprs, int sgprs) {
  int waves = file.maxWavesPerSimd;
  if (vgprs > 0) {
    const int rounded = (vgprs + file.vgprGranule - 1) / file.vgprGranule * file.vgprGranule;
    waves = std::min(waves, std::max(1, file.vgprsPerSimd / rounded));
  }
  if (file.sgprsLimitWaves && sgprs > 0) waves = std::min(waves, sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7);
  return waves;
}

}  // namespace tapelab::hip
