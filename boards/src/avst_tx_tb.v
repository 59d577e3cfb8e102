// The tile TX shim's nullify: a void TLP (weft's `nullify` on its last
// beat) leaves with tx_st_err on its end segment only, a whole one
// without it (AN 791 3.2: tx_st_err asserted with tx_st_eop nullifies the
// TLP). Generated into the board's simulation by weft-boards.
`timescale 1ns/1ps
`default_nettype none
module weft_avst_tx_tb;
    reg clk = 1'b0;
    always #1 clk = !clk;
    reg valid = 1'b0, sop = 1'b0, eop = 1'b0, nullify = 1'b0;
    reg [4:0] empty = 5'd0;
    reg [127:0] hdr = 128'd0;
    wire ready;
    wire [1:0] avst_valid, avst_dvalid, avst_hvalid, avst_sop, avst_eop, avst_err;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [511:0] avst_data;
    wire [255:0] avst_hdr;
    /* verilator lint_on UNUSEDSIGNAL */
    weft_board_avst_tx #(.SEGMENTS(2), .DATA_BITS(512), .W(512), .READY_LATENCY(0)) dut (
        .clk(clk), .rst(1'b0), .valid(valid), .ready(ready), .sop(sop), .eop(eop),
        .nullify(nullify), .empty(empty), .hdr(hdr), .payload(512'd0), .avst_ready(1'b1),
        .avst_valid(avst_valid), .avst_dvalid(avst_dvalid), .avst_hvalid(avst_hvalid),
        .avst_sop(avst_sop), .avst_eop(avst_eop), .avst_data(avst_data), .avst_hdr(avst_hdr),
        .avst_err(avst_err));
    integer errors = 0;
    integer checked = 0;
    // One beat, checked as the shim offers it: tx_st_err exactly where
    // tx_st_eop is, and only for a void TLP's last beat.
    task beat(input s, input e, input n, input [4:0] em);
        begin
            sop = s; eop = e; nullify = n; empty = em; valid = 1'b1;
            #0.5;
            if (avst_err !== ((e && n) ? avst_eop : 2'b00)) begin
                $display("ERROR: sop %0d eop %0d nullify %0d empty %0d: err %b, eop %b",
                         s, e, n, em, avst_err, avst_eop);
                errors = errors + 1;
            end
            if (e && avst_eop == 2'b00) begin
                $display("ERROR: a last beat without tx_st_eop");
                errors = errors + 1;
            end
            checked = checked + 1;
            @(posedge clk);
            #0.1;
        end
    endtask
    // A TLP of `dws` data DWs (a memory write: Fmt[1], Length) over
    // 16-DW beats, void or whole.
    task tlp(input integer dws, input void_tlp);
        integer left;
        begin
            hdr = 128'd0;
            hdr[126] = 1'b1;
            hdr[105:96] = dws[9:0];
            left = dws;
            beat(1'b1, left <= 16, void_tlp && left <= 16, left <= 16 ? 16 - left : 0);
            left = left - 16;
            while (left > 0) begin
                beat(1'b0, left <= 16, void_tlp && left <= 16, left <= 16 ? 16 - left : 0);
                left = left - 16;
            end
        end
    endtask
    initial begin
        @(posedge clk);
        #0.1;
        tlp(36, 1'b0);  // ends in segment 0 of its third beat, whole
        tlp(36, 1'b1);  // the same, void
        tlp(44, 1'b1);  // ends in segment 1, void
        tlp(44, 1'b0);
        tlp(8, 1'b1);   // one beat: the shim passes what weft marks
        valid = 1'b0;
        $display("weft-avst-tx-tb: done, %0d beats, %0d errors", checked, errors);
        $finish;
    end
endmodule
`default_nettype wire
