// A board wrapper's transmit path (credit.v, cdc.v) across a link that
// goes down and comes back, twice: weft's egress on its clock, the TX FIFO,
// the TX gate and a link partner on the hard IP's clock, whose flow control
// starts again each time the link comes up, from its initial advertisement
// (PCIe Base 6.0 §2.6.1.1). The egress always has TLPs to send, 4-beat
// posted writes and one-beat non-posted reads in turn, and starts each
// only while weft_board_tx_credit gives its class credit, as weft's
// switching core does, reporting what it commits. The first outage is long
// and resets the IP's side of the wrapper halfway through, as a hard IP
// resets its application interface when its link goes down; the second
// lasts a few cycles. Each begins while the partner is taking a write.
//
// Checked (§2.9.1: a Port discards what it is given to send while its link
// is DL_Down):
// - the egress never waits while the link is down: every class has credit
//   once the outage has crossed into weft's clock, and TLPs keep leaving;
// - nothing begins toward the partner while the link is down; the write it
//   was taking when the link went down ends nullified;
// - the partner never receives a TLP committed before the link last came
//   up, nor one beyond the credit it has given since (§2.6.1.2);
// - TLPs arrive in the order committed, each at most once, and flow again
//   after each outage.
// Generated into the simulation by weft-boards.
`timescale 1ns/1ps
`default_nettype none
module weft_link_down_tb;
    reg weft_clk = 1'b0;
    reg ip_clk = 1'b0;
    always #2 weft_clk = !weft_clk;
    always #3 ip_clk = !ip_clk;
    reg weft_rst = 1'b1;
    reg ip_rst = 1'b1;
    initial begin
        #50 weft_rst = 1'b0;
        ip_rst = 1'b0;
    end
    localparam WRITE_BEATS = 4;
    localparam WRITE_DWS = 16;  // 4 posted data credits
    localparam PER_PHASE = 24;  // TLPs the partner takes between outages

    // ---- the link and the partner, on the IP's clock ----
    reg link_up = 1'b0;
    realtime up_at = 0.0;
    integer down_cycles = 0;  // IP cycles the link has been down
    always @(posedge ip_clk) down_cycles <= link_up ? 0 : down_cycles + 1;
    // Counters: 0 PH, 1 NPH, 2 CPLH, 3 PD, 4 NPD, 5 CPLD. Completions are
    // advertised infinite (reported as 0).
    reg [15:0] granted [0:5];
    reg [15:0] consumed [0:5];
    reg [15:0] returned [0:5];
    integer c;
    task start_flow_control;
        begin
            // Enough for the FIFO to stay full while the link is up, so
            // that outages find TLPs in it.
            granted[0] = 32; granted[1] = 16; granted[2] = 0;
            granted[3] = 256; granted[4] = 16; granted[5] = 0;
            for (c = 0; c < 6; c = c + 1) begin
                consumed[c] = 0;
                returned[c] = 0;
            end
        end
    endtask
    initial start_flow_control;
    integer ip_cycle = 0;
    always @(posedge ip_clk) begin
        ip_cycle <= ip_cycle + 1;
        if (ip_cycle % 50 == 49)
            for (c = 0; c < 6; c = c + 1) begin
                granted[c] = granted[c] + consumed[c] - returned[c];
                returned[c] = consumed[c];
            end
    end

    wire [95:0] ip_limit;
    wire [5:0] ip_infinite;
    wire ip_up;
    weft_ptile_partner_limits partner (.clk(ip_clk), .rst(ip_rst), .link_up(link_up),
        .granted({granted[5], granted[4], granted[3], granted[2], granted[1], granted[0]}),
        .limit(ip_limit), .infinite(ip_infinite), .up(ip_up));
    wire ip_epoch;
    wire [103:0] word;
    weft_board_cdc_snapshot #(.WIDTH(104)) crossing (.src_clk(ip_clk),
        .src_value({ip_epoch, ip_up, ip_infinite, ip_limit}), .dst_clk(weft_clk), .dst_value(word));

    // ---- the egress, on weft's clock ----
    reg [2:0] consume = 3'd0;
    reg [10:0] consume_dws = 11'd0;
    wire [2:0] credit;
    wire counted;
    wire counted_epoch;
    reg wr_valid = 1'b0;
    wire wr_ready;
    reg wr_sop = 1'b0;
    reg wr_eop = 1'b0;
    reg [31:0] wr_dw0 = 32'd0;
    reg [15:0] wr_seq = 16'd0;
    weft_board_tx_credit counter (.clk(weft_clk), .rst(weft_rst), .up(word[102]), .epoch(word[103]),
        .limit(word[95:0]), .infinite(word[101:96]), .consume(consume), .consume_dws(consume_dws),
        .refund(3'd0), .refund_dws(11'd0), .sent(wr_valid && wr_ready), .sent_sop(wr_sop),
        .sent_eop(wr_eop), .sent_nullify(1'b0), .sent_dw0(wr_dw0), .credit(credit),
        .counted(counted), .counted_epoch(counted_epoch));
    realtime committed_at [0:65535];
    integer next_seq = 0;
    integer beats_left = 0;
    integer committed_down = 0;  // TLPs committed while the link was down
    integer errors = 0;
    always @(posedge weft_clk) begin
        consume <= 3'd0;
        if (!link_up && down_cycles > 40 && credit != 3'b111) begin
            $display("ERROR: weft waits for credit %b while the link is down", credit);
            errors = errors + 1;
        end
        if (!weft_rst && (!wr_valid || wr_ready)) begin
            wr_valid <= 1'b0;
            if (beats_left > 0) begin
                wr_valid <= 1'b1;
                wr_sop <= 1'b0;
                wr_eop <= beats_left == 1;
                beats_left <= beats_left - 1;
            end else if (next_seq % 2 == 0 ? credit[0] : credit[1]) begin
                // Commit the next TLP: a write, or a read.
                committed_at[next_seq] = $realtime;
                if (!link_up) committed_down = committed_down + 1;
                wr_valid <= 1'b1;
                wr_sop <= 1'b1;
                wr_seq <= next_seq[15:0];
                if (next_seq % 2 == 0) begin
                    consume <= 3'b001;
                    consume_dws <= WRITE_DWS;
                    wr_dw0 <= 32'h4000_0000 | WRITE_DWS;
                    wr_eop <= 1'b0;
                    beats_left <= WRITE_BEATS - 1;
                end else begin
                    consume <= 3'b010;
                    consume_dws <= 11'd0;
                    wr_dw0 <= 32'h0000_0001;
                    wr_eop <= 1'b1;
                end
                next_seq <= next_seq + 1;
            end
        end
    end

    // ---- the TX FIFO and the gate ----
    wire q_valid;
    wire q_ready;
    wire q_sop;
    wire q_eop;
    wire q_nullify;
    wire q_counted;
    wire q_epoch;
    wire [15:0] q_seq;
    weft_board_cdc_fifo #(.WIDTH(21), .ADDR(5), .PACKET(1)) fifo (
        .wr_clk(weft_clk), .wr_rst(weft_rst), .wr_valid(wr_valid), .wr_ready(wr_ready), .wr_last(wr_eop),
        .wr_data({counted, counted_epoch, wr_sop, wr_eop, 1'b0, wr_seq}),
        .rd_clk(ip_clk), .rd_rst(ip_rst), .rd_valid(q_valid), .rd_ready(q_ready),
        .rd_data({q_counted, q_epoch, q_sop, q_eop, q_nullify, q_seq}));
    integer seed = 7;
    initial if (!$value$plusargs("seed=%d", seed)) seed = 7;
    reg partner_ready = 1'b0;
    always @(posedge ip_clk) partner_ready <= ($random(seed) & 3) != 0;
    wire out_valid;
    wire out_nullify;
    weft_board_tx_gate gate (.clk(ip_clk), .rst(ip_rst), .up(ip_up), .epoch(ip_epoch),
        .in_valid(q_valid), .in_ready(q_ready), .in_eop(q_eop), .in_nullify(q_nullify),
        .in_counted(q_counted), .in_epoch(q_epoch), .out_valid(out_valid), .out_ready(partner_ready),
        .out_nullify(out_nullify));

    // ---- what reaches the partner ----
    integer received = 0;
    integer cut = 0;
    integer last_seq = -1;
    reg in_tlp = 1'b0;
    reg tlp_cut = 1'b0;
    reg tlp_write = 1'b0;
    always @(posedge ip_clk) begin
        if (in_tlp && !link_up) tlp_cut = 1'b1;
        if (out_valid && partner_ready) begin
            if (q_sop) begin
                if (!link_up) begin
                    $display("ERROR: TLP %0d began while the link was down", q_seq);
                    errors = errors + 1;
                end
                if ($signed({16'd0, q_seq}) <= last_seq) begin
                    $display("ERROR: TLP %0d after TLP %0d", q_seq, last_seq);
                    errors = errors + 1;
                end
                last_seq = q_seq;
                if (committed_at[q_seq] < up_at) begin
                    $display("ERROR: TLP %0d was committed before the link last came up", q_seq);
                    errors = errors + 1;
                end
                in_tlp = 1'b1;
                tlp_cut = !link_up;
                tlp_write = q_seq % 2 == 0;
            end
            if (q_eop) begin
                in_tlp = 1'b0;
                if (tlp_cut && !out_nullify) begin
                    $display("ERROR: TLP %0d, cut by the link going down, was not nullified", q_seq);
                    errors = errors + 1;
                end
                if (out_nullify) begin
                    cut = cut + 1;
                end else begin
                    // Header and data credits the TLP takes (§2.6.1).
                    if (tlp_write) begin
                        if (granted[0] - consumed[0] < 1 || granted[3] - consumed[3] < WRITE_DWS / 4) begin
                            $display("ERROR: write %0d beyond the credit given", q_seq);
                            errors = errors + 1;
                        end
                        consumed[0] = consumed[0] + 1;
                        consumed[3] = consumed[3] + WRITE_DWS / 4;
                    end else begin
                        if (granted[1] - consumed[1] < 1) begin
                            $display("ERROR: read %0d beyond the credit given", q_seq);
                            errors = errors + 1;
                        end
                        consumed[1] = consumed[1] + 1;
                    end
                    received = received + 1;
                end
            end
        end
    end

    // ---- the link: up, down long (the IP's side reset halfway), up, down
    // a few cycles, up; each outage begins while the partner takes a write ----
    integer committed_before;
    initial begin
        #200 @(negedge ip_clk) link_up = 1'b1;
        up_at = $realtime;
        wait (received >= PER_PHASE);
        wait (in_tlp && tlp_write);
        @(negedge ip_clk) link_up = 1'b0;
        committed_before = next_seq;
        repeat (200) @(negedge ip_clk);
        ip_rst = 1'b1;
        repeat (4) @(negedge ip_clk);
        ip_rst = 1'b0;
        repeat (200) @(negedge ip_clk);
        if (next_seq - committed_before < 20) begin
            $display("ERROR: only %0d TLPs left weft during a 400-cycle outage", next_seq - committed_before);
            errors = errors + 1;
        end
        start_flow_control;
        link_up = 1'b1;
        up_at = $realtime;
        wait (received >= 2 * PER_PHASE);
        wait (in_tlp && tlp_write);
        @(negedge ip_clk) link_up = 1'b0;
        repeat (12) @(negedge ip_clk);
        start_flow_control;
        link_up = 1'b1;
        up_at = $realtime;
        wait (received >= 3 * PER_PHASE);
        #100;
        if (cut != 2) begin
            $display("ERROR: %0d TLPs nullified, not the 2 cut by the outages", cut);
            errors = errors + 1;
        end
        $display("weft-link-down-tb: %0d TLPs received, %0d cut, %0d committed while down, done, %0d errors",
                 received, cut, committed_down, errors);
        if (errors != 0) $display("ERROR: %0d errors", errors);
        $finish;
    end
    initial begin
        #2000000;
        $display("ERROR: timeout: %0d TLPs received", received);
        $finish;
    end
endmodule
`default_nettype wire
