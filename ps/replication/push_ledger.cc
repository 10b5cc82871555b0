#include "ps/replication/push_ledger.h"

#include <cstring>

namespace pst {

bool PushLedger::Holds(const PushId& id) const {
  auto it = last_.find(id.worker);
  return id.valid() && it != last_.end() && it->second.incarnation == id.incarnation &&
         id.sequence <= it->second.sequence;
}

void PushLedger::Record(const PushId& id) {
  if (!id.valid()) return;
  Last& last = last_[id.worker];
  if (last.incarnation != id.incarnation) last = Last{id.incarnation, 0};
  if (id.sequence > last.sequence) last.sequence = id.sequence;
}

Tensor PushLedger::ToTensor() const {
  Tensor t(DType::kInt64, {static_cast<int64_t>(last_.size()), 3});
  int64_t* out = t.i64();
  for (const auto& [worker, last] : last_) {
    *out++ = worker;
    std::memcpy(out++, &last.incarnation, sizeof(int64_t));
    std::memcpy(out++, &last.sequence, sizeof(int64_t));
  }
  return t;
}

StatusOr<PushLedger> PushLedger::FromTensor(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  if (tensor.dtype() != DType::kInt64 || shape.size() != 2 || shape[1] != 3) {
    return DataLoss(std::string("a push ledger is int64 [workers, 3], got ") +
                    DTypeName(tensor.dtype()) + ShapeToString(shape));
  }
  PushLedger ledger;
  const int64_t* in = tensor.i64();
  for (int64_t i = 0; i < shape[0]; ++i, in += 3) {
    if (in[0] < 0 || in[0] > (int64_t{1} << 30) || ledger.last_.count(static_cast<int>(in[0]))) {
      return DataLoss("a push ledger names worker " + std::to_string(in[0]) +
                      " twice or out of range");
    }
    Last last;
    std::memcpy(&last.incarnation, &in[1], sizeof(int64_t));
    std::memcpy(&last.sequence, &in[2], sizeof(int64_t));
    ledger.last_[static_cast<int>(in[0])] = last;
  }
  return ledger;
}

}  // namespace pst
