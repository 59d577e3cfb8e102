//! Waveforms of chosen switches' ports: a Value Change Dump (IEEE 1364
//! §18) of every TLP each port receives and sends, over simulated time
//! (`weft-sim --vcd FILE [--vcd-switch NAME]...`).
//!
//! The links ([`crate::wiring`]) tell the recorder of every TLP they put on
//! a wire, on the event-driven path and on the management CPU's
//! synchronous one alike, with the time it occupies the wire; the switch
//! models tell it of every TLP they drop. The timescale is 1 ps, the link
//! model's unit, so back-to-back TLPs at Gen5 x16 stay apart.
//!
//! Each chosen switch is a scope named as in the scenario, each of its
//! ports a scope `portN` in it, with, for `rx` (the port's ingress, the
//! TLP's arrival over its link) and `tx` (its egress, the TLP leaving on
//! its link):
//!
//! | signal | width | what |
//! |---|---|---|
//! | `{rx,tx}_valid` | 1 | high while the TLP is on the wire (rx: its last byte one link latency later than tx's) |
//! | `{rx,tx}_count` | 32 | TLPs so far: it steps at each TLP's first byte, so back-to-back TLPs count apart |
//! | `{rx,tx}_kind` | string | the TLP type, named as in Table 2-3 of PCIe Base 6.0 §2.2.1.1 (`MRd`, `MWr`, `CfgRd0`, `CplD`, `Msg`, ...) |
//! | `{rx,tx}_fmt_type` | 8 | header byte 0: Fmt\[2:0\] and Type\[4:0\] (§2.2.1.1) |
//! | `{rx,tx}_len` | 11 | length in DW: requested (memory, I/O, configuration) or carried (completions, messages) |
//! | `{rx,tx}_req_id` | 16 | the requester ID (of the request completed, for a completion) |
//! | `{rx,tx}_tag` | 10 | the tag (§2.2.6.2) |
//! | `{rx,tx}_addr` | 32 | address\[31:0\] of a memory or I/O request, the byte offset of a configuration request, Lower Address of a completion, 0 for a message |
//! | `{rx,tx}_credits_{p,np,cpl}` | 16 | header credits of posted requests, non-posted requests and completions in use (§2.6.1). rx: TLPs in the port's receive buffer, from their first byte's arrival until the switch frees the buffer; tx: credits of the link partner's the port has taken, from a TLP's first byte until the partner's UpdateFC brings them back |
//! | `drop_count` | 32 | TLPs the switch dropped that came in on this port |
//! | `drop_reason` | string | why it dropped the last one (`weft_model::DropReason`) |
//!
//! Fields keep their last TLP's value while `valid` is low. Changes are
//! recorded as the simulation schedules them, which may be ahead of its
//! clock, and written in time order once the world's clock has passed
//! them (as each event of the world is handled), so memory holds only
//! what is still ahead.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use vcd::{IdCode, TimescaleUnit, VarType};
use weft_model::{DropReason, Packet};
use weft_pcie::tlp::{Body, FlowControlClass, TlpType};

use crate::link::Picoseconds;
use crate::scenario::Scenario;
use crate::wiring::Place;

/// A switch whose ports are recorded: its index in the world, the name
/// its scope takes, and its port count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The switch's index in the simulated fabric.
    pub switch: usize,
    /// Its scope's name.
    pub name: String,
    /// Its ports, each a scope.
    pub ports: u8,
}

impl Probe {
    /// The scenario's switches named in `names` (every switch when `names`
    /// is empty), in the scenario's order.
    pub fn select(scenario: &Scenario, names: &[String]) -> Result<Vec<Probe>, WaveformError> {
        if let Some(unknown) = names
            .iter()
            .find(|name| !scenario.switches.iter().any(|s| &s.name == *name))
        {
            return Err(WaveformError::UnknownSwitch {
                name: unknown.clone(),
                known: scenario.switches.iter().map(|s| s.name.clone()).collect(),
            });
        }
        Ok(scenario
            .switches
            .iter()
            .enumerate()
            .filter(|(_, s)| names.is_empty() || names.contains(&s.name))
            .map(|(switch, s)| Probe {
                switch,
                name: s.name.clone(),
                ports: s.ports,
            })
            .collect())
    }
}

/// Why a waveform could not be recorded.
#[derive(Debug)]
pub enum WaveformError {
    /// The file could not be created.
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing it failed.
    Write(io::Error),
    /// `--vcd-switch` named a switch the scenario does not have.
    UnknownSwitch {
        /// The name given.
        name: String,
        /// The scenario's switches.
        known: Vec<String>,
    },
}

impl fmt::Display for WaveformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaveformError::Create { path, source } => {
                write!(f, "cannot create the waveform {}: {source}", path.display())
            }
            WaveformError::Write(source) => write!(f, "cannot write the waveform: {source}"),
            WaveformError::UnknownSwitch { name, known } => write!(
                f,
                "no switch `{name}` to record (the scenario's switches: {})",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for WaveformError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WaveformError::Create { source, .. } | WaveformError::Write(source) => Some(source),
            WaveformError::UnknownSwitch { .. } => None,
        }
    }
}

/// Which way a TLP crosses a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Into the switch: its ingress.
    Rx,
    /// Out of the switch: its egress.
    Tx,
}

/// A signal's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Bits(u64),
    Text(&'static str),
}

/// What happens to a signal at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    /// It takes this value.
    Set(Level),
    /// A counter steps up (or down) by this much.
    Step(i8),
}

/// What happens at a time.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A TLP's first byte on a lane: the lane's fields take the TLP's, its
    /// valid level rises, its count and the credits of `credit` step up.
    Start {
        lane: Lane,
        fields: Fields,
        credit: u32,
    },
    /// One signal changes.
    Change { signal: u32, change: Change },
}

/// An event waiting for the world's clock to pass its time.
#[derive(Clone, Copy, Debug)]
struct Pending {
    at: Picoseconds,
    /// Order of recording: events at one time apply in this order.
    sequence: u64,
    event: Event,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.sequence) == (other.at, other.sequence)
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.sequence).cmp(&(other.at, other.sequence))
    }
}

/// The signals of one direction of a port, as indices into the recorder's.
#[derive(Clone, Copy, Debug)]
struct Lane {
    valid: u32,
    count: u32,
    kind: u32,
    fmt_type: u32,
    len: u32,
    req_id: u32,
    tag: u32,
    addr: u32,
    /// Header credits in use on the link, by class: posted, non-posted, completion.
    credits: [u32; 3],
}

/// One port's signals.
#[derive(Clone, Copy, Debug)]
struct PortSignals {
    rx: Lane,
    tx: Lane,
    drop_count: u32,
    drop_reason: u32,
}

/// A signal: its VCD identifier and width (0: a string).
#[derive(Clone, Copy, Debug)]
struct Signal {
    id: IdCode,
    width: u32,
}

/// Records chosen switches' ports into a VCD file (see the module docs).
pub struct Waveform {
    writer: vcd::Writer<Box<dyn Write>>,
    /// Per switch index, its ports' signals if it is recorded.
    switches: Vec<Option<Vec<PortSignals>>>,
    signals: Vec<Signal>,
    /// Each signal's value as last written.
    written: Vec<Level>,
    /// Each signal's value at the time being written.
    next: Vec<Level>,
    /// Signals changed at the time being written.
    touched: Vec<u32>,
    pending: BinaryHeap<Reverse<Pending>>,
    sequence: u64,
    /// The time of the last timestamp written.
    written_until: Picoseconds,
    /// TLPs recorded on both sides of every port.
    tlps: u64,
    /// The first write error; nothing more is written after it.
    failed: Option<io::Error>,
}

impl fmt::Debug for Waveform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waveform")
            .field("signals", &self.signals.len())
            .field("pending", &self.pending.len())
            .field("written_until", &self.written_until)
            .finish_non_exhaustive()
    }
}

impl Waveform {
    /// A waveform of `probes` written to a new file at `path`.
    pub fn create(path: &Path, probes: &[Probe]) -> Result<Waveform, WaveformError> {
        let file = File::create(path).map_err(|source| WaveformError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        Waveform::new(Box::new(BufWriter::new(file)), probes)
    }

    /// A waveform of `probes` written to `out`: the header and every
    /// signal's value at time 0 are written now.
    pub fn new(out: Box<dyn Write>, probes: &[Probe]) -> Result<Waveform, WaveformError> {
        let mut waveform = Waveform {
            writer: vcd::Writer::new(out),
            switches: Vec::new(),
            signals: Vec::new(),
            written: Vec::new(),
            next: Vec::new(),
            touched: Vec::new(),
            pending: BinaryHeap::new(),
            sequence: 0,
            written_until: 0,
            tlps: 0,
            failed: None,
        };
        waveform.header(probes).map_err(WaveformError::Write)?;
        Ok(waveform)
    }

    fn header(&mut self, probes: &[Probe]) -> io::Result<()> {
        let w = &mut self.writer;
        w.version(concat!("weft-sim ", env!("CARGO_PKG_VERSION")))?;
        w.comment("PCIe ports of weft switches: TLPs on the wire, by port and direction")?;
        w.timescale(1, TimescaleUnit::PS)?;
        for probe in probes {
            self.writer.add_module(&probe.name)?;
            let mut ports = Vec::new();
            for port in 0..probe.ports {
                self.writer.add_module(&format!("port{port}"))?;
                let rx = self.lane("rx")?;
                let tx = self.lane("tx")?;
                let drop_count = self.signal("drop_count", 32)?;
                let drop_reason = self.signal("drop_reason", 0)?;
                ports.push(PortSignals {
                    rx,
                    tx,
                    drop_count,
                    drop_reason,
                });
                self.writer.upscope()?;
            }
            self.writer.upscope()?;
            if self.switches.len() <= probe.switch {
                self.switches.resize(probe.switch + 1, None);
            }
            self.switches[probe.switch] = Some(ports);
        }
        self.writer.enddefinitions()?;
        self.writer.timestamp(0)?;
        self.writer.begin(vcd::SimulationCommand::Dumpvars)?;
        for index in 0..self.signals.len() {
            let level = self.written[index];
            self.write_value(index as u32, level)?;
        }
        self.writer.end()
    }

    fn lane(&mut self, side: &str) -> io::Result<Lane> {
        Ok(Lane {
            valid: self.signal(&format!("{side}_valid"), 1)?,
            count: self.signal(&format!("{side}_count"), 32)?,
            kind: self.signal(&format!("{side}_kind"), 0)?,
            fmt_type: self.signal(&format!("{side}_fmt_type"), 8)?,
            len: self.signal(&format!("{side}_len"), 11)?,
            req_id: self.signal(&format!("{side}_req_id"), 16)?,
            tag: self.signal(&format!("{side}_tag"), 10)?,
            addr: self.signal(&format!("{side}_addr"), 32)?,
            credits: [
                self.signal(&format!("{side}_credits_p"), 16)?,
                self.signal(&format!("{side}_credits_np"), 16)?,
                self.signal(&format!("{side}_credits_cpl"), 16)?,
            ],
        })
    }

    /// Declares a signal of `width` bits (0: a string) in the open scope.
    fn signal(&mut self, name: &str, width: u32) -> io::Result<u32> {
        let (var_type, declared, initial) = if width == 0 {
            (VarType::String, 1, Level::Text("none"))
        } else {
            (VarType::Wire, width, Level::Bits(0))
        };
        let id = self.writer.add_var(var_type, declared, name, None)?;
        let index = self.signals.len() as u32;
        self.signals.push(Signal { id, width });
        self.written.push(initial);
        self.next.push(initial);
        Ok(index)
    }

    fn ports(&self, place: Place) -> Option<PortSignals> {
        self.switches
            .get(place.switch)?
            .as_ref()?
            .get(usize::from(place.port))
            .copied()
    }

    fn schedule(&mut self, at: Picoseconds, event: Event) {
        self.sequence += 1;
        self.pending.push(Reverse(Pending {
            at,
            sequence: self.sequence,
            event,
        }));
    }

    fn schedule_change(&mut self, at: Picoseconds, signal: u32, change: Change) {
        self.schedule(at, Event::Change { signal, change });
    }

    /// `packet` crosses `place` the way `side` from `start` to `end` (its
    /// first and last byte on the wire), if `place`'s switch is recorded.
    pub(crate) fn tlp(
        &mut self,
        place: Place,
        side: Side,
        packet: &Packet,
        start: Picoseconds,
        end: Picoseconds,
    ) {
        let Some(ports) = self.ports(place) else {
            return;
        };
        let lane = match side {
            Side::Rx => ports.rx,
            Side::Tx => ports.tx,
        };
        self.tlps += 1;
        let credit = lane.credits[class_index(packet.header.flow_control_class())];
        let fields = Fields::of(packet);
        self.schedule(
            start,
            Event::Start {
                lane,
                fields,
                credit,
            },
        );
        self.schedule_change(end, lane.valid, Change::Set(Level::Bits(0)));
    }

    /// A header credit of `class` taken on `side` of `place` as a TLP
    /// started ([`Waveform::tlp`]) is free again at `at`, if `place`'s
    /// switch is recorded: rx, the switch freed the TLP's buffer; tx, the
    /// link partner's UpdateFC brought it back.
    pub(crate) fn credit_returned(
        &mut self,
        place: Place,
        side: Side,
        class: FlowControlClass,
        at: Picoseconds,
    ) {
        let Some(ports) = self.ports(place) else {
            return;
        };
        let lane = match side {
            Side::Rx => ports.rx,
            Side::Tx => ports.tx,
        };
        let signal = lane.credits[class_index(class)];
        self.schedule_change(at, signal, Change::Step(-1));
    }

    /// The switch dropped a TLP that came in on `place` at `at`, for `reason`.
    pub(crate) fn dropped(&mut self, place: Place, at: Picoseconds, reason: DropReason) {
        let Some(ports) = self.ports(place) else {
            return;
        };
        self.schedule_change(at, ports.drop_count, Change::Step(1));
        self.schedule_change(
            at,
            ports.drop_reason,
            Change::Set(Level::Text(reason_name(reason))),
        );
    }

    /// Writes every change before `now`: the world's clock has passed it,
    /// and nothing is recorded at a time before the clock.
    pub(crate) fn advance(&mut self, now: Picoseconds) {
        while let Some(Reverse(first)) = self.pending.peek() {
            if first.at >= now {
                break;
            }
            self.write_next_time();
        }
    }

    /// Writes every change still ahead, and the end of the run at `end`;
    /// returns the TLPs recorded.
    pub(crate) fn finish(mut self, end: Picoseconds) -> Result<u64, WaveformError> {
        while !self.pending.is_empty() {
            self.write_next_time();
        }
        if self.failed.is_none() && end > self.written_until {
            if let Err(err) = self.writer.timestamp(end) {
                self.failed = Some(err);
            }
        }
        if let Some(err) = self.failed.take() {
            return Err(WaveformError::Write(err));
        }
        self.writer.flush().map_err(WaveformError::Write)?;
        Ok(self.tlps)
    }

    /// Applies every change of the earliest pending time and writes the
    /// signals that end up changed.
    fn write_next_time(&mut self) {
        let Some(Reverse(first)) = self.pending.peek() else {
            return;
        };
        let at = first.at;
        while let Some(Reverse(pending)) = self.pending.peek().copied() {
            if pending.at != at {
                break;
            }
            self.pending.pop();
            match pending.event {
                Event::Change { signal, change } => self.apply(signal, change),
                Event::Start {
                    lane,
                    fields,
                    credit,
                } => {
                    self.apply(lane.valid, Change::Set(Level::Bits(1)));
                    self.apply(lane.count, Change::Step(1));
                    self.apply(credit, Change::Step(1));
                    self.apply(lane.kind, Change::Set(Level::Text(fields.kind)));
                    for (signal, value) in [
                        (lane.fmt_type, fields.fmt_type),
                        (lane.len, fields.len),
                        (lane.req_id, fields.req_id),
                        (lane.tag, fields.tag),
                        (lane.addr, fields.addr),
                    ] {
                        self.apply(signal, Change::Set(Level::Bits(value)));
                    }
                }
            }
        }
        if self.failed.is_some() {
            self.touched.clear();
            return;
        }
        // A change recorded behind what is written already (never, while the
        // world keeps its clock) is written at the last time.
        let at = at.max(self.written_until);
        let mut stamped = false;
        let touched = std::mem::take(&mut self.touched);
        for &signal in &touched {
            let index = signal as usize;
            if self.next[index] == self.written[index] {
                continue;
            }
            if !stamped && at > self.written_until {
                if let Err(err) = self.writer.timestamp(at) {
                    self.failed = Some(err);
                    break;
                }
                self.written_until = at;
            }
            stamped = true;
            self.written[index] = self.next[index];
            if let Err(err) = self.write_value(signal, self.next[index]) {
                self.failed = Some(err);
                break;
            }
        }
        self.touched = touched;
        self.touched.clear();
    }

    /// Applies `change` to `signal`'s value at the time being written.
    fn apply(&mut self, signal: u32, change: Change) {
        let index = signal as usize;
        self.next[index] = match (change, self.next[index]) {
            (Change::Set(level), _) => level,
            (Change::Step(by), Level::Bits(n)) => {
                Level::Bits(n.saturating_add_signed(i64::from(by)) & 0xffff_ffff)
            }
            (Change::Step(_), text) => text,
        };
        self.touched.push(signal);
    }

    fn write_value(&mut self, signal: u32, level: Level) -> io::Result<()> {
        let Signal { id, width } = self.signals[signal as usize];
        match level {
            Level::Text(text) => self.writer.change_string(id, text),
            Level::Bits(value) if width == 1 => self.writer.change_scalar(id, value & 1 == 1),
            // `b` and the value's digits, the fewest (a reader extends a
            // vector with zeros), as Writer::change_vector writes them but
            // formatted at once rather than digit by digit: this line is
            // most of the file, and writing it most of the recorder's time.
            Level::Bits(value) => writeln!(self.writer.writer(), "b{value:b} {id}"),
        }
    }
}

/// Which of a lane's credit signals counts `class`.
fn class_index(class: FlowControlClass) -> usize {
    match class {
        FlowControlClass::Posted => 0,
        FlowControlClass::NonPosted => 1,
        FlowControlClass::Completion => 2,
    }
}

/// The fields a port's signals show of one TLP.
#[derive(Clone, Copy, Debug)]
struct Fields {
    kind: &'static str,
    fmt_type: u64,
    len: u64,
    req_id: u64,
    tag: u64,
    addr: u64,
}

impl Fields {
    fn of(packet: &Packet) -> Fields {
        let header = &packet.header;
        // Byte 0 of the header in wire order, DW 0's most significant byte (§2.2.1.1).
        let fmt_type = header.encode_dws().map_or(0, |dws| u64::from(dws[0] >> 24));
        let (len, req_id, tag, addr) = match header.body {
            Body::Memory(m) => (
                m.length_dw,
                m.requester.0,
                m.tag.get(),
                m.address & 0xffff_ffff,
            ),
            Body::Io(io) => (1, io.requester.0, io.tag.get(), u64::from(io.address)),
            Body::Config(c) => (1, c.requester.0, c.tag.get(), u64::from(c.byte_offset())),
            Body::Completion(c) => (
                c.data_dw.unwrap_or(0),
                c.requester.0,
                c.tag.get(),
                u64::from(c.lower_address),
            ),
            Body::Message(m) => (m.data_dw.unwrap_or(0), m.requester.0, u16::from(m.tag), 0),
        };
        Fields {
            kind: kind_name(header.tlp_type()),
            fmt_type,
            len: u64::from(len),
            req_id: u64::from(req_id),
            tag: u64::from(tag),
            addr,
        }
    }
}

/// The name PCIe Base 6.0 Table 2-3 gives a TLP type.
fn kind_name(tlp_type: TlpType) -> &'static str {
    match tlp_type {
        TlpType::MemoryRead => "MRd",
        TlpType::MemoryReadLocked => "MRdLk",
        TlpType::MemoryWrite => "MWr",
        TlpType::IoRead => "IORd",
        TlpType::IoWrite => "IOWr",
        TlpType::ConfigRead0 => "CfgRd0",
        TlpType::ConfigWrite0 => "CfgWr0",
        TlpType::ConfigRead1 => "CfgRd1",
        TlpType::ConfigWrite1 => "CfgWr1",
        TlpType::Completion => "Cpl",
        TlpType::CompletionWithData => "CplD",
        TlpType::CompletionLocked => "CplLk",
        TlpType::CompletionWithDataLocked => "CplDLk",
        TlpType::Message(_) => "Msg",
        TlpType::MessageWithData(_) => "MsgD",
        TlpType::FetchAdd => "FetchAdd",
        TlpType::Swap => "Swap",
        TlpType::CompareAndSwap => "CAS",
    }
}

/// A drop reason's name: its variant's.
fn reason_name(reason: DropReason) -> &'static str {
    match reason {
        DropReason::Malformed => "Malformed",
        DropReason::PortDisabled => "PortDisabled",
        DropReason::Unbound => "Unbound",
        DropReason::SpoofedRequester => "SpoofedRequester",
        DropReason::NoWindow => "NoWindow",
        DropReason::Forbidden => "Forbidden",
        DropReason::OutsideAperture => "OutsideAperture",
        DropReason::Unsupported => "Unsupported",
        DropReason::NoRoute => "NoRoute",
        DropReason::RoutesToIngress => "RoutesToIngress",
        DropReason::UnexpectedCompletion => "UnexpectedCompletion",
        DropReason::UnknownFunction => "UnknownFunction",
    }
}

#[cfg(test)]
mod tests {
    use weft_devices::packet::{completion_for, config_read, read_chunk, write_chunk, RequestInfo};
    use weft_pcie::split::RequestChunk;
    use weft_pcie::tlp::{CompletionStatus, Tag};
    use weft_pcie::Bdf;

    use super::*;

    fn chunk(address: u64, length_dw: u16) -> RequestChunk {
        RequestChunk {
            address,
            len: length_dw * 4,
            length_dw,
            first_be: 0xf,
            last_be: if length_dw > 1 { 0xf } else { 0 },
        }
    }

    #[test]
    fn fields_are_the_headers_as_table_2_3_encodes_them() {
        let requester = Bdf::new(3, 0, 1);
        // MRd below 4 GiB: 3 DW header, no data, Fmt 000b Type 0 0000b.
        let read = read_chunk(
            requester,
            Tag::new(0x2a5).expect("10 bits"),
            &chunk(0x1234_5678, 16),
        );
        let fields = Fields::of(&read);
        assert_eq!(
            (
                fields.kind,
                fields.fmt_type,
                fields.len,
                fields.req_id,
                fields.tag,
                fields.addr
            ),
            ("MRd", 0x00, 16, 0x0301, 0x2a5, 0x1234_5678)
        );
        // MWr above 4 GiB: 4 DW header with data, Fmt 011b; the address's low 32 bits.
        let write = write_chunk(requester, &chunk(0x9_0000_0040, 64), &[0; 256]);
        let fields = Fields::of(&write);
        assert_eq!(
            (fields.kind, fields.fmt_type, fields.len, fields.addr),
            ("MWr", 0x60, 64, 0x40)
        );
        // CfgRd0: Fmt 000b Type 0 0100b; the byte offset of the register.
        let config = config_read(requester, Tag::from_8bit(7), Bdf::new(4, 0, 0), 0x10);
        let fields = Fields::of(&config);
        assert_eq!(
            (fields.kind, fields.fmt_type, fields.len, fields.addr),
            ("CfgRd0", 0x04, 1, 0x10)
        );
        // CplD: Fmt 010b Type 0 1010b, the requester and tag of the request.
        let info = RequestInfo::of(&config.header);
        let completion = completion_for(
            &info,
            Bdf::new(4, 0, 0),
            CompletionStatus::Successful,
            4,
            0,
            Some(vec![0; 4]),
        );
        let fields = Fields::of(&completion);
        assert_eq!(
            (
                fields.kind,
                fields.fmt_type,
                fields.len,
                fields.req_id,
                fields.tag
            ),
            ("CplD", 0x4a, 1, 0x0301, 7)
        );
    }
}
