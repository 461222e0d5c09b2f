// Minimal JSON for the conformance vectors (json_lite.hpp).
#include "tests/p4/json_lite.hpp"

#include <stdexcept>

namespace ufab::p4vec {

const Json& Json::at(std::string_view key) const {
  if (kind != Kind::object) throw std::runtime_error("json: not an object");
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  throw std::runtime_error("json: missing key " + std::string(key));
}
bool Json::has(std::string_view key) const {
  if (kind != Kind::object) return false;
  for (const auto& f : fields)
    if (f.first == key) return true;
  return false;
}
uint64_t Json::u() const {
  if (kind != Kind::number) throw std::runtime_error("json: not a number");
  return num;
}
bool Json::b() const {
  if (kind != Kind::boolean) throw std::runtime_error("json: not a boolean");
  return flag;
}
const std::string& Json::s() const {
  if (kind != Kind::string) throw std::runtime_error("json: not a string");
  return str;
}
const std::vector<Json>& Json::arr() const {
  if (kind != Kind::array) throw std::runtime_error("json: not an array");
  return items;
}

namespace {

bool scalar(const Json& j) { return j.kind != Json::Kind::array && j.kind != Json::Kind::object; }
bool flat(const Json& j) {
  for (const auto& f : j.fields)
    if (!scalar(f.second)) return false;
  for (const auto& i : j.items)
    if (!scalar(i)) return false;
  return true;
}

void write(const Json& j, std::string& out, int depth) {
  switch (j.kind) {
    case Json::Kind::number: out += std::to_string(j.num); return;
    case Json::Kind::boolean: out += j.flag ? "true" : "false"; return;
    case Json::Kind::string:
      out.push_back('"');
      out.append(j.str);
      out.push_back('"');
      return;
    default: break;
  }
  const bool obj = j.kind == Json::Kind::object;
  const size_t n = obj ? j.fields.size() : j.items.size();
  const char open = obj ? '{' : '[', close = obj ? '}' : ']';
  if (n == 0) {
    out += open;
    out += close;
    return;
  }
  const bool one_line = flat(j);
  const std::string pad(static_cast<size_t>(2 * (depth + 1)), ' ');
  out += open;
  for (size_t i = 0; i < n; ++i) {
    if (!one_line) {
      out.push_back('\n');
      out.append(pad);
    } else if (i) {
      out.push_back(' ');
    }
    if (obj) {
      out.push_back('"');
      out.append(j.fields[i].first);
      out.append("\": ");
    }
    write(obj ? j.fields[i].second : j.items[i], out, depth + 1);
    if (i + 1 < n) out += ',';
  }
  if (!one_line) {
    out.push_back('\n');
    out.append(static_cast<size_t>(2 * depth), ' ');
  }
  out += close;
}

struct Reader {
  std::string_view t;
  size_t p = 0;
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error("json: " + std::string(what) + " at offset " + std::to_string(p));
  }
  void ws() {
    while (p < t.size() && (t[p] == ' ' || t[p] == '\n' || t[p] == '\r' || t[p] == '\t')) ++p;
  }
  bool eat(char c) {
    ws();
    if (p < t.size() && t[p] == c) return ++p, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail("unexpected character");
  }
  std::string str() {
    expect('"');
    const size_t e = t.find('"', p);
    if (e == std::string_view::npos) fail("unterminated string");
    std::string s(t.substr(p, e - p));
    if (s.find('\\') != std::string::npos) fail("escapes are not supported");
    p = e + 1;
    return s;
  }
  Json value() {
    ws();
    if (p >= t.size()) fail("unexpected end");
    const char c = t[p];
    if (c == '"') return Json::string(str());
    if (c == '{') {
      ++p;
      Json o = Json::object();
      if (eat('}')) return o;
      do {
        std::string k = str();
        expect(':');
        o.add(std::move(k), value());
      } while (eat(','));
      expect('}');
      return o;
    }
    if (c == '[') {
      ++p;
      Json a = Json::array();
      if (eat(']')) return a;
      do a.push(value());
      while (eat(','));
      expect(']');
      return a;
    }
    if (t.substr(p, 4) == "true") return p += 4, Json::boolean(true);
    if (t.substr(p, 5) == "false") return p += 5, Json::boolean(false);
    if (c < '0' || c > '9') fail("expected a value");
    uint64_t v = 0;
    while (p < t.size() && t[p] >= '0' && t[p] <= '9') {
      const uint64_t d = static_cast<uint64_t>(t[p++] - '0');
      if (v > (UINT64_MAX - d) / 10) fail("number too large");
      v = v * 10 + d;
    }
    return Json::number(v);
  }
};

}  // namespace

std::string to_text(const Json& j) {
  std::string out;
  write(j, out, 0);
  out += '\n';
  return out;
}

Json parse_json(std::string_view text) {
  Reader r{text};
  Json j = r.value();
  r.ws();
  if (r.p != text.size()) r.fail("trailing characters");
  return j;
}

}  // namespace ufab::p4vec
