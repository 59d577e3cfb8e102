// The UltraScale+ shims (`axis.v`) against PG213. TLPs of several lengths
// (header only, one beat, ending in every part of a beat, several beats)
// go through each shim with random backpressure on both sides. The
// expected descriptors, headers, tkeep and tuser are written here from
// PG213's tables and the PCIe header layout, field by field, not taken
// from the shims:
//
// - s_axis_cc_tuser, 512-bit: is_sop[0] bit 0, is_sop0_ptr [3:2] = 0,
//   is_eop[0] bit 6, is_eop0_ptr [11:8] = the TLP's last DW in the beat,
//   discontinue bit 16, the rest 0; 64/128/256-bit: discontinue bit 0.
// - s_axis_rq_tuser, 512-bit: first_be [3:0], last_be [11:8] on the first
//   beat, addr_offset [19:16] = 0, is_sop[0] bit 20, is_eop[0] bit 26,
//   is_eop0_ptr [31:28], discontinue bit 36; 64/128/256-bit: first_be
//   [3:0], last_be [7:4], discontinue bit 11.
// - m_axis_cq_tuser, 512-bit: first_be [3:0], last_be [11:8], is_sop[0]
//   bit 80, discontinue bit 96; m_axis_rc_tuser, 512-bit: is_sop[0] bit
//   64, discontinue bit 96.
// - tkeep set from the descriptor's first DW to the payload's last; tlast
//   on the last beat only.
// Generated into the simulation by weft-boards.
`timescale 1ns/1ps
`default_nettype none

// One TX shim (weft's stream to s_axis_cc / s_axis_rq) and its checks.
module weft_axis_tx_check #(
    parameter D = 512,
    parameter R = 0,
    parameter SEED = 1
) (
    input wire clk
);
    localparam U = D == 512 ? (R ? 137 : 81) : (R ? 62 : 33);
    localparam DWS = D / 32;
    localparam DESC = R ? 4 : 3;
    reg valid = 1'b0, sop = 1'b0, eop = 1'b0, nullify = 1'b0;
    reg [4:0] empty = 5'd0;
    reg [127:0] hdr = 128'd0;
    reg [511:0] payload = 512'd0;
    reg tready = 1'b0;
    wire ready, tlast, tvalid;
    wire [D-1:0] tdata;
    wire [DWS-1:0] tkeep;
    wire [U-1:0] tuser;
    weft_board_axis_tx #(.DATA_BITS(D), .W(512), .REQUESTER(R)) dut (
        .clk(clk), .rst(1'b0), .valid(valid), .ready(ready), .sop(sop), .eop(eop),
        .nullify(nullify), .empty(empty), .hdr(hdr), .payload(payload),
        .tdata(tdata), .tkeep(tkeep), .tlast(tlast), .tuser(tuser), .tvalid(tvalid),
        .tready(tready));

    integer seed = SEED;
    always @(posedge clk) tready <= ($random(seed) & 3) != 0;

    // Beats the block takes.
    integer nb = 0;
    reg [D-1:0] bd [0:15];
    reg [DWS-1:0] bk [0:15];
    reg bl [0:15];
    reg [U-1:0] bu [0:15];
    always @(posedge clk)
        if (tvalid && tready) begin
            if (nb < 16) begin
                bd[nb] = tdata; bk[nb] = tkeep; bl[nb] = tlast; bu[nb] = tuser;
            end
            nb = nb + 1;
        end

    integer errors = 0;
    integer tlps = 0;
    // The packet's DWs as the block must see them: descriptor, then payload.
    reg [31:0] stream [0:63];

    function [31:0] pattern(input integer t, input integer j);
        pattern = {t[7:0], 8'hA5, j[15:0]};
    endfunction

    // Sends one TLP of `n` payload DWs with header `h`, expected descriptor
    // `desc` and byte enables `fbe`/`lbe`, void or whole, and checks what
    // the block receives. A whole TLP expected to leave discontinued is one
    // the interface cannot describe: its descriptor is not checked.
    task send(input [127:0] h, input [127:0] desc, input integer n, input [3:0] fbe,
              input [3:0] lbe, input void_tlp, input expect_discontinue);
        integer beats, b, j, total, expect_beats, last_dws, left;
        reg [DWS-1:0] keep;
        begin
            tlps = tlps + 1;
            total = DESC + n;
            for (j = 0; j < DESC; j = j + 1) stream[j] = desc[32*j +: 32];
            for (j = 0; j < n; j = j + 1) stream[DESC + j] = pattern(tlps, j);
            expect_beats = (total + DWS - 1) / DWS;
            last_dws = total - DWS * (expect_beats - 1);
            nb = 0;
            beats = n == 0 ? 1 : (n + 15) / 16;
            left = n;
            for (b = 0; b < beats; b = b + 1) begin
                while (($random(seed) & 7) == 0) begin
                    valid = 1'b0;
                    @(posedge clk);
                    #0.1;
                end
                hdr = h;
                sop = b == 0;
                eop = b == beats - 1;
                empty = eop ? 16 * beats - n : 0;
                nullify = eop && void_tlp;
                payload = 512'd0;
                for (j = 0; j < 16; j = j + 1)
                    if (16 * b + j < n) payload[511 - 32 * j -: 32] = pattern(tlps, 16 * b + j);
                valid = 1'b1;
                #0.5;
                while (!ready) begin
                    @(posedge clk);
                    #0.5;
                end
                @(posedge clk);
                #0.1;
                valid = 1'b0;
            end
            for (j = 0; j < 40 && nb < expect_beats; j = j + 1) @(posedge clk);
            repeat (4) @(posedge clk);
            #0.1;
            if (nb != expect_beats) begin
                $display("ERROR: tx R%0d D%0d: %0d-DW TLP left in %0d beats, not %0d", R, D, n, nb, expect_beats);
                errors = errors + 1;
            end else begin
                for (b = 0; b < expect_beats; b = b + 1) begin
                    keep = b < expect_beats - 1 ? {DWS{1'b1}} : ({DWS{1'b1}} >> (DWS - last_dws));
                    if (bk[b] !== keep || bl[b] !== (b == expect_beats - 1)) begin
                        $display("ERROR: tx R%0d D%0d: %0d-DW TLP beat %0d: tkeep %h tlast %b, not %h %b",
                                 R, D, n, b, bk[b], bl[b], keep, b == expect_beats - 1);
                        errors = errors + 1;
                    end
                    for (j = 0; j < DWS; j = j + 1)
                        if (DWS * b + j < total && bd[b][32*j +: 32] !== stream[DWS * b + j]
                            && (DWS * b + j >= DESC || void_tlp || !expect_discontinue)) begin
                            $display("ERROR: tx R%0d D%0d: %0d-DW TLP beat %0d DW %0d: %h, not %h",
                                     R, D, n, b, j, bd[b][32*j +: 32], stream[DWS * b + j]);
                            errors = errors + 1;
                        end
                    check_user(n, b, b == 0, b == expect_beats - 1, last_dws - 1, fbe, lbe,
                               expect_discontinue && b == expect_beats - 1);
                end
            end
        end
    endtask

    task check_user(input integer n, input integer b, input first, input last,
                    input integer ptr, input [3:0] fbe, input [3:0] lbe, input disc);
        reg [U-1:0] u;
        reg ok;
        begin
            u = bu[b];
            ok = 1'b1;
            if (D == 512 && R == 0) begin
                if (u[0] !== first || u[1] !== 1'b0 || u[5:2] !== 4'd0) ok = 1'b0;
                if (u[6] !== last || u[7] !== 1'b0) ok = 1'b0;
                if (last && u[11:8] !== ptr[3:0]) ok = 1'b0;
                if (u[15:12] !== 4'd0 || u[16] !== disc || u[U-1:17] !== 0) ok = 1'b0;
            end else if (D == 512) begin
                if (first && (u[3:0] !== fbe || u[11:8] !== lbe)) ok = 1'b0;
                if (u[7:4] !== 4'd0 || u[15:12] !== 4'd0 || u[19:16] !== 4'd0) ok = 1'b0;
                if (u[20] !== first || u[21] !== 1'b0 || u[25:22] !== 4'd0) ok = 1'b0;
                if (u[26] !== last || u[27] !== 1'b0) ok = 1'b0;
                if (last && u[31:28] !== ptr[3:0]) ok = 1'b0;
                if (u[35:32] !== 4'd0 || u[36] !== disc || u[U-1:37] !== 0) ok = 1'b0;
            end else if (R == 0) begin
                if (u[0] !== disc || u[U-1:1] !== 0) ok = 1'b0;
            end else begin
                if (first && (u[3:0] !== fbe || u[7:4] !== lbe)) ok = 1'b0;
                if (u[10:8] !== 3'd0 || u[11] !== disc || u[U-1:12] !== 0) ok = 1'b0;
            end
            if (!ok) begin
                $display("ERROR: tx R%0d D%0d: %0d-DW TLP beat %0d (first %b last %b): tuser %h",
                         R, D, n, b, first, last, u);
                errors = errors + 1;
            end
        end
    endtask
endmodule

// One RX shim (m_axis_cq / m_axis_rc to weft's stream) and its checks.
module weft_axis_rx_check #(
    parameter R = 0,
    parameter SEED = 1
) (
    input wire clk
);
    localparam U = R ? 161 : 183;
    localparam DESC = R ? 3 : 4;
    reg [511:0] tdata = 512'd0;
    reg [15:0] tkeep = 16'd0;
    reg tlast = 1'b0, tvalid = 1'b0;
    reg [U-1:0] tuser = 0;
    wire tready;
    reg ready = 1'b0;
    wire valid, sop, eop, nullify;
    wire [4:0] empty;
    wire [127:0] hdr;
    wire [511:0] payload;
    weft_board_axis_rx #(.DATA_BITS(512), .W(512), .REQUESTER(R)) dut (
        .clk(clk), .rst(1'b0), .tdata(tdata), .tkeep(tkeep), .tlast(tlast), .tuser(tuser),
        .tvalid(tvalid), .tready(tready), .valid(valid), .ready(ready), .sop(sop), .eop(eop),
        .nullify(nullify), .empty(empty), .hdr(hdr), .payload(payload));

    integer seed = SEED;
    always @(posedge clk) ready <= ($random(seed) & 3) != 0;

    integer nb = 0;
    reg [511:0] bp [0:15];
    reg bs [0:15];
    reg be [0:15];
    reg bn [0:15];
    reg [4:0] bm [0:15];
    reg [127:0] bh [0:15];
    always @(posedge clk)
        if (valid && ready) begin
            if (nb < 16) begin
                bp[nb] = payload; bs[nb] = sop; be[nb] = eop; bn[nb] = nullify;
                bm[nb] = empty; bh[nb] = hdr;
            end
            nb = nb + 1;
        end

    integer errors = 0;
    integer tlps = 0;
    reg [31:0] stream [0:63];

    function [31:0] pattern(input integer t, input integer j);
        pattern = {t[7:0], 8'h5A, j[15:0]};
    endfunction

    // The block hands over a packet: descriptor `desc` and `n` payload DWs,
    // with byte enables `fbe`/`lbe` in tuser (CQ), discontinue on its last
    // beat if `disc`. weft must see header `h`, the payload, and `nullify`
    // if `expect_void`.
    task receive(input [127:0] desc, input [127:0] h, input integer n, input [3:0] fbe,
                 input [3:0] lbe, input disc, input expect_void);
        integer total, beats, b, j, weft_beats;
        begin
            tlps = tlps + 1;
            total = DESC + n;
            for (j = 0; j < DESC; j = j + 1) stream[j] = desc[32*j +: 32];
            for (j = 0; j < n; j = j + 1) stream[DESC + j] = pattern(tlps, j);
            beats = (total + 15) / 16;
            weft_beats = n == 0 ? 1 : (n + 15) / 16;
            nb = 0;
            for (b = 0; b < beats; b = b + 1) begin
                while (($random(seed) & 7) == 0) begin
                    tvalid = 1'b0;
                    @(posedge clk);
                    #0.1;
                end
                tdata = 512'd0;
                tkeep = 16'd0;
                for (j = 0; j < 16; j = j + 1)
                    if (16 * b + j < total) begin
                        tdata[32*j +: 32] = stream[16 * b + j];
                        tkeep[j] = 1'b1;
                    end
                tlast = b == beats - 1;
                tuser = 0;
                if (R == 0) begin
                    if (b == 0) begin
                        tuser[3:0] = fbe;
                        tuser[11:8] = lbe;
                    end
                    tuser[80] = b == 0;
                    tuser[86] = b == beats - 1;
                    tuser[96] = disc && b == beats - 1;
                end else begin
                    tuser[64] = b == 0;
                    tuser[76] = b == beats - 1;
                    tuser[96] = disc && b == beats - 1;
                end
                tvalid = 1'b1;
                #0.5;
                while (!tready) begin
                    @(posedge clk);
                    #0.5;
                end
                @(posedge clk);
                #0.1;
                tvalid = 1'b0;
            end
            for (j = 0; j < 40 && nb < weft_beats; j = j + 1) @(posedge clk);
            repeat (4) @(posedge clk);
            #0.1;
            if (nb != weft_beats) begin
                $display("ERROR: rx R%0d: %0d-DW TLP reached weft in %0d beats, not %0d", R, n, nb, weft_beats);
                errors = errors + 1;
            end else begin
                if (bh[0] !== h) begin
                    $display("ERROR: rx R%0d: %0d-DW TLP header %h, not %h", R, n, bh[0], h);
                    errors = errors + 1;
                end
                for (b = 0; b < weft_beats; b = b + 1) begin
                    if (bs[b] !== (b == 0) || be[b] !== (b == weft_beats - 1)
                        || bm[b] !== (b == weft_beats - 1 ? 16 * weft_beats - n : 0)
                        || bn[b] !== (expect_void && b == weft_beats - 1)) begin
                        $display("ERROR: rx R%0d: %0d-DW TLP beat %0d: sop %b eop %b empty %0d nullify %b",
                                 R, n, b, bs[b], be[b], bm[b], bn[b]);
                        errors = errors + 1;
                    end
                    for (j = 0; j < 16; j = j + 1)
                        if (16 * b + j < n && bp[b][511 - 32 * j -: 32] !== stream[DESC + 16 * b + j]) begin
                            $display("ERROR: rx R%0d: %0d-DW TLP beat %0d DW %0d: %h, not %h", R, n, b, j,
                                     bp[b][511 - 32 * j -: 32], stream[DESC + 16 * b + j]);
                            errors = errors + 1;
                        end
                end
            end
        end
    endtask

    // The block hands over a packet weft has no header for: nothing
    // reaches weft, and the next TLP comes through.
    task dropped(input [127:0] desc);
        begin
            tlps = tlps + 1;
            nb = 0;
            tdata = 512'd0;
            tdata[127:0] = desc;
            tkeep = 16'h001F;
            tlast = 1'b1;
            tuser = 0;
            if (R == 0) tuser[80] = 1'b1;
            else tuser[64] = 1'b1;
            tvalid = 1'b1;
            #0.5;
            while (!tready) begin
                @(posedge clk);
                #0.5;
            end
            @(posedge clk);
            #0.1;
            tvalid = 1'b0;
            repeat (8) @(posedge clk);
            #0.1;
            if (nb != 0) begin
                $display("ERROR: rx R%0d: a TLP without a header reached weft in %0d beats", R, nb);
                errors = errors + 1;
            end
        end
    endtask
endmodule

module weft_axis_tb;
    reg clk = 1'b0;
    always #1 clk = !clk;

    weft_axis_tx_check #(.D(512), .R(0), .SEED(11)) cc (.clk(clk));
    weft_axis_tx_check #(.D(512), .R(1), .SEED(12)) rq (.clk(clk));
    weft_axis_tx_check #(.D(256), .R(0), .SEED(13)) cc256 (.clk(clk));
    weft_axis_tx_check #(.D(256), .R(1), .SEED(14)) rq256 (.clk(clk));
    weft_axis_rx_check #(.R(0), .SEED(15)) cq (.clk(clk));
    weft_axis_rx_check #(.R(1), .SEED(16)) rc (.clk(clk));

    // A completion header (PCIe Base 6.0 §2.2.9) and its completer
    // completion descriptor (PG213 "Completer Completion Descriptor
    // Fields"), from the same fields.
    function [127:0] cpl_hdr(input data, input [9:0] len, input [2:0] status, input [11:0] bytes,
                             input [6:0] lower, input [7:0] tag, input [2:0] tc, input [2:0] attr);
        begin
            cpl_hdr = 128'd0;
            cpl_hdr[127:125] = data ? 3'b010 : 3'b000;
            cpl_hdr[124:120] = 5'b01010;
            cpl_hdr[118:116] = tc;
            cpl_hdr[114] = attr[2];
            cpl_hdr[109:108] = attr[1:0];
            cpl_hdr[105:96] = len;
            cpl_hdr[95:80] = 16'h0300;       // completer ID
            cpl_hdr[79:77] = status;
            cpl_hdr[75:64] = bytes;
            cpl_hdr[63:48] = 16'h0010;       // requester ID
            cpl_hdr[47:40] = tag;
            cpl_hdr[38:32] = lower;
        end
    endfunction
    function [127:0] cc_desc(input data, input [9:0] len, input [2:0] status, input [11:0] bytes,
                             input [6:0] lower, input [7:0] tag, input [2:0] tc, input [2:0] attr);
        begin
            cc_desc = 128'd0;
            cc_desc[6:0] = lower;
            cc_desc[28:16] = bytes == 12'd0 ? 13'd4096 : {1'b0, bytes};
            cc_desc[42:32] = data ? (len == 10'd0 ? 11'd1024 : {1'b0, len}) : 11'd0;
            cc_desc[45:43] = status;
            cc_desc[63:48] = 16'h0010;
            cc_desc[71:64] = tag;
            cc_desc[87:72] = 16'h0300;
            cc_desc[88] = 1'b1;              // the completer ID above
            cc_desc[91:89] = tc;
            cc_desc[94:92] = attr;
        end
    endfunction

    // A memory request header (§2.2.7) and its requester request
    // descriptor (PG213 "Requester Request Descriptor Fields").
    function [127:0] mem_hdr(input write, input [63:0] addr, input [9:0] len, input [3:0] fbe,
                             input [3:0] lbe, input [7:0] tag);
        reg four;
        begin
            four = addr[63:32] != 32'd0;
            mem_hdr = 128'd0;
            mem_hdr[127:125] = {1'b0, write, four};
            mem_hdr[124:120] = 5'b00000;
            mem_hdr[105:96] = len;
            mem_hdr[95:80] = 16'h0400;       // requester ID
            mem_hdr[79:72] = tag;
            mem_hdr[71:68] = lbe;
            mem_hdr[67:64] = fbe;
            if (four) mem_hdr[63:0] = addr;
            else mem_hdr[63:32] = addr[31:0];
        end
    endfunction
    function [127:0] rq_desc(input write, input [63:0] addr, input [9:0] len, input [7:0] tag);
        begin
            rq_desc = 128'd0;
            rq_desc[63:2] = addr[63:2];
            rq_desc[74:64] = len == 10'd0 ? 11'd1024 : {1'b0, len};
            rq_desc[78:75] = write ? 4'b0001 : 4'b0000;
            rq_desc[95:80] = 16'h0400;
            rq_desc[103:96] = tag;
            rq_desc[120] = 1'b1;             // the requester ID above
        end
    endfunction
    // A completer request descriptor for a memory request (PG213
    // "Completer Request Descriptor Formats"); BAR and function 0.
    function [127:0] cq_desc(input write, input [63:0] addr, input [9:0] len, input [7:0] tag,
                             input [2:0] tc, input [2:0] attr);
        begin
            cq_desc = 128'd0;
            cq_desc[63:2] = addr[63:2];
            cq_desc[74:64] = len == 10'd0 ? 11'd1024 : {1'b0, len};
            cq_desc[78:75] = write ? 4'b0001 : 4'b0000;
            cq_desc[95:80] = 16'h0400;
            cq_desc[103:96] = tag;
            cq_desc[123:121] = tc;
            cq_desc[126:124] = attr;
        end
    endfunction
    // A requester completion descriptor (PG213 "Requester Completion
    // Descriptor Fields").
    function [127:0] rc_desc(input [9:0] len, input [2:0] status, input [11:0] bytes,
                             input [6:0] lower, input [7:0] tag, input [2:0] tc, input [2:0] attr);
        begin
            rc_desc = 128'd0;
            rc_desc[11:0] = {5'd0, lower};
            rc_desc[28:16] = bytes == 12'd0 ? 13'd4096 : {1'b0, bytes};
            rc_desc[42:32] = {1'b0, len};
            rc_desc[45:43] = status;
            rc_desc[63:48] = 16'h0010;
            rc_desc[71:64] = tag;
            rc_desc[87:72] = 16'h0300;
            rc_desc[91:89] = tc;
            rc_desc[94:92] = attr;
        end
    endfunction
    function [127:0] with_tc_attr(input [127:0] h, input [2:0] tc, input [2:0] attr);
        begin
            with_tc_attr = h;
            with_tc_attr[118:116] = tc;
            with_tc_attr[114] = attr[2];
            with_tc_attr[109:108] = attr[1:0];
        end
    endfunction

    integer n, k;
    integer lens [0:9];
    initial begin
        // Lengths: header only, one DW, filling the first beat exactly,
        // one DW over it, one weft beat, ending in each quarter of later
        // beats, exactly three beats.
        lens[0] = 0; lens[1] = 1; lens[2] = 12; lens[3] = 13; lens[4] = 14;
        lens[5] = 16; lens[6] = 29; lens[7] = 36; lens[8] = 45; lens[9] = 48;
        @(posedge clk);
        #0.1;
        for (k = 0; k < 10; k = k + 1) begin
            n = lens[k];
            cc.send(cpl_hdr(n != 0, n, 3'd0, 4 * n, 7'h14 + k, k, k % 8, k % 8),
                    cc_desc(n != 0, n, 3'd0, 4 * n, 7'h14 + k, k, k % 8, k % 8),
                    n, 4'd0, 4'd0, 1'b0, 1'b0);
            rq.send(mem_hdr(n != 0, k % 2 ? 64'h0000_0012_3456_7800 : 64'h8765_4300, n == 0 ? 10'd4 : n,
                            4'hF, (n > 1 || n == 0) ? 4'hF : 4'h0, 8'h40 + k),
                    rq_desc(n != 0, k % 2 ? 64'h0000_0012_3456_7800 : 64'h8765_4300, n == 0 ? 10'd4 : n,
                            8'h40 + k),
                    n, 4'hF, (n > 1 || n == 0) ? 4'hF : 4'h0, 1'b0, 1'b0);
            cq.receive(cq_desc(n != 0, k % 2 ? 64'h0000_0012_3456_7800 : 64'h8765_4300, n == 0 ? 10'd4 : n,
                               8'h40 + k, k % 8, k % 8),
                       with_tc_attr(mem_hdr(n != 0, k % 2 ? 64'h0000_0012_3456_7800 : 64'h8765_4300,
                                            n == 0 ? 10'd4 : n, 4'hF, (n > 1 || n == 0) ? 4'hF : 4'h0,
                                            8'h40 + k), k % 8, k % 8),
                       n, 4'hF, (n > 1 || n == 0) ? 4'hF : 4'h0, 1'b0, 1'b0);
            rc.receive(rc_desc(n, 3'd0, 4 * n, 7'h14 + k, k, k % 8, k % 8),
                       cpl_hdr(n != 0, n, 3'd0, 4 * n, 7'h14 + k, k, k % 8, k % 8),
                       n, 4'd0, 4'd0, 1'b0, 1'b0);
        end
        // The narrower interface: a descriptor and up to 8 DWs (weft's
        // first 8), in one or two beats.
        for (k = 0; k < 5; k = k + 1) begin
            n = k == 0 ? 0 : k == 1 ? 1 : k == 2 ? 4 : k == 3 ? 5 : 8;
            cc256.send(cpl_hdr(n != 0, n, 3'd0, 4 * n, 7'h04, k, 3'd0, 3'd0),
                       cc_desc(n != 0, n, 3'd0, 4 * n, 7'h04, k, 3'd0, 3'd0),
                       n, 4'd0, 4'd0, k == 3, k == 3);
            rq256.send(mem_hdr(n != 0, 64'h1000, n == 0 ? 10'd1 : n, 4'hC, n > 1 ? 4'h3 : 4'h0, k),
                       rq_desc(n != 0, 64'h1000, n == 0 ? 10'd1 : n, k),
                       n, 4'hC, n > 1 ? 4'h3 : 4'h0, k == 3, k == 3);
        end
        // Void TLPs leave with discontinue on their last beat only: one
        // that ends in the beat it starts, one that needs the extra beat.
        cc.send(cpl_hdr(1'b1, 10'd5, 3'd0, 12'd20, 7'h0, 8'h77, 3'd0, 3'd0),
                cc_desc(1'b1, 10'd5, 3'd0, 12'd20, 7'h0, 8'h77, 3'd0, 3'd0), 5, 4'd0, 4'd0, 1'b1, 1'b1);
        cc.send(cpl_hdr(1'b1, 10'd30, 3'd0, 12'd120, 7'h0, 8'h78, 3'd0, 3'd0),
                cc_desc(1'b1, 10'd30, 3'd0, 12'd120, 7'h0, 8'h78, 3'd0, 3'd0), 30, 4'd0, 4'd0, 1'b1, 1'b1);
        rq.send(mem_hdr(1'b1, 64'h2000, 10'd20, 4'hF, 4'hF, 8'h01),
                rq_desc(1'b1, 64'h2000, 10'd20, 8'h01), 20, 4'hF, 4'hF, 1'b1, 1'b1);
        // A completion with an error status and no data, 4096 bytes left.
        cc.send(cpl_hdr(1'b0, 10'd0, 3'd1, 12'd0, 7'h0, 8'h79, 3'd0, 3'd0),
                cc_desc(1'b0, 10'd0, 3'd1, 12'd0, 7'h0, 8'h79, 3'd0, 3'd0), 0, 4'd0, 4'd0, 1'b0, 1'b0);
        // A request on the completion interface cannot be described
        // there: it leaves voided.
        cc.send(mem_hdr(1'b1, 64'h3000, 10'd2, 4'hF, 4'hF, 8'h02),
                128'd0, 2, 4'd0, 4'd0, 1'b0, 1'b1);
        // The block discontinues a request and a completion: weft voids them.
        cq.receive(cq_desc(1'b1, 64'h4000, 10'd20, 8'h03, 3'd0, 3'd0),
                   mem_hdr(1'b1, 64'h4000, 10'd20, 4'hF, 4'hF, 8'h03), 20, 4'hF, 4'hF, 1'b1, 1'b1);
        // A configuration write (request type 1010b) on CQ: dropped.
        cq.dropped(128'd10 << 75);
        cq.receive(cq_desc(1'b1, 64'h5000, 10'd3, 8'h05, 3'd0, 3'd0),
                   mem_hdr(1'b1, 64'h5000, 10'd3, 4'hF, 4'hF, 8'h05), 3, 4'hF, 4'hF, 1'b0, 1'b0);
        rc.receive(rc_desc(10'd2, 3'd0, 12'd8, 7'h0, 8'h04, 3'd0, 3'd0),
                   cpl_hdr(1'b1, 10'd2, 3'd0, 12'd8, 7'h0, 8'h04, 3'd0, 3'd0), 2, 4'd0, 4'd0, 1'b1, 1'b1);
        $display("weft-axis-tb: done, %0d TLPs, %0d errors",
                 cc.tlps + rq.tlps + cc256.tlps + rq256.tlps + cq.tlps + rc.tlps,
                 cc.errors + rq.errors + cc256.errors + rq256.errors + cq.errors + rc.errors);
        $finish;
    end
endmodule
`default_nettype wire
