#include "collective_import_cli.h"

namespace sim {

CLI::App* add_collective_import(CLI::App& collective, MscclImportOptions& o) {
  CLI::App* imp = collective.add_subcommand("import", "convert a collective algorithm written by another tool into "
                                                      "per-rank Chakra ETs <prefix>.<rank>.et");
  imp->require_subcommand(1);
  CLI::App* msccl = imp->add_subcommand("msccl", "MSCCL-IR XML (msccl-tools, RCCL, MSCCLang, TACOS) -> Chakra ETs; "
                                                 "runs also directly: --collective allreduce=ALGO.xml");
  msccl->add_option("xml", o.xml, "the MSCCL-IR XML file")->required();
  msccl->add_option("-o,--output", o.prefix, "output prefix")->required();
  msccl->add_option("--coll", o.collective,
                    "collective it implements (default: the XML's coll; needed when that is 'custom')");
  msccl->add_option("--size", o.size_text,
                    "also write comm_size resolved for this collective size (sizes stay symbolic either way)");
  return msccl;
}

}  // namespace sim
