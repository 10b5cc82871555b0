// PushLedger: which pushes a replica of a shard already holds, so that a
// worker's push retried after a failover is acknowledged without being
// applied twice (exactly-once retries).
//
// A push id is (worker, incarnation, sequence, part): the incarnation is
// drawn at random when a worker process starts, so a restarted worker's
// sequence starting again from 1 is not taken for a repeat. A push streamed
// in parts sends a shard several requests with one sequence and parts 0,
// 1, ...; the shard may apply them in any order (a large part waits for a
// handler thread while a small one is applied at once). A worker has at
// most kPushesInFlight pushes unacknowledged (PsClient): it sends a push's
// first part only once every part of the push kPushesInFlight before it
// was acknowledged. So only parts of its two newest pushes at a shard can
// be missing (and the newer may arrive first): the ledger remembers, per
// worker, those pushes' sequences and the parts held of each.
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
#include <set>

#include "common/status.h"
#include "common/tensor.h"

namespace pst {

struct PushId {
  int worker = 0;
  uint64_t incarnation = 0;
  uint64_t sequence = 0;  // from 1; 0: the push carries no id
  uint32_t part = 0;      // of a push streamed in parts, from 0
  bool valid() const { return sequence > 0; }
};

class PushLedger {
 public:
  // How many of a worker's pushes may be unacknowledged at once.
  static constexpr int kPushesInFlight = 2;

  // True when the push part `id` names is held already: an earlier push of
  // the same worker incarnation, or a part of its newest push recorded.
  bool Holds(const PushId& id) const;
  // Records `id` as held.
  void Record(const PushId& id);
  size_t workers() const { return newest_.size(); }

  // As an int64 tensor [rows, 4], a row per part held of each worker's
  // two newest pushes, the older first: worker, incarnation (its bits),
  // sequence, part.
  Tensor ToTensor() const;
  // DataLoss for a tensor of another shape or type, or impossible values.
  static StatusOr<PushLedger> FromTensor(const Tensor& tensor);

 private:
  // A worker's two newest pushes: every earlier one is held.
  struct Newest {
    uint64_t incarnation = 0;
    uint64_t sequence = 0;
    std::set<uint32_t> parts;           // held of push `sequence`
    std::set<uint32_t> previous_parts;  // held of push `sequence - 1`
  };
  std::map<int, Newest> newest_;  // by worker
};

}  // namespace pst

#endif  // PST_PS_REPLICATION_PUSH_LEDGER_H_
