// StreamFile: one file of --train_files as a worker trains it (--follow):
// its lines read whole through the job's reader and feature columns, cut
// into batches numbered from 1, all of one size but the last, each marked
// for the ps' stream ledgers; and the progressive validation of the lines
// it trained: each line's probability from the forward pass that trained
// it, so measured before any update from that line.
//
// Thread safety: none.
#ifndef PST_WORKER_STREAM_FILE_H_
#define PST_WORKER_STREAM_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/batch.h"
#include "common/status.h"
#include "data/data_source.h"
#include "data/dataset.h"
#include "ps/streaming/stream_ledger.h"
#include "worker/chief_link.h"

namespace pst {

class StreamFile {
 public:
  // Reads `path` as `data` says (its format, feature columns, the job's
  // `num_fields`). Errors: the reader's, naming the file.
  static StatusOr<StreamFile> Read(const DataOptions& data, int num_fields, const std::string& path,
                                   int64_t batch_size);
  // The same for examples already read (tests).
  StreamFile(std::string path, Dataset examples, int64_t batch_size);

  const std::string& path() const { return path_; }
  int64_t examples() const { return examples_.size; }
  int64_t batches() const { return (examples_.size + batch_size_ - 1) / batch_size_; }
  // Batch `b` (1 .. batches()) as the ps record it.
  StreamBatch Mark(int64_t b) const;
  // Batch `b`'s examples into *batch.
  void Fill(int64_t b, Batch* batch) const;
  // Batch `b` trained, its examples' probabilities as predicted before.
  void Score(int64_t b, const std::vector<float>& probabilities);
  // What the chief hears: the lines this worker trained, and their AUC and
  // log-loss (NaN AUC for lines of one label only).
  FileResult Result() const;

 private:
  std::string path_;
  uint64_t stream_;
  Dataset examples_;
  int64_t batch_size_;
  std::vector<float> probabilities_;
  std::vector<int32_t> labels_;
};

}  // namespace pst

#endif  // PST_WORKER_STREAM_FILE_H_
