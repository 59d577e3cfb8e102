//! Verilog emission of weft's top-level designs.
//!
//! rust-hdl names the top module of every design `top` and its submodules
//! `top$…`; each design here is renamed after itself so several can sit in
//! one synthesis project.

use rust_hdl::prelude::*;
use weft_regs::capacity;

use crate::chip::Chip;
use crate::core::Core;
use crate::counters::{CounterControl, PortCounters};
use crate::isolation::ErrorCompletion;
use crate::management::{Inject, Mailbox};
use weft_iss::elf::firmware_path;

use crate::soc::{EthernetMac, MemoryImage, SerialReceiver, SerialTransmitter, Soc, SocError};
use crate::spi_flash::SpiFlashController;
use crate::stream::TlpRegisterSlice;
use crate::switching::SwitchCore;
use crate::tables::{
    AddressRouteTable, BusRouteTable, FunctionOwnerTable, IdMap, OutstandingTable, WindowTable,
};
use crate::top::SwitchTop;
use crate::translate::{EndpointIngress, HostEgress, HostIngress, VirtualWires};
use crate::HeaderDecoder;

/// Payload bits of the reference configuration: 512 bits at 250 MHz carry
/// Gen3 x16 or Gen4 x8 at line rate (REFERENCE.md, "Datapath width").
pub const REFERENCE_PAYLOAD_BITS: usize = 512;

/// How much checking a design gets after Verilator's lint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Full generic synthesis with yosys, then its logic-loop check.
    Synthesize,
    /// Elaboration and yosys's logic-loop check only: for designs whose
    /// memories generic synthesis would expand into flip-flops for many
    /// minutes (vendor flows map them to block RAM).
    Structure,
    /// Verilator's lint only: for a design made of designs checked on
    /// their own, whose own logic is their wiring (elaborating it again
    /// whole took yosys minutes and more memory than two at once fit); a
    /// loop in that wiring would keep its tests from settling.
    Lint,
}

impl Check {
    /// The word `weft-verilog` prints for it and `cargo xtask verilog` reads.
    pub const fn word(self) -> &'static str {
        match self {
            Check::Synthesize => "synthesize",
            Check::Structure => "structure",
            Check::Lint => "lint",
        }
    }
}

/// One design that is emitted as its own Verilog file.
pub struct Design {
    /// Module name of the design's top, and the stem of its `.v` file.
    pub name: String,
    /// The design's Verilog.
    pub verilog: String,
    /// What `cargo xtask verilog` checks beyond lint.
    pub check: Check,
    /// Files the Verilog reads (`$readmemh` memory images), to be written
    /// beside it: file name and text.
    pub data_files: Vec<(String, String)>,
}

/// The SoC's memories at power-on: the firmware ELF at [`firmware_path`]
/// in the reference sizes when there is one, zeros when there is none;
/// and the boot loader at `weft_iss::elf::boot_loader_path` in the boot
/// ROM when there is one, which the SoC then starts in.
pub fn soc_memory() -> Result<MemoryImage, SocError> {
    let memory = match std::fs::read(firmware_path()) {
        Ok(elf) => MemoryImage::reference_from_elf(&elf)?,
        Err(_) => MemoryImage::reference(),
    };
    match std::fs::read(weft_iss::elf::boot_loader_path()) {
        Ok(boot) => memory.with_boot_loader(&boot),
        Err(_) => Ok(memory),
    }
}

/// Every top-level design, emitted and renamed; fails only if a firmware
/// ELF is present and does not load into the SoC.
pub fn designs() -> Result<Vec<Design>, SocError> {
    let memory = soc_memory()?;
    let soc = Soc::new(&memory)?.with_memory_files("weft_soc");
    let soc_memory_files = soc.memory_files();
    let chip = Chip::<REFERENCE_PAYLOAD_BITS, { capacity::PORTS }>::new(
        &memory,
        weft_regs::CONSOLE_CYCLES_PER_BIT,
        crate::top::CLOCK_MHZ,
    )?
    .with_memory_files("weft_chip");
    let chip_memory_files = chip.soc.memory_files();
    Ok(vec![
        emit("weft_header_decoder", HeaderDecoder::default()),
        emit(
            "weft_tlp_register_slice",
            TlpRegisterSlice::<REFERENCE_PAYLOAD_BITS>::default(),
        ),
        emit(
            "weft_window_table",
            WindowTable::<{ capacity::WINDOWS_PER_PORT }>::new(0),
        ),
        // Generic synthesis of the 64 range compares took 2.6 CPU-minutes,
        // the longest of any design but the whole switch's elaboration; its
        // mapping is `cargo xtask hardware --all`'s job, CI checks its structure.
        Design {
            check: Check::Structure,
            ..waive_unused_outputs(
                emit(
                    "weft_address_route_table",
                    AddressRouteTable::<{ capacity::ADDRESS_ROUTES }>::new(),
                ),
                ROUTE_UNUSED_OUTPUTS,
            )
        },
        emit("weft_bus_route_table", BusRouteTable::new()),
        emit(
            "weft_id_map",
            IdMap::<{ capacity::BOUND_FUNCTIONS_PER_HOST }>::new(0),
        ),
        emit(
            "weft_function_owner_table",
            FunctionOwnerTable::<{ capacity::FUNCTION_OWNERS_PER_PORT }>::new(0),
        ),
        // The stage reads only the header fields it acts on.
        waive_unused_outputs(
            emit(
                "weft_host_ingress",
                HostIngress::<{ capacity::WINDOWS_PER_PORT }>::new(0),
            ),
            &["decoder", "windows"],
        ),
        waive_unused_outputs(
            emit(
                "weft_endpoint_ingress",
                EndpointIngress::<{ capacity::WINDOWS_PER_PORT }>::new(0),
            ),
            &["decoder", "windows", "functions"],
        ),
        // The ID map's host-to-fabric lookup serves host ingress, not egress.
        waive_unused_outputs(
            emit(
                "weft_host_egress",
                HostEgress::<{ capacity::BOUND_FUNCTIONS_PER_HOST }>::new(0),
            ),
            &["decoder", "id_map"],
        ),
        emit(
            "weft_virtual_wires",
            VirtualWires::<{ capacity::BOUND_FUNCTIONS_PER_HOST }>::default(),
        ),
        waive_unused_outputs(
            emit("weft_error_completion", ErrorCompletion::default()),
            &["decoder"],
        ),
        // The table answers only non-posted requests, so its error
        // completion's `respond` is always set; the decoder's fields serve
        // other stages, and the table reads only the header fields it
        // keeps; the allocator's last search always finds a free entry.
        // Its 1024 x 139 bits of block RAM would become flip-flops in
        // generic synthesis, so CI only elaborates it; `synth_xilinx
        // -family xcup` maps them to 4 RAMB36E2 and a RAMB18E2 in about
        // 4 CPU-minutes (measured; README's hardware table).
        Design {
            check: Check::Structure,
            ..waive_unused_inputs(
                waive_unused_outputs(
                    emit("weft_outstanding_table", OutstandingTable::default()),
                    &["answer", "decoder", "chosen_free"],
                ),
                &[
                    "request_dw2",
                    "request_dw3",
                    "completion_dw0",
                    "completion_dw1",
                    "completion_dw2",
                ],
            )
        },
        // One-entry register blocks and one-register tables: the decoders'
        // entry or word index means nothing to them; injection reads DW 0's fields only.
        waive_unused_outputs(
            emit("weft_mailbox", Mailbox::default()),
            &["status_decoder", "data_decoder"],
        ),
        waive_unused_outputs(
            emit("weft_inject", Inject::default()),
            &["status_decoder", "data_decoder", "decoder"],
        ),
        // The counters are read-only: the bus's write strobe and data go unread.
        waive_unused_inputs(
            emit("weft_port_counters", PortCounters::new(0)),
            &["csr$write", "csr$write_data"],
        ),
        // One register of one entry, holding only the ports' bits: the
        // decoder's entry index and the write data above them go unread.
        waive_unused_inputs(
            waive_unused_outputs(
                emit("weft_counter_control", CounterControl::new()),
                &["decoder"],
            ),
            &["csr$write_data"],
        ),
        emit("weft_core", Core::default()),
        emit("weft_spi_flash", SpiFlashController::default()),
        // Eight ingress buffers of 256 x 512 bits: generic synthesis turns
        // each into flip-flops (1 min 50 s for one, measured), so CI only
        // elaborates it; `synth_xilinx -family xcup` maps them to block RAM
        // and finished in about 10 CPU-minutes.
        Design {
            check: Check::Structure,
            ..emit(
                "weft_switch_core",
                SwitchCore::<REFERENCE_PAYLOAD_BITS, { capacity::PORTS }>::default(),
            )
        },
        // The whole data plane (its unread signals: see the constants). The
        // switching core's buffers, each port's bus route RAMs and its
        // outstanding-request table are block RAM, so CI only elaborates it.
        Design {
            check: Check::Structure,
            ..waive_unused_inputs(
                waive_unused_outputs(
                    emit(
                        "weft_switch_top",
                        SwitchTop::<REFERENCE_PAYLOAD_BITS, { capacity::PORTS }>::default(),
                    ),
                    SWITCH_TOP_UNUSED_OUTPUTS,
                ),
                SWITCH_TOP_UNUSED_INPUTS,
            )
        },
        // The frame buffer's 24 KiB of dual-port block RAM would become
        // 196 k flip-flops in generic synthesis (unfinished after 2
        // CPU-minutes), so CI only elaborates it; `synth_xilinx -family
        // xcup` maps it onto 6 RAMB36E2 in 15 CPU-seconds. The receive RAM's
        // port B is written, never read, and port A of each RAM takes a
        // word index cut from the full bus address.
        Design {
            check: Check::Structure,
            ..waive_unused_inputs(
                waive_unused_outputs(emit("weft_mac", EthernetMac::new()), &["rx_ram"]),
                &["bus$address"],
            )
        },
        emit(
            "weft_serial_transmitter",
            SerialTransmitter::new(weft_regs::CONSOLE_CYCLES_PER_BIT),
        ),
        emit(
            "weft_serial_receiver",
            SerialReceiver::new(weft_regs::CONSOLE_CYCLES_PER_BIT),
        ),
        // The SoC (its unread signals: see the constants). The RAMs'
        // images are `$readmemh` files beside the Verilog. Its 512 KiB of
        // instruction and data RAM would become 4 M flip-flops in generic synthesis, so
        // CI only elaborates it; `synth_xilinx -family xcup -nolutram` maps
        // them to block RAM (README's hardware table; yosys's UltraScale
        // LUT-RAM mapping rejects one of the small memories, hence
        // -nolutram).
        Design {
            check: Check::Structure,
            data_files: soc_memory_files,
            ..waive_unused_inputs(
                waive_unused_outputs(emit("weft_soc", soc), SOC_UNUSED_OUTPUTS),
                SOC_UNUSED_INPUTS,
            )
        },
        // The whole switch as a board instantiates it: the data plane and
        // the SoC as in their own designs above, and of their outputs at
        // the chip's level only what leaves the chip or crosses between
        // them is read (the watchdog's reset request, the GPIO's outputs
        // above the LEDs and the data plane's observation outputs go
        // unread; the MAC's MII leaves the chip as `mii_*`). Both are
        // elaborated above, and `cargo xtask board <name> check`
        // elaborates the chip in its board's wrapper, so CI lints it only.
        Design {
            check: Check::Lint,
            data_files: chip_memory_files,
            ..waive_unused_inputs(
                waive_unused_outputs(
                    emit("weft_chip", chip),
                    &[
                        SWITCH_TOP_UNUSED_OUTPUTS,
                        SOC_UNUSED_OUTPUTS,
                        &["data_plane", "soc"],
                    ]
                    .concat(),
                ),
                &[SWITCH_TOP_UNUSED_INPUTS, SOC_UNUSED_INPUTS].concat(),
            )
        },
    ])
}

/// Outputs of `weft_switch_top`'s parts it leaves unread: its stages read
/// only the header fields and table answers they act on (as in the
/// stages' own designs); the ingress holds a TLP until the core takes it
/// rather than reading the core's `ingress_space`; the identity registers
/// are read-only; the mailbox's and injector's register decoders are as in
/// their own designs, and so are each port's outstanding-request table's
/// (its count in flight goes unread); the ports' registers say ABANDON for
/// as many host ports as the register map has, of which the top has fewer;
/// its address routes are as in their own design.
const SWITCH_TOP_UNUSED_OUTPUTS: &[&str] = &[
    ROUTE_UNUSED_OUTPUTS[0],
    "decoder",
    "original",
    "routed",
    "windows",
    "functions",
    "id_map",
    "host",
    "endpoint",
    "stage",
    "core",
    "leaving",
    "header",
    "status_decoder",
    "data_decoder",
    "outstanding",
    "registers",
    "answer",
    "chosen_free",
];

/// Outputs of an address route's range it leaves unread: a route compares
/// against the range's base and end, and only a window checks its size.
const ROUTE_UNUSED_OUTPUTS: &[&str] = &["range"];

/// Inputs of `weft_switch_top`'s parts they leave unread (read-only
/// registers' write strobe and data, the table's header fields it does not keep).
const SWITCH_TOP_UNUSED_INPUTS: &[&str] = &[
    "csr$write",
    "csr$write_data",
    "request_dw2",
    "request_dw3",
    "completion_dw0",
    "completion_dw1",
    "completion_dw2",
];

/// Outputs of `weft_soc`'s parts it leaves unread: the core's retirement
/// trace is for simulation; the UART uses its FIFOs' empty and full flags
/// only, the MAC its receive RAM's port B for writes only, and the SoC's
/// decoder faults whatever the flash controller would.
const SOC_UNUSED_OUTPUTS: &[&str] = &[
    "core",
    "tx_fifo",
    "rx_fifo",
    "read_logic",
    "write_logic",
    "rx_ram",
    "spi_flash",
];

/// Inputs of `weft_soc`'s peripherals they leave unread: each decodes the
/// word offset of its register port's address, and the UART takes a byte
/// of the write data.
const SOC_UNUSED_INPUTS: &[&str] = &["bus$address", "bus$write_data"];

/// Connects a block, generates its Verilog (checked by rust-hdl for
/// undriven signals and latches) and renames its top module to `name`.
pub fn emit<B: Block>(name: &str, mut block: B) -> Design {
    block.connect_all();
    let verilog = generate_verilog(&block)
        .replace("module top(", &format!("module {name}("))
        .replace("module top$", &format!("module {name}$"))
        .replace(" top$", &format!(" {name}$"))
        .replace("endmodule // top", &format!("endmodule // {name}"));
    Design {
        name: name.to_string(),
        verilog,
        check: Check::Synthesize,
        data_files: Vec::new(),
    }
}

/// The lines of `verilog` where a negation is widened before it applies.
///
/// rust-hdl writes `!` on a `Bit` as Verilog's `~`, whose operand takes the
/// width of the expression around it (IEEE 1800-2017 §11.6.1): inside the
/// 32-bit mask it writes for `bit_cast`, or shifted into a wider word by
/// `replace_bit`, `~flag` is extended with zeros first and then inverted,
/// so every bit above the flag is set. rust-hdl's simulator inverts the
/// one bit; the emitted design does not. Such a negation is written as an
/// XOR with 1 instead, which widening leaves alone.
pub fn widened_negations(verilog: &str) -> Vec<&str> {
    verilog
        .lines()
        .filter(|line| negation_widened(line))
        .collect()
}

/// Whether a `(~...)` group of `line` is masked to a width (`& 32'h...`)
/// or shifted (`<<`) as soon as it closes.
fn negation_widened(line: &str) -> bool {
    line.match_indices("(~").any(|(start, _)| {
        let mut depth = 0usize;
        for (at, byte) in line.bytes().enumerate().skip(start) {
            match byte {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        let rest = line[at + 1..].trim_start_matches(')');
                        let masked = rest.strip_prefix(" & ").and_then(|mask| {
                            let (width, _) = mask.split_once('\'')?;
                            Some(width != "1" && width.bytes().all(|b| b.is_ascii_digit()))
                        });
                        return rest.starts_with(" << ") || masked == Some(true);
                    }
                }
                _ => {}
            }
        }
        false
    })
}

/// Marks the wires from the outputs of `instances` (submodules of the
/// design's top) as deliberately partly unused, for Verilator's
/// UNUSEDSIGNAL lint: rust-hdl connects every output of a child block to
/// a wire, and a parent that reads only some fields of a shared decoder
/// cannot leave the rest unconnected.
pub fn waive_unused_outputs(design: Design, instances: &[&str]) -> Design {
    let verilog = design
        .verilog
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let waived = trimmed.starts_with("wire ")
                && instances
                    .iter()
                    .any(|instance| trimmed.contains(&format!(" {instance}$")));
            if waived {
                format!(
                    "/* verilator lint_off UNUSEDSIGNAL */\n{line}\n/* verilator lint_on UNUSEDSIGNAL */\n"
                )
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    Design { verilog, ..design }
}

/// Marks the module inputs named in `ports` (in any module of the design)
/// as deliberately partly unused, for Verilator's UNUSEDSIGNAL lint: a
/// block that takes a shared bus interface may read only some of its bits.
pub fn waive_unused_inputs(design: Design, ports: &[&str]) -> Design {
    let verilog = design
        .verilog
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let waived = trimmed.starts_with("input wire")
                && ports
                    .iter()
                    .any(|port| trimmed.ends_with(&format!(" {port};")));
            if waived {
                format!(
                    "/* verilator lint_off UNUSEDSIGNAL */\n{line}\n/* verilator lint_on UNUSEDSIGNAL */\n"
                )
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    Design { verilog, ..design }
}

#[cfg(test)]
mod tests {
    use super::widened_negations;

    #[test]
    fn a_negation_masked_or_shifted_into_a_wider_word_is_found() {
        // As rust-hdl wrote them for `bit_cast::<32, 1>((!flag).into())`
        // and `replace_bit(slot, !(relaxed))`.
        let widened = [
            "read_data$d = (((~tx_fifo$full)) & 32'hffffffff) | ((((~rx_fifo$empty)) & 32'hffffffff) << 32'h1);",
            "read_answer$d = ((((~busy$q)) & 32'hffffffff) << ready_lsb) | (((malformed$q) & 32'hffffffff) << malformed_lsb);",
            "ordered$d = (ordered$q & ~(1 << (alloc_slot)) | ((~((offer_class == 32'h2) & offer_relaxed)) << (alloc_slot)));",
        ];
        for line in widened {
            assert_eq!(widened_negations(line), [line]);
        }
    }

    #[test]
    fn a_negation_by_xor_or_in_a_one_bit_expression_is_not() {
        let safe = [
            "read_data$d = ((((tx_fifo$full) & 32'hffffffff) | (((rx_fifo$empty) & 32'hffffffff) << 32'h1)) ^ 32'h3);",
            "ordered$d = (ordered$q & ~(1 << (alloc_slot)) | ((((offer_class == 32'h2) & offer_relaxed) ^ 1'b1) << (alloc_slot)));",
            "io = (dw0[(32'h18)+:(5)] == 32'h2) & ~dw0[32'h1f] & ~dw0[32'h1d];",
            "available = ~(filling$q & (fill_slot$q == read_slot$q)) | (((read_beat$q) & 5'h1f) < fill_beats$q);",
            "imm = insn & ~((32'hfff) & 32'hffffffff);",
        ];
        for line in safe {
            assert!(widened_negations(line).is_empty(), "{line}");
        }
    }
}
