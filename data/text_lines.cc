#include "data/text_lines.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace pst {
namespace {

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};

constexpr size_t kChunk = 4u << 20;

}  // namespace

std::string LinePrefix(const std::string& file, int64_t line_number) {
  if (file.empty()) return "line " + std::to_string(line_number) + ": ";
  return file + ":" + std::to_string(line_number) + ": ";
}

Status ForEachLine(const std::string& path,
                   const std::function<Status(int64_t line_number, std::string_view line)>& fn) {
  errno = 0;
  // gzread passes a file without the gzip magic bytes through unchanged, so
  // one code path reads both kinds.
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (file == nullptr) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    if (errno == EACCES) return PermissionDenied(path + ": permission denied");
    return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  }
  gzbuffer(file.get(), 1u << 20);
  // [begin, end) of `buffer` holds bytes read but not yet passed on: the
  // start of a line whose newline is in a later chunk.
  std::vector<char> buffer(kChunk);
  size_t begin = 0, end = 0;
  int64_t line_number = 0;
  auto pass = [&](const char* first, const char* last) {
    if (last != first && last[-1] == '\r') --last;
    return fn(++line_number, std::string_view(first, last - first));
  };
  for (;;) {
    const char* data = buffer.data();
    for (;;) {
      const char* newline = static_cast<const char*>(std::memchr(data + begin, '\n', end - begin));
      if (newline == nullptr) break;
      PST_RETURN_IF_ERROR(pass(data + begin, newline));
      begin = newline - data + 1;
    }
    std::memmove(buffer.data(), buffer.data() + begin, end - begin);
    end -= begin;
    begin = 0;
    if (end == buffer.size()) buffer.resize(2 * buffer.size());  // a line longer than a chunk
    const unsigned want = static_cast<unsigned>(std::min(buffer.size() - end, size_t{1} << 30));
    const int n = gzread(file.get(), buffer.data() + end, want);
    if (n < 0) {
      int errnum = 0;
      return DataLoss(path + ": read failed after line " + std::to_string(line_number) + ": " +
                      gzerror(file.get(), &errnum));
    }
    if (n == 0) break;
    end += n;
  }
  int errnum = Z_OK;
  const char* message = gzerror(file.get(), &errnum);
  // Z_BUF_ERROR at the end of input is zlib's "unexpected end of file".
  if (errnum == Z_BUF_ERROR) {
    return DataLoss(path + ": gzip stream ends early, after line " + std::to_string(line_number));
  }
  if (errnum != Z_OK) return DataLoss(path + ": read failed: " + message);
  if (end > begin) return pass(buffer.data() + begin, buffer.data() + end);
  return Status::OK();
}

}  // namespace pst
