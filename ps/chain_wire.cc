#include "ps/chain_wire.h"

namespace pst {
namespace {

bool IsTask(int task, int num_ps) { return task >= 0 && task < num_ps; }

}  // namespace

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::Chain>>> ChainsToWire(
    flatbuffers::FlatBufferBuilder& fbb, const std::vector<ShardChain>& chains) {
  std::vector<flatbuffers::Offset<wire::Chain>> out;
  for (const ShardChain& c : chains) {
    out.push_back(wire::CreateChain(fbb, c.shard, c.epoch, c.primary, fbb.CreateVector(c.backups)));
  }
  return fbb.CreateVector(out);
}

StatusOr<std::vector<ShardChain>> ChainsFromWire(const wire::Header& header, int num_ps) {
  std::vector<ShardChain> chains;
  if (header.chains() == nullptr) return InvalidArgument("the message carries no chains");
  for (const wire::Chain* c : *header.chains()) {
    if (c == nullptr) return InvalidArgument("an empty chain");
    ShardChain chain{c->shard(), c->epoch(), c->primary(), {}};
    if (c->backups() != nullptr) chain.backups.assign(c->backups()->begin(), c->backups()->end());
    bool valid = IsTask(chain.shard, num_ps) && IsTask(chain.primary, num_ps) && chain.epoch > 0;
    for (int b : chain.backups) valid = valid && IsTask(b, num_ps) && b != chain.primary;
    if (!valid) return InvalidArgument("a chain out of range: " + chain.Describe());
    chains.push_back(std::move(chain));
  }
  return chains;
}

}  // namespace pst
