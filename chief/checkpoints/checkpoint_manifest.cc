#include "chief/checkpoints/checkpoint_manifest.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/crc32.h"
#include "common/parse_number.h"

namespace pst {
namespace {

// Version 1 recorded each part's whole-file CRC-32, which is the same
// constant for every intact part: its part CRCs are not compared.
constexpr char kHeaderPrefix[] = "pstrain-checkpoint ";
constexpr int kFormatVersion = 2;

}  // namespace

std::string PartFileName(int shard) { return "ps-" + std::to_string(shard) + ".part"; }

Status WriteManifest(const std::string& folder, const CheckpointManifest& m) {
  std::ostringstream body;
  body << kHeaderPrefix << kFormatVersion << "\n"
       << "step " << m.step << "\n"
       << "placement_hash " << m.placement_hash << "\n"
       << "cluster_id " << m.cluster_id << "\n"
       << "parts " << m.parts.size() << "\n";
  for (size_t k = 0; k < m.parts.size(); ++k) {
    body << "part " << PartFileName(k) << " " << m.parts[k].bytes << " " << m.parts[k].crc32
         << "\n";
  }
  body << "run_started_unix " << m.run_started_unix << "\n"
       << "lr_lowerings " << m.lr_lowerings << "\n";
  const std::string text = body.str();
  return WriteFileAtomically(folder + "/" + kManifestName,
                             text + "crc32 " + std::to_string(Crc32(text)) + "\n");
}

StatusOr<CheckpointManifest> ReadManifest(const std::string& folder) {
  const std::string path = folder + "/" + kManifestName;
  std::ifstream in(path);
  if (!in) return NotFound("no manifest " + path);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  const Status corrupt = DataLoss("manifest " + path + " is malformed or corrupt");
  const size_t crc_at = text.rfind("crc32 ");
  if (crc_at == std::string::npos ||
      text.compare(0, sizeof(kHeaderPrefix) - 1, kHeaderPrefix) != 0) {
    return corrupt;
  }
  const std::string body = text.substr(0, crc_at);
  if (std::to_string(Crc32(body)) + "\n" != text.substr(crc_at + 6)) {
    return DataLoss("manifest " + path + " fails its checksum");
  }
  std::istringstream lines(body);
  std::string header_line, key;
  std::getline(lines, header_line);
  CheckpointManifest m;
  if (!ParseNumber(std::string_view(header_line).substr(sizeof(kHeaderPrefix) - 1),
                   &m.format_version) ||
      m.format_version < 1 || m.format_version > kFormatVersion) {
    return corrupt;
  }
  size_t parts = 0;
  if (!(lines >> key >> m.step) || key != "step" || !(lines >> key >> m.placement_hash) ||
      key != "placement_hash" || !(lines >> key >> m.cluster_id) || key != "cluster_id" ||
      !(lines >> key >> parts) || key != "parts" || parts > 1 << 16) {
    return corrupt;
  }
  for (size_t k = 0; k < parts; ++k) {
    std::string name;
    FileDigest d;
    if (!(lines >> key >> name >> d.bytes >> d.crc32) || key != "part" || name != PartFileName(k)) {
      return corrupt;
    }
    m.parts.push_back(d);
  }
  // Each absent from manifests written before it was recorded.
  if (lines >> key && (key != "run_started_unix" || !(lines >> m.run_started_unix))) {
    return corrupt;
  }
  if (lines >> key && (key != "lr_lowerings" || !(lines >> m.lr_lowerings) || m.lr_lowerings < 0)) {
    return corrupt;
  }
  return m;
}

}  // namespace pst
