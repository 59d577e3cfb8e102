//! The switch top's Verilog run by Verilator, behind the same pins as
//! rust-hdl's block ([`SwitchPins`]).
//!
//! rust-hdl's simulator clocks the 8-port top at some 40–60 cycles a
//! second, too slow for a whole scenario; Verilator's model of the Verilog
//! weft emits for the FPGA runs it at thousands. [`VerilatedSwitch::build`]
//! emits the top's Verilog, has `weft_verilated` build it once (cached by a
//! digest of the Verilog), and each [`VerilatedSwitch::instance`] loads it; the harness then drives it as it
//! drives the block, so the same tests and the simulator's RTL switches
//! can hold either to the model.

use std::path::Path;

use weft_verilated::{BuildError, Built, LoadError, Model, Port};

use crate::driver::DriveError;
use crate::emit;
use crate::top::SwitchTop;
use crate::top_pins::{Beat, EgressBeat, PortEvents, SwitchPins};

/// Why the Verilated top could not be had.
#[derive(Debug)]
pub enum VerilatedError {
    /// Building it failed (a missing tool, a failed compile).
    Build(BuildError),
    /// Loading it failed.
    Load(LoadError),
    /// The model lacks a port the harness drives.
    MissingPort(String),
}

impl std::fmt::Display for VerilatedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerilatedError::Build(error) => write!(f, "building the Verilated switch: {error}"),
            VerilatedError::Load(error) => error.fmt(f),
            VerilatedError::MissingPort(name) => {
                write!(f, "the Verilated switch has no port `{name}`")
            }
        }
    }
}

impl std::error::Error for VerilatedError {}

/// One ingress port's pins.
struct IngressPins {
    valid: Port,
    ready: Port,
    sop: Port,
    eop: Port,
    empty: Port,
    nullify: Port,
    header: [Port; 4],
    payload: Port,
}

/// One egress port's pins, and the port's observation outputs.
struct EgressPins {
    valid: Port,
    ready: Port,
    eop: Port,
    empty: Port,
    nullify: Port,
    header: [Port; 4],
    payload: Port,
    to_cpu: Port,
    copy_to_cpu: Port,
    cpu_header: [Port; 4],
    ingress_dropped: Port,
    ingress_drop_reason: Port,
    egress_dropped: Port,
    egress_drop_reason: Port,
}

/// The CSR bus's pins.
struct CsrPins {
    address: Port,
    write: Port,
    write_data: Port,
    read: Port,
    read_data: Port,
    read_valid: Port,
}

/// [`SwitchTop`]'s pins in a Verilated model of its Verilog.
pub struct VerilatedPins {
    model: Model,
    payload_bits: usize,
    clock: Port,
    credits: [Port; 3],
    ingress: Vec<IngressPins>,
    egress: Vec<EgressPins>,
    csr: CsrPins,
    cycles: u64,
    /// Scratch for a payload bus's words, least significant first.
    words: Vec<u32>,
}

/// A Verilated build of `SwitchTop`, from which instances are made.
pub struct VerilatedSwitch {
    built: Built,
    payload_bits: usize,
    ports: usize,
}

impl VerilatedSwitch {
    /// `SwitchTop<W, N>` (its default clock) as Verilog, built by Verilator
    /// under `cache` unless a build of the same Verilog is there.
    /// `progress` hears the steps of a build (minutes for 8 ports).
    /// Emitting the Verilog builds the block, which a debug build does on
    /// the stack: call this on a thread with a large stack.
    pub fn build<const W: usize, const N: usize>(
        cache: &Path,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Self, VerilatedError> {
        // Named by its shape, so that the cache keeps the recent builds of
        // each shape (the tests' 2 ports, the simulator's 8) apart.
        let top = format!("weft_harness_top_{N}x{W}");
        let design = emit::emit(&top, SwitchTop::<W, N>::default());
        let built = weft_verilated::build(&design.verilog, &top, cache, progress)
            .map_err(VerilatedError::Build)?;
        Ok(VerilatedSwitch {
            built,
            payload_bits: W,
            ports: N,
        })
    }

    /// Whether [`VerilatedSwitch::build`] had to build it (not cached).
    pub fn fresh(&self) -> bool {
        self.built.fresh
    }

    /// A new instance at reset, settled with the clock low.
    pub fn instance(&self) -> Result<VerilatedPins, VerilatedError> {
        let model = Model::load(&self.built).map_err(VerilatedError::Load)?;
        VerilatedPins::on(model, self.payload_bits, self.ports)
    }
}

impl VerilatedPins {
    /// The pins of `model`, a top of `ports` ports of `payload_bits`, settled
    /// with the clock low.
    fn on(model: Model, payload_bits: usize, ports: usize) -> Result<Self, VerilatedError> {
        let find = |name: String| model.port(&name).ok_or(VerilatedError::MissingPort(name));
        let header = |prefix: &str| -> Result<[Port; 4], VerilatedError> {
            Ok([
                find(format!("{prefix}dw0"))?,
                find(format!("{prefix}dw1"))?,
                find(format!("{prefix}dw2"))?,
                find(format!("{prefix}dw3"))?,
            ])
        };
        let ingress = (0..ports)
            .map(|p| {
                let pin = |name: &str| find(format!("ingress${p}${name}"));
                Ok(IngressPins {
                    valid: pin("valid")?,
                    ready: pin("ready")?,
                    sop: pin("sop")?,
                    eop: pin("eop")?,
                    empty: pin("empty")?,
                    nullify: pin("nullify")?,
                    header: header(&format!("ingress${p}$"))?,
                    payload: pin("payload")?,
                })
            })
            .collect::<Result<Vec<_>, VerilatedError>>()?;
        let egress = (0..ports)
            .map(|p| {
                let pin = |name: &str| find(format!("egress${p}${name}"));
                let indexed = |name: &str| find(format!("{name}${p}"));
                Ok(EgressPins {
                    valid: pin("valid")?,
                    ready: pin("ready")?,
                    eop: pin("eop")?,
                    empty: pin("empty")?,
                    nullify: pin("nullify")?,
                    header: header(&format!("egress${p}$"))?,
                    payload: pin("payload")?,
                    to_cpu: indexed("to_cpu")?,
                    copy_to_cpu: indexed("copy_to_cpu")?,
                    cpu_header: [
                        indexed("cpu_dw0")?,
                        indexed("cpu_dw1")?,
                        indexed("cpu_dw2")?,
                        indexed("cpu_dw3")?,
                    ],
                    ingress_dropped: indexed("ingress_dropped")?,
                    ingress_drop_reason: indexed("ingress_drop_reason")?,
                    egress_dropped: indexed("egress_dropped")?,
                    egress_drop_reason: indexed("egress_drop_reason")?,
                })
            })
            .collect::<Result<Vec<_>, VerilatedError>>()?;
        let csr = CsrPins {
            address: find("csr$address".into())?,
            write: find("csr$write".into())?,
            write_data: find("csr$write_data".into())?,
            read: find("csr$read".into())?,
            read_data: find("csr$read_data".into())?,
            read_valid: find("csr$read_valid".into())?,
        };
        let clock = find("clock".into())?;
        let credits = [
            find("egress_credit_posted".into())?,
            find("egress_credit_non_posted".into())?,
            find("egress_credit_completion".into())?,
        ];
        let mut pins = VerilatedPins {
            model,
            payload_bits,
            clock,
            credits,
            ingress,
            egress,
            csr,
            cycles: 0,
            words: vec![0; payload_bits / 32],
        };
        pins.model.set(pins.clock, 0);
        pins.model.eval();
        Ok(pins)
    }
}

impl SwitchPins for VerilatedPins {
    fn ports(&self) -> usize {
        self.ingress.len()
    }

    fn payload_bits(&self) -> usize {
        self.payload_bits
    }

    fn cycles(&self) -> u64 {
        self.cycles
    }

    fn open_egress(&mut self) {
        let all = (1u64 << self.ingress.len()) - 1;
        for credit in self.credits {
            self.model.set(credit, all);
        }
        for egress in &self.egress {
            self.model.set(egress.ready, 1);
        }
    }

    fn offer(&mut self, port: usize, beat: Option<&Beat>) {
        let pins = &self.ingress[port];
        let Some(beat) = beat else {
            self.model.set(pins.valid, 0);
            return;
        };
        // DW k of the beat sits at bits W-32(k+1): word count-1-k of the
        // model's least-significant-first words.
        let count = self.words.len();
        self.words.fill(0);
        for (k, dw) in beat.payload.iter().enumerate().take(count) {
            self.words[count - 1 - k] = *dw;
        }
        self.model.set_words(pins.payload, &self.words);
        self.model.set(pins.valid, 1);
        self.model.set(pins.sop, u64::from(beat.sop));
        self.model.set(pins.eop, u64::from(beat.eop));
        self.model.set(pins.empty, beat.empty as u64);
        self.model.set(pins.nullify, 0);
        for (pin, dw) in pins.header.iter().zip(beat.header) {
            self.model.set(*pin, u64::from(dw));
        }
    }

    fn csr(&mut self, address: u32, write: Option<u32>, read: bool) {
        self.model.set(self.csr.address, u64::from(address));
        self.model.set(self.csr.write, u64::from(write.is_some()));
        self.model
            .set(self.csr.write_data, u64::from(write.unwrap_or(0)));
        self.model.set(self.csr.read, u64::from(read));
    }

    fn settle(&mut self) -> Result<(), DriveError> {
        self.model.set(self.clock, 0);
        self.model.eval();
        Ok(())
    }

    /// Settles, then raises the clock. The clock falls at the next
    /// evaluation, together with the next cycle's inputs: nothing in the
    /// design acts on a falling edge, so the evaluation it would cost on
    /// its own (a third of the time per cycle) is saved.
    fn tick(&mut self) -> Result<(), DriveError> {
        self.settle()?;
        self.model.set(self.clock, 1);
        self.model.eval();
        self.cycles += 1;
        Ok(())
    }

    fn ingress_ready(&self, port: usize) -> bool {
        self.model.get(self.ingress[port].ready) != 0
    }

    fn observe(&self, port: usize) -> PortEvents {
        let pins = &self.egress[port];
        let bit = |pin: Port| self.model.get(pin) != 0;
        let header = pins.cpu_header.map(|pin| self.model.get(pin) as u32);
        PortEvents {
            to_cpu: bit(pins.to_cpu).then_some(header),
            copied_to_cpu: bit(pins.copy_to_cpu).then_some(header),
            ingress_drop: bit(pins.ingress_dropped)
                .then(|| self.model.get(pins.ingress_drop_reason) as u32),
            egress_drop: bit(pins.egress_dropped)
                .then(|| self.model.get(pins.egress_drop_reason) as u32),
        }
    }

    fn egress_beat(&self, port: usize, payload: &mut Vec<u32>) -> Option<EgressBeat> {
        let pins = &self.egress[port];
        if self.model.get(pins.valid) == 0 {
            return None;
        }
        // The model's words come least significant first: the beat's DWs
        // in reverse.
        let start = payload.len();
        payload.resize(start + self.payload_bits / 32, 0);
        self.model.get_words(pins.payload, &mut payload[start..]);
        payload[start..].reverse();
        Some(EgressBeat {
            header: pins.header.map(|pin| self.model.get(pin) as u32),
            eop: self.model.get(pins.eop) != 0,
            empty: self.model.get(pins.empty) as usize,
            nullify: self.model.get(pins.nullify) != 0,
        })
    }

    fn csr_answer(&self) -> Option<u32> {
        (self.model.get(self.csr.read_valid) != 0)
            .then(|| self.model.get(self.csr.read_data) as u32)
    }
}
