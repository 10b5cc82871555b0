// Reader for binary-labelled field-aware sparse examples in libffm format
// (the format of libffm and of the FFM/FwFM papers' Criteo and Avazu files):
// one example per line,
//   label field:id:value field:id:value ...
// separated by spaces or tabs; the label 0 or 1, or -1 or +1 (-1 becomes 0;
// "1.0" and the like are read as numbers), as the libsvm reader takes it;
// the field an integer in [0, kLibffmMaxField], the id an integer >= 0 and the
// value a finite number. One field may appear several times on a line (a
// multi-hot field: genres, recent items), in any order. A '#' starts a
// comment that runs to the end of the line; lines that are empty (or only a
// comment) are skipped. Files may be plain or gzip-compressed, told apart by
// their content (see data/text_lines.h).
//
// What the Dataset gets: num_classes 2, labels 0/1; no dense features
// (feature_dim 0, example_shape {0}); num_fields = 1 + the largest field
// index of the file (a field that never appears is an empty field of every
// example); each triple is one sparse entry of its field, key =
// LibffmKey(field, id), weight = value, in the line's order. A line with a
// label alone is an example without entries. With `field_aware_keys` false
// the key is the id itself (--features: the feature file's tables make keys
// field-aware, or share them between fields, data/feature_columns.h). Two files of one job
// (training and test) may reach different largest fields: data/data_source.cc gives both the larger
// num_fields.
//
// Errors: NotFound / PermissionDenied / DataLoss as data/text_lines.h says;
// InvalidArgument naming the file and line for a label that is not 0, 1, -1
// or +1, and naming the file, line and token (1-based, the label being token
// 1) for a token that is not field:id:value, a field that is not an integer
// in [0, kLibffmMaxField], an id that is not an integer >= 0, or a value that
// is not a finite number; InvalidArgument for a file without examples.
// Holds no state; safe to call from any thread.
#ifndef PST_DATA_LIBFFM_READER_H_
#define PST_DATA_LIBFFM_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

// The largest field index a libffm file may use (the model has one input
// slot per field up to the largest).
inline constexpr int kLibffmMaxField = 65535;

// The key of id `id` of field `field`: FNV-1a 64 over the field's 4 and the
// id's 8 little-endian bytes, then splitmix64's finalizer (as CriteoKey).
// Field-aware: one id in two fields gives two keys. Any bit pattern, so
// negative as an int64_t too. The same on every platform and release: keys
// are stored in checkpoints.
int64_t LibffmKey(int field, int64_t id);

StatusOr<Dataset> ReadLibffmDataset(const std::string& path, bool field_aware_keys = true);

// The same from lines in memory, one example each (data/example_lines.h):
// errors name "line N" instead of the file's name and line.
StatusOr<Dataset> ParseLibffmLines(const std::vector<std::string>& lines,
                                   bool field_aware_keys = true);

}  // namespace pst

#endif  // PST_DATA_LIBFFM_READER_H_
