// Language: Verilog 2001
//
// ufab_axil_regs: the AXI-Lite control/status port of μFAB-E (paper §4.1
// workflow: "the software first configures the VM-pair states into Context
// Tables"). Software writes the arguments, then a command code; the command
// is handed to ufab_edge_top (cmd_valid until cmd_ready), STATUS shows busy
// and the result.
//
// Register map (32-bit, byte addresses):
//   0x00 R  ID 0x7546_4142 ("uFAB")
//   0x04 R  log2(PAIRS) | log2(TENANTS) << 8
//   0x10 RW ARG_PAIR      0x14 RW ARG_TENANT    0x18 RW ARG_VALUE    0x1C RW ARG_CLS
//   0x20 W  CMD: 1 add tenant, 2 add pair, 3 set window, 4 on acked, 7 set class
//           weight, 8 remove tenant, 9 remove pair, 10 set tenant class
//           (scheduler ops), 16 write pair header context (token =
//           VALUE[15:0], path = VALUE[23:16]), 17 set base RTT (VALUE, cycles),
//           18 read pair state, 19 write tenant context (VALUE)
//   0x24 R  STATUS: bit 0 busy, bit 1 last command ok
//   0x28 R  RD0 (window / tenant value)   0x2C R RD1 (bytes in flight)
//   0x40+4i R STAT[i] (i < NSTAT), counters from the data path
//
// Parameters:
//   PAIRS_LOG2, TENANTS_LOG2  reported at 0x04
//   NSTAT                     number of status counters
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_axil_regs #(
    parameter PAIRS_LOG2 = 6,    // log2 VM-pairs
    parameter TENANTS_LOG2 = 4,  // log2 tenants
    parameter NSTAT = 8          // status counters
) (
    input  wire             clk,
    input  wire             rst,

    /* AXI-Lite slave */
    input  wire [7:0]       s_axil_awaddr,
    input  wire             s_axil_awvalid,
    output wire             s_axil_awready,
    input  wire [31:0]      s_axil_wdata,
    input  wire             s_axil_wvalid,
    output wire             s_axil_wready,
    output reg              s_axil_bvalid,
    input  wire             s_axil_bready,
    input  wire [7:0]       s_axil_araddr,
    input  wire             s_axil_arvalid,
    output wire             s_axil_arready,
    output reg  [31:0]      s_axil_rdata,
    output reg              s_axil_rvalid,
    input  wire             s_axil_rready,

    /* command to the core */
    output reg              cmd_valid,
    input  wire             cmd_ready,
    output reg  [4:0]       cmd_code,
    output reg  [15:0]      cmd_pair,
    output reg  [15:0]      cmd_tenant,
    output reg  [31:0]      cmd_value,
    output reg  [2:0]       cmd_cls,
    input  wire             cmd_done,     // result of the last command
    input  wire             cmd_ok,
    input  wire [31:0]      cmd_rd0,
    input  wire [31:0]      cmd_rd1,

    input  wire [32*NSTAT-1:0] stat
);

reg        busy_reg = 1'b0;
reg        ok_reg = 1'b0;
reg [31:0] rd0_reg = 32'd0, rd1_reg = 32'd0;

// a write is taken when address and data are both present and B is free
wire wr = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
assign s_axil_awready = wr;
assign s_axil_wready = wr;
wire rd = s_axil_arvalid && !s_axil_rvalid;
assign s_axil_arready = rd;

wire [5:0] stat_i = s_axil_araddr[7:2] - 6'h10;

always @(posedge clk) begin
    if (s_axil_bvalid && s_axil_bready) s_axil_bvalid <= 1'b0;
    if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
    if (cmd_valid && cmd_ready) cmd_valid <= 1'b0;
    if (cmd_done) begin
        busy_reg <= 1'b0;
        ok_reg <= cmd_ok;
        rd0_reg <= cmd_rd0;
        rd1_reg <= cmd_rd1;
    end

    if (wr) begin
        s_axil_bvalid <= 1'b1;
        case (s_axil_awaddr)
        8'h10: cmd_pair <= s_axil_wdata[15:0];
        8'h14: cmd_tenant <= s_axil_wdata[15:0];
        8'h18: cmd_value <= s_axil_wdata;
        8'h1C: cmd_cls <= s_axil_wdata[2:0];
        8'h20: if (!busy_reg) begin
            cmd_code <= s_axil_wdata[4:0];
            cmd_valid <= 1'b1;
            busy_reg <= 1'b1;
        end
        default: ;
        endcase
    end

    if (rd) begin
        s_axil_rvalid <= 1'b1;
        case (s_axil_araddr)
        8'h00: s_axil_rdata <= 32'h7546_4142;
        8'h04: s_axil_rdata <= PAIRS_LOG2 | (TENANTS_LOG2 << 8);
        8'h10: s_axil_rdata <= {16'd0, cmd_pair};
        8'h14: s_axil_rdata <= {16'd0, cmd_tenant};
        8'h18: s_axil_rdata <= cmd_value;
        8'h1C: s_axil_rdata <= {29'd0, cmd_cls};
        8'h24: s_axil_rdata <= {30'd0, ok_reg, busy_reg};
        8'h28: s_axil_rdata <= rd0_reg;
        8'h2C: s_axil_rdata <= rd1_reg;
        default: s_axil_rdata <= (s_axil_araddr >= 8'h40 && {26'd0, stat_i} < NSTAT)
                                 ? stat[32*stat_i +: 32] : 32'd0;
        endcase
    end

    if (rst) begin
        s_axil_bvalid <= 1'b0;
        s_axil_rvalid <= 1'b0;
        cmd_valid <= 1'b0;
        busy_reg <= 1'b0;
        ok_reg <= 1'b0;
        cmd_code <= 5'd0;
        cmd_pair <= 16'd0;
        cmd_tenant <= 16'd0;
        cmd_value <= 32'd0;
        cmd_cls <= 3'd0;
    end
end

endmodule

`resetall
