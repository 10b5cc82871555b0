// Reader for labelled examples in CSV: one example per line, an integer label
// in one column (CsvOptions::label_column) and decimal features in the
// others, taken as they are (no scaling; see data/standardize.h).
//
// The first line is a header (column names) when none of its fields is a
// number. Fields may carry surrounding spaces; blank lines and a trailing
// "\r" (CRLF files) are ignored; there is no quoting. Every row must have as
// many fields as the first.
//
// Errors: NotFound when the file does not exist; InvalidArgument naming the
// file, line and column (by its header name when there is one) for a field
// that is not a finite number, a label that is not an integer or is out of
// range, a row of the wrong length, or a file without data rows. Holds no
// state; safe to call from any thread.
#ifndef PST_DATA_CSV_READER_H_
#define PST_DATA_CSV_READER_H_

#include <string>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

struct CsvOptions {
  int label_column = 0;  // 0-based; -1: the last column
  // Labels must lie in [0, num_classes); 0: any label >= 0, and num_classes
  // becomes the largest label + 1.
  int num_classes = 0;
};

StatusOr<Dataset> ReadCsvDataset(const std::string& path, const CsvOptions& options = {});

}  // namespace pst

#endif  // PST_DATA_CSV_READER_H_
