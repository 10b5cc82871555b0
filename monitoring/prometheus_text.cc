#include "monitoring/prometheus_text.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pst {
namespace {

bool NameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }

// [a-zA-Z_:][a-zA-Z0-9_:]* (label names: without ':').
bool ValidName(const std::string& name, bool label) {
  if (name.empty() || !NameStart(name[0])) return false;
  for (char c : name) {
    if (!NameChar(c) || (label && c == ':')) return false;
  }
  return true;
}

// HELP text escapes only backslash and newline.
std::string EscapeHelp(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string PrometheusValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  if (value == std::trunc(value) && std::fabs(value) <= 9007199254740992.0) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    // The shortest of 15 or 17 digits that reads back as the same double.
    std::snprintf(buffer, sizeof buffer, "%.15g", value);
    if (std::strtod(buffer, nullptr) != value) {
      std::snprintf(buffer, sizeof buffer, "%.17g", value);
    }
  }
  return buffer;
}

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void PrometheusText::Add(Type type, const std::string& name, const std::string& help, double value,
                         const PrometheusLabels& labels) {
  CHECK(ValidName(name, /*label=*/false)) << "bad metric name '" << name << "'";
  if (families_.empty() || families_.back() != name) {
    CHECK(std::find(families_.begin(), families_.end(), name) == families_.end())
        << "metric family " << name << " reopened: its samples must be added together";
    families_.push_back(name);
    text_ += "# HELP " + name + " " + EscapeHelp(help) + "\n";
    text_ += "# TYPE " + name + (type == Type::kGauge ? " gauge\n" : " counter\n");
  }
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      CHECK(ValidName(labels[i].first, /*label=*/true))
          << "bad label name '" << labels[i].first << "'";
      if (i > 0) text_ += ',';
      text_ += labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + '"';
    }
    text_ += '}';
  }
  text_ += ' ' + PrometheusValue(value) + '\n';
}

}  // namespace pst
