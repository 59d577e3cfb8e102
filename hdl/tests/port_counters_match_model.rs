//! The RTL counters count as weft-model's `PortCounters` and read as its
//! `CsrWindow` reads them.
//!
//! The property drives every port's [`PortCounters`] and the one
//! [`CounterControl`] as the switch wires them: one CSR bus offered to all
//! (at most one may answer) and `CounterControl::clear`'s bit `p` into
//! port `p`'s `clear`. Each cycle every port may receive, send, drop at
//! its ingress and at its egress, and stall, all at once, while the bus
//! reads a counter's `VALUE_LOW` or `VALUE_HIGH`, writes `CLEAR`, or
//! touches an address nobody answers. The reference is one model
//! `PortCounters` per port, counting with `Traffic::count` and
//! `PortCounters::drop` from the count the port started at (counters
//! start near the carry out of bit 31 and near the wrap at 2^64, where
//! 64-bit counts kept in 32-bit halves go wrong), read in the register
//! map's entry order (`PortCounters::entry`) with the model's capture
//! rule: `VALUE_LOW` captures that counter's bits 63:32 for its `VALUE_HIGH`.
//!
//! A read answers the counts before its clock edge, and a clear zeroes a
//! port's counters before the events of its cycle (the rule of
//! `weft_hdl::counters`), so the reference answers a cycle's read, then
//! clears, then counts.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::counters::{CounterControl, PortCounters, COUNTERS, PORTS, WIRE_BYTES_BITS};
use weft_hdl::driver::CycleDriver;
use weft_hdl::switching::{CLASS_COMPLETION, CLASS_NON_POSTED, CLASS_POSTED};
use weft_hdl::translate::host_ingress::DROP_REASON_BITS;
use weft_model::isolation::DropReason;
use weft_model::PortCounters as ModelCounters;
use weft_pcie::tlp::FlowControlClass;
use weft_regs::csr::{counter, counter_control};

/// Cases of the property: each runs all ports for [`CYCLES`] cycles.
const CASES: u32 = 32;
/// Cycles per case.
const CYCLES: usize = 96;

/// One TLP sent or received: its class code and its bytes on the wire.
#[derive(Clone, Copy, Debug)]
struct Tlp {
    class: u64,
    bytes: u32,
}

/// What happens at one port in one cycle.
#[derive(Clone, Copy, Debug, Default)]
struct Events {
    received: Option<Tlp>,
    sent: Option<Tlp>,
    /// Drop reason codes, including the unused codes above the last reason.
    ingress_drop: Option<u32>,
    egress_drop: Option<u32>,
    stall: bool,
}

/// The bus access of one cycle.
#[derive(Clone, Copy, Debug)]
enum Access {
    Idle,
    ReadLow {
        port: u32,
        entry: u32,
    },
    ReadHigh {
        port: u32,
        entry: u32,
    },
    /// `VALUE_HIGH` of the counter whose `VALUE_LOW` was read last.
    ReadHighOfLastLow,
    /// A write to a read-only counter register: nothing happens.
    WriteCounter {
        port: u32,
        entry: u32,
        word: u32,
        value: u32,
    },
    /// `CLEAR` with these bits; those above the ports' mean nothing.
    Clear(u32),
    ReadClear,
    /// Addresses beside the blocks' registers, which nobody answers.
    Stray(u32),
}

fn tlp() -> impl Strategy<Value = Tlp> {
    (
        prop::sample::select(&[CLASS_POSTED, CLASS_NON_POSTED, CLASS_COMPLETION][..]),
        prop_oneof![3 => 12u32..600, 1 => 0u32..1 << WIRE_BYTES_BITS],
    )
        .prop_map(|(class, bytes)| Tlp { class, bytes })
}

fn drop_reason_code() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 0u32..DropReason::ALL.len() as u32, 1 => 0u32..1 << DROP_REASON_BITS]
}

fn events() -> impl Strategy<Value = Events> {
    (
        prop::option::weighted(0.5, tlp()),
        prop::option::weighted(0.5, tlp()),
        prop::option::weighted(0.3, drop_reason_code()),
        prop::option::weighted(0.3, drop_reason_code()),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            |(received, sent, ingress_drop, egress_drop, stall)| Events {
                received,
                sent,
                ingress_drop,
                egress_drop,
                stall,
            },
        )
}

fn access() -> impl Strategy<Value = Access> {
    let port = 0..PORTS as u32;
    let entry = 0..COUNTERS as u32;
    let beside_counters = (0..PORTS as u32)
        .prop_map(|p| counter::LAYOUT.instance_base(p) + counter::LAYOUT.instance_span());
    prop_oneof![
        4 => Just(Access::Idle),
        6 => (port.clone(), entry.clone()).prop_map(|(port, entry)| Access::ReadLow { port, entry }),
        2 => (port.clone(), entry.clone()).prop_map(|(port, entry)| Access::ReadHigh { port, entry }),
        5 => Just(Access::ReadHighOfLastLow),
        1 => (port, entry, 0u32..2, any::<u32>()).prop_map(|(port, entry, word, value)| {
            Access::WriteCounter { port, entry, word, value }
        }),
        1 => prop_oneof![
            any::<u32>(),
            (0..PORTS).prop_map(|p| 1u32 << p),
        ].prop_map(Access::Clear),
        1 => Just(Access::ReadClear),
        1 => prop_oneof![
            beside_counters,
            Just(counter::LAYOUT.base - 4),
            Just(counter_control::CLEAR.address(0, 0) + 4),
        ].prop_map(Access::Stray),
    ]
}

/// A count to start from: zero, or just below the carry out of bit 31 or the wrap at 2^64.
fn start_count() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => Just(0u64),
        2 => (0u64..64).prop_map(|below| (1u64 << 32) - 1 - below),
        2 => (0u64..0x4000).prop_map(|below| (5u64 << 32) - 1 - below),
        2 => (0u64..64).prop_map(|below| u64::MAX - below),
        1 => (0u64..0x4000).prop_map(|below| u64::MAX - below),
        1 => any::<u64>(),
    ]
}

fn class_of(code: u64) -> FlowControlClass {
    match code {
        CLASS_POSTED => FlowControlClass::Posted,
        CLASS_NON_POSTED => FlowControlClass::NonPosted,
        CLASS_COMPLETION => FlowControlClass::Completion,
        other => unreachable!("class code {other} is not drawn"),
    }
}

/// One port as weft-model counts it: the model's counters since `start`.
#[derive(Clone, Debug)]
struct Reference {
    start: [u64; COUNTERS],
    counted: ModelCounters,
}

impl Reference {
    fn count(&self, entry: u32) -> u64 {
        let counted = self.counted.entry(entry).expect("a counter entry");
        self.start[entry as usize].wrapping_add(counted)
    }

    fn clear(&mut self) {
        self.start = [0; COUNTERS];
        self.counted = ModelCounters::default();
    }

    fn apply(&mut self, events: &Events) {
        if let Some(tlp) = events.received {
            self.counted
                .ingress
                .count(class_of(tlp.class), tlp.bytes as usize);
        }
        if let Some(tlp) = events.sent {
            self.counted
                .egress
                .count(class_of(tlp.class), tlp.bytes as usize);
        }
        for code in [events.ingress_drop, events.egress_drop]
            .into_iter()
            .flatten()
        {
            // Codes past the last reason name no counter and count nothing.
            if let Some(reason) = DropReason::ALL.get(code as usize) {
                self.counted.drop(*reason);
            }
        }
        if events.stall {
            self.counted.stall_cycles += 1;
        }
    }
}

/// Sets one port's event inputs for the coming cycle.
fn drive_events(counters: &mut PortCounters, events: &Events) {
    let tlp = |tlp: Option<Tlp>| tlp.unwrap_or(Tlp { class: 0, bytes: 0 });
    let received = tlp(events.received);
    counters.received.next = events.received.is_some();
    counters.received_class.next = received.class.to_bits();
    counters.received_bytes.next = received.bytes.to_bits();
    let sent = tlp(events.sent);
    counters.sent.next = events.sent.is_some();
    counters.sent_class.next = sent.class.to_bits();
    counters.sent_bytes.next = sent.bytes.to_bits();
    counters.ingress_drop.next = events.ingress_drop.is_some();
    counters.ingress_drop_reason.next = events.ingress_drop.unwrap_or(0).to_bits();
    counters.egress_drop.next = events.egress_drop.is_some();
    counters.egress_drop_reason.next = events.egress_drop.unwrap_or(0).to_bits();
    counters.stall.next = events.stall;
}

/// One bus cycle's inputs: address, read, write and write data.
#[derive(Clone, Copy, Debug, Default)]
struct BusCycle {
    address: u32,
    read: bool,
    write: bool,
    data: u32,
}

fn drive_bus(csr: &mut weft_hdl::csr::CsrTarget, bus: BusCycle) {
    csr.address.next = bus.address.to_bits();
    csr.read.next = bus.read;
    csr.write.next = bus.write;
    csr.write_data.next = bus.data.to_bits();
}

/// Every port's counters and the clear register, on one bus.
struct Rtl {
    control: CycleDriver<CounterControl>,
    ports: Vec<CycleDriver<PortCounters>>,
}

impl Rtl {
    fn new(start: &[[u64; COUNTERS]]) -> Self {
        let control =
            CycleDriver::new(CounterControl::new(), |b| &mut b.clock).expect("well formed");
        let ports = (0..PORTS)
            .map(|p| {
                let mut driver = CycleDriver::new(PortCounters::new(p as u32), |b| &mut b.clock)
                    .expect("well formed");
                for (entry, count) in start[p].iter().enumerate() {
                    driver.block().preset(entry, *count);
                }
                driver.settle().expect("settles");
                driver
            })
            .collect();
        Rtl { control, ports }
    }

    /// Runs one cycle and returns the answer to its read, if a block answered.
    fn cycle(&mut self, events: &[Events], bus: BusCycle) -> Option<u32> {
        drive_bus(&mut self.control.block().csr, bus);
        self.control.settle().expect("settles");
        let clear = self.control.block().clear.val();
        for (p, port) in self.ports.iter_mut().enumerate() {
            drive_bus(&mut port.block().csr, bus);
            drive_events(port.block(), &events[p]);
            port.block().clear.next = clear.get_bit(p);
        }
        self.control.tick().expect("settles");
        let mut answers = Vec::new();
        let control = &self.control.block().csr;
        if control.read_valid.val() {
            answers.push(control.read_data.val().to_u32());
        } else {
            assert_eq!(
                control.read_data.val().to_u32(),
                0,
                "an idle target drives 0"
            );
        }
        for port in &mut self.ports {
            port.tick().expect("settles");
            let csr = &port.block().csr;
            if csr.read_valid.val() {
                answers.push(csr.read_data.val().to_u32());
            } else {
                assert_eq!(csr.read_data.val().to_u32(), 0, "an idle target drives 0");
            }
        }
        assert!(
            answers.len() <= 1,
            "several targets answered {bus:x?}: {answers:x?}"
        );
        answers.pop()
    }
}

/// The model's side: every port's reference and the captured high halves.
struct Model {
    ports: Vec<Reference>,
    captured_high: BTreeMap<(u32, u32), u32>,
    last_low: (u32, u32),
}

impl Model {
    /// The bus inputs of `access` and the answer the model gives, before the cycle's events.
    fn access(&mut self, access: Access) -> (BusCycle, Option<u32>) {
        let read = |address| BusCycle {
            address,
            read: true,
            ..BusCycle::default()
        };
        match access {
            Access::Idle => (BusCycle::default(), None),
            Access::ReadLow { port, entry } => {
                let count = self.ports[port as usize].count(entry);
                self.captured_high
                    .insert((port, entry), (count >> 32) as u32);
                self.last_low = (port, entry);
                (
                    read(counter::VALUE_LOW.address(port, entry)),
                    Some(count as u32),
                )
            }
            Access::ReadHigh { port, entry } => (
                read(counter::VALUE_HIGH.address(port, entry)),
                Some(self.captured_high.get(&(port, entry)).copied().unwrap_or(0)),
            ),
            Access::ReadHighOfLastLow => {
                let (port, entry) = self.last_low;
                self.access(Access::ReadHigh { port, entry })
            }
            Access::WriteCounter {
                port,
                entry,
                word,
                value,
            } => {
                let register = [counter::VALUE_LOW, counter::VALUE_HIGH][word as usize];
                let bus = BusCycle {
                    address: register.address(port, entry),
                    write: true,
                    data: value,
                    ..BusCycle::default()
                };
                (bus, None)
            }
            Access::Clear(bits) => {
                let ports = counter_control::CLEAR_PORTS.decode(bits);
                for (p, reference) in self.ports.iter_mut().enumerate() {
                    if ports >> p & 1 == 1 {
                        reference.clear();
                    }
                }
                let bus = BusCycle {
                    address: counter_control::CLEAR.address(0, 0),
                    write: true,
                    data: bits,
                    ..BusCycle::default()
                };
                (bus, None)
            }
            // A write-only register reads 0 (weft-model's `CsrWindow`).
            Access::ReadClear => (read(counter_control::CLEAR.address(0, 0)), Some(0)),
            Access::Stray(address) => (read(address), None),
        }
    }
}

fn run(
    start: Vec<[u64; COUNTERS]>,
    cycles: Vec<(Vec<Events>, Access)>,
) -> Result<(), TestCaseError> {
    let mut rtl = Rtl::new(&start);
    let mut model = Model {
        ports: start
            .iter()
            .map(|start| Reference {
                start: *start,
                counted: ModelCounters::default(),
            })
            .collect(),
        captured_high: BTreeMap::new(),
        last_low: (0, 0),
    };
    for (cycle, (events, access)) in cycles.iter().enumerate() {
        let (bus, expected) = model.access(*access);
        for (reference, events) in model.ports.iter_mut().zip(events) {
            reference.apply(events);
        }
        let answer = rtl.cycle(events, bus);
        prop_assert_eq!(answer, expected, "cycle {}: {:?}", cycle, access);
    }
    // Every counter of every port, LOW then HIGH, with nothing counting.
    let quiet = vec![Events::default(); PORTS];
    for port in 0..PORTS as u32 {
        for entry in 0..COUNTERS as u32 {
            let count = model.ports[port as usize].count(entry);
            for access in [
                Access::ReadLow { port, entry },
                Access::ReadHigh { port, entry },
            ] {
                let (bus, expected) = model.access(access);
                prop_assert_eq!(rtl.cycle(&quiet, bus), expected);
            }
            prop_assert_eq!(
                model.captured_high.get(&(port, entry)).copied(),
                Some((count >> 32) as u32)
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn counters_read_over_the_bus_as_the_model_counts(
        start in prop::collection::vec(prop::array::uniform21(start_count()), PORTS),
        cycles in prop::collection::vec(
            (prop::collection::vec(events(), PORTS), access()),
            CYCLES,
        ),
    ) {
        run(start, cycles)?;
    }
}

/// One port's counters alone, for the directed tests: events, `clear` and
/// a CSR read in one cycle, and the read's answer.
fn step(
    driver: &mut CycleDriver<PortCounters>,
    events: &Events,
    clear: bool,
    read: Option<u32>,
) -> Option<u32> {
    drive_events(driver.block(), events);
    driver.block().clear.next = clear;
    let bus = BusCycle {
        address: read.unwrap_or(0),
        read: read.is_some(),
        ..BusCycle::default()
    };
    drive_bus(&mut driver.block().csr, bus);
    driver.tick().expect("settles");
    let csr = &driver.block().csr;
    csr.read_valid.val().then(|| csr.read_data.val().to_u32())
}

fn port_counters(start: &[(u32, u64)]) -> CycleDriver<PortCounters> {
    let mut driver = CycleDriver::new(PortCounters::new(2), |b| &mut b.clock).expect("well formed");
    for (entry, count) in start {
        driver.block().preset(*entry as usize, *count);
    }
    driver.settle().expect("settles");
    driver
}

fn low(entry: u32) -> Option<u32> {
    Some(counter::VALUE_LOW.address(2, entry))
}

fn high(entry: u32) -> Option<u32> {
    Some(counter::VALUE_HIGH.address(2, entry))
}

#[test]
fn low_then_high_reads_the_count_of_one_instant_across_a_carry_out_of_bit_31() {
    let start = (5u64 << 32) | 0xffff_ff00;
    let mut driver = port_counters(&[(counter::BYTES_IN, start)]);
    let receive = Events {
        received: Some(Tlp {
            class: CLASS_POSTED,
            bytes: 0x180,
        }),
        ..Events::default()
    };
    // The read of LOW sees the count before its edge; the TLP of the same
    // cycle carries into bit 32, but HIGH answers the half captured with LOW.
    assert_eq!(
        step(&mut driver, &receive, false, low(counter::BYTES_IN)),
        Some(0xffff_ff00)
    );
    assert_eq!(
        step(&mut driver, &receive, false, high(counter::BYTES_IN)),
        Some(5)
    );
    // Reading other counters in between leaves the capture alone.
    let quiet = Events::default();
    assert_eq!(
        step(&mut driver, &quiet, false, low(counter::STALL_CYCLES)),
        Some(0)
    );
    assert_eq!(
        step(&mut driver, &quiet, false, high(counter::BYTES_IN)),
        Some(5)
    );
    // Two TLPs later: 0x5_ffff_ff00 + 2 * 0x180 = 0x6_0000_0200.
    assert_eq!(
        step(&mut driver, &quiet, false, low(counter::BYTES_IN)),
        Some(0x200)
    );
    assert_eq!(
        step(&mut driver, &quiet, false, high(counter::BYTES_IN)),
        Some(6)
    );
}

#[test]
fn counts_wrap_at_2_to_the_64() {
    let all_ones: Vec<(u32, u64)> = (0..COUNTERS as u32).map(|e| (e, u64::MAX)).collect();
    let mut driver = port_counters(&all_ones);
    let everything = Events {
        received: Some(Tlp {
            class: CLASS_NON_POSTED,
            bytes: 24,
        }),
        sent: Some(Tlp {
            class: CLASS_COMPLETION,
            bytes: 20,
        }),
        ingress_drop: Some(3),
        egress_drop: Some(3),
        stall: true,
    };
    step(&mut driver, &everything, false, None);
    let quiet = Events::default();
    // 2^64 - 1 + n is n - 1.
    let mut expected = [u64::MAX; COUNTERS];
    expected[counter::TLPS_IN_NON_POSTED as usize] = 0;
    expected[counter::BYTES_IN as usize] = 23;
    expected[counter::TLPS_OUT_COMPLETION as usize] = 0;
    expected[counter::BYTES_OUT as usize] = 19;
    expected[counter::STALL_CYCLES as usize] = 0;
    expected[(counter::FIRST_DROP + 3) as usize] = 1;
    for (entry, count) in expected.iter().enumerate() {
        let entry = entry as u32;
        let read_low = step(&mut driver, &quiet, false, low(entry));
        let read_high = step(&mut driver, &quiet, false, high(entry));
        assert_eq!(
            (read_low, read_high),
            (Some(*count as u32), Some((count >> 32) as u32)),
            "{}",
            counter::NAMES[entry as usize].name
        );
    }
}

#[test]
fn a_clear_counts_the_events_of_its_own_cycle_and_a_read_in_it_sees_the_count_before() {
    let mut driver = port_counters(&[
        (counter::TLPS_IN_POSTED, 7 << 32 | 40),
        (counter::BYTES_IN, 1000),
        (counter::STALL_CYCLES, 3),
    ]);
    let receive = Events {
        received: Some(Tlp {
            class: CLASS_POSTED,
            bytes: 64,
        }),
        ..Events::default()
    };
    assert_eq!(
        step(&mut driver, &receive, true, low(counter::TLPS_IN_POSTED)),
        Some(40)
    );
    let quiet = Events::default();
    assert_eq!(
        step(&mut driver, &quiet, false, low(counter::TLPS_IN_POSTED)),
        Some(1)
    );
    assert_eq!(
        step(&mut driver, &quiet, false, high(counter::TLPS_IN_POSTED)),
        Some(0)
    );
    assert_eq!(
        step(&mut driver, &quiet, false, low(counter::BYTES_IN)),
        Some(64)
    );
    assert_eq!(
        step(&mut driver, &quiet, false, low(counter::STALL_CYCLES)),
        Some(0)
    );
}

#[test]
fn a_clear_leaves_the_captured_high_half() {
    let mut driver = port_counters(&[(counter::BYTES_OUT, 9 << 32 | 1)]);
    let quiet = Events::default();
    assert_eq!(
        step(&mut driver, &quiet, false, low(counter::BYTES_OUT)),
        Some(1)
    );
    assert_eq!(step(&mut driver, &quiet, true, None), None);
    assert_eq!(
        step(&mut driver, &quiet, false, high(counter::BYTES_OUT)),
        Some(9)
    );
    assert_eq!(
        step(&mut driver, &quiet, false, low(counter::BYTES_OUT)),
        Some(0)
    );
    assert_eq!(
        step(&mut driver, &quiet, false, high(counter::BYTES_OUT)),
        Some(0)
    );
}
