// AppendExampleLines: a click-log reader's per-line code (criteo, libsvm,
// libffm) on lines held in memory instead of a file's: the serve
// executable's requests. The readers' Parse...Lines functions call it, so a
// line gives the same example whether it came from a file or a request.
//
// What differs from a file: every line must give exactly one example, so
// that the i-th answer belongs to the i-th line. A line that is empty (or,
// in libsvm and libffm, only a comment) is an error rather than skipped, and
// so is a line holding a newline (a file would split it in two). A trailing
// "\r" is removed, as data/text_lines.h does for a file's lines. Errors name
// the line from 1: "line 3: ...".
//
// Holds no state; safe to call from any thread.
#ifndef PST_DATA_EXAMPLE_LINES_H_
#define PST_DATA_EXAMPLE_LINES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

// Appends the example of `line` (line `line_number`, from 1) to *dataset, or
// nothing for a line without one; a reader's own per-line code.
using LineAppender =
    std::function<Status(int64_t line_number, std::string_view line, Dataset* dataset)>;

// Calls `append` on each of `lines` in order, on *dataset (the reader's
// empty Dataset: its shape set, sparse_offsets {0}). Errors: the first of
// `append`'s; InvalidArgument for no lines, a line holding a newline, and a
// line that gave no example.
Status AppendExampleLines(const std::vector<std::string>& lines, const LineAppender& append,
                          Dataset* dataset);

}  // namespace pst

#endif  // PST_DATA_EXAMPLE_LINES_H_
