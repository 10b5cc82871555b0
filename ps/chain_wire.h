// Shard chains on the wire (Header.chains): the chief's ChainRequest and
// RoutesReply.
#ifndef PST_PS_CHAIN_WIRE_H_
#define PST_PS_CHAIN_WIRE_H_

#include <vector>

#include "common/status.h"
#include "ps/replication/replica_role.h"
#include "schema/messages_generated.h"

namespace pst {

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::Chain>>> ChainsToWire(
    flatbuffers::FlatBufferBuilder& fbb, const std::vector<ShardChain>& chains);
// InvalidArgument for a chain without a primary's index in range (a ps
// task of `num_ps`), or a backup out of range.
StatusOr<std::vector<ShardChain>> ChainsFromWire(const wire::Header& header, int num_ps);

}  // namespace pst

#endif  // PST_PS_CHAIN_WIRE_H_
