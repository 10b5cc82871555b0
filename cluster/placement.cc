#include "cluster/placement.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace pst {
namespace {

uint64_t Fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

// Bytes of one row of dimension 0 (the whole value for a scalar).
size_t RowBytes(const Shape& shape, DType dtype) {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n * DTypeSize(dtype);
}

}  // namespace

std::vector<VariableSpec> WithGlobalStep(std::vector<VariableSpec> model_variables) {
  VariableSpec step;
  step.name = kGlobalStepName;
  step.dtype = DType::kInt64;
  step.shape = {};
  model_variables.insert(model_variables.begin(), step);
  return model_variables;
}

StatusOr<PlacementStrategy> ParsePlacementStrategy(const std::string& name) {
  if (name == "round_robin") return PlacementStrategy::kRoundRobin;
  if (name == "greedy") return PlacementStrategy::kGreedy;
  return InvalidArgument("placement '" + name + "' is not one of: round_robin, greedy");
}

StatusOr<Placement> Placement::Compute(const std::vector<VariableSpec>& variables,
                                       const PlacementOptions& options,
                                       std::vector<EmbeddingTableSpec> tables) {
  if (options.num_shards < 1) {
    return InvalidArgument("placement needs at least one ps shard");
  }
  if (options.partition_bytes < 0) {
    return InvalidArgument("the partition size must be >= 0 bytes");
  }
  for (const EmbeddingTableSpec& t : tables) {
    if (t.dim < 1 || t.rows < 0) {
      return InvalidArgument("embedding table '" + t.name + "' needs dim >= 1 and rows >= 0");
    }
  }
  Placement p;
  p.variables_ = variables;
  p.tables_ = std::move(tables);
  p.num_shards_ = options.num_shards;
  p.options_ = options;
  p.by_variable_.resize(variables.size());
  std::vector<int64_t> load(options.num_shards, 0);
  for (size_t v = 0; v < variables.size(); ++v) {
    const VariableSpec& spec = variables[v];
    const int64_t rows = spec.shape.empty() ? 1 : spec.shape[0];
    const int64_t bytes = NumElements(spec.shape) * DTypeSize(spec.dtype);
    int64_t parts = 1;
    if (options.partition_bytes > 0 && !spec.shape.empty() && bytes > options.partition_bytes) {
      parts = std::min(rows, (bytes + options.partition_bytes - 1) / options.partition_bytes);
    }
    // Rows split evenly; the first (rows % parts) slices get one extra row.
    int64_t begin = 0;
    for (int64_t k = 0; k < parts; ++k) {
      const int64_t n = rows / parts + (k < rows % parts ? 1 : 0);
      Slice s;
      s.name = parts == 1 ? spec.name : spec.name + "/part_" + std::to_string(k);
      s.variable = static_cast<int>(v);
      s.row_begin = begin;
      s.row_end = begin + n;
      s.shape = spec.shape;
      if (!s.shape.empty()) s.shape[0] = n;
      s.dtype = spec.dtype;
      if (options.strategy == PlacementStrategy::kRoundRobin) {
        s.shard = static_cast<int>(p.slices_.size() % options.num_shards);
      } else {
        s.shard = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      }
      load[s.shard] += s.num_bytes();
      p.by_variable_[v].push_back(static_cast<int>(p.slices_.size()));
      p.slices_.push_back(std::move(s));
      begin += n;
    }
  }
  return p;
}

StatusOr<Placement> Placement::WithShards(int num_shards) const {
  PlacementOptions options = options_;
  options.num_shards = num_shards;
  return Compute(variables_, options, tables_);
}

std::vector<int> Placement::SlicesOnShard(int shard) const {
  std::vector<int> out;
  for (size_t i = 0; i < slices_.size(); ++i) {
    if (slices_[i].shard == shard) out.push_back(static_cast<int>(i));
  }
  return out;
}

int64_t Placement::ShardBytes(int shard) const {
  int64_t bytes = 0;
  for (const Slice& s : slices_) {
    if (s.shard == shard) bytes += s.num_bytes();
  }
  return bytes;
}

uint64_t Placement::Hash() const {
  uint64_t h = 14695981039346656037ull;
  for (const Slice& s : slices_) {
    h = Fnv1a(h, s.name.data(), s.name.size() + 1);
    for (int64_t d : s.shape) h = Fnv1a(h, &d, sizeof(d));
    const int64_t fields[] = {s.row_begin, s.row_end, s.shard, static_cast<int64_t>(s.dtype)};
    h = Fnv1a(h, fields, sizeof(fields));
  }
  for (const EmbeddingTableSpec& t : tables_) {
    h = Fnv1a(h, t.name.data(), t.name.size() + 1);
    const int64_t fields[] = {t.dim, t.rows};
    h = Fnv1a(h, fields, sizeof(fields));
  }
  return h;
}

std::string Placement::Describe() const {
  std::ostringstream out;
  for (const Slice& s : slices_) {
    out << "  " << s.name << " -> ps:" << s.shard << " " << ShapeToString(s.shape) << " "
        << s.num_bytes() << " B\n";
  }
  for (int k = 0; k < num_shards_; ++k) {
    out << "  ps:" << k << " holds " << ShardBytes(k) << " B\n";
  }
  for (const EmbeddingTableSpec& t : tables_) {
    out << "  " << t.name << " -> every ps, row id mod " << num_shards_ << " ["
        << (t.rows > 0 ? std::to_string(t.rows) : std::string("dynamic")) << " x " << t.dim << "]";
    if (t.rows > 0) {
      out << ", rows per ps:";
      for (int k = 0; k < num_shards_; ++k) {
        out << " " << (t.rows - k + num_shards_ - 1) / num_shards_;
      }
    }
    out << "\n";
  }
  return out.str();
}

Tensor ExtractRows(const Slice& slice, const Tensor& full) {
  Tensor out(slice.dtype, slice.shape);
  const size_t row = RowBytes(full.shape(), full.dtype());
  std::memcpy(out.data(), static_cast<const uint8_t*>(full.data()) + slice.row_begin * row,
              out.num_bytes());
  return out;
}

void CopyRowsInto(const Slice& slice, const void* slice_data, Tensor* full) {
  const size_t row = RowBytes(full->shape(), full->dtype());
  std::memcpy(static_cast<uint8_t*>(full->data()) + slice.row_begin * row, slice_data,
              slice.num_bytes());
}

}  // namespace pst
