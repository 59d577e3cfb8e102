// The console over JTAG (jtag_console.v) between a stand-in for weft_chip's
// serial line and the model of the JTAG UART channel
// (jtag_atlantic_model.v), whose FIFO toward the host has room three
// cycles in four.
//
// Checked, at 8 core clock cycles a bit:
// - every frame the chip sends reaches the host, in order, while the host
//   reads, however the channel's ready comes and goes between frames and
//   however close the frames follow each other;
// - with no host reading, the first byte waits and the rest are dropped,
//   and the chip's line is never held up: the frames keep their timing;
// - a frame whose stop bit is 0 never reaches the host;
// - every byte the host types reaches the chip as an 8N1 frame, in order,
//   bit times exact, while the chip talks at the same time.
// Generated into the simulation by weft-boards.
`timescale 1ns/1ps
`default_nettype none

module weft_jtag_console_tb;
    localparam CPB = 8;
    reg clk = 1'b0;
    always #2 clk = !clk;
    reg rst = 1'b1;
    integer errors = 0;
    integer seed = 11;

    reg from_chip = 1'b1;
    wire to_chip;
    weft_board_jtag_console #(.CYCLES_PER_BIT(CPB)) dut (
        .clk(clk), .rst(rst), .from_chip(from_chip), .to_chip(to_chip)
    );

    // The chip's transmitter: one 8N1 frame, then `gap` idle cycles.
    task send(input [7:0] b, input stop, input integer gap);
        integer i;
        begin
            from_chip = 1'b0;
            repeat (CPB) @(posedge clk);
            for (i = 0; i < 8; i = i + 1) begin
                from_chip = b[i];
                repeat (CPB) @(posedge clk);
            end
            from_chip = stop;
            repeat (CPB) @(posedge clk);
            from_chip = 1'b1;
            repeat (gap) @(posedge clk);
        end
    endtask

    // The chip's receiver: decodes to_chip, checking every bit lasts CPB cycles.
    reg [7:0] heard [0:255];
    integer hears = 0;
    integer level_cycles = 0;
    reg last_level = 1'b1;
    reg [7:0] frame;
    integer bit_index;
    always @(posedge clk) begin
        if (to_chip == last_level) begin
            level_cycles <= level_cycles + 1;
        end else begin
            // A level inside a frame lasts a whole number of bit times.
            if (!rst && last_level == 1'b0 && (level_cycles + 1) % CPB != 0) begin
                $display("ERROR: a low level of %0d cycles on to_chip", level_cycles + 1);
                errors = errors + 1;
            end
            level_cycles <= 0;
        end
        last_level <= to_chip;
    end
    initial begin
        forever begin
            @(negedge to_chip);
            repeat (CPB / 2) @(posedge clk);
            if (to_chip !== 1'b0) begin
                $display("ERROR: a start bit shorter than half a bit");
                errors = errors + 1;
            end
            for (bit_index = 0; bit_index < 8; bit_index = bit_index + 1) begin
                repeat (CPB) @(posedge clk);
                frame[bit_index] = to_chip;
            end
            repeat (CPB) @(posedge clk);
            if (to_chip !== 1'b1) begin
                $display("ERROR: a stop bit of 0 on to_chip");
                errors = errors + 1;
            end
            heard[hears] = frame;
            hears = hears + 1;
        end
    end

    reg [7:0] sent [0:1023];
    integer sends = 0;
    integer k;
    integer gap;
    integer read_before;
    initial begin
        repeat (10) @(posedge clk);
        rst = 1'b0;
        repeat (10) @(posedge clk);

        dut.channel.room = 12;
        // The host types while the chip talks.
        for (k = 0; k < 40; k = k + 1) dut.channel.typed[k] = $random(seed);
        dut.channel.typed_count = 40;

        // Frames to a reading host, back to back or apart.
        for (k = 0; k < 200; k = k + 1) begin
            sent[sends] = $random(seed);
            gap = $unsigned($random(seed)) % 3 == 0 ? 0 : $unsigned($random(seed)) % (3 * CPB);
            send(sent[sends], 1'b1, gap);
            sends = sends + 1;
        end
        // A frame whose stop bit is 0 is no byte.
        send(8'h5a, 1'b0, 4 * CPB);
        repeat (4 * CPB) @(posedge clk);
        if (dut.channel.reads != sends) begin
            $display("ERROR: the host read %0d bytes, the chip sent %0d", dut.channel.reads, sends);
            errors = errors + 1;
        end
        for (k = 0; k < sends && k < dut.channel.reads; k = k + 1) begin
            if (dut.channel.read_bytes[k] !== sent[k]) begin
                $display("ERROR: byte %0d read %h, sent %h", k, dut.channel.read_bytes[k], sent[k]);
                errors = errors + 1;
            end
        end

        // Nobody reads: the first byte waits, the rest are dropped, and
        // the chip's frames keep their timing (send never waits).
        dut.channel.listening = 1'b0;
        repeat (4) @(posedge clk);
        read_before = dut.channel.reads;
        send(8'hc3, 1'b1, 0);
        for (k = 0; k < 20; k = k + 1) send($random(seed), 1'b1, 0);
        dut.channel.listening = 1'b1;
        repeat (20 * CPB) @(posedge clk);
        if (dut.channel.reads != read_before + 1 || dut.channel.read_bytes[read_before] !== 8'hc3) begin
            $display("ERROR: with no host reading, %0d bytes arrived later (want the first, c3)",
                dut.channel.reads - read_before);
            errors = errors + 1;
        end

        // Every typed byte reached the chip, in order.
        repeat (2 * 10 * CPB) @(posedge clk);
        if (hears != dut.channel.typed_count) begin
            $display("ERROR: the chip heard %0d of %0d typed bytes", hears, dut.channel.typed_count);
            errors = errors + 1;
        end
        for (k = 0; k < hears; k = k + 1) begin
            if (heard[k] !== dut.channel.typed[k]) begin
                $display("ERROR: typed byte %0d reached the chip as %h, typed %h", k, heard[k], dut.channel.typed[k]);
                errors = errors + 1;
            end
        end
        $display("weft-jtag-console-tb: %0d bytes read, %0d typed", dut.channel.reads, hears);
        $display("weft-jtag-console-tb: done, %0d errors", errors + dut.channel.errors);
        $finish;
    end
endmodule
