/* Shared uFAB parser (docs/wire-format.md §1-§6; p4/model README §8), used
 * as a sub-parser by the TNA and v1model programs after their architecture
 * preamble. It never rejects: a uFAB frame that breaks a rule gets md.werr
 * (a WireError value) and the ingress drops and counts it, like the model's
 * drop_malformed(). Only the label stack and the records up to hop_index are
 * extracted (the rest stays payload), which bounds PHV use on Tofino. */
#ifndef UFAB_PARSER_P4
#define UFAB_PARSER_P4

#include "ufab_headers.p4"

parser UfabParser(packet_in pkt, out ufab_headers_t hdr, inout ufab_parse_md_t md) {
    state start {
        md.is_ufab = 0;
        md.werr = WERR_OK;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;                       /* not_ufab: L3 table (no_route) */
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.flags[0:0], hdr.ipv4.frag_offset) {
            (4, 5, 0, 0): parse_l4;               /* not a fragment */
            (4, 5, 1, _): accept;                 /* MF: not_ufab, ports 0 */
            (4, 5, _, _): accept;                 /* offset != 0: not_ufab, ports 0 */
            default: accept;
        }
    }
    state parse_l4 {
        transition select(hdr.ipv4.protocol) {
            6: parse_tcp_ports;
            17: parse_udp;
            default: accept;
        }
    }
    state parse_tcp_ports {
        pkt.extract(hdr.l4);
        transition accept;
    }
    state parse_udp {
        pkt.extract(hdr.l4);
        pkt.extract(hdr.udp);
        transition select(hdr.l4.dst_port) {
            UFAB_UDP_PORT: parse_shim;
            default: accept;
        }
    }
    state parse_shim {
        md.is_ufab = 1;
        pkt.extract(hdr.shim);
        transition select(hdr.shim.version, hdr.shim.next) {
            (UFAB_VERSION, UFAB_NEXT_DATA): parse_route;
            (UFAB_VERSION, UFAB_NEXT_CONTROL): parse_route;
            (UFAB_VERSION, _): bad_next;
            default: bad_version;
        }
    }
    state bad_next    { md.werr = WERR_BAD_NEXT; transition accept; }
    state bad_version { md.werr = WERR_BAD_VERSION; transition accept; }
    state parse_route {
        pkt.extract(hdr.route);
        transition select(hdr.route.n_labels) {
            1: labels_1;
            2: labels_2;
            3: labels_3;
            4: labels_4;
            5: labels_5;
            6: labels_6;
            7: labels_7;
            8: labels_8;
            9: labels_9;
            10: labels_10;
            11: labels_11;
            12: labels_12;
            13: labels_13;
            14: labels_14;
            15: labels_15;
            default: bad_label_count;
        }
    }
    state bad_label_count { md.werr = WERR_BAD_LABEL_COUNT; transition accept; }
    state labels_15 { pkt.extract(hdr.label.next); transition labels_14; }
    state labels_14 { pkt.extract(hdr.label.next); transition labels_13; }
    state labels_13 { pkt.extract(hdr.label.next); transition labels_12; }
    state labels_12 { pkt.extract(hdr.label.next); transition labels_11; }
    state labels_11 { pkt.extract(hdr.label.next); transition labels_10; }
    state labels_10 { pkt.extract(hdr.label.next); transition labels_9; }
    state labels_9 { pkt.extract(hdr.label.next); transition labels_8; }
    state labels_8 { pkt.extract(hdr.label.next); transition labels_7; }
    state labels_7 { pkt.extract(hdr.label.next); transition labels_6; }
    state labels_6 { pkt.extract(hdr.label.next); transition labels_5; }
    state labels_5 { pkt.extract(hdr.label.next); transition labels_4; }
    state labels_4 { pkt.extract(hdr.label.next); transition labels_3; }
    state labels_3 { pkt.extract(hdr.label.next); transition labels_2; }
    state labels_2 { pkt.extract(hdr.label.next); transition labels_1; }
    state labels_1 { pkt.extract(hdr.label.next); transition after_labels; }
    state after_labels {
        transition select(hdr.shim.next) {
            UFAB_NEXT_CONTROL: parse_msg;
            default: accept;
        }
    }
    /* Header checks (version, type, n_hop, hop_index, size) are done by
     * UfabValidate in ingress, in check_message()'s order. Records are
     * parsed only for probes and finishes, the messages a switch writes. */
    state parse_msg {
        pkt.extract(hdr.msg);
        transition select(hdr.msg.version, hdr.msg.type, hdr.msg.hop_index) {
            (UFAB_MSG_VERSION, MSG_PROBE, 0): maybe_cur;
            (UFAB_MSG_VERSION, MSG_FINISH, 0): maybe_cur;
            (UFAB_MSG_VERSION, MSG_PROBE, 1): prev_1;
            (UFAB_MSG_VERSION, MSG_FINISH, 1): prev_1;
            (UFAB_MSG_VERSION, MSG_PROBE, 2): prev_2;
            (UFAB_MSG_VERSION, MSG_FINISH, 2): prev_2;
            (UFAB_MSG_VERSION, MSG_PROBE, 3): prev_3;
            (UFAB_MSG_VERSION, MSG_FINISH, 3): prev_3;
            (UFAB_MSG_VERSION, MSG_PROBE, 4): prev_4;
            (UFAB_MSG_VERSION, MSG_FINISH, 4): prev_4;
            (UFAB_MSG_VERSION, MSG_PROBE, 5): prev_5;
            (UFAB_MSG_VERSION, MSG_FINISH, 5): prev_5;
            (UFAB_MSG_VERSION, MSG_PROBE, 6): prev_6;
            (UFAB_MSG_VERSION, MSG_FINISH, 6): prev_6;
            (UFAB_MSG_VERSION, MSG_PROBE, 7): prev_7;
            (UFAB_MSG_VERSION, MSG_FINISH, 7): prev_7;
            (UFAB_MSG_VERSION, MSG_PROBE, 8): prev_8;
            (UFAB_MSG_VERSION, MSG_FINISH, 8): prev_8;
            (UFAB_MSG_VERSION, MSG_PROBE, 9): prev_9;
            (UFAB_MSG_VERSION, MSG_FINISH, 9): prev_9;
            (UFAB_MSG_VERSION, MSG_PROBE, 10): prev_10;
            (UFAB_MSG_VERSION, MSG_FINISH, 10): prev_10;
            (UFAB_MSG_VERSION, MSG_PROBE, 11): prev_11;
            (UFAB_MSG_VERSION, MSG_FINISH, 11): prev_11;
            (UFAB_MSG_VERSION, MSG_PROBE, 12): prev_12;
            (UFAB_MSG_VERSION, MSG_FINISH, 12): prev_12;
            (UFAB_MSG_VERSION, MSG_PROBE, 13): prev_13;
            (UFAB_MSG_VERSION, MSG_FINISH, 13): prev_13;
            (UFAB_MSG_VERSION, MSG_PROBE, 14): prev_14;
            (UFAB_MSG_VERSION, MSG_FINISH, 14): prev_14;
            default: accept;
        }
    }
    state prev_14 { pkt.extract(hdr.hop_prev.next); transition prev_13; }
    state prev_13 { pkt.extract(hdr.hop_prev.next); transition prev_12; }
    state prev_12 { pkt.extract(hdr.hop_prev.next); transition prev_11; }
    state prev_11 { pkt.extract(hdr.hop_prev.next); transition prev_10; }
    state prev_10 { pkt.extract(hdr.hop_prev.next); transition prev_9; }
    state prev_9 { pkt.extract(hdr.hop_prev.next); transition prev_8; }
    state prev_8 { pkt.extract(hdr.hop_prev.next); transition prev_7; }
    state prev_7 { pkt.extract(hdr.hop_prev.next); transition prev_6; }
    state prev_6 { pkt.extract(hdr.hop_prev.next); transition prev_5; }
    state prev_5 { pkt.extract(hdr.hop_prev.next); transition prev_4; }
    state prev_4 { pkt.extract(hdr.hop_prev.next); transition prev_3; }
    state prev_3 { pkt.extract(hdr.hop_prev.next); transition prev_2; }
    state prev_2 { pkt.extract(hdr.hop_prev.next); transition prev_1; }
    state prev_1 { pkt.extract(hdr.hop_prev.next); transition maybe_cur; }
    /* hop_index == n_hop: every record used, nothing to stamp. */
    state maybe_cur {
        transition select(hdr.msg.n_hop, hdr.msg.hop_index) {
            (0, 0): accept;
            (1, 1): accept;
            (2, 2): accept;
            (3, 3): accept;
            (4, 4): accept;
            (5, 5): accept;
            (6, 6): accept;
            (7, 7): accept;
            (8, 8): accept;
            (9, 9): accept;
            (10, 10): accept;
            (11, 11): accept;
            (12, 12): accept;
            (13, 13): accept;
            (14, 14): accept;
            (15, 15): accept;
            default: parse_cur;
        }
    }
    state parse_cur {
        pkt.extract(hdr.hop_cur);
        transition accept;
    }
}

#endif
