/* Ingress checks of a parsed uFAB frame, in the order of wire::parse_frame,
 * decode_route and check_message (docs/wire-format.md §4, §5, §9). Header
 * fields only, so it is the same control on both architectures. Sets
 * md.werr (first failing rule wins) and leaves it WERR_OK otherwise.
 * The UDP length covers shim + route + message: 8 + 8 + (2 + 2n) + 32 + 16 n_hop. */
#ifndef UFAB_VALIDATE_P4
#define UFAB_VALIDATE_P4

#include "ufab_headers.p4"

control UfabValidate(in ufab_headers_t hdr, inout ufab_parse_md_t md) {
    apply {
        if (md.werr == WERR_OK && hdr.route.isValid()) {
            bit<16> route_end = 18 + ((bit<16>)hdr.route.n_labels << 1);   /* UDP hdr + shim + route */
            if (hdr.route.next > hdr.route.n_labels) {
                md.werr = WERR_BAD_LABEL_INDEX;
            } else if (hdr.udp.length < route_end) {
                md.werr = WERR_TRUNCATED;
            } else if (hdr.msg.isValid()) {
                bit<16> msg_len = hdr.udp.length - route_end;
                if (msg_len < 32) {
                    md.werr = WERR_TRUNCATED;
                } else if (hdr.msg.version != UFAB_MSG_VERSION) {
                    md.werr = WERR_BAD_VERSION;
                } else if (hdr.msg.type == 0 || hdr.msg.type > MSG_FAILURE) {
                    md.werr = WERR_BAD_TYPE;
                } else if (hdr.msg.n_hop == 0) {
                    md.werr = WERR_BAD_HOP_COUNT;
                } else if (hdr.msg.hop_index > (bit<8>)hdr.msg.n_hop) {
                    md.werr = WERR_BAD_HOP_INDEX;
                } else if (msg_len < 32 + ((bit<16>)hdr.msg.n_hop << 4)) {
                    md.werr = WERR_TRUNCATED;
                }
            } else if (hdr.shim.next == UFAB_NEXT_CONTROL) {
                md.werr = WERR_TRUNCATED;                       /* fewer than 32 B after the route */
            }
        }
    }
}

#endif
