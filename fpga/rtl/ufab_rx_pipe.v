// Language: Verilog 2001
//
// ufab_rx_pipe: the μFAB-E RX pipe (paper §4.1, Figure 8: "On receiving a
// packet, RX pipe directly delivers the packet to the main memory via DMA
// without software involvement"). RX descriptors arrive on an AXI-Stream:
//   DATA  (type 0)  delivered to the host on m_axis unchanged
//   ACK   (type 1)  bytes acknowledged: scheduler ON_ACKED(pair, value)
//   RESP  (type 2)  probe response carrying the pair's new window (Eqn 3,
//                   computed by window_eqn3 / the control path): scheduler
//                   SET_WINDOW(pair, value), then Path Monitor RESP(pair, viol)
//
// s_axis_tdata: [15:0] pair, [17:16] type, [18] violation, [63:32] value
//
// Parameters:
//   PW  VM-pair index width (log2 PAIRS)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_rx_pipe #(
    parameter PW = 6  // pair index width
) (
    input  wire          clk,
    input  wire          rst,

    input  wire [63:0]   s_axis_tdata,
    input  wire          s_axis_tvalid,
    output wire          s_axis_tready,

    /* host delivery */
    output wire [63:0]   m_axis_tdata,
    output wire          m_axis_tvalid,
    input  wire          m_axis_tready,

    /* scheduler operation (ON_ACKED = 4, SET_WINDOW = 3) */
    output wire          sop_valid,
    input  wire          sop_ready,
    output wire [2:0]    sop_code,
    output wire [15:0]   sop_pair,
    output wire [31:0]   sop_value,

    /* path monitor RESP */
    output wire          pm_valid,
    input  wire          pm_ready,
    output wire [PW-1:0] pm_pair,
    output wire          pm_viol,

    output reg  [31:0]   cnt_rx
);

localparam [1:0] T_DATA = 2'd0, T_ACK = 2'd1, T_RESP = 2'd2;

reg sched_done_reg = 1'b0;  // RESP: the window is set, the monitor is next

wire [1:0] typ = s_axis_tdata[17:16];

assign m_axis_tdata = s_axis_tdata;
assign m_axis_tvalid = s_axis_tvalid && typ == T_DATA;

assign sop_valid = s_axis_tvalid && (typ == T_ACK || (typ == T_RESP && !sched_done_reg));
assign sop_code = typ == T_ACK ? 3'd4 : 3'd3;
assign sop_pair = s_axis_tdata[15:0];
assign sop_value = s_axis_tdata[63:32];

assign pm_valid = s_axis_tvalid && typ == T_RESP && sched_done_reg;
assign pm_pair = s_axis_tdata[PW-1:0];
assign pm_viol = s_axis_tdata[18];

assign s_axis_tready = typ == T_DATA ? m_axis_tready :
                       typ == T_ACK  ? sop_ready :
                       typ == T_RESP ? (sched_done_reg && pm_ready) : 1'b1;  // type 3: dropped

always @(posedge clk) begin
    if (sop_valid && sop_ready && typ == T_RESP) sched_done_reg <= 1'b1;
    if (pm_valid && pm_ready) sched_done_reg <= 1'b0;
    if (s_axis_tvalid && s_axis_tready) cnt_rx <= cnt_rx + 1'b1;
    if (rst) begin
        sched_done_reg <= 1'b0;
        cnt_rx <= 32'd0;
    end
end

endmodule

`resetall
