#include "system/registry/algorithm_source.h"

#include "system/producers/msccl_import.h"

namespace sim {

EtAlgorithm load_et_algorithm(const std::string& source, std::optional<CollectiveType> expected) {
  if (is_msccl_xml_path(source)) return load_msccl_algorithm(source, expected);
  return load_et_files(source, expected);
}

}  // namespace sim
