// fuzz_tensor_file: libFuzzer target over checkpoint parts as a ps restores
// them: ReadTensorFile (common/tensor_file.h) on arbitrary files, then
// VariableStore::Restore with whatever it accepts.
//
// The input is a file without its last 4 bytes: the fuzzer appends the
// CRC32 the format ends with, so that mutations reach the parser behind the
// checksum (a CRC guards against accidents, not against a crafted file).
// The file goes to a folder of this process (on /dev/shm when there is one).
// Checks:
//  1. ReadTensorFile fails only with DataLoss (its contract for a truncated,
//     corrupt or foreign file).
//  2. What it accepts, WriteTensorFile writes back byte for byte.
//  3. Restore into a shard as fuzz_decode's ("global_step", "w" [4,4],
//     "b" [4]; async Momentum, and sync SGD with 1 replica): refused, the
//     store is exactly as before; accepted, pushes computed from versions
//     0, 1, the restored one and the largest allowed run on it (the
//     restored versions and sync step feed their arithmetic), and a push
//     that is refused changes nothing.
// Any failed check is a CHECK failure, i.e. a crash libFuzzer reports.
#include <glog/logging.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "common/tensor_file.h"
#include "fuzz/fuzz_shard.h"
#include "ps/variable_store.h"

namespace pst {
namespace {

// This process's scratch folder, removed at exit (not after a crash).
const std::string& ScratchDir() {
  static const std::string* dir = [] {
    namespace fs = std::filesystem;
    const fs::path base =
        fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string pattern = (base / "fuzz_tensor_file.XXXXXX").string();
    PCHECK(mkdtemp(pattern.data()) != nullptr) << "mkdtemp " << pattern;
    return new std::string(pattern);  // never destroyed: used at exit
  }();
  static const bool cleanup_registered = [] {
    std::atexit([] { std::filesystem::remove_all(ScratchDir()); });
    return true;
  }();
  (void)cleanup_registered;
  return *dir;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CHECK(in) << "cannot open " << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  CHECK(out) << "cannot write " << path;
}

// Gradients of 0.25 for w and b, computed from `version`.
std::vector<Gradient> Gradients(const std::vector<float>& storage, int64_t version) {
  std::vector<Gradient> grads(2);
  grads[0] = Gradient{"w", DType::kFloat32, {4, 4}, version, storage.data()};
  grads[1] = Gradient{"b", DType::kFloat32, {4}, version, storage.data() + 16};
  return grads;
}

// Restores `part` into a fresh shard: checks "refused: unchanged", or
// pushes to what was accepted.
void RestoreInto(const NamedTensors& part, bool sync) {
  VariableStore store;
  const ShardConfig config = fuzz::ShardConfigFor(sync, sync ? "sgd" : "momentum", 1);
  const Status init = store.Initialize(config, fuzz::ShardValues());
  CHECK(init.ok()) << init.ToString();
  const std::string before = fuzz::Fingerprint(store);
  const Status restored = store.Restore(part);
  if (!restored.ok()) {
    CHECK(before == fuzz::Fingerprint(store))
        << "a refused restore (" << restored.ToString() << ") changed the store";
    return;
  }
  // Pushes at the edges of what a gradient's version may be: any outcome
  // but undefined behaviour is fine, and a refusal changes nothing.
  const std::vector<float> storage(20, 0.25f);
  std::vector<VariableValue> pulled;
  CHECK(store.Pull({"w", "b", fuzz::kGlobalStep}, &pulled).ok());
  for (int64_t version :
       {int64_t{0}, int64_t{1}, pulled[0].version, std::numeric_limits<int64_t>::max() / 2}) {
    const std::string state = fuzz::Fingerprint(store);
    auto pushed = sync ? store.SyncPush(Gradients(storage, version),
                                        /*worker=*/0, store.Stats().sync_step)
                       : store.Push(Gradients(storage, version), true);
    if (!pushed.ok()) {
      CHECK(state == fuzz::Fingerprint(store))
          << "a refused push (" << pushed.status().ToString() << ") changed the store";
    }
  }
  pulled.clear();
  CHECK(store.Pull({"w", "b", fuzz::kGlobalStep}, &pulled).ok());
  (void)fuzz::Fingerprint(store);
}

}  // namespace
}  // namespace pst

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** argv) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = 2;
  google::InitGoogleLogging((*argv)[0]);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pst;  // NOLINT: the entry point is outside the namespace
  std::string file(reinterpret_cast<const char*>(data), size);
  const uint32_t crc = static_cast<uint32_t>(crc32(0, data, static_cast<uInt>(size)));
  file.append(reinterpret_cast<const char*>(&crc), sizeof(crc));
  const std::string path = ScratchDir() + "/part";
  WriteBytes(path, file);

  StatusOr<NamedTensors> part = ReadTensorFile(path);
  if (!part.ok()) {
    CHECK(part.status().code() == Code::kDataLoss)
        << "ReadTensorFile refused with " << part.status().ToString();
    return 0;
  }
  const std::string copy = ScratchDir() + "/copy";
  const auto written = WriteTensorFile(copy, *part);
  CHECK(written.ok()) << written.status().ToString();
  CHECK(ReadBytes(copy) == file) << "a file read and written again differs";

  RestoreInto(*part, /*sync=*/false);
  RestoreInto(*part, /*sync=*/true);
  return 0;
}
