// Testbench of the wrapper's management Ethernet on SGMII over LVDS
// (weft_board_sgmii), with the PCS/PMA's client side modelled
// (sgmii_model.v) and a model of weft's MAC on the MII, written from IEEE
// 802.3 clause 22: it takes receive nibbles where mii_rx_clk rises and
// checks their setup and hold (§22.3.2: 10 ns each) and the clocks' period
// and duty cycle (§22.2.2: 35-65 %); it drives each transmit nibble a
// random 0 to 25 ns after mii_tx_clk rises (§22.3.1). The MDIO master's
// pins: MDC reaches phy_mdc, MDIO is released (the pull-up's 1 on the pin
// and on mdio_i) while mdio_oe is low and carries mdio_o while it is high
// (§22.2.4: a three-state line).
//
// Plusargs: +weft_eth_frames= the stimulus ($readmemh words: the frame
// count, then each frame's length and bytes) and +weft_eth_words= its
// length in words, +weft_eth_speed= 1000, 100
// or 10 (the speed the model's PHY announces), +weft_eth_out= the
// directory for mii_rx.hex (each frame weft's MAC side took, one line of
// nibbles) and gmii_tx.hex (each frame the PCS/PMA took, one line of
// bytes), +weft_seed=. Both sides send every frame, with its preamble and
// start frame delimiter (§4.2.5, §4.2.6) and a 12-byte gap (§4.4.2).
`timescale 1ps/1ps
`default_nettype none

module weft_sgmii_tb;
    reg rst = 1'b1;
    wire sgmii_tx_p, sgmii_tx_n, phy_reset_n, phy_mdc;
    wire phy_mdio;
    pullup (phy_mdio);
    wire mii_rx_clk, mii_rx_dv, mii_rx_er, mii_tx_clk;
    wire [3:0] mii_rxd;
    reg mii_tx_en = 1'b0;
    reg [3:0] mii_txd = 4'd0;
    reg mdc = 1'b0;
    reg mdio_o = 1'b0;
    reg mdio_oe = 1'b0;
    wire mdio_i;

    weft_board_sgmii dut (
        .rst(rst),
        .sgmii_rx_p(1'b0), .sgmii_rx_n(1'b1), .sgmii_tx_p(sgmii_tx_p), .sgmii_tx_n(sgmii_tx_n),
        .sgmii_clk_p(1'b0), .sgmii_clk_n(1'b1),
        .phy_reset_n(phy_reset_n), .phy_mdc(phy_mdc), .phy_mdio(phy_mdio),
        .mii_rx_clk(mii_rx_clk), .mii_rx_dv(mii_rx_dv), .mii_rx_er(mii_rx_er), .mii_rxd(mii_rxd),
        .mii_tx_clk(mii_tx_clk), .mii_tx_en(mii_tx_en), .mii_txd(mii_txd),
        .mdc(mdc), .mdio_o(mdio_o), .mdio_oe(mdio_oe), .mdio_i(mdio_i)
    );

    // The MDIO pins through the wrapper: each level of MDC, and MDIO
    // released, driven low and driven high.
    task check_mdio;
        begin
            #1000;
            if (phy_mdc !== 1'b0 || phy_mdio !== 1'b1 || mdio_i !== 1'b1)
                fail("MDIO is not released with MDC low");
            mdc = 1'b1;
            mdio_oe = 1'b1;
            mdio_o = 1'b0;
            #1000;
            if (phy_mdc !== 1'b1) fail("MDC does not reach the PHY");
            if (phy_mdio !== 1'b0 || mdio_i !== 1'b0) fail("MDIO is not driven low");
            mdio_o = 1'b1;
            #1000;
            if (phy_mdio !== 1'b1 || mdio_i !== 1'b1) fail("MDIO is not driven high");
            mdc = 1'b0;
            mdio_oe = 1'b0;
            mdio_o = 1'b0;
            #1000;
            if (phy_mdc !== 1'b0 || phy_mdio !== 1'b1 || mdio_i !== 1'b1)
                fail("MDIO is not released again");
        end
    endtask

    localparam WORDS = 1 << 16;
    reg [31:0] stim [0:WORDS-1];
    reg [8*512-1:0] frames_file;
    reg [8*512-1:0] out_dir;
    reg [8*600-1:0] name;
    integer words;
    integer speed_mbps;
    integer seed;
    integer errors = 0;
    integer rx_file;
    real nibble_ps;

    // The MAC side's transmit stream: {tx_en, txd} per nibble.
    reg [4:0] tx_stream [0:4*WORDS-1];
    integer tx_count = 0;
    integer tx_pos = 0;

    task fail(input [8*64-1:0] what);
        begin
            errors = errors + 1;
            $display("ERROR: %0s at %0t ps", what, $time);
        end
    endtask

    integer frames, frame, length, word, i, k;
    initial begin
        if (!$value$plusargs("weft_eth_frames=%s", frames_file)
                || !$value$plusargs("weft_eth_out=%s", out_dir)
                || !$value$plusargs("weft_eth_words=%d", words)
                || !$value$plusargs("weft_eth_speed=%d", speed_mbps)) begin
            $display("ERROR: run with +weft_eth_frames=, +weft_eth_words=, +weft_eth_out= and +weft_eth_speed=");
            $finish;
        end
        if (!$value$plusargs("weft_seed=%d", seed)) seed = 1;
        dut.pcs_pma.model.speed = speed_mbps == 1000 ? 2'b10 : speed_mbps == 100 ? 2'b01 : 2'b00;
        nibble_ps = speed_mbps == 10 ? 400000.0 : 40000.0;
        $readmemh(frames_file, stim, 0, words - 1);
        $sformat(name, "%0s/mii_rx.hex", out_dir);
        rx_file = $fopen(name, "w");
        $sformat(name, "%0s/gmii_tx.hex", out_dir);
        dut.pcs_pma.model.tx_file = $fopen(name, "w");
        frames = stim[0];
        word = 1;
        k = 0;
        for (i = 0; i < 24; i = i + 1) begin
            tx_stream[tx_count] = 5'h00;
            tx_count = tx_count + 1;
        end
        for (frame = 0; frame < frames; frame = frame + 1) begin
            length = stim[word];
            word = word + 1;
            for (i = 0; i < 8; i = i + 1) begin
                dut.pcs_pma.model.rx_stream[k] = {1'b1, i == 7 ? 8'hd5 : 8'h55};
                k = k + 1;
            end
            for (i = 0; i < 16; i = i + 1) begin
                tx_stream[tx_count] = {1'b1, i == 15 ? 4'hd : 4'h5};
                tx_count = tx_count + 1;
            end
            for (i = 0; i < length; i = i + 1) begin
                dut.pcs_pma.model.rx_stream[k] = {1'b1, stim[word][7:0]};
                k = k + 1;
                tx_stream[tx_count] = {1'b1, stim[word][3:0]};
                tx_stream[tx_count + 1] = {1'b1, stim[word][7:4]};
                tx_count = tx_count + 2;
                word = word + 1;
            end
            for (i = 0; i < 12; i = i + 1) begin
                dut.pcs_pma.model.rx_stream[k] = 9'h000;
                k = k + 1;
            end
            for (i = 0; i < 24; i = i + 1) begin
                tx_stream[tx_count] = 5'h00;
                tx_count = tx_count + 1;
            end
        end
        dut.pcs_pma.model.rx_count = k;

        #100000;
        if (phy_reset_n !== 1'b0) fail("the PHY is not held in reset with weft");
        rst = 1'b0;
        wait (dut.pcs_pma.model.rx_pos == dut.pcs_pma.model.rx_count);
        // At 1 Gb/s the MII has no clock: wait the stream's time at 100 Mb/s.
        if (speed_mbps == 1000) #(tx_count * 40000);
        else wait (tx_pos == tx_count);
        #(nibble_ps * 40);
        if (phy_reset_n !== 1'b1) fail("the PHY is held in reset");
        check_mdio;
        $fclose(rx_file);
        $fclose(dut.pcs_pma.model.tx_file);
        $display("weft-sgmii-tb: done, %0d errors", errors + dut.pcs_pma.model.errors);
        $finish;
    end

    initial begin
        #2000000000;
        $display("ERROR: timeout");
        $finish;
    end

    // Receive: nibbles and their timing at weft's MAC.
    realtime rx_change = 0.0;
    realtime rx_rise = -1.0e9;
    reg rx_frame = 1'b0;
    always @(mii_rx_dv or mii_rx_er or mii_rxd) begin
        if ($realtime - rx_rise < 10000.0) fail("receive hold under 10 ns");
        rx_change = $realtime;
    end
    always @(posedge mii_rx_clk) begin
        if ($realtime - rx_change < 10000.0) fail("receive setup under 10 ns");
        if (rx_rise > 0.0 && ($realtime - rx_rise < nibble_ps - 1.0 || $realtime - rx_rise > nibble_ps + 1.0))
            fail("mii_rx_clk period off");
        rx_rise = $realtime;
        if (mii_rx_er) fail("mii_rx_er raised");
        if (mii_rx_dv) begin
            $fwrite(rx_file, "%1x", mii_rxd);
            rx_frame = 1'b1;
        end else if (rx_frame) begin
            $fwrite(rx_file, "\n");
            rx_frame = 1'b0;
        end
    end
    always @(negedge mii_rx_clk)
        if ($realtime - rx_rise < 0.35 * nibble_ps || $realtime - rx_rise > 0.65 * nibble_ps)
            fail("mii_rx_clk duty cycle outside 35-65 %");

    // Transmit: each nibble 0 to 25 ns after mii_tx_clk rises.
    realtime tx_rise = -1.0e9;
    integer delay;
    always @(posedge mii_tx_clk) begin
        if (tx_rise > 0.0 && ($realtime - tx_rise < nibble_ps - 1.0 || $realtime - tx_rise > nibble_ps + 1.0))
            fail("mii_tx_clk period off");
        tx_rise = $realtime;
        delay = {$random(seed)} % 25001;
        #(delay);
        if (tx_pos < tx_count) begin
            {mii_tx_en, mii_txd} = tx_stream[tx_pos];
            tx_pos = tx_pos + 1;
        end else begin
            {mii_tx_en, mii_txd} = 5'h00;
        end
    end
    always @(negedge mii_tx_clk)
        if ($realtime - tx_rise < 0.35 * nibble_ps || $realtime - tx_rise > 0.65 * nibble_ps)
            fail("mii_tx_clk duty cycle outside 35-65 %");
endmodule

`default_nettype wire
