#include "transport/message_types.h"

#include <gtest/gtest.h>

#include <string>

namespace pst {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Every "XRequest" of the schema is answered by its "XReply", and nothing
// else is a request.
TEST(MessageTypesTest, EveryRequestOfTheSchemaHasItsReply) {
  int requests = 0;
  for (int v = static_cast<int>(wire::MessageType::MIN);
       v <= static_cast<int>(wire::MessageType::MAX); ++v) {
    const auto type = static_cast<wire::MessageType>(v);
    const std::string name = wire::EnumNameMessageType(type);
    const wire::MessageType reply = ReplyTypeOf(type);
    if (EndsWith(name, "Request")) {
      ++requests;
      EXPECT_EQ(wire::EnumNameMessageType(reply),
                name.substr(0, name.size() - std::string("Request").size()) + "Reply")
          << name;
    } else {
      EXPECT_EQ(reply, wire::MessageType::Invalid) << name;
    }
  }
  EXPECT_EQ(requests, 21);
  EXPECT_EQ(ReplyTypeOf(static_cast<wire::MessageType>(200)), wire::MessageType::Invalid);
}

}  // namespace
}  // namespace pst
