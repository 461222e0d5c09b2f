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
//     re-joins restarts at max(its tag, virtual time); tags are rebased at 2^59
//     (HierScheduler::kRebaseAt).
//  2. Round robin over the tenants of the class, and over each tenant's
//     VM-pairs gated by window: a pair is eligible iff it has a packet and
//         window > 0  and  (inflight == 0  or  inflight + head_len <= window).
//     Rings are doubly linked (next/prev memories); a joining element goes just
//     before the cursor (end of the round), a leaving cursor passes it on.
//  3. Round robin over the pair's flows (a FIFO of backlogged flows), each flow
//     a FIFO of descriptors in a shared pool with a LIFO free list.
//
// Memories: every table is a simple dual-port memory (one write port, one
// read port with a registered read), so synthesis maps the large ones to
// BRAM / UltraRAM. An operation is a short sequence: the cycle that accepts it
// issues its first reads, each dependent read (a pointer chase) costs one more
// cycle, and one execute cycle (S_EX) computes the result and does all the
// writes, at most one per memory. Reads are never issued in a cycle that
// writes, so no read-during-write case arises and no forwarding is needed:
// the next operation's reads see every write of the previous one.
// Cycles from acceptance to the next op_ready (no ring join):
//   DEQUEUE 4: the class cursor tenant's ring links and its cursor pair ->
//   the pair's head flow and the next tenant's cursor -> the head descriptor
//   and the next flow -> execute. The cursor pair comes from a per-class
//   register (cpair, written by each DEQUEUE of the class); after a ring
//   change that may have moved it, the class's next DEQUEUE reads it from
//   tn_cur first: 5 cycles.
//   SET_WINDOW / ON_ACKED / REMOVE_PAIR 3, the others 2.
// A pair or tenant joining a ring adds 3-6 cycles (reads of the cursor and its
// prev, then two writes per link memory); SET_WEIGHT adds 33 (divider).
// After reset an initialisation sweep of max(PAIRS*FLOWS, POOL, TENANTS)
// cycles clears the tables (op_ready low).
//
// Operation codes (op_code), arguments, result (rsp_valid pulse after S_EX):
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
localparam FIW = PW + FW;
localparam INIT_N = (PAIRS*FLOWS > POOL) ? ((PAIRS*FLOWS > TENANTS) ? PAIRS*FLOWS : TENANTS)
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
localparam [3:0] S_INIT = 4'd0, S_IDLE = 4'd1, S_RD1 = 4'd2, S_RD2 = 4'd3, S_RD3 = 4'd4,
                 S_EX = 4'd5, S_PR1 = 4'd6, S_PR2 = 4'd7, S_PINS = 4'd8, S_PINS2 = 4'd9,
                 S_TR = 4'd10, S_TINS = 4'd11, S_TINS2 = 4'd12, S_DIV = 4'd13;

// pair word: {state, fvalid, fhead, ftail, window, inflight, tenant}
localparam PRW = 2 + 1 + FW + FW + 32 + 32 + TW;
// flow word: {head, tail, head_len, count}
localparam FLW = DW + DW + 16 + CW;
// tenant info: {exists, cls, pairs}
localparam TIW = 1 + 3 + PW + 1;

initial begin
    if ((1 << PW) != PAIRS || (1 << TW) != TENANTS || (1 << FW) != FLOWS || FLOWS < 2 ||
        (1 << DW) != POOL || PAIRS > 65536 || TENANTS > 65536 || FLOWS > 256) begin
        $error("ufab_sched: PAIRS, TENANTS, FLOWS (>=2), POOL must be powers of two within port widths");
        $finish;
    end
end

/* memories: one write port and one registered read port each */
reg [PRW-1:0]   pr_mem  [0:PAIRS-1];
reg [PW-1:0]    pr_next [0:PAIRS-1];
reg [PW-1:0]    pr_prev [0:PAIRS-1];
reg [FLW-1:0]   fl_mem  [0:PAIRS*FLOWS-1];
reg [FW-1:0]    fl_next [0:PAIRS*FLOWS-1];
reg [DW+15:0]   d_link  [0:POOL-1];
reg [TAG_W-1:0] d_tag   [0:POOL-1];
reg [TIW-1:0]   tn_info [0:TENANTS-1];
reg [PW:0]      tn_cur  [0:TENANTS-1];   // {valid, pair}: next pair to serve
reg [TW-1:0]    tn_next [0:TENANTS-1];
reg [TW-1:0]    tn_prev [0:TENANTS-1];

/* registered read data */
reg [PRW-1:0]   pr_q = {PRW{1'b0}};
reg [PW-1:0]    pn_q = {PW{1'b0}};
reg [PW-1:0]    pp_q = {PW{1'b0}};
reg [FLW-1:0]   fl_q = {FLW{1'b0}};
reg [FW-1:0]    fn_q = {FW{1'b0}};
reg [DW+15:0]   dl_q = {(DW+16){1'b0}};
reg [TAG_W-1:0] dt_q = {TAG_W{1'b0}};
reg [TIW-1:0]   ti_q = {TIW{1'b0}};
reg [PW:0]      tc_q = {(PW+1){1'b0}};
reg [TW-1:0]    tx_q = {TW{1'b0}};
reg [TW-1:0]    tv_q = {TW{1'b0}};
reg [FLW-1:0]   fla_reg = {FLW{1'b0}};   // DEQUEUE: the head flow, held while the next flow is read

/* class state (8 classes, in registers) */
reg [63:0] pass_reg [0:7];
reg [63:0] stride_reg [0:7];
reg [31:0] invw_reg [0:7];
reg [AW-1:0] act_reg [0:7];
reg [7:0]  ccur_v_reg = 8'd0;
reg [TW-1:0] ccur_reg [0:7];
// the class cursor tenant's cursor pair, tn_cur[ccur[c]], when cpv[c]: lets a
// DEQUEUE read the pair in its first cycle (set by each DEQUEUE of the class,
// cleared when a ring change may have moved it)
reg [PW-1:0] cpair_reg [0:7];
reg [7:0]  cpv_reg = 8'd0;
reg [63:0] vtime_reg = 64'd0;

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
reg [PW-1:0]    dp_reg = {PW{1'b0}};   // DEQUEUE: its pair (the class cursor tenant's cursor)
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

/* level 1: WFQ class select (registers only: stable while an operation runs) */
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
wire [TW-1:0] d_ti = ccur_reg[ci];   // DEQUEUE: the class cursor's tenant (accept cycle)
// the WFQ choice, registered at acceptance: the class registers do not change
// until the operation's execute cycle, so the later cycles use these and the
// comparator tree stays out of the execute cycle's logic
reg  [2:0]    ci_reg = 3'd0;
reg           any_reg = 1'b0;
wire [TW-1:0] d_ti_r = ccur_reg[ci_reg];

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

/* ---------------- decoded read data ---------------- */
wire is_deq = o_code_reg == OP_DEQUEUE;
wire is_enq = o_code_reg == OP_ENQUEUE;
wire op_pair_ok = {16'd0, o_pair_reg} < PAIRS;
wire op_ten_ok = {16'd0, o_tenant_reg} < TENANTS;
wire op_flow_ok = {24'd0, o_flow_reg} < FLOWS;
wire [31:0] init32 = {{(32-IW){1'b0}}, init_reg};

// the addressed pair: the dequeue's tenant cursor, else the argument
wire [PW-1:0]  p_sel = is_deq ? dp_reg : o_pair_reg[PW-1:0];
// tn_cur of the tenant that may lose p_sel (DEQUEUE: p_sel is that cursor)
wire [PW:0]    tcur_x = is_deq ? {1'b1, dp_reg} : tc_q;

wire [1:0]     pr_state  = pr_q[PRW-1 -: 2];
wire           pr_fvalid = pr_q[PRW-3];
wire [FW-1:0]  pr_fhead  = pr_q[PRW-4 -: FW];
wire [FW-1:0]  pr_ftail  = pr_q[PRW-4-FW -: FW];
wire [31:0]    pr_window = pr_q[TW+64-1 -: 32];
wire [31:0]    pr_infl   = pr_q[TW+32-1 -: 32];
wire [TW-1:0]  pr_tenant = pr_q[TW-1:0];

// tenant info (ADD_*/REMOVE_TENANT/SET_CLASS: op_tenant; pair ops: the
// pair's tenant; DEQUEUE: the class cursor's tenant)
wire           ti_exists = ti_q[TIW-1];
wire [2:0]     ti_cls    = ti_q[TIW-2 -: 3];
wire [PW:0]    ti_pairs  = ti_q[PW:0];
wire [TW-1:0]  t_rm = is_deq ? d_ti_r : pr_tenant;   // tenant whose ring may lose p_sel

wire [FLW-1:0] fl_rd = is_deq ? fla_reg : fl_q;
wire [DW-1:0]  fl_head  = fl_rd[FLW-1 -: DW];
wire [DW-1:0]  fl_tail  = fl_rd[FLW-1-DW -: DW];
wire [15:0]    fl_hlen  = fl_rd[CW+15 -: 16];
wire [CW-1:0]  fl_count = fl_rd[CW-1:0];
wire [31:0]    fl_count32 = {{(32-CW){1'b0}}, fl_count};
/* verilator lint_off UNUSEDSIGNAL */  // DEQUEUE reads only the next flow's head length
wire [FLW-1:0] fl_rd_b = fl_q;
/* verilator lint_on UNUSEDSIGNAL */
wire [15:0]    fl_hlen_b = fl_rd_b[CW+15 -: 16];
wire [DW-1:0]  dl_next = dl_q[DW+15 -: DW];
wire [15:0]    dl_nlen = dl_q[15:0];

/* ---------------- read ports ---------------- */
reg pr_re, pn_re, pp_re, fl_re, fn_re, dl_re, dt_re, ti_re, tc_re, tx_re, tv_re;
reg [PW-1:0]  pr_ra, pn_ra, pp_ra;
reg [FIW-1:0] fl_ra, fn_ra;
reg [DW-1:0]  dl_ra, dt_ra;
reg [TW-1:0]  ti_ra, tc_ra, tx_ra, tv_ra;

always @* begin
    pr_re = 1'b0; pn_re = 1'b0; pp_re = 1'b0; fl_re = 1'b0; fn_re = 1'b0;
    dl_re = 1'b0; dt_re = 1'b0; ti_re = 1'b0; tc_re = 1'b0; tx_re = 1'b0; tv_re = 1'b0;
    pr_ra = op_pair[PW-1:0]; pn_ra = op_pair[PW-1:0]; pp_ra = op_pair[PW-1:0];
    fl_ra = {op_pair[PW-1:0], op_flow[FW-1:0]}; fn_ra = {p_sel, pr_fhead};
    dl_ra = free_head_reg; dt_ra = fl_q[FLW-1 -: DW];
    ti_ra = op_tenant[TW-1:0]; tc_ra = op_tenant[TW-1:0];
    tx_ra = op_tenant[TW-1:0]; tv_ra = op_tenant[TW-1:0];
    case (state_reg)
    S_IDLE: if (accept) begin
        case (op_code)
        OP_ADD_TENANT, OP_REMOVE_TENANT: ti_re = 1'b1;
        OP_SET_CLASS: begin ti_re = 1'b1; tc_re = 1'b1; tx_re = 1'b1; tv_re = 1'b1; end
        OP_ADD_PAIR: begin pr_re = 1'b1; ti_re = 1'b1; end
        OP_SET_WINDOW, OP_ON_ACKED: begin pr_re = 1'b1; pn_re = 1'b1; pp_re = 1'b1; end
        OP_REMOVE_PAIR: pr_re = 1'b1;
        OP_ENQUEUE: begin pr_re = 1'b1; fl_re = 1'b1; dl_re = 1'b1; end
        OP_DEQUEUE: begin
            // the class cursor tenant's ring links; its cursor pair from
            // cpair when valid (then the pair too), else from tn_cur
            ti_re = 1'b1; tx_re = 1'b1; tv_re = 1'b1;
            ti_ra = d_ti; tx_ra = d_ti; tv_ra = d_ti;
            tc_re = !cpv_reg[ci]; tc_ra = d_ti;
            pr_re = cpv_reg[ci]; pn_re = cpv_reg[ci]; pp_re = cpv_reg[ci];
            pr_ra = cpair_reg[ci]; pn_ra = cpair_reg[ci]; pp_ra = cpair_reg[ci];
        end
        default: ;
        endcase
    end
    S_RD1: begin
        if (is_deq) begin
            // the tenant's cursor pair (cpair was not valid)
            pr_re = 1'b1; pn_re = 1'b1; pp_re = 1'b1;
            pr_ra = tc_q[PW-1:0]; pn_ra = tc_q[PW-1:0]; pp_ra = tc_q[PW-1:0];
        end else begin
            // SET_WINDOW / ON_ACKED: the head flow and the pair's tenant;
            // REMOVE_PAIR: the pair's tenant
            fl_re = o_code_reg != OP_REMOVE_PAIR; fl_ra = {p_sel, pr_fhead};
            ti_re = 1'b1; tc_re = fl_re; tx_re = fl_re; tv_re = fl_re;
            ti_ra = pr_tenant; tc_ra = pr_tenant; tx_ra = pr_tenant; tv_ra = pr_tenant;
        end
    end
    S_RD2: begin
        // DEQUEUE: the pair's head flow; the next tenant's cursor (the class's next cpair)
        fl_re = 1'b1; fn_re = 1'b1; fl_ra = {p_sel, pr_fhead}; fn_ra = {p_sel, pr_fhead};
        tc_re = 1'b1; tc_ra = tx_q;
    end
    S_RD3: begin
        // DEQUEUE: the head descriptor and the flow after the head flow
        fl_re = 1'b1; fl_ra = {p_sel, fn_q};
        dl_re = 1'b1; dl_ra = fl_q[FLW-1 -: DW];
        dt_re = 1'b1; dt_ra = fl_q[FLW-1 -: DW];
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
end

/* ---------------- next state ---------------- */
reg             pr_we;  reg [PW-1:0]  pr_wa;  reg [PRW-1:0] pr_wd;
reg             pn_we;  reg [PW-1:0]  pn_wa;  reg [PW-1:0]  pn_wd;
reg             pp_we;  reg [PW-1:0]  pp_wa;  reg [PW-1:0]  pp_wd;
reg             fl_we;  reg [FIW-1:0] fl_wa;  reg [FLW-1:0] fl_wd;
reg             fn_we;  reg [FIW-1:0] fn_wa;  reg [FW-1:0]  fn_wd;
reg             dl_we;  reg [DW-1:0]  dl_wa;  reg [DW+15:0] dl_wd;
reg             dt_we;  reg [DW-1:0]  dt_wa;  reg [TAG_W-1:0] dt_wd;
reg             ti_we;  reg [TW-1:0]  ti_wa;  reg [TIW-1:0] ti_wd;
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
reg [2:0]    cls_b;      // class of the tenant that may leave its class's ring
reg          cp_we;      reg [2:0] cp_wsel; reg cp_v_n; reg [PW-1:0] cp_n;

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
    fl_we = 1'b0; fl_wa = {p_sel, is_enq ? o_flow_reg[FW-1:0] : pr_fhead}; fl_wd = fl_rd;
    fn_we = 1'b0; fn_wa = {p_sel, pr_ftail}; fn_wd = {FW{1'b0}};
    dl_we = 1'b0; dl_wa = free_head_reg; dl_wd = dl_q;
    dt_we = 1'b0; dt_wa = free_head_reg; dt_wd = o_tag_reg;
    ti_we = 1'b0; ti_wa = o_tenant_reg[TW-1:0]; ti_wd = ti_q;
    tc_we = 1'b0; tc_wa = t_rm; tc_wd = {(PW+1){1'b0}};
    tn_we = 1'b0; tn_wa = {TW{1'b0}}; tn_wd = {TW{1'b0}};
    tp_we = 1'b0; tp_wa = {TW{1'b0}}; tp_wd = {TW{1'b0}};

    cls_b = (state_reg == S_EX) ? (is_deq ? ci_reg : ti_cls) : sv_cls_reg;
    cls_we = 1'b0; cls_wsel = cls_b; cls_act_n = act_reg[cls_b];
    cls_cv_n = ccur_v_reg[cls_b]; cls_cur_n = ccur_reg[cls_b];
    pass_we = 1'b0; pass_wsel = ci_reg; pass_wd = pass_reg[ci_reg];
    rebase = 1'b0; vtime_n = vtime_reg; rebase_by = pass_reg[ci_reg];
    invw_we = 1'b0;
    cp_we = 1'b0; cp_wsel = cls_b; cp_v_n = 1'b0; cp_n = tc_q[PW-1:0];
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
        ti_wa = init_reg[TW-1:0]; ti_wd = {TIW{1'b0}}; ti_we = init32 < TENANTS;
        dl_wa = init_reg[DW-1:0]; dl_wd = {init_reg[DW-1:0] + 1'b1, 16'd0}; dl_we = init32 < POOL;
        free_head_next = {DW{1'b0}};
        free_cnt_next = POOL[DW:0];
        if (init32 == INIT_N - 1) state_next = S_IDLE;
    end
    S_IDLE: if (accept) begin
        case (op_code)
        OP_SET_WINDOW, OP_ON_ACKED, OP_REMOVE_PAIR: state_next = S_RD1;
        OP_DEQUEUE: state_next = cpv_reg[ci] ? S_RD2 : S_RD1;
        default: state_next = S_EX;
        endcase
    end
    S_RD1: state_next = is_deq ? S_RD2 : S_EX;
    S_RD2: state_next = S_RD3;
    S_RD3: state_next = S_EX;
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
            sum = {1'b0, infl_n} + {17'd0, fl_hlen};
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
            end else if (fl_count32 == QCAP || free_cnt_reg == 0) begin
                ok = 1'b0;
            end else begin
                ok = 1'b1;
                free_head_next = dl_next;
                free_cnt_next = free_cnt_reg - 1'b1;
                dt_we = 1'b1;
                fl_we = 1'b1;
                if (fl_count == 0) begin
                    fl_wd = {free_head_reg, free_head_reg, o_len_reg, {{(CW-1){1'b0}}, 1'b1}};
                    // the flow joins the end of the pair's flow round
                    if (!pr_fvalid) begin
                        fh_n = o_flow_reg[FW-1:0];
                    end else begin
                        fn_we = 1'b1; fn_wa = {p_sel, pr_ftail}; fn_wd = o_flow_reg[FW-1:0];
                    end
                    ft_n = o_flow_reg[FW-1:0];
                    fv_n = 1'b1;
                end else begin
                    fl_wd = {fl_head, free_head_reg, fl_hlen, fl_count + 1'b1};
                    dl_we = 1'b1; dl_wa = fl_tail; dl_wd = {free_head_reg, o_len_reg};
                end
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
        OP_DEQUEUE: begin
            ok = any_reg;
            len_n = fl_hlen;
            // level 3: pop the head flow's head packet; a flow still backlogged
            // goes to the end of the pair's flow round
            cnt_n = fl_count - 1'b1;
            if (cnt_n != 0) begin
                if (!single) begin
                    fh_n = fn_q;
                    fn_we = any_reg; fn_wa = {p_sel, pr_ftail}; fn_wd = pr_fhead;
                    ft_n = pr_fhead;
                end
                nh_len = single ? dl_nlen : fl_hlen_b;
            end else begin
                if (single) fv_n = 1'b0;
                else fh_n = fn_q;
                nh_len = fl_hlen_b;
            end
            empty = cnt_n == 0 && single;
            fl_we = any_reg;
            fl_wd = {dl_next, fl_tail, dl_nlen, cnt_n};
            dl_we = any_reg; dl_wa = fl_head; dl_wd = {free_head_reg, dl_nlen};
            if (any_reg) begin
                free_head_next = fl_head;
                free_cnt_next = free_cnt_reg + 1'b1;
            end
            infl_n = pr_infl + {16'd0, fl_hlen};
            sum = {1'b0, infl_n} + {17'd0, nh_len};
            fits = pr_window != 0 && sum <= {1'b0, pr_window};
            st_n = empty ? ST_IDLE : (fits ? ST_ACTIVE : ST_BLOCKED);
            rm_pair = st_n != ST_ACTIVE;
            pr_we = any_reg;
            pr_wd = {st_n, fv_n, fh_n, ft_n, pr_window, infl_n, pr_tenant};
            // the tenant's cursor moves on (to the pair after p)
            tc_we = any_reg; tc_wa = d_ti_r; tc_wd = {1'b1, pn_q};
            // the class charges the packet at the stride in force, SFQ
            if (any_reg) begin
                vtime_n = pass_reg[ci_reg];
                rebase = pass_reg[ci_reg] >= REBASE_AT;
                pass_we = 1'b1; pass_wsel = ci_reg;
                pass_wd = (rebase ? 64'd0 : pass_reg[ci_reg]) + {32'd0, 16'd0, fl_hlen} * stride_reg[ci_reg];
                if (rebase) vtime_n = 64'd0;
                // the class cursor moves on (to the tenant after ti)
                cls_we = 1'b1; cls_wsel = ci_reg; cls_cv_n = 1'b1; cls_cur_n = tx_q;
                cls_act_n = act_reg[ci_reg];
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
            if (pn_q == p_sel) begin
                rm_ten = 1'b1;
                tc_we = 1'b1; tc_wa = t_rm; tc_wd = {(PW+1){1'b0}};
            end else begin
                pn_we = 1'b1; pn_wa = pp_q; pn_wd = pn_q;
                pp_we = 1'b1; pp_wa = pn_q; pp_wd = pp_q;
                tc_we = 1'b1; tc_wa = t_rm;
                tc_wd = (tcur_x[PW-1:0] == p_sel) ? {1'b1, pn_q} : tcur_x;
            end
        end
        if (rm_ten) begin
            // the leaving tenant: t_rm (pair ops, DEQUEUE) or op_tenant (SET_CLASS)
            cls_we = 1'b1; cls_wsel = cls_b;
            cls_act_n = act_reg[cls_b] - 1'b1;
            rs_en = 1'b1; rs_cls = cls_b; rs_act = cls_act_n; rs_invw = invw_reg[cls_b];
            if (tx_q == (o_code_reg == OP_SET_CLASS ? o_tenant_reg[TW-1:0] : t_rm)) begin
                cls_cv_n = 1'b0; cls_cur_n = ccur_reg[cls_b];
            end else begin
                tn_we = 1'b1; tn_wa = tv_q; tn_wd = tx_q;
                tp_we = 1'b1; tp_wa = tx_q; tp_wd = tv_q;
                cls_cv_n = 1'b1;
                cls_cur_n = (ccur_reg[cls_b] == (o_code_reg == OP_SET_CLASS ? o_tenant_reg[TW-1:0] : t_rm))
                            ? tx_q : ccur_reg[cls_b];
            end
        end
        // cpair: a DEQUEUE leaves the class cursor at tx_q (or at ti when it
        // is alone, or none); other ring changes invalidate it
        if (is_deq) begin
            cp_we = any_reg; cp_wsel = ci_reg; cp_v_n = cls_cv_n;
            cp_n = (cls_cur_n == d_ti_r) ? tc_wd[PW-1:0] : tc_q[PW-1:0];
        end else if ((rm_pair && ok) || rm_ten) begin
            cp_we = 1'b1; cp_wsel = cls_b; cp_v_n = 1'b0;
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
            // (cpv of an empty class is already clear: emptying it cleared it)
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
end

/* ---------------- memories: registered reads, single writes ---------------- */
always @(posedge clk) begin
    if (pr_we) pr_mem[pr_wa] <= pr_wd;
    if (pr_re) pr_q <= pr_mem[pr_ra];
end
always @(posedge clk) begin
    if (pn_we) pr_next[pn_wa] <= pn_wd;
    if (pn_re) pn_q <= pr_next[pn_ra];
end
always @(posedge clk) begin
    if (pp_we) pr_prev[pp_wa] <= pp_wd;
    if (pp_re) pp_q <= pr_prev[pp_ra];
end
always @(posedge clk) begin
    if (fl_we) fl_mem[fl_wa] <= fl_wd;
    if (fl_re) fl_q <= fl_mem[fl_ra];
end
always @(posedge clk) begin
    if (fn_we) fl_next[fn_wa] <= fn_wd;
    if (fn_re) fn_q <= fl_next[fn_ra];
end
always @(posedge clk) begin
    if (dl_we) d_link[dl_wa] <= dl_wd;
    if (dl_re) dl_q <= d_link[dl_ra];
end
always @(posedge clk) begin
    if (dt_we) d_tag[dt_wa] <= dt_wd;
    if (dt_re) dt_q <= d_tag[dt_ra];
end
always @(posedge clk) begin
    if (ti_we) tn_info[ti_wa] <= ti_wd;
    if (ti_re) ti_q <= tn_info[ti_ra];
end
always @(posedge clk) begin
    if (tc_we) tn_cur[tc_wa] <= tc_wd;
    if (tc_re) tc_q <= tn_cur[tc_ra];
end
always @(posedge clk) begin
    if (tn_we) tn_next[tn_wa] <= tn_wd;
    if (tx_re) tx_q <= tn_next[tx_ra];
end
always @(posedge clk) begin
    if (tp_we) tn_prev[tp_wa] <= tp_wd;
    if (tv_re) tv_q <= tn_prev[tv_ra];
end

/* ---------------- registers ---------------- */
integer k;
always @(posedge clk) begin
    if (state_reg == S_RD3) fla_reg <= fl_q;

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
    if (cp_we) begin
        cpv_reg[cp_wsel] <= cp_v_n;
        cpair_reg[cp_wsel] <= cp_n;
    end
    if (accept) begin
        dp_reg <= cpair_reg[ci];
        ci_reg <= ci;
        any_reg <= wfq_any;
    end
    else if (state_reg == S_RD1 && is_deq) dp_reg <= tc_q[PW-1:0];
    if (rs_en) stride_reg[rs_cls] <= rs_stride;

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

    rsp_valid <= state_reg == S_EX;
    if (state_reg == S_EX) begin
        rsp_ok <= ok;
        rsp_code <= o_code_reg;
        rsp_tag <= dt_q;
        rsp_len <= len_n;
        rsp_pair <= is_deq ? {{(16-PW){1'b0}}, p_sel} : o_pair_reg;
        rsp_window <= win_n;
        rsp_inflight <= infl_n;
        if (is_enq) begin
            if (ok) cnt_enqueued <= cnt_enqueued + 1'b1;
            else if (!op_pair_ok || !op_flow_ok || o_len_reg == 0 || pr_state == ST_UNUSED)
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
        cpv_reg <= 8'd0;
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
            cpair_reg[k] <= {PW{1'b0}};
        end
    end
end

endmodule

`resetall
