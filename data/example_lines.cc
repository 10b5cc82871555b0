#include "data/example_lines.h"

#include "data/text_lines.h"

namespace pst {

Status AppendExampleLines(const std::vector<std::string>& lines, const LineAppender& append,
                          Dataset* dataset) {
  if (lines.empty()) return InvalidArgument("no lines: nothing to read");
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_number = static_cast<int64_t>(i) + 1;
    std::string_view line = lines[i];
    if (line.find('\n') != std::string_view::npos) {
      return InvalidArgument(LinePrefix("", line_number) +
                             "holds a newline: give one example a line");
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const int64_t before = dataset->size;
    PST_RETURN_IF_ERROR(append(line_number, line, dataset));
    if (dataset->size != before + 1) {
      return InvalidArgument(LinePrefix("", line_number) +
                             "holds no example (it is empty or only a comment)");
    }
  }
  return Status::OK();
}

}  // namespace pst
