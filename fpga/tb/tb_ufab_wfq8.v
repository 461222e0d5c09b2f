// Self-checking Icarus testbench for ufab_wfq8 (iverilog -g2012): random tags
// and masks against a behavioural least-tag search (ties to the lower class).
`timescale 1ns / 1ps
module tb_ufab_wfq8;
reg  [8*64-1:0] pass;
reg  [7:0] active;
wire [2:0] sel;
wire any;
ufab_wfq8 #(.TAG_W(64)) dut (.pass(pass), .active(active), .sel(sel), .any(any));
integer i, c, errors, best_c;
reg [63:0] best;
initial begin
    errors = 0;
    for (i = 0; i < 20000; i = i + 1) begin
        for (c = 0; c < 8; c = c + 1) pass[c*64 +: 64] = {$urandom, $urandom} % ((i % 3 == 0) ? 4 : 64'hFFFF_FFFF_FFFF);
        active = $urandom;
        #1;
        best_c = -1; best = 0;
        for (c = 0; c < 8; c = c + 1)
            if (active[c] && (best_c < 0 || pass[c*64 +: 64] < best)) begin best_c = c; best = pass[c*64 +: 64]; end
        if (any !== (active != 0) || (active != 0 && sel !== best_c[2:0])) begin
            errors = errors + 1;
            if (errors < 5) $display("mismatch: active=%b sel=%0d expected=%0d", active, sel, best_c);
        end
    end
    if (errors == 0) $display("PASS tb_ufab_wfq8"); else $display("FAIL tb_ufab_wfq8 errors=%0d", errors);
    if (errors != 0) $fatal(1);
    $finish;
end
endmodule
