#include "data/feature_columns.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "common/parse_number.h"
#include "common/split.h"
#include "data/criteo_reader.h"
#include "data/libffm_reader.h"

namespace pst {
namespace {

// The physical table's rows must fit a row id with room to spare.
constexpr int64_t kMaxTableRows = int64_t{1} << 62;

std::vector<std::string> Tokens(const std::string& line) {
  std::vector<std::string> tokens;
  std::istringstream in(line.substr(0, line.find('#')));
  for (std::string t; in >> t;) tokens.push_back(t);
  return tokens;
}

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

// "I7" -> 7 when the prefix is `letter` and the rest a number in [1, max].
bool CriteoName(const std::string& text, char letter, int max, int* number) {
  if (text.size() < 2 || text[0] != letter) return false;
  return ParseNumber(std::string_view(text).substr(1), number) && *number >= 1 && *number <= max;
}

// Resolves `column.source` for data of `format`; an error message, or "".
std::string ResolveSource(const std::string& format, FeatureColumn* column) {
  const std::string& s = column->source;
  int n = 0;
  if (format == "criteo") {
    if (CriteoName(s, 'I', kCriteoIntegerFeatures, &n)) {
      column->dense_source = true;
      column->source_index = n - 1;
      return "";
    }
    if (CriteoName(s, 'C', kCriteoCategoricalFields, &n)) {
      column->source_index = n - 1;
      return "";
    }
    return "unknown source '" + s + "': criteo's are I1..I13 and C1..C26";
  }
  if (format == "libffm") {
    if (ParseNumber(s, &n) && n >= 0 && n <= kLibffmMaxField) {
      column->source_index = n;
      return "";
    }
    return "unknown source '" + s + "': libffm's are field indices in [0, " +
           std::to_string(kLibffmMaxField) + "]";
  }
  // libsvm: one field.
  if (s == "0") return "";
  return "unknown source '" + s + "': libsvm data has one field, 0";
}

bool ParseCombiner(const std::string& text, FieldCombiner* combiner) {
  if (text == "sum") {
    *combiner = FieldCombiner::kSum;
  } else if (text == "mean") {
    *combiner = FieldCombiner::kMean;
  } else if (text == "sqrtn") {
    *combiner = FieldCombiner::kSqrtN;
  } else {
    return false;
  }
  return true;
}

bool ParseKind(const std::string& text, FeatureKind* kind) {
  if (text == "categorical") {
    *kind = FeatureKind::kCategorical;
  } else if (text == "multi_hot") {
    *kind = FeatureKind::kMultiHot;
  } else if (text == "numeric") {
    *kind = FeatureKind::kNumeric;
  } else {
    return false;
  }
  return true;
}

// The options a kind takes, for messages.
std::string OptionsOf(const FeatureColumn& c) {
  const std::string embedded = "table=NAME, buckets=N, min_count=K, dim=D";
  switch (c.kind) {
    case FeatureKind::kCategorical: return embedded;
    case FeatureKind::kMultiHot:
      return embedded + ", combiner=sum|mean|sqrtn, max_length=N, weighted";
    case FeatureKind::kNumeric:
      return "log1p, bucketize=E1,E2,... (and with bucketize: " + embedded + ")";
  }
  return "";
}

// Parses one column line's options into `c`; an error message, or "".
std::string ParseOptions(const std::vector<std::string>& t, FeatureColumn* c) {
  bool log1p = false;
  std::vector<std::string> embedded_options;  // for a numeric column's check
  for (size_t i = 3; i < t.size(); ++i) {
    const std::string& option = t[i];
    const size_t eq = option.find('=');
    const std::string key = option.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
    const bool has_value = eq != std::string::npos;
    auto unknown = [&] {
      return "unknown option '" + option + "' for a " + FeatureKindName(c->kind) +
             " column; it takes " + OptionsOf(*c);
    };
    const bool multi_hot = c->kind == FeatureKind::kMultiHot;
    const bool numeric = c->kind == FeatureKind::kNumeric;
    if (key == "table" && has_value) {
      if (!ValidName(value)) return "bad table name '" + value + "'";
      c->table = value;
      embedded_options.push_back(option);
    } else if (key == "buckets" && has_value) {
      if (!ParseNumber(value, &c->buckets) || c->buckets < 0 || c->buckets > kMaxTableRows) {
        return "bad number in '" + option + "': buckets is a whole number >= 0 (0: dynamic)";
      }
      c->buckets_stated = true;
      embedded_options.push_back(option);
    } else if (key == "min_count" && has_value) {
      if (!ParseNumber(value, &c->min_count) || c->min_count < 1 || c->min_count > 65535) {
        return "bad number in '" + option + "': min_count is a whole number in [1, 65535]";
      }
      embedded_options.push_back(option);
    } else if (key == "dim" && has_value) {
      if (!ParseNumber(value, &c->dim) || c->dim < 1) {
        return "bad number in '" + option + "': dim is a whole number >= 1";
      }
      embedded_options.push_back(option);
    } else if (multi_hot && key == "combiner" && has_value) {
      if (!ParseCombiner(value, &c->combiner)) {
        return "bad combiner '" + value + "': sum, mean or sqrtn";
      }
    } else if (multi_hot && key == "max_length" && has_value) {
      if (!ParseNumber(value, &c->max_length) || c->max_length < 1) {
        return "bad max_length '" + value + "': a whole number >= 1";
      }
    } else if (multi_hot && option == "weighted") {
      c->weighted = true;
    } else if (numeric && option == "log1p") {
      log1p = true;
    } else if (numeric && key == "bucketize" && has_value) {
      c->edges.clear();
      for (const std::string& item : SplitCommas(value)) {
        double edge = 0;
        if (!ParseNumber(item, &edge) || !std::isfinite(edge)) {
          return "bad edges '" + value + "': '" + item + "' is not a finite number";
        }
        if (!c->edges.empty() && !(edge > c->edges.back())) {
          return "bad edges '" + value + "': they must be strictly increasing";
        }
        c->edges.push_back(edge);
      }
      if (c->edges.empty()) return "bad edges '" + value + "': give at least one";
    } else {
      return unknown();
    }
  }
  if (c->kind == FeatureKind::kNumeric) {
    if (log1p && !c->edges.empty()) return "give log1p or bucketize, not both";
    if (c->edges.empty() && !embedded_options.empty()) {
      return "'" + embedded_options[0] + "' is for embedded columns; a log1p numeric column is " +
             "a dense input";
    }
  }
  if (c->min_count > 0 && c->buckets > 0) {
    return "min_count is for dynamic tables (buckets absent or 0)";
  }
  return "";
}

// "SOURCE:LINE: column NAME: why", as InvalidArgument.
Status ColumnError(const std::string& source, const FeatureColumn& c, const std::string& why) {
  return InvalidArgument(source + ":" + std::to_string(c.line) + ": column " + c.name + ": " + why);
}

// Parses the column line `t` ('NAME KIND SOURCE [options]', line `number`)
// for data of `format`; `line_of` holds the lines of the columns before it.
StatusOr<FeatureColumn> ParseColumn(const std::vector<std::string>& t, int number,
                                    const std::string& source, const std::string& format,
                                    const std::map<std::string, int>& line_of) {
  FeatureColumn c;
  c.name = t[0];
  c.source = t[2];
  c.line = number;
  auto bad = [&](const std::string& why) { return ColumnError(source, c, why); };
  if (!ValidName(c.name)) return bad("a name is letters, digits, '_', '.' and '-'");
  if (const auto it = line_of.find(c.name); it != line_of.end()) {
    return bad("duplicate name (first on line " + std::to_string(it->second) + ")");
  }
  if (!ParseKind(t[1], &c.kind)) {
    return bad("unknown kind '" + t[1] + "': categorical, multi_hot or numeric");
  }
  if (const std::string why = ResolveSource(format, &c); !why.empty()) return bad(why);
  if (c.kind == FeatureKind::kNumeric && !c.dense_source) {
    return bad("a numeric column takes a dense source (criteo's I1..I13), not '" + c.source + "'");
  }
  if (c.kind != FeatureKind::kNumeric && c.dense_source) {
    return bad(std::string("a ") + FeatureKindName(c.kind) +
               " column takes a sparse source (criteo's C1..C26), not '" + c.source + "'");
  }
  c.table = c.name;
  if (const std::string why = ParseOptions(t, &c); !why.empty()) return bad(why);
  return c;
}

// Parses the lines of fc->text: its columns into fc->columns, in file
// order, and its `dim` line's D into *file_dim (left 0 without one).
Status ParseLines(FeatureColumns* fc, int64_t* file_dim) {
  int dim_line = 0;
  std::map<std::string, int> line_of;  // column name -> its line
  std::istringstream lines(fc->text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::vector<std::string> t = Tokens(line);
    if (t.empty()) continue;
    auto at = [&] { return fc->source + ":" + std::to_string(number) + ": "; };
    if (t[0] == "dim") {
      if (dim_line > 0) {
        return InvalidArgument(at() + "a second dim line (the first is line " +
                               std::to_string(dim_line) + ")");
      }
      if (t.size() != 2 || !ParseNumber(t[1], file_dim) || *file_dim < 1) {
        return InvalidArgument(at() + "bad number: expected 'dim D', D a whole number >= 1");
      }
      dim_line = number;
      continue;
    }
    if (t.size() < 3) {
      return InvalidArgument(at() + "expected 'NAME KIND SOURCE [options]' or 'dim D'");
    }
    PST_ASSIGN_OR_RETURN(FeatureColumn c, ParseColumn(t, number, fc->source, fc->format, line_of));
    line_of[c.name] = number;
    fc->columns.push_back(std::move(c));
  }
  return Status::OK();
}

// A column's embedding dim: its own, else the file's (0: the model's).
int64_t DimOf(const FeatureColumn& c, int64_t file_dim) { return c.dim > 0 ? c.dim : file_dim; }

// A dim for messages.
std::string DimText(int64_t dim) {
  return dim > 0 ? std::to_string(dim) : std::string("the model's");
}

// The embedded columns by table: the tables in the order of their first
// column, each one's columns in file order.
struct TableGroups {
  std::map<std::string, size_t> index;  // table name -> its place in `columns`
  std::vector<std::vector<const FeatureColumn*>> columns;
  bool one_dim = true;  // every embedded column has the dim of the first
};

// Groups fc's embedded columns by table. InvalidArgument when the columns
// of a table have different dims (they share its rows), or when there is
// no embedded column.
StatusOr<TableGroups> GroupByTable(const FeatureColumns& fc, int64_t file_dim) {
  TableGroups groups;
  const FeatureColumn* first = nullptr;
  for (const FeatureColumn& c : fc.columns) {
    if (!c.embedded()) continue;
    if (first == nullptr) first = &c;
    groups.one_dim = groups.one_dim && DimOf(c, file_dim) == DimOf(*first, file_dim);
    const auto [it, added] = groups.index.emplace(c.table, groups.columns.size());
    if (added) groups.columns.emplace_back();
    std::vector<const FeatureColumn*>& same_table = groups.columns[it->second];
    same_table.push_back(&c);
    const FeatureColumn& owner = *same_table[0];
    if (DimOf(c, file_dim) != DimOf(owner, file_dim)) {
      return ColumnError(fc.source, c,
                         "dim " + DimText(DimOf(c, file_dim)) + " differs from column " +
                             owner.name + "'s (line " + std::to_string(owner.line) +
                             "): " + DimText(DimOf(owner, file_dim)) + "; the columns of table '" +
                             c.table + "' share its rows, so they have one dim");
    }
  }
  if (first == nullptr) {
    return InvalidArgument(fc.source +
                           ": no categorical, multi_hot or bucketized column: a click model "
                           "needs at least one sparse field");
  }
  return groups;
}

// The first of a table's columns `cols` that states its buckets (nullptr:
// none does). InvalidArgument when they state different buckets, or only
// some of them state any.
StatusOr<const FeatureColumn*> StatedBuckets(const std::string& source,
                                             const std::vector<const FeatureColumn*>& cols) {
  const std::string& table = cols[0]->table;
  const FeatureColumn* stated = nullptr;
  for (const FeatureColumn* c : cols) {
    if (!c->buckets_stated) continue;
    if (stated == nullptr) {
      stated = c;
    } else if (c->buckets != stated->buckets) {
      return ColumnError(source, *c,
                         "table '" + table + "' has buckets=" + std::to_string(stated->buckets) +
                             " (column " + stated->name + ", line " + std::to_string(stated->line) +
                             "), not " + std::to_string(c->buckets));
    }
  }
  for (const FeatureColumn* c : cols) {
    if (stated != nullptr && !c->buckets_stated) {
      return ColumnError(source, *c,
                         "table '" + table + "' has buckets=" + std::to_string(stated->buckets) +
                             " (column " + stated->name + ", line " + std::to_string(stated->line) +
                             "): every column of a table states the same buckets");
    }
  }
  return stated;
}

// The rows of a table of bucketized columns `cols`: one per bucket of the
// column with the most.
int64_t IdentityRows(const std::vector<const FeatureColumn*>& cols) {
  int64_t rows = 0;
  for (const FeatureColumn* c : cols) rows = std::max<int64_t>(rows, c->edges.size() + 1);
  return rows;
}

// The error for a hashed table and a dynamic one in one file, named at the
// later of their columns.
Status MixedTablesError(const std::string& source, const FeatureColumn& hashed_column,
                        const FeatureColumn& dynamic_column) {
  const bool hashed_first = hashed_column.line < dynamic_column.line;
  const FeatureColumn& later = hashed_first ? dynamic_column : hashed_column;
  const FeatureColumn& earlier = hashed_first ? hashed_column : dynamic_column;
  return ColumnError(source, later,
                     std::string("table '") + later.table + "' is " +
                         (hashed_first ? "dynamic" : "hashed") + " but table '" + earlier.table +
                         "' (column " + earlier.name + ", line " + std::to_string(earlier.line) +
                         ") is " + (hashed_first ? "hashed" : "dynamic") +
                         ": the tables of a feature file are all hashed (buckets=N) or "
                         "all dynamic");
}

// Appends a table to fc->tables for each group, of its kind: hashed
// (buckets > 0), identity (bucketized columns only, no buckets stated; one
// row per bucket) or dynamic; *dynamic says whether they are dynamic.
// InvalidArgument when hashed and dynamic tables mix.
Status ClassifyTables(const TableGroups& groups, FeatureColumns* fc, bool* dynamic) {
  // The column that states the first hashed table's buckets, and the first
  // dynamic table's first column.
  const FeatureColumn* hashed_column = nullptr;
  const FeatureColumn* dynamic_column = nullptr;
  for (const std::vector<const FeatureColumn*>& cols : groups.columns) {
    PST_ASSIGN_OR_RETURN(const FeatureColumn* stated, StatedBuckets(fc->source, cols));
    FeatureTable table;
    table.name = cols[0]->table;
    const bool all_bucketized = std::all_of(
        cols.begin(), cols.end(), [](const FeatureColumn* c) { return !c->edges.empty(); });
    if (stated != nullptr && stated->buckets > 0) {
      table.rows = stated->buckets;
      if (hashed_column == nullptr) hashed_column = stated;
    } else if (stated == nullptr && all_bucketized) {
      table.identity = true;
      table.rows = IdentityRows(cols);
    } else if (dynamic_column == nullptr) {
      dynamic_column = cols[0];
    }
    fc->tables.push_back(table);
  }
  if (hashed_column != nullptr && dynamic_column != nullptr) {
    return MixedTablesError(fc->source, *hashed_column, *dynamic_column);
  }
  *dynamic = dynamic_column != nullptr;
  return Status::OK();
}

// Lays fc's hashed tables out one after the other in one key space and sets
// the summary's table_rows; dynamic tables have no rows (and no identity).
// InvalidArgument when the rows add up to more than kMaxTableRows.
Status LayOutKeySpace(const TableGroups& groups, bool dynamic, FeatureColumns* fc) {
  int64_t offset = 0;
  for (size_t i = 0; i < fc->tables.size(); ++i) {
    FeatureTable& table = fc->tables[i];
    if (dynamic) {
      table.identity = false;
      table.rows = 0;
      continue;
    }
    table.offset = offset;
    if (table.rows > kMaxTableRows - offset) {
      return ColumnError(fc->source, *groups.columns[i][0],
                         "the tables' buckets add up to more than 2^62 rows");
    }
    offset += table.rows;
  }
  fc->summary.table_rows = dynamic ? 0 : offset;
  return Status::OK();
}

// The min_count of the one physical table: the one the dynamic tables'
// columns state (0: none does). InvalidArgument for a min_count with
// hashed tables, or two different ones.
StatusOr<int64_t> CommonMinCount(const FeatureColumns& fc, bool dynamic) {
  const FeatureColumn* counted = nullptr;
  for (const FeatureColumn& c : fc.columns) {
    if (c.min_count == 0) continue;
    if (!dynamic) {
      return ColumnError(fc.source, c, "min_count is for dynamic tables; these tables are hashed");
    }
    if (counted == nullptr) {
      counted = &c;
    } else if (c.min_count != counted->min_count) {
      return ColumnError(fc.source, c,
                         "min_count=" + std::to_string(c.min_count) + " differs from column " +
                             counted->name + "'s (line " + std::to_string(counted->line) +
                             "): the dynamic tables of a feature file take one min_count");
    }
  }
  return counted ? counted->min_count : 0;
}

// The summary's dims and its lists of fields and dense features.
void SummarizeColumns(const TableGroups& groups, int64_t file_dim, bool dynamic,
                      FeatureColumns* fc) {
  FeatureSummary& summary = fc->summary;
  summary.embedding_dim = groups.one_dim ? DimOf(*groups.columns[0][0], file_dim) : 0;
  for (const FeatureColumn& c : fc->columns) {
    if (c.embedded()) {
      summary.field_names.push_back(c.name);
      summary.field_combiners.push_back(c.combiner);
      if (groups.one_dim) continue;
      const FeatureTable& table = fc->tables[groups.index.at(c.table)];
      summary.field_dims.push_back(DimOf(c, file_dim));
      if (!dynamic) summary.field_ranges.push_back({table.offset, table.rows});
    } else {
      summary.dense_names.push_back(c.name);
    }
  }
  summary.num_fields = static_cast<int>(summary.field_names.size());
  summary.dense_features = static_cast<int64_t>(summary.dense_names.size());
}

}  // namespace

const char* FeatureKindName(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kCategorical: return "categorical";
    case FeatureKind::kMultiHot: return "multi_hot";
    case FeatureKind::kNumeric: return "numeric";
  }
  return "?";
}

const char* FieldCombinerName(FieldCombiner combiner) {
  switch (combiner) {
    case FieldCombiner::kDefault: return "default";
    case FieldCombiner::kSum: return "sum";
    case FieldCombiner::kMean: return "mean";
    case FieldCombiner::kSqrtN: return "sqrtn";
  }
  return "?";
}

uint64_t TableKey(const std::string& table, int64_t raw) {
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64's offset basis
  for (const char c : table) h = (h ^ static_cast<uint8_t>(c)) * kPrime;
  h = (h ^ 0xffu) * kPrime;  // ends the name: ("a", r) and ("a\1", r') stay apart
  const uint64_t k = static_cast<uint64_t>(raw);
  for (int i = 0; i < 8; ++i) h = (h ^ ((k >> (8 * i)) & 0xff)) * kPrime;
  // splitmix64's finalizer: every input bit reaches every output bit.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

StatusOr<FeatureColumns> ParseFeatureColumns(const std::string& text, const std::string& source,
                                             const std::string& format) {
  if (format != "criteo" && format != "libffm" && format != "libsvm") {
    return InvalidArgument(source + ": feature columns take criteo, libffm or libsvm data, not " +
                           format);
  }
  FeatureColumns fc;
  fc.source = source;
  fc.text = text;
  fc.format = format;
  int64_t file_dim = 0;
  PST_RETURN_IF_ERROR(ParseLines(&fc, &file_dim));
  // The embedded columns: dims (one a table: its columns share rows),
  // tables, min_count.
  PST_ASSIGN_OR_RETURN(const TableGroups groups, GroupByTable(fc, file_dim));
  bool dynamic = false;
  PST_RETURN_IF_ERROR(ClassifyTables(groups, &fc, &dynamic));
  PST_RETURN_IF_ERROR(LayOutKeySpace(groups, dynamic, &fc));
  PST_ASSIGN_OR_RETURN(fc.summary.min_count, CommonMinCount(fc, dynamic));
  SummarizeColumns(groups, file_dim, dynamic, &fc);
  return fc;
}

StatusOr<FeatureColumns> ReadFeatureColumns(const std::string& path, const std::string& format) {
  std::ifstream in(path);
  if (!in) return InvalidArgument(path + ": cannot read the feature file");
  std::stringstream text;
  text << in.rdbuf();
  return ParseFeatureColumns(text.str(), path, format);
}

namespace {

// Where each column reads and writes: the log1p numerics (the dense
// features) and the embedded columns (the fields, with their tables), each
// in file order.
struct ColumnPlan {
  std::vector<const FeatureColumn*> dense, fields;
  std::vector<const FeatureTable*> field_table;  // per field
};

// fc's columns checked against `raw`: InvalidArgument when raw lacks a
// column's source.
StatusOr<ColumnPlan> PlanColumns(const FeatureColumns& fc, const Dataset& raw) {
  ColumnPlan plan;
  std::map<std::string, const FeatureTable*> tables;
  for (const FeatureTable& t : fc.tables) tables[t.name] = &t;
  for (const FeatureColumn& c : fc.columns) {
    if (c.dense_source && c.source_index >= raw.feature_dim) {
      return ColumnError(fc.source, c,
                         "source " + c.source + " is beyond the data's " +
                             std::to_string(raw.feature_dim) + " dense features");
    }
    if (!c.dense_source && fc.format != "libffm" && c.source_index >= raw.num_fields) {
      return ColumnError(fc.source, c,
                         "source " + c.source + " is beyond the data's " +
                             std::to_string(raw.num_fields) + " sparse fields");
    }
    if (c.embedded()) {
      plan.fields.push_back(&c);
      plan.field_table.push_back(tables.at(c.table));
    } else {
      plan.dense.push_back(&c);
    }
  }
  return plan;
}

// The key of raw key `raw_key` in `table` (see the top of the header).
int64_t KeyOf(const FeatureTable& table, int64_t raw_key) {
  if (table.rows == 0) return static_cast<int64_t>(TableKey(table.name, raw_key));
  if (table.identity) return table.offset + raw_key;
  return table.offset +
         static_cast<int64_t>(TableKey(table.name, raw_key) % static_cast<uint64_t>(table.rows));
}

// Appends example i of `raw` to *out as `plan` says: its dense features,
// then its fields' entries field by field. *by_field is scratch.
void AppendExample(const ColumnPlan& plan, const Dataset& raw, int64_t i,
                   std::vector<std::pair<int32_t, int64_t>>* by_field, Dataset* out) {
  const int64_t d = raw.feature_dim;
  for (const FeatureColumn* c : plan.dense) {
    out->features.push_back(raw.features[i * d + c->source_index]);
  }
  // Example i's sparse entries ordered by field (stable): (field, entry).
  by_field->clear();
  if (raw.num_fields > 0) {
    for (int64_t e = raw.sparse_offsets[i]; e < raw.sparse_offsets[i + 1]; ++e) {
      by_field->emplace_back(raw.sparse_fields[e], e);
    }
    std::sort(by_field->begin(), by_field->end());  // entries in order within a field
  }
  for (size_t f = 0; f < plan.fields.size(); ++f) {
    const FeatureColumn& c = *plan.fields[f];
    const FeatureTable& table = *plan.field_table[f];
    auto add = [&](int64_t raw_key, float weight) {
      out->sparse_keys.push_back(KeyOf(table, raw_key));
      out->sparse_fields.push_back(static_cast<int32_t>(f));
      out->sparse_values.push_back(weight);
    };
    if (c.dense_source) {  // bucketized: criteo's log1p(max(x, 0)) back to x
      const double x = std::nearbyint(std::expm1(double(raw.features[i * d + c.source_index])));
      add(std::upper_bound(c.edges.begin(), c.edges.end(), x) - c.edges.begin(), 1.0f);
      continue;
    }
    auto [begin, end] = std::equal_range(
        by_field->begin(), by_field->end(), std::make_pair(int32_t(c.source_index), int64_t{0}),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    int64_t taken = 0;
    const int64_t limit = c.kind == FeatureKind::kCategorical ? 1 : c.max_length;
    for (auto it = begin; it != end && (limit == 0 || taken < limit); ++it, ++taken) {
      const float weight = c.weighted ? raw.sparse_values[it->second] : 1.0f;
      add(raw.sparse_keys[it->second], weight);
    }
  }
  out->sparse_offsets.push_back(static_cast<int64_t>(out->sparse_keys.size()));
}

}  // namespace

StatusOr<Dataset> ApplyFeatureColumns(const FeatureColumns& fc, const Dataset& raw) {
  PST_ASSIGN_OR_RETURN(const ColumnPlan plan, PlanColumns(fc, raw));
  Dataset out;
  out.size = raw.size;
  out.num_classes = raw.num_classes;
  out.labels = raw.labels;
  out.feature_dim = static_cast<int64_t>(plan.dense.size());
  out.example_shape = InputShape(out.feature_dim);
  out.num_fields = static_cast<int>(plan.fields.size());
  out.features.reserve(raw.size * out.feature_dim);
  out.sparse_offsets.reserve(raw.size + 1);
  out.sparse_offsets.push_back(0);
  std::vector<std::pair<int32_t, int64_t>> by_field;  // AppendExample's scratch
  for (int64_t i = 0; i < raw.size; ++i) AppendExample(plan, raw, i, &by_field, &out);
  return out;
}

}  // namespace pst
