/* ufab_v1model.p4: the v1model (bmv2 simple_switch) twin of the uFAB-C
 * switch (paper §3.2, §3.6, §4.2, App. G), mirroring p4/model/switch_model.cpp
 * step for step. bmv2 registers may be read and written several times per
 * packet, so the slot table is a straight transcription of SlotTable::upsert
 * (no recirculation, unlike the TNA program). Shares p4/include with TNA.
 * Compile: p4c --target bmv2 --arch v1model -I p4/include p4/bmv2/ufab_v1model.p4
 * Geometry: UFAB_BUCKETS_LOG2 (default 12 = 4096 buckets/bank), 4 ways, 24-bit
 * fingerprints, UFAB_N_PORTS ports (default 8, bmv2 port numbers = model ports). */
#include <core.p4>
#include <v1model.p4>
#include "ufab_headers.p4"
#include "ufab_parser.p4"
#include "ufab_validate.p4"

#ifndef UFAB_BUCKETS_LOG2
#define UFAB_BUCKETS_LOG2 12
#endif
#ifndef UFAB_N_PORTS
#define UFAB_N_PORTS 8
#endif
#define UFAB_BUCKETS (1 << UFAB_BUCKETS_LOG2)
#define UFAB_WAYS 4
#define UFAB_SLOTS_PER_PORT (2 * UFAB_BUCKETS * UFAB_WAYS)
#define UFAB_TX_SHIFT 2                      /* SwitchConfig::tx_shift: 8 us << 2 = 32 us */
const bit<64> TX_INTERVAL_NS = 8000 << UFAB_TX_SHIFT;

/* switch counter register indices (SwitchCounters) */
const bit<32> C_UFAB_FWD = 0;  const bit<32> C_L3_FWD = 1;  const bit<32> C_FAILURES = 2;
const bit<32> C_DROPS = 8;      /* + DropReason */
const bit<32> C_MALFORMED = 16; /* + WireError */
/* link counter indices (LinkCounters), register index = port * 16 + k */
const bit<32> L_TX_PKTS = 0;  const bit<32> L_TX_BYTES = 1;  const bit<32> L_STAMPED = 2;  const bit<32> L_QUERIES = 3;
const bit<32> L_INSERTED = 4; const bit<32> L_UPDATED = 5;   const bit<32> L_UNCOUNTED = 6; const bit<32> L_FIN_FOUND = 7;
const bit<32> L_FIN_UNKNOWN = 8; const bit<32> L_AGED = 9;   const bit<32> L_EXHAUSTED = 10;

struct metadata_t {
    ufab_parse_md_t p;
    bit<16> out_port;
    bit<16> frame_len;        /* the frame as it leaves (failure notices change it) */
    bit<1>  is_failure;
    bit<32> key_tag;          /* 1 << 24 | fingerprint (a slot's tag when valid) */
    bit<32> b0;
    bit<32> b1;
    bit<32> hash_out;
    bit<16> ecmp_n;
    bit<16> ecmp_group;
    bit<16> ecmp_idx;
}

register<bit<64>>(64) sw_ctr;
register<bit<64>>(UFAB_N_PORTS * 16) link_ctr;
register<bit<1>>(UFAB_N_PORTS) port_up;                 /* 1 = up; runtime.txt sets all up */
register<bit<4>>(UFAB_N_PORTS) cap_code;                /* C'_l codes (units.hpp) */
register<bit<32>>(1) epoch;                             /* advanced by the control plane (§4.2) */
register<bit<64>>(UFAB_N_PORTS) phi_sum;                /* Φ_l, exact */
register<bit<64>>(UFAB_N_PORTS) w_sum;                  /* W_l, exact */
register<bit<64>>(UFAB_N_PORTS) tx_win_start;           /* ns */
register<bit<64>>(UFAB_N_PORTS) tx_win_bytes;
register<bit<32>>(UFAB_N_PORTS) tx_rate;                /* Mb/s, 24-bit saturated */
register<bit<32>>(UFAB_N_PORTS * UFAB_SLOTS_PER_PORT) slot_tag;    /* 1<<24 | fp, 0 = free */
register<bit<32>>(UFAB_N_PORTS * UFAB_SLOTS_PER_PORT) slot_phi;
register<bit<32>>(UFAB_N_PORTS * UFAB_SLOTS_PER_PORT) slot_w;
register<bit<32>>(UFAB_N_PORTS * UFAB_SLOTS_PER_PORT) slot_epoch;

parser IngressParser(packet_in pkt, out ufab_headers_t hdr, inout metadata_t md,
                     inout standard_metadata_t sm) {
    UfabParser() ufab;
    state start {
        ufab.apply(pkt, hdr, md.p);
        transition accept;
    }
}

control NoVerify(inout ufab_headers_t hdr, inout metadata_t md) { apply { } }

control Ingress(inout ufab_headers_t hdr, inout metadata_t md, inout standard_metadata_t sm) {
    UfabValidate() validate;

    action count_sw(bit<32> i) {
        bit<64> v; sw_ctr.read(v, i); sw_ctr.write(i, v + 1);
    }
    action drop_for(bit<3> reason) {
        count_sw(C_DROPS + (bit<32>)reason);
        mark_to_drop(sm);
    }
    /* L3 for non-uFAB frames (model l3_table.hpp): /32 host route -> group of n ports. */
    action set_group(bit<16> group, bit<16> n) { md.ecmp_group = group; md.ecmp_n = n; }
    table l3_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { set_group; NoAction; }
        default_action = NoAction();
        size = 4096;
    }
    action set_member(bit<16> port) { md.out_port = port; }
    table ecmp_member {
        key = { md.ecmp_group : exact; md.ecmp_idx : exact; }
        actions = { set_member; NoAction; }
        default_action = NoAction();
        size = 16384;
    }

    /* Failure notice (App. G; model make_failure): back route
     * [in_port, rec[h-1].port, ..., rec[0].port], next = 1. */
    action back_route_common(bit<8> h) {
        hdr.route.n_labels = h + 1;
        hdr.route.next = 1;
        hdr.label[0].port = (bit<16>)sm.ingress_port;
    }
    action rebuild_route() {
        back_route_common(hdr.msg.hop_index);
    }
    apply {
        md.out_port = 0;
        md.is_failure = 0;
        md.frame_len = (bit<16>)sm.packet_length;
        validate.apply(hdr, md.p);
        if (md.p.is_ufab == 0) {
            /* not_ufab: forwarded unchanged by L3 + CRC-32 ECMP */
            if (!hdr.ipv4.isValid() || !l3_host.apply().hit) { drop_for(DROP_NO_ROUTE); return; }
            bit<16> sp = 0; bit<16> dp = 0;
            if (hdr.l4.isValid()) { sp = hdr.l4.src_port; dp = hdr.l4.dst_port; }
            hash(md.hash_out, HashAlgorithm.crc32, 32w0,
                 { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, sp, dp }, 64w0x100000000);
            md.ecmp_idx = (bit<16>)(md.hash_out % (bit<32>)md.ecmp_n);
            ecmp_member.apply();
            if (md.out_port >= UFAB_N_PORTS) { drop_for(DROP_BAD_PORT); return; }
            bit<1> up; port_up.read(up, (bit<32>)md.out_port);
            if (up == 0) { drop_for(DROP_PORT_DOWN); return; }
            count_sw(C_L3_FWD);
            sm.egress_spec = (bit<9>)md.out_port;
            return;
        }
        if (md.p.werr != WERR_OK) {
            count_sw(C_MALFORMED + (bit<32>)md.p.werr);
            drop_for(DROP_MALFORMED);
            return;
        }
        if (hdr.route.next >= hdr.route.n_labels) { drop_for(DROP_ROUTE_EXHAUSTED); return; }
        /* label[next]: a constant index per branch (header stacks take constant indices). */
        if (hdr.route.next == 0) { md.out_port = hdr.label[0].port; }
        else if (hdr.route.next == 1) { md.out_port = hdr.label[1].port; }
        else if (hdr.route.next == 2) { md.out_port = hdr.label[2].port; }
        else if (hdr.route.next == 3) { md.out_port = hdr.label[3].port; }
        else if (hdr.route.next == 4) { md.out_port = hdr.label[4].port; }
        else if (hdr.route.next == 5) { md.out_port = hdr.label[5].port; }
        else if (hdr.route.next == 6) { md.out_port = hdr.label[6].port; }
        else if (hdr.route.next == 7) { md.out_port = hdr.label[7].port; }
        else if (hdr.route.next == 8) { md.out_port = hdr.label[8].port; }
        else if (hdr.route.next == 9) { md.out_port = hdr.label[9].port; }
        else if (hdr.route.next == 10) { md.out_port = hdr.label[10].port; }
        else if (hdr.route.next == 11) { md.out_port = hdr.label[11].port; }
        else if (hdr.route.next == 12) { md.out_port = hdr.label[12].port; }
        else if (hdr.route.next == 13) { md.out_port = hdr.label[13].port; }
        else if (hdr.route.next == 14) { md.out_port = hdr.label[14].port; }
        if (md.out_port >= UFAB_N_PORTS) { drop_for(DROP_BAD_PORT); return; }
        bit<1> out_up; port_up.read(out_up, (bit<32>)md.out_port);
        if (out_up == 0) {
            if (!hdr.msg.isValid() || hdr.msg.type != MSG_PROBE) { drop_for(DROP_PORT_DOWN); return; }
            bit<8> h = hdr.msg.hop_index;
            if (h + 1 > 15) { drop_for(DROP_FAILURE_UNROUTABLE); return; }
            bit<1> in_up; port_up.read(in_up, (bit<32>)sm.ingress_port);
            if (in_up == 0) { drop_for(DROP_PORT_DOWN); return; }
            if (hdr.hop_cur.isValid()) {
                hdr.hop_cur.w = 0; hdr.hop_cur.phi = 0; hdr.hop_cur.tx = 0; hdr.hop_cur.q = 0;
                hdr.hop_cur.cap_code = 0; hdr.hop_cur.flags = HOP_F_STAMPED;
                hdr.hop_cur.port = (bit<8>)sm.ingress_port;
            }
            hdr.msg.type = MSG_FAILURE;
            rebuild_route();
            if (h == 0) {  hdr.label[0].setValid(); hdr.label[1].setInvalid(); hdr.label[2].setInvalid(); hdr.label[3].setInvalid(); hdr.label[4].setInvalid(); hdr.label[5].setInvalid(); hdr.label[6].setInvalid(); hdr.label[7].setInvalid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 1) { hdr.label[1].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setInvalid(); hdr.label[3].setInvalid(); hdr.label[4].setInvalid(); hdr.label[5].setInvalid(); hdr.label[6].setInvalid(); hdr.label[7].setInvalid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 2) { hdr.label[1].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setInvalid(); hdr.label[4].setInvalid(); hdr.label[5].setInvalid(); hdr.label[6].setInvalid(); hdr.label[7].setInvalid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 3) { hdr.label[1].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setInvalid(); hdr.label[5].setInvalid(); hdr.label[6].setInvalid(); hdr.label[7].setInvalid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 4) { hdr.label[1].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setInvalid(); hdr.label[6].setInvalid(); hdr.label[7].setInvalid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 5) { hdr.label[1].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setInvalid(); hdr.label[7].setInvalid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 6) { hdr.label[1].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setInvalid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 7) { hdr.label[1].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setInvalid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 8) { hdr.label[1].port = (bit<16>)hdr.hop_prev[7].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[8].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setValid(); hdr.label[9].setInvalid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 9) { hdr.label[1].port = (bit<16>)hdr.hop_prev[8].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[7].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[8].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[9].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setValid(); hdr.label[9].setValid(); hdr.label[10].setInvalid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 10) { hdr.label[1].port = (bit<16>)hdr.hop_prev[9].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[8].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[7].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[8].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[9].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[10].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setValid(); hdr.label[9].setValid(); hdr.label[10].setValid(); hdr.label[11].setInvalid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 11) { hdr.label[1].port = (bit<16>)hdr.hop_prev[10].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[9].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[8].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[7].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[8].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[9].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[10].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[11].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setValid(); hdr.label[9].setValid(); hdr.label[10].setValid(); hdr.label[11].setValid(); hdr.label[12].setInvalid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 12) { hdr.label[1].port = (bit<16>)hdr.hop_prev[11].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[10].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[9].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[8].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[7].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[8].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[9].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[10].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[11].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[12].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setValid(); hdr.label[9].setValid(); hdr.label[10].setValid(); hdr.label[11].setValid(); hdr.label[12].setValid(); hdr.label[13].setInvalid(); hdr.label[14].setInvalid(); }
            else if (h == 13) { hdr.label[1].port = (bit<16>)hdr.hop_prev[12].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[11].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[10].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[9].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[8].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[7].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[8].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[9].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[10].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[11].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[12].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[13].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setValid(); hdr.label[9].setValid(); hdr.label[10].setValid(); hdr.label[11].setValid(); hdr.label[12].setValid(); hdr.label[13].setValid(); hdr.label[14].setInvalid(); }
            else if (h == 14) { hdr.label[1].port = (bit<16>)hdr.hop_prev[13].port; hdr.label[2].port = (bit<16>)hdr.hop_prev[12].port; hdr.label[3].port = (bit<16>)hdr.hop_prev[11].port; hdr.label[4].port = (bit<16>)hdr.hop_prev[10].port; hdr.label[5].port = (bit<16>)hdr.hop_prev[9].port; hdr.label[6].port = (bit<16>)hdr.hop_prev[8].port; hdr.label[7].port = (bit<16>)hdr.hop_prev[7].port; hdr.label[8].port = (bit<16>)hdr.hop_prev[6].port; hdr.label[9].port = (bit<16>)hdr.hop_prev[5].port; hdr.label[10].port = (bit<16>)hdr.hop_prev[4].port; hdr.label[11].port = (bit<16>)hdr.hop_prev[3].port; hdr.label[12].port = (bit<16>)hdr.hop_prev[2].port; hdr.label[13].port = (bit<16>)hdr.hop_prev[1].port; hdr.label[14].port = (bit<16>)hdr.hop_prev[0].port; hdr.label[0].setValid(); hdr.label[1].setValid(); hdr.label[2].setValid(); hdr.label[3].setValid(); hdr.label[4].setValid(); hdr.label[5].setValid(); hdr.label[6].setValid(); hdr.label[7].setValid(); hdr.label[8].setValid(); hdr.label[9].setValid(); hdr.label[10].setValid(); hdr.label[11].setValid(); hdr.label[12].setValid(); hdr.label[13].setValid(); hdr.label[14].setValid(); }
            /* back to the sender: swap addresses, keep the UDP ports; outer fields as encode_outer writes them */
            bit<48> mac = hdr.ethernet.src_addr; hdr.ethernet.src_addr = hdr.ethernet.dst_addr; hdr.ethernet.dst_addr = mac;
            bit<32> ip = hdr.ipv4.src_addr; hdr.ipv4.src_addr = hdr.ipv4.dst_addr; hdr.ipv4.dst_addr = ip;
            hdr.ipv4.diffserv = 0; hdr.ipv4.identification = 0; hdr.ipv4.flags = 0b010; hdr.ipv4.frag_offset = 0;
            hdr.ipv4.ttl = 64;
            hdr.udp.length = 8 + 8 + 2 + (((bit<16>)h + 1) << 1) + 32 + ((bit<16>)hdr.msg.n_hop << 4);
            hdr.ipv4.total_len = 20 + hdr.udp.length;
            hdr.udp.checksum = 0;
            md.frame_len = 14 + hdr.ipv4.total_len;
            md.is_failure = 1;
            count_sw(C_FAILURES);
            sm.egress_spec = sm.ingress_port;
            return;
        }
        hdr.route.next = hdr.route.next + 1;        /* consume this hop's label (design-notes 4.5) */
        count_sw(C_UFAB_FWD);
        sm.egress_spec = (bit<9>)md.out_port;
    }
}

control Egress(inout ufab_headers_t hdr, inout metadata_t md, inout standard_metadata_t sm) {
    bit<32> port;
    bit<32> base;        /* first slot index of this port */

    action count_link(bit<32> k, bit<64> by) {
        bit<64> v; link_ctr.read(v, port * 16 + k); link_ctr.write(port * 16 + k, v + by);
    }
    /* tx_l (p4/model/tx_rate.hpp on_packet): window close, then add. */
    action count_tx() {
        bit<64> now = (bit<64>)sm.egress_global_timestamp * 1000;   /* bmv2: microseconds */
        bit<64> start; bit<64> bytes; bit<32> rate;
        tx_win_start.read(start, port); tx_win_bytes.read(bytes, port); tx_rate.read(rate, port);
        if (now - start >= TX_INTERVAL_NS) {
            if (now - start < 2 * TX_INTERVAL_NS) {
                bit<64> r = bytes >> UFAB_TX_SHIFT;
                rate = r > 0xffffff ? 32w0xffffff : (bit<32>)r;
                start = start + TX_INTERVAL_NS;
            } else {
                rate = 0;
                start = now;
            }
            bytes = 0;
        }
        bytes = bytes + (bit<64>)md.frame_len;
        tx_win_start.write(port, start); tx_win_bytes.write(port, bytes); tx_rate.write(port, rate);
        count_link(L_TX_PKTS, 1);
        count_link(L_TX_BYTES, (bit<64>)md.frame_len);
    }
    /* PairKey = src_ip(4) | vni(3) | pair_id(4) (slot_table.hpp); CRC parameters
     * are set by runtime.txt: bank 0 CRC-32, bank 1 CRC-32C, fingerprint CRC-32Q. */
    action key_hashes() {
        hash(md.b0, HashAlgorithm.crc32_custom, 32w0, { hdr.ipv4.src_addr, hdr.shim.vni, hdr.msg.pair_id }, 64w0x100000000);
        hash(md.b1, HashAlgorithm.crc32_custom, 32w0, { hdr.ipv4.src_addr, hdr.shim.vni, hdr.msg.pair_id }, 64w0x100000000);
        bit<32> fp;
        hash(fp, HashAlgorithm.crc32_custom, 32w0, { hdr.ipv4.src_addr, hdr.shim.vni, hdr.msg.pair_id }, 64w0x100000000);
        md.key_tag = 0x1000000 | (fp & 0xffffff);
        md.b0 = md.b0 & (UFAB_BUCKETS - 1);
        md.b1 = md.b1 & (UFAB_BUCKETS - 1);
    }
    action add_sums(bit<64> d_phi, bit<64> d_w) {
        bit<64> s; phi_sum.read(s, port); phi_sum.write(port, s + d_phi);
        w_sum.read(s, port); w_sum.write(port, s + d_w);
    }

    apply {
        port = (bit<32>)sm.egress_port;
        base = port * UFAB_SLOTS_PER_PORT;
        count_tx();                                      /* every packet, before a probe reads tx_l */
        if (!hdr.msg.isValid() || md.is_failure == 1) return;
        if (hdr.msg.type != MSG_PROBE && hdr.msg.type != MSG_FINISH) return;
        key_hashes();
        bit<32> found = 0xffffffff;                      /* slot index of the pair's slot */
        bit<32> free_slot = 0xffffffff;                  /* first free way, bank 0 then bank 1 */
        bit<32> t;
        /* SlotTable::find_fp: bank 0 ways then bank 1 ways; first free noted on the way. */
        slot_tag.read(t, base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 0);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 0; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 0; }
        slot_tag.read(t, base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 1);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 1; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 1; }
        slot_tag.read(t, base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 2);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 2; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 2; }
        slot_tag.read(t, base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 3);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 3; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (0 * UFAB_BUCKETS + md.b0) * UFAB_WAYS + 3; }
        slot_tag.read(t, base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 0);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 0; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 0; }
        slot_tag.read(t, base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 1);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 1; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 1; }
        slot_tag.read(t, base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 2);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 2; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 2; }
        slot_tag.read(t, base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 3);
        if (t == md.key_tag && found == 0xffffffff) { found = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 3; }
        if (t == 0 && free_slot == 0xffffffff) { free_slot = base + (1 * UFAB_BUCKETS + md.b1) * UFAB_WAYS + 3; }
        bit<32> e; epoch.read(e, 0);
        if (!hdr.hop_cur.isValid()) {                    /* hop_index == n_hop: every record used */
            count_link(L_EXHAUSTED, 1);
            if (hdr.msg.type == MSG_FINISH) {
                if (found != 0xffffffff) {
                    bit<32> op; bit<32> ow; slot_phi.read(op, found); slot_w.read(ow, found);
                    add_sums(-(bit<64>)op, -(bit<64>)ow);
                    slot_tag.write(found, 0); slot_phi.write(found, 0); slot_w.write(found, 0); slot_epoch.write(found, 0);
                    count_link(L_FIN_FOUND, 1);
                } else {
                    count_link(L_FIN_UNKNOWN, 1);
                }
            }
            return;
        }
        if (hdr.msg.type == MSG_FINISH) {                /* design-notes 4.3: subtract, ack anyway */
            if (found != 0xffffffff) {
                bit<32> op; bit<32> ow; slot_phi.read(op, found); slot_w.read(ow, found);
                add_sums(-(bit<64>)op, -(bit<64>)ow);
                slot_tag.write(found, 0); slot_phi.write(found, 0); slot_w.write(found, 0); slot_epoch.write(found, 0);
                count_link(L_FIN_FOUND, 1);
            } else {
                count_link(L_FIN_UNKNOWN, 1);
            }
            hdr.hop_cur.flags = hdr.hop_cur.flags | HOP_F_ACK;
            hdr.hop_cur.port = (bit<8>)sm.ingress_port;
            hdr.msg.hop_index = hdr.msg.hop_index + 1;
            return;
        }
        /* probe (App. G): register unless kMsgQuery, then stamp */
        bit<4> uncounted = 0;
        if ((hdr.msg.flags & MSG_F_QUERY) != 0) {
            count_link(L_QUERIES, 1);
        } else if (found != 0xffffffff) {
            bit<32> op; bit<32> ow; slot_phi.read(op, found); slot_w.read(ow, found);
            add_sums((bit<64>)hdr.msg.phi - (bit<64>)op, (bit<64>)hdr.hop_cur.w - (bit<64>)ow);
            slot_phi.write(found, hdr.msg.phi); slot_w.write(found, hdr.hop_cur.w); slot_epoch.write(found, e);
            count_link(L_UPDATED, 1);
        } else if (free_slot != 0xffffffff) {
            add_sums((bit<64>)hdr.msg.phi, (bit<64>)hdr.hop_cur.w);
            slot_tag.write(free_slot, md.key_tag); slot_phi.write(free_slot, hdr.msg.phi);
            slot_w.write(free_slot, hdr.hop_cur.w); slot_epoch.write(free_slot, e);
            count_link(L_INSERTED, 1);
        } else {
            uncounted = HOP_F_UNCOUNTED;
            count_link(L_UNCOUNTED, 1);
        }
        bit<64> ps; bit<64> ws; bit<32> rate; bit<4> code;
        phi_sum.read(ps, port); w_sum.read(ws, port); tx_rate.read(rate, port); cap_code.read(code, port);
        hdr.hop_cur.w = ws > 0xffffffff ? 32w0xffffffff : (bit<32>)ws;     /* saturate, never wrap */
        hdr.hop_cur.phi = ps > 0xffffffff ? 32w0xffffffff : (bit<32>)ps;
        hdr.hop_cur.tx = (bit<24>)rate;
        /* q_l: bmv2 reports the queue in packets; 24 x 64 B = one 1536 B packet (approximation,
         * the replay masks q). Tofino reports cells/bytes exactly (p4/tofino). */
        bit<32> q = (bit<32>)sm.deq_qdepth * 24;
        hdr.hop_cur.q = q > 0xffffff ? 24w0xffffff : (bit<24>)q;
        hdr.hop_cur.cap_code = code;
        hdr.hop_cur.flags = hdr.hop_cur.flags | HOP_F_STAMPED | uncounted;
        hdr.hop_cur.port = (bit<8>)sm.ingress_port;
        hdr.msg.hop_index = hdr.msg.hop_index + 1;
        count_link(L_STAMPED, 1);
    }
}

control ComputeChecksum(inout ufab_headers_t hdr, inout metadata_t md) {
    apply {
        /* Only failure notices rewrite IPv4; recomputing an unchanged header gives the same value. */
        update_checksum(hdr.ipv4.isValid() && md.is_failure == 1,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr,
              hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control Deparser(packet_out pkt, in ufab_headers_t hdr) {
    apply {
        pkt.emit(hdr);      /* valid headers in struct order; unparsed records/payload follow */
    }
}

V1Switch(IngressParser(), NoVerify(), Ingress(), Egress(), ComputeChecksum(), Deparser()) main;
