#include "model/ctr/initial_row.h"

#include "common/mix64.h"

namespace pst {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;  // splitmix64's increment

// FNV-1a, 64 bits: the table's name as a word of the row hash.
uint64_t HashName(const std::string& name) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

}  // namespace

void InitialRow(uint64_t seed, const std::string& name, int64_t key, float init_scale, int64_t dim,
                float* row) {
  // One 64-bit word per (seed, name, key), then splitmix64's sequence from
  // it, one output per column. Integer arithmetic only: no std::
  // distribution, whose output differs between standard libraries.
  const uint64_t base =
      Mix64(Mix64(Mix64(seed + kGolden) ^ HashName(name)) ^ static_cast<uint64_t>(key));
  for (int64_t c = 0; c < dim; ++c) {
    const uint64_t h = Mix64(base + static_cast<uint64_t>(c + 1) * kGolden);
    // The top 24 bits as k * 2^-23 - 1: exact in float, uniform in [-1, 1).
    const float unit = static_cast<float>(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
    row[c] = unit * init_scale;
  }
}

}  // namespace pst
