#include "common/split.h"

namespace pst {

std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> items;
  size_t begin = 0;
  for (;;) {
    const size_t comma = list.find(',', begin);
    items.push_back(list.substr(begin, comma - begin));
    if (comma == std::string::npos) return items;
    begin = comma + 1;
  }
}

}  // namespace pst
