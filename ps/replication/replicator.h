// Replicator: a primary shard's state shipped to its backups, by group
// commit (docs/DESIGN.md, "Replicated shards").
//
// What travels is the shard's resulting state (values, optimizer slots,
// versions, the push ledger, the sync step), not the gradients: a shipment
// is idempotent and needs no ordering, a backup that missed one is repaired
// by the next, and a backup joining the chain is filled by the very same
// message. A round takes one consistent snapshot and ships it to every
// backup; every push applied before the snapshot is then held by every
// replica and is acknowledged together (group commit), so the number of
// rounds follows the backups' speed, not the number of pushes.
//
// A push's reply waits for the round that holds it (AfterReplicated). A
// backup that does not answer is shipped to again until the chief takes it
// out of the chain (SetChain); a backup of a newer epoch deposes this
// primary: its waiting pushes fail and are never acknowledged.
//
// Thread safety: every method may be called from any thread; rounds run on
// the replicator's own thread.
#ifndef PST_PS_REPLICATION_REPLICATOR_H_
#define PST_PS_REPLICATION_REPLICATOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "common/tensor_file.h"

namespace pst {

// How far a shard's state has come: pushes applied (async) and the sync
// step it accumulates.
struct Watermark {
  uint64_t applied = 0;
  int64_t sync_step = 0;
  // True when this state holds everything `needed` names.
  bool Covers(const Watermark& needed) const {
    return applied >= needed.applied && sync_step >= needed.sync_step;
  }
};

// A consistent snapshot of a shard for shipping.
struct ShardState {
  NamedTensors tensors;
  Watermark watermark;
};

// Sends shipments to backups: the ps's connections (a fake in tests).
class BackupShipper {
 public:
  virtual ~BackupShipper() = default;
  // Sends `state` of `shard` at `epoch` to ps task `backup`. Once it
  // returns, the shipment no longer needs `state`.
  virtual Status Send(int backup, int shard, int64_t epoch, const ShardState& state) = 0;
  // `backup`'s answer to the last Send: OK once it holds the state; Aborted
  // when it holds a newer epoch (this primary was deposed).
  virtual Status Await(int backup) = 0;
};

class Replicator {
 public:
  using TakeSnapshot = std::function<StatusOr<ShardState>()>;
  // How far the shard has come now (cheap: no snapshot).
  using ReadWatermark = std::function<Watermark()>;
  // Called when a backup refused for a newer epoch.
  using OnDeposed = std::function<void()>;
  using Done = std::function<void(Status)>;
  // Between two shipments to a backup that did not answer.
  static constexpr std::chrono::milliseconds kRetryPause{20};

  // A round runs when some push waits for a state the shard has reached
  // (`watermark` says), so a sync push waiting for its step's other
  // gradients costs no shipment.
  Replicator(int shard, BackupShipper* shipper, TakeSnapshot snapshot, ReadWatermark watermark,
             OnDeposed on_deposed);
  // Drops what still waits, without calling it: the ps is stopping, and a
  // reply sent now could reach a server already gone. Made closed (no chain
  // yet).
  ~Replicator();
  Replicator(const Replicator&) = delete;
  Replicator& operator=(const Replicator&) = delete;

  // This replica is the primary of a chain of `epoch` with `backups` (ps
  // task indices), from the chief; it ships from now on. A backup new to
  // it gets a round at once, pushes or none, to fill it.
  void SetChain(int64_t epoch, std::vector<int> backups);
  // A round soon, pushes or none (the state changed without one: a
  // restored checkpoint).
  void ShipSoon();
  // This replica is not (or no longer) a primary: what waits fails with
  // `why`, and so does every push after it, until the next SetChain.
  void Close(const Status& why);
  // Calls `done(OK)` once every backup holds a state that covers `needed`
  // (at once without backups), `done(error)` when this primary was deposed,
  // is closed or the replicator stops. `done` runs on the replicator's
  // thread or the caller's; it must not call back into the replicator.
  void AfterReplicated(Watermark needed, Done done);
  // Fails every waiting push with `why` (the shard was initialized or
  // restored again: what they waited for is gone).
  void FailWaiting(const Status& why);

  uint64_t rounds() const;
  uint64_t bytes_shipped() const;

 private:
  struct Waiter {
    Watermark needed;
    Done done;
  };
  void Run();
  // A round soon, whatever the pushes: a waiter that needs nothing.
  void AskForRound() REQUIRES(mu_);
  // True when the shard's state now covers some waiting push.
  bool RoundDue() const REQUIRES(mu_);
  // One round: snapshot, send to every backup of the chain, let go of the
  // snapshot, wait for their answers; OK when all hold it.
  Status ShipRound(int64_t epoch, const std::vector<int>& backups, Watermark* shipped);
  // Completes (outside the lock) the waiters `shipped` covers.
  void Complete(const Watermark& shipped);

  const int shard_;
  BackupShipper* const shipper_;
  const TakeSnapshot snapshot_;
  const ReadWatermark watermark_;
  const OnDeposed on_deposed_;
  mutable Mutex mu_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  Status closed_ GUARDED_BY(mu_);  // not OK: pushes fail with it
  int64_t epoch_ GUARDED_BY(mu_) = 0;
  std::vector<int> backups_ GUARDED_BY(mu_);
  std::vector<Waiter> waiting_ GUARDED_BY(mu_);
  uint64_t rounds_ GUARDED_BY(mu_) = 0;
  uint64_t bytes_shipped_ GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace pst

#endif  // PST_PS_REPLICATION_REPLICATOR_H_
