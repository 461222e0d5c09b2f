/* ufab_tna.p4: the uFAB-C core switch for Tofino 1 (TNA), implementing
 * p4/model/switch_model.cpp (paper §3.2, §3.6, §4.2, App. G; design-notes
 * §4.1-§4.5). Stage plan, PHV notes and divergences: p4/README.md.
 *
 * Ingress: parse (p4/include), validate, source-route forwarding or L3+ECMP,
 *   failure notices, and the slot table + Φ_l/W_l sums (the egress port is
 *   known in ingress, and only ingress can recirculate: a probe of a new pair
 *   whose buckets have a free way is recirculated ONCE to claim the way that
 *   pass 1 chose, so "match anywhere, else first free way" is exact).
 * Egress: tx_l for every packet (8 us << shift windows, tx_rate.hpp), then
 *   stamping of record hop_index with W_l/Φ_l (bridged), tx_l, q_l, C'_l.
 *
 * Tofino 2 (t2na.p4): 20 stages and 4 output words per SALU would let one
 * pair register per way return {hit, free} and old {φ, w} together, removing
 * two stages; 128-bit SALUs could keep Φ_l/W_l exact in 64 bits; the ghost
 * thread / fast clear are not needed. Compile with -DUFAB_T2 (t2na.p4). */
#include <core.p4>
#if __TARGET_TOFINO__ == 2 || defined(UFAB_T2)
#include <t2na.p4>
#else
#include <tna.p4>
#endif
#include "ufab_headers.p4"
#include "ufab_parser.p4"
#include "ufab_validate.p4"

#ifndef UFAB_BUCKETS_LOG2
#define UFAB_BUCKETS_LOG2 12                 /* 4096 buckets per bank (model default) */
#endif
#ifndef UFAB_LPORTS_LOG2
#define UFAB_LPORTS_LOG2 5                   /* 32 logical ports (labels) */
#endif
#define UFAB_BUCKETS (1 << UFAB_BUCKETS_LOG2)
#define UFAB_LPORTS (1 << UFAB_LPORTS_LOG2)
#define TAG_CELLS (UFAB_LPORTS * UFAB_BUCKETS)                 /* one way of one bank, all ports */
#define VAL_CELLS (UFAB_LPORTS * 2 * UFAB_BUCKETS * 4)         /* φ or w of every slot */
#ifndef UFAB_TX_SHIFT
#define UFAB_TX_SHIFT 2                      /* 8 us << 2 = 32 us windows */
#endif
const bit<32> TX_IV = 8000 << UFAB_TX_SHIFT; /* ns */
#ifndef UFAB_RECIRC_PORT
#define UFAB_RECIRC_PORT 68                  /* pipe 0 recirculation port */
#endif

typedef bit<(UFAB_LPORTS_LOG2 + UFAB_BUCKETS_LOG2)> tag_idx_t;
typedef bit<(UFAB_LPORTS_LOG2 + UFAB_BUCKETS_LOG2 + 3)> val_idx_t;

/* Pass-1 -> pass-2 header, in front of Ethernet on the recirculated copy. */
header claim_h {
    bit<8>  in_lport;        /* the original ingress port */
    bit<1>  bank;
    bit<2>  way;
    bit<5>  pad;
    bit<16> pad2;
}
/* ingress -> egress bridged metadata */
header bridge_h {
    bit<8>  in_lport;
    bit<8>  out_lport;
    bit<4>  cap_code;
    bit<1>  stamp;           /* probe: stamp record hop_index */
    bit<1>  ack;             /* finish: set kHopAck */
    bit<1>  uncounted;
    bit<1>  recirc;          /* on its way to the recirculation port: egress does nothing */
    bit<32> w_sum;           /* W_l after this probe */
    bit<32> phi_sum;         /* Φ_l after this probe */
}

struct ig_headers_t {
    bridge_h bridge;
    claim_h  claim;
    ufab_headers_t u;
}
struct ig_md_t {
    ufab_parse_md_t p;
    bit<8>  in_lport;
    bit<8>  out_lport;
    bit<1>  out_up;
    bit<1>  in_up;
    bit<1>  pass2;
    bit<32> fp_tag;          /* 1 << 24 | CRC-32Q fingerprint */
    bit<32> h0;
    bit<32> h1;
    bit<32> epoch;
    tag_idx_t t0;            /* lport ++ bucket0 */
    tag_idx_t t1;            /* lport ++ bucket1 */
    bit<8>  r00; bit<8> r01; bit<8> r02; bit<8> r03;   /* bank 0 way results: 1 hit, 2 free, 0 other */
    bit<8>  r10; bit<8> r11; bit<8> r12; bit<8> r13;
    bit<1>  found;
    bit<1>  has_free;
    bit<1>  bank;
    bit<2>  way;
    val_idx_t vidx;
    bit<32> old_phi;
    bit<32> old_w;
    bit<32> d_phi;
    bit<32> d_w;
    bit<32> new_w;
    bit<16> ecmp_group;
    bit<16> ecmp_n;
    bit<32> ecmp_hash;
    bit<8>  m0; bit<8> m1; bit<8> m2; bit<8> m3; bit<8> msum;
    bit<16> sp;
    bit<16> dp;
}

parser IgParser(packet_in pkt, out ig_headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    UfabParser() ufab;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.p.is_ufab = 0; md.p.werr = 0; md.pass2 = 0;
        transition select(ig_intr_md.ingress_port) {
            UFAB_RECIRC_PORT: parse_claim;
            default: parse_ufab;
        }
    }
    state parse_claim {
        pkt.extract(hdr.claim);
        md.pass2 = 1;
        transition parse_ufab;
    }
    state parse_ufab {
        ufab.apply(pkt, hdr.u, md.p);
        transition accept;
    }
}

control Ingress(inout ig_headers_t hdr, inout ig_md_t md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    UfabValidate() validate;

    /* ---- counters (SwitchCounters), read by bfrt ---- */
    Counter<bit<64>, bit<3>>(8, CounterType_t.PACKETS) drops;            /* by DropReason */
    Counter<bit<64>, bit<4>>(16, CounterType_t.PACKETS) malformed;       /* by WireError */
    Counter<bit<64>, bit<2>>(4, CounterType_t.PACKETS) fwd;              /* 0 ufab, 1 l3, 2 failures */

    /* ---- hashes (p4/model/crc32.hpp; slot_table.hpp key bytes) ---- */
    CRCPolynomial<bit<32>>(0x04C11DB7, true, false, false, 0xFFFFFFFF, 0xFFFFFFFF) crc32_ieee;
    CRCPolynomial<bit<32>>(0x1EDC6F41, true, false, false, 0xFFFFFFFF, 0xFFFFFFFF) crc32c;
    CRCPolynomial<bit<32>>(0x814141AB, false, false, false, 0x00000000, 0x00000000) crc32q;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32_ieee) h_bank0;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32c) h_bank1;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32q) h_fp;
    CRCPolynomial<bit<32>>(0x04C11DB7, true, false, false, 0xFFFFFFFF, 0xFFFFFFFF) crc32_ecmp;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32_ecmp) h_ecmp;

    action drop_for(bit<3> r) { drops.count(r); ig_dprsr_md.drop_ctl = 1; }

    /* ---- port tables (control plane: bfrt_setup.py) ---- */
    action set_in_lport(bit<8> lport) { md.in_lport = lport; }
    table in_port_map {                      /* device port -> logical port (label space) */
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_in_lport; }
        default_action = set_in_lport(0xff);
        size = 512;
    }
    action set_out(PortId_t dev, bit<4> code, bit<1> up) {
        ig_tm_md.ucast_egress_port = dev; hdr.bridge.cap_code = code; md.out_up = up;
    }
    action no_such_port() { md.out_lport = 0xff; }
    table out_port_map {                     /* logical port -> device port, C'_l code, up/down */
        key = { md.out_lport : exact; }
        actions = { set_out; no_such_port; }
        default_action = no_such_port();
        size = 256;
    }
    action set_in_state(PortId_t dev, bit<1> up) { md.in_up = up; }
    table in_port_state {
        key = { md.in_lport : exact; }
        actions = { set_in_state; }
        default_action = set_in_state(0, 0);
        size = 256;
    }
    /* epoch (§4.2): the aging sweep rewrites this default action every period */
    action set_epoch(bit<32> e) { md.epoch = e; }
    table epoch_reg {
        actions = { set_epoch; }
        default_action = set_epoch(0);
        size = 1;
    }

    /* ---- L3 + ECMP for non-uFAB frames (l3_table.hpp): member = CRC-32 % n.
     * Tofino has no modulo, so CRC % n is assembled from byte residues:
     * (Σ byte_i · 256^i) mod n, each term looked up (n, byte) -> residue. An
     * ActionSelector would pick members by its own algorithm and so differ
     * from the model; these tables give the model's member exactly. ---- */
    action set_group(bit<16> group, bit<16> n) { md.ecmp_group = group; md.ecmp_n = n; }
    table l3_host {
        key = { hdr.u.ipv4.dst_addr : exact; }
        actions = { set_group; NoAction; }
        default_action = NoAction();
        size = 16384;
    }

    action set_m0(bit<8> r) { md.m0 = r; }
    table mod_b0 {                          /* (n, byte 0 of the hash) -> byte·256^0 mod n */
        key = { md.ecmp_n : exact; md.ecmp_hash[7:0] : exact; }
        actions = { set_m0; }
        default_action = set_m0(0);
        size = 4096;
    }
    action set_m1(bit<8> r) { md.m1 = r; }
    table mod_b1 {                          /* (n, byte 1 of the hash) -> byte·256^1 mod n */
        key = { md.ecmp_n : exact; md.ecmp_hash[15:8] : exact; }
        actions = { set_m1; }
        default_action = set_m1(0);
        size = 4096;
    }
    action set_m2(bit<8> r) { md.m2 = r; }
    table mod_b2 {                          /* (n, byte 2 of the hash) -> byte·256^2 mod n */
        key = { md.ecmp_n : exact; md.ecmp_hash[23:16] : exact; }
        actions = { set_m2; }
        default_action = set_m2(0);
        size = 4096;
    }
    action set_m3(bit<8> r) { md.m3 = r; }
    table mod_b3 {                          /* (n, byte 3 of the hash) -> byte·256^3 mod n */
        key = { md.ecmp_n : exact; md.ecmp_hash[31:24] : exact; }
        actions = { set_m3; }
        default_action = set_m3(0);
        size = 4096;
    }
    action set_member(bit<8> lport) { md.out_lport = lport; }
    table ecmp_member {                      /* (group, Σ residues) -> port; (Σ mod n) folded in by the control plane */
        key = { md.ecmp_group : exact; md.msum : exact; md.ecmp_n : exact; }
        actions = { set_member; no_such_port; }
        default_action = no_such_port();
        size = 16384;
    }

    /* ---- slot table: 2 banks x 4 ways of {tag, epoch} pairs (one SALU each) ---- */

    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b0w0;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w0) look_b0w0 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w0) claim_b0w0 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w0) free_b0w0 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };
    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b0w1;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w1) look_b0w1 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w1) claim_b0w1 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w1) free_b0w1 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };
    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b0w2;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w2) look_b0w2 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w2) claim_b0w2 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w2) free_b0w2 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };
    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b0w3;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w3) look_b0w3 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w3) claim_b0w3 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b0w3) free_b0w3 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };
    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b1w0;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w0) look_b1w0 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w0) claim_b1w0 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w0) free_b1w0 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };
    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b1w1;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w1) look_b1w1 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w1) claim_b1w1 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w1) free_b1w1 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };
    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b1w2;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w2) look_b1w2 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w2) claim_b1w2 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w2) free_b1w2 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };
    Register<pair<bit<32>, bit<32>>, tag_idx_t>(TAG_CELLS) tag_b1w3;   /* first = 1<<24|fp (0 free), second = epoch */
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w3) look_b1w3 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; }   /* the pair's slot: refresh epoch */
            else if (v.first == 0) { r = 2; }                            /* free */
            else { r = 0; }
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w3) claim_b1w3 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == 0) { v.first = md.fp_tag; v.second = md.epoch; r = 1; }
            else if (v.first == md.fp_tag) { v.second = md.epoch; r = 1; } /* a twin probe claimed it first */
            else { r = 0; }                                               /* lost a race: uncounted this time */
        }
    };
    RegisterAction<pair<bit<32>, bit<32>>, tag_idx_t, bit<8>>(tag_b1w3) free_b1w3 = {
        void apply(inout pair<bit<32>, bit<32>> v, out bit<8> r) {
            if (v.first == md.fp_tag) { v.first = 0; v.second = 0; r = 1; } else { r = 0; }
        }
    };

    /* φ and w of every slot: index = lport ++ bank ++ bucket ++ way. One SALU each. */
    Register<bit<32>, val_idx_t>(VAL_CELLS) slot_phi;
    Register<bit<32>, val_idx_t>(VAL_CELLS) slot_w;
    RegisterAction<bit<32>, val_idx_t, bit<32>>(slot_phi) swap_phi = {
        void apply(inout bit<32> v, out bit<32> old) { old = v; v = hdr.u.msg.phi; } };
    RegisterAction<bit<32>, val_idx_t, bit<32>>(slot_phi) take_phi = {
        void apply(inout bit<32> v, out bit<32> old) { old = v; v = 0; } };
    RegisterAction<bit<32>, val_idx_t, bit<32>>(slot_w) swap_w = {
        void apply(inout bit<32> v, out bit<32> old) { old = v; v = md.new_w; } };
    RegisterAction<bit<32>, val_idx_t, bit<32>>(slot_w) take_w = {
        void apply(inout bit<32> v, out bit<32> old) { old = v; v = 0; } };

    /* Φ_l and W_l per logical port, updated by new - old (design-notes 4.1); the
     * RegisterAction returns the new sum for stamping, and reads it for queries. */
    Register<bit<32>, bit<8>>(256) phi_sum;
    Register<bit<32>, bit<8>>(256) w_sum;
    RegisterAction<bit<32>, bit<8>, bit<32>>(phi_sum) add_phi = {
        void apply(inout bit<32> v, out bit<32> s) { v = v + md.d_phi; s = v; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(phi_sum) read_phi = {
        void apply(inout bit<32> v, out bit<32> s) { s = v; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(w_sum) add_w = {
        void apply(inout bit<32> v, out bit<32> s) { v = v + md.d_w; s = v; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(w_sum) read_w = {
        void apply(inout bit<32> v, out bit<32> s) { s = v; } };

    apply {
        hdr.bridge.setValid();
        hdr.bridge.stamp = 0; hdr.bridge.ack = 0; hdr.bridge.uncounted = 0; hdr.bridge.recirc = 0;
        if (md.pass2 == 1) { md.in_lport = hdr.claim.in_lport; hdr.claim.setInvalid(); }
        else { in_port_map.apply(); }
        hdr.bridge.in_lport = md.in_lport;
        validate.apply(hdr.u, md.p);
        epoch_reg.apply();

        if (md.p.is_ufab == 0) {                                  /* ---- not_ufab ---- */
            if (!hdr.u.ipv4.isValid() || !l3_host.apply().hit) { drop_for(DROP_NO_ROUTE); exit; }
            md.sp = 0; md.dp = 0;
            if (hdr.u.l4.isValid()) { md.sp = hdr.u.l4.src_port; md.dp = hdr.u.l4.dst_port; }
            md.ecmp_hash = h_ecmp.get({ hdr.u.ipv4.src_addr, hdr.u.ipv4.dst_addr, hdr.u.ipv4.protocol, md.sp, md.dp });
            mod_b0.apply(); mod_b1.apply(); mod_b2.apply(); mod_b3.apply();
            md.msum = md.m0 + md.m1 + md.m2 + md.m3;
            ecmp_member.apply();
            if (md.out_lport == 0xff || !out_port_map.apply().hit) { drop_for(DROP_BAD_PORT); exit; }
            if (md.out_up == 0) { drop_for(DROP_PORT_DOWN); exit; }
            fwd.count(1);
            exit;
        }
        if (md.p.werr != WERR_OK || ig_prsr_md.parser_err != 0) {  /* ---- malformed ---- */
            malformed.count(md.p.werr == WERR_OK ? WERR_TRUNCATED : md.p.werr);
            drop_for(DROP_MALFORMED);
            exit;
        }
        if (hdr.u.route.next >= hdr.u.route.n_labels) { drop_for(DROP_ROUTE_EXHAUSTED); exit; }

        if (hdr.u.route.next == 0) { md.out_lport = (bit<8>)hdr.u.label[0].port; if (hdr.u.label[0].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 1) { md.out_lport = (bit<8>)hdr.u.label[1].port; if (hdr.u.label[1].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 2) { md.out_lport = (bit<8>)hdr.u.label[2].port; if (hdr.u.label[2].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 3) { md.out_lport = (bit<8>)hdr.u.label[3].port; if (hdr.u.label[3].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 4) { md.out_lport = (bit<8>)hdr.u.label[4].port; if (hdr.u.label[4].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 5) { md.out_lport = (bit<8>)hdr.u.label[5].port; if (hdr.u.label[5].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 6) { md.out_lport = (bit<8>)hdr.u.label[6].port; if (hdr.u.label[6].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 7) { md.out_lport = (bit<8>)hdr.u.label[7].port; if (hdr.u.label[7].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 8) { md.out_lport = (bit<8>)hdr.u.label[8].port; if (hdr.u.label[8].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 9) { md.out_lport = (bit<8>)hdr.u.label[9].port; if (hdr.u.label[9].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 10) { md.out_lport = (bit<8>)hdr.u.label[10].port; if (hdr.u.label[10].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 11) { md.out_lport = (bit<8>)hdr.u.label[11].port; if (hdr.u.label[11].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 12) { md.out_lport = (bit<8>)hdr.u.label[12].port; if (hdr.u.label[12].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 13) { md.out_lport = (bit<8>)hdr.u.label[13].port; if (hdr.u.label[13].port > 255) { md.out_lport = 0xff; } }
        else if (hdr.u.route.next == 14) { md.out_lport = (bit<8>)hdr.u.label[14].port; if (hdr.u.label[14].port > 255) { md.out_lport = 0xff; } }
        if (md.out_lport == 0xff || !out_port_map.apply().hit) { drop_for(DROP_BAD_PORT); exit; }
        hdr.bridge.out_lport = md.out_lport;
        if (md.out_up == 0) {                                      /* ---- failure notice (App. G) ---- */
            if (!hdr.u.msg.isValid() || hdr.u.msg.type != MSG_PROBE) { drop_for(DROP_PORT_DOWN); exit; }
            if (hdr.u.msg.hop_index >= 15) { drop_for(DROP_FAILURE_UNROUTABLE); exit; }
            in_port_state.apply();
            if (md.in_up == 0) { drop_for(DROP_PORT_DOWN); exit; }
            if (hdr.u.hop_cur.isValid()) {
                hdr.u.hop_cur.w = 0; hdr.u.hop_cur.phi = 0; hdr.u.hop_cur.tx = 0; hdr.u.hop_cur.q = 0;
                hdr.u.hop_cur.cap_code = 0; hdr.u.hop_cur.flags = HOP_F_STAMPED; hdr.u.hop_cur.port = md.in_lport;
            }
            hdr.u.msg.type = MSG_FAILURE;
            hdr.u.route.n_labels = hdr.u.msg.hop_index + 1;
            hdr.u.route.next = 1;
            hdr.u.label[0].port = (bit<16>)md.in_lport;

            if (hdr.u.msg.hop_index == 0) {  hdr.u.label[0].setValid(); hdr.u.label[1].setInvalid(); hdr.u.label[2].setInvalid(); hdr.u.label[3].setInvalid(); hdr.u.label[4].setInvalid(); hdr.u.label[5].setInvalid(); hdr.u.label[6].setInvalid(); hdr.u.label[7].setInvalid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 1) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setInvalid(); hdr.u.label[3].setInvalid(); hdr.u.label[4].setInvalid(); hdr.u.label[5].setInvalid(); hdr.u.label[6].setInvalid(); hdr.u.label[7].setInvalid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 2) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setInvalid(); hdr.u.label[4].setInvalid(); hdr.u.label[5].setInvalid(); hdr.u.label[6].setInvalid(); hdr.u.label[7].setInvalid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 3) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setInvalid(); hdr.u.label[5].setInvalid(); hdr.u.label[6].setInvalid(); hdr.u.label[7].setInvalid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 4) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setInvalid(); hdr.u.label[6].setInvalid(); hdr.u.label[7].setInvalid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 5) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setInvalid(); hdr.u.label[7].setInvalid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 6) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setInvalid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 7) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setInvalid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 8) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[7].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[8].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setValid(); hdr.u.label[9].setInvalid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 9) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[8].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[7].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[8].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[9].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setValid(); hdr.u.label[9].setValid(); hdr.u.label[10].setInvalid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 10) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[9].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[8].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[7].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[8].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[9].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[10].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setValid(); hdr.u.label[9].setValid(); hdr.u.label[10].setValid(); hdr.u.label[11].setInvalid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 11) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[10].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[9].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[8].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[7].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[8].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[9].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[10].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[11].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setValid(); hdr.u.label[9].setValid(); hdr.u.label[10].setValid(); hdr.u.label[11].setValid(); hdr.u.label[12].setInvalid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 12) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[11].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[10].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[9].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[8].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[7].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[8].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[9].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[10].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[11].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[12].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setValid(); hdr.u.label[9].setValid(); hdr.u.label[10].setValid(); hdr.u.label[11].setValid(); hdr.u.label[12].setValid(); hdr.u.label[13].setInvalid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 13) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[12].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[11].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[10].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[9].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[8].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[7].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[8].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[9].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[10].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[11].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[12].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[13].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setValid(); hdr.u.label[9].setValid(); hdr.u.label[10].setValid(); hdr.u.label[11].setValid(); hdr.u.label[12].setValid(); hdr.u.label[13].setValid(); hdr.u.label[14].setInvalid(); }
            else if (hdr.u.msg.hop_index == 14) { hdr.u.label[1].port = (bit<16>)hdr.u.hop_prev[13].port; hdr.u.label[2].port = (bit<16>)hdr.u.hop_prev[12].port; hdr.u.label[3].port = (bit<16>)hdr.u.hop_prev[11].port; hdr.u.label[4].port = (bit<16>)hdr.u.hop_prev[10].port; hdr.u.label[5].port = (bit<16>)hdr.u.hop_prev[9].port; hdr.u.label[6].port = (bit<16>)hdr.u.hop_prev[8].port; hdr.u.label[7].port = (bit<16>)hdr.u.hop_prev[7].port; hdr.u.label[8].port = (bit<16>)hdr.u.hop_prev[6].port; hdr.u.label[9].port = (bit<16>)hdr.u.hop_prev[5].port; hdr.u.label[10].port = (bit<16>)hdr.u.hop_prev[4].port; hdr.u.label[11].port = (bit<16>)hdr.u.hop_prev[3].port; hdr.u.label[12].port = (bit<16>)hdr.u.hop_prev[2].port; hdr.u.label[13].port = (bit<16>)hdr.u.hop_prev[1].port; hdr.u.label[14].port = (bit<16>)hdr.u.hop_prev[0].port; hdr.u.label[0].setValid(); hdr.u.label[1].setValid(); hdr.u.label[2].setValid(); hdr.u.label[3].setValid(); hdr.u.label[4].setValid(); hdr.u.label[5].setValid(); hdr.u.label[6].setValid(); hdr.u.label[7].setValid(); hdr.u.label[8].setValid(); hdr.u.label[9].setValid(); hdr.u.label[10].setValid(); hdr.u.label[11].setValid(); hdr.u.label[12].setValid(); hdr.u.label[13].setValid(); hdr.u.label[14].setValid(); }
            bit<48> mac = hdr.u.ethernet.src_addr; hdr.u.ethernet.src_addr = hdr.u.ethernet.dst_addr;
            hdr.u.ethernet.dst_addr = mac;
            bit<32> ip = hdr.u.ipv4.src_addr; hdr.u.ipv4.src_addr = hdr.u.ipv4.dst_addr; hdr.u.ipv4.dst_addr = ip;
            hdr.u.ipv4.diffserv = 0; hdr.u.ipv4.identification = 0; hdr.u.ipv4.flags = 0b010;
            hdr.u.ipv4.frag_offset = 0; hdr.u.ipv4.ttl = 64;
            hdr.u.udp.length = 50 + ((bit<16>)hdr.u.msg.hop_index << 1) + ((bit<16>)hdr.u.msg.n_hop << 4);
            hdr.u.ipv4.total_len = 20 + hdr.u.udp.length;
            hdr.u.udp.checksum = 0;
            ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
            hdr.bridge.out_lport = md.in_lport;
            fwd.count(2);
            exit;
        }

        /* ---- slot table (only probes/finishes with a record left, or finishes) ---- */
        bool probe = hdr.u.msg.isValid() && hdr.u.msg.type == MSG_PROBE && hdr.u.hop_cur.isValid()
                     && (hdr.u.msg.flags & MSG_F_QUERY) == 0;
        bool query = hdr.u.msg.isValid() && hdr.u.msg.type == MSG_PROBE && hdr.u.hop_cur.isValid()
                     && (hdr.u.msg.flags & MSG_F_QUERY) != 0;
        bool finish = hdr.u.msg.isValid() && hdr.u.msg.type == MSG_FINISH;
        md.d_phi = 0; md.d_w = 0; md.found = 0; md.has_free = 0;
        if (probe || finish) {
            md.h0 = h_bank0.get({ hdr.u.ipv4.src_addr, hdr.u.shim.vni, hdr.u.msg.pair_id });
            md.h1 = h_bank1.get({ hdr.u.ipv4.src_addr, hdr.u.shim.vni, hdr.u.msg.pair_id });
            md.fp_tag = 0x1000000 | (h_fp.get({ hdr.u.ipv4.src_addr, hdr.u.shim.vni, hdr.u.msg.pair_id }) & 0xffffff);
            md.t0 = md.out_lport[UFAB_LPORTS_LOG2-1:0] ++ md.h0[UFAB_BUCKETS_LOG2-1:0];
            md.t1 = md.out_lport[UFAB_LPORTS_LOG2-1:0] ++ md.h1[UFAB_BUCKETS_LOG2-1:0];
            md.new_w = hdr.u.hop_cur.w;
        }
        if (md.pass2 == 1) {
            /* claim the way pass 1 chose (stage of that bank) */
            bit<8> ok = 0;

            if (hdr.claim.bank == 0 && hdr.claim.way == 0) { ok = claim_b0w0.execute(md.t0); }
            if (hdr.claim.bank == 0 && hdr.claim.way == 1) { ok = claim_b0w1.execute(md.t0); }
            if (hdr.claim.bank == 0 && hdr.claim.way == 2) { ok = claim_b0w2.execute(md.t0); }
            if (hdr.claim.bank == 0 && hdr.claim.way == 3) { ok = claim_b0w3.execute(md.t0); }
            if (hdr.claim.bank == 1 && hdr.claim.way == 0) { ok = claim_b1w0.execute(md.t1); }
            if (hdr.claim.bank == 1 && hdr.claim.way == 1) { ok = claim_b1w1.execute(md.t1); }
            if (hdr.claim.bank == 1 && hdr.claim.way == 2) { ok = claim_b1w2.execute(md.t1); }
            if (hdr.claim.bank == 1 && hdr.claim.way == 3) { ok = claim_b1w3.execute(md.t1); }
            if (ok == 1) { md.found = 1; md.bank = hdr.claim.bank; md.way = hdr.claim.way; }
            else { hdr.bridge.uncounted = 1; }
        } else if (probe) {
            /* stage A: bank 0, all four ways in parallel (4 SALUs) */
            md.r00 = look_b0w0.execute(md.t0); md.r01 = look_b0w1.execute(md.t0);
            md.r02 = look_b0w2.execute(md.t0); md.r03 = look_b0w3.execute(md.t0);
            /* stage B: bank 1 only if bank 0 did not hold the pair (model: bank 0 ways first) */
            if (md.r00 != 1 && md.r01 != 1 && md.r02 != 1 && md.r03 != 1) {
                md.r10 = look_b1w0.execute(md.t1); md.r11 = look_b1w1.execute(md.t1);
                md.r12 = look_b1w2.execute(md.t1); md.r13 = look_b1w3.execute(md.t1);
            } else { md.r10 = 0; md.r11 = 0; md.r12 = 0; md.r13 = 0; }
            /* stage C: decide (gateways): hit -> its slot; else first free -> recirculate once */
            if (md.r00 == 1) { md.found = 1; md.bank = 0; md.way = 0; }
            else if (md.r01 == 1) { md.found = 1; md.bank = 0; md.way = 1; }
            else if (md.r02 == 1) { md.found = 1; md.bank = 0; md.way = 2; }
            else if (md.r03 == 1) { md.found = 1; md.bank = 0; md.way = 3; }
            else if (md.r10 == 1) { md.found = 1; md.bank = 1; md.way = 0; }
            else if (md.r11 == 1) { md.found = 1; md.bank = 1; md.way = 1; }
            else if (md.r12 == 1) { md.found = 1; md.bank = 1; md.way = 2; }
            else if (md.r13 == 1) { md.found = 1; md.bank = 1; md.way = 3; }
            else if (md.r00 == 2) { md.has_free = 1; md.bank = 0; md.way = 0; }
            else if (md.r01 == 2) { md.has_free = 1; md.bank = 0; md.way = 1; }
            else if (md.r02 == 2) { md.has_free = 1; md.bank = 0; md.way = 2; }
            else if (md.r03 == 2) { md.has_free = 1; md.bank = 0; md.way = 3; }
            else if (md.r10 == 2) { md.has_free = 1; md.bank = 1; md.way = 0; }
            else if (md.r11 == 2) { md.has_free = 1; md.bank = 1; md.way = 1; }
            else if (md.r12 == 2) { md.has_free = 1; md.bank = 1; md.way = 2; }
            else if (md.r13 == 2) { md.has_free = 1; md.bank = 1; md.way = 3; }
            else { hdr.bridge.uncounted = 1; }
            if (md.has_free == 1) {
                /* new pair: recirculate once, unchanged, with the chosen way (README "recirculation") */
                hdr.claim.setValid();
                hdr.claim.in_lport = md.in_lport; hdr.claim.bank = md.bank; hdr.claim.way = md.way;
                hdr.claim.pad = 0; hdr.claim.pad2 = 0;
                hdr.bridge.recirc = 1;
                ig_tm_md.ucast_egress_port = UFAB_RECIRC_PORT;
                exit;
            }
        } else if (finish) {
            /* finish: free whichever way holds the pair (bank 0 first) */
            md.r00 = free_b0w0.execute(md.t0); md.r01 = free_b0w1.execute(md.t0);
            md.r02 = free_b0w2.execute(md.t0); md.r03 = free_b0w3.execute(md.t0);
            if (md.r00 == 1) { md.found = 1; md.bank = 0; md.way = 0; }
            else if (md.r01 == 1) { md.found = 1; md.bank = 0; md.way = 1; }
            else if (md.r02 == 1) { md.found = 1; md.bank = 0; md.way = 2; }
            else if (md.r03 == 1) { md.found = 1; md.bank = 0; md.way = 3; }
            else {
                md.r10 = free_b1w0.execute(md.t1); md.r11 = free_b1w1.execute(md.t1);
                md.r12 = free_b1w2.execute(md.t1); md.r13 = free_b1w3.execute(md.t1);
                if (md.r10 == 1) { md.found = 1; md.bank = 1; md.way = 0; }
                else if (md.r11 == 1) { md.found = 1; md.bank = 1; md.way = 1; }
                else if (md.r12 == 1) { md.found = 1; md.bank = 1; md.way = 2; }
                else if (md.r13 == 1) { md.found = 1; md.bank = 1; md.way = 3; }
            }
        }
        /* stage D: the slot's φ and w (dependent on stage C), stage E: deltas, stage F: sums */
        if (md.found == 1) {
            md.vidx = md.out_lport[UFAB_LPORTS_LOG2-1:0] ++ md.bank ++
                      (md.bank == 0 ? md.h0[UFAB_BUCKETS_LOG2-1:0] : md.h1[UFAB_BUCKETS_LOG2-1:0]) ++ md.way;
            if (finish) { md.old_phi = take_phi.execute(md.vidx); md.old_w = take_w.execute(md.vidx);
                          md.d_phi = 0 - md.old_phi; md.d_w = 0 - md.old_w; }
            else { md.old_phi = swap_phi.execute(md.vidx); md.old_w = swap_w.execute(md.vidx);
                   md.d_phi = hdr.u.msg.phi - md.old_phi; md.d_w = md.new_w - md.old_w; }
        }
        if (probe || finish || md.pass2 == 1) {
            hdr.bridge.phi_sum = add_phi.execute(md.out_lport);
            hdr.bridge.w_sum = add_w.execute(md.out_lport);
        } else if (query) {
            hdr.bridge.phi_sum = read_phi.execute(md.out_lport);
            hdr.bridge.w_sum = read_w.execute(md.out_lport);
        }
        hdr.bridge.stamp = (probe || query || md.pass2 == 1) ? 1w1 : 1w0;
        hdr.bridge.ack = (finish && hdr.u.hop_cur.isValid()) ? 1w1 : 1w0;
        if (md.pass2 == 0) { hdr.u.route.next = hdr.u.route.next + 1; }  /* consume the label once */
        fwd.count(0);
    }
}

control IgDeparser(packet_out pkt, inout ig_headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_csum;
    apply {
        if (hdr.u.ipv4.isValid()) {
            hdr.u.ipv4.hdr_checksum = ipv4_csum.update({
                hdr.u.ipv4.version, hdr.u.ipv4.ihl, hdr.u.ipv4.diffserv, hdr.u.ipv4.total_len,
                hdr.u.ipv4.identification, hdr.u.ipv4.flags, hdr.u.ipv4.frag_offset, hdr.u.ipv4.ttl,
                hdr.u.ipv4.protocol, hdr.u.ipv4.src_addr, hdr.u.ipv4.dst_addr });
        }
        pkt.emit(hdr);   /* bridge, claim (recirculation only), then the uFAB headers */
    }
}

/* ---------------- egress: tx_l and stamping ---------------- */
struct eg_headers_t {
    bridge_h bridge;
    claim_h claim;
    ufab_headers_t u;
}
struct eg_md_t {
    ufab_parse_md_t p;
    bit<32> now;
    bit<8>  win;             /* 0 same window, 1 next window, 2 idle gap */
    bit<32> closed_bytes;
    bit<32> rate;
    bit<32> shifted;
}

parser EgParser(packet_in pkt, out eg_headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    UfabParser() ufab;
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        transition select(hdr.bridge.recirc) {
            1: parse_claim;
            default: parse_ufab;
        }
    }
    state parse_claim { pkt.extract(hdr.claim); transition parse_ufab; }
    state parse_ufab { ufab.apply(pkt, hdr.u, md.p); transition accept; }
}

control Egress(inout eg_headers_t hdr, inout eg_md_t md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /* tx_l (tx_rate.hpp), per logical port: window start (ns, low 32 bits of
     * the global timestamp), bytes in the open window, last closed rate. */
    Register<bit<32>, bit<8>>(256) tx_start;
    Register<bit<32>, bit<8>>(256) tx_bytes;
    Register<bit<32>, bit<8>>(256) tx_rate;
    Counter<bit<64>, bit<8>>(256, CounterType_t.PACKETS_AND_BYTES) tx_ctr;
    Counter<bit<64>, bit<8>>(256, CounterType_t.PACKETS) stamped;
    Counter<bit<64>, bit<8>>(256, CounterType_t.PACKETS) exhausted;

    RegisterAction<bit<32>, bit<8>, bit<8>>(tx_start) tx_window = {
        void apply(inout bit<32> start, out bit<8> w) {
            if (md.now - start < TX_IV) { w = 0; }                    /* same window */
            else if (md.now - start < 2 * TX_IV) { start = start + TX_IV; w = 1; }
            else { start = md.now; w = 2; }                           /* a whole window idle */
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(tx_bytes) tx_add = {
        void apply(inout bit<32> b, out bit<32> closed) { closed = b; b = b + (bit<32>)eg_intr_md.pkt_length; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(tx_bytes) tx_restart = {
        void apply(inout bit<32> b, out bit<32> closed) { closed = b; b = (bit<32>)eg_intr_md.pkt_length; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(tx_rate) rate_set = {
        void apply(inout bit<32> r, out bit<32> out_r) { r = md.shifted; out_r = r; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(tx_rate) rate_zero = {
        void apply(inout bit<32> r, out bit<32> out_r) { r = 0; out_r = 0; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(tx_rate) rate_get = {
        void apply(inout bit<32> r, out bit<32> out_r) { out_r = r; } };

    apply {
        if (hdr.bridge.recirc == 1) { hdr.bridge.setInvalid(); exit; }   /* to the recirc port: untouched */
        bit<8> lp = hdr.bridge.out_lport;
        md.now = eg_prsr_md.global_tstamp[31:0];
        tx_ctr.count(lp);
        md.win = tx_window.execute(lp);                                   /* stage E0 */
        if (md.win == 0) { md.closed_bytes = tx_add.execute(lp); }        /* stage E1 */
        else { md.closed_bytes = tx_restart.execute(lp); }
        md.shifted = md.closed_bytes >> UFAB_TX_SHIFT;                    /* stage E2 (PHV ALU) */
        md.shifted = min(md.shifted, 32w0xffffff);
        if (md.win == 1) { md.rate = rate_set.execute(lp); }              /* stage E3 */
        else if (md.win == 2) { md.rate = rate_zero.execute(lp); }
        else { md.rate = rate_get.execute(lp); }

        if (hdr.u.hop_cur.isValid() && hdr.bridge.stamp == 1) {           /* stage E4: App. G record */
            hdr.u.hop_cur.w = hdr.bridge.w_sum;
            hdr.u.hop_cur.phi = hdr.bridge.phi_sum;
            hdr.u.hop_cur.tx = md.rate[23:0];
            /* q_l in 64 B units: Tofino 1 reports deq_qdepth in 80 B cells; 80/64 = 5/4 */
            bit<32> q = ((bit<32>)eg_intr_md.deq_qdepth << 2) + (bit<32>)eg_intr_md.deq_qdepth;
            q = q >> 2;
            hdr.u.hop_cur.q = min(q, 32w0xffffff)[23:0];
            hdr.u.hop_cur.cap_code = hdr.bridge.cap_code;
            hdr.u.hop_cur.flags = hdr.u.hop_cur.flags | HOP_F_STAMPED | (hdr.bridge.uncounted == 1 ? HOP_F_UNCOUNTED : 4w0);
            hdr.u.hop_cur.port = hdr.bridge.in_lport;
            hdr.u.msg.hop_index = hdr.u.msg.hop_index + 1;
            stamped.count(lp);
        } else if (hdr.u.hop_cur.isValid() && hdr.bridge.ack == 1) {      /* finish ACK (design-notes 4.3) */
            hdr.u.hop_cur.flags = hdr.u.hop_cur.flags | HOP_F_ACK;
            hdr.u.hop_cur.port = hdr.bridge.in_lport;
            hdr.u.msg.hop_index = hdr.u.msg.hop_index + 1;
        } else if (hdr.u.msg.isValid() && !hdr.u.hop_cur.isValid()
                   && (hdr.u.msg.type == MSG_PROBE || hdr.u.msg.type == MSG_FINISH)) {
            exhausted.count(lp);
        }
        hdr.bridge.setInvalid();
    }
}

control EgDeparser(packet_out pkt, inout eg_headers_t hdr, in eg_md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }  /* the claim header is emitted only toward the recirculation port */
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;
Switch(pipe) main;

