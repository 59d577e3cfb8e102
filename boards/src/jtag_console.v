// weft's console over the FPGA's JTAG port, for a board whose UART reaches
// no FPGA pin (the Intel kits: their console is the on-board download
// cable). weft_chip speaks 8N1 on its uart_tx and listens on its uart_rx
// at CYCLES_PER_BIT core clock cycles a bit; this module turns that line
// into the byte streams of Intel's JTAG UART channel, alt_jtag_atlantic,
// the Quartus library block the JTAG UART core itself is built on
// (Embedded Peripherals IP User Guide 683130, "JTAG UART Core"), which
// `juart-terminal` on the host reads and writes.
//
// Toward the host: a byte whose stop bit is 1 waits in one holding
// register until the channel takes it (r_val only while r_ena, as the
// channel asks). With no host reading, the channel's FIFO fills and later
// bytes are dropped here: a console nobody reads never holds up the chip.
// A frame whose stop bit is 0 is no byte and is dropped.
//
// From the host: t_dav offers room for one byte; a byte the channel hands
// over (t_ena) is sent on to the chip, start bit, 8 data bits LSB first,
// stop bit.
//
// Both lines are on the core clock, which drives the chip's serial
// transmitter and receiver too: nothing crosses a clock domain.
`default_nettype none
module weft_board_jtag_console #(
    parameter integer CYCLES_PER_BIT = 1085
) (
    input wire clk,
    input wire rst,
    // weft_chip's uart_tx.
    input wire from_chip,
    // weft_chip's uart_rx.
    output wire to_chip
);
    localparam integer COUNT_BITS = $clog2(CYCLES_PER_BIT + 1);
    localparam integer HALF = CYCLES_PER_BIT / 2;
    localparam integer LAST = CYCLES_PER_BIT - 1;
    wire [COUNT_BITS-1:0] half_bit = HALF[COUNT_BITS-1:0];
    wire [COUNT_BITS-1:0] last_count = LAST[COUNT_BITS-1:0];

    // ---- from the chip: 8N1 frames into bytes ----
    reg receiving = 1'b0;
    reg [COUNT_BITS-1:0] rx_count = {COUNT_BITS{1'b0}};
    // Bits sampled so far in this frame: start, 8 data, stop.
    reg [3:0] rx_bits = 4'd0;
    reg [7:0] rx_shift = 8'd0;
    reg [7:0] held = 8'd0;
    reg held_valid = 1'b0;
    wire channel_ready;
    wire channel_take = held_valid && channel_ready;
    always @(posedge clk) begin
        if (rst) begin
            receiving <= 1'b0;
            held_valid <= 1'b0;
        end else begin
            if (channel_take) held_valid <= 1'b0;
            if (!receiving) begin
                if (!from_chip) begin
                    // A start bit: sample each bit in its middle.
                    receiving <= 1'b1;
                    rx_count <= half_bit;
                    rx_bits <= 4'd0;
                end
            end else if (rx_count != 0) begin
                rx_count <= rx_count - 1'b1;
            end else begin
                rx_count <= last_count;
                rx_bits <= rx_bits + 1'b1;
                if (rx_bits == 4'd0) begin
                    // A start bit that did not last half a bit was a glitch.
                    if (from_chip) receiving <= 1'b0;
                end else if (rx_bits <= 4'd8) begin
                    rx_shift <= {from_chip, rx_shift[7:1]};
                end else begin
                    receiving <= 1'b0;
                    if (from_chip && (!held_valid || channel_take)) begin
                        held <= rx_shift;
                        held_valid <= 1'b1;
                    end
                end
            end
        end
    end

    // ---- from the host: bytes into 8N1 frames ----
    reg [7:0] pending = 8'd0;
    reg pending_valid = 1'b0;
    wire [7:0] channel_byte;
    wire channel_valid;
    reg sending = 1'b0;
    reg [COUNT_BITS-1:0] tx_count = {COUNT_BITS{1'b0}};
    // The frame still to send, LSB first: start bit, data, stop bit.
    reg [9:0] tx_shift = 10'h3ff;
    reg [3:0] tx_left = 4'd0;
    always @(posedge clk) begin
        if (rst) begin
            pending_valid <= 1'b0;
            sending <= 1'b0;
            tx_shift <= 10'h3ff;
        end else begin
            if (channel_valid && !pending_valid) begin
                pending <= channel_byte;
                pending_valid <= 1'b1;
            end
            if (!sending) begin
                if (pending_valid) begin
                    sending <= 1'b1;
                    tx_shift <= {1'b1, pending, 1'b0};
                    tx_left <= 4'd9;
                    tx_count <= last_count;
                    pending_valid <= 1'b0;
                end
            end else if (tx_count != 0) begin
                tx_count <= tx_count - 1'b1;
            end else if (tx_left == 4'd0) begin
                sending <= 1'b0;
            end else begin
                tx_shift <= {1'b1, tx_shift[9:1]};
                tx_left <= tx_left - 1'b1;
                tx_count <= last_count;
            end
        end
    end
    assign to_chip = tx_shift[0];

    /* verilator lint_off UNUSEDSIGNAL */
    wire channel_pause;
    /* verilator lint_on UNUSEDSIGNAL */
    alt_jtag_atlantic #(
        .INSTANCE_ID(0),
        .LOG2_RXFIFO_DEPTH(6),
        .LOG2_TXFIFO_DEPTH(6),
        .SLD_AUTO_INSTANCE_INDEX("YES")
    ) channel (
        .clk(clk),
        .rst_n(!rst),
        // To the host.
        .r_dat(held),
        .r_val(channel_take),
        .r_ena(channel_ready),
        // From the host.
        .t_dat(channel_byte),
        .t_ena(channel_valid),
        .t_dav(!pending_valid),
        .t_pause(channel_pause)
    );
endmodule
