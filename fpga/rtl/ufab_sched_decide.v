// Language: Verilog 2001
//
// ufab_sched_decide: one scheduling decision of the μFAB-E Packet Scheduler
// (paper §4.1, Figure 8), combinational, from a class's prefetched state
// (ufab_sched's h_* registers): levels 2 and 3 of HierScheduler::dequeue().
//  - Level 3: the pair's head flow gives up its head packet; a flow still
//    backlogged goes to the end of the pair's flow round.
//  - Level 2: the pair stays eligible iff its window admits its next packet
//        window > 0  and  inflight + next_len <= window
//    (inflight > 0 now); otherwise it leaves its tenant's ring (and the
//    tenant leaves the class's ring when the pair was its last).
//  - The class's next decision: the next tenant (this one when it is alone)
//    and that tenant's cursor pair, which ufab_sched reads (or, the same pair
//    again, takes from this decision).
// ufab_sched instantiates one per weight class, so the eight decisions are
// computed while the WFQ (ufab_wfq8) picks the class; the pick only selects.
//
// Flow block layout (per flow f at f*FE: {head, tail, head_len, count, head
// link {next, next_len}}; flow FIFO links at FLOWS*FE + f*FW) and pair word
// ({state, fvalid, fhead, ftail, window, inflight, tenant}) as ufab_sched.
//
// Parameters:
//   PW, TW, FW, DW, CW  widths of a pair, tenant, flow, descriptor index and flow count
//   FLOWS               flows per pair
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_sched_decide #(
    parameter PW = 6,
    parameter TW = 4,
    parameter FW = 2,
    parameter DW = 11,
    parameter CW = 4,
    parameter FLOWS = 4,
    parameter PRW = 2 + 1 + FW + FW + 64 + TW,
    parameter FE = 3*DW + 32 + CW,
    parameter FBW = FLOWS*FE + FLOWS*FW
) (
    /* the prefetch */
    input  wire [TW-1:0]  t,        // the class cursor tenant
    input  wire [PW-1:0]  p,        // its cursor pair
    input  wire [PRW-1:0] pr,       // the pair's word
    input  wire [FBW-1:0] fb,       // the pair's flow block
    input  wire [PW-1:0]  pn,       // pair ring: next
    input  wire [TW-1:0]  tx,       // tenant ring: next, prev
    input  wire [TW-1:0]  tv,
    input  wire [PW-1:0]  cx,       // the next tenant's cursor pair
    input  wire [TW-1:0]  tx2,      // the tenant after the next one

    /* the decision */
    output wire [DW-1:0]  head,     // the packet's descriptor
    output wire [DW-1:0]  hnext,    // the descriptor after it in its flow
    output wire [15:0]    hlen,     // the packet's length
    output wire [FW-1:0]  fh,       // its flow
    output wire [31:0]    win,      // the pair's window
    output reg  [31:0]    infl_n,   // the pair's bytes in flight after it
    output reg  [PRW-1:0] pr_n,     // the pair's word after it
    output reg  [FBW-1:0] fb_n,     // the pair's flow block after it (the flow's head link: at write-back)
    output reg            rm_pair,  // the pair leaves its tenant's ring
    output reg            rm_ten,   // the tenant leaves the class's ring
    output wire           alone_p,  // the pair is alone in its tenant's ring
    output wire           alone_t,  // the tenant is alone in the class's ring
    output reg            hv_n,     // the class stays active: a next decision exists
    output reg            self_n,   // the next decision is on the same pair
    output reg  [TW-1:0]  nt,       // the next decision's tenant, its next and prev tenant
    output reg  [TW-1:0]  ntx,
    output reg  [TW-1:0]  ntv,
    output reg  [PW-1:0]  np,       // the next decision's pair
    output reg  [TW-1:0]  x2        // the tenant whose cursor and next to read (the next ntx)
);

localparam LKW = DW + 16;
localparam FE_HLEN = DW + 16 + CW;
localparam FE_TAIL = DW + 32 + CW;
localparam FE_HEAD = 2*DW + 32 + CW;
localparam [1:0] ST_IDLE = 2'd1, ST_ACTIVE = 2'd2, ST_BLOCKED = 2'd3;

/* verilator lint_off UNUSEDSIGNAL */  // the state (ACTIVE) and the tenant (t) are implied
wire [1:0]     st   = pr[PRW-1 -: 2];
wire [TW-1:0]  ten  = pr[TW-1:0];
/* verilator lint_on UNUSEDSIGNAL */
wire           fv   = pr[PRW-3];
wire [FW-1:0]  ft   = pr[PRW-4-FW -: FW];
wire [31:0]    infl = pr[TW+32-1 -: 32];
assign fh  = pr[PRW-4 -: FW];
assign win = pr[TW+64-1 -: 32];

// the head flow, the flow after it and that one's head length: muxes over
// constant slices (a variable part-select would synthesise to shifters)
reg  [FE-1:0]  fe;
reg  [FW-1:0]  fnx;
reg  [15:0]    hlen_n;
integer i;
always @* begin
    fe = fb[FE-1:0];
    fnx = fb[FLOWS*FE +: FW];
    for (i = 0; i < FLOWS; i = i + 1) begin
        if (fh == i[FW-1:0]) begin
            fe = fb[i*FE +: FE];
            fnx = fb[FLOWS*FE + i*FW +: FW];
        end
    end
    hlen_n = fb[FE_HLEN +: 16];
    for (i = 0; i < FLOWS; i = i + 1) begin
        if (fnx == i[FW-1:0]) hlen_n = fb[i*FE + FE_HLEN +: 16];
    end
end
wire [DW-1:0]  tail  = fe[FE_TAIL +: DW];
wire [CW-1:0]  cnt   = fe[LKW +: CW];
wire [15:0]    hnlen = fe[15:0];
assign head  = fe[FE_HEAD +: DW];
assign hnext = fe[16 +: DW];
assign hlen  = fe[FE_HLEN +: 16];

wire single = fh == ft;
assign alone_p = pn == p;
assign alone_t = tx == t;

reg [CW-1:0] cnt_n;
reg [15:0]   nh_len;     // the length of the pair's next packet
reg [FW-1:0] fh_n, ft_n;
reg          fv_n, fits, empty;
reg [1:0]    st_n;
reg [32:0]   sum;
integer j;

always @* begin
    // level 3
    fb_n = fb;
    cnt_n = cnt - 1'b1;
    for (j = 0; j < FLOWS; j = j + 1) begin
        if (fh == j[FW-1:0]) fb_n[j*FE +: FE] = {hnext, tail, hnlen, cnt_n, hnext, hnlen};
    end
    fh_n = fh; ft_n = ft; fv_n = fv;
    if (cnt_n != 0) begin
        if (!single) begin
            fh_n = fnx;
            for (j = 0; j < FLOWS; j = j + 1) begin
                if (ft == j[FW-1:0]) fb_n[FLOWS*FE + j*FW +: FW] = fh;
            end
            ft_n = fh;
        end
        nh_len = single ? hnlen : hlen_n;
    end else begin
        if (single) fv_n = 1'b0;
        else fh_n = fnx;
        nh_len = hlen_n;
    end
    empty = cnt_n == 0 && single;
    // level 2: the window gate for the pair's next packet
    infl_n = infl + {16'd0, hlen};
    sum = {1'b0, infl_n} + {17'd0, nh_len};
    fits = win != 0 && sum <= {1'b0, win};
    st_n = empty ? ST_IDLE : (fits ? ST_ACTIVE : ST_BLOCKED);
    pr_n = {st_n, fv_n, fh_n, ft_n, win, infl_n, t};
    rm_pair = st_n != ST_ACTIVE;
    rm_ten = rm_pair && alone_p;
    // the class's next decision
    hv_n = !(rm_ten && alone_t);
    self_n = alone_t && alone_p;
    if (alone_t) begin
        nt = t; np = pn; ntx = t; ntv = t; x2 = t;
    end else begin
        nt = tx; np = cx;
        x2 = (rm_ten && tx2 == t) ? tx : tx2;
        ntx = x2;
        ntv = rm_ten ? tv : t;
    end
end

endmodule

`resetall
