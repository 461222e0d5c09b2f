// Language: Verilog 2001
//
// ufab_inv_rom: constant table q = 2^31 / n for n = 1..N (q = 0 for n = 0):
// the reciprocal of the number of backlogged-eligible tenants of a class,
// HierScheduler's inv_active_ table. The class stride (effective weight =
// class weight x active tenants, paper §4.1 "Scaling to a large number of
// VFs") is then a product of two reciprocals: no divider on the data path.
//
// Parameters:
//   N  largest index (the tenant count, 1024 at full size)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_inv_rom #(
    parameter N = 16  // entries 0..N
) (
    input  wire [$clog2(N+1)-1:0] n,
    output wire [31:0]            q
);

wire [32*(N+1)-1:0] rom;

assign rom[31:0] = 32'd0;

genvar i;
generate
    for (i = 1; i <= N; i = i + 1) begin : g_rom
        assign rom[32*i +: 32] = 32'h8000_0000 / i;
    end
endgenerate

wire [31:0] n32 = {{(32-$clog2(N+1)){1'b0}}, n};
assign q = (n32 <= N) ? rom[32*n32 +: 32] : 32'd0;

endmodule

`resetall
