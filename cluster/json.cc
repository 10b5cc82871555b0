#include "cluster/json.h"

#include <cctype>
#include <cstdlib>

namespace pst {

JsonValue JsonValue::Bool(bool b) {
  JsonValue v(Kind::kBool);
  v.bool_ = b;
  return v;
}
JsonValue JsonValue::Number(double d) {
  JsonValue v(Kind::kNumber);
  v.number_ = d;
  return v;
}
JsonValue JsonValue::String(std::string s) {
  JsonValue v(Kind::kString);
  v.string_ = std::move(s);
  return v;
}
JsonValue JsonValue::Array(std::vector<JsonValue> items) {
  JsonValue v(Kind::kArray);
  v.array_ = std::move(items);
  return v;
}
JsonValue JsonValue::Object(std::map<std::string, JsonValue> members) {
  JsonValue v(Kind::kObject);
  v.object_ = std::move(members);
  return v;
}

const JsonValue* JsonValue::Find(const std::string& key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &it->second;
}

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  StatusOr<JsonValue> ParseDocument() {
    PST_ASSIGN_OR_RETURN(JsonValue v, ParseValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("end of input");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status Error(const std::string& expected) const {
    return InvalidArgument("JSON: expected " + expected + " at offset " + std::to_string(pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(const char* word) {
    const std::string w(word);
    if (text_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }

  StatusOr<JsonValue> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("less nesting");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("a value");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(depth);
    if (c == '[') return ParseArray(depth);
    if (c == '"') {
      PST_ASSIGN_OR_RETURN(std::string s, ParseString());
      return JsonValue::String(std::move(s));
    }
    if (ConsumeWord("true")) return JsonValue::Bool(true);
    if (ConsumeWord("false")) return JsonValue::Bool(false);
    if (ConsumeWord("null")) return JsonValue::Null();
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    const double d = std::strtod(begin, &end);
    if (end == begin) return Error("a value");
    pos_ += end - begin;
    return JsonValue::Number(d);
  }

  StatusOr<std::string> ParseString() {
    if (!Consume('"')) return Error("'\"'");
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) return Error("an escape");
        const char e = text_[pos_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case '"':
          case '\\':
          case '/': c = e; break;
          default: return Error("a supported escape");
        }
      }
      out += c;
    }
    if (!Consume('"')) return Error("closing '\"'");
    return out;
  }

  StatusOr<JsonValue> ParseArray(int depth) {
    Consume('[');
    std::vector<JsonValue> items;
    if (Consume(']')) return JsonValue::Array(std::move(items));
    do {
      PST_ASSIGN_OR_RETURN(JsonValue v, ParseValue(depth + 1));
      items.push_back(std::move(v));
    } while (Consume(','));
    if (!Consume(']')) return Error("',' or ']'");
    return JsonValue::Array(std::move(items));
  }

  StatusOr<JsonValue> ParseObject(int depth) {
    Consume('{');
    std::map<std::string, JsonValue> members;
    if (Consume('}')) return JsonValue::Object(std::move(members));
    do {
      SkipSpace();
      PST_ASSIGN_OR_RETURN(std::string key, ParseString());
      if (!Consume(':')) return Error("':'");
      PST_ASSIGN_OR_RETURN(JsonValue v, ParseValue(depth + 1));
      members.emplace(std::move(key), std::move(v));
    } while (Consume(','));
    if (!Consume('}')) return Error("',' or '}'");
    return JsonValue::Object(std::move(members));
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<JsonValue> ParseJson(const std::string& text) { return Parser(text).ParseDocument(); }

}  // namespace pst
