// An UltraScale+ root port's link controller and non-posted credit
// (link.v, credit.v) against a model of the block's side written from
// PG213, with weft's clock and the block's user_clk asynchronous.
//
// Link: weft asks for LINK_REQUESTS hot resets and as many retrains,
// through the wrapper's pulse synchronizers. The model takes
// cfg_hot_reset_in into Hot Reset a few cycles after it rises, drops
// user_lnk_up there, and trains again later (Configuration Control
// Interface: the input "must be asserted until the LTSSM enters the
// Hot_Reset state"); it answers cfg_mgmt reads and writes some cycles
// after they start, and holds Link Control at Dword 0x20 (Configuration
// Management Interface). It reports "ERROR" for cfg_hot_reset_in released
// before Hot Reset, a cfg_mgmt request dropped before its done, a write
// elsewhere than Link Control's byte or changing more than Retrain Link;
// each hot reset and each retrain is counted in user_clk.
//
// Credit: a stand-in for weft's egress holds non-posted reads and, behind
// them, posted writes, and starts each only while weft_board_tx_credit
// gives its class credit; TLPs reach the requester request interface
// through the wrapper's FIFO. The model's non-posted header credit, a few
// at a time and given back slowly, shows on pcie_tfc_nph_av two cycles
// after each request takes one ("Avoiding Head-of-Line Blocking for
// Posted Requests"); it reports "ERROR" for a request arriving without
// credit, which the block would hold at the head of RQ. Every posted
// write must arrive before the last read. Generated into the simulation by
// weft-boards.
`timescale 1ns/1ps
`default_nettype none
module weft_pcie4_tb;
    reg weft_clk = 1'b0;
    reg user_clk = 1'b0;
    always #2 weft_clk = !weft_clk;
    always #3.3 user_clk = !user_clk;
    reg rst = 1'b1;
    initial #60 rst = 1'b0;
    integer errors = 0;
    integer seed = 7;

    // ---- link: weft's requests ----
    localparam LINK_REQUESTS = 3;
    integer weft_cycle = 0;
    reg hot_pulse = 1'b0;
    reg retrain_pulse = 1'b0;
    always @(posedge weft_clk) begin
        weft_cycle <= weft_cycle + 1;
        hot_pulse <= weft_cycle % 600 == 100 && weft_cycle < 600 * LINK_REQUESTS;
        retrain_pulse <= weft_cycle % 600 == 400 && weft_cycle < 600 * LINK_REQUESTS;
    end
    wire hot_reset, retrain;
    weft_board_pulse_sync hot_sync (.src_clk(weft_clk), .src_pulse(hot_pulse), .dst_clk(user_clk),
        .dst_pulse(hot_reset));
    weft_board_pulse_sync retrain_sync (.src_clk(weft_clk), .src_pulse(retrain_pulse),
        .dst_clk(user_clk), .dst_pulse(retrain));

    reg lnk_up = 1'b1;
    wire cfg_hot_reset_in, cfg_mgmt_read, cfg_mgmt_write;
    wire [9:0] cfg_mgmt_addr;
    wire [31:0] cfg_mgmt_write_data;
    wire [3:0] cfg_mgmt_byte_enable;
    reg [31:0] cfg_mgmt_read_data = 32'd0;
    reg cfg_mgmt_read_write_done = 1'b0;
    weft_board_pcie4_link link (.clk(user_clk), .rst(rst), .link_up(lnk_up), .hot_reset(hot_reset),
        .retrain(retrain), .cfg_hot_reset_in(cfg_hot_reset_in), .cfg_mgmt_addr(cfg_mgmt_addr),
        .cfg_mgmt_read(cfg_mgmt_read), .cfg_mgmt_write(cfg_mgmt_write),
        .cfg_mgmt_write_data(cfg_mgmt_write_data), .cfg_mgmt_byte_enable(cfg_mgmt_byte_enable),
        .cfg_mgmt_read_data(cfg_mgmt_read_data), .cfg_mgmt_read_write_done(cfg_mgmt_read_write_done));

    // ---- link: the block ----
    localparam [15:0] LINK_CONTROL = 16'h0043;
    integer hot_resets = 0;
    integer retrains = 0;
    integer entering = 0; // cycles until the LTSSM is in Hot Reset
    integer down = 0;     // cycles until the link is up again
    integer mgmt_wait = 0;
    reg mgmt_busy = 1'b0;
    always @(posedge user_clk) begin
        cfg_mgmt_read_write_done <= 1'b0;
        if (entering > 0) begin
            if (!cfg_hot_reset_in) begin
                $display("ERROR: cfg_hot_reset_in released before the LTSSM entered Hot_Reset");
                errors = errors + 1;
                entering <= 0;
            end else if (entering == 1) begin
                lnk_up <= 1'b0;
                hot_resets = hot_resets + 1;
                down <= 80;
                entering <= 0;
            end else begin
                entering <= entering - 1;
            end
        end else if (cfg_hot_reset_in && lnk_up) begin
            entering <= 4 + ($random(seed) & 7);
        end
        if (down > 0) begin
            down <= down - 1;
            if (down == 1) lnk_up <= 1'b1;
        end
        if (mgmt_busy && !(cfg_mgmt_read || cfg_mgmt_write)) begin
            $display("ERROR: a cfg_mgmt request dropped before cfg_mgmt_read_write_done");
            errors = errors + 1;
            mgmt_busy <= 1'b0;
        end else if (mgmt_busy) begin
            if (mgmt_wait == 0) begin
                cfg_mgmt_read_write_done <= 1'b1;
                mgmt_busy <= 1'b0;
                if (cfg_mgmt_addr != 10'h20) begin
                    $display("ERROR: cfg_mgmt access to Dword %0x, not Link Control's 20", cfg_mgmt_addr);
                    errors = errors + 1;
                end
                if (cfg_mgmt_read) cfg_mgmt_read_data <= {16'h1011, LINK_CONTROL};
                if (cfg_mgmt_write) begin
                    if (cfg_mgmt_byte_enable != 4'b0001
                            || cfg_mgmt_write_data[7:0] != (LINK_CONTROL[7:0] | 8'h20)) begin
                        $display("ERROR: Link Control write %08x, byte enables %b", cfg_mgmt_write_data,
                                 cfg_mgmt_byte_enable);
                        errors = errors + 1;
                    end
                    retrains = retrains + 1;
                end
            end else begin
                mgmt_wait <= mgmt_wait - 1;
            end
        end else if ((cfg_mgmt_read || cfg_mgmt_write) && !cfg_mgmt_read_write_done) begin
            if (cfg_mgmt_read && cfg_mgmt_write) begin
                $display("ERROR: cfg_mgmt read and write at once");
                errors = errors + 1;
            end
            mgmt_busy <= 1'b1;
            mgmt_wait <= 1 + ($random(seed) & 3);
        end
    end

    // ---- credit: the egress, on weft's clock ----
    localparam READS = 8;
    localparam WRITES = 4;
    wire [2:0] credit;
    reg [2:0] consume = 3'd0;
    reg [10:0] consume_dws = 11'd0;
    integer reads_left = READS;
    integer writes_left = WRITES;
    reg wr_valid = 1'b0;
    reg [3:0] wr_type = 4'd0;
    wire wr_ready;
    always @(posedge weft_clk) begin
        consume <= 3'd0;
        wr_valid <= 1'b0;
        // Nothing to send before the link's flow control has started
        // (what weft sends before then is discarded: the link-down bench).
        if (!rst && counter.counted && wr_ready && !wr_valid) begin
            if (reads_left > 0 && credit[1]) begin
                reads_left <= reads_left - 1;
                consume <= 3'b010;
                consume_dws <= 11'd0;
                wr_valid <= 1'b1;
                wr_type <= 4'b0000; // MRd
            end else if (writes_left > 0 && credit[0]) begin
                writes_left <= writes_left - 1;
                consume <= 3'b001;
                consume_dws <= 11'd16;
                wr_valid <= 1'b1;
                wr_type <= 4'b0001; // MWr
            end
        end
    end
    wire rq_valid;
    wire [3:0] rq_type;
    reg rq_ready = 1'b0;
    weft_board_cdc_fifo #(.WIDTH(4), .ADDR(4), .PACKET(1)) fifo (
        .wr_clk(weft_clk), .wr_rst(rst), .wr_valid(wr_valid), .wr_ready(wr_ready), .wr_last(1'b1),
        .wr_data(wr_type), .rd_clk(user_clk), .rd_rst(rst), .rd_valid(rq_valid), .rd_ready(rq_ready),
        .rd_data(rq_type));
    // The RQ descriptor's Request Type and Dword Count (PG213).
    wire [511:0] rq_data = {433'd0, rq_type, rq_type[0] ? 11'd16 : 11'd1, 64'd0};

    // ---- credit: the block's non-posted header credit ----
    integer np_pool = 2;       // credit the block has now
    integer np_out = 0;        // taken, not yet given back
    reg [3:0] av_now = 4'd2;
    reg [3:0] av_d1 = 4'd2;
    reg [3:0] nph_av = 4'd2;
    integer user_cycle = 0;
    integer reads_got = 0;
    integer writes_got = 0;
    always @(posedge user_clk) begin
        user_cycle <= user_cycle + 1;
        rq_ready <= ($random(seed) & 3) != 0;
        if (rq_valid && rq_ready) begin
            if (rq_type == 4'b0000) begin
                if (np_pool == 0) begin
                    $display("ERROR: a read reached RQ without non-posted header credit");
                    errors = errors + 1;
                end else begin
                    np_pool = np_pool - 1;
                end
                np_out = np_out + 1;
                reads_got = reads_got + 1;
            end else begin
                writes_got = writes_got + 1;
            end
        end
        if (user_cycle % 60 == 59 && np_out > 0) begin
            np_out = np_out - 1;
            np_pool = np_pool + 1;
        end
        // What the block shows lags what it has by two cycles.
        av_now <= np_pool > 15 ? 4'd15 : np_pool;
        av_d1 <= av_now;
        nph_av <= av_d1;
    end
    wire [95:0] limit;
    wire [5:0] infinite;
    wire up;
    weft_board_pcie4_credit ip_credit (.clk(user_clk), .rst(rst), .up_in(1'b1),
        .nph_av(nph_av), .npd_av(4'd15), .rq_valid(rq_valid), .rq_ready(rq_ready), .rq_last(1'b1),
        .rq_data(rq_data), .limit(limit), .infinite(infinite), .up(up));
    wire [102:0] word;
    weft_board_cdc_snapshot #(.WIDTH(103)) crossing (.src_clk(user_clk),
        .src_value({up, infinite, limit}), .dst_clk(weft_clk), .dst_value(word));
    // The block keeps its own account of void TLPs (REFUND_VOID 0, as the
    // board wrapper has it); this egress sends and discards none.
    weft_board_tx_credit #(.REFUND_VOID(0)) counter (.clk(weft_clk), .rst(rst), .up(word[102]), .epoch(1'b0),
        .limit(word[95:0]), .infinite(word[101:96]), .consume(consume), .consume_dws(consume_dws),
        .refund(3'd0), .refund_dws(11'd0), .sent(1'b0), .sent_sop(1'b0), .sent_eop(1'b0), .sent_nullify(1'b0), .sent_dw0(32'd0),
        .credit(credit), .counted(), .counted_epoch());

    always @(posedge user_clk)
        if (rq_valid && rq_ready && rq_type == 4'b0000 && reads_got == READS - 1 && writes_got != WRITES) begin
            $display("ERROR: the last read arrived before every posted write (%0d of %0d)", writes_got, WRITES);
            errors = errors + 1;
        end

    initial begin
        wait (reads_got == READS && writes_got == WRITES && weft_cycle > 600 * LINK_REQUESTS + 2000);
        if (hot_resets != LINK_REQUESTS) begin
            $display("ERROR: %0d hot resets, not %0d", hot_resets, LINK_REQUESTS);
            errors = errors + 1;
        end
        if (retrains != LINK_REQUESTS) begin
            $display("ERROR: %0d retrains, not %0d", retrains, LINK_REQUESTS);
            errors = errors + 1;
        end
        $display("weft-pcie4-tb: done, %0d errors", errors);
        $finish;
    end
    initial begin
        #400000;
        $display("ERROR: timeout: %0d reads, %0d writes, %0d hot resets, %0d retrains", reads_got,
                 writes_got, hot_resets, retrains);
        $finish;
    end
endmodule
`default_nettype wire
