// Language: Verilog 2001
//
// ufab_wf_ram: one table of the μFAB-E Packet Scheduler (ufab_sched): a simple
// dual-port memory (one write port, one read port) with a registered read, so
// synthesis maps it to block RAM or UltraRAM, made write-first: a read issued
// in the cycle that writes the same address returns the new word. The memory
// itself reads the old word; a comparator registered next to the read
// register selects the written word instead (the bypass). ufab_sched issues
// the next decision's reads in the cycle that writes the current decision's
// results, so a back-to-back decision on the same ring sees them.
//
// The read register holds its word while rd_en is low (the bypass too).
//
// Parameters:
//   DEPTH  entries (power of two)
//   WIDTH  bits per entry
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_wf_ram #(
    parameter DEPTH = 64,  // entries
    parameter WIDTH = 32   // bits per entry
) (
    input  wire                     clk,
    input  wire                     wr_en,
    input  wire [$clog2(DEPTH)-1:0] wr_addr,
    input  wire [WIDTH-1:0]         wr_data,
    input  wire                     rd_en,
    input  wire [$clog2(DEPTH)-1:0] rd_addr,
    output wire [WIDTH-1:0]         rd_data
);

reg [WIDTH-1:0] mem [0:DEPTH-1];
reg [WIDTH-1:0] q_reg = {WIDTH{1'b0}};
reg [WIDTH-1:0] byp_data_reg = {WIDTH{1'b0}};
reg             byp_reg = 1'b0;

always @(posedge clk) begin
    if (wr_en) mem[wr_addr] <= wr_data;
    if (rd_en) begin
        q_reg <= mem[rd_addr];
        byp_reg <= wr_en && wr_addr == rd_addr;
        byp_data_reg <= wr_data;
    end
end

assign rd_data = byp_reg ? byp_data_reg : q_reg;

endmodule

`resetall
