// Language: Verilog 2001
//
// ufab_wfq8: the level-1 selector of the μFAB-E Packet Scheduler (paper §4.1,
// Figure 8, "WFQ engine" with 8 weighted queues). Combinational: among the
// active classes it picks the one with the least SFQ start tag (`pass`);
// ties go to the lower class, exactly as HierScheduler::dequeue() scans the
// active mask from bit 0 with a strict `<`.
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

integer c;
reg [TAG_W-1:0] best;
reg             found;

always @* begin
    sel = 3'd0;
    best = {TAG_W{1'b0}};
    found = 1'b0;
    for (c = 0; c < 8; c = c + 1) begin
        if (active[c] && (!found || pass[c*TAG_W +: TAG_W] < best)) begin
            sel = c[2:0];
            best = pass[c*TAG_W +: TAG_W];
            found = 1'b1;
        end
    end
end

endmodule

`resetall
