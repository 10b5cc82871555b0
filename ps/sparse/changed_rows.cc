#include "ps/sparse/changed_rows.h"

#include <algorithm>

namespace pst {
namespace {

int64_t WordsFor(const EmbeddingTableConfig& config) {
  const int64_t shards = std::max(1, config.num_shards);
  const int64_t local_rows = (config.rows + shards - 1) / shards;
  return (local_rows + 63) / 64;
}

}  // namespace

ChangedRows::ChangedRows(const EmbeddingTableConfig& config)
    : num_shards_(std::max(1, config.num_shards)),
      shard_(config.shard),
      words_(WordsFor(config)),
      bits_(std::make_unique<std::atomic<uint64_t>[]>(words_)) {
  for (int64_t w = 0; w < words_; ++w) bits_[w].store(0, std::memory_order_relaxed);
}

void ChangedRows::Mark(const int64_t* ids, int64_t n) {
  if (!tracking_.load(std::memory_order_relaxed)) return;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t local = ids[i] / num_shards_;
    bits_[local / 64].fetch_or(uint64_t{1} << (local % 64), std::memory_order_relaxed);
  }
}

std::vector<int64_t> ChangedRows::Cut() {
  const bool first = !tracking_.exchange(true);
  std::vector<int64_t> ids;
  for (int64_t w = 0; w < words_; ++w) {
    uint64_t word = bits_[w].exchange(0, std::memory_order_relaxed);
    while (word != 0) {
      const int bit = __builtin_ctzll(word);
      word &= word - 1;
      ids.push_back((w * 64 + bit) * num_shards_ + shard_);
    }
  }
  if (first) ids.clear();  // marks from before tracking began are not a count
  return ids;
}

}  // namespace pst
