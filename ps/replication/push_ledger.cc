#include "ps/replication/push_ledger.h"

#include <cstring>
#include <string>

namespace pst {

bool PushLedger::Holds(const PushId& id) const {
  auto it = newest_.find(id.worker);
  if (!id.valid() || it == newest_.end() || it->second.incarnation != id.incarnation) return false;
  const Newest& n = it->second;
  if (id.sequence == n.sequence) return n.parts.count(id.part) > 0;
  if (id.sequence + 1 == n.sequence) return n.previous_parts.count(id.part) > 0;
  return id.sequence < n.sequence;
}

void PushLedger::Record(const PushId& id) {
  if (!id.valid()) return;
  Newest& n = newest_[id.worker];
  if (n.incarnation != id.incarnation) n = Newest{id.incarnation, 0, {}, {}};
  if (id.sequence > n.sequence) {
    // The push before this one: the newest so far, or none of it yet.
    n.previous_parts = id.sequence == n.sequence + 1 ? std::move(n.parts) : std::set<uint32_t>();
    n.sequence = id.sequence;
    n.parts.clear();
  }
  if (id.sequence == n.sequence) n.parts.insert(id.part);
  if (id.sequence + 1 == n.sequence) n.previous_parts.insert(id.part);
}

Tensor PushLedger::ToTensor() const {
  int64_t rows = 0;
  for (const auto& [worker, n] : newest_) {
    rows += static_cast<int64_t>(n.previous_parts.size() + n.parts.size());
  }
  Tensor t(DType::kInt64, {rows, 4});
  int64_t* out = t.i64();
  const auto write = [&out](int worker, uint64_t incarnation, uint64_t sequence, uint32_t part) {
    *out++ = worker;
    std::memcpy(out++, &incarnation, sizeof(int64_t));
    std::memcpy(out++, &sequence, sizeof(int64_t));
    *out++ = part;
  };
  for (const auto& [worker, n] : newest_) {
    for (const uint32_t part : n.previous_parts) write(worker, n.incarnation, n.sequence - 1, part);
    for (const uint32_t part : n.parts) write(worker, n.incarnation, n.sequence, part);
  }
  return t;
}

StatusOr<PushLedger> PushLedger::FromTensor(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  if (tensor.dtype() != DType::kInt64 || shape.size() != 2 || shape[1] != 4) {
    return DataLoss(std::string("a push ledger is int64 [rows, 4], got ") +
                    DTypeName(tensor.dtype()) + ShapeToString(shape));
  }
  PushLedger ledger;
  const int64_t* in = tensor.i64();
  for (int64_t i = 0; i < shape[0]; ++i, in += 4) {
    PushId id;
    std::memcpy(&id.incarnation, &in[1], sizeof(int64_t));
    std::memcpy(&id.sequence, &in[2], sizeof(int64_t));
    const bool in_range = in[0] >= 0 && in[0] <= (int64_t{1} << 30) && in[3] >= 0 &&
                          in[3] <= int64_t{UINT32_MAX} && id.sequence > 0;
    if (!in_range) {
      return DataLoss("a push ledger row out of range (worker " + std::to_string(in[0]) +
                      ", part " + std::to_string(in[3]) + ")");
    }
    id.worker = static_cast<int>(in[0]);
    id.part = static_cast<uint32_t>(in[3]);
    // Rows of one worker: one incarnation, the older push's rows first,
    // then the newest's (one sequence later), no part twice.
    auto it = ledger.newest_.find(id.worker);
    const bool in_order =
        it == ledger.newest_.end() ||
        (it->second.incarnation == id.incarnation &&
         ((it->second.sequence == id.sequence && !it->second.parts.count(id.part)) ||
          (it->second.sequence + 1 == id.sequence && it->second.previous_parts.empty())));
    if (!in_order) {
      return DataLoss("a push ledger names worker " + std::to_string(id.worker) +
                      " with more than two newest pushes, out of order, or a part twice");
    }
    ledger.Record(id);
  }
  return ledger;
}

}  // namespace pst
