// The control lcore's state and work (issue 4 item 1; runs on the main lcore,
// inline with worker 0 when there is only one lcore):
//  - Algorithm 1 (App. E) every token period for every local VM: TokenAssignment
//    over its active sending pairs (demand = their delivered rate, phi_D = the
//    receiver's last answer), TokenAdmission over the pairs sending to it
//    (phi_S = what their probes requested). Inputs and results go through
//    the shares of the VM's worker (token_share.hpp); the per-VM token state
//    (VmTokens) lives here.
//  - runtime changes: a tenant's guarantee (tokens per VM = guarantee / B_u;
//    nothing queued is touched) and its WFQ weight class (given, or
//    following the guarantee: moved in every worker's scheduler with its
//    queued frames), path drain/undrain (pushed to the workers as
//    commands), reload of the configuration file (reload.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "control/clock.hpp"
#include "control/token_control.hpp"

namespace ufab::pipeline {

class Edge;

class Control {
 public:
  explicit Control(Edge& e) : e_(e) {}
  void init();  // once the shards exist

  // One Alg. 1 round over every local VM (sender side, then receiver side),
  // recomputing only where the inputs changed since the last round.
  void token_round() {
    while (!token_round_step(SIZE_MAX)) {
    }
  }
  // Part of a round (one lcore, pipeline/worker.cpp): sender-side Alg. 1 for
  // the next VMs, until about max_pairs pairs were looked at (a VM skipped
  // counts as an eighth of a pair); true when this step finished the round
  // (the receiver side runs in that last step). Each VM's assignment reads
  // its pairs' shares when its turn comes, so a round cut in steps assigns
  // as a whole one would at those times.
  bool token_round_step(size_t max_pairs);
  uint64_t rounds = 0;
  uint64_t vms_assigned = 0;  // sender-side Alg. 1 runs (VMs whose inputs changed), all rounds
  uint64_t shards_admitted = 0;  // receiver-side passes (shards whose incoming slots changed), all rounds
  uint64_t stretched = 0;  // rounds whose next came later than the period (token_round_max_share, one lcore)

  // Current guarantee of tenant index t (b/s); the configuration's until changed.
  std::vector<double> guarantee_bps;
  // Current WFQ weight class of tenant index t, and whether it follows the
  // guarantee (EdgeConfig::weight_class_of); the configuration's until changed.
  std::vector<uint32_t> weight_class;
  std::vector<bool> weight_from_guarantee;
  // drained[host][path]: by the operator (/ufab/path_drain).
  std::vector<std::vector<bool>> drained;
  // With two or more fabric ports: uplink_down[port] while that uplink's
  // link is down (uplinks.cpp); its paths are then not candidates.
  std::vector<uint8_t> uplink_down;
  uint64_t uplink_failovers = 0;  // uplinks seen going down after being up (their paths drained)
  // Whether host h's path k is out of selection now: drained by the
  // operator, or its uplink's link is down.
  bool path_unusable(size_t h, size_t k) const;
  bool uplink_is_down(uint16_t port) const { return port < uplink_down.size() && uplink_down[port] != 0; }
  // The control lcore, each iteration after PortLinks::poll: an uplink
  // whose link went down has its paths drained in every worker (pairs
  // active on one migrate as after a failure notice, §3.6), and undrained
  // when it comes back unless the operator drained them (uplinks.cpp).
  void follow_uplinks();
  // Host h (just added by a reload, or its entry taken anew) replies by
  // its reply path, or by a path on an uplink that is up while the reply
  // path's is down (uplinks.cpp).
  void host_added(size_t h);

  // Each returns "" on success, else what is wrong.
  // class_change (optional): the move of a class that follows the guarantee.
  std::string set_guarantee(uint32_t vni, double gbps, std::string* class_change = nullptr);
  // cls 0..7, or kWeightFromGuarantee: the class follows the guarantee.
  // change (optional): "tenant V: weight_class A -> B", empty when nothing moved.
  static constexpr int kWeightFromGuarantee = -1;
  std::string set_weight_class(uint32_t vni, int cls, std::string* change = nullptr);
  std::string set_drained(const std::string& host, const std::string& path, bool drained, size_t* host_index);
  // Re-reads the configuration file; changes applied (or an error, nothing
  // applied). now: the workers' clock (a removed pair's finish).
  struct ReloadResult {
    bool ok = false;
    std::vector<std::string> changes;
    std::string error;
  };
  ReloadResult reload(Nanos now);
  // Sizes Alg. 1's per-VM scratch to each VM's pairs (init, and after
  // VMs were added), so that a token round does not allocate.
  void reserve_tokens();
  // Alg. 1's state for local VM v, just appended to cfg.vms or written into
  // a free entry (local_vms.hpp): its tenant's tokens phi_alpha as in force
  // now, which it returns.
  double add_vm(size_t v);

 private:
  // Host h's paths on uplink `port` (those the operator drained only if
  // with_drained), as a bit mask per host (paths <= 8), for follow_uplinks.
  std::vector<uint8_t> paths_on(uint16_t port, bool with_drained) const;
  // By port id: follow_uplinks has read the uplink's link once (a link
  // down at start-up drains its paths, but is no failover).
  std::vector<uint8_t> uplink_seen_;
  // By host: the path whose route its responses and finish-acks take
  // while its reply path's uplink is down; -1: the reply path.
  std::vector<int> reply_via_;
  int reply_choice(size_t h) const;
  void follow_replies();
  // Tenant index t to class cls in every worker's scheduler (its active
  // pairs and queued frames move with it); "" when it was there already.
  std::string move_class(size_t t, uint32_t cls);
  Edge& e_;
  std::vector<VmTokens> senders_, receivers_;  // per local VM
  std::vector<uint32_t> scratch_;
  size_t next_vm_ = 0;  // the VM the current round's next step starts at
  // The inputs' generations (EdgeState::vm_inputs_gen, incoming_gen) at
  // each VM's / shard's last assignment; kStale: assign at the next round
  // (start, a guarantee change). Alg. 1 is a function of those inputs and
  // phi_alpha, so a VM or shard whose count has not moved keeps its result.
  static constexpr uint64_t kStale = UINT64_MAX;
  std::vector<uint64_t> sender_seen_, incoming_seen_;
  std::vector<uint64_t> in_scratch_;
};

}  // namespace ufab::pipeline
