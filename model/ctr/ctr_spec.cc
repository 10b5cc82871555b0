#include "model/ctr/ctr_spec.h"

#include <sstream>
#include <vector>

#include "common/parse_number.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

constexpr char kSpecPrefix[] = "spec:";  // SpecModelName's

// A zoo model: its spec, as a user would write it.
struct ZooModel {
  const char* name;
  const char* spec;
};

constexpr ZooModel kZoo[] = {
    {"wide_deep",
     "embedding 8\nwide\ndense 64 relu\ndense 32 relu\ndense classes\n"
     "optimizer adam\nlearning_rate 0.001\n"},
    {"fm", "embedding 16\nwide\nfm\ndense classes\noptimizer adam\nlearning_rate 0.001\n"},
    {"deepfm",
     "embedding 16\nwide\nfm\ndense 256 relu\ndense 128 relu\ndense classes\n"
     "optimizer adam\nlearning_rate 0.001\n"},
    {"dcn_v2",
     "embedding 16\ncross 3\ndense 256 relu\ndense 128 relu\ndense classes\n"
     "optimizer adam\nlearning_rate 0.001\n"},
    {"dlrm",
     "embedding 16\ndot\nbottom 64 relu\nbottom 16 relu\ndense 256 relu\ndense 128 relu\n"
     "dense classes\noptimizer adam\nlearning_rate 0.001\n"},
};

const ZooModel* FindZooModel(const std::string& name) {
  for (const ZooModel& m : kZoo) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

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
  ClickTraining training{"sgd", 0};  // --optimizer's default
};

bool ParseCombiner(const std::string& token, Combiner* out) {
  if (token == "combiner=sum")
    *out = Combiner::kSum;
  else if (token == "combiner=mean")
    *out = Combiner::kMean;
  else if (token == "combiner=sqrtn")
    *out = Combiner::kSqrtN;
  else
    return false;
  return true;
}

// The options of a 'cross L [rank=R] [parallel]' line after L.
bool ParseCrossOptions(const std::vector<std::string>& t, CtrModelConfig* config) {
  for (size_t i = 2; i < t.size(); ++i) {
    if (t[i] == "parallel") {
      config->cross_parallel = true;
    } else if (t[i].rfind("rank=", 0) == 0) {
      if (!ParseInt(t[i].substr(5), &config->cross_rank)) return false;
    } else {
      return false;
    }
  }
  return true;
}

StatusOr<ParsedSpec> Parse(const std::string& text, const std::string& source) {
  ParsedSpec spec;
  CtrModelConfig& config = spec.config;
  config.hidden.clear();
  config.wide = false;
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
    if (logit && t[0] != "learning_rate" && t[0] != "optimizer") {
      return bad("'dense classes' must be the last layer");
    }
    if (t[0] == "embedding") {
      if (embedding) return bad("a click model has one embedding line");
      if (t.size() < 2 || t.size() > 3 || !ParseInt(t[1], &config.embedding_dim)) {
        return bad("expected 'embedding DIM [combiner=sum|mean|sqrtn]'");
      }
      if (t.size() == 3 && !ParseCombiner(t[2], &config.combiner)) {
        return bad("unknown '" + t[2] + "': the combiner is combiner=sum, mean or sqrtn");
      }
      embedding = true;
    } else if (!embedding) {
      return bad("a click model's spec starts with 'embedding DIM'");
    } else if ((t[0] == "wide" || t[0] == "fm" || t[0] == "dot" || t[0] == "batchnorm") &&
               t.size() == 1) {
      (t[0] == "wide"  ? config.wide
       : t[0] == "fm"  ? config.fm
       : t[0] == "dot" ? config.dot
                       : config.batchnorm) = true;
    } else if (t[0] == "cross") {
      int64_t layers = 0;
      if (t.size() < 2 || !ParseInt(t[1], &layers) || !ParseCrossOptions(t, &config)) {
        return bad("expected 'cross LAYERS [rank=R] [parallel]'");
      }
      config.cross_layers = static_cast<int>(layers);
    } else if (t[0] == "dropout") {
      if (t.size() != 2 || !ParseNumber(t[1], &config.dropout) ||
          !(config.dropout >= 0 && config.dropout < 1)) {
        return bad("expected 'dropout RATE' with RATE in [0, 1)");
      }
    } else if (t[0] == "dense" && t.size() == 2 && t[1] == "classes") {
      logit = true;
    } else if (t[0] == "dense" || t[0] == "bottom") {
      int64_t units = 0;
      if (t.size() != 3 || !ParseInt(t[1], &units) || t[2] != "relu") {
        return bad("a click model's hidden layer is '" + t[0] + " N relu'");
      }
      (t[0] == "dense" ? config.hidden : config.bottom).push_back(units);
    } else if (t[0] == "optimizer" && t.size() == 2) {
      spec.training.optimizer = t[1];
    } else if (t[0] == "learning_rate" && t.size() == 2) {
      if (!ParseNumber(t[1], &spec.training.learning_rate) || !(spec.training.learning_rate > 0)) {
        return bad("learning_rate must be > 0");
      }
    } else {
      return bad(
          "a click model takes embedding, wide, fm, cross, dot, bottom, dense, batchnorm, "
          "dropout, optimizer and learning_rate lines, not '" +
          t[0] + "'");
    }
  }
  if (!logit) return InvalidArgument(source + ": a click model's last layer is 'dense classes'");
  return spec;
}

StatusOr<ParsedSpec> ParseNamed(const std::string& name) {
  if (const ZooModel* zoo = FindZooModel(name)) return Parse(zoo->spec, name);
  if (!IsClickModel(name)) return InvalidArgument("model " + name + " is not a click model");
  return Parse(name.substr(sizeof(kSpecPrefix) - 1), "model spec");
}

}  // namespace

std::vector<std::string> ClickModelNames() {
  std::vector<std::string> names;
  for (const ZooModel& m : kZoo) names.push_back(m.name);
  return names;
}

bool IsClickSpec(const std::string& spec_text) {
  std::istringstream lines(spec_text);
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> t = Tokens(line);
    if (!t.empty()) return t[0] == "embedding";
  }
  return false;
}

bool IsClickModel(const std::string& name) {
  if (FindZooModel(name) != nullptr) return true;
  return IsSpecModel(name) && IsClickSpec(name.substr(sizeof(kSpecPrefix) - 1));
}

StatusOr<CtrModelConfig> ParseClickSpec(const std::string& text, const std::string& source) {
  PST_ASSIGN_OR_RETURN(ParsedSpec spec, Parse(text, source));
  return spec.config;
}

StatusOr<CtrModelConfig> ClickModelConfig(const std::string& name, int64_t dense_features,
                                          int num_fields, int64_t table_rows) {
  PST_ASSIGN_OR_RETURN(ParsedSpec spec, ParseNamed(name));
  spec.config.dense_features = dense_features;
  spec.config.num_fields = num_fields;
  spec.config.table_rows = table_rows;
  return spec.config;
}

StatusOr<ClickTraining> ClickModelTraining(const std::string& name) {
  PST_ASSIGN_OR_RETURN(ParsedSpec spec, ParseNamed(name));
  PST_ASSIGN_OR_RETURN(spec.training.learning_rate,
                       ClickModelLearningRate(name, spec.training.optimizer));
  return spec.training;
}

StatusOr<float> ClickModelLearningRate(const std::string& name, const std::string& optimizer) {
  PST_ASSIGN_OR_RETURN(ParsedSpec spec, ParseNamed(name));
  if (optimizer == spec.training.optimizer && spec.training.learning_rate > 0) {
    return spec.training.learning_rate;
  }
  if (optimizer == "adam") return 0.001f;
  if (optimizer == "momentum") return 0.01f;
  if (optimizer == "adagrad" || optimizer == "ftrl" || optimizer == "sgd") return 0.05f;
  return InvalidArgument("no recommended rate for optimizer '" + optimizer + "'");
}

}  // namespace pst
