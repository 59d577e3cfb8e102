// Hot reset and retrain of a downstream port's link, for weft's board
// wrappers. weft_chip asks for them with one-cycle pulses on weft's clock
// (link_hot_reset$p, link_retrain$p); the wrapper carries each into the
// clock of the hard IP interface that acts on it (weft_board_pulse_sync,
// cdc.v) and these modules make of it what the hard IP offers a root port
// (a switch's downstream port). An upstream port neither starts a hot
// reset (PCIe Base 6.0 §4.2.5.11: it propagates downstream) nor retrains
// (Retrain Link is reserved for Upstream Ports, §7.5.3.7), so the wrapper
// leaves the pulses of such a port unused.
`default_nettype none

// An Intel tile (P-, F-, R-tile) in TLP Bypass or Root Port mode, through
// its Hard IP reconfiguration interface, an Avalon-MM slave with a byte
// address and 8-bit data that reaches the tile's own PCIe configuration
// space (683059 §4.12, 683140 §3.10: "to perform link control functions
// (such as Hot Reset, link disable, or link retrain)"; read-modify-write
// recommended, since one address holds several fields). A hot reset sets
// Secondary Bus Reset (Bridge Control bit 6, §7.5.1.3.13), holds it HOLD
// cycles and clears it; a retrain sets Retrain Link (Link Control bit 5,
// §7.5.3.7), which reads back 0. Each is a read of the byte, then a write
// of it with the bit changed. A request arriving while another is under
// way waits; two of a kind waiting are one. Nothing is started while
// link_up is low: the interface must be idle while PERST# is asserted
// (683059 §4.12), and a link that is down has nothing to reset or retrain.
module weft_board_tile_link #(
    parameter ADDR_BITS = 21,
    parameter [ADDR_BITS-1:0] BRIDGE_CONTROL = 'h3e,
    parameter [ADDR_BITS-1:0] LINK_CONTROL = 'h80,
    parameter HOLD = 250000
) (
    input wire clk,
    input wire rst,
    input wire link_up,
    input wire hot_reset,
    input wire retrain,
    output reg [ADDR_BITS-1:0] address = 0,
    output reg read = 1'b0,
    output reg write = 1'b0,
    output reg [7:0] writedata = 8'd0,
    input wire [7:0] readdata,
    input wire readdatavalid,
    input wire waitrequest
);
    localparam [2:0] IDLE = 3'd0, READ = 3'd1, DATA = 3'd2, WRITE = 3'd3, HOLDING = 3'd4;
    localparam [7:0] SECONDARY_BUS_RESET = 8'h40;
    localparam [7:0] RETRAIN_LINK = 8'h20;

    reg [2:0] state = IDLE;
    reg hot_pending = 1'b0;
    reg retrain_pending = 1'b0;
    reg [7:0] bit_mask = 8'd0;
    reg [7:0] value = 8'd0;
    reg clearing = 1'b0;
    reg [31:0] count = 0;
    reg [1:0] up_seen = 2'b00;

    always @(posedge clk) begin
        up_seen <= {up_seen[0], link_up};
        if (rst) begin
            state <= IDLE;
            read <= 1'b0;
            write <= 1'b0;
            hot_pending <= 1'b0;
            retrain_pending <= 1'b0;
        end else begin
            hot_pending <= hot_pending || hot_reset;
            retrain_pending <= retrain_pending || retrain;
            case (state)
                IDLE: begin
                    clearing <= 1'b0;
                    if (up_seen[1] && hot_pending) begin
                        hot_pending <= hot_reset;
                        address <= BRIDGE_CONTROL;
                        bit_mask <= SECONDARY_BUS_RESET;
                        read <= 1'b1;
                        state <= READ;
                    end else if (up_seen[1] && retrain_pending) begin
                        retrain_pending <= retrain;
                        address <= LINK_CONTROL;
                        bit_mask <= RETRAIN_LINK;
                        read <= 1'b1;
                        state <= READ;
                    end
                end
                READ: if (!waitrequest) begin
                    read <= 1'b0;
                    state <= DATA;
                end
                DATA: if (readdatavalid) begin
                    value <= readdata;
                    writedata <= readdata | bit_mask;
                    write <= 1'b1;
                    state <= WRITE;
                end
                WRITE: if (!waitrequest) begin
                    write <= 1'b0;
                    if (bit_mask == SECONDARY_BUS_RESET && !clearing) begin
                        count <= HOLD;
                        state <= HOLDING;
                    end else begin
                        state <= IDLE;
                    end
                end
                HOLDING: begin
                    if (count == 0) begin
                        writedata <= value & ~bit_mask;
                        write <= 1'b1;
                        clearing <= 1'b1;
                        state <= WRITE;
                    end else begin
                        count <= count - 1;
                    end
                end
                default: state <= IDLE;
            endcase
        end
    end
endmodule

// An UltraScale+ PCIE4/PCIE4C root port (PG213). A hot reset raises
// cfg_hot_reset_in, which "in RP mode ... transitions LTSSM to hot reset
// state" and "must be asserted until the LTSSM enters the Hot_Reset state"
// (PG213, Configuration Control Interface), and lowers it once
// user_lnk_up falls: in Hot Reset the link is down (§4.2.5.11, DL_Down).
// A retrain sets Retrain Link (Link Control bit 5, §7.5.3.7) through the
// Configuration Management interface, which a root port uses to set up
// its configuration space (PG213, Configuration Management Interface:
// Dword address on cfg_mgmt_addr, read and write held until
// cfg_mgmt_read_write_done): a read of the Dword holding Link Control,
// then a write of its low byte alone (byte enable 0001) with the bit set.
// A request arriving while another is under way waits; two of a kind
// waiting are one; nothing is started while the link is down.
module weft_board_pcie4_link #(
    parameter [9:0] LINK_CONTROL_DW = 10'h20
) (
    input wire clk,
    input wire rst,
    input wire link_up,
    input wire hot_reset,
    input wire retrain,
    output reg cfg_hot_reset_in = 1'b0,
    output reg [9:0] cfg_mgmt_addr = 10'd0,
    output reg cfg_mgmt_read = 1'b0,
    output reg cfg_mgmt_write = 1'b0,
    output reg [31:0] cfg_mgmt_write_data = 32'd0,
    output reg [3:0] cfg_mgmt_byte_enable = 4'd0,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [31:0] cfg_mgmt_read_data,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire cfg_mgmt_read_write_done
);
    localparam [1:0] IDLE = 2'd0, RESETTING = 2'd1, READ = 2'd2, WRITE = 2'd3;
    localparam [7:0] RETRAIN_LINK = 8'h20;

    reg [1:0] state = IDLE;
    reg hot_pending = 1'b0;
    reg retrain_pending = 1'b0;

    always @(posedge clk) begin
        if (rst) begin
            state <= IDLE;
            cfg_hot_reset_in <= 1'b0;
            cfg_mgmt_read <= 1'b0;
            cfg_mgmt_write <= 1'b0;
            hot_pending <= 1'b0;
            retrain_pending <= 1'b0;
        end else begin
            hot_pending <= hot_pending || hot_reset;
            retrain_pending <= retrain_pending || retrain;
            case (state)
                IDLE: begin
                    if (link_up && hot_pending) begin
                        hot_pending <= hot_reset;
                        cfg_hot_reset_in <= 1'b1;
                        state <= RESETTING;
                    end else if (link_up && retrain_pending) begin
                        retrain_pending <= retrain;
                        cfg_mgmt_addr <= LINK_CONTROL_DW;
                        cfg_mgmt_read <= 1'b1;
                        state <= READ;
                    end
                end
                RESETTING: if (!link_up) begin
                    cfg_hot_reset_in <= 1'b0;
                    state <= IDLE;
                end
                READ: if (cfg_mgmt_read_write_done) begin
                    cfg_mgmt_read <= 1'b0;
                    cfg_mgmt_write_data <= {24'd0, cfg_mgmt_read_data[7:0] | RETRAIN_LINK};
                    cfg_mgmt_byte_enable <= 4'b0001;
                    cfg_mgmt_write <= 1'b1;
                    state <= WRITE;
                end
                WRITE: if (cfg_mgmt_read_write_done) begin
                    cfg_mgmt_write <= 1'b0;
                    cfg_mgmt_byte_enable <= 4'd0;
                    state <= IDLE;
                end
                default: state <= IDLE;
            endcase
        end
    end
endmodule

`default_nettype wire
