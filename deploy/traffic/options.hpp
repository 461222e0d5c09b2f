// ufab-traffic's command line (after the EAL's "--").
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "deploy/traffic/profile.hpp"

namespace ufab::traffic {

struct OptionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  bool gen = false;              // mode word: gen (flows + sink on every port) or sink
  std::vector<FlowSpec> flows;   // --flow, repeatable
  uint64_t duration_ns = 0;      // --duration-ms: stop at t0 + duration (0: until a signal or idle exit)
  uint64_t t0_ns = 0;            // --t0-ns: scenario time 0, CLOCK_MONOTONIC (0: when the ports are up)
  uint64_t exit_after_idle_ns = 0;
  uint64_t interval_ns = 10'000'000;  // --interval-ms: time-series bin
  std::string json, csv;
  uint32_t burst = 32;
  uint32_t mbufs = 8191;
  bool quiet = false;
};

Options parse_options(std::span<char*> args);
const char* usage();

}  // namespace ufab::traffic
