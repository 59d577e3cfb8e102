// A P-tile's report of its link partner's flow control limits, for weft's
// transmit credit benches (credit_tb.v, link_down_tb.v): one counter a
// cycle by tx_cdts_limit_tdm_idx (683059 §4.4.7: 0 to 2 the posted,
// non-posted and completion headers, 4 to 6 their data), the completion
// counters reported as 0, advertised infinite. Generated into the
// simulations by weft-boards.
`default_nettype none
module weft_ptile_credit_report (
    input wire clk,
    // The six limits, 16 bits each, the posted header's least significant.
    input wire [95:0] granted,
    output reg [15:0] cdts_limit = 16'd0,
    output reg [2:0] cdts_limit_tdm_idx = 3'd0
);
    reg [2:0] tdm = 3'd0;
    wire [2:0] counter = tdm >= 3'd4 ? tdm - 3'd1 : tdm;
    always @(posedge clk) begin
        tdm <= tdm == 3'd2 ? 3'd4 : tdm == 3'd6 ? 3'd0 : tdm + 3'd1;
        cdts_limit <= (counter == 3'd2 || counter == 3'd5) ? 16'd0 : granted[16*counter +: 16];
        cdts_limit_tdm_idx <= tdm;
    end
endmodule

// The partner's limits as a board wrapper takes them from the P-tile
// (weft_board_ptile_credit, credit.v), reported as above.
module weft_ptile_partner_limits (
    input wire clk,
    input wire rst,
    input wire link_up,
    input wire [95:0] granted,
    output wire [95:0] limit,
    output wire [5:0] infinite,
    output wire up
);
    wire [15:0] cdts_limit;
    wire [2:0] cdts_limit_tdm_idx;
    weft_ptile_credit_report report (.clk(clk), .granted(granted), .cdts_limit(cdts_limit),
        .cdts_limit_tdm_idx(cdts_limit_tdm_idx));
    weft_board_ptile_credit ip_credit (.clk(clk), .rst(rst), .link_up(link_up), .cdts_limit(cdts_limit),
        .cdts_limit_tdm_idx(cdts_limit_tdm_idx), .limit(limit), .infinite(infinite), .up(up));
endmodule
`default_nettype wire
