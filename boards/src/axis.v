// Shims between an UltraScale+ PCIE4/PCIE4C block's AXI4-Stream TLP
// interfaces (PG213, "Product Specification", "Port Descriptions") and
// weft's TLP stream, for weft's board wrappers.
//
// The block does not carry TLP headers: each packet starts with a
// descriptor in the first DWs of tdata (PG213 "Designing with the Core":
// 16 bytes on CQ and RQ, 12 bytes on CC and RC), first DW least
// significant, and the payload follows it at once (Dword-aligned mode).
// weft's stream carries the header beside the payload (dw0..dw3 as one
// 128-bit `hdr`, DW0 most significant) and the payload from the first
// beat, first DW most significant, `empty` counting unused DWs at the least
// significant end of the last beat (hdl/src/stream.rs). These shims
// translate header and descriptor, move the payload by the descriptor's
// DWs, and drive or read the sideband in tuser. One TLP at a time: the
// block's straddle options stay off, so a packet starts in DW 0 of a beat
// (is_sop0_ptr 0) and tlast marks its end (PG213: tlast is used when
// straddle is off, is_sop/is_eop when it is on; both are driven here).
// Where DATA_BITS is narrower than W the payload is cut at the end of the
// beat (a gearbox is still to come); a 64-bit bus, narrower than a
// descriptor, is not supported.
`default_nettype none
// Header, descriptor and tuser fields are used in part, by configuration.
/* verilator lint_off UNUSEDSIGNAL */

// weft's stream to the completer completion (REQUESTER = 0, s_axis_cc) or
// requester request (REQUESTER = 1, s_axis_rq) interface.
module weft_board_axis_tx #(
    parameter DATA_BITS = 512,
    parameter W = 512,
    parameter REQUESTER = 0,
    // PG213 port tables: s_axis_cc_tuser is 81 bits wide on the 512-bit
    // interface and 33 on the 64/128/256-bit one; s_axis_rq_tuser 137 and 62.
    parameter USER_BITS = DATA_BITS == 512 ? (REQUESTER ? 137 : 81) : (REQUESTER ? 62 : 33)
) (
    input wire clk,
    input wire rst,
    input wire valid,
    output wire ready,
    input wire sop,
    input wire eop,
    input wire nullify,
    input wire [4:0] empty,
    input wire [127:0] hdr,
    input wire [W-1:0] payload,
    output wire [DATA_BITS-1:0] tdata,
    output wire [DATA_BITS/32-1:0] tkeep,
    output wire tlast,
    output wire [USER_BITS-1:0] tuser,
    output wire tvalid,
    input wire tready
);
    localparam DWS = DATA_BITS / 32;
    // Descriptor DWs: CC 12 bytes, RQ 16 bytes (PG213 "Completer Completion
    // Descriptor Format", "Requester Request Descriptor Format").
    localparam DESC = REQUESTER ? 4 : 3;

    initial if (DESC > DWS) $display("ERROR: weft_board_axis_tx: a %0d-bit bus is narrower than a descriptor", DATA_BITS);

    // TLP header fields (PCIe Base 6.0 §2.2.1, §2.2.7, §2.2.9).
    wire [2:0] fmt = hdr[127:125];
    wire [4:0] typ = hdr[124:120];
    wire has_data = fmt[1];
    wire four_dw = fmt[0];
    wire [2:0] tc = hdr[118:116];
    wire [2:0] attr = {hdr[114], hdr[109:108]};
    wire ep = hdr[110];
    wire [1:0] at = hdr[107:106];
    wire [9:0] length = hdr[105:96];
    wire [10:0] dwords = {length == 10'd0, length};

    // The descriptor, first DW least significant, and whether the TLP can
    // go on this interface at all; one that cannot leaves voided
    // (discontinue) rather than as a wrong descriptor.
    reg [127:0] desc;
    reg desc_ok;
    reg [3:0] req_type;
    always @* begin
        desc = 128'd0;
        desc_ok = 1'b0;
        req_type = 4'd0;
        if (REQUESTER == 0) begin
            // PG213 "Completer Completion Descriptor Format" (Completer
            // Completion Descriptor Fields), from a Cpl/CplD/CplLk/CplDLk
            // header (Type 0101x).
            desc_ok = typ[4:1] == 4'b0101 && !four_dw;
            desc[6:0] = hdr[38:32];             // Lower Address (DW2[6:0])
            desc[9:8] = at;                     // Address Type
            desc[28:16] = {hdr[75:64] == 12'd0, hdr[75:64]}; // Byte Count (0 is 4096)
            desc[29] = typ[0];                  // Locked Read Completion
            desc[42:32] = has_data ? dwords : 11'd0; // Dword Count
            desc[45:43] = hdr[79:77];           // Completion Status
            desc[46] = ep;                      // Poisoned Completion
            desc[63:48] = hdr[63:48];           // Requester ID
            desc[71:64] = hdr[47:40];           // Tag
            desc[87:72] = hdr[95:80];           // Completer ID
            // Completer ID Enable: a switch relays completions with their
            // completer's ID, so the block takes the descriptor's.
            desc[88] = 1'b1;
            desc[91:89] = tc;                   // Transaction Class
            desc[94:92] = attr;                 // Attributes
        end else begin
            // PG213 "Requester Request Descriptor Format" for memory, I/O
            // and AtomicOp requests; request types as in its "Transaction
            // Types" table.
            desc_ok = 1'b1;
            case (typ)
                5'b00000: req_type = has_data ? 4'b0001 : 4'b0000; // MWr / MRd
                5'b00001: req_type = 4'b0111;                      // MRdLk
                5'b00010: req_type = has_data ? 4'b0011 : 4'b0010; // IOWr / IORd
                5'b01100: req_type = 4'b0100;                      // FetchAdd
                5'b01101: req_type = 4'b0101;                      // Swap
                5'b01110: req_type = 4'b0110;                      // CAS
                default: desc_ok = 1'b0;  // configuration requests, messages: not yet
            endcase
            desc[1:0] = at;                     // Address Type
            desc[63:2] = four_dw ? {hdr[63:32], hdr[31:2]} : {32'd0, hdr[63:34]}; // Address
            desc[74:64] = dwords;               // Dword Count
            desc[78:75] = req_type;             // Request Type
            desc[79] = ep;                      // Poisoned Request
            desc[95:80] = hdr[95:80];           // Requester ID
            desc[103:96] = hdr[79:72];          // Tag
            // Requester ID Enable: relayed requests keep their requester's ID.
            desc[120] = 1'b1;
            desc[123:121] = tc;                 // Transaction Class
            desc[126:124] = attr;               // Attributes
        end
    end
    // First and Last DW Byte Enables (header DW1[3:0] and [7:4]), carried
    // in s_axis_rq_tuser, not in the descriptor.
    wire [3:0] first_be = hdr[67:64];
    wire [3:0] last_be = hdr[71:68];

    // The payload on the bus and the DWs of it this beat fills (beat.v).
    wire [DATA_BITS-1:0] pbus;
    wire [31:0] used;
    weft_board_beat_fit #(.DATA_BITS(DATA_BITS), .W(W)) fit (
        .payload(payload), .sop(sop), .eop(eop), .has_data(has_data), .empty(empty),
        .bus(pbus), .used(used)
    );
    genvar i;

    // The last DESC payload DWs of a beat go out at the start of the next
    // one; a TLP whose last beat does not fit beside them takes one more
    // beat (`flush`), in which weft's stream waits.
    reg [32*DESC-1:0] carry = 0;
    reg flush = 1'b0;
    reg [5:0] flush_dws = 6'd0;
    reg flush_void = 1'b0;
    reg bad = 1'b0;  // the TLP in flight cannot go on this interface

    wire bad_now = sop ? !desc_ok : bad;
    integer total;
    always @* total = DESC + used;
    wire last_here = eop && total <= DWS;

    wire out_sop = !flush && sop;
    wire out_last = flush || last_here;
    wire out_void = flush ? flush_void : (last_here && (nullify || bad_now));
    wire [5:0] out_dws = flush ? flush_dws : (total > DWS ? DWS : total[5:0]);
    wire [3:0] eop_ptr = out_last ? out_dws[3:0] - 4'd1 : 4'd0;

    generate
        for (i = 0; i < DWS; i = i + 1) begin : out
            if (i < DESC) begin : head
                assign tdata[32*i +: 32] = flush ? carry[32*i +: 32]
                    : sop ? desc[32*i +: 32] : carry[32*i +: 32];
            end else begin : body
                assign tdata[32*i +: 32] = flush ? 32'd0 : pbus[32*(i-DESC) +: 32];
            end
            assign tkeep[i] = i < out_dws;
        end
    endgenerate

    assign tvalid = flush || valid;
    assign ready = tready && !flush;
    assign tlast = out_last;

    // tuser (PG213 "Sideband Signal Descriptions in s_axis_cc_tuser" and
    // "... in s_axis_rq_tuser", 512-bit and 64/128/256-bit tables). Parity,
    // TPH and sequence numbers stay 0; addr_offset is 0 in Dword-aligned mode.
    generate
        if (DATA_BITS == 512 && REQUESTER == 0) begin : cc512
            assign tuser[1:0] = {1'b0, out_sop};    // is_sop[1:0]
            assign tuser[3:2] = 2'd0;               // is_sop0_ptr: DW 0
            assign tuser[5:4] = 2'd0;               // is_sop1_ptr
            assign tuser[7:6] = {1'b0, out_last};   // is_eop[1:0]
            assign tuser[11:8] = eop_ptr;           // is_eop0_ptr: last DW of the TLP
            assign tuser[15:12] = 4'd0;             // is_eop1_ptr
            assign tuser[16] = out_void;            // discontinue
            assign tuser[USER_BITS-1:17] = 0;       // parity
        end else if (DATA_BITS == 512) begin : rq512
            assign tuser[3:0] = out_sop ? first_be : 4'd0;   // first_be[3:0]
            assign tuser[7:4] = 4'd0;                        // first_be[7:4]
            assign tuser[11:8] = out_sop ? last_be : 4'd0;   // last_be[3:0]
            assign tuser[15:12] = 4'd0;                      // last_be[7:4]
            assign tuser[19:16] = 4'd0;                      // addr_offset
            assign tuser[21:20] = {1'b0, out_sop};           // is_sop[1:0]
            assign tuser[23:22] = 2'd0;                      // is_sop0_ptr
            assign tuser[25:24] = 2'd0;                      // is_sop1_ptr
            assign tuser[27:26] = {1'b0, out_last};          // is_eop[1:0]
            assign tuser[31:28] = eop_ptr;                   // is_eop0_ptr
            assign tuser[35:32] = 4'd0;                      // is_eop1_ptr
            assign tuser[36] = out_void;                     // discontinue
            assign tuser[USER_BITS-1:37] = 0;                // TPH, seq_num, parity
        end else if (REQUESTER == 0) begin : cc
            assign tuser[0] = out_void;                      // discontinue
            assign tuser[USER_BITS-1:1] = 0;                 // parity
        end else begin : rq
            assign tuser[3:0] = out_sop ? first_be : 4'd0;   // first_be
            assign tuser[7:4] = out_sop ? last_be : 4'd0;    // last_be
            assign tuser[10:8] = 3'd0;                       // addr_offset
            assign tuser[11] = out_void;                     // discontinue
            assign tuser[USER_BITS-1:12] = 0;                // TPH, seq_num, parity
        end
    endgenerate

    always @(posedge clk) begin
        if (rst) begin
            flush <= 1'b0;
            bad <= 1'b0;
        end else if (tready && flush) begin
            flush <= 1'b0;
        end else if (valid && ready) begin
            carry <= pbus[DATA_BITS-1 -: 32*DESC];
            bad <= bad_now;
            if (eop && !last_here) begin
                flush <= 1'b1;
                flush_dws <= total[5:0] - DWS[5:0];
                flush_void <= nullify || bad_now;
            end
        end
    end
endmodule

// The completer request (REQUESTER = 0, m_axis_cq) or requester
// completion (REQUESTER = 1, m_axis_rc) interface to weft's stream.
module weft_board_axis_rx #(
    parameter DATA_BITS = 512,
    parameter W = 512,
    parameter REQUESTER = 0,
    // PG213 port tables: m_axis_cq_tuser is 183 bits wide on the 512-bit
    // interface and 88 on the 64/128/256-bit one; m_axis_rc_tuser 161 and 75.
    parameter USER_BITS = DATA_BITS == 512 ? (REQUESTER ? 161 : 183) : (REQUESTER ? 75 : 88)
) (
    input wire clk,
    input wire rst,
    input wire [DATA_BITS-1:0] tdata,
    input wire [DATA_BITS/32-1:0] tkeep,
    input wire tlast,
    input wire [USER_BITS-1:0] tuser,
    input wire tvalid,
    output wire tready,
    output wire valid,
    input wire ready,
    output wire sop,
    output wire eop,
    output wire nullify,
    output wire [4:0] empty,
    output wire [127:0] hdr,
    output wire [W-1:0] payload
);
    localparam DWS = DATA_BITS / 32;
    localparam W_DWS = W / 32;
    // Descriptor DWs: CQ 16 bytes, RC 12 bytes (PG213 "Completer Request
    // Descriptor Formats", "Requester Completion Descriptor Format").
    localparam DESC = REQUESTER ? 3 : 4;

    initial if (DESC > DWS) $display("ERROR: weft_board_axis_rx: a %0d-bit bus is narrower than a descriptor", DATA_BITS);

    // tuser (PG213 "Sideband Signal Descriptions in m_axis_cq_tuser" and
    // "... in m_axis_rc_tuser", 512-bit and 64/128/256-bit tables): the
    // first beat of a packet (is_sop[0] / sop / is_sof_0), discontinue, and
    // on CQ the first and last DW byte enables of the request.
    wire in_sop;
    wire in_disc;
    wire [3:0] in_first_be;
    wire [3:0] in_last_be;
    generate
        if (DATA_BITS == 512 && REQUESTER == 0) begin : cq512
            assign in_first_be = tuser[3:0];    // first_be[3:0]
            assign in_last_be = tuser[11:8];    // last_be[3:0]
            assign in_sop = tuser[80];          // is_sop[0]
            assign in_disc = tuser[96];         // discontinue
        end else if (DATA_BITS == 512) begin : rc512
            assign in_first_be = 4'd0;
            assign in_last_be = 4'd0;
            assign in_sop = tuser[64];          // is_sop[0]
            assign in_disc = tuser[96];         // discontinue
        end else if (REQUESTER == 0) begin : cq
            assign in_first_be = tuser[3:0];    // first_be
            assign in_last_be = tuser[7:4];     // last_be
            assign in_sop = tuser[40];          // sop
            assign in_disc = tuser[41];         // discontinue
        end else begin : rc
            assign in_first_be = 4'd0;
            assign in_last_be = 4'd0;
            assign in_sop = tuser[32];          // is_sof_0
            assign in_disc = tuser[42];         // discontinue
        end
    endgenerate

    // DWs the beat holds: tkeep is set contiguously from DW 0 (PG213).
    integer in_used;
    integer k;
    always @* begin
        in_used = 0;
        for (k = 0; k < DWS; k = k + 1)
            if (tkeep[k]) in_used = k + 1;
    end

    // The TLP header from the descriptor, and whether weft can take the TLP.
    wire [127:0] d = tdata[127:0];
    reg [127:0] head;
    reg head_ok;
    reg [2:0] fmt;
    reg [4:0] typ;
    always @* begin
        head = 128'd0;
        head_ok = 1'b1;
        fmt = 3'd0;
        typ = 5'd0;
        if (REQUESTER == 0) begin
            // PG213 "Completer Request Descriptor Formats", memory, I/O and
            // AtomicOp requests; request types from its "Transaction Types"
            // table. A 64-bit address below 4 GB takes a 3 DW header
            // (PCIe Base 6.0 §2.2.4.1).
            case (d[78:75])
                4'b0000: begin fmt = 3'b000; typ = 5'b00000; end  // MRd
                4'b0001: begin fmt = 3'b010; typ = 5'b00000; end  // MWr
                4'b0010: begin fmt = 3'b000; typ = 5'b00010; end  // IORd
                4'b0011: begin fmt = 3'b010; typ = 5'b00010; end  // IOWr
                4'b0100: begin fmt = 3'b010; typ = 5'b01100; end  // FetchAdd
                4'b0101: begin fmt = 3'b010; typ = 5'b01101; end  // Swap
                4'b0110: begin fmt = 3'b010; typ = 5'b01110; end  // CAS
                4'b0111: begin fmt = 3'b000; typ = 5'b00001; end  // MRdLk
                default: head_ok = 1'b0;  // configuration requests, messages: dropped
            endcase
            if (d[63:32] != 32'd0) fmt[0] = 1'b1;
            head[127:125] = fmt;
            head[124:120] = typ;
            head[118:116] = d[123:121];     // TC
            head[114] = d[126];             // Attr[2] (ID-based ordering)
            head[109:108] = d[125:124];     // Attr[1:0]
            head[107:106] = d[1:0];         // AT
            head[105:96] = d[73:64];        // Length from Dword Count (1024 is 0)
            head[95:80] = d[95:80];         // Requester ID
            head[79:72] = d[103:96];        // Tag
            head[71:68] = in_last_be;       // Last DW BE
            head[67:64] = in_first_be;      // First DW BE
            if (fmt[0]) head[63:0] = {d[63:2], 2'b00};
            else head[63:32] = {d[31:2], 2'b00};
        end else begin
            // PG213 "Requester Completion Descriptor Format": a completion
            // with data where the Dword Count is not 0, locked where the
            // Locked Read Completion bit says so.
            head[127:125] = d[42:32] != 11'd0 ? 3'b010 : 3'b000;
            head[124:120] = {4'b0101, d[29]};
            head[118:116] = d[91:89];       // TC
            head[114] = d[94];              // Attr[2]
            head[110] = d[46];              // EP from Poisoned Completion
            head[109:108] = d[93:92];       // Attr[1:0]
            head[105:96] = d[41:32];        // Length
            head[95:80] = d[87:72];         // Completer ID
            head[79:77] = d[45:43];         // Completion Status
            head[75:64] = d[27:16];         // Byte Count (4096 is 0)
            head[63:48] = d[63:48];         // Requester ID
            head[47:40] = d[71:64];         // Tag
            head[38:32] = d[6:0];           // Lower Address
        end
    end

    // One beat held: its DWs after the descriptor's place leave with the
    // next beat's first DESC DWs, so a beat leaves once the next one is
    // there, or at once if it is the last.
    reg h_valid = 1'b0;
    reg [DATA_BITS-1:0] h_data = 0;
    reg [5:0] h_used = 6'd0;
    reg h_last = 1'b0;
    reg h_sop = 1'b0;
    reg h_void = 1'b0;
    reg h_drop = 1'b0;  // a TLP weft has no header for: taken from the block, not passed on
    reg [127:0] h_hdr = 128'd0;

    wire merge = h_valid && !h_last && tvalid;
    wire absorbed = merge && tlast && in_used <= DESC;
    wire out = h_valid && (h_last || tvalid);
    assign valid = out && !h_drop;
    wire fire = out && (ready || h_drop);
    assign tready = !h_valid || fire;

    assign sop = h_sop;
    assign eop = h_last || absorbed;
    assign hdr = h_hdr;
    assign nullify = eop && (h_void || (absorbed && in_disc));

    integer out_dws;
    always @* begin
        if (h_last) out_dws = h_used > DESC ? h_used - DESC : 0;
        else if (absorbed) out_dws = DWS - DESC + in_used;
        else out_dws = DWS;
    end
    assign empty = eop ? W_DWS[4:0] - out_dws[4:0] : 5'd0;

    wire [DATA_BITS-1:0] obus;
    wire [DATA_BITS-1:0] ordered;
    genvar i;
    generate
        for (i = 0; i < DWS; i = i + 1) begin : dw
            if (i < DWS - DESC) begin : held
                assign obus[32*i +: 32] = h_data[32*(i+DESC) +: 32];
            end else begin : next
                assign obus[32*i +: 32] = merge ? tdata[32*(i-(DWS-DESC)) +: 32] : 32'd0;
            end
            assign ordered[DATA_BITS-1-32*i -: 32] = obus[32*i +: 32];
        end
        if (DATA_BITS == W) begin : same
            assign payload = ordered;
        end else if (DATA_BITS < W) begin : pad
            assign payload = {ordered, {(W - DATA_BITS){1'b0}}};
        end else begin : cut
            assign payload = ordered[DATA_BITS-1 -: W];
        end
    endgenerate

    always @(posedge clk) begin
        if (rst) begin
            h_valid <= 1'b0;
        end else begin
            if (fire) h_valid <= 1'b0;
            if (tvalid && tready && !absorbed) begin
                h_valid <= 1'b1;
                h_data <= tdata;
                h_used <= in_used[5:0];
                h_last <= tlast;
                h_sop <= in_sop;
                if (in_sop) begin
                    h_hdr <= head;
                    h_void <= in_disc;
                    h_drop <= !head_ok;
                end else begin
                    h_void <= h_void || in_disc;
                end
            end
        end
    end
endmodule
/* verilator lint_on UNUSEDSIGNAL */

`default_nettype wire
