// Shared by the application-option tests (test_edge_options,
// test_core_options): a parser run on a command line given as words, and the
// message it throws ("" when the words are accepted).
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ufab::testing {

// parse(std::span<char*>) on argv = {program, words...}, null-terminated.
template <typename Parse>
auto parse_words(Parse parse, const char* program, std::vector<std::string> words) {
  words.insert(words.begin(), program);
  std::vector<char*> argv;
  for (std::string& a : words) argv.push_back(a.data());
  argv.push_back(nullptr);
  return parse(std::span<char*>(argv.data(), words.size()));
}

template <typename Error, typename Parse>
std::string error_of_words(Parse parse, const char* program, std::vector<std::string> words) {
  try {
    parse_words(parse, program, std::move(words));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace ufab::testing
