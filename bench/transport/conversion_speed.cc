#include "bench/transport/conversion_speed.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "bench/bench_timing.h"
#include "common/bfloat16.h"
#include "common/clock.h"

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
  return speed;
}

}  // namespace pst
