// Language: Verilog 2001
//
// ufab_wfq8: the level-1 selector of the μFAB-E Packet Scheduler (paper §4.1,
// Figure 8, "WFQ engine" with 8 weighted queues). Combinational: among the
// active classes it picks the one with the least SFQ start tag (`pass`);
// ties go to the lower class, exactly as HierScheduler::dequeue()'s least
// key (tag << 3 | class). Here too each class has the key {tag, class}
// (all ones when idle), and a balanced tournament of 7 comparators (3 levels)
// picks the least: 3 comparator delays instead of 7 chained ones.
//
// Parameters:
//   TAG_W  width of a start tag (64: HierScheduler's uint64_t virtual time)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_wfq8 #(
    parameter TAG_W = 64  // SFQ start-tag width
) (
    input  wire [8*TAG_W-1:0] pass,    // class c's tag at [c*TAG_W +: TAG_W]
    input  wire [7:0]         active,  // class c has a backlogged-eligible tenant
    output reg  [2:0]         sel,     // winning class
    output wire               any      // some class is active
);

assign any = |active;

localparam KW = TAG_W + 3;

// level 0: keys; levels 1-3: pairwise minima (a tie keeps the left, lower class)
wire [KW-1:0] k0 [0:7];
wire [KW-1:0] k1 [0:3];
wire [KW-1:0] k2 [0:1];
wire [KW-1:0] k3;

genvar g;
generate
    for (g = 0; g < 8; g = g + 1) begin : g_key
        assign k0[g] = active[g] ? {pass[g*TAG_W +: TAG_W], g[2:0]} : {KW{1'b1}};
    end
    for (g = 0; g < 4; g = g + 1) begin : g_l1
        assign k1[g] = (k0[2*g+1] < k0[2*g]) ? k0[2*g+1] : k0[2*g];
    end
    for (g = 0; g < 2; g = g + 1) begin : g_l2
        assign k2[g] = (k1[2*g+1] < k1[2*g]) ? k1[2*g+1] : k1[2*g];
    end
endgenerate
assign k3 = (k2[1] < k2[0]) ? k2[1] : k2[0];

/* verilator lint_off UNUSEDSIGNAL */  // the tag part of the winning key
wire [KW-1:0] win = k3;
/* verilator lint_on UNUSEDSIGNAL */
always @* sel = any ? win[2:0] : 3'd0;

endmodule

`resetall
