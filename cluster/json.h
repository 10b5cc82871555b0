// A minimal JSON reader, enough for TF_CONFIG: objects, arrays, strings
// (with the common escapes), numbers, true/false/null.
#ifndef PST_CLUSTER_JSON_H_
#define PST_CLUSTER_JSON_H_

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  static JsonValue Null() { return JsonValue(Kind::kNull); }
  static JsonValue Bool(bool b);
  static JsonValue Number(double d);
  static JsonValue String(std::string s);
  static JsonValue Array(std::vector<JsonValue> items);
  static JsonValue Object(std::map<std::string, JsonValue> members);

  Kind kind() const { return kind_; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }
  const std::string& string() const { return string_; }
  double number() const { return number_; }
  const std::vector<JsonValue>& array() const { return array_; }
  // Member of an object, or nullptr.
  const JsonValue* Find(const std::string& key) const;

 private:
  explicit JsonValue(Kind kind) : kind_(kind) {}
  Kind kind_;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue> object_;
};

// Errors say what was expected and at which byte offset.
StatusOr<JsonValue> ParseJson(const std::string& text);

}  // namespace pst

#endif  // PST_CLUSTER_JSON_H_
