//! The whole switch's RTL carrying TLPs for a program: a TLP in as wire
//! bytes, what it became out, and how many clock cycles it took.
//!
//! [`Harness`] drives [`SwitchTop`]'s pins ([`SwitchPins`]): in rust-hdl's
//! simulator with the single-thread `CycleDriver` ([`TopHarness`]), or
//! Verilated (`crate::top_verilated`). [`Harness::carry`] offers one TLP at an ingress
//! port, beat by beat on weft's TLP stream (header DWs beside the payload,
//! the first payload DW in the bus's most significant bits, `empty` DWs
//! unused in the last beat), with every egress link ready and every
//! credit given, and clocks the switch until the TLP has been taken and
//! nothing has moved for [`QUIET_CYCLES`]. It returns every TLP that left
//! an egress (as wire bytes), every header the ingress sent to the
//! management CPU, and every drop with its reason. The CSR bus is a
//! [`CsrBus`], so the firmware's own `CsrDataPlane` programs the tables.
//!
//! [`Harness::carry`] measures what one TLP does in an otherwise idle
//! switch (its latency, where it goes); [`Harness::carry_all`] offers
//! TLPs on every port at once, each port's back to back, for how they
//! share the crossbar (the `top-bench` benchmark).

use weft_regs::driver::CsrBus;

use crate::driver::DriveError;
use crate::top::SwitchTop;
use crate::top_pins::{Beat, HdlPins, SwitchPins};
use crate::top_verilated::{VerilatedError, VerilatedSwitch};

/// Cycles with nothing moving after which a carried TLP's effects are over:
/// more than the ingress decision (2 cycles), the core's queue and crossbar
/// and the egress stages take on an idle switch.
pub const QUIET_CYCLES: u64 = 8;

/// Cycles [`TopHarness::carry`] waits at most for a TLP to be taken and its
/// effects to end before it gives up: a switch that takes longer is stuck.
pub const MAX_CARRY_CYCLES: u64 = 10_000;

/// What one TLP did in the switch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Carried {
    /// TLPs that left, as (egress port, wire bytes, cycle its first beat
    /// left, counted from the first cycle of the run, in which the first
    /// TLP's first beat is offered), in the order they left.
    pub egress: Vec<(usize, Vec<u8>, u64)>,
    /// TLPs that left void (`nullify` on their last beat, `crate::stream`),
    /// which their link partner discards, as `egress` lists those that left whole.
    pub nullified: Vec<(usize, Vec<u8>, u64)>,
    /// Headers sent to the management CPU (`to_cpu`), by ingress port.
    pub to_cpu: Vec<(usize, [u32; 4])>,
    /// Headers copied to the CPU beside forwarding (`copy_to_cpu`).
    pub copied_to_cpu: Vec<(usize, [u32; 4])>,
    /// Drops, as (port, reason index in weft-model's `DropReason::ALL`).
    pub drops: Vec<(usize, u32)>,
    /// Cycles from the first beat offered to the last thing that moved.
    pub cycles: u64,
    /// Per ingress port: the cycle its last offered beat was taken (0 if it
    /// was offered nothing); until then the port had a beat waiting.
    pub offered_until: Vec<u64>,
}

/// Why a TLP could not be carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CarryError {
    /// The switch has no such port.
    NoSuchPort(usize),
    /// The bytes are not a TLP with a 3 or 4 DW header and whole DWs.
    NotATlp,
    /// The switch did not take the TLP, or kept moving, for [`MAX_CARRY_CYCLES`]
    /// (beyond the cycles it was asked to run).
    Stuck,
    /// The RTL did not settle.
    Drive(DriveError),
}

impl From<DriveError> for CarryError {
    fn from(error: DriveError) -> Self {
        CarryError::Drive(error)
    }
}

/// A TLP leaving an egress: its header, the payload DWs so far, and the
/// cycle its first beat left.
type Leaving = ([u32; 4], Vec<u32>, u64);

/// A TLP offered at an ingress: its header DWs and payload DWs.
type Offer = ([u32; 4], Vec<u32>);

/// The switch's RTL behind its pins: `P` is rust-hdl's block
/// ([`HdlPins`]) or a Verilated copy of its Verilog
/// ([`crate::top_verilated::VerilatedPins`]), or either chosen at run time
/// (`dyn SwitchPins`); the harness drives them alike.
pub struct Harness<P: SwitchPins + ?Sized> {
    pins: Box<P>,
}

/// The switch's RTL, `N` ports of `W`-bit payload, in rust-hdl's simulator.
pub type TopHarness<const W: usize, const N: usize> = Harness<HdlPins<W, N>>;

impl<const W: usize, const N: usize> Harness<HdlPins<W, N>> {
    /// The switch at reset, connected and settled.
    ///
    /// The block is large: in a debug build its construction wants a
    /// thread stack of tens of MiB.
    pub fn new() -> Result<Self, DriveError> {
        Self::with_top(SwitchTop::default())
    }

    /// `top` at reset, connected and settled: a switch made otherwise
    /// than by default, such as [`SwitchTop::with_clock_mhz`]'s.
    pub fn with_top(top: SwitchTop<W, N>) -> Result<Self, DriveError> {
        Ok(Harness {
            pins: Box::new(HdlPins::new(top)?),
        })
    }

    /// The block as the harness leaves it ([`HdlPins::into_top`]).
    pub fn into_top(self) -> SwitchTop<W, N> {
        self.pins.into_top()
    }
}

impl<P: SwitchPins + ?Sized> Harness<P> {
    /// The harness on `pins`, which are at reset and settled.
    pub fn on(pins: Box<P>) -> Self {
        Harness { pins }
    }

    /// Clock cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.pins.cycles()
    }

    /// Offers `bytes` at ingress `port` and runs the switch until it has
    /// taken them and nothing has moved for [`QUIET_CYCLES`].
    pub fn carry(&mut self, port: usize, bytes: &[u8]) -> Result<Carried, CarryError> {
        if port >= self.pins.ports() {
            return Err(CarryError::NoSuchPort(port));
        }
        let mut tlps = vec![Vec::new(); port + 1];
        tlps[port].push(bytes.to_vec());
        self.carry_all(&tlps)
    }

    /// Offers `tlps[p]` at ingress `p`, for every port at once, each
    /// port's back to back in order (a TLP's first beat in the cycle after
    /// the last one's last beat is taken), and runs the switch until all
    /// are taken and nothing has moved for [`QUIET_CYCLES`].
    pub fn carry_all(&mut self, tlps: &[Vec<Vec<u8>>]) -> Result<Carried, CarryError> {
        let ports = self.pins.ports();
        if tlps.len() > ports {
            return Err(CarryError::NoSuchPort(tlps.len() - 1));
        }
        let mut offers = vec![Vec::new(); ports];
        for (port, sent) in tlps.iter().enumerate() {
            for bytes in sent {
                offers[port].push(split(bytes).ok_or(CarryError::NotATlp)?);
            }
        }
        self.run(offers, 0)
    }

    /// Runs the switch with nothing arriving for at least `cycles`, and
    /// until nothing has moved for [`QUIET_CYCLES`]: what it sends on its
    /// own, such as the completions an outstanding-request table's sweep
    /// owes for abandoned requests (one whole sweep takes
    /// `capacity::OUTSTANDING_PER_HOST` cycles).
    pub fn idle(&mut self, cycles: u64) -> Result<Carried, CarryError> {
        self.run(vec![Vec::new(); self.pins.ports()], cycles)
    }

    /// Offers each port's TLPs of `offers` (header DWs, payload DWs) back
    /// to back, and clocks the switch for at least `at_least` cycles,
    /// until every offer is taken and nothing has moved for [`QUIET_CYCLES`].
    fn run(&mut self, offers: Vec<Vec<Offer>>, at_least: u64) -> Result<Carried, CarryError> {
        let ports = self.pins.ports();
        let dws_per_beat = self.pins.payload_bits() / 32;
        let beats = |payload: &[u32]| payload.len().div_ceil(dws_per_beat).max(1);
        let mut carried = Carried {
            offered_until: vec![0; ports],
            ..Carried::default()
        };
        // Per port: the TLP offered and its next beat.
        let mut next = vec![(0usize, 0usize); ports];
        let mut receiving: Vec<Option<Leaving>> = vec![None; ports];
        let mut quiet = 0;
        let mut payload = Vec::with_capacity(dws_per_beat);
        self.pins.open_egress();
        for cycle in 0..at_least + MAX_CARRY_CYCLES {
            let mut moved = false;
            for (port, &(tlp, beat)) in next.iter().enumerate() {
                let Some((header, payload)) = offers[port].get(tlp) else {
                    self.pins.offer(port, None);
                    continue;
                };
                moved = true;
                let last = beat + 1 == beats(payload);
                let start = (beat * dws_per_beat).min(payload.len());
                let chunk = &payload[start..(start + dws_per_beat).min(payload.len())];
                self.pins.offer(
                    port,
                    Some(&Beat {
                        header: *header,
                        payload: chunk,
                        sop: beat == 0,
                        eop: last,
                        empty: if last { dws_per_beat - chunk.len() } else { 0 },
                    }),
                );
            }
            self.pins.settle()?;
            for (port, (tlp, beat)) in next.iter_mut().enumerate() {
                let Some((_, payload)) = offers[port].get(*tlp) else {
                    continue;
                };
                if self.pins.ingress_ready(port) {
                    carried.offered_until[port] = cycle;
                    *beat += 1;
                    if *beat == beats(payload) {
                        (*tlp, *beat) = (*tlp + 1, 0);
                    }
                }
            }
            for (i, leaving) in receiving.iter_mut().enumerate() {
                let seen = self.pins.observe(i);
                if let Some(header) = seen.to_cpu {
                    carried.to_cpu.push((i, header));
                    moved = true;
                }
                if let Some(header) = seen.copied_to_cpu {
                    carried.copied_to_cpu.push((i, header));
                }
                for reason in [seen.ingress_drop, seen.egress_drop].into_iter().flatten() {
                    carried.drops.push((i, reason));
                    moved = true;
                }
                payload.clear();
                let Some(out) = self.pins.egress_beat(i, &mut payload) else {
                    continue;
                };
                moved = true;
                let open = leaving.get_or_insert_with(|| (out.header, Vec::new(), cycle));
                let used = if out.eop {
                    dws_per_beat - out.empty.min(dws_per_beat)
                } else {
                    dws_per_beat
                };
                open.1.extend_from_slice(&payload[..used]);
                if out.eop {
                    if let Some((header, payload, started)) = leaving.take() {
                        let left = if out.nullify {
                            &mut carried.nullified
                        } else {
                            &mut carried.egress
                        };
                        left.push((i, wire(header, &payload), started));
                    }
                }
            }
            self.pins.tick()?;
            if moved {
                quiet = 0;
                carried.cycles = cycle + 1;
            } else {
                quiet += 1;
            }
            if next
                .iter()
                .zip(&offers)
                .all(|((tlp, _), offered)| *tlp == offered.len())
                && quiet >= QUIET_CYCLES
                && cycle + 1 >= at_least
                && receiving.iter().all(Option::is_none)
            {
                return Ok(carried);
            }
        }
        Err(CarryError::Stuck)
    }
}

/// Register accesses on the switch's CSR bus (one cycle with `write` or
/// `read` high, the answer sampled after it: `crate::csr`'s protocol); an
/// address no register answers reads 0.
impl<P: SwitchPins + ?Sized> CsrBus for Harness<P> {
    fn write32(&mut self, address: u32, value: u32) {
        // The block settled when it was built; it settles again on every cycle.
        self.pins.csr(address, Some(value), false);
        let _ = self.pins.tick();
        self.pins.csr(address, None, false);
    }

    fn read32(&mut self, address: u32) -> u32 {
        self.pins.csr(address, None, true);
        let answer = self.pins.tick().and_then(|()| {
            self.pins.csr(address, None, false);
            self.pins.settle()
        });
        answer.ok().and(self.pins.csr_answer()).unwrap_or(0)
    }
}

/// A TLP's header DWs (a 3 DW header's fourth 0) and the DWs after it.
fn split(bytes: &[u8]) -> Option<([u32; 4], Vec<u32>)> {
    let first = *bytes.first()?;
    // Fmt bit 0 (byte 0 bit 5): a 4 DW header (PCIe Base 6.0 §2.2.1).
    let header_len = if first & 0x20 != 0 { 16 } else { 12 };
    if bytes.len() < header_len || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let dws: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut header = [0; 4];
    header[..header_len / 4].copy_from_slice(&dws[..header_len / 4]);
    Some((header, dws[header_len / 4..].to_vec()))
}

/// Wire bytes of a TLP that left with `header` and `payload`.
fn wire(header: [u32; 4], payload: &[u32]) -> Vec<u8> {
    // Fmt bit 0 of DW0 (bit 29): a 4 DW header.
    let header_dws = if header[0] & 1 << 29 != 0 { 4 } else { 3 };
    header[..header_dws]
        .iter()
        .chain(payload)
        .flat_map(|dw| dw.to_be_bytes())
        .collect()
}

/// Payload bits of [`SimulatorTop`]: a quarter of the reference's 512, for speed.
pub const SIMULATOR_PAYLOAD_BITS: usize = 128;

/// DWs of payload and digest one TLP may carry through [`SimulatorTop`]:
/// one switching slot of its payload bus (256 bytes); longer TLPs are
/// Malformed there (weft-model's `Switch::set_slot_dw`).
pub const SIMULATOR_SLOT_DW: usize = crate::switching::SLOT_BEATS * SIMULATOR_PAYLOAD_BITS / 32;

/// Ports of [`SimulatorTop`]: the reference's 8, which any simulated switch fits.
pub const SIMULATOR_PORTS: usize = 8;

/// The switch the system simulator carries TLPs through: `SwitchTop` of
/// [`SIMULATOR_PORTS`] ports of [`SIMULATOR_PAYLOAD_BITS`], in rust-hdl's
/// simulator or Verilated, behind one harness. Not generic, so that its
/// code is built in this crate, with this crate's optimization (the
/// workspace builds weft-hdl optimized in tests): a generic harness
/// instantiated by the simulator would be built at the simulator's.
pub struct SimulatorTop(Harness<dyn SwitchPins + Send>);

impl SimulatorTop {
    /// The switch at reset in rust-hdl's simulator ([`TopHarness::new`]).
    pub fn new() -> Result<Self, DriveError> {
        let pins = HdlPins::<SIMULATOR_PAYLOAD_BITS, SIMULATOR_PORTS>::new(SwitchTop::default())?;
        Ok(SimulatorTop(Harness::on(Box::new(pins))))
    }

    /// The Verilated build of the simulator's switch
    /// ([`VerilatedSwitch::build`]: built under `cache` once, which takes
    /// minutes; `progress` hears how far), for [`SimulatorTop::verilated`].
    pub fn build_verilated(
        cache: &std::path::Path,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<VerilatedSwitch, VerilatedError> {
        VerilatedSwitch::build::<SIMULATOR_PAYLOAD_BITS, SIMULATOR_PORTS>(cache, progress)
    }

    /// The switch at reset, an instance of `build`.
    pub fn verilated(build: &VerilatedSwitch) -> Result<Self, VerilatedError> {
        let pins = build.instance()?;
        Ok(SimulatorTop(Harness::on(Box::new(pins))))
    }

    /// Clock cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.0.cycles()
    }

    /// [`Harness::carry`].
    pub fn carry(&mut self, port: usize, bytes: &[u8]) -> Result<Carried, CarryError> {
        self.0.carry(port, bytes)
    }

    /// [`Harness::idle`].
    pub fn idle(&mut self, cycles: u64) -> Result<Carried, CarryError> {
        self.0.idle(cycles)
    }
}

impl CsrBus for SimulatorTop {
    fn write32(&mut self, address: u32, value: u32) {
        self.0.write32(address, value);
    }

    fn read32(&mut self, address: u32) -> u32 {
        self.0.read32(address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::on_big_stack;
    use weft_regs::driver::CsrDataPlane;
    use weft_regs::tables::{DataPlane, Destination, PortIndex, PortRole};

    #[test]
    fn tlps_offered_on_several_ports_at_once_all_leave_each_flow_in_order() {
        on_big_stack(|| {
            // Four fabric ports; bus b + 1 routes to port b, so completions
            // to requester bus 3 leave by port 2 and to bus 4 by port 3.
            let mut top = TopHarness::<128, 4>::new().expect("well formed");
            let mut plane = CsrDataPlane::new(&mut top).expect("a weft data plane");
            for p in 0..4u8 {
                plane
                    .set_port_role(PortIndex(p), PortRole::Fabric)
                    .expect("exists");
                plane
                    .set_bus_route(p + 1, Some(Destination::Port(PortIndex(p))))
                    .expect("exists");
            }
            // CplD of `dws` DWs (PCIe Base 6.0 §2.2.9) to requester bus `bus`, tag `tag`.
            let completion = |bus: u32, tag: u32, dws: u32| -> Vec<u8> {
                [
                    0x4a00_0000 | dws,
                    0x0100_0000 | (dws * 4),
                    bus << 24 | tag << 8,
                    0,
                ]
                .into_iter()
                .take(3)
                .chain((0..dws).map(|k| (k * 0x0101_0101) ^ tag))
                .flat_map(u32::to_be_bytes)
                .collect()
            };
            let from_0 = vec![
                completion(3, 1, 9),
                completion(4, 2, 1),
                completion(3, 3, 4),
            ];
            let from_1 = vec![completion(3, 4, 2), completion(4, 5, 12)];
            let carried = top
                .carry_all(&[from_0.clone(), from_1.clone()])
                .expect("carried");
            let out_of = |port: usize| -> Vec<Vec<u8>> {
                carried
                    .egress
                    .iter()
                    .filter(|(p, _, _)| *p == port)
                    .map(|(_, bytes, _)| bytes.clone())
                    .collect()
            };
            let from = |sent: &[Vec<u8>], bus: u8| -> Vec<Vec<u8>> {
                sent.iter().filter(|b| b[8] == bus).cloned().collect()
            };
            for (port, bus) in [(2, 3), (3, 4)] {
                let got = out_of(port);
                assert_eq!(
                    got.len(),
                    from(&from_0, bus).len() + from(&from_1, bus).len()
                );
                // Each ingress's completions to one egress keep their order (§2.4.1).
                for sent in [&from_0, &from_1] {
                    let want = from(sent, bus);
                    let kept: Vec<_> = got.iter().filter(|b| want.contains(b)).cloned().collect();
                    assert_eq!(kept, want, "egress {port}");
                }
            }
            assert!(carried.drops.is_empty(), "{:?}", carried.drops);
        });
    }
}
