// Reader for labelled examples in CSV: one example per line, "label,f1,f2,...",
// the label an integer in [0, num_classes), the features decimal numbers,
// taken as they are (no scaling).
//
// Fields may carry surrounding spaces; blank lines and a trailing "\r" (CRLF
// files) are ignored; there is no quoting. Every row must have as many fields
// as the first.
//
// Errors: NotFound when the file does not exist; InvalidArgument, with the
// file name and line number, for a field that is not a finite number, a label
// that is not an integer or is out of range, a row of the wrong length, or a
// file without data rows. Holds no state; safe to call from any thread.
#ifndef PST_DATA_CSV_READER_H_
#define PST_DATA_CSV_READER_H_

#include <string>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

// Reads `path`; with `has_header` its first line (column names) is skipped.
StatusOr<Dataset> ReadCsvDataset(const std::string& path, int num_classes,
                                 bool has_header);

}  // namespace pst

#endif  // PST_DATA_CSV_READER_H_
