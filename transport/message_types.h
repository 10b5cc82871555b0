// Which reply answers which request: the pairing the schema
// (schema/messages.fbs) states in its comments, as one table that every
// service uses and message_types_test checks against the schema's names
// (XRequest is answered by XReply).
#ifndef PST_TRANSPORT_MESSAGE_TYPES_H_
#define PST_TRANSPORT_MESSAGE_TYPES_H_

#include "schema/messages_generated.h"

namespace pst {

// The reply type of `request`; Invalid for a type that is not a request
// (a reply, Invalid, or a value beyond the schema's). A request that cannot
// be served is answered with this type carrying an error status; a message
// that cannot be decoded at all, with ErrorReply.
wire::MessageType ReplyTypeOf(wire::MessageType request);

}  // namespace pst

#endif  // PST_TRANSPORT_MESSAGE_TYPES_H_
