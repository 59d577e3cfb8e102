//! The switch top's pins as [`crate::top_harness::Harness`] drives them,
//! whatever simulates the RTL behind them.
//!
//! [`SwitchPins`] is what the harness sets and reads each cycle: one beat
//! offered per ingress, every egress open, the CSR bus, and per port what
//! left, what went to the CPU and what was dropped. [`HdlPins`] are
//! [`SwitchTop`]'s own signals in rust-hdl's simulator;
//! `crate::top_verilated::VerilatedPins` are the same names in a Verilated
//! copy of its Verilog.

use rust_hdl::prelude::*;

use crate::driver::{CycleDriver, DriveError};
use crate::top::SwitchTop;

/// One beat offered at an ingress (weft's TLP stream, `crate::stream`).
#[derive(Clone, Copy, Debug)]
pub struct Beat<'a> {
    /// The TLP's header DWs (a 3 DW header's fourth 0), on every beat.
    pub header: [u32; 4],
    /// The beat's payload DWs in order; the first is the bus's most
    /// significant.
    pub payload: &'a [u32],
    /// The TLP's first beat.
    pub sop: bool,
    /// The TLP's last beat.
    pub eop: bool,
    /// Unused DWs at the end of the last beat.
    pub empty: usize,
}

/// One beat leaving an egress (its payload DWs go to the caller's buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EgressBeat {
    /// The TLP's header DWs.
    pub header: [u32; 4],
    /// The TLP's last beat.
    pub eop: bool,
    /// Unused DWs at the end of the last beat.
    pub empty: usize,
    /// The TLP leaves void (`nullify` on its last beat).
    pub nullify: bool,
}

/// What one port showed in a cycle besides its egress beat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortEvents {
    /// A header sent to the management CPU (`to_cpu`).
    pub to_cpu: Option<[u32; 4]>,
    /// A header copied to the CPU beside forwarding (`copy_to_cpu`).
    pub copied_to_cpu: Option<[u32; 4]>,
    /// An ingress drop and its reason (index in weft-model's `DropReason::ALL`).
    pub ingress_drop: Option<u32>,
    /// An egress drop and its reason.
    pub egress_drop: Option<u32>,
}

/// The switch top's pins, cycle by cycle: set inputs, [`SwitchPins::settle`],
/// read outputs, [`SwitchPins::tick`].
pub trait SwitchPins {
    /// Ports of the switch.
    fn ports(&self) -> usize;
    /// Bits of its payload bus.
    fn payload_bits(&self) -> usize;
    /// Clock cycles run so far.
    fn cycles(&self) -> u64;
    /// Makes every egress ready and gives every credit, until changed.
    fn open_egress(&mut self);
    /// Offers `beat` at ingress `port`, or nothing (`valid` low).
    fn offer(&mut self, port: usize, beat: Option<&Beat>);
    /// Drives the CSR bus: `address`, a write of the value if any, a read.
    fn csr(&mut self, address: u32, write: Option<u32>, read: bool);
    /// Lets the combinational logic settle on the inputs.
    fn settle(&mut self) -> Result<(), DriveError>;
    /// Settles, then runs one clock period.
    fn tick(&mut self) -> Result<(), DriveError>;
    /// Whether ingress `port` takes its offered beat at the next edge.
    fn ingress_ready(&self, port: usize) -> bool;
    /// What port `port` shows this cycle besides its egress beat.
    fn observe(&self, port: usize) -> PortEvents;
    /// The beat leaving egress `port` this cycle, if any; its payload DWs
    /// (the whole bus, first DW first) are appended to `payload`.
    fn egress_beat(&self, port: usize, payload: &mut Vec<u32>) -> Option<EgressBeat>;
    /// The CSR bus's answer to the last cycle's read, if a register answered.
    fn csr_answer(&self) -> Option<u32>;
}

/// [`SwitchTop`]'s signals in rust-hdl's simulator, with the single-thread
/// [`CycleDriver`].
pub struct HdlPins<const W: usize, const N: usize> {
    driver: CycleDriver<SwitchTop<W, N>>,
}

impl<const W: usize, const N: usize> HdlPins<W, N> {
    /// `top` connected, checked and settled.
    pub fn new(top: SwitchTop<W, N>) -> Result<Self, DriveError> {
        Ok(HdlPins {
            driver: CycleDriver::new(top, |b| &mut b.clock)?,
        })
    }
}

impl<const W: usize, const N: usize> SwitchPins for HdlPins<W, N> {
    fn ports(&self) -> usize {
        N
    }

    fn payload_bits(&self) -> usize {
        W
    }

    fn cycles(&self) -> u64 {
        self.driver.cycles()
    }

    fn open_egress(&mut self) {
        open_egress_of(self.driver.block());
    }

    fn offer(&mut self, port: usize, beat: Option<&Beat>) {
        offer_at(self.driver.block(), port, beat);
    }

    fn csr(&mut self, address: u32, write: Option<u32>, read: bool) {
        let csr = &mut self.driver.block().csr;
        csr.address.next = address.to_bits();
        csr.write.next = write.is_some();
        csr.write_data.next = write.unwrap_or(0).to_bits();
        csr.read.next = read;
    }

    fn settle(&mut self) -> Result<(), DriveError> {
        self.driver.settle()
    }

    fn tick(&mut self) -> Result<(), DriveError> {
        self.driver.tick()
    }

    fn ingress_ready(&self, port: usize) -> bool {
        self.top().ingress[port].ready.val()
    }

    fn observe(&self, port: usize) -> PortEvents {
        let top = self.top();
        let header = [
            top.cpu_dw0[port].val().to_u32(),
            top.cpu_dw1[port].val().to_u32(),
            top.cpu_dw2[port].val().to_u32(),
            top.cpu_dw3[port].val().to_u32(),
        ];
        PortEvents {
            to_cpu: top.to_cpu[port].val().then_some(header),
            copied_to_cpu: top.copy_to_cpu[port].val().then_some(header),
            ingress_drop: top.ingress_dropped[port]
                .val()
                .then(|| top.ingress_drop_reason[port].val().to_u32()),
            egress_drop: top.egress_dropped[port]
                .val()
                .then(|| top.egress_drop_reason[port].val().to_u32()),
        }
    }

    fn egress_beat(&self, port: usize, payload: &mut Vec<u32>) -> Option<EgressBeat> {
        let source = &self.top().egress[port];
        if !source.valid.val() {
            return None;
        }
        let bus = source.payload.val();
        payload.extend((0..W / 32).map(|k| bus.get_bits::<32>(W - 32 * (k + 1)).to_u32()));
        Some(EgressBeat {
            header: [
                source.dw0.val().to_u32(),
                source.dw1.val().to_u32(),
                source.dw2.val().to_u32(),
                source.dw3.val().to_u32(),
            ],
            eop: source.eop.val(),
            empty: source.empty.val().to_u64() as usize,
            nullify: source.nullify.val(),
        })
    }

    fn csr_answer(&self) -> Option<u32> {
        let csr = &self.top().csr;
        csr.read_valid.val().then(|| csr.read_data.val().to_u32())
    }
}

impl<const W: usize, const N: usize> HdlPins<W, N> {
    /// The block, to read outputs (`CycleDriver::block` wants `&mut`).
    fn top(&self) -> &SwitchTop<W, N> {
        self.driver.block_ref()
    }

    /// The block as it is now (its tables programmed, its queues as they
    /// are), for instance to run it on in rust-hdl's `Simulation`.
    pub fn into_top(self) -> SwitchTop<W, N> {
        self.driver.into_block()
    }
}

/// Makes every egress of `top` ready and gives every credit
/// ([`SwitchPins::open_egress`] on the block itself, whatever drives it).
pub fn open_egress_of<const W: usize, const N: usize>(top: &mut SwitchTop<W, N>) {
    let all = (1u64 << N) - 1;
    top.egress_credit_posted.next = all.into();
    top.egress_credit_non_posted.next = all.into();
    top.egress_credit_completion.next = all.into();
    for egress in &mut top.egress {
        egress.ready.next = true;
    }
}

/// Offers `beat` at `top`'s ingress `port`, or nothing (`valid` low)
/// ([`SwitchPins::offer`] on the block itself, whatever drives it).
pub fn offer_at<const W: usize, const N: usize>(
    top: &mut SwitchTop<W, N>,
    port: usize,
    beat: Option<&Beat>,
) {
    let sink = &mut top.ingress[port];
    let Some(beat) = beat else {
        sink.valid.next = false;
        return;
    };
    let mut bus = Bits::<W>::default();
    for (k, dw) in beat.payload.iter().enumerate() {
        bus.set_bits::<32>(W - 32 * (k + 1), u64::from(*dw).into());
    }
    sink.valid.next = true;
    sink.sop.next = beat.sop;
    sink.eop.next = beat.eop;
    sink.empty.next = (beat.empty as u64).into();
    sink.payload.next = bus;
    sink.dw0.next = beat.header[0].to_bits();
    sink.dw1.next = beat.header[1].to_bits();
    sink.dw2.next = beat.header[2].to_bits();
    sink.dw3.next = beat.header[3].to_bits();
}
