// Test-only: reads TTGIR inputs kept next to the tests (backends/triton/testdata), small
// reproducers among them, and Triton-compiled fixtures with their figures (tests/data/triton/ops).
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_TESTDATA_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_TESTDATA_H_

#include <fstream>
#include <sstream>
#include <string>

namespace scratchsim::triton {

inline std::string TtgirTestdataPath(const std::string& name) {
  return std::string(SCRATCHSIM_SOURCE_DIR) + "/backends/triton/testdata/" + name;
}

// The file's text; empty if it cannot be read (tests assert on that).
inline std::string ReadTtgirTestdata(const std::string& name) {
  std::ifstream in(TtgirTestdataPath(name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fixture of tests/data/triton/ops (kernels compiled by Triton on the CPU, with their
// metadata.shared in <name>.json; its README has the command): the text, empty if unreadable.
inline std::string ReadTritonOpsFixture(const std::string& name) {
  std::ifstream in(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/ops/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_TESTDATA_H_
