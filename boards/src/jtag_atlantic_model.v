// A simulation model of Intel's JTAG UART channel, alt_jtag_atlantic, with
// the host on the far side of the JTAG cable, as weft's console module
// drives it (jtag_console.v): r_* carries bytes to the host, which takes
// one in a cycle its FIFO has room (r_ena); t_* carries the bytes the host
// types, one in a cycle while the FPGA side offers room (t_dav), as the
// JTAG UART core drives it (683130, "JTAG UART Core").
//
// What the host read is kept in read_bytes (reads of them) and, with
// +weft_jtag_console=<file>, written to that file as it arrives. A
// testbench may type (typed, typed_count), stop the host reading
// (listening) or make its FIFO's room come and go (room, out of 16).
// Written by weft-boards for its simulations; Quartus uses its own.
`default_nettype none
module alt_jtag_atlantic #(
    parameter INSTANCE_ID = 0,
    parameter LOG2_RXFIFO_DEPTH = 6,
    parameter LOG2_TXFIFO_DEPTH = 6,
    parameter SLD_AUTO_INSTANCE_INDEX = "YES"
) (
    input wire clk,
    input wire rst_n,
    input wire [7:0] r_dat,
    input wire r_val,
    output reg r_ena,
    output reg [7:0] t_dat,
    output reg t_ena,
    input wire t_dav,
    output wire t_pause
);
    assign t_pause = 1'b0;
    reg [7:0] read_bytes [0:4095];
    integer reads = 0;
    reg [7:0] typed [0:255];
    integer types = 0;
    integer typed_count = 0;
    reg listening = 1'b1;
    integer room = 16;
    integer errors = 0;
    // A 16-bit Fibonacci LFSR (x^16 + x^14 + x^13 + x^11 + 1): the room
    // coming and going, and the host's pace typing.
    reg [15:0] lfsr = 16'hace1;
    integer file = 0;
    reg [8*600-1:0] path;
    initial begin
        r_ena = 1'b0;
        t_ena = 1'b0;
        t_dat = 8'd0;
        if ($value$plusargs("weft_jtag_console=%s", path)) file = $fopen(path, "w");
    end
    always @(posedge clk) begin
        lfsr <= {lfsr[14:0], lfsr[15] ^ lfsr[13] ^ lfsr[12] ^ lfsr[10]};
        if (!rst_n) begin
            r_ena <= 1'b0;
            t_ena <= 1'b0;
        end else begin
            if (r_val) begin
                if (!r_ena) begin
                    $display("ERROR: alt_jtag_atlantic: r_val while r_ena is low");
                    errors = errors + 1;
                end
                if (reads < 4096) read_bytes[reads] <= r_dat;
                reads <= reads + 1;
                if (file != 0) begin
                    $fwrite(file, "%c", r_dat);
                    $fflush(file);
                end
            end
            r_ena <= listening && {28'd0, lfsr[3:0]} < room;
            if (t_ena) types <= types + 1;
            t_ena <= 1'b0;
            if (!t_ena && t_dav && types < typed_count && lfsr[5:4] == 2'b00) begin
                t_dat <= typed[types];
                t_ena <= 1'b1;
            end
        end
    end
endmodule
`default_nettype wire
