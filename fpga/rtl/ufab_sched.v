// Language: Verilog 2001
//
// ufab_sched: the μFAB-E Packet Scheduler (paper §4.1, Figure 8), a cycle-level
// implementation of the golden model sched/hier_scheduler.hpp with the same
// pick order, bit for bit:
//  1. WFQ over 8 weight classes (ufab_wfq8): start-time fair queueing with
//     64-bit virtual time. A class's stride is
//         (2^31/weight * 2^31/active) >> 22  ~= 2^40 / (weight * active),
//     i.e. its effective weight is class weight x backlogged-eligible tenants
//     ("Scaling to a large number of VFs"), computed from two reciprocals
//     (ufab_inv_rom, ufab_udiv) exactly as the model does. A class that
//     re-joins restarts at max(its tag, virtual time); when the chosen tag has
//     reached 2^59 (HierScheduler::kRebaseAt) all tags move down by 2^59 (the
//     model: by the chosen tag; the same shift of every active tag, so the
//     same picks). Each class's next tag is computed ahead of the pick.
//  2. Round robin over the tenants of the class, and over each tenant's
//     VM-pairs gated by window: a pair is eligible iff it has a packet and
//         window > 0  and  (inflight == 0  or  inflight + head_len <= window).
//     Rings are doubly linked (next/prev memories); a joining element goes just
//     before the cursor (end of the round), a leaving cursor passes it on.
//  3. Round robin over the pair's flows (a FIFO of backlogged flows), each flow
//     a FIFO of descriptors in a shared pool with a LIFO free list.
//
// Memories: every table is a simple dual-port memory with a registered read
// (ufab_wf_ram: BRAM / UltraRAM), made write-first by a registered bypass.
// A pair's flows live in one word with the pair (the flow block: per flow its
// head and tail descriptor, head length, count, and a copy of the head
// descriptor's link {next, next length}; plus the flow FIFO's links), so one
// read gives everything a decision on the pair needs.
//
// One decision per cycle (DEQUEUE). Each class keeps its next decision
// prefetched in registers (h_*: its cursor tenant t, t's cursor pair p, p's
// word and flow block, p's ring links, t's ring links, the next tenant's
// cursor pair and the tenant after it). A DEQUEUE whose class has a valid
// prefetch is decided in its acceptance cycle from these registers, with no
// memory read in between: eight ufab_sched_decide instances compute the
// eight classes' decisions while the WFQ picks the class, and the pick
// selects one. That cycle writes all the
// results (pair word, tenant cursor, ring links, free list) and issues the
// reads of the class's next prefetch, whose addresses are all in registers:
// the next tenant's cursor pair's word, flow block and links, and the cursor
// and successor of the tenant after it (1 dependent level each, the rest of
// the chain having been read one decision earlier). The reads land in the
// next cycle, so the class can be decided again then (its prefetch comes
// from the read registers, a class decided again on the same pair from the
// previous decision's results). The popped flow's new head link is read from
// the pool in the decision cycle and written into the flow block one cycle
// later (the write-back, forwarded into the prefetch). Classes are disjoint
// (tenants, pairs, flows, descriptors), so a decision leaves the other
// classes' prefetches valid.
// Other operations keep the prefetches coherent: a pair word or flow block
// they write (ENQUEUE, SET_WINDOW, ON_ACKED) is also written into the
// prefetch that holds that pair, and a pair or tenant joining a ring is
// patched into its class's prefetch (new ring links). A removal from a ring
// (SET_WINDOW / ON_ACKED that make a pair ineligible, SET_CLASS out of the
// class) clears the class's prefetch; the class's next DEQUEUE (like its
// first after it becomes active) reads the prefetch first: 3 cycles.
// Cycles from acceptance to the next op_ready: DEQUEUE 1 (3 to prefetch),
// SET_WINDOW / ON_ACKED / REMOVE_PAIR 3, the others 2. A pair or tenant
// joining a ring adds 3-6 cycles (reads of the cursor and its prev, then two
// writes per link memory); SET_WEIGHT adds 33 (divider).
// Results: a DEQUEUE's result follows 2 cycles after its decision (the tag is
// read from the pool in between), the others 1 cycle after their execute
// cycle; results come in acceptance order.
// After reset an initialisation sweep of max(PAIRS, POOL, TENANTS) cycles
// clears the tables (op_ready low).
//
// Operation codes (op_code), arguments, result (rsp_valid pulse):
//   1 ADD_TENANT    op_tenant, op_cls                  HierScheduler::add_tenant
//   2 ADD_PAIR      op_pair, op_tenant, op_value=window add_pair
//   3 SET_WINDOW    op_pair, op_value                  set_window
//   4 ON_ACKED      op_pair, op_value=bytes            on_acked
//   5 ENQUEUE       op_pair, op_flow, op_len, op_tag   enqueue (tag = packet handle)
//   6 DEQUEUE       -                                  dequeue: rsp_tag/len/pair
//   7 SET_WEIGHT    op_cls, op_value=weight            set_class_weight
//   8 REMOVE_TENANT op_tenant                          remove_tenant (no pairs left)
//   9 REMOVE_PAIR   op_pair                            remove_pair (idle pairs only)
//  10 SET_CLASS     op_tenant, op_cls                  set_tenant_class
// rsp_window/rsp_inflight report the addressed (or dequeued) pair's values
// after the operation (the context-table mirror, ufab_edge_top; 0 after
// REMOVE_PAIR).
//
// Parameters:
//   PAIRS    VM-pairs (power of two; 8192 full size, 64 in CI)
//   TENANTS  tenants (power of two; 1024 full size, 16 in CI)
//   FLOWS    flows per pair (power of two >= 2)
//   QCAP     packets per flow FIFO
//   POOL     descriptors in the shared pool (power of two)
//   TAG_W    packet handle (descriptor tag) width
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_sched #(
    parameter PAIRS = 64,     // VM-pairs
    parameter TENANTS = 16,   // tenants
    parameter FLOWS = 4,      // flows per pair
    parameter QCAP = 8,       // packets per flow FIFO
    parameter POOL = 2048,    // shared descriptor pool
    parameter TAG_W = 32      // descriptor tag width
) (
    input  wire             clk,
    input  wire             rst,

    /* operation port */
    input  wire             op_valid,
    output wire             op_ready,
    input  wire [3:0]       op_code,
    input  wire [15:0]      op_pair,
    input  wire [15:0]      op_tenant,
    input  wire [2:0]       op_cls,
    input  wire [7:0]       op_flow,
    input  wire [15:0]      op_len,
    input  wire [TAG_W-1:0] op_tag,
    input  wire [31:0]      op_value,

    /* result, one pulse per accepted operation */
    output reg              rsp_valid,
    output reg              rsp_ok,
    output reg  [3:0]       rsp_code,
    output reg  [TAG_W-1:0] rsp_tag,
    output reg  [15:0]      rsp_len,
    output reg  [15:0]      rsp_pair,
    output reg  [31:0]      rsp_window,
    output reg  [31:0]      rsp_inflight,

    /* status */
    output wire             any_eligible,
    output reg  [31:0]      cnt_enqueued,
    output reg  [31:0]      cnt_dequeued,
    output reg  [31:0]      cnt_drop_full,
    output reg  [31:0]      cnt_drop_invalid
);
localparam PW  = $clog2(PAIRS);
localparam TW  = $clog2(TENANTS);
localparam FW  = $clog2(FLOWS);
localparam DW  = $clog2(POOL);
localparam CW  = $clog2(QCAP+1);
localparam AW  = $clog2(TENANTS+1);
localparam INIT_N = (PAIRS > POOL) ? ((PAIRS > TENANTS) ? PAIRS : TENANTS)
                                   : ((POOL > TENANTS) ? POOL : TENANTS);
localparam IW  = $clog2(INIT_N+1);
// HierScheduler::kMaxWindow = 2^32 - 1 - 65535
localparam [31:0] MAX_WINDOW = 32'hFFFF_0000;
// HierScheduler::kRebaseAt = 2^59
localparam [63:0] REBASE_AT = 64'h0800_0000_0000_0000;

localparam [3:0] OP_ADD_TENANT = 4'd1, OP_ADD_PAIR = 4'd2, OP_SET_WINDOW = 4'd3,
                 OP_ON_ACKED = 4'd4, OP_ENQUEUE = 4'd5, OP_DEQUEUE = 4'd6, OP_SET_WEIGHT = 4'd7,
                 OP_REMOVE_TENANT = 4'd8, OP_REMOVE_PAIR = 4'd9, OP_SET_CLASS = 4'd10;
localparam [1:0] ST_UNUSED = 2'd0, ST_IDLE = 2'd1, ST_ACTIVE = 2'd2, ST_BLOCKED = 2'd3;
localparam [3:0] S_INIT = 4'd0, S_IDLE = 4'd1, S_RD1 = 4'd2, S_F2 = 4'd3, S_F3 = 4'd4,
                 S_EX = 4'd5, S_PR1 = 4'd6, S_PR2 = 4'd7, S_PINS = 4'd8, S_PINS2 = 4'd9,
                 S_TR = 4'd10, S_TINS = 4'd11, S_TINS2 = 4'd12, S_DIV = 4'd13;

// pair word: {state, fvalid, fhead, ftail, window, inflight, tenant}
localparam PRW = 2 + 1 + FW + FW + 32 + 32 + TW;
// flow entry: {head, tail, head_len, count, head's link: {next, next_len}}
localparam FE = DW + DW + 16 + CW + DW + 16;
localparam FE_HLEN = DW + 16 + CW;       // offsets of its fields
localparam FE_TAIL = DW + 32 + CW;
localparam FE_HEAD = 2*DW + 32 + CW;
localparam LKW = DW + 16;                // a descriptor link {next, next_len}: the low bits of an entry
// flow block: FLOWS entries, then FLOWS flow-FIFO links (flow f's at FLOWS*FE + f*FW)
localparam FBW = FLOWS*FE + FLOWS*FW;
// tenant info: {exists, cls, pairs}
localparam TIW = 1 + 3 + PW + 1;

initial begin
    if ((1 << PW) != PAIRS || (1 << TW) != TENANTS || (1 << FW) != FLOWS || FLOWS < 2 ||
        (1 << DW) != POOL || PAIRS > 65536 || TENANTS > 65536 || FLOWS > 256) begin
        $error("ufab_sched: PAIRS, TENANTS, FLOWS (>=2), POOL must be powers of two within port widths");
        $finish;
    end
end

/* ---------------- memory ports ---------------- */
reg             pr_re, pn_re, pp_re, fb_re, dl_re, dt_re, ti_re, tc_re, tx_re, tv_re;
reg [PW-1:0]    pr_ra, pn_ra, pp_ra, fb_ra;
reg [DW-1:0]    dl_ra, dt_ra;
reg [TW-1:0]    ti_ra, tc_ra, tx_ra, tv_ra;
reg             pr_we;  reg [PW-1:0]  pr_wa;  reg [PRW-1:0] pr_wd;
reg             pn_we;  reg [PW-1:0]  pn_wa;  reg [PW-1:0]  pn_wd;
reg             pp_we;  reg [PW-1:0]  pp_wa;  reg [PW-1:0]  pp_wd;
reg             fb_we;  reg [PW-1:0]  fb_wa;  reg [FBW-1:0] fb_wd;
reg             dl_we;  reg [DW-1:0]  dl_wa;  reg [LKW-1:0] dl_wd;
reg             dt_we;  reg [DW-1:0]  dt_wa;  reg [TAG_W-1:0] dt_wd;
reg             ti_we;  reg [TW-1:0]  ti_wa;  reg [TIW-1:0] ti_wd;
reg             tc_we;  reg [TW-1:0]  tc_wa;  reg [PW:0]    tc_wd;
reg             tn_we;  reg [TW-1:0]  tn_wa;  reg [TW-1:0]  tn_wd;
reg             tp_we;  reg [TW-1:0]  tp_wa;  reg [TW-1:0]  tp_wd;
wire [PRW-1:0]  pr_q;   // pair words
wire [PW-1:0]   pn_q;   // pair ring: next
wire [PW-1:0]   pp_q;   // pair ring: prev
wire [FBW-1:0]  fb_q;   // flow blocks
wire [LKW-1:0]  dl_q;   // descriptor links {next, next_len} (and the free list)
wire [TAG_W-1:0] dt_q;  // descriptor tags
wire [TIW-1:0]  ti_q;   // tenant info
wire [PW:0]     tc_q;   // tenant cursor {valid, pair}: next pair to serve
wire [TW-1:0]   tx_q;   // tenant ring: next
wire [TW-1:0]   tv_q;   // tenant ring: prev

ufab_wf_ram #(.DEPTH(PAIRS), .WIDTH(PRW)) pr_mem (.clk(clk), .wr_en(pr_we), .wr_addr(pr_wa), .wr_data(pr_wd),
    .rd_en(pr_re), .rd_addr(pr_ra), .rd_data(pr_q));
ufab_wf_ram #(.DEPTH(PAIRS), .WIDTH(PW)) pr_next (.clk(clk), .wr_en(pn_we), .wr_addr(pn_wa), .wr_data(pn_wd),
    .rd_en(pn_re), .rd_addr(pn_ra), .rd_data(pn_q));
ufab_wf_ram #(.DEPTH(PAIRS), .WIDTH(PW)) pr_prev (.clk(clk), .wr_en(pp_we), .wr_addr(pp_wa), .wr_data(pp_wd),
    .rd_en(pp_re), .rd_addr(pp_ra), .rd_data(pp_q));
ufab_wf_ram #(.DEPTH(PAIRS), .WIDTH(FBW)) fb_mem (.clk(clk), .wr_en(fb_we), .wr_addr(fb_wa), .wr_data(fb_wd),
    .rd_en(fb_re), .rd_addr(fb_ra), .rd_data(fb_q));
ufab_wf_ram #(.DEPTH(POOL), .WIDTH(LKW)) d_link (.clk(clk), .wr_en(dl_we), .wr_addr(dl_wa), .wr_data(dl_wd),
    .rd_en(dl_re), .rd_addr(dl_ra), .rd_data(dl_q));
ufab_wf_ram #(.DEPTH(POOL), .WIDTH(TAG_W)) d_tag (.clk(clk), .wr_en(dt_we), .wr_addr(dt_wa), .wr_data(dt_wd),
    .rd_en(dt_re), .rd_addr(dt_ra), .rd_data(dt_q));
ufab_wf_ram #(.DEPTH(TENANTS), .WIDTH(TIW)) tn_info (.clk(clk), .wr_en(ti_we), .wr_addr(ti_wa), .wr_data(ti_wd),
    .rd_en(ti_re), .rd_addr(ti_ra), .rd_data(ti_q));
ufab_wf_ram #(.DEPTH(TENANTS), .WIDTH(PW+1)) tn_cur (.clk(clk), .wr_en(tc_we), .wr_addr(tc_wa), .wr_data(tc_wd),
    .rd_en(tc_re), .rd_addr(tc_ra), .rd_data(tc_q));
ufab_wf_ram #(.DEPTH(TENANTS), .WIDTH(TW)) tn_next (.clk(clk), .wr_en(tn_we), .wr_addr(tn_wa), .wr_data(tn_wd),
    .rd_en(tx_re), .rd_addr(tx_ra), .rd_data(tx_q));
ufab_wf_ram #(.DEPTH(TENANTS), .WIDTH(TW)) tn_prev (.clk(clk), .wr_en(tp_we), .wr_addr(tp_wa), .wr_data(tp_wd),
    .rd_en(tv_re), .rd_addr(tv_ra), .rd_data(tv_q));

/* class state (8 classes, in registers) */
reg [63:0] pass_reg [0:7];
reg [63:0] stride_reg [0:7];
reg [31:0] invw_reg [0:7];
reg [AW-1:0] act_reg [0:7];
reg [7:0]  ccur_v_reg = 8'd0;
reg [TW-1:0] ccur_reg [0:7];
reg [63:0] vtime_reg = 64'd0;

/* per-class prefetch of the next decision (valid when hv_reg[c]) */
reg [7:0]     hv_reg = 8'd0;
reg [TW-1:0]  h_t   [0:7];   // the class cursor tenant
reg [PW-1:0]  h_p   [0:7];   // its cursor pair
reg [PRW-1:0] h_pr  [0:7];   // the pair's word
reg [FBW-1:0] h_fb  [0:7];   // the pair's flow block
reg [PW-1:0]  h_pn  [0:7];   // pair ring: next, prev
reg [PW-1:0]  h_pp  [0:7];
reg [TW-1:0]  h_tx  [0:7];   // tenant ring: next, prev
reg [TW-1:0]  h_tv  [0:7];
reg [PW-1:0]  h_cx  [0:7];   // the next tenant's cursor pair
reg [TW-1:0]  h_tx2 [0:7];   // the tenant after the next one
// the class decided in the previous cycle: its prefetch completes now, from
// the read registers (rq_rd) or from that decision's own results
reg           rq_v_reg = 1'b0;
reg [2:0]     rq_cls_reg = 3'd0;
reg           rq_rd_reg = 1'b0;
// the previous decision's flow-block write-back: the popped flow gets the
// link of its new head, read from the pool in the decision cycle
reg           wb_v_reg = 1'b0;
reg [PW-1:0]  wb_p_reg = {PW{1'b0}};
reg [FW-1:0]  wb_f_reg = {FW{1'b0}};
reg [FBW-1:0] wb_fb_reg = {FBW{1'b0}};
// a DEQUEUE's result, one cycle before it is output with its tag
reg           r1_v_reg = 1'b0, r1_ok_reg = 1'b0;
reg [15:0]    r1_len_reg = 16'd0, r1_pair_reg = 16'd0;
reg [31:0]    r1_win_reg = 32'd0, r1_infl_reg = 32'd0;

reg [3:0]    state_reg = S_INIT, state_next;
reg [IW-1:0] init_reg = {IW{1'b0}};
reg [DW-1:0] free_head_reg = {DW{1'b0}}, free_head_next;
reg [DW:0]   free_cnt_reg = {(DW+1){1'b0}}, free_cnt_next;
// the accepted operation
reg [3:0]       o_code_reg = 4'd0;
reg [15:0]      o_pair_reg = 16'd0, o_tenant_reg = 16'd0, o_len_reg = 16'd0;
reg [2:0]       o_cls_reg = 3'd0;
reg [7:0]       o_flow_reg = 8'd0;
reg [TAG_W-1:0] o_tag_reg = {TAG_W{1'b0}};
reg [31:0]      o_value_reg = 32'd0;
// saved operands of the multi-cycle ring inserts
reg [PW-1:0] sv_pair_reg = {PW{1'b0}}, sv_pair_next;
reg [TW-1:0] sv_ten_reg = {TW{1'b0}}, sv_ten_next;
reg [PW-1:0] sv_pc_reg = {PW{1'b0}}, sv_pc_next;   // pair ring: cursor
reg [PW-1:0] sv_pp_reg = {PW{1'b0}}, sv_pp_next;   // pair ring: cursor's prev
reg [TW-1:0] sv_tc_reg = {TW{1'b0}}, sv_tc_next;   // tenant ring: cursor
reg [TW-1:0] sv_tp_reg = {TW{1'b0}}, sv_tp_next;   // tenant ring: cursor's prev
reg [2:0]    sv_cls_reg = 3'd0, sv_cls_next;       // class to join / to re-weight

assign op_ready = state_reg == S_IDLE;
wire accept = op_valid && op_ready;

/* level 1: WFQ class select (registers only) */
wire [8*64-1:0] pass_flat;
wire [7:0] cls_active;
genvar gc;
generate
    for (gc = 0; gc < 8; gc = gc + 1) begin : g_cls
        assign pass_flat[gc*64 +: 64] = pass_reg[gc];
        assign cls_active[gc] = act_reg[gc] != 0;
    end
endgenerate
wire [2:0] ci;
wire wfq_any;
ufab_wfq8 #(.TAG_W(64)) wfq_inst (.pass(pass_flat), .active(cls_active), .sel(ci), .any(wfq_any));
assign any_eligible = wfq_any;

/* restride: one class per cycle; stride = inv_weight * 2^31/active >> 22 */
reg  [2:0]    rs_cls;
reg           rs_en;
reg  [AW-1:0] rs_act;
reg  [31:0]   rs_invw;
wire [31:0]   rs_inv;
ufab_inv_rom #(.N(TENANTS)) inv_rom_inst (.n(rs_act), .q(rs_inv));
/* verilator lint_off UNUSEDSIGNAL */  // the low 22 bits are shifted out by design
wire [63:0]   rs_prod = {32'd0, rs_invw} * {32'd0, rs_inv};
/* verilator lint_on UNUSEDSIGNAL */
wire [63:0]   rs_stride = rs_act == 0 ? 64'd0 : {22'd0, rs_prod[63:22]};

/* divider for SET_WEIGHT */
reg         div_start;
/* verilator lint_off UNUSEDSIGNAL */  // the FSM waits for done; busy is implied by S_DIV
wire        div_busy, div_done;
/* verilator lint_on UNUSEDSIGNAL */
wire [31:0] div_q;
ufab_udiv #(.W(32)) div_inst (
    .clk(clk), .rst(rst), .start(div_start), .dividend(32'h8000_0000),
    .divisor(o_value_reg), .busy(div_busy), .done(div_done), .quotient(div_q));

/* ---------------- the decision (DEQUEUE) ---------------- */
// the write-back's flow block: the popped flow's head link from the pool
reg [FBW-1:0] wb_merged;
integer iw;
always @* begin
    wb_merged = wb_fb_reg;
    for (iw = 0; iw < FLOWS; iw = iw + 1) begin
        if (wb_f_reg == iw[FW-1:0]) wb_merged[iw*FE +: LKW] = dl_q;
    end
end

// rq_cls's prefetch, completed: from the read registers, or (a class decided
// again on the same pair) from that decision's results and the write-back
wire [2:0]     rc = rq_cls_reg;
wire [PRW-1:0] hc_pr  = rq_rd_reg ? pr_q : h_pr[rc];
wire [FBW-1:0] hc_fb  = rq_rd_reg ? fb_q : wb_merged;
wire [PW-1:0]  hc_pn  = rq_rd_reg ? pn_q : h_pn[rc];
wire [PW-1:0]  hc_pp  = rq_rd_reg ? pp_q : h_pp[rc];
wire [PW-1:0]  hc_cx  = rq_rd_reg ? tc_q[PW-1:0] : h_cx[rc];
wire [TW-1:0]  hc_tx2 = rq_rd_reg ? tx_q : h_tx2[rc];

// the eight classes' decisions, computed in parallel from their prefetches
// (rq_cls's completed one); the WFQ's choice ci selects one
wire [TW-1:0]  k_t [0:7], k_nt [0:7], k_ntx [0:7], k_ntv [0:7], k_x2 [0:7];
wire [PW-1:0]  k_p [0:7], k_pn [0:7], k_pp [0:7], k_np [0:7];
wire [TW-1:0]  k_tx [0:7], k_tv [0:7];
wire [DW-1:0]  k_head [0:7], k_hnext [0:7];
wire [15:0]    k_hlen [0:7];
wire [FW-1:0]  k_fh [0:7];
wire [31:0]    k_win [0:7], k_infl [0:7];
wire [PRW-1:0] k_pr [0:7];
wire [FBW-1:0] k_fb [0:7];
wire [7:0]     k_rm_pair, k_rm_ten, k_alone_p, k_alone_t, k_hv, k_self;
generate
    for (gc = 0; gc < 8; gc = gc + 1) begin : g_dec
        wire sel = rq_v_reg && rc == gc;
        assign k_t[gc] = h_t[gc];
        assign k_p[gc] = h_p[gc];
        assign k_tx[gc] = h_tx[gc];
        assign k_tv[gc] = h_tv[gc];
        assign k_pn[gc] = sel ? hc_pn : h_pn[gc];
        assign k_pp[gc] = sel ? hc_pp : h_pp[gc];
        ufab_sched_decide #(.PW(PW), .TW(TW), .FW(FW), .DW(DW), .CW(CW), .FLOWS(FLOWS)) dec_inst (
            .t(h_t[gc]), .p(h_p[gc]), .pr(sel ? hc_pr : h_pr[gc]), .fb(sel ? hc_fb : h_fb[gc]),
            .pn(k_pn[gc]), .tx(h_tx[gc]), .tv(h_tv[gc]),
            .cx(sel ? hc_cx : h_cx[gc]), .tx2(sel ? hc_tx2 : h_tx2[gc]),
            .head(k_head[gc]), .hnext(k_hnext[gc]), .hlen(k_hlen[gc]), .fh(k_fh[gc]), .win(k_win[gc]),
            .infl_n(k_infl[gc]), .pr_n(k_pr[gc]), .fb_n(k_fb[gc]), .rm_pair(k_rm_pair[gc]),
            .rm_ten(k_rm_ten[gc]), .alone_p(k_alone_p[gc]), .alone_t(k_alone_t[gc]), .hv_n(k_hv[gc]),
            .self_n(k_self[gc]), .nt(k_nt[gc]), .ntx(k_ntx[gc]), .ntv(k_ntv[gc]), .np(k_np[gc]), .x2(k_x2[gc]));
    end
endgenerate

// each class's tag after a decision of it, ahead of the WFQ's pick (SFQ:
// start tag + len x stride in force), and the rebase. HierScheduler rebases
// when the chosen tag reaches 2^59, by that tag. Here the test is the same
// (the chosen tag is the least active one: every active tag has reached 2^59),
// but every tag moves down by 2^59 (tags below it, of idle classes, become 0).
// Active tags all shift by the same amount either way, and an idle class's
// tag stays at or below virtual time, where it re-joins; so the picks are
// identical, and the rebase needs no subtraction of the chosen tag.
wire [7:0]  rb_hi;
wire        rb_all;          // the decision rebases
wire [63:0] pass_rb [0:7];   // the tags after a rebase (when rb_all)
wire [63:0] npass   [0:7];   // class c's tag after a decision of it
generate
    for (gc = 0; gc < 8; gc = gc + 1) begin : g_pass
        assign rb_hi[gc] = pass_reg[gc] >= REBASE_AT;
        assign pass_rb[gc] = !rb_all ? pass_reg[gc] : rb_hi[gc] ? pass_reg[gc] - REBASE_AT : 64'd0;
        assign npass[gc] = pass_rb[gc] + {32'd0, 16'd0, k_hlen[gc]} * stride_reg[gc];
    end
endgenerate
assign rb_all = wfq_any && &(rb_hi | ~cls_active);

// the WFQ class's decision
wire           sel_rq = rq_v_reg && rc == ci;
wire           hv_ci  = hv_reg[ci] || sel_rq;
wire [TW-1:0]  c_t     = k_t[ci];
wire [PW-1:0]  c_p     = k_p[ci];
wire [TW-1:0]  c_tx    = k_tx[ci];
wire [TW-1:0]  c_tv    = k_tv[ci];
wire [PW-1:0]  c_pn    = k_pn[ci];
wire [PW-1:0]  c_pp    = k_pp[ci];
wire [DW-1:0]  c_head  = k_head[ci];
wire [DW-1:0]  c_hnext = k_hnext[ci];
wire [15:0]    c_hlen  = k_hlen[ci];
wire [FW-1:0]  c_fh    = k_fh[ci];
wire [31:0]    c_win   = k_win[ci];
wire [31:0]    d_infl  = k_infl[ci];
wire [PRW-1:0] d_pr    = k_pr[ci];
wire [FBW-1:0] d_fb    = k_fb[ci];
wire           d_rm_pair = k_rm_pair[ci];
wire           d_rm_ten  = k_rm_ten[ci];
wire           d_alone_p = k_alone_p[ci];
wire           d_alone_t = k_alone_t[ci];
wire           d_hv    = k_hv[ci];
wire           d_self  = k_self[ci];
wire [TW-1:0]  d_nt    = k_nt[ci];
wire [TW-1:0]  d_ntx   = k_ntx[ci];
wire [TW-1:0]  d_ntv   = k_ntv[ci];
wire [TW-1:0]  d_x2    = k_x2[ci];
wire [PW-1:0]  d_np    = k_np[ci];

// a DEQUEUE decided now: accepted with its class's prefetch valid, or after
// reading the prefetch (S_F3); nothing eligible: an empty result at once
wire deq_acc = accept && op_code == OP_DEQUEUE;
wire dec_fire = (deq_acc && wfq_any && hv_ci) || state_reg == S_F3;
wire deq_empty = deq_acc && !wfq_any;
wire fill_start = deq_acc && wfq_any && !hv_ci;

/* ---------------- the other operations: decoded read data ---------------- */
wire is_enq = o_code_reg == OP_ENQUEUE;
wire op_pair_ok = {16'd0, o_pair_reg} < PAIRS;
wire op_ten_ok = {16'd0, o_tenant_reg} < TENANTS;
wire op_flow_ok = {24'd0, o_flow_reg} < FLOWS;
wire [31:0] init32 = {{(32-IW){1'b0}}, init_reg};
wire [PW-1:0]  p_sel = o_pair_reg[PW-1:0];
wire [FW-1:0]  o_f = o_flow_reg[FW-1:0];

wire [1:0]     pr_state  = pr_q[PRW-1 -: 2];
wire           pr_fvalid = pr_q[PRW-3];
wire [FW-1:0]  pr_fhead  = pr_q[PRW-4 -: FW];
wire [FW-1:0]  pr_ftail  = pr_q[PRW-4-FW -: FW];
wire [31:0]    pr_window = pr_q[TW+64-1 -: 32];
wire [31:0]    pr_infl   = pr_q[TW+32-1 -: 32];
wire [TW-1:0]  pr_tenant = pr_q[TW-1:0];

// tenant info (ADD_*/REMOVE_TENANT/SET_CLASS: op_tenant; pair ops: the pair's tenant)
wire           ti_exists = ti_q[TIW-1];
wire [2:0]     ti_cls    = ti_q[TIW-2 -: 3];
wire [PW:0]    ti_pairs  = ti_q[PW:0];

// ENQUEUE: the addressed flow; SET_WINDOW / ON_ACKED: the head flow's length
// (muxes over constant slices)
reg  [FE-1:0]  e_fe;
reg  [15:0]    w_hlen;
integer ie;
always @* begin
    e_fe = fb_q[FE-1:0];
    w_hlen = fb_q[FE_HLEN +: 16];
    for (ie = 0; ie < FLOWS; ie = ie + 1) begin
        if (o_f == ie[FW-1:0]) e_fe = fb_q[ie*FE +: FE];
        if (pr_fhead == ie[FW-1:0]) w_hlen = fb_q[ie*FE + FE_HLEN +: 16];
    end
end
wire [DW-1:0]  e_head  = e_fe[FE_HEAD +: DW];
wire [DW-1:0]  e_tail  = e_fe[FE_TAIL +: DW];
wire [15:0]    e_hlen  = e_fe[FE_HLEN +: 16];
wire [CW-1:0]  e_cnt   = e_fe[LKW +: CW];
wire [LKW-1:0] e_link  = e_fe[LKW-1:0];
wire [31:0]    e_cnt32 = {{(32-CW){1'b0}}, e_cnt};
// the flow after the ENQUEUE: a new head, or a new tail (the head's link is
// copied into the entry when the head is the tail)
wire [FE-1:0]  e_fe_n  = e_cnt == 0
    ? {free_head_reg, free_head_reg, o_len_reg, {{(CW-1){1'b0}}, 1'b1}, {LKW{1'b0}}}
    : {e_head, free_head_reg, e_hlen, e_cnt + 1'b1, e_cnt == 1 ? {free_head_reg, o_len_reg} : e_link};
/* verilator lint_off UNUSEDSIGNAL */  // the free list uses only the link's next field
wire [LKW-1:0] dl_rd = dl_q;
/* verilator lint_on UNUSEDSIGNAL */
wire [DW-1:0]  dl_next = dl_rd[LKW-1 -: DW];

/* ---------------- read ports ---------------- */
always @* begin
    pr_re = 1'b0; pn_re = 1'b0; pp_re = 1'b0; fb_re = 1'b0;
    dl_re = 1'b0; dt_re = 1'b0; ti_re = 1'b0; tc_re = 1'b0; tx_re = 1'b0; tv_re = 1'b0;
    pr_ra = op_pair[PW-1:0]; pn_ra = op_pair[PW-1:0]; pp_ra = op_pair[PW-1:0]; fb_ra = op_pair[PW-1:0];
    dl_ra = free_head_reg; dt_ra = c_head;
    ti_ra = op_tenant[TW-1:0]; tc_ra = op_tenant[TW-1:0];
    tx_ra = op_tenant[TW-1:0]; tv_ra = op_tenant[TW-1:0];
    case (state_reg)
    S_IDLE: if (accept) begin
        case (op_code)
        OP_ADD_TENANT, OP_REMOVE_TENANT: ti_re = 1'b1;
        OP_SET_CLASS: begin ti_re = 1'b1; tc_re = 1'b1; tx_re = 1'b1; tv_re = 1'b1; end
        OP_ADD_PAIR: begin pr_re = 1'b1; ti_re = 1'b1; end
        OP_SET_WINDOW, OP_ON_ACKED: begin pr_re = 1'b1; pn_re = 1'b1; pp_re = 1'b1; fb_re = 1'b1; end
        OP_REMOVE_PAIR: pr_re = 1'b1;
        OP_ENQUEUE: begin pr_re = 1'b1; fb_re = 1'b1; dl_re = 1'b1; end
        OP_DEQUEUE: if (fill_start) begin
            // prefetch, 1st read: the class cursor tenant's cursor and ring links
            tc_re = 1'b1; tx_re = 1'b1; tv_re = 1'b1;
            tc_ra = ccur_reg[ci]; tx_ra = ccur_reg[ci]; tv_ra = ccur_reg[ci];
        end
        default: ;
        endcase
    end
    S_RD1: begin
        // SET_WINDOW / ON_ACKED: the pair's tenant; REMOVE_PAIR: its info only
        ti_re = 1'b1; tc_re = o_code_reg != OP_REMOVE_PAIR; tx_re = tc_re; tv_re = tc_re;
        ti_ra = pr_tenant; tc_ra = pr_tenant; tx_ra = pr_tenant; tv_ra = pr_tenant;
    end
    S_F2: begin
        // prefetch, 2nd read: the cursor pair; the next tenant's cursor and next
        pr_re = 1'b1; pn_re = 1'b1; pp_re = 1'b1; fb_re = 1'b1;
        pr_ra = tc_q[PW-1:0]; pn_ra = tc_q[PW-1:0]; pp_ra = tc_q[PW-1:0]; fb_ra = tc_q[PW-1:0];
        tc_re = 1'b1; tx_re = 1'b1; tc_ra = tx_q; tx_ra = tx_q;
    end
    S_PR1: begin
        // pair ring insert: the tenant's cursor and class
        tc_re = 1'b1; tc_ra = sv_ten_reg;
        ti_re = 1'b1; ti_ra = sv_ten_reg;
    end
    S_PR2: begin
        pp_re = 1'b1; pp_ra = tc_q[PW-1:0];   // the cursor's prev
    end
    S_TR: begin
        tv_re = 1'b1; tv_ra = ccur_reg[sv_cls_reg];   // tenant ring: the cursor's prev
    end
    default: ;
    endcase
    if (dec_fire) begin
        // the packet's tag (for the result) and its successor's link (write-back)
        dt_re = 1'b1; dt_ra = c_head;
        dl_re = 1'b1; dl_ra = c_hnext;
        // the class's next prefetch: one level of reads, all addresses in registers
        if (d_hv && !d_self) begin
            pr_re = 1'b1; pn_re = 1'b1; pp_re = 1'b1; fb_re = 1'b1;
            pr_ra = d_np; pn_ra = d_np; pp_ra = d_np; fb_ra = d_np;
            tc_re = 1'b1; tx_re = 1'b1; tc_ra = d_x2; tx_ra = d_x2;
        end
    end
end

/* ---------------- next state and writes ---------------- */
// class register updates (at most one class's cursor/active count per cycle)
reg          cls_we;     reg [2:0] cls_wsel;
reg [AW-1:0] cls_act_n;  reg cls_cv_n;  reg [TW-1:0] cls_cur_n;
reg          pass_we;    reg [2:0] pass_wsel; reg [63:0] pass_wd;
reg          rebase;     reg [63:0] vtime_n;
reg          invw_we;

reg          ok;
reg [31:0]   win_n, infl_n;
reg [1:0]    st_n;
reg          fits, fv_n, rm_pair, rm_ten;
reg [FW-1:0] fh_n, ft_n;
reg [32:0]   sum;
reg [FBW-1:0] eb_n;      // ENQUEUE: the pair's flow block after it
integer      ix;
reg [2:0]    cls_b;      // class of the tenant that may leave its class's ring
// a prefetch an operation made stale by removing from a ring: the class of
// the pair's tenant, or of the tenant that changes class
reg          clr_a;

always @* begin
    state_next = state_reg;
    free_head_next = free_head_reg;
    free_cnt_next = free_cnt_reg;
    sv_pair_next = sv_pair_reg; sv_ten_next = sv_ten_reg;
    sv_pc_next = sv_pc_reg; sv_pp_next = sv_pp_reg;
    sv_tc_next = sv_tc_reg; sv_tp_next = sv_tp_reg; sv_cls_next = sv_cls_reg;

    pr_we = 1'b0; pr_wa = p_sel; pr_wd = pr_q;
    pn_we = 1'b0; pn_wa = {PW{1'b0}}; pn_wd = {PW{1'b0}};
    pp_we = 1'b0; pp_wa = {PW{1'b0}}; pp_wd = {PW{1'b0}};
    fb_we = 1'b0; fb_wa = p_sel; fb_wd = fb_q;
    dl_we = 1'b0; dl_wa = free_head_reg; dl_wd = dl_q;
    dt_we = 1'b0; dt_wa = free_head_reg; dt_wd = o_tag_reg;
    ti_we = 1'b0; ti_wa = o_tenant_reg[TW-1:0]; ti_wd = ti_q;
    tc_we = 1'b0; tc_wa = pr_tenant; tc_wd = {(PW+1){1'b0}};
    tn_we = 1'b0; tn_wa = {TW{1'b0}}; tn_wd = {TW{1'b0}};
    tp_we = 1'b0; tp_wa = {TW{1'b0}}; tp_wd = {TW{1'b0}};

    cls_b = (state_reg == S_EX) ? ti_cls : sv_cls_reg;
    cls_we = 1'b0; cls_wsel = cls_b; cls_act_n = act_reg[cls_b];
    cls_cv_n = ccur_v_reg[cls_b]; cls_cur_n = ccur_reg[cls_b];
    pass_we = 1'b0; pass_wsel = ci; pass_wd = pass_reg[ci];
    rebase = 1'b0; vtime_n = vtime_reg;
    invw_we = 1'b0;
    rs_en = 1'b0; rs_cls = cls_b; rs_act = act_reg[cls_b]; rs_invw = invw_reg[cls_b];
    div_start = 1'b0;

    ok = 1'b0; win_n = pr_window; infl_n = pr_infl; st_n = pr_state;
    fits = 1'b0; fv_n = pr_fvalid; fh_n = pr_fhead; ft_n = pr_ftail; rm_pair = 1'b0; rm_ten = 1'b0;
    sum = 33'd0; eb_n = fb_q;
    clr_a = 1'b0;

    case (state_reg)
    S_INIT: begin
        // clear pair states, flow blocks, tenants; thread the free list
        pr_wa = init_reg[PW-1:0]; pr_wd = {PRW{1'b0}}; pr_we = init32 < PAIRS;
        fb_wa = init_reg[PW-1:0]; fb_wd = {FBW{1'b0}}; fb_we = init32 < PAIRS;
        ti_wa = init_reg[TW-1:0]; ti_wd = {TIW{1'b0}}; ti_we = init32 < TENANTS;
        dl_wa = init_reg[DW-1:0]; dl_wd = {init_reg[DW-1:0] + 1'b1, 16'd0}; dl_we = init32 < POOL;
        free_head_next = {DW{1'b0}};
        free_cnt_next = POOL[DW:0];
        if (init32 == INIT_N - 1) state_next = S_IDLE;
    end
    S_IDLE: if (accept) begin
        case (op_code)
        OP_SET_WINDOW, OP_ON_ACKED, OP_REMOVE_PAIR: state_next = S_RD1;
        OP_DEQUEUE: state_next = fill_start ? S_F2 : S_IDLE;
        default: state_next = S_EX;
        endcase
    end
    S_RD1: state_next = S_EX;
    S_F2: state_next = S_F3;
    S_F3: state_next = S_IDLE;
    S_EX: begin
        state_next = S_IDLE;
        case (o_code_reg)
        OP_ADD_TENANT: begin
            ok = op_ten_ok && !ti_exists;
            ti_we = ok; ti_wd = {1'b1, o_cls_reg, {(PW+1){1'b0}}};
            tc_we = ok; tc_wa = o_tenant_reg[TW-1:0]; tc_wd = {(PW+1){1'b0}};
        end
        OP_REMOVE_TENANT: begin
            // only a tenant without pairs (hence not in any ring)
            ok = op_ten_ok && ti_exists && ti_pairs == 0;
            ti_we = ok; ti_wd = {TIW{1'b0}};
        end
        OP_SET_CLASS: begin
            // an active tenant leaves its class's ring and joins the end of
            // the new class's round
            ok = op_ten_ok && ti_exists;
            if (ok && o_cls_reg != ti_cls) begin
                clr_a = 1'b1;
                ti_we = 1'b1; ti_wd = {1'b1, o_cls_reg, ti_pairs};
                if (tc_q[PW]) begin
                    rm_ten = 1'b1;
                    sv_ten_next = o_tenant_reg[TW-1:0]; sv_cls_next = o_cls_reg;
                    state_next = S_TR;
                end
            end
        end
        OP_ADD_PAIR: begin
            ok = op_pair_ok && pr_state == ST_UNUSED && op_ten_ok && ti_exists;
            win_n = o_value_reg > MAX_WINDOW ? MAX_WINDOW : o_value_reg;
            infl_n = 32'd0;
            pr_we = ok;
            pr_wd = {ST_IDLE, 1'b0, {FW{1'b0}}, {FW{1'b0}}, win_n, 32'd0, o_tenant_reg[TW-1:0]};
            ti_we = ok; ti_wd = {ti_exists, ti_cls, ti_pairs + 1'b1};
        end
        OP_REMOVE_PAIR: begin
            // only an empty pair (its in-flight count is forgotten)
            ok = op_pair_ok && pr_state == ST_IDLE;
            win_n = 32'd0; infl_n = 32'd0;
            pr_we = ok; pr_wd = {PRW{1'b0}};
            ti_we = ok; ti_wa = pr_tenant; ti_wd = {ti_exists, ti_cls, ti_pairs - 1'b1};
        end
        OP_SET_WINDOW, OP_ON_ACKED: begin
            ok = op_pair_ok && pr_state != ST_UNUSED;
            if (o_code_reg == OP_SET_WINDOW) win_n = o_value_reg > MAX_WINDOW ? MAX_WINDOW : o_value_reg;
            else infl_n = o_value_reg >= pr_infl ? 32'd0 : pr_infl - o_value_reg;
            sum = {1'b0, infl_n} + {17'd0, w_hlen};
            fits = win_n != 0 && (infl_n == 0 || sum <= {1'b0, win_n});
            if (pr_state == ST_BLOCKED && fits) begin
                st_n = ST_ACTIVE;
                sv_pair_next = p_sel; sv_ten_next = pr_tenant;
                if (ok) state_next = S_PR1;
            end else if (pr_state == ST_ACTIVE && !fits) begin
                st_n = ST_BLOCKED;
                rm_pair = 1'b1;
            end
            pr_we = ok;
            pr_wd = {st_n, pr_fvalid, pr_fhead, pr_ftail, win_n, infl_n, pr_tenant};
        end
        OP_ENQUEUE: begin
            if (!op_pair_ok || !op_flow_ok || o_len_reg == 0 || pr_state == ST_UNUSED) begin
                ok = 1'b0;
            end else if (e_cnt32 == QCAP || free_cnt_reg == 0) begin
                ok = 1'b0;
            end else begin
                ok = 1'b1;
                free_head_next = dl_next;
                free_cnt_next = free_cnt_reg - 1'b1;
                dt_we = 1'b1;
                for (ix = 0; ix < FLOWS; ix = ix + 1) begin
                    if (o_f == ix[FW-1:0]) eb_n[ix*FE +: FE] = e_fe_n;
                    // a flow that was empty joins the end of the pair's flow round
                    if (e_cnt == 0 && pr_fvalid && pr_ftail == ix[FW-1:0]) eb_n[FLOWS*FE + ix*FW +: FW] = o_f;
                end
                if (e_cnt == 0) begin
                    if (!pr_fvalid) fh_n = o_f;
                    ft_n = o_f;
                    fv_n = 1'b1;
                end else begin
                    dl_we = 1'b1; dl_wa = e_tail; dl_wd = {free_head_reg, o_len_reg};
                end
                fb_we = 1'b1; fb_wd = eb_n;
                if (pr_state == ST_IDLE) begin
                    // its new packet is its next one
                    sum = {1'b0, pr_infl} + {17'd0, o_len_reg};
                    fits = pr_window != 0 && (pr_infl == 0 || sum <= {1'b0, pr_window});
                    st_n = fits ? ST_ACTIVE : ST_BLOCKED;
                    if (fits) begin
                        sv_pair_next = p_sel; sv_ten_next = pr_tenant;
                        state_next = S_PR1;
                    end
                end
                pr_we = 1'b1;
                pr_wd = {st_n, fv_n, fh_n, ft_n, pr_window, pr_infl, pr_tenant};
            end
        end
        OP_SET_WEIGHT: begin
            ok = o_value_reg != 0 && o_value_reg <= 32'd4096;
            div_start = ok;
            sv_cls_next = o_cls_reg;
            if (ok) state_next = S_DIV;
        end
        default: ok = 1'b0;
        endcase

        // remove p_sel from its tenant's ring (and the tenant from its class's
        // ring when it was the last one): single writes, same cycle
        if (rm_pair && ok) begin
            clr_a = 1'b1;
            if (pn_q == p_sel) begin
                rm_ten = 1'b1;
                tc_we = 1'b1; tc_wa = pr_tenant; tc_wd = {(PW+1){1'b0}};
            end else begin
                pn_we = 1'b1; pn_wa = pp_q; pn_wd = pn_q;
                pp_we = 1'b1; pp_wa = pn_q; pp_wd = pp_q;
                tc_we = 1'b1; tc_wa = pr_tenant;
                tc_wd = (tc_q[PW-1:0] == p_sel) ? {1'b1, pn_q} : tc_q;
            end
        end
        if (rm_ten) begin
            // the leaving tenant: the pair's (pair ops) or op_tenant (SET_CLASS)
            cls_we = 1'b1; cls_wsel = cls_b;
            cls_act_n = act_reg[cls_b] - 1'b1;
            rs_en = 1'b1; rs_cls = cls_b; rs_act = cls_act_n; rs_invw = invw_reg[cls_b];
            if (tx_q == (o_code_reg == OP_SET_CLASS ? o_tenant_reg[TW-1:0] : pr_tenant)) begin
                cls_cv_n = 1'b0; cls_cur_n = ccur_reg[cls_b];
            end else begin
                tn_we = 1'b1; tn_wa = tv_q; tn_wd = tx_q;
                tp_we = 1'b1; tp_wa = tx_q; tp_wd = tv_q;
                cls_cv_n = 1'b1;
                cls_cur_n = (ccur_reg[cls_b] == (o_code_reg == OP_SET_CLASS ? o_tenant_reg[TW-1:0] : pr_tenant))
                            ? tx_q : ccur_reg[cls_b];
            end
        end
    end
    S_PR1: state_next = S_PR2;
    S_PR2: state_next = S_PINS;
    S_PINS: begin
        // insert sv_pair just before its tenant's cursor
        if (!tc_q[PW]) begin
            pn_we = 1'b1; pn_wa = sv_pair_reg; pn_wd = sv_pair_reg;
            pp_we = 1'b1; pp_wa = sv_pair_reg; pp_wd = sv_pair_reg;
            tc_we = 1'b1; tc_wa = sv_ten_reg; tc_wd = {1'b1, sv_pair_reg};
            sv_cls_next = ti_cls;
            state_next = S_TR;  // the tenant becomes active
        end else begin
            pn_we = 1'b1; pn_wa = sv_pair_reg; pn_wd = tc_q[PW-1:0];
            pp_we = 1'b1; pp_wa = sv_pair_reg; pp_wd = pp_q;
            sv_pc_next = tc_q[PW-1:0]; sv_pp_next = pp_q;
            state_next = S_PINS2;
        end
    end
    S_PINS2: begin
        pn_we = 1'b1; pn_wa = sv_pp_reg; pn_wd = sv_pair_reg;
        pp_we = 1'b1; pp_wa = sv_pc_reg; pp_wd = sv_pair_reg;
        state_next = S_IDLE;
    end
    S_TR: state_next = S_TINS;
    S_TINS: begin
        // the tenant joins its class's round (SFQ: a class re-joining starts
        // at max(its last tag, virtual time))
        cls_we = 1'b1; cls_wsel = cls_b;
        cls_act_n = act_reg[cls_b] + 1'b1;
        rs_en = 1'b1; rs_cls = cls_b; rs_act = cls_act_n; rs_invw = invw_reg[cls_b];
        if (act_reg[cls_b] == 0 && pass_reg[cls_b] < vtime_reg) begin
            pass_we = 1'b1; pass_wsel = cls_b; pass_wd = vtime_reg;
        end
        if (!ccur_v_reg[cls_b]) begin
            tn_we = 1'b1; tn_wa = sv_ten_reg; tn_wd = sv_ten_reg;
            tp_we = 1'b1; tp_wa = sv_ten_reg; tp_wd = sv_ten_reg;
            cls_cv_n = 1'b1; cls_cur_n = sv_ten_reg;
            state_next = S_IDLE;
        end else begin
            tn_we = 1'b1; tn_wa = sv_ten_reg; tn_wd = ccur_reg[cls_b];
            tp_we = 1'b1; tp_wa = sv_ten_reg; tp_wd = tv_q;
            sv_tc_next = ccur_reg[cls_b]; sv_tp_next = tv_q;
            state_next = S_TINS2;
        end
    end
    S_TINS2: begin
        tn_we = 1'b1; tn_wa = sv_tp_reg; tn_wd = sv_ten_reg;
        tp_we = 1'b1; tp_wa = sv_tc_reg; tp_wd = sv_ten_reg;
        state_next = S_IDLE;
    end
    S_DIV: begin
        if (div_done) begin
            invw_we = 1'b1;
            rs_en = 1'b1; rs_cls = sv_cls_reg; rs_act = act_reg[sv_cls_reg]; rs_invw = div_q;
            state_next = S_IDLE;
        end
    end
    default: state_next = S_IDLE;
    endcase

    // the decision's writes (S_IDLE or S_F3: no other write happens then)
    if (dec_fire) begin
        pr_we = 1'b1; pr_wa = c_p; pr_wd = d_pr;
        // the packet's descriptor goes to the free list (LIFO)
        dl_we = 1'b1; dl_wa = c_head; dl_wd = {free_head_reg, 16'd0};
        free_head_next = c_head;
        free_cnt_next = free_cnt_reg + 1'b1;
        // the tenant's cursor moves on to the pair after p; p leaves the
        // ring when it is no longer eligible (the tenant too when p was its last)
        tc_we = 1'b1; tc_wa = c_t; tc_wd = d_rm_ten ? {(PW+1){1'b0}} : {1'b1, c_pn};
        if (d_rm_pair && !d_alone_p) begin
            pn_we = 1'b1; pn_wa = c_pp; pn_wd = c_pn;
            pp_we = 1'b1; pp_wa = c_pn; pp_wd = c_pp;
        end
        if (d_rm_ten && !d_alone_t) begin
            tn_we = 1'b1; tn_wa = c_tv; tn_wd = c_tx;
            tp_we = 1'b1; tp_wa = c_tx; tp_wd = c_tv;
        end
        // the class cursor moves on to the next tenant; the class charges
        // the packet at the stride in force, SFQ
        cls_we = 1'b1; cls_wsel = ci;
        cls_act_n = d_rm_ten ? act_reg[ci] - 1'b1 : act_reg[ci];
        cls_cv_n = d_hv; cls_cur_n = d_hv ? c_tx : ccur_reg[ci];
        if (d_rm_ten) begin
            rs_en = 1'b1; rs_cls = ci; rs_act = cls_act_n; rs_invw = invw_reg[ci];
        end
        rebase = rb_all;
        vtime_n = pass_rb[ci];
        pass_we = 1'b1; pass_wsel = ci; pass_wd = npass[ci];
    end
    // the previous decision's flow-block write-back
    if (wb_v_reg) begin
        fb_we = 1'b1; fb_wa = wb_p_reg; fb_wd = wb_merged;
    end
end

/* ---------------- registers ---------------- */
integer k;
always @(posedge clk) begin
    if (rebase) begin
        for (k = 0; k < 8; k = k + 1) pass_reg[k] <= pass_rb[k];
    end
    if (pass_we) pass_reg[pass_wsel] <= pass_wd;
    vtime_reg <= vtime_n;
    if (cls_we) begin
        act_reg[cls_wsel] <= cls_act_n;
        ccur_v_reg[cls_wsel] <= cls_cv_n;
        ccur_reg[cls_wsel] <= cls_cur_n;
    end
    if (invw_we) invw_reg[sv_cls_reg] <= div_q;
    if (rs_en) stride_reg[rs_cls] <= rs_stride;

    /* prefetches */
    // the class decided in the previous cycle: store its completed prefetch
    if (rq_v_reg) begin
        h_pr[rc] <= hc_pr; h_fb[rc] <= hc_fb; h_pn[rc] <= hc_pn; h_pp[rc] <= hc_pp;
        h_cx[rc] <= hc_cx; h_tx2[rc] <= hc_tx2;
        hv_reg[rc] <= 1'b1;
    end
    rq_v_reg <= 1'b0;
    if (state_reg == S_F2) begin
        // prefetch read: the tenant and its links now, the rest from the reads
        h_t[ci] <= ccur_reg[ci]; h_p[ci] <= tc_q[PW-1:0]; h_tx[ci] <= tx_q; h_tv[ci] <= tv_q;
        rq_v_reg <= 1'b1; rq_cls_reg <= ci; rq_rd_reg <= 1'b1;
    end
    if (dec_fire) begin
        // the class's next decision: its tenant and pair now, the rest from
        // this cycle's reads, or (the same pair again) from this decision
        h_t[ci] <= d_nt; h_p[ci] <= d_np; h_tx[ci] <= d_ntx; h_tv[ci] <= d_ntv;
        if (d_self) begin
            h_pr[ci] <= d_pr; h_fb[ci] <= d_fb; h_pn[ci] <= c_p; h_pp[ci] <= c_p;
            h_cx[ci] <= c_p; h_tx2[ci] <= c_t;
        end
        hv_reg[ci] <= 1'b0;
        rq_v_reg <= d_hv; rq_cls_reg <= ci; rq_rd_reg <= !d_self;
    end
    wb_v_reg <= dec_fire;
    if (dec_fire) begin
        wb_p_reg <= c_p; wb_f_reg <= c_fh; wb_fb_reg <= d_fb;
    end
    // another operation's pair word or flow block write goes into the
    // prefetch holding that pair (ENQUEUE, SET_WINDOW, ON_ACKED of a pair
    // that stays in its ring); a removal from a ring clears the class's prefetch
    // (classes share no ring, pair or flow block)
    for (k = 0; k < 8; k = k + 1) begin
        if (state_reg == S_EX && pr_we && pr_wa == h_p[k]) h_pr[k] <= pr_wd;
        if (state_reg == S_EX && fb_we && fb_wa == h_p[k]) h_fb[k] <= fb_wd;
    end
    if (clr_a) hv_reg[ti_cls] <= 1'b0;
    // ring insertions are patched into the prefetch instead: a pair joins its
    // tenant's ring just before the cursor pair (the prefetched pair when the
    // tenant is the class cursor), a tenant joins its class's ring just
    // before the class cursor (the prefetched tenant)
    for (k = 0; k < 8; k = k + 1) begin
        if (state_reg == S_PINS && tc_q[PW] && h_t[k] == sv_ten_reg) begin
            h_pp[k] <= sv_pair_reg;
            if (h_pn[k] == h_p[k]) h_pn[k] <= sv_pair_reg;
        end
    end
    if (state_reg == S_TINS && ccur_v_reg[cls_b]) begin
        h_tv[cls_b] <= sv_ten_reg;
        if (h_tx[cls_b] == h_t[cls_b]) begin
            // it was alone: the newcomer is next, then itself again
            h_tx[cls_b] <= sv_ten_reg;
            h_cx[cls_b] <= o_code_reg == OP_SET_CLASS ? tc_q[PW-1:0] : sv_pair_reg;
            h_tx2[cls_b] <= h_t[cls_b];
        end else if (h_tv[cls_b] == h_tx[cls_b]) begin
            h_tx2[cls_b] <= sv_ten_reg;   // ring of two: the newcomer follows the next one
        end
    end

    state_reg <= state_next;
    init_reg <= (state_reg == S_INIT) ? init_reg + 1'b1 : {IW{1'b0}};
    free_head_reg <= free_head_next;
    free_cnt_reg <= free_cnt_next;
    sv_pair_reg <= sv_pair_next; sv_ten_reg <= sv_ten_next;
    sv_pc_reg <= sv_pc_next; sv_pp_reg <= sv_pp_next;
    sv_tc_reg <= sv_tc_next; sv_tp_reg <= sv_tp_next; sv_cls_reg <= sv_cls_next;

    if (accept) begin
        o_code_reg <= op_code; o_pair_reg <= op_pair; o_tenant_reg <= op_tenant;
        o_cls_reg <= op_cls; o_flow_reg <= op_flow; o_len_reg <= op_len;
        o_tag_reg <= op_tag; o_value_reg <= op_value;
    end

    // results: a DEQUEUE's one cycle after its decision (with the tag read
    // then), the others' after their execute cycle; never both in one cycle
    r1_v_reg <= dec_fire || deq_empty;
    r1_ok_reg <= dec_fire;
    r1_len_reg <= c_hlen;
    r1_pair_reg <= {{(16-PW){1'b0}}, c_p};
    r1_win_reg <= c_win;
    r1_infl_reg <= d_infl;
    rsp_valid <= state_reg == S_EX || r1_v_reg;
    if (r1_v_reg) begin
        rsp_ok <= r1_ok_reg;
        rsp_code <= OP_DEQUEUE;
        rsp_tag <= dt_q;
        rsp_len <= r1_len_reg;
        rsp_pair <= r1_pair_reg;
        rsp_window <= r1_win_reg;
        rsp_inflight <= r1_infl_reg;
        if (r1_ok_reg) cnt_dequeued <= cnt_dequeued + 1'b1;
    end else if (state_reg == S_EX) begin
        rsp_ok <= ok;
        rsp_code <= o_code_reg;
        rsp_tag <= dt_q;
        rsp_len <= 16'd0;
        rsp_pair <= o_pair_reg;
        rsp_window <= win_n;
        rsp_inflight <= infl_n;
        if (is_enq) begin
            if (ok) cnt_enqueued <= cnt_enqueued + 1'b1;
            else if (!op_pair_ok || !op_flow_ok || o_len_reg == 0 || pr_state == ST_UNUSED)
                cnt_drop_invalid <= cnt_drop_invalid + 1'b1;
            else cnt_drop_full <= cnt_drop_full + 1'b1;
        end
    end

    if (rst) begin
        state_reg <= S_INIT;
        init_reg <= {IW{1'b0}};
        vtime_reg <= 64'd0;
        ccur_v_reg <= 8'd0;
        hv_reg <= 8'd0;
        rq_v_reg <= 1'b0;
        wb_v_reg <= 1'b0;
        r1_v_reg <= 1'b0;
        rsp_valid <= 1'b0;
        cnt_enqueued <= 32'd0;
        cnt_dequeued <= 32'd0;
        cnt_drop_full <= 32'd0;
        cnt_drop_invalid <= 32'd0;
        for (k = 0; k < 8; k = k + 1) begin
            pass_reg[k] <= 64'd0;
            stride_reg[k] <= 64'd0;
            invw_reg[k] <= 32'h8000_0000 >> k;  // weights 1, 2, 4, ..., 128
            act_reg[k] <= {AW{1'b0}};
            ccur_reg[k] <= {TW{1'b0}};
        end
    end
end

endmodule

`resetall
