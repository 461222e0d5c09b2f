// Shared by the ufab-edge configuration tests: the message parse_config()
// throws for a configuration text ("" when it is accepted).
#pragma once

#include <string>

#include "edge/config.hpp"

namespace ufab::edge::testing {

inline std::string error_of(const std::string& text) {
  try {
    parse_config(text, "t.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ufab::edge::testing
