// EmbeddingTable::Create (config checks, then a fixed or a dynamic table),
// InitialRow, and the checks both kinds share.
#include "ps/sparse/embedding_table.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ps/sparse/disk_embedding_table.h"
#include "ps/sparse/dynamic_embedding_table.h"
#include "ps/sparse/embedding_table_internal.h"
#include "ps/sparse/fixed_embedding_table.h"

namespace pst {
namespace {

using sparse_internal::TableMessage;

template <typename T>
Status OutOfRange(const EmbeddingTableConfig& config, const char* field, const char* requirement,
                  T value) {
  std::ostringstream what;
  what << "EmbeddingTableConfig." << field << " must be " << requirement << ", got " << value;
  return InvalidArgument(TableMessage(config, what.str()));
}

Status CheckConfig(const EmbeddingTableConfig& config) {
  if (config.name.empty()) return InvalidArgument("table '': EmbeddingTableConfig.name is empty");
  // Bounds that keep every size below in int64 (and a dynamic table's slot
  // numbers in int32).
  constexpr int64_t kMaxDim = int64_t{1} << 20;
  constexpr int64_t kMaxRows = int64_t{1} << 40;
  if (config.dim <= 0 || config.dim > kMaxDim) {
    return OutOfRange(config, "dim", "in [1, 2^20]", config.dim);
  }
  if (config.num_shards < 1) return OutOfRange(config, "num_shards", ">= 1", config.num_shards);
  if (config.shard < 0 || config.shard >= config.num_shards) {
    return OutOfRange(config, "shard", "in [0, num_shards)", config.shard);
  }
  if (!std::isfinite(config.init_scale) || config.init_scale < 0) {
    return OutOfRange(config, "init_scale", "finite and >= 0", config.init_scale);
  }
  if (!std::isfinite(config.l2) || config.l2 < 0) {
    return OutOfRange(config, "l2", "finite and >= 0", config.l2);
  }
  if (config.rows < 0 || config.rows > kMaxRows) {
    return OutOfRange(config, "rows", "in [0, 2^40] (0: dynamic)", config.rows);
  }
  if (config.rows > 0) {
    if (!config.storage_dir.empty()) {
      return InvalidArgument(
          TableMessage(config,
                       "a fixed table (rows > 0) cannot be stored on disk: only dynamic "
                       "tables can (capacity > 0, rows 0)"));
    }
    return Status::OK();  // fixed: capacity, min_count and cache_rows unused
  }
  if (!config.storage_dir.empty() && config.cache_rows <= 0) {
    return OutOfRange(config, "cache_rows", ">= 1 for a table on disk", config.cache_rows);
  }
  if (config.capacity <= 0 || config.capacity > DynamicEmbeddingTable::kMaxCapacity) {
    return OutOfRange(config, "capacity", "in [1, 2^30] for a dynamic table (rows 0)",
                      config.capacity);
  }
  if (config.min_count < 1 || config.min_count > DynamicEmbeddingTable::kMaxMinCount) {
    return OutOfRange(config, "min_count", "in [1, 65535]", config.min_count);
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<EmbeddingTable>> EmbeddingTable::Create(const EmbeddingTableConfig& config,
                                                                 const Optimizer& optimizer) {
  PST_RETURN_IF_ERROR(CheckConfig(config));
  if (config.rows > 0) {
    return std::unique_ptr<EmbeddingTable>(
        std::make_unique<FixedEmbeddingTable>(config, optimizer));
  }
  if (!config.storage_dir.empty()) {
    PST_ASSIGN_OR_RETURN(std::unique_ptr<DiskEmbeddingTable> table,
                         DiskEmbeddingTable::Open(config, optimizer));
    return std::unique_ptr<EmbeddingTable>(std::move(table));
  }
  return std::unique_ptr<EmbeddingTable>(
      std::make_unique<DynamicEmbeddingTable>(config, optimizer));
}

StatusOr<int64_t> EmbeddingTable::ListRows(int64_t /*cursor*/, int64_t /*max_rows*/,
                                           std::vector<int64_t>* /*ids*/,
                                           std::vector<float>* /*values*/) {
  return FailedPrecondition(
      sparse_internal::TableMessage(config_, "a fixed table's rows are pulled by id, not listed"));
}

StatusOr<DynamicCut> EmbeddingTable::CutChanged(bool /*with_values*/) {
  return FailedPrecondition(
      sparse_internal::TableMessage(config_, "a fixed table's changes are tracked by ChangedRows"));
}

namespace sparse_internal {

std::string TableMessage(const EmbeddingTableConfig& config, const std::string& what) {
  return "table '" + config.name + "': " + what;
}

std::string IdProblem(const EmbeddingTableConfig& config, int64_t id) {
  if (config.rows > 0 && (id < 0 || id >= config.rows)) {
    return "id " + std::to_string(id) + " is out of range [0, " + std::to_string(config.rows) + ")";
  }
  const int shard = ShardOf(id, config.num_shards);
  if (shard != config.shard) {
    return "id " + std::to_string(id) + " belongs to shard " + std::to_string(shard) +
           ", not this shard " + std::to_string(config.shard);
  }
  return "";
}

Status CheckIds(const EmbeddingTableConfig& config, const int64_t* ids, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids[i];
    // The common case without building a message: every id of a pull or push.
    if ((config.rows == 0 || (id >= 0 && id < config.rows)) &&
        ShardOf(id, config.num_shards) == config.shard) {
      continue;
    }
    return InvalidArgument(TableMessage(config, IdProblem(config, id)));
  }
  return Status::OK();
}

Status CheckImport(const EmbeddingTableConfig& config, int64_t slot_floats,
                   const EmbeddingRows& rows) {
  const uint64_t n = rows.ids.size();
  auto refuse = [&](const std::string& what) {
    return DataLoss(TableMessage(config, "cannot import rows: " + what));
  };
  if (rows.values.size() != n * config.dim) {
    return refuse(std::to_string(rows.values.size()) + " values for " + std::to_string(n) +
                  " rows of dim " + std::to_string(config.dim));
  }
  if (rows.slots.size() != n * slot_floats) {
    return refuse(std::to_string(rows.slots.size()) + " slot floats for " + std::to_string(n) +
                  " rows of " + std::to_string(slot_floats) + " (optimizer slots x dim)");
  }
  if (rows.versions.size() != n) {
    return refuse(std::to_string(rows.versions.size()) + " versions for " + std::to_string(n) +
                  " rows");
  }
  if (rows.applies < 0) return refuse("applies " + std::to_string(rows.applies) + " < 0");
  for (uint64_t i = 0; i < n; ++i) {
    if (rows.versions[i] < 0) {
      return refuse("id " + std::to_string(rows.ids[i]) + " has version " +
                    std::to_string(rows.versions[i]) + " < 0");
    }
    std::string problem = IdProblem(config, rows.ids[i]);
    if (!problem.empty()) return refuse(problem);
  }
  std::vector<int64_t> sorted = rows.ids;
  std::sort(sorted.begin(), sorted.end());
  auto repeated = std::adjacent_find(sorted.begin(), sorted.end());
  if (repeated != sorted.end()) return refuse("id " + std::to_string(*repeated) + " repeats");
  return Status::OK();
}

}  // namespace sparse_internal
}  // namespace pst
