#include "deploy/traffic/profile.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace ufab::traffic {

const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::constant: return "constant";
    case Pattern::onoff: return "onoff";
    case Pattern::incast: return "incast";
  }
  return "?";
}

namespace {

[[noreturn]] void bad(std::string_view key, std::string_view v, const char* what) {
  throw std::invalid_argument("--flow " + std::string(key) + "=" + std::string(v) + ": " + what);
}

double number(std::string_view key, std::string_view v, double lo, double hi) {
  const std::string s(v);
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  const std::string_view rest(end);
  if (rest == "K" || rest == "k") x *= 1e3;
  else if (rest == "M" || rest == "m") x *= 1e6;
  else if (rest == "G" || rest == "g") x *= 1e9;
  else if (!rest.empty() || end == s.c_str()) bad(key, v, "is not a number (suffixes K M G allowed)");
  if (!std::isfinite(x) || x < lo || x > hi) bad(key, v, "is out of range");
  return x;
}

uint32_t ipv4(std::string_view key, std::string_view v) {
  uint32_t ip = 0;
  int parts = 0;
  size_t b = 0;
  while (b <= v.size()) {
    const size_t e = std::min(v.find('.', b), v.size());
    ip = ip << 8 | static_cast<uint32_t>(number(key, v.substr(b, e - b), 0, 255));
    ++parts;
    b = e + 1;
  }
  if (parts != 4) bad(key, v, "is not an IPv4 address");
  return ip;
}

std::array<uint8_t, 6> mac(std::string_view key, std::string_view v) {
  std::array<uint8_t, 6> m{};
  if (v.size() != 17) bad(key, v, "is not a MAC address (aa:bb:cc:dd:ee:ff)");
  for (size_t i = 0; i < 6; ++i) {
    const std::string byte(v.substr(i * 3, 2));
    char* end = nullptr;
    const long x = std::strtol(byte.c_str(), &end, 16);
    if (*end != '\0' || (i < 5 && v[i * 3 + 2] != ':')) bad(key, v, "is not a MAC address (aa:bb:cc:dd:ee:ff)");
    m[i] = static_cast<uint8_t>(x);
  }
  return m;
}

uint64_t ms_to_ns(std::string_view key, std::string_view v) {
  return static_cast<uint64_t>(std::llround(number(key, v, 0, 1e9) * 1e6));
}

}  // namespace

FlowSpec parse_flow(const std::string& spec) {
  FlowSpec f;
  bool have_rate = false, have_dst = false, have_src = false;
  size_t b = 0;
  while (b < spec.size()) {
    const size_t e = std::min(spec.find(',', b), spec.size());
    const std::string_view kv = std::string_view(spec).substr(b, e - b);
    b = e + 1;
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) bad(kv, "", "must be key=value");
    const std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "port") f.port = static_cast<uint16_t>(number(k, v, 0, 1023));
    else if (k == "tenant") f.tenant = static_cast<uint32_t>(number(k, v, 0, 0xffffff));
    else if (k == "flow") f.flow = static_cast<uint32_t>(number(k, v, 0, 0xffffffff));
    else if (k == "src") { f.src_ip = ipv4(k, v); have_src = true; }
    else if (k == "dst") { f.dst_ip = ipv4(k, v); have_dst = true; }
    else if (k == "smac") f.src_mac = mac(k, v);
    else if (k == "dmac") f.dst_mac = mac(k, v);
    else if (k == "sport") f.src_port = static_cast<uint16_t>(number(k, v, 1, 65535));
    else if (k == "dport") f.dst_port = static_cast<uint16_t>(number(k, v, 1, 65535));
    else if (k == "size") f.frame_bytes = static_cast<uint16_t>(number(k, v, 42 + 28, 1514));
    else if (k == "rate") { f.rate_bps = static_cast<uint64_t>(number(k, v, 1e3, 400e9)); have_rate = true; }
    else if (k == "pattern") {
      if (v == "constant") f.pattern = Pattern::constant;
      else if (v == "onoff") f.pattern = Pattern::onoff;
      else if (v == "incast") f.pattern = Pattern::incast;
      else bad(k, v, "is not constant, onoff or incast");
    }
    else if (k == "start_ms") f.start_ns = ms_to_ns(k, v);
    else if (k == "stop_ms") f.stop_ns = ms_to_ns(k, v);
    else if (k == "on_ms") f.on_ns = ms_to_ns(k, v);
    else if (k == "off_ms") f.off_ns = ms_to_ns(k, v);
    else if (k == "period_ms") f.period_ns = ms_to_ns(k, v);
    else if (k == "burst_bytes") f.burst_bytes = static_cast<uint64_t>(number(k, v, 1, 1e12));
    else bad(k, v, "unknown key");
  }
  if (!have_rate) bad("rate", "", "is required");
  if (!have_src || !have_dst) bad(have_src ? "dst" : "src", "", "is required");
  if (f.stop_ns <= f.start_ns) bad("stop_ms", "", "must be after start_ms");
  if (f.pattern == Pattern::onoff && (f.on_ns == 0 || f.off_ns == 0)) bad("on_ms/off_ms", "", "onoff needs both > 0");
  if (f.pattern == Pattern::incast && (f.period_ns == 0 || f.burst_bytes == 0))
    bad("period_ms/burst_bytes", "", "incast needs both > 0");
  return f;
}

Pacer::Pacer(const FlowSpec& f) : f_(f) {
  // ps per frame = bits * 1e12 / rate; at >= 1 kbit/s and <= 1514 B this fits easily.
  gap_ps_ = static_cast<uint64_t>(static_cast<double>(f.frame_bytes) * 8e12 / static_cast<double>(f.rate_bps));
  if (gap_ps_ == 0) gap_ps_ = 1;
  next_ps_ = f.start_ns * 1000;
}

bool Pacer::on_at(uint64_t now) const {
  if (now < f_.start_ns || now >= f_.stop_ns) return false;
  if (f_.pattern == Pattern::onoff) return (now - f_.start_ns) % (f_.on_ns + f_.off_ns) < f_.on_ns;
  return true;
}

uint64_t Pacer::phase_start(uint64_t now) const {
  const uint64_t t = now - f_.start_ns;
  switch (f_.pattern) {
    case Pattern::constant: return f_.start_ns;
    case Pattern::onoff: return now - t % (f_.on_ns + f_.off_ns);
    case Pattern::incast: return now - t % f_.period_ns;
  }
  return f_.start_ns;
}

bool Pacer::due(uint64_t now) {
  if (!on_at(now)) return false;
  const uint64_t ps = phase_start(now);
  if (ps != cur_phase_) {  // a new on-phase or burst: demand starts afresh
    cur_phase_ = ps;
    phase_bytes_ = 0;
    if (f_.pattern == Pattern::incast) ++periods_;
    next_ps_ = std::max(next_ps_, ps * 1000);
  }
  if (f_.pattern == Pattern::incast && phase_bytes_ >= f_.burst_bytes) return false;
  const uint64_t now_ps = now * 1000;
  if (now_ps < next_ps_) return false;
  const uint64_t floor_ps = now_ps - std::min(now_ps, (kMaxCatchUpFrames - 1) * gap_ps_);
  next_ps_ = std::max(next_ps_, floor_ps);
  return true;
}

void Pacer::sent() {
  ++frames_;
  phase_bytes_ += f_.frame_bytes;
  next_ps_ += gap_ps_;
}

uint64_t Pacer::next_due(uint64_t now) const {
  if (now >= f_.stop_ns) return UINT64_MAX;
  if (now < f_.start_ns) return f_.start_ns;
  const uint64_t next = (next_ps_ + 999) / 1000;
  const uint64_t t = now - f_.start_ns;
  uint64_t phase_end = f_.stop_ns, next_phase = UINT64_MAX;
  if (f_.pattern == Pattern::onoff) {
    const uint64_t cyc = f_.on_ns + f_.off_ns, in = t % cyc;
    next_phase = now - in + cyc;
    if (in >= f_.on_ns) return std::min(next_phase, f_.stop_ns);
    phase_end = now - in + f_.on_ns;
  } else if (f_.pattern == Pattern::incast) {
    next_phase = now - t % f_.period_ns + f_.period_ns;
    if (phase_start(now) == cur_phase_ && phase_bytes_ >= f_.burst_bytes) return std::min(next_phase, f_.stop_ns);
  }
  if (next < phase_end) return std::max(next, now);
  return std::min(next_phase, f_.stop_ns);
}

}  // namespace ufab::traffic
