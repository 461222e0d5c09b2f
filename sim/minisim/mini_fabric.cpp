#include "sim/minisim/mini_fabric.hpp"

#include <algorithm>
#include <stdexcept>

#include "probe/reflect.hpp"
#include "probe/units.hpp"

namespace ufab::sim {

namespace {
uint32_t host_ip(uint32_t host) { return 0x0a000000u | (host + 1); }  // 10.0.0.(host+1)
}  // namespace

MiniFabric::MiniFabric(FabricSpec spec) : spec_(std::move(spec)) {
  const size_t n_links = spec_.links.size();
  if (n_links + spec_.n_hosts > 256) throw std::invalid_argument("minisim: links + hosts must be <= 256");
  swmodel::SwitchConfig cfg;
  cfg.n_ports = static_cast<uint16_t>(n_links + spec_.n_hosts);
  cfg.aging_period = spec_.aging_period;
  cfg.tx_shift = spec_.switch_tx_shift;
  for (size_t l = 0; l < n_links; ++l) {
    const uint8_t code = wire::capacity_code_of(spec_.links[l].cap_bps);
    if (code == 0) throw std::invalid_argument("minisim: link " + std::to_string(l) + " capacity has no capacity code");
    cfg.cap_codes.push_back(code);
  }
  sw_ = std::make_unique<swmodel::SwitchModel>(cfg);
  links_.resize(n_links);
  for (size_t l = 0; l < n_links; ++l) links_[l].spec = spec_.links[l];

  hosts_.resize(spec_.n_hosts);
  host_pairs_.resize(spec_.n_hosts);
  for (uint32_t h = 0; h < spec_.n_hosts; ++h)
    gates_.push_back(std::make_unique<HostMigrationGate>(spec_.edge.freeze_max_rtts, spec_.seed * 1000 + h));
  pairs_.resize(spec_.pairs.size());
  for (size_t i = 0; i < spec_.pairs.size(); ++i) {
    const PairSpec& ps = spec_.pairs[i];
    if (ps.host >= spec_.n_hosts) throw std::invalid_argument("minisim: pair " + ps.name + " names an unknown host");
    if (ps.paths.empty()) throw std::invalid_argument("minisim: pair " + ps.name + " has no path");
    std::vector<uint8_t> hops;
    for (const auto& path : ps.paths) {
      if (path.empty() || path.size() > wire::kMaxHops) throw std::invalid_argument("minisim: bad path length for " + ps.name);
      for (uint16_t l : path)
        if (l >= n_links) throw std::invalid_argument("minisim: pair " + ps.name + " uses an unknown link");
      hops.push_back(static_cast<uint8_t>(path.size()));
    }
    pairs_[i].vm = std::make_unique<VmPair>(spec_.edge, static_cast<uint32_t>(i + 1), spec_.base_rtt, hops,
                                            gates_[ps.host].get(), spec_.seed * 7919 + i);
    pairs_[i].vm->set_assigned_token(ps.token);
    pairs_[i].demand_last = ps.start;
    host_pairs_[ps.host].push_back(i);
    at(ps.start, [this, h = ps.host] { wake_host(h); });
  }
  if (!spec_.vm_tokens.empty()) {
    const size_t n_vm = spec_.vm_tokens.size();
    vm_out_.resize(n_vm);
    vm_in_.resize(n_vm);
    for (size_t i = 0; i < spec_.pairs.size(); ++i) {
      const PairSpec& ps = spec_.pairs[i];
      if (ps.src_vm >= n_vm || ps.dst_vm >= n_vm) throw std::invalid_argument("minisim: pair " + ps.name + " names an unknown VM");
      vm_out_[ps.src_vm].push_back(i);
      vm_in_[ps.dst_vm].push_back(i);
    }
    for (size_t v = 0; v < n_vm; ++v) {
      senders_.emplace_back(spec_.vm_tokens[v]);
      senders_.back().resize(vm_out_[v].size());
      receivers_.emplace_back(spec_.vm_tokens[v]);
      receivers_.back().resize(vm_in_[v].size());
    }
    at(0, [this] { token_round(); });
  }
  at(0, [this] { poll_all(); });
}

// The control thread's token period (App. E): each source VM splits its
// tokens over its active pairs (Algorithm 1 sender), each destination VM
// arbitrates the tokens its incoming pairs request (receiver). A pair that is
// not active takes no part.
void MiniFabric::token_round() {
  for (size_t v = 0; v < vm_out_.size(); ++v) {
    std::vector<size_t> active;
    for (size_t i : vm_out_[v])
      if (backlogged(i) || pairs_[i].vm->inflight() > 0) active.push_back(i);
    senders_[v].resize(active.size());
    auto pt = senders_[v].pairs();
    for (size_t k = 0; k < active.size(); ++k)
      pt[k] = PairToken{pairs_[active[k]].vm->rate_Bps(), 0, pairs_[active[k]].vm->admitted_token()};
    senders_[v].assign(spec_.edge.unit_bw_Bps);
    for (size_t k = 0; k < active.size(); ++k) pairs_[active[k]].vm->set_assigned_token(pt[k].phi_S);

    std::vector<size_t> incoming;
    for (size_t i : vm_in_[v])
      if (pairs_[i].requested > 0) incoming.push_back(i);
    receivers_[v].resize(incoming.size());
    auto rt = receivers_[v].pairs();
    for (size_t k = 0; k < incoming.size(); ++k) rt[k] = PairToken{0, pairs_[incoming[k]].requested, kTokenUnbound};
    receivers_[v].admit();
    for (size_t k = 0; k < incoming.size(); ++k) pairs_[incoming[k]].admitted = rt[k].phi_D;
  }
  at(now_ + spec_.token_period, [this] { token_round(); });
}

MiniFabric::~MiniFabric() = default;

void MiniFabric::at(Nanos t, std::function<void()> fn) { events_.push(Event{t, ev_seq_++, std::move(fn)}); }

void MiniFabric::run_until(Nanos t) {
  while (!events_.empty() && events_.top().t <= t) {
    Event e = events_.top();
    events_.pop();
    now_ = e.t;
    e.fn();
  }
  now_ = t;
}

bool MiniFabric::backlogged(size_t i) {
  const PairSpec& ps = spec_.pairs[i];
  if (now_ < ps.start || now_ >= ps.stop) return false;
  if (ps.demand_bps <= 0) return true;
  PairRt& p = pairs_[i];
  if (now_ > p.demand_last) {  // paced demand: credit accrues at demand_bps
    p.demand_credit += static_cast<uint64_t>(ps.demand_bps / 8.0 * static_cast<double>(now_ - p.demand_last) * 1e-9);
    p.demand_last = now_;
  }
  return p.demand_credit >= spec_.mtu;
}

MiniFabric::PacketPtr MiniFabric::make_packet(size_t i, int path, bool control, const wire::Message* m) {
  const PairSpec& ps = spec_.pairs[i];
  const auto& labels = ps.paths[static_cast<size_t>(path)];
  auto pkt = std::make_shared<Packet>();
  pkt->control = control;
  pkt->pair = static_cast<uint32_t>(i);
  pkt->path = path;
  pkt->hops_left = static_cast<uint8_t>(labels.size());

  wire::SourceRoute route;
  route.n_labels = static_cast<uint8_t>(labels.size());
  for (size_t k = 0; k < labels.size(); ++k) route.label[k] = labels[k];
  wire::TunnelShim shim{control ? wire::kNextControl : wire::kNextData, ps.vni, static_cast<uint32_t>(i + 1)};
  const size_t head = wire::kShimBytes + route.wire_bytes();
  const size_t payload = control ? head + m->wire_bytes() : spec_.mtu - wire::kOuterBytes;
  pkt->frame.assign(wire::kOuterBytes + payload, 0);
  wire::OuterAddrs a;
  a.src_ip = host_ip(ps.host);
  a.dst_ip = 0x0a010000u | static_cast<uint32_t>(i + 1);
  a.src_port = static_cast<uint16_t>(0xc000 | path);
  std::span<uint8_t> out(pkt->frame);
  size_t off = wire::encode_outer(a, payload, out);
  off += wire::encode_shim(shim, out.subspan(off));
  off += wire::encode_route(route, out.subspan(off));
  if (control) wire::encode_message(*m, out.subspan(off));
  return pkt;
}

void MiniFabric::wake_host(uint32_t h) {
  if (!hosts_[h].nic_busy) host_send(h);
}

void MiniFabric::host_send(uint32_t h) {
  Host& host = hosts_[h];
  host.nic_busy = false;
  const auto& mine = host_pairs_[h];
  PacketPtr pkt;
  // Control messages first (probes, queries, finishes), then data round robin
  // over the pairs whose window allows.
  for (size_t i : mine) {
    wire::Message m;
    int path = 0;
    if (pairs_[i].vm->next_message(now_, backlogged(i), m, path)) {
      pkt = make_packet(i, path, true, &m);
      pairs_[i].control_bytes += pkt->frame.size();
      break;
    }
  }
  for (size_t k = 0; !pkt && k < mine.size(); ++k) {
    const size_t i = mine[(host.rr + k) % mine.size()];
    VmPair& vm = *pairs_[i].vm;
    if (vm.state() != VmPair::State::active || !backlogged(i)) continue;
    const double w = vm.window(now_);
    const uint64_t infl = vm.inflight();
    // Stochastic rounding to whole packets: send while inflight + u*mtu < w,
    // u uniform in [0, 1) per decision, so a window of 2.4 packets is used as
    // 2.4 packets on average instead of 2 or 3 (small windows are not biased).
    const double u = pairs_[i].dither.unit();
    if (w <= 0 || (infl > 0 && static_cast<double>(infl) + u * spec_.mtu >= w)) continue;
    pkt = make_packet(i, vm.active_path(), false, nullptr);
    vm.on_data_sent(static_cast<uint32_t>(pkt->frame.size()), now_);
    pairs_[i].sent += pkt->frame.size();
    if (spec_.pairs[i].demand_bps > 0) pairs_[i].demand_credit -= std::min<uint64_t>(pairs_[i].demand_credit, spec_.mtu);
    host.rr = (host.rr + k + 1) % mine.size();
  }
  if (!pkt) return;  // idle until a response, a poll or new demand wakes us
  host.nic_busy = true;
  const Nanos tx = static_cast<Nanos>(static_cast<double>(pkt->frame.size()) * 8e9 / static_cast<double>(spec_.host_bps));
  arrive(pkt, static_cast<uint16_t>(links_.size() + h));
  at(now_ + tx, [this, h] { host_send(h); });
}

void MiniFabric::arrive(PacketPtr p, uint16_t in_port) {
  const bool was_probe = p->control;
  const swmodel::Decision d = sw_->ingress(p->frame, in_port, now_);
  if (!d.forward) return;  // counted by the switch model per reason
  if (was_probe && d.port == in_port) {
    // The switch turned a probe to a down port into a failure notice and sent
    // it back out its ingress port. Links here are one-way, so the notice
    // reaches the sender after the propagation delay it has come so far.
    wire::FrameView v;
    wire::Message m;
    if (wire::parse_frame(p->frame, v) == wire::WireError::ok &&
        wire::decode_message(std::span<const uint8_t>(p->frame).subspan(v.payload_offset, v.payload_len), m) ==
            wire::WireError::ok &&
        m.type == wire::MsgType::failure) {
      Nanos back = 0;
      for (size_t k = 0; k < m.hop_index; ++k) back += spec_.links[spec_.pairs[p->pair].paths[static_cast<size_t>(p->path)][k]].prop;
      to_sender(p->pair, m, back);
    }
    return;
  }
  p->in_port = in_port;
  link_enqueue(d.port, std::move(p));
}

void MiniFabric::link_enqueue(uint16_t l, PacketPtr p) {
  Link& link = links_[l];
  link.stats.queue_bytes += p->frame.size();
  if (link.stats.queue_bytes > link.stats.max_queue_bytes) link.stats.max_queue_bytes = link.stats.queue_bytes;
  link.q.push(std::move(p));
  if (!link.busy) link_start(l);
}

void MiniFabric::link_start(uint16_t l) {
  Link& link = links_[l];
  if (link.q.empty()) {
    link.busy = false;
    return;
  }
  link.busy = true;
  PacketPtr p = link.q.front();
  link.q.pop();
  link.stats.queue_bytes -= p->frame.size();
  sw_->egress(p->frame, l, p->in_port, now_, link.stats.queue_bytes);  // stamp with the depth it leaves behind
  link.stats.tx_bytes += p->frame.size();
  const Nanos tx = static_cast<Nanos>(static_cast<double>(p->frame.size()) * 8e9 / static_cast<double>(link.spec.cap_bps));
  at(now_ + tx, [this, l] { link_start(l); });
  --p->hops_left;
  at(now_ + tx + link.spec.prop, [this, p, l] {
    if (p->hops_left == 0)
      deliver(p);
    else
      arrive(p, l);
  });
}

void MiniFabric::set_link_up(uint16_t l, bool up) {
  sw_->set_port_up(l, up);
  if (up) return;
  Link& link = links_[l];
  while (!link.q.empty()) {  // a failed link loses what it held
    ++link.stats.dropped;
    link.q.pop();
  }
  link.stats.queue_bytes = 0;
}

Nanos MiniFabric::reverse_delay(size_t i, int path) const {
  Nanos d = 0;
  for (uint16_t l : spec_.pairs[i].paths[static_cast<size_t>(path)]) d += spec_.links[l].prop;
  return d;
}

void MiniFabric::deliver(PacketPtr p) {
  wire::FrameView v;
  if (wire::parse_frame(p->frame, v) != wire::WireError::ok) return;
  if (v.shim.next == wire::kNextData) {
    pairs_[p->pair].delivered += p->frame.size();
    return;
  }
  wire::Message m;
  if (wire::decode_message(std::span<const uint8_t>(p->frame).subspan(v.payload_offset, v.payload_len), m) !=
      wire::WireError::ok)
    return;
  if (m.type != wire::MsgType::probe && m.type != wire::MsgType::finish) return;
  // The receiving edge reflects the probe with the token its VM admits
  // (Algorithm 1 TokenAdmission; UNBOUND when no hose model is configured).
  PairRt& pr = pairs_[p->pair];
  uint32_t admitted = kWireUnbound;
  if (m.type == wire::MsgType::probe && !spec_.vm_tokens.empty()) {
    if (m.phi != 0 && !(m.flags & wire::kMsgQuery)) pr.requested = wire::wire_to_tokens(m.phi);
    if (pr.admitted != kTokenUnbound) admitted = wire::tokens_to_wire(pr.admitted);
  }
  if (m.type == wire::MsgType::finish) pr.requested = 0;
  to_sender(p->pair, wire::reflect(m, admitted), reverse_delay(p->pair, p->path));
}

void MiniFabric::to_sender(size_t i, const wire::Message& m, Nanos delay) {
  at(now_ + delay, [this, i, m] {
    pairs_[i].vm->on_message(m, now_);
    wake_host(spec_.pairs[i].host);
  });
}

uint64_t MiniFabric::inflight_on_link(size_t l) const {
  uint64_t sum = 0;
  for (size_t i = 0; i < pairs_.size(); ++i) {
    const VmPair& vm = *pairs_[i].vm;
    if (vm.state() != VmPair::State::active) continue;
    for (uint16_t x : spec_.pairs[i].paths[static_cast<size_t>(vm.active_path())])
      if (x == l) sum += pairs_[i].sent - pairs_[i].delivered;
  }
  return sum;
}

void MiniFabric::reset_peaks() {
  for (Link& l : links_) {
    l.stats.max_queue_bytes = l.stats.queue_bytes;
    l.max_inflight = 0;
  }
}

void MiniFabric::poll_all() {
  for (size_t i = 0; i < pairs_.size(); ++i) pairs_[i].vm->poll(now_, backlogged(i));
  for (size_t l = 0; l < links_.size(); ++l)
    links_[l].max_inflight = std::max(links_[l].max_inflight, inflight_on_link(l));
  for (uint32_t h = 0; h < hosts_.size(); ++h) wake_host(h);
  sw_->tick(now_);
  at(now_ + spec_.poll_every, [this] { poll_all(); });
}

}  // namespace ufab::sim
