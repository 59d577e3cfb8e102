// The transmit credit path of a board wrapper (credit.v, cdc.v) between a
// stand-in for weft's egress and a link partner that gives one non-posted
// header credit (the least it may, §2.6.1) and keeps it a long while. The
// egress holds two non-posted requests and, queued after them, posted
// writes; it starts a TLP of a class only while
// weft_board_tx_credit says the class has credit, as weft's SwitchCore
// does, and reports each TLP it commits. TLPs cross to the hard IP's clock
// through the wrapper's dual-clock FIFO. The partner, on the IP's clock,
// reports its limits as a P-tile does (683059 §4.4.7: one counter a cycle
// by tdm index, 0 for infinite), takes TLPs from the FIFO as they come and
// gives back what they consumed every so often, the non-posted header
// credit only after a while.
//
// Checked: no TLP reaches the partner beyond the credit it gave; every
// posted write arrives while the second request still waits for its
// credit (PCIe Base 6.0 §2.4.1: posted requests must be able to pass
// non-posted ones); the second request arrives once the credit is back.
// With `+small_partner` the partner advertises only 16 posted data credits
// (a 256-byte Max_Payload_Size, the least it may then, §2.6.1) and the
// writes carry 256 bytes: they must flow all the same. With `+void_writes`
// a void write (nullified, as weft's egress ends a TLP it found malformed
// after it began) follows each good one; the partner discards it and
// counts no credit for it (§2.6.1.2, §3.6.2.1), so its credit must come
// back at weft's end or the writes after it would wait forever. With
// `+discarded_writes` a write follows each good one that the egress
// commits (consume) and then discards before the FIFO, as a host port's
// egress drops a TLP after the core committed it: it gives its credit back
// on refund the next cycle, or the writes after it would wait. Generated
// into the simulation by weft-boards.
`timescale 1ns/1ps
`default_nettype none
module weft_credit_tb;
    reg weft_clk = 1'b0;
    reg ip_clk = 1'b0;
    always #2 weft_clk = !weft_clk;
    always #3 ip_clk = !ip_clk;
    reg rst = 1'b1;
    initial #50 rst = 1'b0;

    localparam POSTED = 6;
    // Void writes among the posted ones with +void_writes.
    integer voids = 0;
    initial if ($test$plusargs("void_writes")) voids = POSTED;
    // With +discarded_writes the extra writes are discarded instead.
    reg discarding = 1'b0;
    initial if ($test$plusargs("discarded_writes")) begin
        voids = POSTED;
        discarding = 1'b1;
    end
    localparam NP_CREDIT_AT = 2000; // IP cycles before the non-posted header credit comes back

    // ---- the partner, on the IP's clock ----
    // Counters: 0 PH, 1 NPH, 2 CPLH, 3 PD, 4 NPD, 5 CPLD.
    reg [15:0] granted [0:5];
    reg [15:0] consumed [0:5];
    reg [15:0] returned [0:5];
    integer ip_cycle = 0;
    integer c;
    // Posted data credits a write takes: 512 bytes, or 256 for a small partner.
    integer write_credits = 32;
    initial begin
        granted[0] = 2; granted[1] = 1; granted[2] = 0;
        granted[3] = 64; granted[4] = 2; granted[5] = 0;
        if ($test$plusargs("small_partner")) begin
            granted[3] = 16;
            write_credits = 16;
        end
        for (c = 0; c < 6; c = c + 1) begin
            consumed[c] = 0;
            returned[c] = 0;
        end
    end
    always @(posedge ip_clk) begin
        ip_cycle <= ip_cycle + 1;
        if (ip_cycle % 100 == 99)
            for (c = 0; c < 6; c = c + 1) if ((c != 1 && c != 4) || ip_cycle >= NP_CREDIT_AT) begin
                granted[c] = granted[c] + consumed[c] - returned[c];
                returned[c] = consumed[c];
            end
    end

    wire [95:0] ip_limit;
    wire [5:0] ip_infinite;
    wire ip_up;
    weft_ptile_partner_limits partner (.clk(ip_clk), .rst(rst), .link_up(1'b1),
        .granted({granted[5], granted[4], granted[3], granted[2], granted[1], granted[0]}),
        .limit(ip_limit), .infinite(ip_infinite), .up(ip_up));
    wire [102:0] word;
    weft_board_cdc_snapshot #(.WIDTH(103)) crossing (.src_clk(ip_clk),
        .src_value({ip_up, ip_infinite, ip_limit}), .dst_clk(weft_clk), .dst_value(word));
    reg [2:0] consume = 3'd0;
    reg [10:0] consume_dws = 11'd0;
    reg [2:0] refund = 3'd0;
    reg [10:0] refund_dws = 11'd0;
    wire [2:0] credit;
    // Each TLP is one beat here: DW0 of a memory read (no data) or of a
    // 3 DW memory write, nullified if void.
    reg [31:0] wr_dw0 = 32'd0;
    reg wr_void = 1'b0;
    wire wr_ready;
    reg wr_valid = 1'b0;
    weft_board_tx_credit counter (.clk(weft_clk), .rst(rst), .up(word[102]), .epoch(1'b0), .limit(word[95:0]),
        .infinite(word[101:96]), .consume(consume), .consume_dws(consume_dws),
        .refund(refund), .refund_dws(refund_dws), .sent(wr_valid && wr_ready), .sent_sop(1'b1), .sent_eop(1'b1), .sent_nullify(wr_void),
        .sent_dw0(wr_dw0), .credit(credit), .counted(), .counted_epoch());

    // ---- the egress, on weft's clock: the requests first, the writes after ----
    integer np_left = 2;
    integer posted_left = 0;
    initial #1 posted_left = POSTED + voids;
    integer sent = 0;
    reg [15:0] wr_data = 16'd0; // class (0 posted, 1 non-posted, 2 void posted), then the TLP's number
    // With voids, every other write from the first is void.
    wire void_next = voids != 0 && posted_left % 2 == 0;
    integer discarded = 0;
    always @(posedge weft_clk) begin
        consume <= 3'd0;
        wr_valid <= 1'b0;
        // A write committed last cycle and discarded: its credit back.
        refund <= 3'd0;
        if (consume[0] && !wr_valid) begin
            refund <= 3'b001;
            refund_dws <= consume_dws;
            discarded <= discarded + 1;
        end
        // Nothing to send before the link's flow control has started
        // (what weft sends before then is discarded: the link-down bench).
        if (!rst && counter.counted && wr_ready && !wr_valid) begin
            if (np_left > 0 && credit[1]) begin
                np_left <= np_left - 1;
                consume <= 3'b010;
                consume_dws <= 11'd0;
                wr_valid <= 1'b1;
                wr_dw0 <= 32'h0000_0001;
                wr_void <= 1'b0;
                wr_data <= {8'd1, sent[7:0]};
                sent <= sent + 1;
            end else if (posted_left > 0 && credit[0]) begin
                posted_left <= posted_left - 1;
                consume <= 3'b001;
                consume_dws <= write_credits * 4;
                wr_valid <= !(discarding && void_next);
                wr_dw0 <= 32'h4000_0000 | (write_credits * 4);
                wr_void <= void_next;
                wr_data <= {void_next ? 8'd2 : 8'd0, sent[7:0]};
                sent <= sent + 1;
            end
        end
    end

    wire rd_valid;
    wire [15:0] rd_data;
    weft_board_cdc_fifo #(.WIDTH(16), .ADDR(4), .PACKET(1)) fifo (
        .wr_clk(weft_clk), .wr_rst(rst), .wr_valid(wr_valid), .wr_ready(wr_ready), .wr_last(1'b1),
        .wr_data(wr_data), .rd_clk(ip_clk), .rd_rst(rst), .rd_valid(rd_valid), .rd_ready(1'b1),
        .rd_data(rd_data));

    // ---- what reaches the partner ----
    integer errors = 0;
    integer posted_got = 0;
    integer np_got = 0;
    integer voids_got = 0;
    always @(posedge ip_clk) begin
        if (rd_valid) begin
            if (rd_data[15:8] == 8'd2) begin
                // Nullified: discarded, no credit counted.
                voids_got = voids_got + 1;
            end else if (rd_data[15:8] == 8'd1) begin
                if (granted[1] - consumed[1] < 1) begin
                    $display("ERROR: a non-posted request beyond the credit given, at IP cycle %0d", ip_cycle);
                    errors = errors + 1;
                end
                if (np_got == 1 && posted_got != POSTED) begin
                    $display("ERROR: the second request arrived before posted write %0d", posted_got);
                    errors = errors + 1;
                end
                consumed[1] = consumed[1] + 1;
                np_got = np_got + 1;
            end else begin
                if (granted[0] - consumed[0] < 1 || granted[3] - consumed[3] < write_credits) begin
                    $display("ERROR: posted write %0d beyond the credit given", posted_got);
                    errors = errors + 1;
                end
                if (ip_cycle >= NP_CREDIT_AT) begin
                    $display("ERROR: posted write %0d waited for the non-posted request's credit", posted_got);
                    errors = errors + 1;
                end
                consumed[0] = consumed[0] + 1;
                consumed[3] = consumed[3] + write_credits;
                posted_got = posted_got + 1;
            end
        end
    end

    initial begin
        wait (np_got == 2 && posted_got == POSTED
              && (discarding ? discarded == voids : voids_got == voids));
        #100;
        $display("weft-credit-tb: done, %0d errors", errors);
        if (errors != 0) $display("ERROR: %0d errors", errors);
        $finish;
    end
    initial begin
        #200000;
        $display("ERROR: timeout: %0d posted writes, %0d void ones and %0d requests arrived, %0d discarded",
                 posted_got, voids_got, np_got, discarded);
        $finish;
    end
endmodule
`default_nettype wire
