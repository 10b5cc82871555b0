// Feature columns (--features=FILE): what each input field of a click log
// is, and the transform that turns a reader's Dataset into the one the click
// model trains on. The file's format (docs/SPARSE.md, "Feature columns"):
//
//   # name   kind         source  options
//   dim 16                                    (optional: every field's dim)
//   C1       categorical  C1      buckets=100000 table=shared
//   I1       numeric      I1      log1p
//   I2b      numeric      I2      bucketize=0,1,2,5,10,100
//   genres   multi_hot    27      combiner=mean max_length=50 weighted
//
// one column a line, '#' to the end of a line a comment. Kinds:
//   categorical  the field's first entry (its key, weight 1);
//   multi_hot    the field's entries in the data's order, the first
//                max_length=N of them (all by default), weight 1, or the
//                entry's value with `weighted`; combiner=sum|mean|sqrtn says
//                how the model pools them (unset: the model's combiner);
//   numeric      a dense feature: `log1p` (the default; a dense input of the
//                deep part), or bucketize=E1,E2,...: a categorical entry
//                whose id is the bucket, the number of edges <= x (edges
//                finite, strictly increasing; len + 1 buckets).
// Sources: Criteo's I1..I13 (numeric) and C1..C26 (categorical, multi_hot)
// for criteo data; a field index >= 0 for libffm data; 0 for libsvm. A
// criteo I feature arrives as log(1 + max(x, 0)); bucketize buckets x as
// recovered by expm1 and rounded to the nearest integer (exact below about
// 2^20, where float32's log still tells integers apart).
// Options of the embedded columns (categorical, multi_hot, bucketized):
//   table=NAME   the embedding table (default: the column's own name).
//                Columns of one table with the same raw key share a row;
//                columns of different tables never do.
//   buckets=N    a hashed table of N rows (N >= 1); absent or 0: a dynamic
//                table (any key its own row). Columns of one table state
//                the same. A bucketized column's own table has len + 1 rows,
//                one per bucket, when the tables are hashed.
//   min_count=K  dynamic tables: a key gets a row once pulls saw it K times.
//   dim=D        the field's embedding dim (default: the `dim` line, else
//                the model's).
// What the click models take (the checks of ParseFeatureColumns): the
// columns of one table have one dim (they share its rows); the tables are
// all hashed or all dynamic; dynamic columns state one min_count. Fields of
// different dims go to different physical tables (model/ctr/ctr_model.h); fm
// and dlrm need one dim for every field (job/ refuses a file that breaks
// it, naming the column).
//
// The transform's keys: raw key r (the reader's key; a bucket's index for a
// bucketized column) in table T gives TableKey(T, r), a 64-bit hash of (T,
// r). Hashed tables are laid out one after the other in one key space, in
// the order of their first column: table T owns keys [offset_T, offset_T +
// buckets_T) and r's key is offset_T + TableKey(T, r) mod buckets_T (a
// bucketized column's own table: offset_T + the bucket), so table_rows is
// the sum of the buckets. With one dim the key space is the one deep
// table's rows; with several, each dim's physical table holds the ranges
// of its tables (FeatureSummary::field_ranges). Dynamic tables: the key is
// TableKey(T, r).
//
// Thread safety: values; every function is safe to call from any thread.
#ifndef PST_DATA_FEATURE_COLUMNS_H_
#define PST_DATA_FEATURE_COLUMNS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/variable_spec.h"
#include "data/dataset.h"

namespace pst {

enum class FeatureKind { kCategorical, kMultiHot, kNumeric };

// How a field's entries are pooled; kDefault: the model's choice.
enum class FieldCombiner { kDefault, kSum, kMean, kSqrtN };

struct FeatureColumn {
  std::string name;
  FeatureKind kind = FeatureKind::kCategorical;
  std::string source;  // as written: "C3", "I2", "27"
  // The source resolved: a dense feature (criteo I) or a sparse field.
  bool dense_source = false;
  int source_index = 0;  // 0-based feature or field index
  int line = 0;          // in the file, for errors
  // numeric: bucketize edges; empty: log1p (a dense feature).
  std::vector<double> edges;
  // Embedded columns (categorical, multi_hot, bucketized numeric):
  std::string table;            // default: name
  int64_t buckets = 0;          // 0: dynamic (or a bucketized column's own table)
  bool buckets_stated = false;  // buckets= was given
  int64_t min_count = 0;        // 0: unset
  int64_t dim = 0;              // 0: the file's `dim` line, else the model's
  FieldCombiner combiner = FieldCombiner::kDefault;
  int64_t max_length = 0;  // multi_hot: 0 keeps every entry
  bool weighted = false;   // multi_hot: the entries' values as weights

  bool embedded() const { return kind != FeatureKind::kNumeric || !edges.empty(); }
};

// A table: its name, its keys [offset, offset + rows) (hashed) or rows 0
// (dynamic), and whether it is a bucketized column's own table (keys are
// bucket indices, not hashed).
struct FeatureTable {
  std::string name;
  int64_t offset = 0;
  int64_t rows = 0;
  bool identity = false;
};

// What the click model's config is made from (job/: the model's
// num_fields, dense_features, table_rows, embedding_dim and combiners).
struct FeatureSummary {
  int64_t dense_features = 0;  // the log1p numerics, in file order
  int num_fields = 0;          // the embedded columns, in file order
  std::vector<std::string> dense_names;
  std::vector<std::string> field_names;
  std::vector<FieldCombiner> field_combiners;  // per field
  // Every field's dim when they have one (0: the model's default); 0 when
  // they differ, and then field_dims holds each field's (0: the model's).
  int64_t embedding_dim = 0;
  std::vector<int64_t> field_dims;
  // Hashed tables of several dims: each field's table's keys, per field.
  std::vector<KeyRange> field_ranges;
  int64_t table_rows = 0;  // the key space's size, the tables' buckets summed; 0: dynamic
  int64_t min_count = 0;   // dynamic: 0 unless stated
};

struct FeatureColumns {
  std::string source;                  // the file's name, for errors
  std::string text;                    // its text (a job's tasks compare it)
  std::string format;                  // the data format it was checked for
  std::vector<FeatureColumn> columns;  // in file order
  std::vector<FeatureTable> tables;    // in the order of their first column
  FeatureSummary summary;
};

// Parses `text` (read from `source`, which errors name) for data of
// `format` (criteo, libffm or libsvm). InvalidArgument naming the source,
// the line and the column for: an unknown kind, option or source, a source
// of the wrong kind, a duplicate name, a bad number, bad edges, a bad
// combiner, max_length < 1, options of another kind, tables that disagree,
// dims that differ, hashed and dynamic tables together; for a file without
// an embedded column; for a format other than those three.
StatusOr<FeatureColumns> ParseFeatureColumns(const std::string& text, const std::string& source,
                                             const std::string& format);

// Reads and parses the file `path`; InvalidArgument naming it when it
// cannot be read.
StatusOr<FeatureColumns> ReadFeatureColumns(const std::string& path, const std::string& format);

// The 64-bit key of raw key `raw` in table `table` (FNV-1a over the name's
// bytes and raw's 8 little-endian bytes, splitmix64's finalizer). Stable:
// keys are stored in checkpoints.
uint64_t TableKey(const std::string& table, int64_t raw);

// The Dataset the model trains on (see the top of this file): labels as
// `raw`'s; dense features the log1p numerics in file order; the embedded
// columns as fields 0.. in file order, each example's entries field by
// field. InvalidArgument (naming the source, line and column) when `raw`
// lacks a column's source (a dense feature beyond its features, a field of
// criteo data beyond its fields); a libffm field the data never reaches is
// an empty field.
StatusOr<Dataset> ApplyFeatureColumns(const FeatureColumns& columns, const Dataset& raw);

// "categorical", "sum", ... for messages.
const char* FeatureKindName(FeatureKind kind);
const char* FieldCombinerName(FieldCombiner combiner);

}  // namespace pst

#endif  // PST_DATA_FEATURE_COLUMNS_H_
