// Language: Verilog 2001
//
// ufab_tx_pipe: the μFAB-E TX pipe (paper §4.1, Figure 8: "the corresponding
// TX descriptor is passed to TX pipe to fetch the actual packet via DMA to
// emit"). Host TX descriptors arrive on an AXI-Stream; data descriptors are
// enqueued into the Packet Scheduler, probes (flow 0xFF) bypass it (they are
// not window-gated) and notify the Path Monitor. Scheduling decisions are
// requested whenever the output FIFO has room (up to 3 outstanding, so that
// the scheduler can decide one per cycle), each dequeued descriptor is
// joined with its VM-pair's header context (token, path; one context-table
// read, one cycle) and emitted on the output AXI-Stream for the DMA engine.
//
// s_axis_tdata: [15:0] pair, [23:16] flow (0xFF: probe), [39:24] len, [71:40] tag
// m_axis_tdata: [31:0] tag, [47:32] len, [63:48] pair, [71:64] path,
//               [87:72] token, [88] probe
//
// Parameters:
//   PW     VM-pair index width (log2 PAIRS)
//   DEPTH  output FIFO entries (power of two, >= 4)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ufab_tx_pipe #(
    parameter PW = 6,     // pair index width
    parameter DEPTH = 8   // output FIFO depth
) (
    input  wire          clk,
    input  wire          rst,

    /* host TX descriptors */
    input  wire [71:0]   s_axis_tdata,
    input  wire          s_axis_tvalid,
    output wire          s_axis_tready,

    /* scheduler: enqueue */
    output wire          enq_valid,
    input  wire          enq_ready,
    output wire [15:0]   enq_pair,
    output wire [7:0]    enq_flow,
    output wire [15:0]   enq_len,
    output wire [31:0]   enq_tag,

    /* scheduler: decisions */
    output wire          deq_req_valid,
    input  wire          deq_req_ready,
    input  wire          deq_rsp_valid,   // a DEQUEUE result (ok or not)
    input  wire          deq_rsp_ok,
    input  wire [31:0]   deq_rsp_tag,
    input  wire [15:0]   deq_rsp_len,
    input  wire [15:0]   deq_rsp_pair,

    /* path monitor: probe sent */
    output wire          pm_sent_valid,
    input  wire          pm_sent_ready,
    output wire [PW-1:0] pm_sent_pair,

    /* header context table read (1-cycle latency): {token, path} */
    output wire          ctx_rd_en,
    output wire [PW-1:0] ctx_rd_addr,
    input  wire [23:0]   ctx_rd_data,

    /* TX descriptors to the DMA engine */
    output wire [88:0]   m_axis_tdata,
    output wire          m_axis_tvalid,
    input  wire          m_axis_tready,

    output reg  [31:0]   cnt_tx
);

localparam AW = $clog2(DEPTH);

reg [88:0] fifo [0:DEPTH-1];
reg [AW:0] wr_ptr_reg = {(AW+1){1'b0}}, rd_ptr_reg = {(AW+1){1'b0}};
reg [1:0]  pending_reg = 2'd0;      // decisions requested, result not back yet
reg        b_valid_reg = 1'b0;      // stage B: context read in progress
reg [64:0] b_reg = 65'd0;           // {probe, pair, len, tag}

wire [AW:0] count = wr_ptr_reg - rd_ptr_reg;
wire [AW+2:0] used = {2'b00, count} + {{(AW+1){1'b0}}, pending_reg} + {{(AW+2){1'b0}}, b_valid_reg};
wire room = used + 2 < DEPTH;

wire is_probe = s_axis_tdata[23:16] == 8'hFF;
// stage A source: a dequeued descriptor, else a probe (only when no decision is pending)
wire deq_take = deq_rsp_valid && deq_rsp_ok;
wire probe_take = s_axis_tvalid && is_probe && !deq_rsp_valid && pending_reg == 0 && room && pm_sent_ready;

assign enq_valid = s_axis_tvalid && !is_probe;
assign enq_pair = s_axis_tdata[15:0];
assign enq_flow = s_axis_tdata[23:16];
assign enq_len = s_axis_tdata[39:24];
assign enq_tag = s_axis_tdata[71:40];
assign s_axis_tready = is_probe ? probe_take : enq_ready;

assign pm_sent_valid = probe_take;
assign pm_sent_pair = s_axis_tdata[PW-1:0];

// up to 3 decision requests outstanding (ufab_sched decides one per cycle and
// returns each result 2 cycles after its request), within the FIFO's room;
// a probe at the head of the stream pauses requests so that it can pass
assign deq_req_valid = room && pending_reg != 2'd3 && !(s_axis_tvalid && is_probe);

assign ctx_rd_en = deq_take || probe_take;
assign ctx_rd_addr = deq_take ? deq_rsp_pair[PW-1:0] : s_axis_tdata[PW-1:0];

assign m_axis_tvalid = count != 0;
assign m_axis_tdata = fifo[rd_ptr_reg[AW-1:0]];

always @(posedge clk) begin
    if (deq_req_valid && deq_req_ready) begin
        if (!deq_rsp_valid) pending_reg <= pending_reg + 1'b1;
    end else if (deq_rsp_valid) begin
        pending_reg <= pending_reg - 1'b1;
    end

    b_valid_reg <= ctx_rd_en;
    if (deq_take) b_reg <= {1'b0, deq_rsp_pair, deq_rsp_len, deq_rsp_tag};
    else if (probe_take) b_reg <= {1'b1, s_axis_tdata[15:0], s_axis_tdata[39:24], s_axis_tdata[71:40]};

    if (b_valid_reg) begin
        fifo[wr_ptr_reg[AW-1:0]] <= {b_reg[64], ctx_rd_data[23:8], ctx_rd_data[7:0], b_reg[63:0]};
        wr_ptr_reg <= wr_ptr_reg + 1'b1;
    end
    if (m_axis_tvalid && m_axis_tready) begin
        rd_ptr_reg <= rd_ptr_reg + 1'b1;
        cnt_tx <= cnt_tx + 1'b1;
    end

    if (rst) begin
        wr_ptr_reg <= {(AW+1){1'b0}};
        rd_ptr_reg <= {(AW+1){1'b0}};
        pending_reg <= 2'd0;
        b_valid_reg <= 1'b0;
        cnt_tx <= 32'd0;
    end
end

endmodule

`resetall
