// Simulation model of the IOBUF primitive (UG974, "IOBUF"): the pad IO is
// driven with I while T is low and released (high impedance) while T is
// high; O is always the pad's level.
`timescale 1ps/1ps
`default_nettype none
module IOBUF (
    input wire I,
    input wire T,
    output wire O,
    inout wire IO
);
    assign IO = T ? 1'bz : I;
    assign O = IO;
endmodule
`default_nettype wire
