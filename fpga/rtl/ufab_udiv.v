// Language: Verilog 2001
//
// ufab_udiv: sequential restoring divider, one quotient bit per cycle.
// Used off the data path, by the control operation that sets a class weight
// (HierScheduler::set_class_weight: inv_weight = 2^31 / weight), so the
// scheduler needs no combinational divider.
//
// Parameters:
//   W  operand width (32)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_udiv #(
    parameter W = 32  // dividend/divisor/quotient width
) (
    input  wire         clk,
    input  wire         rst,
    input  wire         start,     // pulse: latch the operands
    input  wire [W-1:0] dividend,
    input  wire [W-1:0] divisor,   // non-zero (the caller checks)
    output wire         busy,
    output wire         done,      // one-cycle pulse, quotient valid
    output wire [W-1:0] quotient
);

localparam CNT_W = $clog2(W+1);

reg [W-1:0]     q_reg = {W{1'b0}}, q_next;
reg [W:0]       r_reg = {(W+1){1'b0}}, r_next;
reg [W-1:0]     d_reg = {W{1'b0}}, d_next;
reg [CNT_W-1:0] cnt_reg = {CNT_W{1'b0}}, cnt_next;
reg             done_reg = 1'b0, done_next;

reg [W:0] trial;

assign busy = cnt_reg != 0;
assign done = done_reg;
assign quotient = q_reg;

always @* begin
    q_next = q_reg;
    r_next = r_reg;
    d_next = d_reg;
    cnt_next = cnt_reg;
    done_next = 1'b0;
    trial = {(W+1){1'b0}};
    if (start && cnt_reg == 0) begin
        q_next = dividend;
        r_next = {(W+1){1'b0}};
        d_next = divisor;
        cnt_next = W[CNT_W-1:0];
    end else if (cnt_reg != 0) begin
        // shift the next dividend bit into the remainder, subtract if it fits
        trial = {r_reg[W-1:0], q_reg[W-1]};
        if (trial >= {1'b0, d_reg}) begin
            r_next = trial - {1'b0, d_reg};
            q_next = {q_reg[W-2:0], 1'b1};
        end else begin
            r_next = trial;
            q_next = {q_reg[W-2:0], 1'b0};
        end
        cnt_next = cnt_reg - 1'b1;
        done_next = cnt_reg == 1;
    end
end

always @(posedge clk) begin
    q_reg <= q_next;
    r_reg <= r_next;
    d_reg <= d_next;
    cnt_reg <= cnt_next;
    done_reg <= done_next;
    if (rst) begin
        cnt_reg <= {CNT_W{1'b0}};
        done_reg <= 1'b0;
    end
end

endmodule

`resetall
