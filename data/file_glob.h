// The files a shell-style pattern (glob(3): *, ?, [...]) matches, in name
// order: --train_files for --follow. Only regular files: a folder, or a
// name beginning with a dot (glob(3) skips those unless the pattern names
// the dot), is not a data file. A file must appear whole: write it under a
// name the pattern does not match and rename it (docs/STREAMING.md).
#ifndef PST_DATA_FILE_GLOB_H_
#define PST_DATA_FILE_GLOB_H_

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/data_source.h"

namespace pst {

// An empty list when nothing matches; InvalidArgument for an empty pattern,
// Unavailable when the pattern cannot be read (a folder without read
// permission).
StatusOr<std::vector<std::string>> MatchingFiles(const std::string& pattern);

// --follow: the first file of `pattern` in name order, once one exists,
// looking every 200 ms: DeadlineExceeded naming the pattern after `timeout`,
// Aborted once `stop` is set.
StatusOr<std::string> WaitForFirstFile(const std::string& pattern,
                                       std::chrono::milliseconds timeout,
                                       const std::atomic<bool>& stop);

// Sets data->train_file to WaitForFirstFile of data->train_files (the job's
// shape comes from it); nothing without --follow.
Status ResolveFirstStreamFile(DataOptions* data, std::chrono::milliseconds timeout,
                              const std::atomic<bool>& stop);

}  // namespace pst

#endif  // PST_DATA_FILE_GLOB_H_
