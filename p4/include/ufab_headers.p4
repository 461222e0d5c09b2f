/* uFAB wire format as P4-16 headers (docs/wire-format.md, probe/wire.hpp;
 * paper App. G, Fig. 22, widened as design-notes 4.4 asks). Shared by the
 * TNA program (p4/tofino) and the v1model twin (p4/bmv2). Big-endian, bit 7
 * of a byte first, exactly as the C++ encoder writes it. */
#ifndef UFAB_HEADERS_P4
#define UFAB_HEADERS_P4

#ifndef UFAB_UDP_PORT
#define UFAB_UDP_PORT 7341          /* wire::kUdpPort */
#endif
const bit<4>  UFAB_VERSION      = 1;   /* shim ver (hi4) */
const bit<8>  UFAB_MSG_VERSION  = 1;   /* control message byte 3 */
const bit<4>  UFAB_NEXT_DATA    = 0;
const bit<4>  UFAB_NEXT_CONTROL = 1;
const bit<4>  UFAB_MAX_LABELS   = 15;
const bit<4>  UFAB_MAX_HOPS     = 15;

/* MsgType (docs/wire-format.md §7) */
const bit<4> MSG_PROBE = 1;  const bit<4> MSG_RESPONSE = 2;  const bit<4> MSG_FINISH = 3;
const bit<4> MSG_FINISH_ACK = 4;  const bit<4> MSG_FAILURE = 5;
/* message flags (§5) and hop flags (§6) */
const bit<8> MSG_F_NEW_PAIR = 0x1;  const bit<8> MSG_F_RETRY = 0x2;  const bit<8> MSG_F_QUERY = 0x4;
const bit<4> HOP_F_ACK = 0x1;  const bit<4> HOP_F_STAMPED = 0x2;  const bit<4> HOP_F_UNCOUNTED = 0x4;

/* WireError values (probe/wire.hpp), the index of the malformed[] counters */
const bit<4> WERR_OK = 0;  const bit<4> WERR_TRUNCATED = 1;  const bit<4> WERR_BAD_VERSION = 2;
const bit<4> WERR_BAD_TYPE = 3;  const bit<4> WERR_BAD_HOP_COUNT = 4;  const bit<4> WERR_BAD_HOP_INDEX = 5;
const bit<4> WERR_BAD_LABEL_COUNT = 6;  const bit<4> WERR_BAD_LABEL_INDEX = 7;  const bit<4> WERR_BAD_NEXT = 8;

/* DropReason (p4/model/switch_model.hpp), the index of the drops[] counters */
const bit<3> DROP_MALFORMED = 0;  const bit<3> DROP_ROUTE_EXHAUSTED = 1;  const bit<3> DROP_BAD_PORT = 2;
const bit<3> DROP_PORT_DOWN = 3;  const bit<3> DROP_NO_ROUTE = 4;  const bit<3> DROP_FAILURE_UNROUTABLE = 5;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;           /* 0x0800 */
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;                  /* 5: options are not parsed (p4/README.md "Divergences") */
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;                /* DF = 0b010, MF = 0b001 */
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;             /* 17 */
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

/* The first 4 bytes after the IPv4 header: TCP/UDP ports for ECMP. */
header l4_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

header udp_rest_h {               /* the rest of the UDP header */
    bit<16> length;
    bit<16> checksum;             /* 0 */
}

/* tunnel shim, 8 B at frame offset 42 (§3) */
header ufab_shim_h {
    bit<4>  version;
    bit<4>  next;                 /* 0 data, 1 control */
    bit<24> vni;
    bit<32> pair_id;
}

/* source route, 2 + 2n B at offset 50 (§4): label[next] is this hop's egress port */
header ufab_route_h {
    bit<8> n_labels;              /* 1..15 */
    bit<8> next;                  /* 0..n_labels */
}
header ufab_label_h {
    bit<16> port;
}

/* control message header, 32 B (§5) */
header ufab_msg_h {
    bit<4>  type;
    bit<4>  n_hop;                /* 1..15 */
    bit<8>  flags;
    bit<8>  hop_index;            /* 0..n_hop */
    bit<8>  version;
    bit<32> phi;                  /* 1/64 token */
    bit<32> pair_id;
    bit<32> seq;
    bit<64> timestamp_ns;
    bit<64> bytes_sent;
}

/* hop record, 16 B (§6) */
header ufab_hop_h {
    bit<32> w;                    /* sender: w^l; switch: W_l (64 B units) */
    bit<32> phi;                  /* Phi_l (1/64 token) */
    bit<24> tx;                   /* tx_l, Mb/s */
    bit<24> q;                    /* q_l, 64 B units */
    bit<4>  cap_code;
    bit<4>  flags;
    bit<8>  port;                 /* ingress port at this hop */
}

struct ufab_headers_t {
    ethernet_h            ethernet;
    ipv4_h                ipv4;
    l4_ports_h            l4;
    udp_rest_h            udp;
    ufab_shim_h           shim;
    ufab_route_h          route;
    ufab_label_h[15]      label;
    ufab_msg_h            msg;
    ufab_hop_h[14]        hop_prev;   /* records 0 .. hop_index-1 (read only for failure notices) */
    ufab_hop_h            hop_cur;    /* record hop_index: the one this switch stamps */
}

/* What the parser learned, for both architectures. */
struct ufab_parse_md_t {
    bit<1>  is_ufab;              /* outer UDP to the uFAB port */
    bit<4>  werr;                 /* WireError, WERR_OK if well formed */
}

#endif
