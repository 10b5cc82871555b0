#include "serve/named_fields.h"

#include <cmath>
#include <cstdio>

#include "common/parse_number.h"
#include "data/criteo_reader.h"
#include "data/feature_columns.h"

namespace pst {
namespace {

constexpr int kCriteoColumns = kCriteoIntegerFeatures + kCriteoCategoricalFields;
constexpr size_t kNamesListed = 20;  // an error lists this many names, then counts the rest

// A value's text for an error message, cut short.
std::string Quote(const std::string& text) {
  constexpr size_t kMax = 40;
  return "'" + (text.size() <= kMax ? text : text.substr(0, kMax) + "...") + "'";
}

// A criteo integer column's text: an integer, a string holding one, or
// empty (null). `where` starts the error messages.
StatusOr<std::string> IntegerText(const FieldValue& value, const std::string& where) {
  switch (value.type) {
    case FieldValue::Type::kNull: return std::string();
    case FieldValue::Type::kInteger: return std::to_string(value.integer);
    case FieldValue::Type::kString: {
      int64_t x = 0;
      if (value.text.empty() || ParseNumber(value.text, &x)) return value.text;
      return InvalidArgument(where + Quote(value.text) + " is not a 64-bit integer");
    }
    case FieldValue::Type::kEntries: break;
  }
  return InvalidArgument(where + "a list; this field takes an integer");
}

// A criteo categorical column's text: a string without tabs and line
// breaks (they would split the line), an integer as its decimal, or empty.
StatusOr<std::string> CategoryText(const FieldValue& value, const std::string& where) {
  switch (value.type) {
    case FieldValue::Type::kNull: return std::string();
    case FieldValue::Type::kInteger: return std::to_string(value.integer);
    case FieldValue::Type::kString:
      if (value.text.find_first_of("\t\r\n") != std::string::npos) {
        return InvalidArgument(where + Quote(value.text) + " holds a tab or a line break");
      }
      return value.text;
    case FieldValue::Type::kEntries: break;
  }
  return InvalidArgument(where + "a list; this field takes a string");
}

// A libffm field's entries: an id (weight 1), or a list of them.
StatusOr<std::vector<FieldEntry>> Entries(const FieldValue& value, const std::string& where) {
  switch (value.type) {
    case FieldValue::Type::kNull: return std::vector<FieldEntry>();
    case FieldValue::Type::kInteger:
      if (value.integer < 0) {
        return InvalidArgument(where + std::to_string(value.integer) +
                               " is no id (an integer >= 0)");
      }
      return std::vector<FieldEntry>{{value.integer, 1.0f}};
    case FieldValue::Type::kEntries: return value.entries;
    case FieldValue::Type::kString: break;
  }
  return InvalidArgument(where +
                         "a string; this field takes an id (an integer >= 0), "
                         "or a list of ids or of [id, weight]");
}

// " field:id:weight" for each entry; the weight written so that the reader
// parses the same float back.
std::string LibffmText(int field, const std::vector<FieldEntry>& entries) {
  std::string text;
  for (const FieldEntry& e : entries) {
    char weight[32];
    std::snprintf(weight, sizeof weight, "%.9g", static_cast<double>(e.weight));
    text += " " + std::to_string(field) + ":" + std::to_string(e.id) + ":" + weight;
  }
  return text;
}

std::string Conflict(const std::string& at, const std::string& first, const std::string& second,
                     const std::string& source) {
  return at + "fields \"" + first + "\" and \"" + second + "\" both read " + source +
         " and give it different values";
}

}  // namespace

StatusOr<NamedFields> NamedFields::Of(const TrainedModel& trained) {
  NamedFields fields;
  if (trained.features_text.empty()) {
    if (!trained.click_model || trained.input.size() != kCriteoIntegerFeatures) {
      return FailedPrecondition(
          "the model was trained on libffm or libsvm lines without a feature file (--features): "
          "its fields have no names; send \"lines\"");
    }
    fields.format_ = "criteo";
    for (int j = 0; j < kCriteoIntegerFeatures; ++j)
      fields.slots_["I" + std::to_string(j + 1)] = {true, j};
    for (int f = 0; f < kCriteoCategoricalFields; ++f) {
      fields.slots_["C" + std::to_string(f + 1)] = {false, f};
    }
    fields.names_ = "Criteo's columns I1..I13 and C1..C26";
    return fields;
  }
  // The file's sources say the format: criteo's are I and C columns,
  // libffm's (and libsvm's, field 0) field indices.
  fields.format_ = "criteo";
  StatusOr<FeatureColumns> columns =
      ParseFeatureColumns(trained.features_text, "the model's feature file", "criteo");
  if (!columns.ok()) {
    fields.format_ = "libffm";
    columns = ParseFeatureColumns(trained.features_text, "the model's feature file", "libffm");
  }
  PST_RETURN_IF_ERROR(columns.status());
  fields.names_ = "the feature file's columns ";
  for (size_t i = 0; i < columns->columns.size(); ++i) {
    const FeatureColumn& c = columns->columns[i];
    fields.slots_[c.name] = {c.dense_source, c.source_index};
    if (i < kNamesListed) fields.names_ += (i == 0 ? "" : ", ") + c.name;
  }
  if (columns->columns.size() > kNamesListed) {
    fields.names_ += ", ... (" + std::to_string(columns->columns.size()) + " in all)";
  }
  return fields;
}

StatusOr<std::string> NamedFields::Line(const NamedExample& example, int64_t number) const {
  const std::string at = "example " + std::to_string(number) + ": ";
  return format_ == "criteo" ? CriteoLine(example, at) : LibffmLine(example, at);
}

StatusOr<NamedFields::Slot> NamedFields::Find(const std::string& name,
                                              const std::string& at) const {
  const auto it = slots_.find(name);
  if (it == slots_.end()) {
    return InvalidArgument(at + "unknown field \"" + name + "\": this model's fields are " +
                           names_);
  }
  return it->second;
}

StatusOr<std::string> NamedFields::CriteoLine(const NamedExample& example,
                                              const std::string& at) const {
  std::vector<std::string> columns(kCriteoColumns);  // I1..I13, C1..C26
  std::vector<const std::string*> named_by(kCriteoColumns, nullptr);
  for (const auto& [name, value] : example) {
    PST_ASSIGN_OR_RETURN(const Slot slot, Find(name, at));
    if (value.type == FieldValue::Type::kNull) continue;  // as if not given
    const std::string where = at + "field \"" + name + "\": ";
    PST_ASSIGN_OR_RETURN(std::string text,
                         slot.dense ? IntegerText(value, where) : CategoryText(value, where));
    const int column = slot.dense ? slot.index : kCriteoIntegerFeatures + slot.index;
    if (named_by[column] != nullptr && columns[column] != text) {
      return InvalidArgument(Conflict(at, *named_by[column], name,
                                      (slot.dense ? "I" : "C") + std::to_string(slot.index + 1)));
    }
    columns[column] = std::move(text);
    named_by[column] = &name;
  }
  std::string line = "0";
  for (const std::string& column : columns) line += "\t" + column;
  return line;
}

StatusOr<std::string> NamedFields::LibffmLine(const NamedExample& example,
                                              const std::string& at) const {
  std::map<int, std::pair<const std::string*, std::string>> fields;  // by index: name, text
  for (const auto& [name, value] : example) {
    PST_ASSIGN_OR_RETURN(const Slot slot, Find(name, at));
    if (value.type == FieldValue::Type::kNull) continue;
    PST_ASSIGN_OR_RETURN(const std::vector<FieldEntry> entries,
                         Entries(value, at + "field \"" + name + "\": "));
    std::string text = LibffmText(slot.index, entries);
    const auto [kept, inserted] = fields.emplace(slot.index, std::make_pair(&name, text));
    if (!inserted && kept->second.second != text) {
      return InvalidArgument(
          Conflict(at, *kept->second.first, name, "libffm field " + std::to_string(slot.index)));
    }
  }
  std::string line = "0";
  for (const auto& [index, named] : fields) line += named.second;
  return line;
}

}  // namespace pst
