#include "data/file_glob.h"

#include <glob.h>
#include <glog/logging.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "common/clock.h"

namespace pst {
namespace {

// A folder that cannot be read; a missing one is only a folder that has no
// files yet. glob(3) takes a plain function, hence the thread-local.
thread_local int unreadable_folders = 0;

int OnGlobError(const char* /*path*/, int error) {
  if (error != ENOENT && error != ENOTDIR) ++unreadable_folders;
  return 0;  // go on with the other folders
}

}  // namespace

StatusOr<std::vector<std::string>> MatchingFiles(const std::string& pattern) {
  if (pattern.empty()) return InvalidArgument("an empty file pattern");
  glob_t found{};
  unreadable_folders = 0;
  const int rc = glob(pattern.c_str(), 0, OnGlobError, &found);
  std::vector<std::string> files;
  if (rc == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) {
      struct stat st {};
      if (stat(found.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode)) {
        files.emplace_back(found.gl_pathv[i]);
      }
    }
  }
  globfree(&found);
  if ((rc != 0 && rc != GLOB_NOMATCH) || unreadable_folders > 0) {
    return Unavailable("cannot list the files of '" + pattern + "': a folder cannot be read");
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace pst

namespace pst {

StatusOr<std::string> WaitForFirstFile(const std::string& pattern,
                                       std::chrono::milliseconds timeout,
                                       const std::atomic<bool>& stop) {
  const auto give_up = SteadyClock().Now() + timeout;
  bool said = false;
  while (!stop.load()) {
    PST_ASSIGN_OR_RETURN(std::vector<std::string> files, MatchingFiles(pattern));
    if (!files.empty()) return files.front();
    if (SteadyClock().Now() >= give_up) {
      return DeadlineExceeded("no file matches --train_files=" + pattern + " after " +
                              std::to_string(timeout.count()) + " ms");
    }
    if (!said) LOG(INFO) << "waiting for the first file of --train_files=" << pattern;
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Aborted("stopped by a signal while waiting for the first file of " + pattern);
}

Status ResolveFirstStreamFile(DataOptions* data, std::chrono::milliseconds timeout,
                              const std::atomic<bool>& stop) {
  if (data->train_files.empty()) return Status::OK();
  PST_ASSIGN_OR_RETURN(data->train_file, WaitForFirstFile(data->train_files, timeout, stop));
  return Status::OK();
}

}  // namespace pst
