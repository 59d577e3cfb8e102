// The link partner's transmit credit, from a hard IP's credit interface to
// weft_chip's egress_credit_* inputs, for weft's board wrappers.
//
// weft's egress starts a TLP of a class only while egress_credit says the
// partner has a header credit and data credits for the largest TLP of that
// class, and reports each TLP it commits on egress_consume/_dws (weft-hdl
// SwitchCore, PCIe Base 6.0 §2.6.1). The TX FIFO between the egress and
// the hard IP holds TLPs the IP has not yet seen, so credit the IP reports
// does not cover them. The wrapper therefore keeps the transmitter's
// side of flow control itself, on weft's clock (weft_board_tx_credit): the
// credits consumed, counted as weft commits TLPs, before the FIFO, against
// the credit limits the hard IP reports, carried over from its clock
// (weft_board_cdc_snapshot, cdc.v). Every TLP in the FIFO then has its
// credit already, so the IP never holds one for lack of credit, a TLP of a
// class without credit never enters the FIFO, and a posted TLP is never
// stuck behind a non-posted one waiting for credit (§2.4.1, Table 2-39:
// posted requests must be able to pass non-posted ones).
//
// A class has data credit while the partner can take the largest TLP weft
// may send of it (the MAX_* parameters: a switching slot's 1 KiB of
// payload), or, for a partner whose whole advertisement is smaller, that
// advertisement: such a partner receives no larger TLP anyway (§2.6.1,
// Minimum Initial Flow Control Advertisements: a receiver advertises at
// least its Max_Payload_Size), and waiting for more credit than it ever
// gives would stop the class for good.
//
// A TLP weft's egress ends void (`nullify` on its last beat, which the
// wrapper turns into the hard IP's nullification: tx_st_err, discontinue)
// is discarded by the partner's receiver, which counts credit only for the
// valid TLPs it receives (§2.6.1.2 CREDITS_RECEIVED, §3.6.2.1 nullified
// TLPs): it never gives that credit back. Where weft counts consumption
// against the partner's own limits (REFUND_VOID), such a TLP's credit is
// therefore taken off the consumed counts again as its last beat leaves
// weft, or every void TLP would lose its credit for good and enough of
// them would stop the class.
//
// weft's egress also gives back, on refund/_dws, the credit of a TLP it
// reported on consume and then discarded before the TX FIFO (a host port's
// drop, an INTx message that changes no wire): the partner never sees it.
//
// Counters are 16 bits wide and compared modulo 2^16, as §2.6.1.2's
// credit-limit arithmetic does with its 8- and 12-bit (scaled: 12- and
// 16-bit) fields; the copy on weft's clock lags the IP's, which only ever
// makes weft see less credit than there is.
`default_nettype none

// The limits, in the order every module here packs them: posted header,
// non-posted header, completion header, posted data, non-posted data,
// completion data (16 bits each, the first least significant); a bit per
// counter for a partner that advertised infinite credit (§2.6.1: an
// initial advertisement of 0).

// On weft's clock: credit per class from the limits and what weft consumed.
//
// A link whose flow control is not up (the link down, or not yet
// initialized: `up` low) has no partner to give credit, and waiting for
// one would hold weft's TLPs for it in the switching core's queues, stall
// every ingress whose TLPs queue behind them, and keep the soft core's
// injector, which sends one TLP at a time to any port, waiting for good.
// PCIe Base 6.0 §2.9.1 has a Port discard what it is given to send while
// its link is DL_Down. So while `up` is low every class has credit, and
// the TLPs weft commits then leave the FIFO tagged as not counted, for
// weft_board_tx_gate to discard on the IP's side.
//
// Flow control starts again from the new limits each time `up` rises, or
// `epoch` (weft_board_tx_gate's count of flow control starts, carried
// over with the limits) changes under it (§2.6.1.1): the consumed counts
// are cleared, and no class has credit for SETTLE cycles, so that every
// TLP committed while the link was down has entered the FIFO, tagged not
// counted, before the first one counted against the new limits does. A
// TLP committed while the link was up leaves tagged `counted`, with the
// flow control start (`counted_epoch`) its credit was counted against;
// weft_board_tx_gate sends it only under that same start.
module weft_board_tx_credit #(
    parameter MAX_POSTED_DATA = 64,
    parameter MAX_NON_POSTED_DATA = 2,
    parameter MAX_COMPLETION_DATA = 64,
    // 1: a void TLP's credit is given back as it leaves (see above).
    parameter REFUND_VOID = 1,
    // Cycles between flow control starting and the first credit: more than
    // a committed TLP takes to reach the FIFO and the FIFO to drain through
    // weft_board_tx_gate, which discards at a beat a cycle of the IP's
    // clock what it holds of a link that went down.
    parameter SETTLE = 1024
) (
    input wire clk,
    input wire rst,
    input wire up,
    input wire epoch,
    input wire [95:0] limit,
    input wire [5:0] infinite,
    input wire [2:0] consume,
    input wire [10:0] consume_dws,
    // A TLP reported on consume that weft discarded: its credit back.
    input wire [2:0] refund,
    input wire [10:0] refund_dws,
    // weft's egress stream as it leaves for the TX FIFO: a beat passes
    // (`sent`), its sop, eop and nullify, and header DW0 (read at sop).
    input wire sent,
    input wire sent_sop,
    input wire sent_eop,
    input wire sent_nullify,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [31:0] sent_dw0,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [2:0] credit,
    // The tag of a TLP entering the FIFO now: its credit was counted
    // against the limits of flow control start `counted_epoch`.
    output reg counted = 1'b0,
    output reg counted_epoch = 1'b0
);
    reg [15:0] consumed [0:5];
    reg [10:0] settling = 11'd0;
    wire started = up && !rst && epoch == counted_epoch;
    always @(posedge clk) begin
        if (!started) begin
            counted <= 1'b0;
            counted_epoch <= epoch;
            settling <= 11'd0;
        end else if (!counted) begin
            settling <= settling + 11'd1;
            if (settling == SETTLE[10:0] - 11'd1) counted <= 1'b1;
        end
    end
    // The data credits advertised at flow control initialization: the
    // limits while flow control settles, before anything is consumed
    // (§2.6.1.1).
    reg [15:0] advertised [0:2];
    // Data credits of a TLP of `dws` DWs: a credit is 4 DW (§2.6.1), a
    // Length of 0 with data is 1024 DW, which weft reports as 1024.
    function automatic [15:0] data_credits(input [10:0] dws);
        data_credits = {7'd0, dws[10:2]} + {15'd0, |dws[1:0]};
    endfunction

    // The class (bit 0 posted, 1 non-posted, 2 completion) and data length
    // of the TLP leaving, from its DW0 (§2.2.1, Table 2-3; §2.6.1), held
    // from its first beat to its last. `leaving_counted` says its credit
    // was consumed since flow control last started: a TLP begun before the
    // link went down has nothing to give back.
    /* verilator lint_off UNUSEDSIGNAL */
    function automatic [2:0] class_of(input [31:0] dw0);
        if (dw0[28:24] == 5'b01010 || dw0[28:24] == 5'b01011) class_of = 3'b100;
        else if ((dw0[28:24] == 5'b00000 && dw0[30]) || dw0[28:27] == 2'b10) class_of = 3'b001;
        else class_of = 3'b010;
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
    reg [2:0] leaving_class = 3'd0;
    reg [10:0] leaving_dws = 11'd0;
    reg leaving_counted = 1'b0;
    wire [2:0] sent_class = sent_sop ? class_of(sent_dw0) : leaving_class;
    wire [10:0] sent_dws = !sent_sop ? leaving_dws
        : !sent_dw0[30] ? 11'd0 : sent_dw0[9:0] == 10'd0 ? 11'd1024 : {1'b0, sent_dw0[9:0]};
    wire sent_counted = (sent_sop && counted) || leaving_counted;
    wire [2:0] void_refund = REFUND_VOID != 0 && sent && sent_eop && sent_nullify && sent_counted
        ? sent_class : 3'd0;
    always @(posedge clk) begin
        if (sent && sent_sop) begin
            leaving_class <= class_of(sent_dw0);
            leaving_dws <= sent_dws;
        end
        if (!counted) leaving_counted <= 1'b0;
        else if (sent && sent_sop) leaving_counted <= 1'b1;
    end

    integer i;
    always @(posedge clk) begin
        for (i = 0; i < 3; i = i + 1) begin
            if (!counted) begin
                advertised[i] <= limit[16*(i + 3) +: 16];
                consumed[i] <= 16'd0;
                consumed[i + 3] <= 16'd0;
            end else begin
                consumed[i] <= consumed[i] + {15'd0, consume[i]} - {15'd0, refund[i]}
                    - {15'd0, void_refund[i]};
                consumed[i + 3] <= consumed[i + 3]
                    + (consume[i] ? data_credits(consume_dws) : 16'd0)
                    - (refund[i] ? data_credits(refund_dws) : 16'd0)
                    - (void_refund[i] ? data_credits(sent_dws) : 16'd0);
            end
        end
    end

    // Credits available: the limit less what was consumed, none where that
    // comes out negative (a limit copied before a consumption it covers).
    function automatic [15:0] available(input [15:0] lim, input [15:0] used);
        reg [15:0] d;
        begin
            d = lim - used;
            available = d[15] ? 16'd0 : d;
        end
    endfunction

    wire [15:0] max_data [0:2];
    assign max_data[0] = MAX_POSTED_DATA;
    assign max_data[1] = MAX_NON_POSTED_DATA;
    assign max_data[2] = MAX_COMPLETION_DATA;
    genvar c;
    generate
        for (c = 0; c < 3; c = c + 1) begin : class_credit
            wire header = infinite[c] || available(limit[16*c +: 16], consumed[c]) >= 16'd1;
            wire [15:0] needed = advertised[c] < max_data[c] ? advertised[c] : max_data[c];
            wire data = infinite[c + 3]
                || available(limit[16*(c + 3) +: 16], consumed[c + 3]) >= needed;
            // §2.9.1: no flow control, nothing to wait for (see above).
            assign credit[c] = !rst && (!up || (started && counted && header && data));
        end
    endgenerate
endmodule

// On an Intel P-tile's or F-tile's application clock: the TX flow control
// interface's limits (683059 §4.4.7, 683140 §3.3.3.1): tx_cdts_limit is
// "the total number of FC credits made available by the Receiver since
// Flow Control initialization", 16 bits rolling over, one counter a cycle
// by tx_cdts_limit_tdm_idx (0 posted header, 1 non-posted header, 2
// completion header, 4 posted data, 5 non-posted data, 6 completion data).
// A counter reported 0 and never anything else was advertised infinite;
// `up` rises once every counter has been reported, and falls, everything
// forgotten, while the link is down (flow control starts again with it,
// §2.6.1.1).
module weft_board_ptile_credit (
    input wire clk,
    input wire rst,
    input wire link_up,
    input wire [15:0] cdts_limit,
    input wire [2:0] cdts_limit_tdm_idx,
    output reg [95:0] limit = 96'd0,
    output wire [5:0] infinite,
    output wire up
);
    reg [5:0] reported = 6'd0;
    reg [5:0] nonzero = 6'd0;
    // tdm index to counter: 0..2 headers, 4..6 data.
    wire [2:0] counter = cdts_limit_tdm_idx[2] ? cdts_limit_tdm_idx[1:0] + 3'd3 : {1'b0, cdts_limit_tdm_idx[1:0]};
    wire known = cdts_limit_tdm_idx[1:0] != 2'd3;
    always @(posedge clk) begin
        if (rst || !link_up) begin
            reported <= 6'd0;
            nonzero <= 6'd0;
            limit <= 96'd0;
        end else if (known) begin
            reported[counter] <= 1'b1;
            if (cdts_limit != 16'd0) nonzero[counter] <= 1'b1;
            limit[16*counter +: 16] <= cdts_limit;
        end
    end
    assign infinite = reported & ~nonzero;
    assign up = &reported;
endmodule

// On an Intel R-tile's application clock: its TX flow control interface
// releases credits rather than reporting limits (683501 §4.3.1.2.5,
// "Credit Initialization"): while *crdt_init is high the IP is
// initializing and weft acknowledges at once (*crdt_init_ack); every
// cycle *crdt_update is high adds its *crdt_update_cnt to the limit, and
// an update of 0 during initialization means the partner advertised
// infinite credit. `up` rises once every init has fallen, and falls,
// everything forgotten, while the link is down.
module weft_board_rtile_credit #(
    parameter DATA_COUNT_BITS = 4
) (
    input wire clk,
    input wire rst,
    input wire link_up,
    input wire [2:0] hcrdt_init,
    output wire [2:0] hcrdt_init_ack,
    input wire [2:0] hcrdt_update,
    input wire [5:0] hcrdt_update_cnt,
    input wire [2:0] dcrdt_init,
    output wire [2:0] dcrdt_init_ack,
    input wire [2:0] dcrdt_update,
    input wire [3*DATA_COUNT_BITS-1:0] dcrdt_update_cnt,
    output reg [95:0] limit = 96'd0,
    output reg [5:0] infinite = 6'd0,
    output wire up
);
    assign hcrdt_init_ack = hcrdt_init;
    assign dcrdt_init_ack = dcrdt_init;
    reg [5:0] initialized = 6'd0;
    reg [5:0] initializing = 6'd0;
    wire [5:0] init = {dcrdt_init, hcrdt_init};
    wire [5:0] update = {dcrdt_update, hcrdt_update};
    integer i;
    always @(posedge clk) begin
        if (rst || !link_up) begin
            initialized <= 6'd0;
            initializing <= 6'd0;
            infinite <= 6'd0;
            limit <= 96'd0;
        end else begin
            for (i = 0; i < 6; i = i + 1) begin
                initializing[i] <= init[i];
                if (initializing[i] && !init[i]) initialized[i] <= 1'b1;
                if (update[i]) begin
                    if (i < 3) begin
                        limit[16*i +: 16] <= limit[16*i +: 16] + {14'd0, hcrdt_update_cnt[2*i +: 2]};
                        if (init[i] && hcrdt_update_cnt[2*i +: 2] == 2'd0) infinite[i] <= 1'b1;
                    end else begin
                        limit[16*i +: 16] <= limit[16*i +: 16]
                            + {{(16 - DATA_COUNT_BITS){1'b0}}, dcrdt_update_cnt[DATA_COUNT_BITS*(i - 3) +: DATA_COUNT_BITS]};
                        if (init[i] && dcrdt_update_cnt[DATA_COUNT_BITS*(i - 3) +: DATA_COUNT_BITS] == 0)
                            infinite[i] <= 1'b1;
                    end
                end
            end
        end
    end
    assign up = &initialized;
endmodule

// On an UltraScale+ block's user_clk: non-posted credit for its requester
// request interface (RQ) from pcie_tfc_nph_av/pcie_tfc_npd_av, the header
// and data credit "currently available for Non-Posted requests", 0 to 15 or
// more, delayed "by two user clock cycles from the cycle in which the last
// byte of the descriptor is transferred", so "the user logic must adjust
// these values, taking into account any Non-Posted requests transmitted in
// the two previous clock cycles" (PG213, "Avoiding Head-of-Line Blocking
// for Posted Requests"). The limit is the credit of the non-posted
// requests sent before those cycles plus what is available; saturation at
// 15 only understates it. Posted requests and completions have no such
// outputs: the block holds them behind tready for lack of credit, which
// blocks nothing a PCIe rule lets pass them (no TLP may pass a posted
// request it follows, §2.4.1; and completions leave alone on CC), so they
// count as infinite. Non-posted requests are counted from the RQ
// descriptor on each TLP's first beat (Dword Count [74:64], Request Type
// [78:75]: PG213, "Requester Request Descriptor Format").
module weft_board_pcie4_credit #(
    parameter DATA_BITS = 512
) (
    input wire clk,
    input wire rst,
    input wire up_in,
    input wire [3:0] nph_av,
    input wire [3:0] npd_av,
    input wire rq_valid,
    input wire rq_ready,
    input wire rq_last,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [DATA_BITS-1:0] rq_data,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [95:0] limit,
    output wire [5:0] infinite,
    output wire up
);
    wire [3:0] req_type = rq_data[78:75];
    wire [10:0] dwords = rq_data[74:64];
    // Request types without data and posted ones (PG213 Table
    // "Transaction Types"): MRd 0000, MWr 0001, IORd 0010, IOWr 0011,
    // FetchAdd 0100, Swap 0101, CAS 0110, MRdLk 0111; messages 1100-1110.
    wire posted = req_type == 4'b0001 || req_type[3:2] == 2'b11;
    wire has_data = req_type == 4'b0011 || req_type == 4'b0100 || req_type == 4'b0101 || req_type == 4'b0110;
    // The first beat of each TLP carries its descriptor.
    reg first = 1'b1;
    always @(posedge clk) begin
        if (rst) first <= 1'b1;
        else if (rq_valid && rq_ready) first <= rq_last;
    end
    wire sent = rq_valid && rq_ready && first && !posted;
    wire [15:0] sent_data = has_data ? {7'd0, dwords[10:2]} + {15'd0, |dwords[1:0]} : 16'd0;
    reg [15:0] sent_h [0:2];
    reg [15:0] sent_d [0:2];
    integer i;
    always @(posedge clk) begin
        if (rst || !up_in) begin
            for (i = 0; i < 3; i = i + 1) begin
                sent_h[i] <= 16'd0;
                sent_d[i] <= 16'd0;
            end
        end else begin
            sent_h[0] <= sent_h[0] + {15'd0, sent};
            sent_d[0] <= sent_d[0] + (sent ? sent_data : 16'd0);
            for (i = 1; i < 3; i = i + 1) begin
                sent_h[i] <= sent_h[i - 1];
                sent_d[i] <= sent_d[i - 1];
            end
        end
    end
    // sent_h[2]: the requests sent at least two cycles before the values
    // now on nph_av/npd_av.
    assign limit = {16'd0, sent_d[2] + {12'd0, npd_av}, 16'd0, 16'd0, sent_h[2] + {12'd0, nph_av}, 16'd0};
    assign infinite = 6'b101101;
    assign up = up_in && !rst;
endmodule

// On the hard IP's clock, between the TX FIFO and the IP's TX shim: what
// weft sent for a link whose flow control is not up, or was counted
// against an earlier start of it, never reaches the link (PCIe Base 6.0
// §2.9.1, §2.6.1.1; weft_board_tx_credit has why). `epoch` counts, modulo
// 2, the rises of `up`, the IP's flow control being initialized; weft's
// side learns it with the limits. Each TLP's tag rides on its first beat:
// it is sent if its credit was counted (`in_counted`) against this start
// (`in_epoch`) and the link is up as it begins, and otherwise taken from
// the FIFO beat by beat and discarded, whatever the IP's ready says. A TLP
// already begun toward the IP when the link goes down goes on to its end,
// so the IP's interface sees whole packets, and ends nullified
// (`out_nullify` on its last beat): no receiver counts or keeps it
// (§3.6.2.1).
module weft_board_tx_gate (
    input wire clk,
    input wire rst,
    input wire up,
    output reg epoch = 1'b0,
    input wire in_valid,
    output wire in_ready,
    input wire in_eop,
    input wire in_nullify,
    input wire in_counted,
    input wire in_epoch,
    output wire out_valid,
    input wire out_ready,
    output wire out_nullify
);
    reg was_up = 1'b0;
    // Between a TLP's first and last beat: whether it goes to the IP, and
    // whether the link went down since it began.
    reg mid_tlp = 1'b0;
    reg passing = 1'b0;
    reg cut = 1'b0;
    // `epoch` flips the cycle after `up` rises: until then a tag of the
    // start before would still match it.
    wire keep = mid_tlp ? passing : in_counted && in_epoch == epoch && up && was_up;
    wire beat = in_valid && in_ready;
    assign out_valid = in_valid && keep;
    assign in_ready = keep ? out_ready : 1'b1;
    assign out_nullify = in_nullify || (in_eop && (cut || !up));
    always @(posedge clk) begin
        was_up <= up && !rst;
        if (up && !rst && !was_up) epoch <= !epoch;
        if (rst) begin
            mid_tlp <= 1'b0;
            passing <= 1'b0;
            cut <= 1'b0;
        end else begin
            if (beat) begin
                mid_tlp <= !in_eop;
                if (!mid_tlp) passing <= keep;
            end
            if (beat && in_eop) cut <= 1'b0;
            else if (mid_tlp && passing && !up) cut <= 1'b1;
        end
    end
endmodule

`default_nettype wire
