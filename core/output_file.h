// Every file `sim` writes (reports, CSVs, timelines, Chakra ETs) goes through
// OutputFile, so an output never harms what its path names:
//
//   regular file or absent   a temporary file in the same folder, renamed over
//                            the path by commit(): readers never see half a
//                            file; an existing file keeps its mode and owner
//   symlink                  followed: the link stays, its final target is
//                            replaced as above (a dangling link's target is created)
//   character device, FIFO   written directly (/dev/null, /dev/stdout, a FIFO
//                            some reader holds open); never replaced
//   "-"                      standard output, written directly
//   /dev/stdout, /dev/fd/N   the process's descriptor, written directly, whatever
//                            it is (a file the shell opened, even for appending)
//   folder, block device,    refused: InputError (exit 2) naming the path
//   socket
//
// A folder the process cannot create the temporary file in is InputError too.
// The temporary file is registered (core/temp_file_registry.h) from creation
// until commit, and removed by the destructor if commit never happened: it
// outlives the process neither on success, nor on error, nor on a signal.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace sim {

class OutputFile {
 public:
  // Opens (or creates the temporary file for) `path`; throws InputError.
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Buffered; a failed write is reported by commit().
  std::ostream& stream();
  void write(std::string_view bytes);

  // Flushes and, for a regular file, renames the temporary file into place.
  // Throws InputError naming the path on any I/O failure (the temporary file
  // is then removed).
  void commit();

  const std::string& path() const { return path_; }
  // True when the output goes straight to a device, FIFO or stdout.
  bool direct() const;

  struct State;  // defined in output_file.cpp

 private:
  std::string path_;
  std::unique_ptr<State> state_;
};

// Writes `content` to `path` by the rules above, in one go.
void write_output_file(const std::string& path, std::string_view content);

}  // namespace sim
