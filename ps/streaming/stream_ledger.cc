#include "ps/streaming/stream_ledger.h"

#include <cstring>
#include <limits>

namespace pst {
namespace {

constexpr int64_t kColumns = 6 + StreamLedger::kRecentBatches;
constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max() / 4;

}  // namespace

uint64_t StreamIdOf(const std::string& path) {
  uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : path) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash == 0 ? 1 : hash;
}

bool IsBehindStream(const Status& status) { return status.code() == Code::kOutOfRange; }

Status StreamLedger::Check(const StreamBatch& b) const {
  if (b.batch < 1 || b.batch > kMaxCount || b.batch_size < 1 || b.batch_size > kMaxCount ||
      b.examples < 1 || b.examples > b.batch_size) {
    return InvalidArgument("impossible stream mark: batch " + std::to_string(b.batch) +
                           " of size " + std::to_string(b.batch_size) + " with " +
                           std::to_string(b.examples) + " examples");
  }
  auto it = streams_.find(b.stream);
  const int64_t floor = it == streams_.end() ? 0 : it->second.floor;
  if (b.batch > floor + kBatchesInFlight) {
    return OutOfRange("stream " + std::to_string(b.stream) + ": batch " + std::to_string(b.batch) +
                      " is ahead of this shard, which holds every " + "batch up to " +
                      std::to_string(floor) +
                      " (it went back to a checkpoint): resume the file there");
  }
  if (it != streams_.end() && it->second.batch_size != b.batch_size) {
    return InvalidArgument("stream " + std::to_string(b.stream) + " was trained in batches of " +
                           std::to_string(it->second.batch_size) + ", this push's are of " +
                           std::to_string(b.batch_size) +
                           ": --batch_size must be the same on every worker");
  }
  return Status::OK();
}

bool StreamLedger::Holds(const StreamBatch& b) const {
  auto it = streams_.find(b.stream);
  if (it == streams_.end()) return false;
  return b.batch <= it->second.floor || it->second.recent.count(b.batch) > 0;
}

void StreamLedger::Record(const StreamBatch& b) {
  Stream& s = streams_[b.stream];
  s.batch_size = b.batch_size;
  s.examples += b.examples;
  if (b.last) s.last_batch = b.batch;
  s.recent.insert(b.batch);
  while (!s.recent.empty() && *s.recent.begin() == s.floor + 1) {
    s.floor = *s.recent.begin();
    s.recent.erase(s.recent.begin());
  }
}

StreamProgress StreamLedger::Progress(uint64_t stream) const {
  StreamProgress p;
  p.stream = stream;
  auto it = streams_.find(stream);
  if (it == streams_.end()) return p;
  const Stream& s = it->second;
  p.next_batch = s.floor + 1;
  p.batch_size = s.batch_size;
  p.examples = s.examples;
  p.complete = s.last_batch > 0 && s.floor >= s.last_batch;
  return p;
}

Tensor StreamLedger::ToTensor() const {
  Tensor t(DType::kInt64, {static_cast<int64_t>(streams_.size()), kColumns});
  int64_t* out = t.i64();
  for (const auto& [id, s] : streams_) {
    std::memcpy(&out[0], &id, sizeof(int64_t));
    out[1] = s.batch_size;
    out[2] = s.floor;
    out[3] = s.examples;
    out[4] = s.last_batch;
    out[5] = static_cast<int64_t>(s.recent.size());
    int64_t k = 6;
    for (const int64_t batch : s.recent) out[k++] = batch;
    out += kColumns;
  }
  return t;
}

StatusOr<StreamLedger> StreamLedger::FromTensor(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  if (tensor.dtype() != DType::kInt64 || shape.size() != 2 || shape[1] != kColumns) {
    return DataLoss("a stream ledger is int64 [streams, " + std::to_string(kColumns) + "], got " +
                    DTypeName(tensor.dtype()) + ShapeToString(shape));
  }
  StreamLedger ledger;
  const int64_t* in = tensor.i64();
  for (int64_t i = 0; i < shape[0]; ++i, in += kColumns) {
    uint64_t id = 0;
    std::memcpy(&id, &in[0], sizeof(int64_t));
    Stream s;
    s.batch_size = in[1];
    s.floor = in[2];
    s.examples = in[3];
    s.last_batch = in[4];
    const int64_t recent = in[5];
    bool ok = id != 0 && s.batch_size >= 1 && s.batch_size <= kMaxCount && s.floor >= 0 &&
              s.floor <= kMaxCount && s.examples >= 0 && s.examples <= kMaxCount &&
              s.last_batch >= 0 && s.last_batch <= kMaxCount && recent >= 0 &&
              recent <= kRecentBatches && !ledger.streams_.count(id);
    for (int64_t k = 0; ok && k < recent; ++k) {
      const int64_t batch = in[6 + k];
      ok = batch > s.floor + 1 && batch <= kMaxCount &&
           (s.recent.empty() || batch > *s.recent.rbegin());
      s.recent.insert(batch);
    }
    if (!ok) {
      return DataLoss("a stream ledger's row " + std::to_string(i) + " is impossible");
    }
    ledger.streams_.emplace(id, std::move(s));
  }
  return ledger;
}

}  // namespace pst
