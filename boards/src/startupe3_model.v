// A behavioural model of Xilinx's STARTUPE3 and the pins behind it, for
// weft's board simulation only: it stands in for the primitive in a test of
// the wrapper's flash connection. Written from UG974 ("STARTUPE3": DO
// drives the D pins, DTS tri-states them, DI receives them; FCSBO/FCSBTS
// and USRCCLKO/USRCCLKTS likewise for FCS_B and CCLK) and UG570
// ("STARTUPE3 Connections to Dedicated Pins"). The three-state controls are
// active high (a 1 releases the pin). Not synthesizable.
//
// Behind the pins sits a flash in single-bit SPI: it drives DQ1 (the D01
// pin) with `flash_dq1` and drives no other pin, so logic that drives D01
// too shows up as `contention`, and a pin nobody drives reads z.
`timescale 1ps/1ps
`default_nettype none

module STARTUPE3 (
    output wire CFGCLK,
    output wire CFGMCLK,
    output wire [3:0] DI,
    output wire EOS,
    output wire PREQ,
    input wire [3:0] DO,
    input wire [3:0] DTS,
    input wire FCSBO,
    input wire FCSBTS,
    input wire GSR,
    input wire GTS,
    input wire KEYCLEARB,
    input wire PACK,
    input wire USRCCLKO,
    input wire USRCCLKTS,
    input wire USRDONEO,
    input wire USRDONETS
);
    // The flash's side: what it puts on DQ1.
    reg flash_dq1 = 1'b0;
    // The pins.
    wire cclk = USRCCLKTS ? 1'bz : USRCCLKO;
    wire fcs_b = FCSBTS ? 1'bz : FCSBO;
    wire [3:0] d;
    assign d[0] = DTS[0] ? 1'bz : DO[0];
    assign d[1] = DTS[1] ? flash_dq1 : DO[1];
    assign d[2] = DTS[2] ? 1'bz : DO[2];
    assign d[3] = DTS[3] ? 1'bz : DO[3];
    wire contention = !DTS[1];
    assign DI = d;
    assign CFGCLK = 1'b0;
    assign CFGMCLK = 1'b0;
    assign EOS = 1'b1;
    assign PREQ = 1'b0;
    wire unused = GSR | GTS | KEYCLEARB | PACK | USRDONEO | USRDONETS;
endmodule

`default_nettype wire
