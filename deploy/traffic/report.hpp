// ufab-traffic's outputs: the final lines on stdout, the JSON summary and
// the CSV time series.
#pragma once

#include <string>

#include "deploy/traffic/engine.hpp"

namespace ufab::traffic {

void print_report(const Engine& e, bool gen);
// Throws std::runtime_error naming the file when it cannot be written.
void write_json(const Engine& e, bool gen, const std::string& path);
void write_csv(const Engine& e, const std::string& path);

}  // namespace ufab::traffic
