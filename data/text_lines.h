// ForEachLine: the lines of a text file, plain or gzip-compressed, read in
// large chunks (the criteo and libsvm readers: logs of millions of lines).
//
// Which kind a file is comes from its content (the gzip magic bytes 0x1f 0x8b,
// as zlib's gzread tells them), never from its name. Lines end at "\n"; a
// trailing "\r" (CRLF files) is removed; the last line needs no newline.
// Empty lines are passed on (a caller that skips them still counts them).
//
// Errors: NotFound when the file does not exist, PermissionDenied when it
// cannot be read, DataLoss (naming the file) for a read error or a gzip
// stream that is corrupt or ends early (the partial line at the cut is not
// passed on), and the first error `fn` returns, as it is. Holds no state; safe to
// call from any thread.
#ifndef PST_DATA_TEXT_LINES_H_
#define PST_DATA_TEXT_LINES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace pst {

// Calls fn(line_number, line) for each line, line numbers from 1; `line`
// points into a buffer that is reused after fn returns.
Status ForEachLine(const std::string& path,
                   const std::function<Status(int64_t line_number, std::string_view line)>& fn);

// How the readers' errors say where a line is: "FILE:12: ", or "line 12: "
// for one of lines given in memory (`file` empty; data/example_lines.h).
std::string LinePrefix(const std::string& file, int64_t line_number);

}  // namespace pst

#endif  // PST_DATA_TEXT_LINES_H_
