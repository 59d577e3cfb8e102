// One beat of weft's TLP stream as a hard IP's transmit bus holds it, for
// the transmit shims of avst.v and axis.v.
`default_nettype none

// weft's payload is W bits, first DW most significant, with `empty` unused
// DWs at the least significant end of a TLP's last beat (hdl/src/stream.rs).
// `bus` is that payload fitted to DATA_BITS at the end of the beat (padded
// with zeros, or its first DWs kept: a gearbox is still to come), first DW
// least significant. `used` is how many of the bus's DWs the beat fills:
// all of them before the last beat, none for a TLP without data, else the
// DWs `empty` leaves, at most the bus's.
module weft_board_beat_fit #(
    parameter DATA_BITS = 512,
    parameter W = 512
) (
    input wire [W-1:0] payload,
    input wire sop,
    input wire eop,
    input wire has_data,
    input wire [4:0] empty,
    output wire [DATA_BITS-1:0] bus,
    output reg [31:0] used
);
    localparam DWS = DATA_BITS / 32;
    localparam W_DWS = W / 32;

    wire [DATA_BITS-1:0] fitted;
    genvar i;
    generate
        if (DATA_BITS == W) begin : same
            assign fitted = payload;
        end else if (DATA_BITS > W) begin : pad
            assign fitted = {payload, {(DATA_BITS - W){1'b0}}};
        end else begin : cut
            assign fitted = payload[W-1 -: DATA_BITS];
        end
        for (i = 0; i < DWS; i = i + 1) begin : dw
            assign bus[32*i +: 32] = fitted[DATA_BITS-1-32*i -: 32];
        end
    endgenerate

    always @* begin
        if (!eop) used = DWS;
        else if (sop && !has_data) used = 0;
        else if (W_DWS - empty > DWS) used = DWS;
        else used = W_DWS - empty;
    end
endmodule

`default_nettype wire
