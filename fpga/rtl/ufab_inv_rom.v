// Language: Verilog 2001
//
// ufab_inv_rom: constant table q = 2^31 / n for n = 1..N (q = 0 for n = 0):
// the reciprocal of the number of backlogged-eligible tenants of a class,
// HierScheduler's inv_active_ table. The class stride (effective weight =
// class weight x active tenants, paper §4.1 "Scaling to a large number of
// VFs") is then a product of two reciprocals: no divider on the data path.
//
// An initialised array read combinationally (a distributed ROM): Yosys maps
// it to a LUT mux tree. (A constant vector indexed by n became a barrel
// shifter over 32*(N+1) bits, whose techmap did not finish at N = 1024.)
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
localparam AW = $clog2(N+1);
reg [31:0] rom [0:(1<<AW)-1];   // entries above N read 0
integer i;
initial begin
    rom[0] = 32'd0;
    for (i = 1; i < (1 << AW); i = i + 1) rom[i] = (i <= N) ? 32'h8000_0000 / i : 32'd0;
end
assign q = rom[n];
endmodule
`resetall
