#include "ps/container.h"

namespace pst {
namespace {

std::string ShapeText(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i ? "," : "") + std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace

Status CheckContainerName(const std::string& name, const std::string& flag) {
  constexpr size_t kMaxLength = 64;
  const bool valid = !name.empty() && name.size() <= kMaxLength && name != "." && name != ".." &&
                     name.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyz"
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == std::string::npos;
  if (valid) return Status::OK();
  return InvalidArgument(flag + "='" + name + "' is not a container name: 1 to " +
                         std::to_string(kMaxLength) +
                         " letters, digits, '.', '_' or '-' (not '.' or '..')");
}

std::string ModelDifference(const std::map<std::string, Shape>& held,
                            const std::map<std::string, Shape>& wanted) {
  for (const auto& [name, shape] : wanted) {
    auto it = held.find(name);
    if (it == held.end()) return "variable '" + name + "' is not there";
    if (it->second != shape) {
      return "variable '" + name + "' is " + ShapeText(it->second) + " there, " + ShapeText(shape) +
             " here";
    }
  }
  for (const auto& [name, shape] : held) {
    if (wanted.count(name) == 0) return "it holds variable '" + name + "', which this job has not";
  }
  return "";
}

}  // namespace pst
