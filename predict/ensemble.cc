#include "predict/ensemble.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <utility>

#include "job/model_file.h"
#include "predict/predictor.h"

namespace pst {
namespace {

struct Split {
  std::string name;
  Dataset data;
};

// The splits to score: validation (with validation_examples) and test,
// unstandardized (each member applies its own standardization).
StatusOr<std::vector<Split>> LoadSplits(DataOptions options, int num_classes) {
  options.normalize = false;
  options.num_classes = num_classes;
  std::vector<Split> splits;
  if (options.validation_examples > 0) {
    PST_ASSIGN_OR_RETURN(DataSplits loaded, LoadData(options, /*with_test=*/true));
    splits.push_back({"validation", std::move(loaded.validation)});
    splits.push_back({"test", std::move(loaded.test)});
  } else {
    PST_ASSIGN_OR_RETURN(Dataset test, LoadTestSet(options, num_classes));
    splits.push_back({"test", std::move(test)});
  }
  return splits;
}

std::string Cell(double accuracy) {
  char text[16];
  std::snprintf(text, sizeof text, "%.4f", accuracy);
  return text;
}

}  // namespace

std::vector<float> MeanProbabilities(const std::vector<std::vector<float>>& tables) {
  std::vector<float> mean(tables.empty() ? 0 : tables.front().size(), 0.0f);
  for (const std::vector<float>& table : tables) {
    for (size_t i = 0; i < mean.size(); ++i) mean[i] += table[i];
  }
  for (float& p : mean) p /= static_cast<float>(tables.size());
  return mean;
}

double Accuracy(const std::vector<float>& probabilities, const std::vector<int32_t>& labels,
                int num_classes) {
  if (labels.empty()) return 0;
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const float* p = probabilities.data() + i * num_classes;
    correct += std::max_element(p, p + num_classes) - p == labels[i];
  }
  return static_cast<double>(correct) / labels.size();
}

std::string EnsembleReport::Format() const {
  const auto pad = [](const std::string& s, size_t width) {
    return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
  };
  size_t name_width = std::string("ensemble").size();
  for (const std::string& m : members) name_width = std::max(name_width, m.size());
  // Each split's column fits its name and every accuracy in it.
  std::vector<std::vector<std::string>> cells(splits.size());
  std::vector<size_t> widths(splits.size());
  for (size_t c = 0; c < splits.size(); ++c) {
    for (double accuracy : splits[c].members) cells[c].push_back(Cell(accuracy));
    cells[c].push_back(Cell(splits[c].ensemble));
    widths[c] = splits[c].split.size();
    for (const std::string& cell : cells[c]) widths[c] = std::max(widths[c], cell.size());
  }
  const auto row = [&](const std::string& name, const auto& cell_of) {
    std::string line = pad(name, name_width);
    for (size_t c = 0; c < splits.size(); ++c) line += "  " + pad(cell_of(c), widths[c]);
    return line.erase(line.find_last_not_of(' ') + 1) + "\n";
  };
  std::string out = "Ensemble of " + std::to_string(members.size()) +
                    " models (the mean of their class probabilities)\n" +
                    row("model", [&](size_t c) { return splits[c].split; });
  for (size_t m = 0; m <= members.size(); ++m) {
    out += row(m < members.size() ? members[m] : "ensemble", [&](size_t c) { return cells[c][m]; });
  }
  for (const SplitAccuracy& s : splits) {
    out += (s.split == "test" ? "Ensemble-Test-Accuracy: " : "Ensemble-Validation-Accuracy: ") +
           Cell(s.ensemble) + "\n";
  }
  return out;
}

StatusOr<EnsembleReport> RunEnsemble(const EnsembleOptions& options) {
  const size_t n = options.members.size();
  if (n < 2) return InvalidArgument("an ensemble needs at least two model files");
  if (!options.devices.empty() && options.devices.size() != n) {
    return InvalidArgument(std::to_string(options.devices.size()) + " devices for " +
                           std::to_string(n) + " ensemble members");
  }
  std::vector<TrainedModel> trained(n);
  EnsembleReport report;
  for (size_t m = 0; m < n; ++m) {
    PST_ASSIGN_OR_RETURN(trained[m], ReadModelFile(options.members[m]));
    const TrainedModel& first = trained[0];
    if (trained[m].input.size() != first.input.size() ||
        trained[m].num_classes != first.num_classes) {
      return InvalidArgument(options.members[m] + " (" + trained[m].input.ToString() + ", " +
                             std::to_string(trained[m].num_classes) + " classes) does not fit " +
                             options.members[0] + " (" + first.input.ToString() + ", " +
                             std::to_string(first.num_classes) + " classes)");
    }
    report.members.push_back(options.members[m] + " (" + ModelLabel(trained[m].model) + ")");
  }
  const int classes = trained[0].num_classes;
  PST_ASSIGN_OR_RETURN(std::vector<Split> splits, LoadSplits(options.data, classes));
  for (const Split& split : splits) {
    // Every member at once, each on its own device.
    std::vector<std::future<StatusOr<std::vector<float>>>> running;
    for (size_t m = 0; m < n; ++m) {
      const std::string device = options.devices.empty() ? "cpu" : options.devices[m];
      running.push_back(std::async(std::launch::async, [&, m, device] {
        return PredictProbabilities(trained[m], options.members[m], split.data, device);
      }));
    }
    std::vector<std::vector<float>> tables;
    for (auto& member : running) {
      StatusOr<std::vector<float>> table = member.get();
      if (!table.ok()) return table.status();
      tables.push_back(std::move(table).value());
    }
    SplitAccuracy accuracy;
    accuracy.split = split.name;
    accuracy.examples = split.data.size;
    for (const std::vector<float>& table : tables) {
      accuracy.members.push_back(Accuracy(table, split.data.labels, classes));
    }
    accuracy.ensemble = Accuracy(MeanProbabilities(tables), split.data.labels, classes);
    report.splits.push_back(std::move(accuracy));
  }
  return report;
}

}  // namespace pst
