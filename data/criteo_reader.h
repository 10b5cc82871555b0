// Reader for click logs in the layout of Criteo's Display Advertising
// Challenge (Kaggle 2014; the 1 TB log has the same): one example per line,
// 40 tab-separated fields
//   label  I1 .. I13  C1 .. C26
// the label 0 or 1 (no click, click), 13 integer features (mostly counts)
// and 26 categorical features (8-hex-digit hashes in Criteo's files). Any
// feature may be empty. Files may be plain or gzip-compressed, told apart by
// their content (see data/text_lines.h). Lines that are empty are skipped.
//
// What the Dataset gets (num_classes 2, labels 0/1):
//   dense    feature_dim 13, example_shape {13}: feature j is log(1 + x)
//            of the integer x, where an empty field and a negative value
//            both count as x = 0 (so 0 after the transform);
//   sparse   exactly one entry per field and example, in field order,
//            weight 1: field f < 26 (C(f+1)) gets key CriteoKey(f, value).
//            An empty value is not dropped: it hashes like any string, to
//            field f's "missing" key. Any string is a value (a non-hex one
//            too). With CriteoOptions::integer_fields (the default) each
//            integer is a categorical field as well, 39 fields in all:
//            field 26 + j (I(j+1)) gets CriteoKey(26 + j,
//            CriteoIntegerBucket(...)); without it num_fields is 26. The
//            dense log(1 + x) is smooth; a bucket's own row lets a model
//            learn an effect that is not (a bump, a step, a crossing with a
//            categorical value): Criteo's usual recipe (the winners' FFM and
//            BARS' benchmarks bucketize the integers too).
//
// Errors: NotFound / PermissionDenied / DataLoss as data/text_lines.h says;
// InvalidArgument naming the file, the line and the field (its 1-based
// column and name: "column 3 (I2)") for a line without 40 fields, a label
// other than 0 or 1, an integer feature that is not a 64-bit integer, and
// for a file without examples. Holds no state; safe to call from any thread.
#ifndef PST_DATA_CRITEO_READER_H_
#define PST_DATA_CRITEO_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

inline constexpr int kCriteoIntegerFeatures = 13;
inline constexpr int kCriteoCategoricalFields = 26;
// With the integers as categorical fields too.
inline constexpr int kCriteoFieldsWithIntegers = kCriteoCategoricalFields + kCriteoIntegerFeatures;

struct CriteoOptions {
  bool integer_fields = true;  // the integers' buckets as fields 26..38
};

// The key of value `value` of categorical field `field` (0-based: C1 is 0):
// FNV-1a 64 over the field index as one byte followed by the value's bytes,
// then splitmix64's finalizer (FNV alone leaves the low bits of short,
// similar strings correlated, and tables shard keys by their low bits).
// Field-aware: one string in two fields gives two keys. Any bit pattern, so
// negative as an int64_t too. The same on every platform and release: keys
// are stored in checkpoints.
int64_t CriteoKey(int field, std::string_view value);

// The bucket of integer feature text `field` (already parsed to x) as a
// categorical value: "" when empty, "neg" for x < 0, else the decimal of
// floor(4 log(1 + x)): the counts 0 to 4 a bucket each, then four buckets
// per factor of e (5..6 one, 15..19 one, 1,096..1,407 one).
std::string CriteoIntegerBucket(std::string_view field, int64_t x);

StatusOr<Dataset> ReadCriteoDataset(const std::string& path, const CriteoOptions& options = {});

// The same from lines in memory, one example each (data/example_lines.h):
// errors name "line N" instead of the file's name and line.
StatusOr<Dataset> ParseCriteoLines(const std::vector<std::string>& lines,
                                   const CriteoOptions& options = {});

}  // namespace pst

#endif  // PST_DATA_CRITEO_READER_H_
