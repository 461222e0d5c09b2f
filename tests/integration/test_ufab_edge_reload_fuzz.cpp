// Random reloads against a real Edge (in process, one worker; port 0 the
// VM side, port 1 the fabric), each checked against a model of the file it
// loaded (pipeline/reload.hpp, tenants.hpp, local_vms.hpp, remote_vms.hpp).
//
// Each step draws a configuration at random: up to four tenants (VNIs
// 100..400) with distinct tags from {untagged, VLAN 10..13, QinQ [5, 10],
// [5, 11], [6, 10]} and a random guarantee; local VMs 1..6 and remote VMs
// 11..22, each present or not, of a random present tenant, the remote ones
// on host hB or hC; hB's base RTT 100 or 200 us (a host change). So one
// reload adds, removes, re-tags (tags swapped between tenants too) and
// changes tenants, VMs and hosts at once. The edge applies it or refuses it
// for want of room (spare slots; a removed pair's slot frees once its
// finish gives up); a refusal must name what and apply nothing.
//
// After each step, against the model of the last file applied:
//  - the live tenants are the file's, and every tag of the pool names the
//    tenant that has it (vlan_tenant, qinq_tenant) or none;
//  - each local VM's frame to each remote VM of its tenant, with its
//    tenant's tags, leaves on the fabric with that VNI and pair id
//    (local << 16 | remote), and nothing else does (window gating off);
//  - each remote VM's data to each local VM of its tenant reaches port 0
//    with the tenant's tags, and nothing else arrives there;
//  - rx + generated = queued + dropped + sent + absorbed.
// Then time runs on (the pairs' timers) so finishes give up and free slots.
// Over the run every kind of change must have happened, and most reloads
// must have been applied, so the test cannot pass by refusing everything.
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/stages.hpp"
#include "pipeline/vlan.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/in_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

struct Tags {
  uint16_t svlan = 0, vlan = 0;
  bool operator==(const Tags&) const = default;
};
const Tags kTagPool[] = {{0, 0}, {0, 10}, {0, 11}, {0, 12}, {0, 13}, {5, 10}, {5, 11}, {6, 10}};

struct Tenant {
  uint32_t vni = 0;
  Tags tags;
  int gbps = 1;
};
struct Vm {
  uint16_t id = 0;
  uint32_t vni = 0;
  int host = 0;  // remote VMs: 0 hB, 1 hC
};
struct Model {
  std::vector<Tenant> tenants;
  std::vector<Vm> locals, remotes;
  int rtt_b = 100;
  bool host_c = false;
  const Tenant* tenant(uint32_t vni) const {
    for (const Tenant& t : tenants)
      if (t.vni == vni) return &t;
    return nullptr;
  }
};

uint32_t vm_ip(uint16_t id) { return 0xc0a80000u | uint32_t{id} << 8 | 1; }  // 192.168.<id>.1
constexpr uint32_t kHostIp[] = {0x0a000002, 0x0a000003};                     // hB, hC

Model random_model(std::mt19937& rng) {
  std::bernoulli_distribution coin(0.6);
  Model m;
  std::vector<Tags> pool(std::begin(kTagPool), std::end(kTagPool));
  std::shuffle(pool.begin(), pool.end(), rng);
  for (uint32_t vni = 100; vni <= 400; vni += 100)
    if (coin(rng)) m.tenants.push_back({vni, pool[m.tenants.size()], static_cast<int>(rng() % 4) + 1});
  if (m.tenants.empty()) m.tenants.push_back({100, pool[0], 1});
  std::shuffle(m.tenants.begin(), m.tenants.end(), rng);  // tenants are matched by VNI, not place
  const auto any_tenant = [&] { return m.tenants[rng() % m.tenants.size()].vni; };
  for (uint16_t id = 1; id <= 6; ++id)
    if (coin(rng)) m.locals.push_back({id, any_tenant(), 0});
  if (m.locals.empty()) m.locals.push_back({static_cast<uint16_t>(rng() % 6 + 1), any_tenant(), 0});  // the edge needs one
  for (uint16_t id = 11; id <= 22; ++id)
    if (coin(rng)) m.remotes.push_back({id, any_tenant(), static_cast<int>(rng() % 2)});
  m.rtt_b = rng() % 5 == 0 ? 200 : 100;
  m.host_c = std::bernoulli_distribution(0.3)(rng);
  for (const Vm& r : m.remotes) m.host_c = m.host_c || r.host == 1;
  return m;
}

std::string render(const Model& m) {
  std::string s = R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1, window_gating: false, spare_tenants: 4, spare_pairs: 48, spare_local_vms: 8,
         spare_remote_vms: 16, spare_hosts: 4}
tenants:
)";
  for (const Tenant& t : m.tenants) {
    s += "  - {vni: " + std::to_string(t.vni) + ", guarantee_gbps: " + std::to_string(t.gbps);
    if (t.tags.svlan != 0)
      s += ", qinq: [" + std::to_string(t.tags.svlan) + ", " + std::to_string(t.tags.vlan) + "]";
    else if (t.tags.vlan != 0)
      s += ", vlan: " + std::to_string(t.tags.vlan);
    s += "}\n";
  }
  s += "vms:\n";
  char buf[200];
  for (const Vm& v : m.locals) {
    std::snprintf(buf, sizeof buf,
                  "  - {name: a%u, id: %u, tenant: %u, mac: \"02:00:00:00:0a:%02x\", ip: 192.168.%u.1, port: 0}\n",
                  v.id, v.id, v.vni, v.id, v.id);
    s += buf;
  }
  s += "hosts:\n";
  s += "  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: " + std::to_string(m.rtt_b) +
       ", paths: [[1]]}\n";
  if (m.host_c) s += "  - {name: hC, ip: 10.0.0.3, mac: \"02:00:00:00:00:03\", base_rtt_us: 100, paths: [[2]]}\n";
  s += "remote_vms:";
  s += m.remotes.empty() ? " []\n" : "\n";
  for (const Vm& v : m.remotes) {
    std::snprintf(buf, sizeof buf, "  - {name: b%u, id: %u, tenant: %u, ip: 192.168.%u.1, host: %s}\n", v.id, v.id,
                  v.vni, v.id, v.host == 0 ? "hB" : "hC");
    s += buf;
  }
  return s;
}

Frame with_tags(const Frame& f, Tags t) {
  if (t.svlan != 0) return qinq(f, t.svlan, t.vlan);
  return t.vlan != 0 ? tagged(f, t.vlan) : f;
}

// (VNI, pair id) of every data frame that left on the fabric.
std::multiset<std::pair<uint32_t, uint32_t>> fabric_data(const std::vector<rte_mbuf*>& ms) {
  std::multiset<std::pair<uint32_t, uint32_t>> out;
  for (rte_mbuf* m : ms) {
    const std::span<const uint8_t> fr(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
    wire::FrameView v;
    if (wire::parse_frame(fr, v) == wire::WireError::ok && v.shim.next == wire::kNextData)
      out.emplace(v.shim.vni, v.shim.pair_id);
  }
  return out;
}

struct Tally {
  int steps = 0, applied = 0, refused = 0;
  std::map<std::string, int> kinds;  // what the applied reloads' replies named
};

// The kinds of change a reply names ("tenant 200 added: ...", "local VM a3
// changed (...)", ...), counted by kind.
const char* const kKinds[] = {"tenant added", "tenant removed", "tenant re-tagged", "guarantee changed",
                              "local VM added", "local VM removed", "local VM changed", "remote VM added",
                              "remote VM removed", "remote VM changed", "host hB changed"};

void note_kinds(const std::vector<std::string>& changes, Tally& t) {
  const auto starts = [](const std::string& c, const char* p) { return c.rfind(p, 0) == 0; };
  const auto has = [](const std::string& c, const char* p) { return c.find(p) != std::string::npos; };
  for (const std::string& c : changes) {
    if (starts(c, "tenant ")) {
      if (has(c, " added: ")) ++t.kinds["tenant added"];
      if (has(c, " removed")) ++t.kinds["tenant removed"];
      if (has(c, " re-tagged: ")) ++t.kinds["tenant re-tagged"];
      if (has(c, ": guarantee_gbps ")) ++t.kinds["guarantee changed"];
    }
    for (const char* vm : {"local VM ", "remote VM "}) {
      if (!starts(c, vm)) continue;
      const std::string k = std::string(vm);
      if (has(c, " added (")) ++t.kinds[k + "added"];
      if (has(c, " removed: ")) ++t.kinds[k + "removed"];
      if (has(c, " changed (")) ++t.kinds[k + "changed"];
    }
    if (starts(c, "host hB changed")) ++t.kinds["host hB changed"];
  }
}

void run(const std::string& dir, uint32_t seed, int steps, Tally& tally) {
  std::mt19937 rng(seed);
  const std::string file = dir + "/edge_" + std::to_string(seed) + ".yaml";
  Model applied = random_model(rng);
  write_text(file, render(applied));
  EdgeRig r(render(applied), "rlf" + std::to_string(seed), file);
  pipeline::Edge& e = r.e;
  pipeline::EdgeState& s = r.s;
  PortOut out0(s, 0, "rlf_out0_" + std::to_string(seed));
  uint64_t fabric_out = 0;
  Nanos now = 1'000'000;

  for (int step = 0; step < steps && itest::g_failures == 0; ++step) {
    ++tally.steps;
    const Model next = random_model(rng);
    write_text(file, render(next));
    const pipeline::Control::ReloadResult rr = e.control.reload(now);
    if (std::getenv("UFAB_RELOAD_FUZZ_TRACE") != nullptr) {
      std::printf("seed %u step %d: %s\n", seed, step, rr.ok ? "applied" : rr.error.c_str());
      for (const std::string& c : rr.changes) std::printf("  [%s]\n", c.c_str());
    }
    if (rr.ok) {
      applied = next;
      ++tally.applied;
      note_kinds(rr.changes, tally);
    } else {
      ++tally.refused;
      ITEST_CHECK(rr.error.find("nothing applied") != std::string::npos &&
                      (rr.error.find("room for") != std::string::npos || rr.error.find("slot(s)") != std::string::npos),
                  "seed %u step %d: refused for another reason than room: %s", seed, step, rr.error.c_str());
    }

    // The tenants and their tags, against the model.
    std::string live;
    std::vector<uint32_t> vnis, live_vnis;
    for (const Tenant& t : applied.tenants) vnis.push_back(t.vni);
    for (const edge::TenantCfg& t : e.cfg.tenants)
      if (!t.removed) {
        live_vnis.push_back(t.vni);
        live += std::to_string(t.vni) + " ";
      }
    std::sort(vnis.begin(), vnis.end());
    std::sort(live_vnis.begin(), live_vnis.end());
    ITEST_CHECK(live_vnis == vnis, "seed %u step %d: live tenants %s", seed, step, live.c_str());
    for (const Tags& tag : kTagPool) {
      if (tag.vlan == 0) continue;
      int owner = -1;
      for (const Tenant& t : applied.tenants)
        if (t.tags == tag && e.cfg.tenant(t.vni) != nullptr) owner = static_cast<int>(e.cfg.tenant_index(t.vni));
      const int got = tag.svlan != 0 ? e.cfg.qinq_tenant(tag.svlan, tag.vlan) : e.cfg.vlan_tenant(tag.vlan);
      ITEST_CHECK(got == owner, "seed %u step %d: tags [%u, %u] name entry %d, want %d", seed, step, tag.svlan, tag.vlan,
                  got, owner);
    }

    // Every local VM to every remote VM of its tenant, with its tags.
    std::vector<Frame> vm_in;
    std::multiset<std::pair<uint32_t, uint32_t>> want_out;
    std::vector<Frame> fab_in;
    std::vector<Tags> want_tags;
    for (const Vm& l : applied.locals)
      for (const Vm& rv : applied.remotes) {
        if (l.vni != rv.vni) continue;
        const Tags tags = applied.tenant(l.vni)->tags;
        vm_in.push_back(with_tags(vm_frame(vm_ip(l.id), vm_ip(rv.id), static_cast<uint16_t>(1000 + step), 64,
                                           static_cast<uint8_t>(step)),
                                  tags));
        want_out.emplace(l.vni, uint32_t{l.id} << 16 | rv.id);
        fab_in.push_back(ufab_frame(kHostIp[rv.host], rv.vni, uint32_t{rv.id} << 16 | l.id, route({0}),
                                    wire::kNextData, vm_frame(vm_ip(rv.id), vm_ip(l.id), 2000, 64, 1)));
        want_tags.push_back(tags);
      }
    if (!vm_in.empty()) r.receive(0, vm_in, now);
    now += 10'000;
    std::vector<rte_mbuf*> out = r.fabric_tx();
    const auto got_out = fabric_data(out);
    fabric_out += out.size();
    for (rte_mbuf* m : out) rte_pktmbuf_free(m);
    ITEST_CHECK(got_out == want_out, "seed %u step %d: %zu data frames to the fabric, want %zu", seed, step,
                got_out.size(), want_out.size());
    out0.drain();
    out0.got.clear();
    if (!fab_in.empty()) r.receive(1, fab_in, now);
    now += 10'000;
    out0.drain();
    size_t right_tags = 0;
    for (size_t i = 0; i < out0.got.size() && i < want_tags.size(); ++i) {
      const pipeline::VlanTags t = pipeline::read_tags(out0.got[i].data(), static_cast<uint32_t>(out0.got[i].size()));
      right_tags += Tags{t.svlan, t.vlan} == want_tags[i];
    }
    ITEST_CHECK(out0.got.size() == fab_in.size() && right_tags == fab_in.size(),
                "seed %u step %d: %zu frames delivered to port 0 (%zu with their tenant's tags), want %zu", seed, step,
                out0.got.size(), right_tags, fab_in.size());

    // Time runs on: the pairs' timers (probes, finishes and their retries).
    for (int i = 0; i < 40; ++i) {
      now += 1'000'000;
      pipeline::poll_pairs(s, now);
      for (pipeline::TxBuffer& t : s.tx) t.flush();
      out = r.fabric_tx();
      fabric_out += out.size();
      for (rte_mbuf* m : out) rte_pktmbuf_free(m);
    }
    out0.drain();
    const uint64_t sent = out0.count + fabric_out;
    ITEST_CHECK(s.stats.rx() + s.stats.generated == s.queued() + s.stats.dropped() + sent + s.stats.absorbed,
                "seed %u step %d: rx %llu + generated %llu != queued %llu + dropped %llu + sent %llu + absorbed %llu",
                seed, step, static_cast<unsigned long long>(s.stats.rx()),
                static_cast<unsigned long long>(s.stats.generated), static_cast<unsigned long long>(s.queued()),
                static_cast<unsigned long long>(s.stats.dropped()), static_cast<unsigned long long>(sent),
                static_cast<unsigned long long>(s.stats.absorbed));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = make_test_dir("ufab_edge_reload_fuzz");
  Tally tally;
  const int rc = run_in_process(
      argc, argv, "ufab_edge_reload_fuzz",
      [&] {
        for (const uint32_t seed : {1u, 2u, 3u, 4u}) run(dir, seed, 250, tally);
        std::printf("ufab_edge_reload_fuzz: %d reloads, %d applied, %d refused (room);", tally.steps, tally.applied,
                    tally.refused);
        for (const auto& [k, n] : tally.kinds) std::printf(" %s=%d", k.c_str(), n);
        std::printf("\n");
        ITEST_CHECK(tally.applied * 2 > tally.steps, "only %d of %d reloads applied", tally.applied, tally.steps);
        for (const char* k : kKinds) ITEST_CHECK(tally.kinds[k] > 0, "no applied reload made a change of kind '%s'", k);
      },
      "PASS: random reloads (tenants added, removed and re-tagged, VMs and hosts changed) match their files: tags, "
      "VNIs and pair ids on the wire, delivery tags, refusals apply nothing, every frame counted");
  if (rc == 0) std::filesystem::remove_all(dir);
  return rc;
}
