// StreamLedger: which batches of each stream (a file of --train_files,
// docs/STREAMING.md) a shard has applied, so that every line of a stream is
// applied once on every shard, whatever restarts in between.
//
// A worker trains a file in batches numbered from 1 and sends every shard
// each batch's push, marked with (stream, batch). A shard records the batch
// as it applies it and drops a batch it holds already. When a worker dies,
// or a shard goes back to a checkpoint (whose part holds the ledger as it was
// with the variables it holds), the file is trained again from the first
// batch that some shard lacks (the least next_batch over the shards): the
// shards that hold a batch drop it, the others apply it.
//
// Per stream: every batch up to `floor`, plus a newer one in `recent` (a
// worker has at most two pushes in flight, and a shard may apply them in
// either order). A batch further ahead than that is refused (OutOfRange):
// the shard lacks batches before it, which happens when it went back to a
// checkpoint under a worker that went on; the worker asks again where the
// file stands (IsBehindStream) and resumes there. Batches are numbered in
// one batch size per stream, the first push's: a replay must cut the same
// batches.
//
// Thread safety: none; the VariableStore guards it.
#ifndef PST_PS_STREAMING_STREAM_LEDGER_H_
#define PST_PS_STREAMING_STREAM_LEDGER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "common/status.h"
#include "common/tensor.h"

namespace pst {

struct StreamBatch {
  uint64_t stream = 0;  // StreamIdOf the file's path; 0: none
  int64_t batch = 0;    // from 1
  int64_t batch_size = 0;
  int64_t examples = 0;  // lines in this batch, in [1, batch_size]
  bool last = false;     // the stream's last batch
  bool valid() const { return stream != 0; }
};

struct StreamProgress {
  uint64_t stream = 0;
  int64_t next_batch = 1;  // every batch before it is applied
  int64_t batch_size = 0;  // 0: nothing applied yet
  int64_t examples = 0;    // lines applied
  bool complete = false;   // every batch up to the last is applied
};

// A stream's id: a 64-bit hash (FNV-1a) of the file's path, never 0.
uint64_t StreamIdOf(const std::string& path);

// True for a shard's refusal of a batch ahead of its ledger (a rollback):
// the worker resumes the file where the shards say.
bool IsBehindStream(const Status& status);

class StreamLedger {
 public:
  // How far past the floor a batch may be: a worker's pushes in flight.
  static constexpr int kBatchesInFlight = 2;
  // Slots for batches above the floor in ToTensor's rows (room to spare:
  // at most kBatchesInFlight - 1 are used).
  static constexpr int kRecentBatches = 8;

  // InvalidArgument for an impossible mark, or a batch size other than the
  // one the stream was started with (every worker needs the same
  // --batch_size to replay a stream); OutOfRange for a batch more than
  // kBatchesInFlight past the floor.
  Status Check(const StreamBatch& batch) const;
  // True when `batch` was applied already.
  bool Holds(const StreamBatch& batch) const;
  // Records a checked batch that is not held as applied.
  void Record(const StreamBatch& batch);
  StreamProgress Progress(uint64_t stream) const;
  bool empty() const { return streams_.empty(); }
  size_t size() const { return streams_.size(); }

  // As an int64 tensor [streams, 6 + kRecentBatches], a row per stream:
  // id (its bits), batch size, floor, examples, last batch (0: not seen),
  // the count of recent batches, then those (the rest 0).
  Tensor ToTensor() const;
  // DataLoss for a tensor of another shape or type, or impossible values.
  static StatusOr<StreamLedger> FromTensor(const Tensor& tensor);

 private:
  struct Stream {
    int64_t batch_size = 0;
    int64_t floor = 0;         // every batch up to it is applied
    std::set<int64_t> recent;  // applied batches above floor + 1
    int64_t examples = 0;
    int64_t last_batch = 0;  // 0: the last batch has not been applied
  };
  std::map<uint64_t, Stream> streams_;
};

}  // namespace pst

#endif  // PST_PS_STREAMING_STREAM_LEDGER_H_
