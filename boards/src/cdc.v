// Clock-domain crossing blocks for weft's board wrappers.
`default_nettype none

// Holds rst_out high for two cycles of clk after rst_in falls; rst_in may be
// asynchronous to clk.
module weft_board_reset_sync (
    input wire clk,
    input wire rst_in,
    output wire rst_out
);
    reg [1:0] stages = 2'b11;
    always @(posedge clk or posedge rst_in) begin
        if (rst_in) stages <= 2'b11;
        else stages <= {stages[0], 1'b0};
    end
    assign rst_out = stages[1];
endmodule

// A dual-clock FIFO of 2**ADDR words with Gray-coded pointers, each
// synchronized through two flip-flops into the other domain. wr_ready falls
// while fewer than HEADROOM + 1 words are free, so a source with a ready
// latency of up to HEADROOM cycles never overruns it. With PACKET set the
// read side sees a word only once the word marked wr_last after it is
// written, so a packet leaves without gaps; a packet must then fit in the
// FIFO.
//
// Every pointer starts at 0 with the FPGA's configuration. A reset of one
// side later on (a hard IP's link going down resets its clock domain while
// weft's runs on) never rewinds that side's pointers behind the other's:
// wr_rst drops the words written since the last one the read side may see
// (a packet cut short), rd_rst discards every word the read side may see.
// Either side can then reset alone without the FIFO inventing words or
// losing count of them.
module weft_board_cdc_fifo #(
    parameter WIDTH = 8,
    parameter ADDR = 4,
    parameter HEADROOM = 0,
    parameter PACKET = 0
) (
    input wire wr_clk,
    input wire wr_rst,
    input wire wr_valid,
    output wire wr_ready,
    input wire wr_last,
    input wire [WIDTH-1:0] wr_data,
    input wire rd_clk,
    input wire rd_rst,
    output wire rd_valid,
    input wire rd_ready,
    output wire [WIDTH-1:0] rd_data
);
    localparam [ADDR:0] DEPTH = 1 << ADDR;
    localparam [ADDR:0] LIMIT = DEPTH - HEADROOM[ADDR:0];

    reg [WIDTH-1:0] mem [0:(1 << ADDR) - 1];
    reg [ADDR:0] wr_bin = 0;
    reg [ADDR:0] wr_gray = 0; // up to the last word the read side may see
    reg [ADDR:0] rd_bin = 0;
    reg [ADDR:0] rd_gray = 0;
    reg [ADDR:0] rd_gray_w1 = 0;
    reg [ADDR:0] rd_gray_w2 = 0;
    reg [ADDR:0] wr_gray_r1 = 0;
    reg [ADDR:0] wr_gray_r2 = 0;

    function automatic [ADDR:0] gray_to_bin(input [ADDR:0] gray);
        integer i;
        begin
            gray_to_bin[ADDR] = gray[ADDR];
            for (i = ADDR - 1; i >= 0; i = i - 1)
                gray_to_bin[i] = gray_to_bin[i + 1] ^ gray[i];
        end
    endfunction

    wire [ADDR:0] wr_next = wr_bin + 1'b1;
    wire [ADDR:0] rd_next = rd_bin + 1'b1;
    wire [ADDR:0] used = wr_bin - gray_to_bin(rd_gray_w2);
    wire full = used >= DEPTH;
    wire empty = rd_gray == wr_gray_r2;
    wire write = wr_valid && !full && !wr_rst;
    wire read = rd_ready && !empty && !rd_rst;

    assign wr_ready = used < LIMIT;
    assign rd_valid = !empty;
    assign rd_data = mem[rd_bin[ADDR-1:0]];

    always @(posedge wr_clk) begin
        if (write) mem[wr_bin[ADDR-1:0]] <= wr_data;
    end

    always @(posedge wr_clk) begin
        if (wr_rst) begin
            wr_bin <= gray_to_bin(wr_gray);
        end else if (write) begin
            wr_bin <= wr_next;
            if (PACKET == 0 || wr_last) wr_gray <= wr_next ^ (wr_next >> 1);
        end
        rd_gray_w1 <= rd_gray;
        rd_gray_w2 <= rd_gray_w1;
    end

    always @(posedge rd_clk) begin
        if (rd_rst) begin
            rd_bin <= gray_to_bin(wr_gray_r2);
            rd_gray <= wr_gray_r2;
        end else if (read) begin
            rd_bin <= rd_next;
            rd_gray <= rd_next ^ (rd_next >> 1);
        end
        wr_gray_r1 <= wr_gray;
        wr_gray_r2 <= wr_gray_r1;
    end
endmodule

// Carries one-cycle pulses on src_clk into dst_clk: each pulse flips a
// toggle on src_clk, the toggle crosses through two flip-flops, and each
// change of it leaves as one one-cycle pulse on dst_clk. Whatever the two
// clocks' rates, every pulse arrives exactly once, provided pulses are at
// least three dst_clk cycles apart (two closer together would cancel in the
// toggle); a plain two-flop synchronizer would lose a pulse shorter than a
// dst_clk cycle, or stretch one into several.
module weft_board_pulse_sync (
    input wire src_clk,
    input wire src_pulse,
    input wire dst_clk,
    output wire dst_pulse
);
    reg toggle = 1'b0;
    always @(posedge src_clk) if (src_pulse) toggle <= !toggle;
    reg [2:0] seen = 3'b000;
    always @(posedge dst_clk) seen <= {seen[1:0], toggle};
    assign dst_pulse = seen[2] != seen[1];
endmodule

// Carries a multi-bit value from src_clk into dst_clk by handshake: the
// source takes a snapshot while no transfer is under way and flips `req`;
// the destination, seeing `req` change through two flip-flops, copies the
// snapshot (stable since) and answers on `ack`, which crosses back the same
// way. The copy lags the source by a few cycles of both clocks and is never
// torn; a value that only grows (a credit limit) is therefore never seen
// larger than it is.
module weft_board_cdc_snapshot #(
    parameter WIDTH = 16
) (
    input wire src_clk,
    input wire [WIDTH-1:0] src_value,
    input wire dst_clk,
    output reg [WIDTH-1:0] dst_value = 0
);
    reg [WIDTH-1:0] held = 0;
    reg req = 1'b0;
    reg [1:0] ack_seen = 2'b00;
    reg ack = 1'b0;
    reg [2:0] req_seen = 3'b000;
    always @(posedge src_clk) begin
        ack_seen <= {ack_seen[0], ack};
        if (req == ack_seen[1]) begin
            held <= src_value;
            req <= !req;
        end
    end
    always @(posedge dst_clk) begin
        req_seen <= {req_seen[1:0], req};
        if (req_seen[2] != req_seen[1]) begin
            dst_value <= held;
            ack <= req_seen[1];
        end
    end
endmodule

`default_nettype wire
