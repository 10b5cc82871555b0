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
//   sparse   num_fields 26, exactly one entry per field and example
//            (sparse_offsets[i] = 26 * i), in field order: field f (C(f+1))
//            gets key CriteoKey(f, value) and weight 1. An empty value is
//            not dropped: it hashes like any string, to field f's "missing"
//            key. Any string is a value (a non-hex one too).
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

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

inline constexpr int kCriteoIntegerFeatures = 13;
inline constexpr int kCriteoCategoricalFields = 26;

// The key of value `value` of categorical field `field` (0-based: C1 is 0):
// FNV-1a 64 over the field index as one byte followed by the value's bytes,
// then splitmix64's finalizer (FNV alone leaves the low bits of short,
// similar strings correlated, and tables shard keys by their low bits).
// Field-aware: one string in two fields gives two keys. Any bit pattern, so
// negative as an int64_t too. The same on every platform and release: keys
// are stored in checkpoints.
int64_t CriteoKey(int field, std::string_view value);

StatusOr<Dataset> ReadCriteoDataset(const std::string& path);

}  // namespace pst

#endif  // PST_DATA_CRITEO_READER_H_
