// Self-checking Icarus testbench for ufab_udiv (iverilog -g2012): 2^31 / w for
// every class weight 1..4096 (the scheduler's inv_weight) and random operands.
`timescale 1ns / 1ps
module tb_ufab_udiv;
reg clk = 0, rst = 1, start = 0;
reg [31:0] a, b;
wire busy, done;
wire [31:0] q;
ufab_udiv #(.W(32)) dut (.clk(clk), .rst(rst), .start(start), .dividend(a), .divisor(b),
                         .busy(busy), .done(done), .quotient(q));
always #5 clk = ~clk;
integer i, errors;
task run(input [31:0] x, input [31:0] y);
    begin
        @(negedge clk); a = x; b = y; start = 1;
        @(negedge clk); start = 0;
        while (!done) @(negedge clk);
        if (q !== x / y) begin
            errors = errors + 1;
            if (errors < 5) $display("mismatch %0d / %0d = %0d, got %0d", x, y, x / y, q);
        end
    end
endtask
initial begin
    errors = 0;
    repeat (2) @(negedge clk);
    rst = 0;
    for (i = 1; i <= 4096; i = i + 1) run(32'h8000_0000, i);
    for (i = 0; i < 500; i = i + 1) run($urandom, ($urandom % 65536) + 1);
    if (errors == 0) $display("PASS tb_ufab_udiv"); else $display("FAIL tb_ufab_udiv errors=%0d", errors);
    if (errors != 0) $fatal(1);
    $finish;
end
endmodule
