// The management MAC's MII (IEEE 802.3 clause 22) on an SGMII PCS/PMA's
// client GMII with rate adaptation (Xilinx PG047, "SGMII Adaptation
// Module"): at 10 and 100 Mb/s the GMII runs at 125 MHz and moves a byte
// in each cycle sgmii_clk_en is high, one cycle in 100 or in 10; the
// client samples gmii_rxd and drives gmii_txd with sgmii_clk_en as a clock
// enable (PG047, "Transmitter/Receiver Rate Adaptation Module").
//
// A byte period of the clock enable is two nibble periods of the MII: at
// 100 Mb/s 5 cycles of the 125 MHz clock each, the MII's 25 MHz, at
// 10 Mb/s 50 cycles, its 2.5 MHz. The MII clocks are registers of this
// clock, not clock nets: weft's MAC samples them as data on its own clock
// and acts on their rising edges (weft-hdl `soc::EthernetMac`). Each is low
// for the first 3/5 of a nibble period and high for the last 2/5 (40 %
// duty, inside §22.2.2's 35-65 %). Receive data changes where mii_rx_clk
// falls, 3/5 of a period before it rises and 2/5 after (24 and 16 ns at
// 100 Mb/s, §22.3.2 asks 10 and 10). Transmit data is taken at the cycle
// mii_tx_clk rises, as a PHY takes it (§22.3.1: the MAC changes it
// 0-25 ns after that edge, so it is steady for 15 ns and more before the
// next).
//
// Receive: the byte taken in a clock-enable cycle goes out low nibble
// first (§22.2.3), rx_dv with both nibbles, rx_er only inside a frame.
// Transmit: nibbles pair into bytes from the first one with tx_en, low
// nibble first; each byte goes to the GMII at the next clock-enable edge,
// and a trailing half byte is dropped. At 1 Gb/s (speed 2'b10) the MII
// cannot keep up: its clocks stop and nothing passes either way.
`default_nettype none

module weft_board_mii_gmii (
    input wire clk,
    input wire rst,
    input wire clk_en,
    // PG047 status_vector[11:10]: 2'b10 1 Gb/s, 2'b01 100 Mb/s, 2'b00 10 Mb/s.
    input wire [1:0] speed,
    input wire [7:0] gmii_rxd,
    input wire gmii_rx_dv,
    input wire gmii_rx_er,
    output reg [7:0] gmii_txd = 8'd0,
    output reg gmii_tx_en = 1'b0,
    output wire gmii_tx_er,
    output reg mii_rx_clk = 1'b0,
    output reg mii_rx_dv = 1'b0,
    output reg mii_rx_er = 1'b0,
    output reg [3:0] mii_rxd = 4'd0,
    output reg mii_tx_clk = 1'b0,
    input wire mii_tx_en,
    input wire [3:0] mii_txd
);
    wire slow = speed != 2'b10;
    // Cycles of a nibble period, and the cycle in it where the MII clocks rise.
    wire [5:0] nibble = speed == 2'b01 ? 6'd5 : 6'd50;
    wire [5:0] rise = speed == 2'b01 ? 6'd3 : 6'd30;

    // The cycle of the byte period: 0 after a clock-enable cycle. The MII
    // clocks start at the first clock enable after reset, so their first
    // period is a whole one.
    reg [6:0] count = 7'd0;
    reg aligned = 1'b0;
    wire [6:0] count_next = clk_en ? 7'd0 : count + 7'd1;
    wire second_next = count_next >= {1'b0, nibble};
    wire [6:0] phase_next = second_next ? count_next - {1'b0, nibble} : count_next;
    wire high_next = slow && (aligned || clk_en) && phase_next >= {1'b0, rise};
    // The edge at which the MII clocks rise.
    wire rising = high_next && !mii_tx_clk;

    // Receive.
    reg [3:0] rx_high = 4'd0;
    // Transmit: the low nibble waiting for its high one, the byte waiting
    // for the clock enable.
    reg tx_half = 1'b0;
    reg [3:0] tx_low = 4'd0;
    reg tx_full = 1'b0;
    reg [7:0] tx_byte = 8'd0;

    always @(posedge clk) begin
        if (rst) begin
            count <= 7'd0;
            aligned <= 1'b0;
            mii_rx_clk <= 1'b0;
            mii_tx_clk <= 1'b0;
            mii_rx_dv <= 1'b0;
            mii_rx_er <= 1'b0;
            mii_rxd <= 4'd0;
            rx_high <= 4'd0;
            tx_half <= 1'b0;
            tx_full <= 1'b0;
            gmii_tx_en <= 1'b0;
            gmii_txd <= 8'd0;
        end else begin
            count <= count_next;
            aligned <= aligned || clk_en;
            mii_rx_clk <= high_next;
            mii_tx_clk <= high_next;
            if (clk_en) begin
                mii_rxd <= gmii_rxd[3:0];
                rx_high <= gmii_rxd[7:4];
                mii_rx_dv <= slow && gmii_rx_dv;
                mii_rx_er <= slow && gmii_rx_dv && gmii_rx_er;
            end else if (count_next == {1'b0, nibble}) begin
                mii_rxd <= rx_high;
            end
            if (clk_en) begin
                gmii_txd <= tx_full ? tx_byte : 8'd0;
                gmii_tx_en <= slow && tx_full;
                tx_full <= 1'b0;
            end
            if (rising) begin
                tx_half <= mii_tx_en && !tx_half;
                tx_low <= mii_txd;
                if (mii_tx_en && tx_half) begin
                    tx_byte <= {mii_txd, tx_low};
                    tx_full <= 1'b1;
                end
            end
        end
    end
    assign gmii_tx_er = 1'b0;
endmodule

`default_nettype wire
