// A simulation model of an Intel tile's Avalon-ST TLP interface in TLP
// Bypass (683059 P-tile, 683501 R-tile "Interfaces"), for weft's board
// smoke simulation only: it is not synthesizable and stands in for the
// vendor IP behind each weft_hip_<port> wrapper.
//
// RX (IP to user logic): sends the TLPs of the file named by +weft_tlps=,
// from QUIET_CYCLES after the link comes up, one TLP per beat starting in
// segment 0, data first DW least significant, the header on segment 0's
// header bus with DW0 most significant. A beat
// goes in cycle t whenever rx_ready was high in cycle t - RX_READY_LATENCY
// (the longest the IP may keep sending after ready falls), with random idle
// cycles.
//
// TX (user logic to IP): drops tx_ready at random; takes a beat only in a
// ready cycle (ready high TX_READY_LATENCY cycles earlier) and reports
// "ERROR" for a beat outside one, a gap inside a TLP on a ready cycle, a
// TLP not starting in segment 0, or an end segment that disagrees with the
// header's Length. Each TLP it takes is written to <+weft_out=>/port<PORT>.hex
// as one line: header DW0..DW3, the payload DW count, the payload DWs.
//
// Stimulus file ($readmemh, one 32-bit word a line, +weft_tlp_words= of
// them): the TLP count, then per TLP its payload DW count, header DW0..DW3
// and payload DWs.
//
// As a host (+weft_host_port= names this model's PORT): the stimulus is
// non-posted requests, sent one at a time, each once the completion of the
// one before has arrived, as a root port's configuration software issues
// them. A completion with Configuration Request Retry Status (PCIe Base 6.0
// §2.3.1, status 010b) is not written down: the request goes again
// RETRY_CYCLES later, and `retries` counts it. A request left unanswered
// for COMPLETION_TIMEOUT cycles (Completion Timeout, §2.8) goes again, and
// `timeouts` counts it.
//
// A model whose PORT bit is set in +weft_links_down= (hex) never brings its
// link up, as a connector without a cable: it sends nothing, and a beat
// weft offers it is outside a ready cycle.
//
// Hard IP reconfiguration interface (683059 §4.12, an Avalon-MM slave of
// byte address and 8-bit data on reconfig_clk): holds the two bytes weft's
// link controller may touch, Bridge Control's low byte at BRIDGE_CONTROL
// and Link Control's at LINK_CONTROL, with other bits set; stalls with
// waitrequest at random; answers a read two cycles after taking it. It
// counts, in its own clock, each hot reset (Secondary Bus Reset, bit 6,
// set and then cleared, held at least MIN_HOLD cycles) and each retrain
// (a write with Retrain Link, bit 5, which reads back 0), and reports
// "ERROR" for a write that changes any other bit, a write elsewhere, a read
// while one is outstanding, or any request while PERST# is asserted.
//
// TX flow control: the model is a link partner that advertises a few
// posted and non-posted credits (PH 8, PD 80, NPH 2, NPD 4) and infinite
// completion credit, and gives back what the TLPs it takes consumed every
// RELEASE_PERIOD cycles. It reports them as the P-tile does, limits by
// tx_cdts_limit_tdm_idx (683059 §4.4.7), or with RTILE_CREDIT as the
// R-tile does, init handshake and released counts (683501 §4.3.1.2.5),
// and reports "ERROR" for any TLP it takes beyond the credit it gave.
`timescale 1ps/1ps
`default_nettype none

module weft_board_tile_model #(
    parameter SEGMENTS = 2,
    parameter DATA_BITS = 512,
    parameter HVALID = 0,
    parameter RX_READY_LATENCY = 27,
    parameter TX_READY_LATENCY = 3,
    parameter PORT = 0,
    parameter OWN_CLOCK = 1,
    parameter BRIDGE_CONTROL = 'h3e,
    parameter LINK_CONTROL = 'h80,
    parameter MIN_HOLD = 1,
    parameter RTILE_CREDIT = 0,
    parameter RELEASE_PERIOD = 150
) (
    input wire clk_in,
    input wire refclk0,
    input wire refclk1,
    input wire pin_perst_n,
    input wire ninit_done,
    output reg coreclk = 1'b0,
    output reg reset_status_n = 1'b0,
    output wire link_up,
    input wire rx_ready,
    output reg [SEGMENTS-1:0] rx_sop = 0,
    output reg [SEGMENTS-1:0] rx_eop = 0,
    output reg [SEGMENTS-1:0] rx_valid = 0,
    output reg [SEGMENTS-1:0] rx_dvalid = 0,
    output reg [SEGMENTS-1:0] rx_hvalid = 0,
    output reg [DATA_BITS-1:0] rx_data = 0,
    output reg [3*SEGMENTS-1:0] rx_empty = 0,
    output reg [128*SEGMENTS-1:0] rx_hdr = 0,
    output reg tx_ready = 1'b0,
    input wire [SEGMENTS-1:0] tx_sop,
    input wire [SEGMENTS-1:0] tx_eop,
    input wire [SEGMENTS-1:0] tx_valid,
    input wire [SEGMENTS-1:0] tx_dvalid,
    input wire [SEGMENTS-1:0] tx_hvalid,
    input wire [SEGMENTS-1:0] tx_err,
    input wire [DATA_BITS-1:0] tx_data,
    input wire [128*SEGMENTS-1:0] tx_hdr,
    input wire reconfig_clk,
    input wire reconfig_rst_n,
    input wire [20:0] reconfig_address,
    input wire [31:0] reconfig_address_wide,
    input wire reconfig_read,
    input wire reconfig_write,
    input wire [7:0] reconfig_writedata,
    output reg [7:0] reconfig_readdata = 8'd0,
    output reg reconfig_readdatavalid = 1'b0,
    output reg reconfig_waitrequest = 1'b1,
    output reg [15:0] tx_cdts_limit = 16'd0,
    output reg [2:0] tx_cdts_limit_tdm_idx = 3'd0,
    output reg [2:0] tx_hcrdt_init = 3'd0,
    input wire [2:0] tx_hcrdt_init_ack,
    output reg [2:0] tx_hcrdt_update = 3'd0,
    output reg [5:0] tx_hcrdt_update_cnt = 6'd0,
    output reg [2:0] tx_dcrdt_init = 3'd0,
    input wire [2:0] tx_dcrdt_init_ack,
    output reg [2:0] tx_dcrdt_update = 3'd0,
    output reg [11:0] tx_dcrdt_update_cnt = 12'd0
);
    localparam DWS = DATA_BITS / 32;
    localparam SEGMENT_DWS = DWS / SEGMENTS;
    localparam STIM_WORDS = 1 << 18;

    // The tile's application clock: this model's own, or (for a later core
    // of a bifurcated tile) the first core's, given as clk_in.
    wire clk = OWN_CLOCK ? coreclk : clk_in;
    assign link_up = reset_status_n;

    reg [31:0] stim [0:STIM_WORDS-1];
    integer half_ps;
    integer seed;
    reg [8*512-1:0] tlps_file;
    reg [8*512-1:0] out_dir;
    reg [8*600-1:0] out_name;
    integer out;
    integer tlp_count;
    integer tlp_words;
    integer errors = 0;
    reg done = 1'b0;
    integer host_port;
    reg host = 1'b0;
    reg [31:0] links_down = 0;

    initial begin
        if (!$value$plusargs("weft_hip_half_ps=%d", half_ps)) half_ps = 2000;
        if (!$value$plusargs("weft_seed=%d", seed)) seed = 1;
        seed = seed * 7919 + PORT * 104729 + 1;
        if (!$value$plusargs("weft_tlps=%s", tlps_file)) begin
            $display("ERROR: port %0d: no +weft_tlps= file", PORT);
            tlp_count = 0;
        end else begin
            if (!$value$plusargs("weft_tlp_words=%d", tlp_words)) tlp_words = STIM_WORDS;
            $readmemh(tlps_file, stim, 0, tlp_words - 1);
            tlp_count = stim[0];
        end
        if ($value$plusargs("weft_host_port=%d", host_port)) host = host_port == PORT;
        if (!$value$plusargs("weft_links_down=%h", links_down)) links_down = 0;
        done = links_down[PORT];
        if (!$value$plusargs("weft_out=%s", out_dir)) out_dir = ".";
        $sformat(out_name, "%0s/port%0d.hex", out_dir, PORT);
        out = $fopen(out_name, "w");
        if (OWN_CLOCK) forever #(half_ps) coreclk = ~coreclk;
    end

    // Reset: the user side leaves reset 16 cycles after PERST# rises.
    integer settle = 0;
    always @(posedge clk) begin
        if (!pin_perst_n || links_down[PORT]) begin
            settle <= 0;
            reset_status_n <= 1'b0;
        end else if (settle < 16) begin
            settle <= settle + 1;
        end else begin
            reset_status_n <= 1'b1;
        end
    end

    // ---- RX: the TLPs of the stimulus file, under rx_ready's latency ----
    // Nothing is sent for QUIET_CYCLES after the link comes up, as no link
    // partner sends at once: a host waits 100 ms after link training
    // (PCIe Base 6.0 §6.6.1), an endpoint until it is enabled, and weft's
    // wrapper gives no credit for a while after flow control starts
    // (credit.v); what weft sent back before its clock learned the link
    // was up would be discarded.
    localparam QUIET_CYCLES = 1024;
    integer quiet = 0;
    always @(posedge clk) quiet <= !reset_status_n ? 0 : quiet < QUIET_CYCLES ? quiet + 1 : quiet;
    reg [RX_READY_LATENCY:0] rx_ready_seen = 0;
    integer rx_tlp = 0;
    integer rx_at = 1;
    // As a host: requests sent, where the last one began, the retries
    // taken back, and the cycles left before the next request may go.
    localparam RETRY_CYCLES = 1000;
    localparam COMPLETION_TIMEOUT = 1000000;
    integer requests_sent = 0;
    integer request_at = 1;
    integer retries_taken = 0;
    integer host_wait = 0;
    integer host_silence = 0;
    integer timeouts = 0;
    // TLPs TX took, and of them the retries (as a host).
    integer received = 0;
    integer retries = 0;
    integer rx_beat = 0;
    integer sent_dws;
    integer used;
    integer last_segment;
    integer i;
    integer payload_dws;
    reg last_beat;
    reg [SEGMENTS-1:0] sop_n, eop_n, valid_n, dvalid_n, hvalid_n;
    reg [DATA_BITS-1:0] data_n;
    reg [3*SEGMENTS-1:0] empty_n;
    reg [128*SEGMENTS-1:0] hdr_n;

    always @(posedge clk) begin
        rx_ready_seen <= {rx_ready_seen[RX_READY_LATENCY-1:0], rx_ready && reset_status_n};
        sop_n = 0; eop_n = 0; valid_n = 0; dvalid_n = 0; hvalid_n = 0;
        data_n = rx_data; empty_n = 0; hdr_n = 0;
        if (host_wait > 0) host_wait <= host_wait - 1;
        host_silence <= host && rx_beat == 0 && received != requests_sent ? host_silence + 1 : 0;
        if (host && host_silence == COMPLETION_TIMEOUT) begin
            // No completion came: the request goes again.
            timeouts <= timeouts + 1;
            requests_sent <= requests_sent - 1;
            rx_tlp <= rx_tlp - 1;
            rx_at <= request_at;
        end else if (host && retries != retries_taken) begin
            // The last request's answer was a retry: it goes again.
            retries_taken <= retries_taken + 1;
            rx_tlp <= rx_tlp - 1;
            rx_at <= request_at;
            host_wait <= RETRY_CYCLES;
        end else if (reset_status_n && quiet == QUIET_CYCLES && rx_tlp < tlp_count && rx_ready_seen[RX_READY_LATENCY-1]
                && (!host || rx_beat != 0 || (received == requests_sent && host_wait == 0))
                && ($random(seed) & 3) != 0) begin
            if (rx_beat == 0) begin
                request_at <= rx_at;
                requests_sent <= requests_sent + 1;
            end
            payload_dws = stim[rx_at];
            sent_dws = rx_beat * DWS;
            last_beat = payload_dws <= sent_dws + DWS;
            used = last_beat ? payload_dws - sent_dws : DWS;
            last_segment = used == 0 ? 0 : (used - 1) / SEGMENT_DWS;
            for (i = 0; i < DWS; i = i + 1)
                data_n[32*i +: 32] = i < used ? stim[rx_at + 5 + sent_dws + i] : 32'hbad0bad0;
            for (i = 0; i < SEGMENTS; i = i + 1) begin
                valid_n[i] = !last_beat || i <= last_segment;
                dvalid_n[i] = used > SEGMENT_DWS * i;
            end
            sop_n[0] = rx_beat == 0;
            hvalid_n[0] = rx_beat == 0;
            if (last_beat) begin
                eop_n[last_segment] = 1'b1;
                empty_n[3*last_segment +: 3] = used == 0 ? 0 : SEGMENT_DWS * (last_segment + 1) - used;
            end
            if (rx_beat == 0)
                hdr_n[127:0] = {stim[rx_at + 1], stim[rx_at + 2], stim[rx_at + 3], stim[rx_at + 4]};
            if (last_beat) begin
                rx_tlp <= rx_tlp + 1;
                rx_at <= rx_at + 5 + payload_dws;
                rx_beat <= 0;
            end else begin
                rx_beat <= rx_beat + 1;
            end
        end
        rx_sop <= sop_n;
        rx_eop <= eop_n;
        rx_valid <= valid_n;
        rx_dvalid <= dvalid_n;
        rx_hvalid <= hvalid_n;
        rx_data <= data_n;
        rx_empty <= empty_n;
        rx_hdr <= hdr_n;
    end

    // ---- TX: takes TLPs in ready cycles and checks the interface's rules ----
    reg [TX_READY_LATENCY:0] tx_ready_seen = 0;
    reg in_tlp = 1'b0;
    reg [31:0] hdr_words [0:3];
    reg [31:0] got [0:1023 + DWS];
    integer expected_dws;
    integer got_dws;
    integer j;
    integer k;
    reg ready_cycle;
    reg beat;
    reg [SEGMENTS-1:0] carries;

    always @(posedge clk) begin
        tx_ready <= reset_status_n && ($random(seed) % 10 < 7);
        tx_ready_seen <= {tx_ready_seen[TX_READY_LATENCY-1:0], tx_ready};
        ready_cycle = TX_READY_LATENCY == 0 ? tx_ready : tx_ready_seen[TX_READY_LATENCY-1];
        carries = HVALID ? (tx_dvalid | tx_hvalid) : tx_valid;
        beat = |carries;
        if (|tx_err) begin
            $display("ERROR: port %0d: tx_st_err set", PORT);
            errors = errors + 1;
        end
        if (beat && !ready_cycle) begin
            $display("ERROR: port %0d: TX beat outside a ready cycle at %0t", PORT, $time);
            errors = errors + 1;
        end
        if (in_tlp && ready_cycle && !beat) begin
            $display("ERROR: port %0d: gap inside a TLP on a ready cycle at %0t", PORT, $time);
            errors = errors + 1;
        end
        if (beat && ready_cycle) begin
            if (tx_sop[0] && (!HVALID || tx_hvalid[0])) begin
                if (in_tlp) begin
                    $display("ERROR: port %0d: TLP starts inside a TLP", PORT);
                    errors = errors + 1;
                end
                hdr_words[0] = tx_hdr[127:96];
                hdr_words[1] = tx_hdr[95:64];
                hdr_words[2] = tx_hdr[63:32];
                hdr_words[3] = tx_hdr[31:0];
                expected_dws = !tx_hdr[126] ? 0 : (tx_hdr[105:96] == 0 ? 1024 : tx_hdr[105:96]);
                got_dws = 0;
                in_tlp = 1'b1;
                take_credit(tx_hdr[127:96]);
            end else if (!in_tlp || |tx_sop) begin
                $display("ERROR: port %0d: TX beat without a TLP start in segment 0", PORT);
                errors = errors + 1;
            end
            for (j = 0; j < SEGMENTS; j = j + 1) begin
                if (in_tlp && (HVALID ? tx_dvalid[j] : tx_valid[j]))
                    for (k = 0; k < SEGMENT_DWS; k = k + 1) begin
                        if (got_dws < expected_dws)
                            got[got_dws] = tx_data[32*(j*SEGMENT_DWS + k) +: 32];
                        got_dws = got_dws + 1;
                    end
                if (in_tlp && tx_eop[j]) begin
                    // The end segment holds the last DW the header's Length asks for.
                    if (got_dws < expected_dws || got_dws >= expected_dws + SEGMENT_DWS
                            + (expected_dws == 0 && !HVALID ? 1 : 0)) begin
                        $display("ERROR: port %0d: TLP ends in segment %0d after %0d DWs, Length asks %0d",
                                 PORT, j, got_dws, expected_dws);
                        errors = errors + 1;
                    end
                    if (host && hdr_words[0][28:24] == 5'b01010 && hdr_words[1][15:13] == 3'b010) begin
                        retries = retries + 1;
                    end else begin
                        $fwrite(out, "%08x %08x %08x %08x %0d", hdr_words[0], hdr_words[1],
                                hdr_words[2], hdr_words[3], expected_dws);
                        for (k = 0; k < expected_dws; k = k + 1) $fwrite(out, " %08x", got[k]);
                        $fwrite(out, "\n");
                        $fflush(out);
                    end
                    in_tlp = 1'b0;
                    received = received + 1;
                    if (received - retries == tlp_count) done <= 1'b1;
                end
            end
        end
    end

    // ---- Hard IP reconfiguration: Bridge Control and Link Control ----
    localparam [7:0] BRIDGE_CONTROL_RESET = 8'h13;
    localparam [7:0] LINK_CONTROL_RESET = 8'h43;
    localparam [7:0] SECONDARY_BUS_RESET = 8'h40;
    localparam [7:0] RETRAIN_LINK = 8'h20;
    // Whichever of the two address ports the tile has; the other is tied 0.
    wire [31:0] reconfig_at = {11'd0, reconfig_address} | reconfig_address_wide;
    reg [7:0] bridge_control = BRIDGE_CONTROL_RESET;
    reg [7:0] link_control = LINK_CONTROL_RESET;
    integer hot_resets = 0;
    integer retrains = 0;
    integer reconfig_cycle = 0;
    integer reset_since = 0;
    integer read_due = 0;
    reg [31:0] read_at = 0;
    wire reconfig_take_read = reconfig_read && !reconfig_waitrequest;
    wire reconfig_take_write = reconfig_write && !reconfig_waitrequest;

    always @(posedge reconfig_clk) begin
        reconfig_cycle <= reconfig_cycle + 1;
        reconfig_waitrequest <= ($random(seed) & 3) == 0;
        reconfig_readdatavalid <= 1'b0;
        if ((reconfig_read || reconfig_write) && !pin_perst_n) begin
            $display("ERROR: port %0d: reconfiguration request while PERST# is asserted", PORT);
            errors = errors + 1;
        end
        if (reconfig_read && reconfig_write) begin
            $display("ERROR: port %0d: reconfiguration read and write at once", PORT);
            errors = errors + 1;
        end
        if (read_due > 0) begin
            read_due <= read_due - 1;
            if (read_due == 1) begin
                reconfig_readdatavalid <= 1'b1;
                reconfig_readdata <= read_at == BRIDGE_CONTROL ? bridge_control
                    : read_at == LINK_CONTROL ? link_control : 8'hee;
            end
        end
        if (reconfig_take_read) begin
            if (read_due > 0) begin
                $display("ERROR: port %0d: reconfiguration read while one is outstanding", PORT);
                errors = errors + 1;
            end
            read_at <= reconfig_at;
            read_due <= 2;
        end
        if (reconfig_take_write) begin
            if (reconfig_at == BRIDGE_CONTROL) begin
                if ((reconfig_writedata ^ bridge_control) & ~SECONDARY_BUS_RESET) begin
                    $display("ERROR: port %0d: Bridge Control write %02x changes more than Secondary Bus Reset (%02x)",
                             PORT, reconfig_writedata, bridge_control);
                    errors = errors + 1;
                end
                if (reconfig_writedata[6] && !bridge_control[6]) reset_since <= reconfig_cycle;
                if (!reconfig_writedata[6] && bridge_control[6]) begin
                    if (reconfig_cycle - reset_since < MIN_HOLD) begin
                        $display("ERROR: port %0d: Secondary Bus Reset held %0d cycles, less than %0d",
                                 PORT, reconfig_cycle - reset_since, MIN_HOLD);
                        errors = errors + 1;
                    end
                    hot_resets = hot_resets + 1;
                end
                bridge_control <= reconfig_writedata;
            end else if (reconfig_at == LINK_CONTROL) begin
                if ((reconfig_writedata ^ link_control) & ~RETRAIN_LINK) begin
                    $display("ERROR: port %0d: Link Control write %02x changes more than Retrain Link (%02x)",
                             PORT, reconfig_writedata, link_control);
                    errors = errors + 1;
                end
                if (reconfig_writedata[5]) retrains = retrains + 1;
                link_control <= reconfig_writedata & ~RETRAIN_LINK;
            end else begin
                $display("ERROR: port %0d: reconfiguration write to %0x", PORT, reconfig_at);
                errors = errors + 1;
            end
        end
    end

    // ---- TX flow control: the credit this partner gives and takes back ----
    // Counters: 0 PH, 1 NPH, 2 CPLH, 3 PD, 4 NPD, 5 CPLD; 0 advertised is infinite.
    reg [15:0] advertised [0:5];
    reg [15:0] granted [0:5];   // told to the IP's user so far (the limit)
    reg [15:0] to_grant [0:5];  // given back, not yet told
    reg [15:0] consumed [0:5];  // taken by the TLPs received
    reg [15:0] returned [0:5];  // consumed and given back
    initial begin
        advertised[0] = 8; advertised[1] = 2; advertised[2] = 0;
        advertised[3] = 80; advertised[4] = 4; advertised[5] = 0;
    end
    integer c;
    integer release_timer = 0;
    reg credit_started = 1'b0;
    reg [1:0] init_hold = 2'd0;
    reg in_init = 1'b0;
    reg init_done = 1'b0;

    // The counters a TLP takes: its class's header, and its data in 4 DW units.
    task take_credit(input [31:0] dw0);
        integer hc;
        integer dc;
        integer credits;
        begin
            if (dw0[28:24] == 5'b01010 || dw0[28:24] == 5'b01011) hc = 2;
            else if ((dw0[28:24] == 5'b00000 && dw0[30]) || dw0[28:27] == 2'b10) hc = 0;
            else hc = 1;
            dc = hc + 3;
            credits = !dw0[30] ? 0 : ((dw0[9:0] == 0 ? 1024 : dw0[9:0]) + 3) / 4;
            if (advertised[hc] != 0 && granted[hc] - consumed[hc] < 1) begin
                $display("ERROR: port %0d: a TLP of class %0d with no header credit left at %0t", PORT, hc, $time);
                errors = errors + 1;
            end
            if (advertised[dc] != 0 && credits > 0
                    && ((granted[dc] - consumed[dc]) & 16'hffff) < credits) begin
                $display("ERROR: port %0d: a TLP of class %0d needs %0d data credits, %0d left at %0t",
                         PORT, hc, credits, (granted[dc] - consumed[dc]) & 16'hffff, $time);
                errors = errors + 1;
            end
            consumed[hc] = consumed[hc] + 1;
            consumed[dc] = consumed[dc] + credits;
        end
    endtask

    integer idx = 0;
    integer cnt;
    always @(posedge clk) begin
        if (!reset_status_n) begin
            for (c = 0; c < 6; c = c + 1) begin
                granted[c] = 0;
                to_grant[c] = 0;
                consumed[c] = 0;
                returned[c] = 0;
            end
            credit_started <= 1'b0;
            in_init <= 1'b0;
            init_done <= 1'b0;
            tx_hcrdt_init <= 3'd0;
            tx_dcrdt_init <= 3'd0;
        end else begin
            if (!credit_started) begin
                credit_started <= 1'b1;
                for (c = 0; c < 6; c = c + 1) to_grant[c] = advertised[c];
            end
            release_timer = release_timer + 1;
            if (release_timer >= RELEASE_PERIOD) begin
                release_timer = 0;
                for (c = 0; c < 6; c = c + 1) begin
                    to_grant[c] = to_grant[c] + (consumed[c] - returned[c]);
                    returned[c] = consumed[c];
                end
            end
            tx_hcrdt_update <= 3'd0;
            tx_dcrdt_update <= 3'd0;
            tx_hcrdt_update_cnt <= 6'd0;
            tx_dcrdt_update_cnt <= 12'd0;
            if (!RTILE_CREDIT) begin
                // P-tile: limits by time-division, every counter in turn.
                for (c = 0; c < 6; c = c + 1) begin
                    granted[c] = granted[c] + to_grant[c];
                    to_grant[c] = 0;
                end
                idx = idx == 2 ? 4 : idx == 6 ? 0 : idx + 1;
                tx_cdts_limit_tdm_idx <= idx;
                c = idx >= 4 ? idx - 1 : idx;
                tx_cdts_limit <= advertised[c] == 0 ? 16'd0 : granted[c];
            end else if (credit_started && !init_done) begin
                // R-tile: initialization, then the advertised credit in
                // releases of at most 3 headers or 15 data credits a cycle.
                tx_hcrdt_init <= 3'b111;
                tx_dcrdt_init <= 3'b111;
                if (!in_init && tx_hcrdt_init == 3'b111 && tx_hcrdt_init_ack == 3'b111
                        && tx_dcrdt_init_ack == 3'b111) begin
                    in_init <= 1'b1;
                    for (c = 0; c < 6; c = c + 1) if (advertised[c] == 0) begin
                        if (c < 3) tx_hcrdt_update[c] <= 1'b1; else tx_dcrdt_update[c - 3] <= 1'b1;
                    end
                end else if (in_init) begin
                    if (to_grant[0] + to_grant[1] + to_grant[3] + to_grant[4] == 0) begin
                        init_hold <= init_hold + 1;
                        if (init_hold == 2'd3) begin
                            tx_hcrdt_init <= 3'd0;
                            tx_dcrdt_init <= 3'd0;
                            init_done <= 1'b1;
                        end
                    end
                end
            end
            if (RTILE_CREDIT && in_init) begin
                for (c = 0; c < 6; c = c + 1) if (advertised[c] != 0 && to_grant[c] != 0) begin
                    cnt = c < 3 ? (to_grant[c] > 3 ? 3 : to_grant[c]) : (to_grant[c] > 15 ? 15 : to_grant[c]);
                    if (c < 3) begin
                        tx_hcrdt_update[c] <= 1'b1;
                        tx_hcrdt_update_cnt[2*c +: 2] <= cnt;
                    end else begin
                        tx_dcrdt_update[c - 3] <= 1'b1;
                        tx_dcrdt_update_cnt[4*(c - 3) +: 4] <= cnt;
                    end
                    granted[c] = granted[c] + cnt;
                    to_grant[c] = to_grant[c] - cnt;
                end
            end
        end
    end
endmodule

`default_nettype wire
