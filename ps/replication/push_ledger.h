// PushLedger: which pushes a replica of a shard already holds, so that a
// worker's push retried after a failover is acknowledged without being
// applied twice (exactly-once retries).
//
// A push id is (worker, incarnation, sequence): the incarnation is drawn at
// random when a worker process starts, so a restarted worker's sequence
// starting again from 1 is not taken for a repeat; a worker has one push in
// flight per shard at a time, so its sequence numbers reach a shard in
// order and one number per worker is enough to remember.
//
// The ledger travels with the shard's state (VariableStore's replication
// snapshot and checkpoints), so a backup promoted to primary knows every
// push the old primary acknowledged.
//
// Thread safety: none; the VariableStore guards it.
#ifndef PST_PS_REPLICATION_PUSH_LEDGER_H_
#define PST_PS_REPLICATION_PUSH_LEDGER_H_

#include <cstdint>
#include <map>

#include "common/status.h"
#include "common/tensor.h"

namespace pst {

struct PushId {
  int worker = 0;
  uint64_t incarnation = 0;
  uint64_t sequence = 0;  // from 1; 0: the push carries no id
  bool valid() const { return sequence > 0; }
};

class PushLedger {
 public:
  // True when the push `id` names is held already (the same worker
  // incarnation's sequence at or below the last one recorded).
  bool Holds(const PushId& id) const;
  // Records `id` as held.
  void Record(const PushId& id);
  size_t workers() const { return last_.size(); }

  // As an int64 tensor [workers, 3]: worker, incarnation (its bits),
  // sequence.
  Tensor ToTensor() const;
  // DataLoss for a tensor of another shape or type, or impossible values.
  static StatusOr<PushLedger> FromTensor(const Tensor& tensor);

 private:
  struct Last {
    uint64_t incarnation = 0;
    uint64_t sequence = 0;
  };
  std::map<int, Last> last_;  // by worker
};

}  // namespace pst

#endif  // PST_PS_REPLICATION_PUSH_LEDGER_H_
