// Shims between an Intel tile's Avalon-ST TLP interface (TLP Bypass) and
// weft's TLP stream, for weft's board wrappers.
//
// The tile bus is SEGMENTS segments of DATA_BITS / SEGMENTS bits, first DW
// least significant, each TLP's header on a 128-bit header bus per segment
// (DW0 most significant). weft's stream carries the header as dw0..dw3 on
// the first beat and the payload W bits wide, first DW most significant,
// with `empty` counting unused DWs at the least significant end of the last
// beat (hdl/src/stream.rs). These shims carry one TLP per beat, starting in
// segment 0; where DATA_BITS and W differ the bus is padded or cut at the
// end of the beat (a gearbox is still to come).
`default_nettype none

// Tile RX (IP to user logic) to weft's stream, combinational.
module weft_board_avst_rx #(
    parameter SEGMENTS = 2,
    parameter DATA_BITS = 512,
    parameter W = 512
) (
    input wire [SEGMENTS-1:0] avst_valid,
    // A TLP starts in segment 0: the other segments' sop and header are unused.
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [SEGMENTS-1:0] avst_sop,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire [SEGMENTS-1:0] avst_eop,
    input wire [DATA_BITS-1:0] avst_data,
    input wire [3*SEGMENTS-1:0] avst_empty,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [128*SEGMENTS-1:0] avst_hdr,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire valid,
    output wire sop,
    output wire eop,
    output reg [4:0] empty,
    output wire [127:0] hdr,
    output wire [W-1:0] payload
);
    localparam DWS = DATA_BITS / 32;
    localparam SEGMENT_DWS = DWS / SEGMENTS;
    localparam W_DWS = W / 32;

    assign valid = |avst_valid;
    assign sop = avst_sop[0];
    assign eop = |(avst_eop & avst_valid);
    assign hdr = avst_hdr[127:0];

    // First DW most significant, fitted to W at the end of the beat (a bus
    // wider than W loses its last DWs).
    /* verilator lint_off UNUSEDSIGNAL */
    wire [DATA_BITS-1:0] reversed;
    /* verilator lint_on UNUSEDSIGNAL */
    genvar i;
    generate
        for (i = 0; i < DWS; i = i + 1) begin : dw
            assign reversed[DATA_BITS-1-32*i -: 32] = avst_data[32*i +: 32];
        end
        if (DATA_BITS == W) begin : same
            assign payload = reversed;
        end else if (DATA_BITS < W) begin : pad
            assign payload = {reversed, {(W - DATA_BITS){1'b0}}};
        end else begin : cut
            assign payload = reversed[DATA_BITS-1 -: W];
        end
    endgenerate

    // DWs used in the beat: every segment before the one holding the end,
    // and that one less its empty DWs. Fmt[1] (DW0 bit 30) says the TLP has
    // data; without it every payload DW is empty.
    wire has_data = hdr[126];
    integer s;
    integer used;
    always @* begin
        used = DWS;
        for (s = SEGMENTS - 1; s >= 0; s = s - 1)
            if (avst_eop[s] && avst_valid[s])
                used = SEGMENT_DWS * (s + 1) - avst_empty[3*s +: 3];
        if (sop && eop && !has_data) empty = W_DWS[4:0];
        else if (!eop) empty = 5'd0;
        else if (used >= W_DWS) empty = 5'd0;
        else empty = W_DWS[4:0] - used[4:0];
    end
endmodule

// weft's stream to tile TX (user logic to IP). The tile takes a beat in a
// cycle only if its ready was high READY_LATENCY cycles earlier (Avalon-ST
// readyLatency), so `ready` to weft is that delayed ready.
module weft_board_avst_tx #(
    parameter SEGMENTS = 2,
    parameter DATA_BITS = 512,
    parameter W = 512,
    parameter READY_LATENCY = 3
) (
    input wire clk,
    input wire rst,
    input wire valid,
    output wire ready,
    input wire sop,
    input wire eop,
    input wire nullify,
    input wire [4:0] empty,
    input wire [127:0] hdr,
    input wire [W-1:0] payload,
    input wire avst_ready,
    output wire [SEGMENTS-1:0] avst_valid,
    output wire [SEGMENTS-1:0] avst_dvalid,
    output wire [SEGMENTS-1:0] avst_hvalid,
    output wire [SEGMENTS-1:0] avst_sop,
    output wire [SEGMENTS-1:0] avst_eop,
    output wire [DATA_BITS-1:0] avst_data,
    output wire [128*SEGMENTS-1:0] avst_hdr,
    output wire [SEGMENTS-1:0] avst_err
);
    localparam DWS = DATA_BITS / 32;
    localparam SEGMENT_DWS = DWS / SEGMENTS;

    generate
        if (READY_LATENCY == 0) begin : now
            assign ready = avst_ready;
        end else begin : late
            reg [READY_LATENCY-1:0] history = 0;
            /* verilator lint_off UNUSEDSIGNAL */
            wire [READY_LATENCY:0] shifted = {history, avst_ready};
            /* verilator lint_on UNUSEDSIGNAL */
            always @(posedge clk) begin
                if (rst) history <= 0;
                else history <= shifted[READY_LATENCY-1:0];
            end
            assign ready = history[READY_LATENCY-1];
        end
    endgenerate

    wire fire = valid && ready;
    wire has_data = hdr[126];

    // The payload on the bus, the DWs the beat uses there (beat.v), and
    // the segment holding the end.
    wire [31:0] used;
    weft_board_beat_fit #(.DATA_BITS(DATA_BITS), .W(W)) fit (
        .payload(payload), .sop(sop), .eop(eop), .has_data(has_data), .empty(empty),
        .bus(avst_data), .used(used)
    );
    integer last;
    always @* last = used == 0 ? 0 : (used - 1) / SEGMENT_DWS;

    genvar i;
    generate
        for (i = 0; i < SEGMENTS; i = i + 1) begin : segment
            assign avst_valid[i] = fire && (i == 0 || i <= last);
            assign avst_dvalid[i] = fire && used > SEGMENT_DWS * i;
            assign avst_hvalid[i] = fire && sop && i == 0;
            assign avst_sop[i] = fire && sop && i == 0;
            assign avst_eop[i] = fire && eop && i == last;
            // A void TLP (weft's `nullify`) is nullified by tx_st_err with
            // its end (AN 791 3.2: asserted with tx_st_eop).
            assign avst_err[i] = fire && eop && nullify && i == last;
        end
    endgenerate
    generate
        if (SEGMENTS == 1) begin : one
            assign avst_hdr = hdr;
        end else begin : several
            assign avst_hdr = {{(128*(SEGMENTS-1)){1'b0}}, hdr};
        end
    endgenerate
endmodule

`default_nettype wire
