// A behavioural model of the client side of Xilinx's 1G/2.5G Ethernet
// PCS/PMA or SGMII IP in SGMII mode (PG047), for weft's board simulation
// only: it stands in for the IP in a test of the wrapper's management
// Ethernet. Written from PG047, "SGMII Adaptation Module" and
// "Transmitter/Receiver Rate Adaptation Module": the client GMII runs on a
// 125 MHz clock; sgmii_clk_en is high every cycle at 1 Gb/s, one cycle in
// ten at 100 Mb/s and one in a hundred at 10 Mb/s; the core presents each
// received byte for a whole clock-enable period (registered with the
// enable) and samples the transmit side in clock-enable cycles; the client
// drives the transmit side with sgmii_clk_en as a clock enable.
// status_vector[11:10] is the speed the PHY announced (2'b10 1 Gb/s, 2'b01
// 100 Mb/s, 2'b00 10 Mb/s), which the client must echo on speed_is_10_100
// and speed_is_100 (PG047 "SGMII Ports"). Not synthesizable.
//
// The testbench sets `speed`, fills `rx_stream` (bit 8 the byte's rx_dv)
// and `rx_count`, and opens `tx_file`, where each frame the client sends
// (the bytes with gmii_tx_en) goes as one line of hex bytes.
`timescale 1ps/1ps
`default_nettype none

module weft_board_sgmii_model (
    input wire reset,
    input wire speed_is_10_100,
    input wire speed_is_100,
    output reg clk125 = 1'b0,
    output reg rst125 = 1'b1,
    output reg clk_en = 1'b0,
    output wire [15:0] status,
    output reg [7:0] gmii_rxd = 8'd0,
    output reg gmii_rx_dv = 1'b0,
    output reg gmii_rx_er = 1'b0,
    input wire [7:0] gmii_txd,
    input wire gmii_tx_en,
    input wire gmii_tx_er
);
    reg [1:0] speed = 2'b01;
    integer errors = 0;
    integer tx_file = 0;
    reg [8:0] rx_stream [0:65535];
    integer rx_count = 0;
    integer rx_pos = 0;

    // Link up, in sync, full duplex, at `speed` (PG047 "Status Vector").
    assign status = {3'b000, 1'b1, speed, 2'b00, 1'b1, 5'b00000, 1'b1, 1'b1};

    always #4000 clk125 = ~clk125;

    integer settle = 0;
    always @(posedge clk125 or posedge reset) begin
        if (reset) begin
            rst125 <= 1'b1;
            settle <= 0;
        end else if (settle < 8) begin
            settle <= settle + 1;
        end else begin
            rst125 <= 1'b0;
        end
    end

    integer period;
    integer count = 0;
    always @(posedge clk125) begin
        period = speed == 2'b10 ? 1 : speed == 2'b01 ? 10 : 100;
        if (count + 1 >= period) begin
            count <= 0;
            clk_en <= 1'b1;
        end else begin
            count <= count + 1;
            clk_en <= 1'b0;
        end
    end

    // Receive: a byte for each clock-enable period.
    always @(posedge clk125) begin
        if (!rst125 && clk_en) begin
            if (rx_pos < rx_count) begin
                {gmii_rx_dv, gmii_rxd} <= rx_stream[rx_pos];
                rx_pos <= rx_pos + 1;
            end else begin
                {gmii_rx_dv, gmii_rxd} <= 9'd0;
            end
        end
    end

    // Transmit: sampled in clock-enable cycles; changed only at the edge
    // that ends one.
    reg [9:0] tx_last = 10'd0;
    reg en_last = 1'b0;
    reg in_frame = 1'b0;
    always @(posedge clk125) begin
        if (!rst125) begin
            if (speed_is_10_100 !== (speed != 2'b10) || speed_is_100 !== (speed == 2'b01)) begin
                errors = errors + 1;
                $display("ERROR: speed_is_10_100/speed_is_100 %b%b do not follow status_vector[11:10] %b",
                    speed_is_10_100, speed_is_100, speed);
            end
            if ({gmii_tx_er, gmii_tx_en, gmii_txd} !== tx_last && !en_last) begin
                errors = errors + 1;
                $display("ERROR: GMII transmit changed after a cycle without sgmii_clk_en");
            end
            if (clk_en) begin
                if (gmii_tx_er) begin
                    errors = errors + 1;
                    $display("ERROR: gmii_tx_er raised");
                end
                if (gmii_tx_en) begin
                    $fwrite(tx_file, "%02x", gmii_txd);
                    in_frame = 1'b1;
                end else if (in_frame) begin
                    $fwrite(tx_file, "\n");
                    in_frame = 1'b0;
                end
            end
        end
        tx_last = {gmii_tx_er, gmii_tx_en, gmii_txd};
        en_last = clk_en;
    end
endmodule

`default_nettype wire
