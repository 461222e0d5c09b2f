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
//     re-joins restarts at max(its tag, virtual time); tags are rebased at 2^62.
//  2. Round robin over the tenants of the class, and over each tenant's
//     VM-pairs gated by window: a pair is eligible iff it has a packet and
//         window > 0  and  (inflight == 0  or  inflight + head_len <= window).
//     Rings are doubly linked (next/prev memories); a joining element goes just
//     before the cursor (end of the round), a leaving cursor passes it on.
//  3. Round robin over the pair's flows (a FIFO of backlogged flows), each flow
//     a FIFO of descriptors in a shared pool with a LIFO free list.
//
// Timing: one operation is accepted per cycle when op_ready is high. A DEQUEUE
// (one scheduling decision) always completes in its cycle: all its memory
// updates are single writes (one write port per memory). Operations that make
// a pair or a tenant join a ring (ENQUEUE to an idle pair, SET_WINDOW/ON_ACKED
// that unblock a pair) take 1-4 extra cycles (ring inserts need two writes per
// link memory); SET_WEIGHT takes 33 extra cycles (divider). After reset an
// initialisation sweep of max(PAIRS*FLOWS, POOL, TENANTS) cycles clears the
// tables (op_ready low).
//
// Memories are read asynchronously (LUTRAM on Xilinx), one write port each.
//
// Operation codes (op_code), arguments, result (rsp_ok, one cycle later):
//   1 ADD_TENANT  op_tenant, op_cls                  HierScheduler::add_tenant
//   2 ADD_PAIR    op_pair, op_tenant, op_value=window add_pair
//   3 SET_WINDOW  op_pair, op_value                  set_window
//   4 ON_ACKED    op_pair, op_value=bytes            on_acked
//   5 ENQUEUE     op_pair, op_flow, op_len, op_tag   enqueue (tag = packet handle)
//   6 DEQUEUE     -                                  dequeue: rsp_tag/len/pair
//   7 SET_WEIGHT  op_cls, op_value=weight            set_class_weight
// rsp_window/rsp_inflight report the addressed (or dequeued) pair's values
// after the operation (the context-table mirror, ufab_edge_top).
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
    input  wire [2:0]       op_code,
    input  wire [15:0]      op_pair,
    input  wire [15:0]      op_tenant,
    input  wire [2:0]       op_cls,
    input  wire [7:0]       op_flow,
    input  wire [15:0]      op_len,
    input  wire [TAG_W-1:0] op_tag,
    input  wire [31:0]      op_value,

    /* result, one cycle after acceptance */
    output reg              rsp_valid,
    output reg              rsp_ok,
    output reg  [2:0]       rsp_code,
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
localparam FIW = PW + FW;
localparam INIT_N = (PAIRS*FLOWS > POOL) ? ((PAIRS*FLOWS > TENANTS) ? PAIRS*FLOWS : TENANTS)
                                         : ((POOL > TENANTS) ? POOL : TENANTS);
localparam IW  = $clog2(INIT_N+1);
// HierScheduler::kMaxWindow = 2^32 - 1 - 65535
localparam [31:0] MAX_WINDOW = 32'hFFFF_0000;
localparam [63:0] REBASE_AT = 64'h4000_0000_0000_0000;

localparam [2:0] OP_ADD_TENANT = 3'd1, OP_ADD_PAIR = 3'd2, OP_SET_WINDOW = 3'd3,
                 OP_ON_ACKED = 3'd4, OP_ENQUEUE = 3'd5, OP_DEQUEUE = 3'd6, OP_SET_WEIGHT = 3'd7;
localparam [1:0] ST_UNUSED = 2'd0, ST_IDLE = 2'd1, ST_ACTIVE = 2'd2, ST_BLOCKED = 2'd3;
localparam [2:0] S_INIT = 3'd0, S_IDLE = 3'd1, S_PINS = 3'd2, S_PINS2 = 3'd3,
                 S_TINS = 3'd4, S_TINS2 = 3'd5, S_DIV = 3'd6;

// pair word: {state, fvalid, fhead, ftail, window, inflight, tenant}
localparam PRW = 2 + 1 + FW + FW + 32 + 32 + TW;
// flow word: {head, tail, head_len, count}
localparam FLW = DW + DW + 16 + CW;

initial begin
    if ((1 << PW) != PAIRS || (1 << TW) != TENANTS || (1 << FW) != FLOWS || FLOWS < 2 ||
        (1 << DW) != POOL || PAIRS > 65536 || TENANTS > 65536 || FLOWS > 256) begin
        $error("ufab_sched: PAIRS, TENANTS, FLOWS (>=2), POOL must be powers of two within port widths");
        $finish;
    end
end

/* memories: one write port each, asynchronous reads */
reg [PRW-1:0]   pr_mem  [0:PAIRS-1];
reg [PW-1:0]    pr_next [0:PAIRS-1];
reg [PW-1:0]    pr_prev [0:PAIRS-1];
reg [FLW-1:0]   fl_mem  [0:PAIRS*FLOWS-1];
reg [FW-1:0]    fl_next [0:PAIRS*FLOWS-1];
reg [DW+15:0]   d_link  [0:POOL-1];
reg [TAG_W-1:0] d_tag   [0:POOL-1];
reg [3:0]       tn_info [0:TENANTS-1];   // {exists, cls}
reg [PW:0]      tn_cur  [0:TENANTS-1];   // {valid, pair}: next pair to serve
reg [TW-1:0]    tn_next [0:TENANTS-1];
reg [TW-1:0]    tn_prev [0:TENANTS-1];

/* class state (8 classes, in registers) */
reg [63:0] pass_reg [0:7];
reg [63:0] stride_reg [0:7];
reg [31:0] invw_reg [0:7];
reg [AW-1:0] act_reg [0:7];
reg [7:0]  ccur_v_reg = 8'd0;
reg [TW-1:0] ccur_reg [0:7];
reg [63:0] vtime_reg = 64'd0;

reg [2:0]    state_reg = S_INIT, state_next;
reg [IW-1:0] init_reg = {IW{1'b0}};
reg [DW-1:0] free_head_reg = {DW{1'b0}}, free_head_next;
reg [DW:0]   free_cnt_reg = {(DW+1){1'b0}}, free_cnt_next;
// saved operands of the multi-cycle ring inserts
reg [PW-1:0] sv_pair_reg = {PW{1'b0}}, sv_pair_next;
reg [TW-1:0] sv_ten_reg = {TW{1'b0}}, sv_ten_next;
reg [PW-1:0] sv_pc_reg = {PW{1'b0}}, sv_pc_next;   // pair ring: cursor
reg [PW-1:0] sv_pp_reg = {PW{1'b0}}, sv_pp_next;   // pair ring: cursor's prev
reg [TW-1:0] sv_tc_reg = {TW{1'b0}}, sv_tc_next;   // tenant ring: cursor
reg [TW-1:0] sv_tp_reg = {TW{1'b0}}, sv_tp_next;   // tenant ring: cursor's prev
reg [2:0]    sv_cls_reg = 3'd0, sv_cls_next;

assign op_ready = state_reg == S_IDLE;
wire accept = op_valid && op_ready;

/* level 1: WFQ class select */
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
    .divisor(op_value), .busy(div_busy), .done(div_done), .quotient(div_q));

/* ---------------- reads ---------------- */
wire is_deq = op_code == OP_DEQUEUE;
wire is_enq = op_code == OP_ENQUEUE;
wire op_pair_ok = {16'd0, op_pair} < PAIRS;
wire op_ten_ok = {16'd0, op_tenant} < TENANTS;
wire op_flow_ok = {24'd0, op_flow} < FLOWS;
wire [31:0] init32 = {{(32-IW){1'b0}}, init_reg};
wire [31:0] fl_count32 = {{(32-CW){1'b0}}, fl_count};

// dequeue: class cursor -> tenant -> its cursor pair
wire [TW-1:0] d_ti = ccur_reg[ci];
/* verilator lint_off UNUSEDSIGNAL */  // valid bit implied: the class is active, so is its cursor tenant
wire [PW:0]   d_tcur = tn_cur[d_ti];
/* verilator lint_on UNUSEDSIGNAL */
wire [PW-1:0] p_sel = is_deq ? d_tcur[PW-1:0] : op_pair[PW-1:0];

wire [PRW-1:0] pr_rd = pr_mem[p_sel];
wire [1:0]     pr_state  = pr_rd[PRW-1 -: 2];
wire           pr_fvalid = pr_rd[PRW-3];
wire [FW-1:0]  pr_fhead  = pr_rd[PRW-4 -: FW];
wire [FW-1:0]  pr_ftail  = pr_rd[PRW-4-FW -: FW];
wire [31:0]    pr_window = pr_rd[TW+64-1 -: 32];
wire [31:0]    pr_infl   = pr_rd[TW+32-1 -: 32];
wire [TW-1:0]  pr_tenant = pr_rd[TW-1:0];
wire [PW-1:0]  pr_nx = pr_next[p_sel];

// tenant whose ring may lose p_sel
wire [TW-1:0]  t_rm = is_deq ? d_ti : pr_tenant;
wire [TW-1:0]  tb_addr = (state_reg == S_IDLE) ? t_rm : sv_ten_reg;
wire [PW:0]    tcur_b = tn_cur[tb_addr];
/* verilator lint_off UNUSEDSIGNAL */  // port a needs only exists, port b only cls
wire [3:0]     tinfo_b = tn_info[tb_addr];
wire [3:0]     tinfo_a = tn_info[op_tenant[TW-1:0]];
/* verilator lint_on UNUSEDSIGNAL */
wire [2:0]     cls_b = tinfo_b[2:0];
wire [TW-1:0]  tprev_addr = (state_reg == S_IDLE) ? t_rm : ccur_reg[cls_b];
wire [TW-1:0]  t_nx = tn_next[t_rm];
wire [TW-1:0]  t_pv = tn_prev[tprev_addr];
wire [PW-1:0]  pprev_addr = (state_reg == S_IDLE) ? p_sel : tcur_b[PW-1:0];
wire [PW-1:0]  pr_pv = pr_prev[pprev_addr];

// the flow: enqueue's argument, else the pair's head flow
wire [FW-1:0]  f_sel = is_enq ? op_flow[FW-1:0] : pr_fhead;
wire [FIW-1:0] fidx = {p_sel, f_sel};
wire [FLW-1:0] fl_rd = fl_mem[fidx];
wire [DW-1:0]  fl_head  = fl_rd[FLW-1 -: DW];
wire [DW-1:0]  fl_tail  = fl_rd[FLW-1-DW -: DW];
wire [15:0]    fl_hlen  = fl_rd[CW+15 -: 16];
wire [CW-1:0]  fl_count = fl_rd[CW-1:0];
wire [FW-1:0]  fl_nx = fl_next[fidx];
/* verilator lint_off UNUSEDSIGNAL */  // port b reads only the head length
wire [FLW-1:0] fl_rd_b = fl_mem[{p_sel, fl_nx}];
/* verilator lint_on UNUSEDSIGNAL */
wire [15:0]    fl_hlen_b = fl_rd_b[CW+15 -: 16];

wire [DW-1:0]  dl_addr = is_deq ? fl_head : free_head_reg;
wire [DW+15:0] dl_rd = d_link[dl_addr];
wire [DW-1:0]  dl_next = dl_rd[DW+15 -: DW];
wire [15:0]    dl_nlen = dl_rd[15:0];
wire [TAG_W-1:0] dtag_rd = d_tag[fl_head];

/* ---------------- next state ---------------- */
reg             pr_we;  reg [PW-1:0]  pr_wa;  reg [PRW-1:0] pr_wd;
reg             pn_we;  reg [PW-1:0]  pn_wa;  reg [PW-1:0]  pn_wd;
reg             pp_we;  reg [PW-1:0]  pp_wa;  reg [PW-1:0]  pp_wd;
reg             fl_we;  reg [FIW-1:0] fl_wa;  reg [FLW-1:0] fl_wd;
reg             fn_we;  reg [FIW-1:0] fn_wa;  reg [FW-1:0]  fn_wd;
reg             dl_we;  reg [DW-1:0]  dl_wa;  reg [DW+15:0] dl_wd;
reg             dt_we;  reg [DW-1:0]  dt_wa;  reg [TAG_W-1:0] dt_wd;
reg             ti_we;  reg [TW-1:0]  ti_wa;  reg [3:0]     ti_wd;
reg             tc_we;  reg [TW-1:0]  tc_wa;  reg [PW:0]    tc_wd;
reg             tn_we;  reg [TW-1:0]  tn_wa;  reg [TW-1:0]  tn_wd;
reg             tp_we;  reg [TW-1:0]  tp_wa;  reg [TW-1:0]  tp_wd;

// class register updates (at most one class's cursor/active count per cycle)
reg          cls_we;     reg [2:0] cls_wsel;
reg [AW-1:0] cls_act_n;  reg cls_cv_n;  reg [TW-1:0] cls_cur_n;
reg          pass_we;    reg [2:0] pass_wsel; reg [63:0] pass_wd;
reg          rebase;     reg [63:0] vtime_n;  reg [63:0] rebase_by;
reg          invw_we;

reg          ok;
reg [31:0]   win_n, infl_n;
reg [15:0]   len_n;
reg [1:0]    st_n;
reg          fits, fv_n, rm_pair, rm_ten, single, empty;
reg [FW-1:0] fh_n, ft_n;
reg [CW-1:0] cnt_n;
reg [15:0]   nh_len;
reg [32:0]   sum;

always @* begin
    state_next = state_reg;
    free_head_next = free_head_reg;
    free_cnt_next = free_cnt_reg;
    sv_pair_next = sv_pair_reg; sv_ten_next = sv_ten_reg;
    sv_pc_next = sv_pc_reg; sv_pp_next = sv_pp_reg;
    sv_tc_next = sv_tc_reg; sv_tp_next = sv_tp_reg; sv_cls_next = sv_cls_reg;

    pr_we = 1'b0; pr_wa = p_sel; pr_wd = pr_rd;
    pn_we = 1'b0; pn_wa = {PW{1'b0}}; pn_wd = {PW{1'b0}};
    pp_we = 1'b0; pp_wa = {PW{1'b0}}; pp_wd = {PW{1'b0}};
    fl_we = 1'b0; fl_wa = fidx; fl_wd = fl_rd;
    fn_we = 1'b0; fn_wa = {p_sel, pr_ftail}; fn_wd = {FW{1'b0}};
    dl_we = 1'b0; dl_wa = dl_addr; dl_wd = dl_rd;
    dt_we = 1'b0; dt_wa = free_head_reg; dt_wd = op_tag;
    ti_we = 1'b0; ti_wa = op_tenant[TW-1:0]; ti_wd = {1'b1, op_cls};
    tc_we = 1'b0; tc_wa = t_rm; tc_wd = {(PW+1){1'b0}};
    tn_we = 1'b0; tn_wa = {TW{1'b0}}; tn_wd = {TW{1'b0}};
    tp_we = 1'b0; tp_wa = {TW{1'b0}}; tp_wd = {TW{1'b0}};

    cls_we = 1'b0; cls_wsel = cls_b; cls_act_n = act_reg[cls_b];
    cls_cv_n = ccur_v_reg[cls_b]; cls_cur_n = ccur_reg[cls_b];
    pass_we = 1'b0; pass_wsel = ci; pass_wd = pass_reg[ci];
    rebase = 1'b0; vtime_n = vtime_reg; rebase_by = pass_reg[ci];
    invw_we = 1'b0;
    rs_en = 1'b0; rs_cls = cls_b; rs_act = act_reg[cls_b]; rs_invw = invw_reg[cls_b];
    div_start = 1'b0;

    ok = 1'b0; win_n = pr_window; infl_n = pr_infl; len_n = 16'd0; st_n = pr_state;
    fits = 1'b0; fv_n = pr_fvalid; fh_n = pr_fhead; ft_n = pr_ftail; rm_pair = 1'b0; rm_ten = 1'b0;
    single = pr_fhead == pr_ftail; empty = 1'b0; cnt_n = fl_count; nh_len = fl_hlen; sum = 33'd0;

    case (state_reg)
    S_INIT: begin
        // clear pair states, flow counts, tenants; thread the free list
        pr_wa = init_reg[PW-1:0]; pr_wd = {PRW{1'b0}}; pr_we = init32 < PAIRS;
        fl_wa = init_reg[FIW-1:0]; fl_wd = {FLW{1'b0}}; fl_we = init32 < PAIRS*FLOWS;
        ti_wa = init_reg[TW-1:0]; ti_wd = 4'd0; ti_we = init32 < TENANTS;
        dl_wa = init_reg[DW-1:0]; dl_wd = {init_reg[DW-1:0] + 1'b1, 16'd0}; dl_we = init32 < POOL;
        free_head_next = {DW{1'b0}};
        free_cnt_next = POOL[DW:0];
        if (init32 == INIT_N - 1) state_next = S_IDLE;
    end
    S_IDLE: if (accept) begin
        case (op_code)
        OP_ADD_TENANT: begin
            ok = op_ten_ok && !tinfo_a[3];
            ti_we = ok;
            tc_we = ok; tc_wa = op_tenant[TW-1:0]; tc_wd = {(PW+1){1'b0}};
        end
        OP_ADD_PAIR: begin
            ok = op_pair_ok && pr_state == ST_UNUSED && op_ten_ok && tinfo_a[3];
            win_n = op_value > MAX_WINDOW ? MAX_WINDOW : op_value;
            infl_n = 32'd0;
            pr_we = ok;
            pr_wd = {ST_IDLE, 1'b0, {FW{1'b0}}, {FW{1'b0}}, win_n, 32'd0, op_tenant[TW-1:0]};
        end
        OP_SET_WINDOW, OP_ON_ACKED: begin
            ok = op_pair_ok && pr_state != ST_UNUSED;
            if (op_code == OP_SET_WINDOW) win_n = op_value > MAX_WINDOW ? MAX_WINDOW : op_value;
            else infl_n = op_value >= pr_infl ? 32'd0 : pr_infl - op_value;
            sum = {1'b0, infl_n} + {17'd0, fl_hlen};
            fits = win_n != 0 && (infl_n == 0 || sum <= {1'b0, win_n});
            if (pr_state == ST_BLOCKED && fits) begin
                st_n = ST_ACTIVE;
                sv_pair_next = p_sel; sv_ten_next = pr_tenant;
                if (ok) state_next = S_PINS;
            end else if (pr_state == ST_ACTIVE && !fits) begin
                st_n = ST_BLOCKED;
                rm_pair = 1'b1;
            end
            pr_we = ok;
            pr_wd = {st_n, pr_fvalid, pr_fhead, pr_ftail, win_n, infl_n, pr_tenant};
        end
        OP_ENQUEUE: begin
            if (!op_pair_ok || !op_flow_ok || op_len == 0 || pr_state == ST_UNUSED) begin
                ok = 1'b0;
            end else if (fl_count32 == QCAP || free_cnt_reg == 0) begin
                ok = 1'b0;
            end else begin
                ok = 1'b1;
                free_head_next = dl_next;
                free_cnt_next = free_cnt_reg - 1'b1;
                dt_we = 1'b1;
                fl_we = 1'b1;
                if (fl_count == 0) begin
                    fl_wd = {free_head_reg, free_head_reg, op_len, {{(CW-1){1'b0}}, 1'b1}};
                    // the flow joins the end of the pair's flow round
                    if (!pr_fvalid) begin
                        fh_n = op_flow[FW-1:0];
                    end else begin
                        fn_we = 1'b1; fn_wa = {p_sel, pr_ftail}; fn_wd = op_flow[FW-1:0];
                    end
                    ft_n = op_flow[FW-1:0];
                    fv_n = 1'b1;
                end else begin
                    fl_wd = {fl_head, free_head_reg, fl_hlen, fl_count + 1'b1};
                    dl_we = 1'b1; dl_wa = fl_tail; dl_wd = {free_head_reg, op_len};
                end
                if (pr_state == ST_IDLE) begin
                    // its new packet is its next one
                    sum = {1'b0, pr_infl} + {17'd0, op_len};
                    fits = pr_window != 0 && (pr_infl == 0 || sum <= {1'b0, pr_window});
                    st_n = fits ? ST_ACTIVE : ST_BLOCKED;
                    if (fits) begin
                        sv_pair_next = p_sel; sv_ten_next = pr_tenant;
                        state_next = S_PINS;
                    end
                end
                pr_we = 1'b1;
                pr_wd = {st_n, fv_n, fh_n, ft_n, pr_window, pr_infl, pr_tenant};
            end
        end
        OP_DEQUEUE: begin
            ok = wfq_any;
            len_n = fl_hlen;
            // level 3: pop the head flow's head packet; a flow still backlogged
            // goes to the end of the pair's flow round
            cnt_n = fl_count - 1'b1;
            if (cnt_n != 0) begin
                if (!single) begin
                    fh_n = fl_nx;
                    fn_we = wfq_any; fn_wa = {p_sel, pr_ftail}; fn_wd = pr_fhead;
                    ft_n = pr_fhead;
                end
                nh_len = single ? dl_nlen : fl_hlen_b;
            end else begin
                if (single) fv_n = 1'b0;
                else fh_n = fl_nx;
                nh_len = fl_hlen_b;
            end
            empty = cnt_n == 0 && single;
            fl_we = wfq_any;
            fl_wd = {dl_next, fl_tail, dl_nlen, cnt_n};
            dl_we = wfq_any; dl_wa = fl_head; dl_wd = {free_head_reg, dl_nlen};
            if (wfq_any) begin
                free_head_next = fl_head;
                free_cnt_next = free_cnt_reg + 1'b1;
            end
            infl_n = pr_infl + {16'd0, fl_hlen};
            sum = {1'b0, infl_n} + {17'd0, nh_len};
            fits = pr_window != 0 && sum <= {1'b0, pr_window};
            st_n = empty ? ST_IDLE : (fits ? ST_ACTIVE : ST_BLOCKED);
            rm_pair = st_n != ST_ACTIVE;
            pr_we = wfq_any;
            pr_wd = {st_n, fv_n, fh_n, ft_n, pr_window, infl_n, pr_tenant};
            // the tenant's cursor moves on (to the pair after p)
            tc_we = wfq_any; tc_wa = d_ti; tc_wd = {1'b1, pr_nx};
            // the class charges the packet at the stride in force, SFQ
            if (wfq_any) begin
                vtime_n = pass_reg[ci];
                rebase = pass_reg[ci] >= REBASE_AT;
                pass_we = 1'b1; pass_wsel = ci;
                pass_wd = (rebase ? 64'd0 : pass_reg[ci]) + {32'd0, 16'd0, fl_hlen} * stride_reg[ci];
                if (rebase) vtime_n = 64'd0;
                // the class cursor moves on (to the tenant after ti)
                cls_we = 1'b1; cls_wsel = ci; cls_cv_n = 1'b1; cls_cur_n = t_nx;
                cls_act_n = act_reg[ci];
            end
        end
        OP_SET_WEIGHT: begin
            ok = op_value != 0 && op_value <= 32'd4096;
            div_start = ok;
            sv_cls_next = op_cls;
            if (ok) state_next = S_DIV;
        end
        default: ok = 1'b0;
        endcase

        // remove p_sel from its tenant's ring (and the tenant from its class's
        // ring when it was the last one): single writes, same cycle
        if (rm_pair && ok) begin
            if (pr_nx == p_sel) begin
                rm_ten = 1'b1;
                tc_we = 1'b1; tc_wa = t_rm; tc_wd = {(PW+1){1'b0}};
            end else begin
                pn_we = 1'b1; pn_wa = pr_pv; pn_wd = pr_nx;
                pp_we = 1'b1; pp_wa = pr_nx; pp_wd = pr_pv;
                tc_we = 1'b1; tc_wa = t_rm;
                tc_wd = (tcur_b[PW-1:0] == p_sel) ? {1'b1, pr_nx} : tcur_b;
            end
        end
        if (rm_ten) begin
            cls_we = 1'b1; cls_wsel = cls_b;
            cls_act_n = act_reg[cls_b] - 1'b1;
            rs_en = 1'b1; rs_cls = cls_b; rs_act = cls_act_n; rs_invw = invw_reg[cls_b];
            if (t_nx == t_rm) begin
                cls_cv_n = 1'b0; cls_cur_n = ccur_reg[cls_b];
            end else begin
                tn_we = 1'b1; tn_wa = t_pv; tn_wd = t_nx;
                tp_we = 1'b1; tp_wa = t_nx; tp_wd = t_pv;
                cls_cv_n = 1'b1;
                cls_cur_n = (ccur_reg[cls_b] == t_rm) ? t_nx : ccur_reg[cls_b];
            end
        end
    end
    S_PINS: begin
        // insert sv_pair just before its tenant's cursor
        if (!tcur_b[PW]) begin
            pn_we = 1'b1; pn_wa = sv_pair_reg; pn_wd = sv_pair_reg;
            pp_we = 1'b1; pp_wa = sv_pair_reg; pp_wd = sv_pair_reg;
            tc_we = 1'b1; tc_wa = sv_ten_reg; tc_wd = {1'b1, sv_pair_reg};
            state_next = S_TINS;  // the tenant becomes active
        end else begin
            pn_we = 1'b1; pn_wa = sv_pair_reg; pn_wd = tcur_b[PW-1:0];
            pp_we = 1'b1; pp_wa = sv_pair_reg; pp_wd = pr_pv;
            sv_pc_next = tcur_b[PW-1:0]; sv_pp_next = pr_pv;
            state_next = S_PINS2;
        end
    end
    S_PINS2: begin
        pn_we = 1'b1; pn_wa = sv_pp_reg; pn_wd = sv_pair_reg;
        pp_we = 1'b1; pp_wa = sv_pc_reg; pp_wd = sv_pair_reg;
        state_next = S_IDLE;
    end
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
            tp_we = 1'b1; tp_wa = sv_ten_reg; tp_wd = t_pv;
            sv_tc_next = ccur_reg[cls_b]; sv_tp_next = t_pv;
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
end

/* ---------------- registers and memory writes ---------------- */
integer k;
always @(posedge clk) begin
    if (pr_we) pr_mem[pr_wa] <= pr_wd;
    if (pn_we) pr_next[pn_wa] <= pn_wd;
    if (pp_we) pr_prev[pp_wa] <= pp_wd;
    if (fl_we) fl_mem[fl_wa] <= fl_wd;
    if (fn_we) fl_next[fn_wa] <= fn_wd;
    if (dl_we) d_link[dl_wa] <= dl_wd;
    if (dt_we) d_tag[dt_wa] <= dt_wd;
    if (ti_we) tn_info[ti_wa] <= ti_wd;
    if (tc_we) tn_cur[tc_wa] <= tc_wd;
    if (tn_we) tn_next[tn_wa] <= tn_wd;
    if (tp_we) tn_prev[tp_wa] <= tp_wd;

    if (rebase) begin
        for (k = 0; k < 8; k = k + 1) pass_reg[k] <= pass_reg[k] > rebase_by ? pass_reg[k] - rebase_by : 64'd0;
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

    state_reg <= state_next;
    init_reg <= (state_reg == S_INIT) ? init_reg + 1'b1 : {IW{1'b0}};
    free_head_reg <= free_head_next;
    free_cnt_reg <= free_cnt_next;
    sv_pair_reg <= sv_pair_next; sv_ten_reg <= sv_ten_next;
    sv_pc_reg <= sv_pc_next; sv_pp_reg <= sv_pp_next;
    sv_tc_reg <= sv_tc_next; sv_tp_reg <= sv_tp_next; sv_cls_reg <= sv_cls_next;

    rsp_valid <= accept;
    if (accept) begin
        rsp_ok <= ok;
        rsp_code <= op_code;
        rsp_tag <= dtag_rd;
        rsp_len <= len_n;
        rsp_pair <= is_deq ? {{(16-PW){1'b0}}, p_sel} : op_pair;
        rsp_window <= win_n;
        rsp_inflight <= infl_n;
        if (is_enq) begin
            if (ok) cnt_enqueued <= cnt_enqueued + 1'b1;
            else if (!op_pair_ok || !op_flow_ok || op_len == 0 || pr_state == ST_UNUSED)
                cnt_drop_invalid <= cnt_drop_invalid + 1'b1;
            else cnt_drop_full <= cnt_drop_full + 1'b1;
        end
        if (is_deq && ok) cnt_dequeued <= cnt_dequeued + 1'b1;
    end

    if (rst) begin
        state_reg <= S_INIT;
        init_reg <= {IW{1'b0}};
        vtime_reg <= 64'd0;
        ccur_v_reg <= 8'd0;
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
