//! A traffic driver for the switching core: offers TLPs at its ingresses, collects them at its egresses.
//!
//! Tests and the benchmark use it with the single-thread [`CycleDriver`].
//! It behaves as the link layers around the core would: an ingress offers
//! the oldest waiting TLP whose class the core has room for (a link
//! partner sends only what it has credits for, and may send posted
//! requests past credit-blocked ones); an egress takes beats when its
//! `ready` pattern says so and grants credits per class as its `credit`
//! pattern says. It checks the stream framing and the credit rule as it
//! goes and records what entered and left, in order, with cycle stamps.

use std::collections::VecDeque;

use rust_hdl::prelude::*;

use super::{SwitchCore, CLASS_COMPLETION, CLASS_NON_POSTED, CLASS_POSTED};
use crate::driver::{CycleDriver, DriveError};

/// One TLP to send: header DWs, payload DWs, and where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestTlp {
    /// Unique id, to find the TLP again at the egress.
    pub id: u64,
    /// Egress port index.
    pub egress: usize,
    /// Class code ([`CLASS_POSTED`] and so on).
    pub class: u64,
    /// Header DWs in wire order.
    pub header: [u32; 4],
    /// Payload DWs in wire order.
    pub payload: Vec<u32>,
}

/// A TLP as an egress sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Departure {
    /// Header DWs.
    pub header: [u32; 4],
    /// Payload DWs.
    pub payload: Vec<u32>,
    /// Cycle of its first beat.
    pub sop_cycle: u64,
}

/// A TLP as an ingress took it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The TLP.
    pub tlp: TestTlp,
    /// Cycle its first beat was taken.
    pub sop_cycle: u64,
}

/// What the environment does each cycle, per port.
pub struct Environment {
    /// Whether egress `e` takes a beat in `cycle`.
    pub ready: Box<dyn FnMut(u64, usize) -> bool>,
    /// Whether egress `e`'s link partner has credit for class code `c` in `cycle`.
    pub credit: Box<dyn FnMut(u64, usize, u64) -> bool>,
    /// Whether ingress `i` offers a beat in `cycle` (when it has one).
    pub offer: Box<dyn FnMut(u64, usize) -> bool>,
}

impl Environment {
    /// Every port always ready, every credit always there.
    pub fn unconstrained() -> Self {
        Environment {
            ready: Box::new(|_, _| true),
            credit: Box::new(|_, _, _| true),
            offer: Box::new(|_, _| true),
        }
    }
}

/// Something the core did that its interface forbids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// A beat left an egress without sop while no TLP was open, or with sop inside one.
    Framing {
        /// The egress.
        egress: usize,
        /// The cycle.
        cycle: u64,
    },
    /// A TLP was committed to an egress whose partner had no credit for its class.
    NoCredit {
        /// The egress.
        egress: usize,
        /// The class code.
        class: u64,
        /// The cycle.
        cycle: u64,
    },
    /// The run did not finish: TLPs stayed in the switch.
    Stuck {
        /// TLPs still waiting or inside.
        remaining: usize,
    },
    /// The driver failed.
    Drive(DriveError),
}

/// Drives a [`SwitchCore`] with queued TLPs and records the run.
pub struct Traffic<const W: usize, const N: usize> {
    driver: CycleDriver<SwitchCore<W, N>>,
    environment: Environment,
    waiting: Vec<VecDeque<TestTlp>>,
    sending: Vec<Option<(TestTlp, usize)>>,
    receiving: Vec<Option<Departure>>,
    /// Per ingress, the TLPs taken, in order.
    pub arrivals: Vec<Vec<Arrival>>,
    /// Per egress, the TLPs sent, in order.
    pub departures: Vec<Vec<Departure>>,
    /// Per egress and class code, TLPs committed (credit consume pulses).
    pub consumed: Vec<[u64; 3]>,
    /// Per egress, the data DWs the consume pulses announced.
    pub consumed_dws: Vec<u64>,
}

/// Payload DWs per beat of a `W`-bit bus.
const fn dws_per_beat(w: usize) -> usize {
    w / 32
}

impl<const W: usize, const N: usize> Traffic<W, N> {
    /// A fresh core in `environment`.
    pub fn new(environment: Environment) -> Result<Self, DriveError> {
        Ok(Traffic {
            driver: CycleDriver::new(SwitchCore::default(), |core| &mut core.clock)?,
            environment,
            waiting: vec![VecDeque::new(); N],
            sending: vec![None; N],
            receiving: vec![None; N],
            arrivals: vec![Vec::new(); N],
            departures: vec![Vec::new(); N],
            consumed: vec![[0; 3]; N],
            consumed_dws: vec![0; N],
        })
    }

    /// Queues `tlp` at ingress `ingress`.
    pub fn send(&mut self, ingress: usize, tlp: TestTlp) {
        self.waiting[ingress].push_back(tlp);
    }

    /// TLPs queued at the ingresses or in flight.
    pub fn in_flight(&self) -> usize {
        let queued: usize = self.waiting.iter().map(VecDeque::len).sum();
        let entered: usize = self.arrivals.iter().map(Vec::len).sum();
        let left: usize = self.departures.iter().map(Vec::len).sum();
        let unstarted = self
            .sending
            .iter()
            .flatten()
            .filter(|(_, beat)| *beat == 0)
            .count();
        queued + unstarted + entered - left
    }

    /// Clock cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.driver.cycles()
    }

    /// TLPs waiting at ingress `ingress`.
    pub fn waiting(&self, ingress: usize) -> usize {
        self.waiting[ingress].len()
    }

    /// Runs until every queued TLP has left or `limit` cycles have passed since the call.
    pub fn run_until_drained(&mut self, limit: u64) -> Result<(), ProtocolError> {
        let end = self.cycles() + limit;
        while self.in_flight() > 0 {
            if self.cycles() >= end {
                return Err(ProtocolError::Stuck {
                    remaining: self.in_flight(),
                });
            }
            self.step()?;
        }
        Ok(())
    }

    /// Runs one clock cycle.
    pub fn step(&mut self) -> Result<(), ProtocolError> {
        let cycle = self.cycles();
        // Ingress: pick a TLP to start (oldest whose class has room), present a beat.
        let mut offering = [false; N];
        for (i, offered) in offering.iter_mut().enumerate() {
            if self.sending[i].is_none() {
                let space = self.driver.block().ingress_space[i].val().to_u64();
                let pick = self.waiting[i]
                    .iter()
                    .position(|tlp| space >> tlp.class & 1 == 1);
                if let Some(index) = pick {
                    let tlp = self.waiting[i].remove(index).expect("index from position");
                    self.sending[i] = Some((tlp, 0));
                }
            }
            *offered = self.sending[i].is_some() && (self.environment.offer)(cycle, i);
            let core = self.driver.block();
            core.ingress[i].valid.next = *offered;
            if let Some((tlp, beat)) = &self.sending[i] {
                present(core, i, tlp, *beat);
            }
        }
        let mut credit = [0u64; 3];
        for e in 0..N {
            for class in [CLASS_POSTED, CLASS_NON_POSTED, CLASS_COMPLETION] {
                if (self.environment.credit)(cycle, e, class) {
                    credit[class as usize] |= 1 << e;
                }
            }
            self.driver.block().egress[e].ready.next = (self.environment.ready)(cycle, e);
        }
        let core = self.driver.block();
        core.egress_credit_posted.next = credit[CLASS_POSTED as usize].into();
        core.egress_credit_non_posted.next = credit[CLASS_NON_POSTED as usize].into();
        core.egress_credit_completion.next = credit[CLASS_COMPLETION as usize].into();
        self.driver.settle().map_err(ProtocolError::Drive)?;

        // Record handshakes.
        for (i, &offered) in offering.iter().enumerate() {
            let taken = offered && self.driver.block().ingress[i].ready.val();
            if !taken {
                continue;
            }
            let (tlp, beat) = self.sending[i].take().expect("offered implies sending");
            if beat == 0 {
                self.arrivals[i].push(Arrival {
                    tlp: tlp.clone(),
                    sop_cycle: cycle,
                });
            }
            if beat + 1 < beats(&tlp, W) {
                self.sending[i] = Some((tlp, beat + 1));
            }
        }
        for e in 0..N {
            let core = self.driver.block();
            let consume = core.egress_consume[e].val().to_u64();
            let dws = core.egress_consume_dws[e].val().to_u64();
            for class in 0..3u64 {
                if consume >> class & 1 == 1 {
                    if credit[class as usize] >> e & 1 == 0 {
                        return Err(ProtocolError::NoCredit {
                            egress: e,
                            class,
                            cycle,
                        });
                    }
                    self.consumed[e][class as usize] += 1;
                    self.consumed_dws[e] += dws;
                }
            }
            let port = &core.egress[e];
            if !(port.valid.val() && port.ready.val()) {
                continue;
            }
            let sop = port.sop.val();
            let eop = port.eop.val();
            let empty = port.empty.val().to_u64() as usize;
            let header = [
                port.dw0.val().to_u32(),
                port.dw1.val().to_u32(),
                port.dw2.val().to_u32(),
                port.dw3.val().to_u32(),
            ];
            let payload = port.payload.val();
            if sop == self.receiving[e].is_some() {
                return Err(ProtocolError::Framing { egress: e, cycle });
            }
            let open = self.receiving[e].get_or_insert_with(|| Departure {
                header,
                payload: Vec::new(),
                sop_cycle: cycle,
            });
            let full = dws_per_beat(W);
            let used = if eop { full - empty.min(full) } else { full };
            open.payload.extend((0..used).map(|k| dw_of(&payload, k)));
            if eop {
                let done = self.receiving[e].take().expect("opened above");
                self.departures[e].push(done);
            }
        }
        self.driver.tick().map_err(ProtocolError::Drive)
    }
}

/// Beats `tlp` takes on a `w`-bit bus: its payload, or one for a header alone.
pub fn beats(tlp: &TestTlp, w: usize) -> usize {
    tlp.payload.len().div_ceil(dws_per_beat(w)).max(1)
}

/// Payload DW `k` of a beat: DW 0 is the most significant.
fn dw_of<const W: usize>(payload: &Bits<W>, k: usize) -> u32 {
    payload.get_bits::<32>(W - 32 * (k + 1)).to_u32()
}

fn present<const W: usize, const N: usize>(
    core: &mut SwitchCore<W, N>,
    ingress: usize,
    tlp: &TestTlp,
    beat: usize,
) {
    let per_beat = dws_per_beat(W);
    let total = beats(tlp, W);
    let port = &mut core.ingress[ingress];
    port.sop.next = beat == 0;
    port.eop.next = beat + 1 == total;
    let chunk: Vec<u32> = tlp
        .payload
        .iter()
        .copied()
        .skip(beat * per_beat)
        .take(per_beat)
        .collect();
    port.empty.next = if beat + 1 == total {
        ((per_beat - chunk.len()) as u64).into()
    } else {
        0u64.into()
    };
    let mut payload = Bits::<W>::default();
    for (k, dw) in chunk.iter().enumerate() {
        payload.set_bits::<32>(W - 32 * (k + 1), u64::from(*dw).into());
    }
    port.payload.next = payload;
    port.dw0.next = u64::from(tlp.header[0]).into();
    port.dw1.next = u64::from(tlp.header[1]).into();
    port.dw2.next = u64::from(tlp.header[2]).into();
    port.dw3.next = u64::from(tlp.header[3]).into();
    core.ingress_egress[ingress].next = (tlp.egress as u64).into();
    core.ingress_class[ingress].next = tlp.class.into();
}
