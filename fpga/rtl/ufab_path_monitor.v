// Language: Verilog 2001
//
// ufab_path_monitor: the μFAB-E Path Monitor (paper §4.1, Figure 8). Per
// VM-pair it tracks the outstanding probe and detects its loss "by timeout
// beyond 8 baseRTTs" (§4.1: in-flight bytes <= 3 BDP bound the latency by
// 4 base RTTs), with the semantics of probe/probe_pacer.hpp:
//   SENT  pair          a probe leaves now: deadline = now + TIMEOUT_RTTS * base_rtt
//   RESP  pair, viol    a response: accepted iff a probe is outstanding and
//                       now < deadline; at or after the deadline it is stale
//                       and the probe counts as lost (reported once)
//   CFG   pair, rtt     sets the pair's base RTT (cycles) and clears its state
// Consecutive violations (a response flagged viol, or a lost probe) reaching
// VIOL_LIMIT raise a migration request (§4.1 "Consecutive network
// predictability violations or drops of probes will trigger path migration")
// and restart the count; an accepted response without viol clears it.
// A sweep visits one pair every two idle cycles and reports probes whose
// deadline has passed: a loss is reported at most 2*PAIRS + 2 cycles after
// its deadline (while the op port is idle).
//
// Time is a free-running 32-bit cycle counter compared in serial-number
// arithmetic (deadlines within 2^31 cycles).
//
// Per-pair word (block RAM): {outstanding, deadline[31:0], base_rtt[23:0], viol[3:0]}.
//
// Parameters:
//   PAIRS         VM-pairs (8192 full size)
//   TIMEOUT_RTTS  probe timeout in base RTTs (8, §4.1)
//   VIOL_LIMIT    consecutive violations that request a migration (1..15)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_path_monitor #(
    parameter PAIRS = 64,         // VM-pairs
    parameter TIMEOUT_RTTS = 8,   // probe loss timeout, base RTTs
    parameter VIOL_LIMIT = 3      // consecutive violations before migration
) (
    input  wire                     clk,
    input  wire                     rst,

    /* operations */
    input  wire                     op_valid,
    output wire                     op_ready,
    input  wire [1:0]               op_code,     // 1 CFG, 2 SENT, 3 RESP
    input  wire [$clog2(PAIRS)-1:0] op_pair,
    input  wire [23:0]              op_rtt,      // CFG: base RTT in cycles
    input  wire                     op_viol,     // RESP: predictability violated

    /* results */
    output reg                      rsp_valid,   // RESP processed
    output reg                      rsp_accepted,
    output reg  [$clog2(PAIRS)-1:0] rsp_pair,

    /* events */
    output reg                      loss_valid,  // a probe was lost (timeout)
    output reg  [$clog2(PAIRS)-1:0] loss_pair,
    output reg  [31:0]              loss_time,   // cycle the loss was detected
    output reg                      mig_valid,   // migration request
    output reg  [$clog2(PAIRS)-1:0] mig_pair,

    output wire [31:0]              now,
    output reg  [31:0]              cnt_losses,
    output reg  [31:0]              cnt_stale,
    output reg  [31:0]              cnt_migrations
);

localparam PW = $clog2(PAIRS);
localparam WW = 1 + 32 + 24 + 4;
localparam [1:0] OP_CFG = 2'd1, OP_SENT = 2'd2, OP_RESP = 2'd3;
localparam [3:0] VLIM = VIOL_LIMIT;

initial begin
    if (VIOL_LIMIT < 1 || VIOL_LIMIT > 15 || (1 << PW) != PAIRS) begin
        $error("ufab_path_monitor: VIOL_LIMIT in 1..15, PAIRS a power of two");
        $finish;
    end
end

(* ram_style = "block" *)
reg [WW-1:0] mem [0:PAIRS-1];

reg [31:0]   now_reg = 32'd0;
reg          stage_reg = 1'b0;        // 0: issue a read, 1: modify and write
reg          init_reg = 1'b1;
reg [PW-1:0] addr_reg = {PW{1'b0}};
reg [PW-1:0] sweep_reg = {PW{1'b0}};
reg [1:0]    code_reg = 2'd0;         // 0: sweep
reg [23:0]   rtt_reg = 24'd0;
reg          viol_reg = 1'b0;
reg [31:0]   t_reg = 32'd0;           // time the operation was accepted
reg [WW-1:0] rd_reg = {WW{1'b0}};

assign now = now_reg;
assign op_ready = !init_reg && !stage_reg;

wire         rd_out  = rd_reg[WW-1];
wire [31:0]  rd_dl   = rd_reg[WW-2 -: 32];
wire [23:0]  rd_rtt  = rd_reg[27:4];
wire [3:0]   rd_viol = rd_reg[3:0];
/* verilator lint_off UNUSEDSIGNAL */  // only the sign bit of the difference matters
wire [31:0]  since   = t_reg - rd_dl;
/* verilator lint_on UNUSEDSIGNAL */
wire         expired = !since[31];    // t >= deadline (serial arithmetic)
/* verilator lint_off UNUSEDSIGNAL */  // the product is below 2^32 for base RTTs < 2^24 / TIMEOUT_RTTS * 2^8
wire [55:0]  tmo_full = {32'd0, rd_rtt} * TIMEOUT_RTTS;
/* verilator lint_on UNUSEDSIGNAL */
wire [31:0]  tmo = tmo_full[31:0];

reg          we;
reg [WW-1:0] wd;
reg          lost, acc, stale, bump, clear;
reg [3:0]    v_n;

always @* begin
    we = 1'b0; wd = rd_reg; lost = 1'b0; acc = 1'b0; stale = 1'b0; bump = 1'b0; clear = 1'b0;
    v_n = rd_viol;
    if (init_reg) begin
        we = 1'b1; wd = {WW{1'b0}};
    end else if (stage_reg) begin
        case (code_reg)
        OP_CFG: begin we = 1'b1; wd = {1'b0, 32'd0, rtt_reg, 4'd0}; end
        OP_SENT: begin we = 1'b1; wd = {1'b1, t_reg + tmo, rd_rtt, rd_viol}; end
        OP_RESP: begin
            if (rd_out && !expired) begin
                acc = 1'b1;
                if (viol_reg) bump = 1'b1; else clear = 1'b1;
            end else begin
                stale = 1'b1;
                if (rd_out) begin lost = 1'b1; bump = 1'b1; end
            end
        end
        default: begin  // sweep
            if (rd_out && expired) begin lost = 1'b1; bump = 1'b1; end
        end
        endcase
        if (code_reg != OP_CFG && code_reg != OP_SENT) begin
            if (bump) v_n = (rd_viol + 1'b1 >= VLIM) ? 4'd0 : rd_viol + 1'b1;
            if (clear) v_n = 4'd0;
            we = acc || lost;
            wd = {1'b0, rd_dl, rd_rtt, v_n};
        end
    end
end

always @(posedge clk) begin
    now_reg <= now_reg + 1'b1;
    rsp_valid <= 1'b0;
    loss_valid <= 1'b0;
    mig_valid <= 1'b0;
    if (we) mem[init_reg ? sweep_reg : addr_reg] <= wd;

    if (init_reg) begin
        sweep_reg <= sweep_reg + 1'b1;
        if (&sweep_reg) init_reg <= 1'b0;  // PAIRS is a power of two
    end else if (!stage_reg) begin
        // issue: an operation, else the next sweep step
        stage_reg <= 1'b1;
        t_reg <= now_reg;
        if (op_valid) begin
            addr_reg <= op_pair;
            code_reg <= op_code;
            rtt_reg <= op_rtt;
            viol_reg <= op_viol;
            rd_reg <= mem[op_pair];
        end else begin
            addr_reg <= sweep_reg;
            code_reg <= 2'd0;
            rd_reg <= mem[sweep_reg];
            sweep_reg <= sweep_reg + 1'b1;
        end
    end else begin
        stage_reg <= 1'b0;
        if (code_reg == OP_RESP) begin
            rsp_valid <= 1'b1;
            rsp_accepted <= acc;
            rsp_pair <= addr_reg;
        end
        if (stale) cnt_stale <= cnt_stale + 1'b1;
        if (lost) begin
            loss_valid <= 1'b1;
            loss_pair <= addr_reg;
            loss_time <= t_reg;
            cnt_losses <= cnt_losses + 1'b1;
        end
        if (bump && rd_viol + 1'b1 >= VLIM) begin
            mig_valid <= 1'b1;
            mig_pair <= addr_reg;
            cnt_migrations <= cnt_migrations + 1'b1;
        end
    end

    if (rst) begin
        init_reg <= 1'b1;
        stage_reg <= 1'b0;
        sweep_reg <= {PW{1'b0}};
        now_reg <= 32'd0;
        rsp_valid <= 1'b0;
        loss_valid <= 1'b0;
        mig_valid <= 1'b0;
        cnt_losses <= 32'd0;
        cnt_stale <= 32'd0;
        cnt_migrations <= 32'd0;
    end
end

endmodule

`resetall
