// Reader for binary-labelled sparse examples in libsvm / svmlight format: one
// example per line,
//   label index:value index:value ...
// separated by spaces or tabs; the label 0 or 1, or -1 or +1 (-1 becomes 0;
// "1.0" and the like are read as numbers); indices are integers >= 0 (1-based
// by convention, any order, taken as they are) and values finite numbers. A
// '#' starts a comment that runs to the end of the line; lines that are empty
// (or only a comment) are skipped. Files may be plain or gzip-compressed,
// told apart by their content (see data/text_lines.h).
//
// What the Dataset gets: num_classes 2, labels 0/1; no dense features
// (feature_dim 0, example_shape {0}); num_fields 1: each pair is one sparse
// entry of field 0, key = index, weight = value, in the line's order. A line
// with a label alone is an example without entries.
//
// Errors: NotFound / PermissionDenied / DataLoss as data/text_lines.h says;
// InvalidArgument naming the file and line for a label that is not 0, 1, -1
// or +1, and naming the file, line and token (1-based, the label being token
// 1) for a pair without ':', an index that is not an integer >= 0, or a value
// that is not a finite number; InvalidArgument for a file without examples.
// Holds no state; safe to call from any thread.
#ifndef PST_DATA_LIBSVM_READER_H_
#define PST_DATA_LIBSVM_READER_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

StatusOr<Dataset> ReadLibsvmDataset(const std::string& path);

// The same from lines in memory, one example each (data/example_lines.h):
// errors name "line N" instead of the file's name and line.
StatusOr<Dataset> ParseLibsvmLines(const std::vector<std::string>& lines);

}  // namespace pst

#endif  // PST_DATA_LIBSVM_READER_H_
