// ufab-p4-vectors: writes the P4 conformance vectors (tests/p4/README.md),
// one directory per case: in.pcap, out.pcap, state_in.json, state_out.json,
// case.json. Usage: ufab-p4-vectors OUT_DIR (normally tests/p4/vectors).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/p4/vector_cases.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  for (const auto& v : ufab::p4vec::make_all_vectors()) {
    const fs::path dir = fs::path(argv[1]) / v.name;
    fs::create_directories(dir);
    for (size_t i = 0; i < std::size(ufab::p4vec::kVectorFileNames); ++i) {
      std::ofstream f(dir / ufab::p4vec::kVectorFileNames[i], std::ios::binary | std::ios::trunc);
      const std::string bytes = ufab::p4vec::file_bytes(v, i);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!f) {
        std::fprintf(stderr, "cannot write %s\n", (dir / ufab::p4vec::kVectorFileNames[i]).c_str());
        return 1;
      }
    }
    std::printf("%s\n", dir.c_str());
  }
  return 0;
}
