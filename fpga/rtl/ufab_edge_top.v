// Language: Verilog 2001
//
// ufab_edge_top: μFAB-E on an FPGA SmartNIC (paper §4.1, Figure 8): Packet
// Scheduler (ufab_sched), Context Tables (ufab_ctx_table: per-VM-pair header
// context {token, path}, per-VM-pair admission state {window, bytes in
// flight} mirrored from the scheduler, per-tenant context), Path Monitor
// (ufab_path_monitor), TX/RX pipes (ufab_tx_pipe, ufab_rx_pipe) and the
// AXI-Lite control/status port (ufab_axil_regs).
//
// Arbitration of the scheduler's operation port (ufab_sched accepts a
// DEQUEUE every cycle and takes 2-3 cycles for other operations, see its header):
// AXI-Lite command > RX (acks, windows) > TX decision request / TX enqueue
// (these two alternate).
// The Path Monitor's port: AXI-Lite (base RTT) > RX (responses) > TX (probes).
//
// Parameters:
//   PAIRS, TENANTS, FLOWS, QCAP, POOL  as ufab_sched (8192 / 1024 full size)
//   TIMEOUT_RTTS                       probe loss timeout (8 base RTTs, §4.1)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_edge_top #(
    parameter PAIRS = 64,       // VM-pairs
    parameter TENANTS = 16,     // tenants
    parameter FLOWS = 4,        // flows per pair
    parameter QCAP = 8,         // packets per flow
    parameter POOL = 2048,      // descriptor pool
    parameter TIMEOUT_RTTS = 8  // probe timeout, base RTTs
) (
    input  wire         clk,
    input  wire         rst,

    /* AXI-Lite control/status */
    input  wire [7:0]   s_axil_awaddr,
    input  wire         s_axil_awvalid,
    output wire         s_axil_awready,
    input  wire [31:0]  s_axil_wdata,
    input  wire         s_axil_wvalid,
    output wire         s_axil_wready,
    output wire         s_axil_bvalid,
    input  wire         s_axil_bready,
    input  wire [7:0]   s_axil_araddr,
    input  wire         s_axil_arvalid,
    output wire         s_axil_arready,
    output wire [31:0]  s_axil_rdata,
    output wire         s_axil_rvalid,
    input  wire         s_axil_rready,

    /* host TX descriptors in, scheduled TX descriptors out */
    input  wire [71:0]  s_axis_tx_tdata,
    input  wire         s_axis_tx_tvalid,
    output wire         s_axis_tx_tready,
    output wire [88:0]  m_axis_tx_tdata,
    output wire         m_axis_tx_tvalid,
    input  wire         m_axis_tx_tready,

    /* RX descriptors in, host deliveries out */
    input  wire [63:0]  s_axis_rx_tdata,
    input  wire         s_axis_rx_tvalid,
    output wire         s_axis_rx_tready,
    output wire [63:0]  m_axis_rx_tdata,
    output wire         m_axis_rx_tvalid,
    input  wire         m_axis_rx_tready,

    /* path migration requests (to the control software) */
    output wire         mig_valid,
    output wire [15:0]  mig_pair
);

localparam PW = $clog2(PAIRS);
localparam TW = $clog2(TENANTS);
localparam NSTAT = 9;

/* ---- AXI-Lite ---- */
wire        cmd_valid, cmd_ready;
wire [4:0]  cmd_code;
wire [15:0] cmd_pair, cmd_tenant;
wire [31:0] cmd_value;
wire [2:0]  cmd_cls;
reg         cmd_done;
reg         cmd_ok;
reg  [31:0] cmd_rd0, cmd_rd1;
wire [32*NSTAT-1:0] stat;

ufab_axil_regs #(.PAIRS_LOG2(PW), .TENANTS_LOG2(TW), .NSTAT(NSTAT)) regs_inst (
    .clk(clk), .rst(rst),
    .s_axil_awaddr(s_axil_awaddr), .s_axil_awvalid(s_axil_awvalid), .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata), .s_axil_wvalid(s_axil_wvalid), .s_axil_wready(s_axil_wready),
    .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr), .s_axil_arvalid(s_axil_arvalid), .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata), .s_axil_rvalid(s_axil_rvalid), .s_axil_rready(s_axil_rready),
    .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_code(cmd_code), .cmd_pair(cmd_pair),
    .cmd_tenant(cmd_tenant), .cmd_value(cmd_value), .cmd_cls(cmd_cls),
    .cmd_done(cmd_done), .cmd_ok(cmd_ok), .cmd_rd0(cmd_rd0), .cmd_rd1(cmd_rd1), .stat(stat));

wire cmd_sched = cmd_code == 5'd1 || cmd_code == 5'd2 || cmd_code == 5'd3 ||
                 cmd_code == 5'd4 || cmd_code == 5'd7 || cmd_code == 5'd8 ||
                 cmd_code == 5'd9 || cmd_code == 5'd10;
wire cmd_hdr_wr = cmd_code == 5'd16;
wire cmd_pm_cfg = cmd_code == 5'd17;
wire cmd_st_rd  = cmd_code == 5'd18;
wire cmd_tn_wr  = cmd_code == 5'd19;
wire cmd_tn_rd  = cmd_code == 5'd20;

/* ---- pipes ---- */
wire        enq_valid, enq_ready;
wire [15:0] enq_pair, enq_len;
wire [7:0]  enq_flow;
wire [31:0] enq_tag;
wire        dreq_valid, dreq_ready;
wire        tx_pm_valid, tx_pm_ready;
wire [PW-1:0] tx_pm_pair;
wire        hdr_rd_en;
wire [PW-1:0] hdr_rd_addr;
wire [23:0] hdr_rd_data;
wire [31:0] cnt_tx, cnt_rx;

wire        s_op_ready;
wire        s_rsp_valid, s_rsp_ok;
wire [3:0]  s_rsp_code;
wire [31:0] s_rsp_tag, s_rsp_window, s_rsp_inflight;
wire [15:0] s_rsp_len, s_rsp_pair;

ufab_tx_pipe #(.PW(PW), .DEPTH(8)) tx_inst (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tx_tdata), .s_axis_tvalid(s_axis_tx_tvalid), .s_axis_tready(s_axis_tx_tready),
    .enq_valid(enq_valid), .enq_ready(enq_ready), .enq_pair(enq_pair), .enq_flow(enq_flow),
    .enq_len(enq_len), .enq_tag(enq_tag),
    .deq_req_valid(dreq_valid), .deq_req_ready(dreq_ready),
    .deq_rsp_valid(s_rsp_valid && s_rsp_code == 4'd6), .deq_rsp_ok(s_rsp_ok),
    .deq_rsp_tag(s_rsp_tag), .deq_rsp_len(s_rsp_len), .deq_rsp_pair(s_rsp_pair),
    .pm_sent_valid(tx_pm_valid), .pm_sent_ready(tx_pm_ready), .pm_sent_pair(tx_pm_pair),
    .ctx_rd_en(hdr_rd_en), .ctx_rd_addr(hdr_rd_addr), .ctx_rd_data(hdr_rd_data),
    .m_axis_tdata(m_axis_tx_tdata), .m_axis_tvalid(m_axis_tx_tvalid), .m_axis_tready(m_axis_tx_tready),
    .cnt_tx(cnt_tx));

wire        rx_sop_valid, rx_sop_ready;
wire [2:0]  rx_sop_code;
wire [15:0] rx_sop_pair;
wire [31:0] rx_sop_value;
wire        rx_pm_valid, rx_pm_ready, rx_pm_viol;
wire [PW-1:0] rx_pm_pair;

ufab_rx_pipe #(.PW(PW)) rx_inst (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_rx_tdata), .s_axis_tvalid(s_axis_rx_tvalid), .s_axis_tready(s_axis_rx_tready),
    .m_axis_tdata(m_axis_rx_tdata), .m_axis_tvalid(m_axis_rx_tvalid), .m_axis_tready(m_axis_rx_tready),
    .sop_valid(rx_sop_valid), .sop_ready(rx_sop_ready), .sop_code(rx_sop_code),
    .sop_pair(rx_sop_pair), .sop_value(rx_sop_value),
    .pm_valid(rx_pm_valid), .pm_ready(rx_pm_ready), .pm_pair(rx_pm_pair), .pm_viol(rx_pm_viol),
    .cnt_rx(cnt_rx));

/* ---- scheduler port arbitration ---- */
wire g_cmd = cmd_valid && cmd_sched;
wire g_rx  = !g_cmd && rx_sop_valid;
// decision requests and enqueues alternate when both are waiting (a TX pipe
// with room requests a decision every cycle, even when nothing is eligible)
reg  last_deq_reg = 1'b0;
wire deq_turn = dreq_valid && !(enq_valid && last_deq_reg);
wire g_deq = !g_cmd && !rx_sop_valid && deq_turn;
wire g_enq = !g_cmd && !rx_sop_valid && !deq_turn && enq_valid;
always @(posedge clk) begin
    if (s_op_ready && (g_deq || g_enq)) last_deq_reg <= g_deq;
    if (rst) last_deq_reg <= 1'b0;
end

wire        s_op_valid = g_cmd || g_rx || g_deq || g_enq;
wire [3:0]  s_op_code = g_cmd ? cmd_code[3:0] : g_rx ? {1'b0, rx_sop_code} : g_deq ? 4'd6 : 4'd5;
wire [15:0] s_op_pair = g_cmd ? cmd_pair : g_rx ? rx_sop_pair : enq_pair;
wire [31:0] s_op_value = g_cmd ? cmd_value : rx_sop_value;

assign rx_sop_ready = g_rx && s_op_ready;
assign dreq_ready = g_deq && s_op_ready;
assign enq_ready = g_enq && s_op_ready;

wire [31:0] c_enq, c_deq, c_full, c_inv;
/* verilator lint_off PINCONNECTEMPTY */  // any_eligible is for status only
ufab_sched #(.PAIRS(PAIRS), .TENANTS(TENANTS), .FLOWS(FLOWS), .QCAP(QCAP), .POOL(POOL), .TAG_W(32)) sched_inst (
    .clk(clk), .rst(rst),
    .op_valid(s_op_valid), .op_ready(s_op_ready), .op_code(s_op_code), .op_pair(s_op_pair),
    .op_tenant(cmd_tenant), .op_cls(cmd_cls), .op_flow(enq_flow), .op_len(enq_len),
    .op_tag(enq_tag), .op_value(s_op_value),
    .rsp_valid(s_rsp_valid), .rsp_ok(s_rsp_ok), .rsp_code(s_rsp_code), .rsp_tag(s_rsp_tag),
    .rsp_len(s_rsp_len), .rsp_pair(s_rsp_pair), .rsp_window(s_rsp_window), .rsp_inflight(s_rsp_inflight),
    .any_eligible(),
    .cnt_enqueued(c_enq), .cnt_dequeued(c_deq), .cnt_drop_full(c_full), .cnt_drop_invalid(c_inv));
/* verilator lint_on PINCONNECTEMPTY */

/* testbench tap (Verilator public, no logic): the scheduler's operation port
   and results as ufab_sched sees them. fpga/tb/test_ufab_edge_top.cpp replays
   every accepted operation on the golden model. */
wire        tap_op_fire   /*verilator public_flat_rd*/ = s_op_valid && s_op_ready;
wire [3:0]  tap_op_code   /*verilator public_flat_rd*/ = s_op_code;
wire [15:0] tap_op_pair   /*verilator public_flat_rd*/ = s_op_pair;
wire [15:0] tap_op_tenant /*verilator public_flat_rd*/ = cmd_tenant;
wire [2:0]  tap_op_cls    /*verilator public_flat_rd*/ = cmd_cls;
wire [7:0]  tap_op_flow   /*verilator public_flat_rd*/ = enq_flow;
wire [15:0] tap_op_len    /*verilator public_flat_rd*/ = enq_len;
wire [31:0] tap_op_tag    /*verilator public_flat_rd*/ = enq_tag;
wire [31:0] tap_op_value  /*verilator public_flat_rd*/ = s_op_value;
wire        tap_rsp_valid /*verilator public_flat_rd*/ = s_rsp_valid;
wire        tap_rsp_ok    /*verilator public_flat_rd*/ = s_rsp_ok;
wire [3:0]  tap_rsp_code  /*verilator public_flat_rd*/ = s_rsp_code;
wire [31:0] tap_rsp_tag   /*verilator public_flat_rd*/ = s_rsp_tag;
wire [15:0] tap_rsp_len   /*verilator public_flat_rd*/ = s_rsp_len;
wire [15:0] tap_rsp_pair  /*verilator public_flat_rd*/ = s_rsp_pair;
wire [31:0] tap_rsp_win   /*verilator public_flat_rd*/ = s_rsp_window;
wire [31:0] tap_rsp_infl  /*verilator public_flat_rd*/ = s_rsp_inflight;

/* ---- path monitor ---- */
wire pg_cmd = cmd_valid && cmd_pm_cfg;
wire pg_rx  = !pg_cmd && rx_pm_valid;
wire pg_tx  = !pg_cmd && !rx_pm_valid && tx_pm_valid;
wire pm_ready;
wire [31:0] c_loss, c_stale, c_mig;
wire [PW-1:0] mig_pair_w;
/* verilator lint_off PINCONNECTEMPTY */  // per-response and per-loss events: status via counters here
ufab_path_monitor #(.PAIRS(PAIRS), .TIMEOUT_RTTS(TIMEOUT_RTTS), .VIOL_LIMIT(3)) pm_inst (
    .clk(clk), .rst(rst),
    .op_valid(pg_cmd || pg_rx || pg_tx), .op_ready(pm_ready),
    .op_code(pg_cmd ? 2'd1 : pg_rx ? 2'd3 : 2'd2),
    .op_pair(pg_cmd ? cmd_pair[PW-1:0] : pg_rx ? rx_pm_pair : tx_pm_pair),
    .op_rtt(cmd_value[23:0]), .op_viol(rx_pm_viol),
    .rsp_valid(), .rsp_accepted(), .rsp_pair(),
    .loss_valid(), .loss_pair(), .loss_time(),
    .mig_valid(mig_valid), .mig_pair(mig_pair_w),
    .now(), .cnt_losses(c_loss), .cnt_stale(c_stale), .cnt_migrations(c_mig));
/* verilator lint_on PINCONNECTEMPTY */
assign mig_pair = {{(16-PW){1'b0}}, mig_pair_w};
assign rx_pm_ready = pg_rx && pm_ready;
assign tx_pm_ready = !pg_cmd && !rx_pm_valid && pm_ready;

/* ---- context tables ---- */
ufab_ctx_table #(.DEPTH(PAIRS), .WIDTH(24), .URAM(0)) hdr_inst (
    .clk(clk), .wr_en(cmd_valid && cmd_hdr_wr), .wr_addr(cmd_pair[PW-1:0]),
    .wr_data({cmd_value[15:0], cmd_value[23:16]}),
    .rd_en(hdr_rd_en), .rd_addr(hdr_rd_addr), .rd_data(hdr_rd_data));

wire mirror = s_rsp_valid && s_rsp_ok &&
              (s_rsp_code == 4'd2 || s_rsp_code == 4'd3 || s_rsp_code == 4'd4 || s_rsp_code == 4'd6 ||
               s_rsp_code == 4'd9);
wire [63:0] st_rd_data;
ufab_ctx_table #(.DEPTH(PAIRS), .WIDTH(64), .URAM(1)) state_inst (
    .clk(clk), .wr_en(mirror), .wr_addr(s_rsp_pair[PW-1:0]), .wr_data({s_rsp_window, s_rsp_inflight}),
    .rd_en(cmd_valid && cmd_st_rd), .rd_addr(cmd_pair[PW-1:0]), .rd_data(st_rd_data));

wire [31:0] tn_rd_data;
ufab_ctx_table #(.DEPTH(TENANTS), .WIDTH(32), .URAM(0)) tenant_inst (
    .clk(clk), .wr_en(cmd_valid && cmd_tn_wr), .wr_addr(cmd_tenant[TW-1:0]), .wr_data(cmd_value),
    .rd_en(cmd_valid && cmd_tn_rd), .rd_addr(cmd_tenant[TW-1:0]), .rd_data(tn_rd_data));

/* ---- command completion ---- */
assign cmd_ready = cmd_sched ? s_op_ready : cmd_pm_cfg ? pm_ready : 1'b1;
reg cmd_wait_sched = 1'b0;
reg cmd_wait_rd = 1'b0;
reg cmd_was_tn = 1'b0;
always @(posedge clk) begin
    cmd_done <= 1'b0;
    // the scheduler's results come in order, and a command is accepted only
    // after every earlier operation but a DEQUEUE has finished: the next
    // result that is not a DEQUEUE's is this command's
    if (cmd_valid && cmd_ready && cmd_sched) cmd_wait_sched <= 1'b1;
    else if (s_rsp_valid && s_rsp_code != 4'd6) cmd_wait_sched <= 1'b0;
    cmd_wait_rd <= cmd_valid && (cmd_st_rd || cmd_tn_rd);
    cmd_was_tn <= cmd_tn_rd;
    if (cmd_wait_sched && s_rsp_valid && s_rsp_code != 4'd6) begin
        cmd_done <= 1'b1; cmd_ok <= s_rsp_ok; cmd_rd0 <= s_rsp_window; cmd_rd1 <= s_rsp_inflight;
    end else if (cmd_wait_rd) begin
        cmd_done <= 1'b1; cmd_ok <= 1'b1;
        cmd_rd0 <= cmd_was_tn ? tn_rd_data : st_rd_data[63:32];
        cmd_rd1 <= cmd_was_tn ? 32'd0 : st_rd_data[31:0];
    end else if (cmd_valid && cmd_ready && !cmd_sched && !cmd_st_rd && !cmd_tn_rd) begin
        cmd_done <= 1'b1;
        cmd_ok <= cmd_hdr_wr || cmd_pm_cfg || cmd_tn_wr;
        cmd_rd0 <= 32'd0; cmd_rd1 <= 32'd0;
    end
    if (rst) begin
        cmd_done <= 1'b0;
        cmd_wait_sched <= 1'b0;
    end
end

assign stat = {cnt_rx, cnt_tx, c_mig, c_stale, c_loss, c_inv, c_full, c_deq, c_enq};

endmodule

`resetall
