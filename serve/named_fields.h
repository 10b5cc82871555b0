// NamedFields: a click model's input fields by name, for serve's requests
// of format "fields" (docs/SERVING.md): each example a JSON object of
// field names and values instead of a line.
//
// The names are what the model was trained on:
//   criteo data, no --features   Criteo's columns I1..I13 (integers) and
//                                C1..C26 (strings);
//   with a --features file       the file's column names, each standing
//                                for its source field: a criteo I (an
//                                integer) or C (a string), or a libffm
//                                field (ids, each with a weight);
//   libffm or libsvm data without a feature file has no names.
// An example becomes the line of the training data's format (criteo, or
// libffm for libffm and libsvm data with a feature file, which give the
// same entries) that holds its values, label 0, a missing field empty; that
// line goes through the reader as any line does, so a named example gives
// the probability of its line to the bit. Columns of one source (I2 and a
// bucketized I2b) must agree when both are given.
//
// Thread safety: immutable once made; Line from any thread.
#ifndef PST_SERVE_NAMED_FIELDS_H_
#define PST_SERVE_NAMED_FIELDS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "job/model_file.h"

namespace pst {

// One entry of a libffm field: an id and its weight.
struct FieldEntry {
  int64_t id = 0;
  float weight = 1;
};

// A field's value as a request gives it (serve/predict_json.h parses it).
struct FieldValue {
  enum class Type { kNull, kInteger, kString, kEntries };
  Type type = Type::kNull;
  int64_t integer = 0;              // kInteger
  std::string text;                 // kString
  std::vector<FieldEntry> entries;  // kEntries: a list of ids, or of [id, weight]
};

// One example: its fields by name, each name once.
using NamedExample = std::map<std::string, FieldValue>;

class NamedFields {
 public:
  // The names of `trained`'s fields. FailedPrecondition saying why for a
  // model without names (libffm or libsvm data without a feature file);
  // InvalidArgument for a feature file that parses for no format.
  static StatusOr<NamedFields> Of(const TrainedModel& trained);

  // The format of the lines Line writes: "criteo" or "libffm".
  const std::string& format() const { return format_; }

  // Example `number` (from 1, for errors) as a line of format(). Errors
  // (InvalidArgument, "example 2: ..."): an unknown name (naming it and
  // the model's names), a value of the wrong type for its field (a string
  // for an integer field, ...), a string holding a tab or a line break,
  // two names of one source that disagree.
  StatusOr<std::string> Line(const NamedExample& example, int64_t number) const;

 private:
  // Where a name's value goes: a criteo column (a dense I or a C) or a
  // libffm field.
  struct Slot {
    bool dense = false;
    int index = 0;  // 0-based: I(index + 1), C(index + 1) or libffm field index
  };

  StatusOr<std::string> CriteoLine(const NamedExample& example, const std::string& at) const;
  StatusOr<std::string> LibffmLine(const NamedExample& example, const std::string& at) const;
  // The slot of `name`; InvalidArgument naming it and the model's names.
  StatusOr<Slot> Find(const std::string& name, const std::string& at) const;

  std::string format_;
  std::map<std::string, Slot> slots_;  // by name
  std::string names_;                  // the names, for errors
};

}  // namespace pst

#endif  // PST_SERVE_NAMED_FIELDS_H_
