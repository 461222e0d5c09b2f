// Language: Verilog 2001
//
// ufab_ctx_table: one μFAB-E Context Table (paper §4.1, Figure 8: "Context
// Tables maintain the states for active VM-pairs"), a simple dual-port
// memory with a registered read, so synthesis infers block RAM or UltraRAM.
// ufab_edge_top instantiates it for the per-VM-pair header context
// (token, path), the per-VM-pair admission state mirror (window, bytes in
// flight) and the per-tenant configuration.
//
// Read-during-write to the same address returns the old word.
//
// Parameters:
//   DEPTH  entries (8192 VM-pairs or 1024 tenants at full size)
//   WIDTH  bits per entry
//   URAM   1: ram_style "ultra" (UltraRAM), 0: ram_style "block" (BRAM)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_ctx_table #(
    parameter DEPTH = 64,  // entries
    parameter WIDTH = 64,  // bits per entry
    parameter URAM = 0     // 1: UltraRAM, 0: block RAM
) (
    input  wire                     clk,
    input  wire                     wr_en,
    input  wire [$clog2(DEPTH)-1:0] wr_addr,
    input  wire [WIDTH-1:0]         wr_data,
    input  wire                     rd_en,
    input  wire [$clog2(DEPTH)-1:0] rd_addr,
    output reg  [WIDTH-1:0]         rd_data
);

generate
    if (URAM != 0) begin : g_uram
        (* ram_style = "ultra" *)
        reg [WIDTH-1:0] mem [0:DEPTH-1];
        always @(posedge clk) begin
            if (wr_en) mem[wr_addr] <= wr_data;
            if (rd_en) rd_data <= mem[rd_addr];
        end
    end else begin : g_bram
        (* ram_style = "block" *)
        reg [WIDTH-1:0] mem [0:DEPTH-1];
        always @(posedge clk) begin
            if (wr_en) mem[wr_addr] <= wr_data;
            if (rd_en) rd_data <= mem[rd_addr];
        end
    end
endgenerate

endmodule

`resetall
