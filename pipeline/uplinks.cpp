// Fabric uplinks that lose their link (Control::follow_uplinks). With two or
// more fabric ports (edge.fabric_port: [1, 2]) every path names the uplink
// its frames leave on. When that uplink's link goes down (the PMD's link
// event, or the 10 ms poll: port_link.hpp) the edge knows at once what the
// probes on those paths show late or not at all (a loss per probe timeout,
// which makes the five violating RTTs in a row of trigger (i), §3.5, only
// for a window-limited pair with data to send): its paths are drained as
// /ufab/path_drain would, so a pair active on one
// queries its other paths and moves to a qualified one (§3.6's migration
// after a failure notice), and no pair selects one. When the link comes
// back they are candidates again, except those the operator drained.
// A finish pending on such a path, or started on it while the link is
// down (the pair leaving it, going idle, the edge's stop), is abandoned
// (VmPair::set_path_unreachable): it could not leave, and its retries
// would only hold up a stop. A host's responses and finish-acks take one
// of its paths on an uplink that is up while its reply path's uplink is
// down (any route to the host carries them: a response reflects the
// probe's records, not its route).
// An edge with one uplink has nowhere else to go: nothing is drained there.
#include <algorithm>
#include <string>

#include "pipeline/control.hpp"
#include "pipeline/edge.hpp"
#include "pipeline/log.hpp"

namespace ufab::pipeline {

bool Control::path_unusable(size_t h, size_t k) const {
  return drained[h][k] || uplink_is_down(e_.cfg.hosts[h].paths[k].port);
}

std::vector<uint8_t> Control::paths_on(uint16_t port, bool with_drained) const {
  const edge::EdgeConfig& c = e_.cfg;
  std::vector<uint8_t> mask(c.hosts.size(), 0);
  for (size_t h = 0; h < c.hosts.size(); ++h)
    for (size_t k = 0; k < c.hosts[h].paths.size(); ++k)
      if (c.hosts[h].paths[k].port == port && (with_drained || !drained[h][k]))
        mask[h] |= static_cast<uint8_t>(1u << k);
  return mask;
}

int Control::reply_choice(size_t h) const {
  const edge::HostCfg& hc = e_.cfg.hosts[h];
  if (!uplink_is_down(hc.reply_path.port)) return -1;
  int up = -1;  // a path the operator drained only if no other is up
  for (size_t k = 0; k < hc.paths.size(); ++k) {
    if (uplink_is_down(hc.paths[k].port)) continue;
    if (!drained[h][k]) return static_cast<int>(k);
    if (up < 0) up = static_cast<int>(k);
  }
  return up;
}

void Control::follow_replies() {
  const edge::EdgeConfig& c = e_.cfg;
  reply_via_.resize(c.hosts.size(), -1);
  for (size_t h = 0; h < c.hosts.size(); ++h) {
    const int k = reply_choice(h);
    if (k == reply_via_[h]) continue;
    reply_via_[h] = k;
    e_.on_workers([h, k](EdgeState& s) { s.use_reply(static_cast<uint32_t>(h), k); });
    if (!c.hosts[h].removed)
      UFAB_LOG(NOTICE, "host %s: responses and finish-acks by %s", c.hosts[h].name.c_str(),
               k < 0 ? "its reply path again" : ("path " + std::to_string(k) + " (the reply path's uplink is down)").c_str());
  }
}

void Control::host_added(size_t h) {
  reply_via_.resize(std::max(reply_via_.size(), h + 1), -1);
  reply_via_[h] = -1;  // add_host wrote the reply path
  follow_replies();
}

void Control::follow_uplinks() {
  const edge::EdgeConfig& c = e_.cfg;
  if (c.fabric_ports.size() < 2) return;
  bool changed = false;
  for (const uint16_t port : c.fabric_ports) {
    if (port >= e_.links.size()) continue;
    const bool down = e_.links[port].known_down();
    const bool first = uplink_seen_[port] == 0;  // down at start-up: drained, but no failover
    uplink_seen_[port] = 1;
    if (down == (uplink_down[port] != 0)) continue;
    uplink_down[port] = down ? 1 : 0;
    changed = true;
    if (down && !first) ++uplink_failovers;
    const std::vector<uint8_t> mask = paths_on(port, false);  // the operator's drains stay as they are
    const std::vector<uint8_t> on_port = paths_on(port, true);
    size_t paths = 0, stranded = 0;  // stranded: hosts with no usable path left (counted when down)
    for (size_t h = 0; h < c.hosts.size(); ++h) {
      if (mask[h] == 0 || c.hosts[h].removed) continue;
      paths += static_cast<size_t>(__builtin_popcount(mask[h]));
      if (!down) continue;
      bool left = false;
      for (size_t k = 0; k < c.hosts[h].paths.size(); ++k) left |= !path_unusable(h, k);
      stranded += left ? 0 : 1;
    }
    e_.on_workers([&](EdgeState& s) {
      for (uint32_t i = 0; i < s.pairs.size(); ++i) {
        const uint8_t m = mask[s.meta[i].host], all = on_port[s.meta[i].host];
        if (all == 0) continue;
        for (size_t k = 0; k < kMaxCandidatePaths; ++k) {
          if (m >> k & 1u) s.pairs[i].set_path_drained(k, down);
          if (all >> k & 1u) s.pairs[i].set_path_unreachable(k, down);  // finishes on it abandoned
        }
        s.wake(i);
      }
    });
    if (down)
      UFAB_LOG(NOTICE,
               "fabric port %u: link down%s; its %zu path(s) are drained until it is up (pairs on them move to "
               "another qualified path; %zu host(s) have none left)",
               port, first ? " at start-up" : "", paths, stranded);
    else
      UFAB_LOG(NOTICE, "fabric port %u: link up; its %zu path(s) are candidates again", port, paths);
  }
  if (changed) follow_replies();  // once, after every uplink that changed
}

}  // namespace ufab::pipeline
