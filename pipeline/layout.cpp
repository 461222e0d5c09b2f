#include "pipeline/layout.hpp"

#include <algorithm>

namespace ufab::pipeline {

namespace {

std::string list(const std::vector<unsigned>& v) {
  std::string s;
  for (const unsigned c : v) {
    if (!s.empty()) s.push_back(',');
    s.append(std::to_string(c));
  }
  return s;
}

// "C:W1,W2,..." -> worker lcores; C must be the main lcore (control runs there).
std::vector<unsigned> parse_map(const std::string& map, const std::vector<unsigned>& lcores) {
  const auto bad = [&](const std::string& why) {
    return LayoutError("--lcore-map '" + map + "': " + why + " (EAL lcores: " + list(lcores) + ", main " +
                       std::to_string(lcores[0]) + "; e.g. --lcore-map " + std::to_string(lcores[0]) + ":" +
                       (lcores.size() > 1 ? std::to_string(lcores[1]) : std::string("1")) + ")");
  };
  const size_t colon = map.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == map.size()) throw bad("expected C:W1,W2,...");
  std::vector<unsigned> out;
  size_t pos = 0;
  const auto number = [&](const std::string& t) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 4) throw bad("'" + t + "' is not an lcore id");
    return static_cast<unsigned>(std::stoul(t));
  };
  const unsigned control = number(map.substr(0, colon));
  if (control != lcores[0]) throw bad("the control lcore must be the EAL's main lcore " + std::to_string(lcores[0]));
  pos = colon + 1;
  while (pos <= map.size()) {
    const size_t comma = std::min(map.find(',', pos), map.size());
    const unsigned w = number(map.substr(pos, comma - pos));
    if (std::find(lcores.begin(), lcores.end(), w) == lcores.end())
      throw bad("lcore " + std::to_string(w) + " is not an EAL lcore: add it to -l");
    if (w == control || std::find(out.begin(), out.end(), w) != out.end())
      throw bad("lcore " + std::to_string(w) + " given twice");
    out.push_back(w);
    pos = comma + 1;
  }
  return out;
}

}  // namespace

const char* to_string(RxMode m) {
  switch (m) {
    case RxMode::dispatch: return "dispatch";
    case RxMode::spread: return "spread";
    case RxMode::steered: return "steered";
  }
  return "?";
}

uint16_t rx_queues_for(size_t workers, uint16_t max_rxq, const std::string& driver, bool per_worker, std::string* why) {
  std::string w;
  if (workers <= 1)
    w = "one worker";
  else if (!per_worker)
    w = "--rx-queues one";
  else if (driver == "net_memif")
    w = "memif: both ends must ask for the same number of rings";
  else if (max_rxq < workers)
    w = "the PMD has " + std::to_string(max_rxq) + " RX queue(s) for " + std::to_string(workers) + " workers";
  if (why != nullptr) *why = w;
  return w.empty() ? static_cast<uint16_t>(workers) : 1;
}

Layout make_layout(const edge::EdgeConfig& cfg, uint16_t n_ports, const std::vector<unsigned>& lcores,
                   unsigned workers, const std::string& lcore_map) {
  Layout l;
  const size_t n_lcores = lcores.size();
  if (!lcore_map.empty()) {
    l.mixed = false;
    l.control_lcore = lcores[0];
    l.worker_lcores = parse_map(lcore_map, lcores);
  } else if (workers == 0) {
    workers = n_lcores <= 1 ? 1 : static_cast<unsigned>(n_lcores - 1);
  }
  if (!lcore_map.empty()) {
  } else if (workers == 1 && n_lcores == 1) {
    l.mixed = true;
    l.control_lcore = lcores[0];
    l.worker_lcores = {lcores[0]};
  } else {
    if (n_lcores < workers + 1) {
      const std::string have = list(lcores);
      throw LayoutError("--workers " + std::to_string(workers) + " needs " + std::to_string(workers + 1) +
                        " lcores (1 control + " + std::to_string(workers) + " workers), the EAL has " +
                        std::to_string(n_lcores) + " (-l " + have + "): give more lcores, e.g. -l 0-" +
                        std::to_string(workers) + " or, with fewer cores, --lcores '(0-" + std::to_string(workers) +
                        ")@(0,1)' (lcores may share cores), or ask for fewer workers");
    }
    l.mixed = false;
    l.control_lcore = lcores[0];
    l.worker_lcores.assign(lcores.begin() + 1, lcores.begin() + 1 + workers);
  }
  // Local VMs to workers: each VM to the worker with the fewest pairs so far
  // (config order, ties to the lower worker), so shards stay balanced.
  std::vector<size_t> load(l.workers(), 0);
  l.vm_by_id.assign(65536, -1);
  l.retired_owner.assign(65536, Layout::kNoWorker);
  for (size_t v = 0; v < cfg.vms.size(); ++v) {
    size_t pairs = 0;
    for (const edge::VmCfg& r : cfg.remote_vms) pairs += r.vni == cfg.vms[v].vni;
    const auto w = static_cast<uint16_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[w] += std::max<size_t>(pairs, 1);
    l.vm_owner.push_back(w);
    l.vm_by_id[cfg.vms[v].id] = static_cast<int32_t>(v);
  }
  // RX lcores: a VM port to the owner of its first VM; each fabric port, then
  // each VM-side port without a VM, to the worker polling the fewest ports so
  // far.
  l.rx_worker.assign(n_ports, -1);
  l.rx_mode.assign(n_ports, RxMode::dispatch);
  l.rx_queues.assign(n_ports, 1);
  l.rx_why.assign(n_ports, "");
  for (size_t v = 0; v < cfg.vms.size(); ++v) {
    const uint16_t p = cfg.vms[v].port;
    if (p < n_ports && l.rx_worker[p] < 0) l.rx_worker[p] = l.vm_owner[v];
  }
  for (const uint16_t fp : cfg.fabric_ports)
    if (fp < n_ports) l.rx_worker[fp] = l.worker_polling_fewest();
  // A VM-side port no VM names at start-up (one kept for a VM a reload adds,
  // e.g. a vhost-user socket a VM connects to later: local_vms.hpp) is
  // polled too, by the worker polling the fewest ports so far; until a VM
  // is added its frames are unknown_pair.
  for (uint16_t p = 0; p < n_ports; ++p)
    if (l.rx_worker[p] < 0 && !cfg.is_fabric_port(p)) l.rx_worker[p] = l.worker_polling_fewest();
  return l;
}

}  // namespace ufab::pipeline
