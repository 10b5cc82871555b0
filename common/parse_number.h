// ParseNumber: a whole string as a number, the same in every locale.
#ifndef PST_COMMON_PARSE_NUMBER_H_
#define PST_COMMON_PARSE_NUMBER_H_

#include <charconv>
#include <string_view>
#include <system_error>

namespace pst {

// True when `text` is exactly one number of type T (integer or floating
// point; std::from_chars: no locale, no leading '+' or spaces, nothing
// after it), then stored in *value.
template <typename T>
bool ParseNumber(std::string_view text, T* value) {
  const char* end = text.data() + text.size();
  const std::from_chars_result result = std::from_chars(text.data(), end, *value);
  return result.ec == std::errc() && result.ptr == end;
}

}  // namespace pst

#endif  // PST_COMMON_PARSE_NUMBER_H_
