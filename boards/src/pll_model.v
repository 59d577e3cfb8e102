// A behavioural model of an integer-N PLL, for weft's board smoke
// simulation only: it stands in for Intel's IOPLL variant (weft_pll) and
// Xilinx's MMCME4_ADV, whose generated wrappers around it carry the vendor
// port names. Not synthesizable.
//
// The model measures the reference clock's period and, once LOCK_CYCLES / 2
// periods in a row agree, runs a VCO at refclk x MULTIPLY / PRE_DIVIDE and
// divides it by OUT0_DIVIDE and OUT1_DIVIDE from one count start (so both
// outputs rise together, as one VCO's outputs do); locked rises only after
// LOCK_CYCLES, so logic that trusts the outputs before locked is caught
// (neither vendor promises clean outputs before lock). While rst is high,
// or the reference clock changes, both outputs stay low and locked falls:
// the vendors' rst drives every output clock to 0.
`timescale 1ps/1ps
`default_nettype none

module weft_board_pll_model #(
    parameter integer PRE_DIVIDE = 1,
    parameter integer MULTIPLY = 1,
    parameter integer OUT0_DIVIDE = 1,
    parameter integer OUT1_DIVIDE = 1,
    parameter integer LOCK_CYCLES = 8
) (
    input wire refclk,
    input wire rst,
    output wire out0,
    output wire out1,
    output wire locked
);
    realtime last_edge = 0.0;
    realtime ref_period = 0.0;
    integer stable = 0;
    reg running = 1'b0;
    reg locked_now = 1'b0;
    reg vco = 1'b0;
    integer count0 = 0;
    integer count1 = 0;
    reg div0 = 1'b0;
    reg div1 = 1'b0;

    always @(posedge refclk or posedge rst) begin
        if (rst) begin
            stable = 0;
            last_edge = 0.0;
            running <= 1'b0;
            locked_now <= 1'b0;
        end else begin
            if (last_edge > 0.0) begin
                if (ref_period > 0.0 && ($realtime - last_edge) > ref_period * 0.99
                        && ($realtime - last_edge) < ref_period * 1.01)
                    stable = stable + 1;
                else begin
                    stable = 0;
                    running <= 1'b0;
                    locked_now <= 1'b0;
                end
                ref_period = $realtime - last_edge;
            end
            last_edge = $realtime;
            if (stable >= LOCK_CYCLES / 2) running <= 1'b1;
            if (stable >= LOCK_CYCLES) locked_now <= 1'b1;
        end
    end

    // VCO edges are placed at absolute times from the first one, so the
    // simulator's rounding of each delay to its precision never accumulates.
    realtime vco_start = 0.0;
    integer vco_edges = 0;
    always begin
        wait (running);
        if (vco_edges == 0) vco_start = $realtime;
        vco_edges = vco_edges + 1;
        #(vco_start + vco_edges * ref_period * PRE_DIVIDE / MULTIPLY / 2.0 - $realtime)
            vco = running ? ~vco : 1'b0;
    end

    always @(posedge vco or negedge running) begin
        if (!running) begin
            vco_edges = 0;
            count0 = 0;
            count1 = 0;
            div0 <= 1'b0;
            div1 <= 1'b0;
        end else begin
            div0 <= count0 < (OUT0_DIVIDE + 1) / 2;
            div1 <= count1 < (OUT1_DIVIDE + 1) / 2;
            count0 = (count0 + 1) % OUT0_DIVIDE;
            count1 = (count1 + 1) % OUT1_DIVIDE;
        end
    end

    assign out0 = running && (OUT0_DIVIDE == 1 ? vco : div0);
    assign out1 = running && (OUT1_DIVIDE == 1 ? vco : div1);
    assign locked = locked_now;
endmodule

`default_nettype wire
