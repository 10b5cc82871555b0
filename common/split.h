// Splitting the comma-separated lists that flags take.
#ifndef PST_COMMON_SPLIT_H_
#define PST_COMMON_SPLIT_H_

#include <string>
#include <vector>

namespace pst {

// "a,b,,c" -> {"a", "b", "", "c"}: empty entries are kept (for the caller to
// refuse); "" -> {""}.
std::vector<std::string> SplitCommas(const std::string& list);

}  // namespace pst

#endif  // PST_COMMON_SPLIT_H_
