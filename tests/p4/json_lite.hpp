// A minimal JSON value, writer and reader for the P4 conformance vectors
// (tests/p4/README.md). Only what the vector files use: objects (key order
// kept), arrays, unsigned integers, booleans and strings without escapes.
// The writer is deterministic, so regenerated files compare byte for byte.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ufab::p4vec {

struct Json {
  enum class Kind : uint8_t { number, boolean, string, array, object };
  Kind kind = Kind::number;
  uint64_t num = 0;
  bool flag = false;
  std::string str;
  std::vector<Json> items;                           // array
  std::vector<std::pair<std::string, Json>> fields;  // object, in order

  static Json number(uint64_t v) { Json j; j.num = v; return j; }
  static Json boolean(bool v) { Json j; j.kind = Kind::boolean; j.flag = v; return j; }
  static Json string(std::string v) { Json j; j.kind = Kind::string; j.str = std::move(v); return j; }
  static Json array() { Json j; j.kind = Kind::array; return j; }
  static Json object() { Json j; j.kind = Kind::object; return j; }

  Json& add(std::string key, Json v) { fields.emplace_back(std::move(key), std::move(v)); return *this; }
  Json& push(Json v) { items.push_back(std::move(v)); return *this; }
  // Throws std::runtime_error if missing or of another kind.
  const Json& at(std::string_view key) const;
  bool has(std::string_view key) const;
  uint64_t u() const;
  bool b() const;
  const std::string& s() const;
  const std::vector<Json>& arr() const;
};

// Objects with only scalar members are written on one line, everything else
// one member per line with two-space indentation; the text ends with "\n".
std::string to_text(const Json& j);
// Throws std::runtime_error on malformed input.
Json parse_json(std::string_view text);

}  // namespace ufab::p4vec
