#include "bench/transport/conversion_speed.h"

#include <glog/logging.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "bench/bench_timing.h"
#include "common/bfloat16.h"
#include "common/clock.h"
#include "common/non_finite.h"
#include "ps/optimizers/optimizer.h"

namespace pst {

ConversionSpeed MeasureConversionSpeed(size_t bytes) {
  const int64_t n = static_cast<int64_t>(bytes / 4);
  std::vector<float> wide(n, 0.1f), back(n);
  std::vector<uint16_t> narrow(n);
  auto gb_per_s = [&](const std::function<void()>& run) {
    run();  // warm the caches and pages
    const auto start = SteadyClock().Now();
    int rounds = 0;
    do {
      run();
      ++rounds;
    } while (SteadyClock().Now() - start < std::chrono::milliseconds(200));
    return 4.0 * n * rounds / Seconds(SteadyClock().Now() - start) / 1e9;
  };
  ConversionSpeed speed;
  speed.bytes = bytes;
  speed.narrow = gb_per_s([&] { FloatToBFloat16(wide.data(), narrow.data(), n); });
  speed.widen = gb_per_s([&] { BFloat16ToFloat(narrow.data(), back.data(), n); });
  speed.memcpy = gb_per_s([&] { std::memcpy(back.data(), wide.data(), n * sizeof(float)); });
  speed.check_then_narrow = gb_per_s([&] {
    CHECK_EQ(FirstNonFinite(wide.data(), n), n);
    FloatToBFloat16(wide.data(), narrow.data(), n);
  });
  speed.narrow_checked =
      gb_per_s([&] { CHECK_EQ(FloatToBFloat16Checked(wide.data(), narrow.data(), n), n); });
  OptimizerConfig config;
  config.learning_rate = 1e-9f;  // the values barely move over the rounds
  const std::unique_ptr<Optimizer> sgd = MakeOptimizer(config).value();
  SlotSet slots = sgd->CreateSlots(n);
  speed.widen_then_apply = gb_per_s([&] {
    BFloat16ToFloat(narrow.data(), back.data(), n);
    sgd->Apply(wide.data(), back.data(), n, 1.0f, &slots);
  });
  speed.widen_and_apply =
      gb_per_s([&] { sgd->ApplyBFloat16(wide.data(), narrow.data(), n, 1.0f, &slots, &back); });
  return speed;
}

}  // namespace pst
