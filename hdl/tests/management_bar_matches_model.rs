//! The switch's RTL executes requests for its management BAR as
//! weft-model's `CsrWindow::forward` does.
//!
//! Each case draws the ports' roles (disabled, fabric with ENABLE clear,
//! fabric, host, endpoint), which of their management functions decode the
//! BAR, and where the BAR is (above 4 GiB, so 4 DW headers, or below it, 3
//! DW), and programs the RTL top over its CSR bus and the model with the
//! same writes. Then memory requests arrive one at a time on any port:
//! whole-DW reads and writes of the window's registers, reads and writes
//! at offsets where no register is, partial and zero-length reads, 2 DW
//! reads and writes, poisoned writes, locked reads and AtomicOps, and
//! requests just outside the BAR. Every request must leave the RTL as it
//! leaves the model: the same completion (status, IDs, tag, Byte Count,
//! Lower Address, data) out of the port it came in on, or the same drop,
//! or the same routing; nothing void. At the end every register of the map
//! reads alike from both, so every write the model executed the RTL
//! executed too, at the same register, and no other.
//!
//! Beside it, directed tests expected from the spec: a register read
//! through the BAR is answered with a CplD of its value; the BAR's reads
//! and the soft core's share the CSR bus, the core's never delayed and
//! each read's answer going to whoever read; and a remote fabric manager
//! empties the mailbox and sends through the injector with the firmware's
//! own register sequences, every access in-band.

mod common;

use common::tlp::reason_code;
use common::top::TopBus;
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::{on_big_stack, CycleDriver};
use weft_hdl::top::SwitchTop;
use weft_hdl::top_harness::TopHarness;
use weft_model::csr_window::CsrWindow;
use weft_model::{Destination, Packet, PortIndex, Switch};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Header, MemoryOp, MemoryRequest, Message, MessageCode,
    MessageRouting, Tag, TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::csr::{self, decode, global, port, CSR_BASE, CSR_SIZE};
use weft_regs::driver::CsrBus;

/// Payload bits: a quarter of the reference's 512, for speed.
const W: usize = 128;
/// Ports: half the reference's 8.
const PORTS: usize = 4;
/// New cases run, beside the saved regressions: few, each long, as
/// building the top is most of a case's time (about 40 s in a debug build).
const CASES: u32 = 2;
/// Requests per case, at most.
const ACCESSES: usize = 48;
/// The BAR's fabric address above 4 GiB (4 DW headers) and below it (3 DW).
const BARS: [u64; 2] = [0x1_2340_0000, 0xfe00_0000];

type Harness = TopHarness<W, PORTS>;

/// A port's role as CONTROL sets it.
#[derive(Clone, Copy, Debug)]
enum Role {
    Disabled,
    FabricNotEnabled,
    Fabric,
    Host,
    Endpoint,
}

impl Role {
    fn control(self) -> u32 {
        let (enable, role) = match self {
            Role::Disabled => (0, 0),
            Role::FabricNotEnabled => (0, port::ROLE_FABRIC),
            Role::Fabric => (1, port::ROLE_FABRIC),
            Role::Host => (1, port::ROLE_HOST),
            Role::Endpoint => (1, port::ROLE_ENDPOINT),
        };
        port::ENABLE.encode(enable) | port::ROLE.encode(role)
    }
}

/// The switch: roles, the management functions that decode the BAR, the BAR.
#[derive(Clone, Debug)]
struct Setup {
    roles: [Role; PORTS],
    decoding: u32,
    bar: u64,
}

fn setup() -> impl Strategy<Value = Setup> {
    let role = prop_oneof![
        1 => Just(Role::Disabled),
        1 => Just(Role::FabricNotEnabled),
        4 => Just(Role::Fabric),
        1 => Just(Role::Host),
        1 => Just(Role::Endpoint),
    ];
    (
        prop::array::uniform4(role),
        0u32..1 << PORTS,
        prop::sample::select(BARS.to_vec()),
    )
        .prop_map(|(roles, decoding, bar)| Setup {
            roles,
            decoding,
            bar,
        })
}

/// The writes that set the switch up: each port's role and completer ID
/// (`0x0100 + port`, so answers show which port made them), then the BAR.
fn setup_writes(setup: &Setup) -> Vec<(u32, u32)> {
    let mut writes = Vec::new();
    for (p, role) in setup.roles.iter().enumerate() {
        let p = p as u32;
        writes.push((port::COMPLETER_ID.address(p, 0), 0x0100 + p));
        writes.push((port::CONTROL.address(p, 0), role.control()));
    }
    writes.push((
        global::MANAGEMENT_BAR_HIGH.address(0, 0),
        (setup.bar >> 32) as u32,
    ));
    writes.push((
        global::MANAGEMENT_BAR_LOW.address(0, 0),
        setup.bar as u32 | global::MANAGEMENT_ENABLE.encode(setup.decoding),
    ));
    writes
}

/// Registers a request may read or write: every one of the map but those
/// that would change the case's set-up (the BAR's, the ports' CONTROL) and
/// the injector's (a SEND sends, which the model keeps aside rather than
/// delivering). The counters are among them: both count a request as it
/// arrives, so a read of its own port's counters counts itself.
fn accessible() -> Vec<u32> {
    let kept = [
        global::MANAGEMENT_BAR_LOW.address(0, 0),
        global::MANAGEMENT_BAR_HIGH.address(0, 0),
    ];
    csr::registers(PORTS as u32)
        .filter(|(block, register, address)| {
            block.name != csr::inject::BLOCK.name
                && *register != port::CONTROL
                && !kept.contains(address)
        })
        .map(|(_, _, address)| address - CSR_BASE)
        .collect()
}

/// Where a request goes, as an offset from the BAR.
fn offset() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => prop::sample::select(accessible()).prop_map(i64::from),
        // A whole DW where no register is.
        2 => (0..CSR_SIZE / 4)
            .prop_map(|dw| dw * 4)
            .prop_filter("no register", |offset| decode(CSR_BASE + offset).is_none())
            .prop_map(i64::from),
        // Just outside the BAR.
        1 => prop::sample::select(vec![-4i64, i64::from(CSR_SIZE)]),
    ]
}

/// One memory request for (or near) the management BAR.
#[derive(Clone, Debug)]
struct Access {
    port: u8,
    op: MemoryOp,
    offset: i64,
    length_dw: u16,
    first_be: u8,
    last_be: u8,
    poisoned: bool,
    data: [u32; 2],
}

fn access() -> impl Strategy<Value = Access> {
    let shape = prop_oneof![
        // One whole DW.
        6 => Just((1u16, 0xfu8, 0u8)),
        // One DW, any byte enables (0000b: a zero-length read).
        2 => (0u8..16).prop_map(|first| (1, first, 0)),
        // Two whole DWs.
        1 => Just((2, 0xf, 0xf)),
    ];
    let op = prop_oneof![
        4 => Just(MemoryOp::Read),
        4 => Just(MemoryOp::Write),
        1 => Just(MemoryOp::ReadLocked),
        1 => Just(MemoryOp::FetchAdd),
    ];
    (
        0..PORTS as u8,
        op,
        offset(),
        shape,
        prop::bool::weighted(0.1),
        any::<[u32; 2]>(),
    )
        .prop_map(
            |(port, op, offset, (length_dw, first_be, last_be), poisoned, data)| {
                // An AtomicOp has one operand DW (FetchAdd, 32 bits) and no byte enables (§2.2.5).
                let (length_dw, first_be, last_be) = match op {
                    MemoryOp::FetchAdd => (1, 0, 0),
                    _ => (length_dw, first_be, last_be),
                };
                Access {
                    port,
                    op,
                    offset,
                    length_dw,
                    first_be,
                    last_be,
                    poisoned: poisoned && op == MemoryOp::Write,
                    data,
                }
            },
        )
}

/// `access` as wire bytes, from requester 02:00.0 with tag `tag`; `None`
/// if no such TLP can be encoded (a 2 DW request across a 4 KiB boundary,
/// §2.2.7.1: the header rules' own tests send those).
fn request(access: &Access, bar: u64, tag: u8) -> Option<Vec<u8>> {
    let has_data = matches!(access.op, MemoryOp::Write | MemoryOp::FetchAdd);
    let address = bar.wrapping_add_signed(access.offset);
    let header = Header {
        digest_present: false,
        poisoned: access.poisoned,
        body: Body::Memory(MemoryRequest {
            op: access.op,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester: Bdf::new(2, 0, 0),
            tag: Tag::from_8bit(tag),
            address,
            length_dw: access.length_dw,
            first_be: access.first_be,
            last_be: access.last_be,
            processing_hint: None,
        }),
    };
    let payload = if has_data {
        access.data[..usize::from(access.length_dw)]
            .iter()
            .flat_map(|dw| dw.to_le_bytes())
            .collect()
    } else {
        Vec::new()
    };
    Packet::new(header, payload).to_bytes().ok()
}

/// The RTL top and the model, both set up by `setup`.
fn switches(setup: &Setup) -> (Harness, CsrWindow) {
    let mut rtl = Harness::new().expect("well formed");
    let mut model = CsrWindow::new(Switch::new(PORTS));
    for (address, value) in setup_writes(setup) {
        rtl.write32(address, value);
        model.write32(address, value);
    }
    (rtl, model)
}

/// Offers `bytes` on `port` of both; the RTL must do what the model does
/// with it. Returns what left the RTL.
fn executes_as_the_model(
    rtl: &mut Harness,
    model: &mut CsrWindow,
    port: u8,
    bytes: &[u8],
) -> Result<Vec<(usize, Vec<u8>)>, TestCaseError> {
    let carried = rtl.carry(usize::from(port), bytes).expect("carried");
    let forwarding = model
        .forward(PortIndex(port), bytes)
        .expect("the port exists");
    let mut sent = Vec::new();
    let mut to_cpu = 0;
    for delivery in forwarding.deliveries {
        match delivery.to {
            Destination::Port(p) => {
                sent.push((usize::from(p.0), delivery.packet.to_bytes().expect("legal")))
            }
            Destination::Cpu => to_cpu += 1,
        }
    }
    let got: Vec<_> = carried.egress.into_iter().map(|(p, b, _)| (p, b)).collect();
    prop_assert_eq!(&got, &sent, "what left");
    prop_assert!(carried.nullified.is_empty(), "nothing leaves void");
    let dropped: Vec<_> = forwarding
        .dropped
        .map(|reason| (usize::from(port), reason_code(reason)))
        .into_iter()
        .collect();
    prop_assert_eq!(carried.drops, dropped, "drops");
    prop_assert_eq!(carried.to_cpu.len(), to_cpu, "TLPs for the CPU");
    Ok(got)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn the_rtl_executes_management_bar_requests_as_the_model(
        setup in setup(),
        accesses in prop::collection::vec(access(), 1..ACCESSES),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let (mut rtl, mut model) = switches(&setup);
            for (n, access) in accesses.iter().enumerate() {
                let Some(bytes) = request(access, setup.bar, n as u8) else {
                    continue;
                };
                executes_as_the_model(&mut rtl, &mut model, access.port, &bytes)
                    .map_err(|e| TestCaseError::fail(format!("{access:?}: {e}")))?;
            }
            for (block, register, address) in csr::registers(PORTS as u32) {
                prop_assert_eq!(
                    rtl.read32(address),
                    model.read32(address),
                    "{}.{} at {:#x}",
                    block.name,
                    register.name,
                    address
                );
            }
            Ok(())
        })?;
    }
}

/// A fabric port 1 whose management function decodes the BAR above 4 GiB.
fn fabric_port_1() -> Setup {
    Setup {
        roles: [Role::Disabled, Role::Fabric, Role::Disabled, Role::Disabled],
        decoding: 1 << 1,
        bar: BARS[0],
    }
}

fn read_of(offset: u32, tag: u8) -> Vec<u8> {
    let access = Access {
        port: 1,
        op: MemoryOp::Read,
        offset: i64::from(offset),
        length_dw: 1,
        first_be: 0xf,
        last_be: 0,
        poisoned: false,
        data: [0; 2],
    };
    request(&access, BARS[0], tag).expect("a well-formed read")
}

/// The completion in `bytes` (§2.2.9): Fmt/Type, completer ID, status,
/// Byte Count, requester ID, tag, Lower Address, and its data DW.
fn completion_fields(bytes: &[u8]) -> (u8, u16, u8, u16, u16, u8, u8, Option<u32>) {
    let dw = |k: usize| u32::from_be_bytes(bytes[4 * k..4 * k + 4].try_into().expect("4 bytes"));
    let data =
        (bytes.len() >= 16).then(|| u32::from_le_bytes(bytes[12..16].try_into().expect("4")));
    (
        (dw(0) >> 24) as u8,
        (dw(1) >> 16) as u16,
        ((dw(1) >> 13) & 7) as u8,
        (dw(1) & 0xfff) as u16,
        (dw(2) >> 16) as u16,
        (dw(2) >> 8) as u8,
        (dw(2) & 0x7f) as u8,
        data,
    )
}

#[test]
fn a_register_read_through_the_bar_is_answered_with_its_value() {
    on_big_stack(|| {
        let (mut rtl, _) = switches(&fabric_port_1());
        // COMPLETION_TIMEOUT, RW, written over the bus; then read in-band.
        let timeout = global::COMPLETION_TIMEOUT.address(0, 0);
        rtl.write32(timeout, 12_345);
        let carried = rtl
            .carry(1, &read_of(timeout - CSR_BASE, 7))
            .expect("carried");
        assert_eq!(carried.egress.len(), 1, "one completion");
        let (port, bytes, _) = &carried.egress[0];
        assert_eq!(*port, 1, "back out of the port it came in on");
        // CplD (Fmt 010b Type 0_1010b), completer 01:00.1 (COMPLETER_ID
        // 0x0101), Successful, Byte Count 4, requester 02:00.0, tag 7,
        // Lower Address the address's bits 6:0 (§2.3.1.1), and the
        // register's value, its byte 0 first (§2.2.7).
        let lower = ((timeout - CSR_BASE) & 0x7f) as u8;
        assert_eq!(
            completion_fields(bytes),
            (0x4a, 0x0101, 0, 4, 0x0200, 7, lower, Some(12_345))
        );
        // A write through the BAR, then the core reads what it wrote.
        let write = Access {
            port: 1,
            op: MemoryOp::Write,
            offset: i64::from(timeout - CSR_BASE),
            length_dw: 1,
            first_be: 0xf,
            last_be: 0,
            poisoned: false,
            data: [777, 0],
        };
        let write = request(&write, BARS[0], 8).expect("a well-formed write");
        let carried = rtl.carry(1, &write).expect("carried");
        assert!(carried.egress.is_empty(), "a posted write is not answered");
        assert!(carried.drops.is_empty());
        assert_eq!(rtl.read32(timeout), 777);
        // Where no register is, Completer Abort without data (§2.3.1).
        let nothing = (0..CSR_SIZE / 4)
            .map(|dw| dw * 4)
            .find(|offset| decode(CSR_BASE + offset).is_none())
            .expect("a gap");
        let carried = rtl.carry(1, &read_of(nothing, 9)).expect("carried");
        assert_eq!(
            completion_fields(&carried.egress[0].1),
            (
                0x0a,
                0x0101,
                0b100,
                4,
                0x0200,
                9,
                (nothing & 0x7f) as u8,
                None
            )
        );
    });
}

type Top = SwitchTop<W, PORTS>;

/// Sets every input of `top`'s links idle and every credit given.
fn idle_links(top: &mut Top) {
    for k in 0..PORTS {
        top.ingress[k].valid.next = false;
        top.egress[k].ready.next = true;
    }
    top.egress_credit_posted.next = 0xfu32.to_bits();
    top.egress_credit_non_posted.next = 0xfu32.to_bits();
    top.egress_credit_completion.next = 0xfu32.to_bits();
}

#[test]
fn the_bar_and_the_core_share_the_csr_bus_and_each_read_gets_its_own_answer() {
    on_big_stack(|| {
        // The core reads ID every other cycle (its bridge's fastest), in
        // even cycles and then in odd ones, so that it wants the bus in the
        // cycle the BAR's request would take it, while an in-band read of
        // COMPLETION_TIMEOUT arrives: the core's reads all read ID, each
        // answered in the next cycle; the in-band read waits for a cycle
        // the core leaves and reads the timeout.
        let timeout = global::COMPLETION_TIMEOUT.address(0, 0);
        let mut bus =
            TopBus(CycleDriver::new(Top::default(), |b| &mut b.clock).expect("well formed"));
        for (address, value) in setup_writes(&fabric_port_1()) {
            bus.write32(address, value);
        }
        bus.write32(timeout, 4321);
        for phase in 0..2 {
            core_and_bar_read_together(&mut bus.0, phase);
        }
    });
}

/// One run of the test above on `rtl`, the core reading in cycles `phase` mod 2.
fn core_and_bar_read_together(rtl: &mut CycleDriver<Top>, phase: u32) {
    let timeout = global::COMPLETION_TIMEOUT.address(0, 0);
    let dws: Vec<u32> = read_of(timeout - CSR_BASE, 3)
        .chunks(4)
        .map(|c| u32::from_be_bytes(c.try_into().expect("4")))
        .collect();
    let id = global::ID.address(0, 0);
    let mut offered = true;
    let (mut reads, mut answers, mut completion) = (0, Vec::new(), None);
    for cycle in 0..64u32 {
        let reading = cycle % 2 == phase;
        let top = rtl.block();
        idle_links(top);
        top.ingress[1].valid.next = offered;
        top.ingress[1].sop.next = true;
        top.ingress[1].eop.next = true;
        top.ingress[1].empty.next = (W as u32 / 32).to_bits();
        top.ingress[1].dw0.next = dws[0].to_bits();
        top.ingress[1].dw1.next = dws[1].to_bits();
        top.ingress[1].dw2.next = dws[2].to_bits();
        top.ingress[1].dw3.next = dws[3].to_bits();
        top.csr.address.next = id.to_bits();
        top.csr.read.next = reading;
        top.csr.write.next = false;
        rtl.settle().expect("settles");
        let top = rtl.block();
        // A read's answer is due in the cycle after it, and only then.
        if cycle > 0 && !reading {
            reads += 1;
            assert!(
                top.csr.read_valid.val(),
                "phase {phase}: the core's read of cycle {}",
                cycle - 1
            );
            answers.push(top.csr.read_data.val().to_u32());
        } else {
            assert!(
                !top.csr.read_valid.val(),
                "phase {phase}: no answer for the core in cycle {cycle}"
            );
        }
        if top.egress[1].valid.val() {
            completion = Some((
                top.egress[1].dw1.val().to_u32(),
                top.egress[1]
                    .payload
                    .val()
                    .get_bits::<32>(W - 32)
                    .to_u32()
                    .swap_bytes(),
            ));
        }
        if offered && top.ingress[1].ready.val() {
            offered = false;
        }
        rtl.tick().expect("settles");
    }
    assert_eq!(answers.len(), reads);
    let id_value = global::MAGIC.encode(global::ID_VALUE);
    assert!(
        answers.iter().all(|&v| v == id_value),
        "phase {phase}: {answers:x?}"
    );
    let (dw1, data) = completion.expect("the in-band read is answered");
    assert_eq!((dw1 >> 13) & 7, 0, "phase {phase}: Successful");
    assert_eq!(data, 4321, "phase {phase}: the timeout's value, not ID");
}

/// The switch's CSR window as a remote fabric manager reaches it: each
/// register access a one-DW memory request through the management BAR on
/// fabric port 1 (`weft_fabric::inband`'s `InbandCsr` on the far side),
/// each read waiting for its CplD.
struct ThroughTheBar<'a> {
    rtl: &'a mut Harness,
    tag: u8,
    /// What left the switch other than the reads' completions.
    left: Vec<(usize, Vec<u8>)>,
}

impl ThroughTheBar<'_> {
    fn access(&mut self, address: u32, op: MemoryOp, value: u32) -> Vec<(usize, Vec<u8>)> {
        self.tag = self.tag.wrapping_add(1);
        let access = Access {
            port: 1,
            op,
            offset: i64::from(address - CSR_BASE),
            length_dw: 1,
            first_be: 0xf,
            last_be: 0,
            poisoned: false,
            data: [value, 0],
        };
        let bytes = request(&access, BARS[0], self.tag).expect("a well-formed request");
        let carried = self.rtl.carry(1, &bytes).expect("carried");
        assert!(carried.drops.is_empty(), "{address:#x}: not dropped");
        carried.egress.into_iter().map(|(p, b, _)| (p, b)).collect()
    }
}

impl CsrBus for ThroughTheBar<'_> {
    fn write32(&mut self, address: u32, value: u32) {
        let left = self.access(address, MemoryOp::Write, value);
        self.left.extend(left);
    }

    fn read32(&mut self, address: u32) -> u32 {
        let left = self.access(address, MemoryOp::Read, 0);
        let (completion, others): (Vec<_>, Vec<_>) = left
            .into_iter()
            .partition(|(port, bytes)| *port == 1 && completion_fields(bytes).5 == self.tag);
        self.left.extend(others);
        let [(_, bytes)] = &completion[..] else {
            panic!("{address:#x}: one completion, not {completion:?}");
        };
        let fields = completion_fields(bytes);
        assert_eq!(fields.2, 0, "{address:#x}: Successful");
        fields.7.expect("a CplD")
    }
}

#[test]
fn a_remote_manager_empties_the_mailbox_and_injects_through_the_bar() {
    on_big_stack(|| {
        // What the fabric manager on another switch does for a host here
        // (`weft_drivers::hosts`): it reads this switch's mailbox and
        // answers through its injector, every access in-band.
        let mut setup = fabric_port_1();
        setup.roles[2] = Role::Fabric;
        let (mut rtl, _) = switches(&setup);
        // A local message (routing 100b, §2.2.8) on fabric port 2 ends at the CPU.
        let message = Packet::new(
            Header {
                digest_present: false,
                poisoned: false,
                body: Body::Message(Message::new(
                    Bdf::new(5, 0, 0),
                    MessageCode::VendorDefinedType1,
                    MessageRouting::Local,
                )),
            },
            Vec::new(),
        )
        .to_bytes()
        .expect("a well-formed message");
        let carried = rtl.carry(2, &message).expect("carried");
        assert_eq!(carried.to_cpu.len(), 1, "the message is for the CPU");

        let mut bar = ThroughTheBar {
            rtl: &mut rtl,
            tag: 0,
            left: Vec::new(),
        };
        let found = common::top::empty_mailbox(&mut bar);
        let wire: Vec<u32> = message
            .chunks(4)
            .map(|c| u32::from_be_bytes(c.try_into().expect("4")))
            .collect();
        assert_eq!(
            found.tlps,
            [(2, wire)],
            "the message, from port 2, read in-band"
        );
        assert!(!found.lost);
        assert!(bar.left.is_empty(), "reads and POP send nothing else");

        // The answer leaves by the injector on the port the far manager names.
        let answer = read_of(0x40, 0x55);
        common::top::inject(&mut bar, 2, &answer);
        // The injector gathers the TLP's DWs a cycle each after SEND: longer
        // than the quiet spell that ends a carry.
        let sent = bar.rtl.idle(16).expect("idles");
        bar.left
            .extend(sent.egress.into_iter().map(|(p, b, _)| (p, b)));
        assert_eq!(
            bar.left,
            [(2, answer)],
            "injected through the BAR, out of port 2"
        );
        assert_eq!(common::top::empty_mailbox(&mut bar), Default::default());
    });
}
