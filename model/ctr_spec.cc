#include "model/ctr_spec.h"

#include <sstream>
#include <vector>

#include "common/parse_number.h"
#include "model/model_zoo.h"

namespace pst {
namespace {

constexpr char kWideDeep[] = "wide_deep";
constexpr char kSpecPrefix[] = "spec:";  // SpecModelName's

std::vector<std::string> Tokens(const std::string& line) {
  std::vector<std::string> tokens;
  std::istringstream in(line.substr(0, line.find('#')));
  for (std::string t; in >> t;) tokens.push_back(t);
  return tokens;
}

// A positive whole number.
bool ParseInt(const std::string& text, int64_t* out) { return ParseNumber(text, out) && *out >= 1; }

struct ParsedSpec {
  CtrModelConfig config;
  float learning_rate = 0;
};

StatusOr<ParsedSpec> Parse(const std::string& text, const std::string& source) {
  ParsedSpec spec;
  spec.config.hidden.clear();
  spec.config.wide = false;
  bool embedding = false, logit = false;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::vector<std::string> t = Tokens(line);
    if (t.empty()) continue;
    auto bad = [&](const std::string& what) {
      return InvalidArgument(source + ":" + std::to_string(number) + ": " + what);
    };
    if (logit && t[0] != "learning_rate") return bad("'dense classes' must be the last layer");
    if (t[0] == "embedding") {
      if (embedding) return bad("a click model has one embedding line");
      if (t.size() < 2 || t.size() > 3 || !ParseInt(t[1], &spec.config.embedding_dim)) {
        return bad("expected 'embedding DIM [combiner=sum|mean]'");
      }
      if (t.size() == 3) {
        if (t[2] != "combiner=sum" && t[2] != "combiner=mean") {
          return bad("unknown '" + t[2] + "': the combiner is combiner=sum or combiner=mean");
        }
        spec.config.mean_combiner = t[2] == "combiner=mean";
      }
      embedding = true;
    } else if (!embedding) {
      return bad("a click model's spec starts with 'embedding DIM'");
    } else if (t[0] == "wide" && t.size() == 1) {
      spec.config.wide = true;
    } else if (t[0] == "dense" && t.size() == 2 && t[1] == "classes") {
      logit = true;
    } else if (t[0] == "dense") {
      int64_t units = 0;
      if (t.size() != 3 || !ParseInt(t[1], &units) || t[2] != "relu") {
        return bad("a click model's hidden layer is 'dense N relu'");
      }
      spec.config.hidden.push_back(units);
    } else if (t[0] == "learning_rate" && t.size() == 2) {
      if (!ParseNumber(t[1], &spec.learning_rate) || !(spec.learning_rate > 0)) {
        return bad("learning_rate must be > 0");
      }
    } else {
      return bad("a click model takes embedding, wide, dense and learning_rate lines, not '" +
                 t[0] + "'");
    }
  }
  if (!logit) return InvalidArgument(source + ": a click model's last layer is 'dense classes'");
  return spec;
}

}  // namespace

bool IsClickSpec(const std::string& spec_text) {
  std::istringstream lines(spec_text);
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> t = Tokens(line);
    if (!t.empty()) return t[0] == "embedding";
  }
  return false;
}

bool IsClickModel(const std::string& name) {
  if (name == kWideDeep) return true;
  return IsSpecModel(name) && IsClickSpec(name.substr(sizeof(kSpecPrefix) - 1));
}

StatusOr<CtrModelConfig> ParseClickSpec(const std::string& text, const std::string& source) {
  PST_ASSIGN_OR_RETURN(ParsedSpec spec, Parse(text, source));
  return spec.config;
}

StatusOr<CtrModelConfig> ClickModelConfig(const std::string& name, int64_t dense_features,
                                          int num_fields, int64_t table_rows) {
  CtrModelConfig config;
  if (name == kWideDeep) {
    config = WideDeepConfig(dense_features, num_fields, table_rows);
  } else if (IsClickModel(name)) {
    PST_ASSIGN_OR_RETURN(config,
                         ParseClickSpec(name.substr(sizeof(kSpecPrefix) - 1), "model spec"));
  } else {
    return InvalidArgument("model " + name + " is not a click model");
  }
  config.dense_features = dense_features;
  config.num_fields = num_fields;
  config.table_rows = table_rows;
  return config;
}

StatusOr<float> ClickModelLearningRate(const std::string& name) {
  if (name == kWideDeep) return 0.05f;
  PST_ASSIGN_OR_RETURN(ParsedSpec spec, Parse(name.substr(sizeof(kSpecPrefix) - 1), "model spec"));
  if (spec.learning_rate > 0) return spec.learning_rate;
  return InvalidArgument("the model spec has no 'learning_rate R' line to recommend a rate");
}

}  // namespace pst
