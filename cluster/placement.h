// Placement: which ps shard holds which variable (or slice of a variable).
//
// Computed identically by every process from the variable list (in creation
// order) and the flags; Hash() lets the chief check that all tasks agree.
// Round-robin (the default, like TF's replica_device_setter) gives the i-th
// unit to shard i % P; greedy gives each unit to the shard with the fewest
// bytes so far. A variable larger than partition_bytes is split along its
// first dimension into slices named "<name>/part_<k>", each placed like a
// variable; clients reassemble them with SplitRows/CopyRowsInto.
#ifndef PST_CLUSTER_PLACEMENT_H_
#define PST_CLUSTER_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/variable_spec.h"

namespace pst {

// The int64 scalar counting applied updates; always the first variable.
inline constexpr char kGlobalStepName[] = "global_step";

// Prepends the global step to a model's variables.
std::vector<VariableSpec> WithGlobalStep(std::vector<VariableSpec> model_variables);

enum class PlacementStrategy { kRoundRobin, kGreedy };
StatusOr<PlacementStrategy> ParsePlacementStrategy(const std::string& name);

struct PlacementOptions {
  int num_shards = 1;
  PlacementStrategy strategy = PlacementStrategy::kRoundRobin;
  int64_t partition_bytes = 0;  // 0: never partition
};

// One unit of placement: a whole variable or rows [row_begin, row_end) of it.
struct Slice {
  std::string name;  // name on the ps
  int variable = 0;  // index into the variable list
  int64_t row_begin = 0;
  int64_t row_end = 0;
  Shape shape;  // the slice's own shape
  DType dtype = DType::kFloat32;
  int shard = 0;
  size_t num_bytes() const { return NumElements(shape) * DTypeSize(dtype); }
};

class Placement {
 public:
  // `tables` (embedding tables) are not placed: every shard holds the rows
  // whose id mod num_shards is its index; they count in Hash and Describe.
  static StatusOr<Placement> Compute(const std::vector<VariableSpec>& variables,
                                     const PlacementOptions& options,
                                     std::vector<EmbeddingTableSpec> tables = {});

  const std::vector<VariableSpec>& variables() const { return variables_; }
  const std::vector<Slice>& slices() const { return slices_; }
  const std::vector<EmbeddingTableSpec>& tables() const { return tables_; }
  int num_shards() const { return num_shards_; }
  // The same variables and tables, placed by the same options over
  // `num_shards` shards (the placement a checkpoint of another ps count was
  // written under).
  StatusOr<Placement> WithShards(int num_shards) const;
  // Indexes into slices() of the slices of one variable, in row order.
  const std::vector<int>& SlicesOfVariable(int variable) const { return by_variable_[variable]; }
  // Indexes into slices() of the slices on one shard.
  std::vector<int> SlicesOnShard(int shard) const;
  int64_t ShardBytes(int shard) const;
  // Stable across processes and builds (FNV-1a over the table).
  uint64_t Hash() const;
  // One line per slice: "dense0/weights -> ps:1 [784,256] 802816 B".
  std::string Describe() const;

 private:
  std::vector<VariableSpec> variables_;
  std::vector<Slice> slices_;
  std::vector<EmbeddingTableSpec> tables_;
  std::vector<std::vector<int>> by_variable_;
  PlacementOptions options_;
  int num_shards_ = 0;
};

// Rows [slice.row_begin, slice.row_end) of a full variable value, copied.
Tensor ExtractRows(const Slice& slice, const Tensor& full);
// Copies `slice_data` (the slice's bytes) into its rows of `full`.
void CopyRowsInto(const Slice& slice, const void* slice_data, Tensor* full);

}  // namespace pst

#endif  // PST_CLUSTER_PLACEMENT_H_
