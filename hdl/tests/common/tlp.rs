//! TLPs and tables drawn at random for the translation stages' differential tests.

use proptest::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::CycleDriver;
use weft_hdl::switching::{CLASS_COMPLETION, CLASS_NON_POSTED, CLASS_POSTED};
use weft_model::{DropReason, Packet, Permissions, Window};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, ConfigRequest, ConfigType, Direction, FlowControlClass, Header,
    IntxPin, IoRequest, MemoryOp, MemoryRequest, Message, MessageCode, MessageRouting,
    ProcessingHint, Tag, TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::aperture::HOST_ADDRESS_LIMIT;
use weft_regs::csr::window;
use weft_regs::Register;

use super::{probe, Probe};

/// A 64-bit value near zero, the top, 4 GiB or the end of a host aperture, or anywhere.
pub fn edge_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => 0u64..0x4000,
        1 => (0u64..0x4000).prop_map(|x| u64::MAX - x),
        3 => (0u64..0x4000).prop_map(|x| (1u64 << 32) - 0x2000 + x),
        1 => (0u64..0x4000).prop_map(|x| HOST_ADDRESS_LIMIT - 0x2000 + x),
        2 => any::<u64>(),
    ]
}

/// A window and whether its entry is valid, in whole DWs. The fabric base keeps the
/// base's offset in its 4 KiB page, as page-granular BARs do, so a
/// translated request crosses no page boundary (§2.2.7.1) and weft-pcie
/// can encode the model's result.
pub fn window_entry() -> impl Strategy<Value = (bool, Window)> {
    (
        prop::bool::weighted(0.8),
        edge_value(),
        prop_oneof![3 => 1u64..0x3000, 1 => (0u32..64).prop_map(|s| 1u64 << s), 1 => edge_value()],
        edge_value(),
        any::<(bool, bool)>(),
    )
        .prop_map(|(valid, base, size, fabric, (read, write))| {
            // Whole DWs, as the range registers hold them (§2.2.4.1).
            let base = base & !3;
            let window = Window {
                base,
                size: (size & !3).max(4),
                fabric_base: (fabric & !0xfff) | (base & 0xfff),
                permissions: Permissions { read, write },
            };
            (valid, window)
        })
}

/// One TLP a host or an endpoint might send, before its address is placed.
#[derive(Clone, Debug)]
pub enum Request {
    /// A memory request near the windows' edges.
    Memory {
        op: MemoryOp,
        probe: Probe,
        length_dw: u16,
        hint: Option<u8>,
    },
    /// An I/O request.
    Io(Direction),
    /// A configuration request.
    Config(Direction, ConfigType),
    /// A message: its index in [`MESSAGES`], its tag and bytes 8–15.
    Message(usize, u8, u64),
}

/// Messages offered: every INTx virtual wire, the error and PME messages
/// an endpoint sends its host, and some that no host is meant to get.
pub const MESSAGES: [(MessageCode, MessageRouting); 15] = [
    (MessageCode::AssertIntx(IntxPin::A), MessageRouting::Local),
    (MessageCode::AssertIntx(IntxPin::B), MessageRouting::Local),
    (MessageCode::AssertIntx(IntxPin::C), MessageRouting::Local),
    (MessageCode::AssertIntx(IntxPin::D), MessageRouting::Local),
    (MessageCode::DeassertIntx(IntxPin::A), MessageRouting::Local),
    (MessageCode::DeassertIntx(IntxPin::B), MessageRouting::Local),
    (MessageCode::DeassertIntx(IntxPin::C), MessageRouting::Local),
    (MessageCode::DeassertIntx(IntxPin::D), MessageRouting::Local),
    (MessageCode::ErrCor, MessageRouting::ToRootComplex),
    (MessageCode::ErrNonFatal, MessageRouting::ToRootComplex),
    (MessageCode::ErrFatal, MessageRouting::ToRootComplex),
    (MessageCode::PmPme, MessageRouting::ToRootComplex),
    (MessageCode::PmeTurnOff, MessageRouting::BroadcastFromRoot),
    (MessageCode::PmeToAck, MessageRouting::GatheredToRoot),
    (MessageCode::VendorDefinedType1, MessageRouting::ById),
];

/// Requests of every kind, mostly memory requests.
pub fn request() -> impl Strategy<Value = Request> {
    let op = prop::sample::select(
        &[
            MemoryOp::Read,
            MemoryOp::Write,
            MemoryOp::ReadLocked,
            MemoryOp::FetchAdd,
            MemoryOp::Swap,
            MemoryOp::CompareAndSwap,
        ][..],
    );
    let direction = prop::sample::select(&[Direction::Read, Direction::Write][..]);
    prop_oneof![
        12 => (op, probe(edge_value()), prop_oneof![3 => 1u16..=16, 1 => 1u16..=1024], prop::option::weighted(0.2, 0u8..4))
            .prop_map(|(op, probe, length_dw, hint)| Request::Memory { op, probe, length_dw, hint }),
        1 => direction.clone().prop_map(Request::Io),
        1 => (direction, prop::sample::select(&[ConfigType::Type0, ConfigType::Type1][..]))
            .prop_map(|(d, t)| Request::Config(d, t)),
        2 => (0..MESSAGES.len(), any::<u8>(), any::<u64>())
            .prop_map(|(which, tag, bytes)| Request::Message(which, tag, bytes)),
    ]
}

/// The fields every request shares, drawn once per TLP.
#[derive(Clone, Debug)]
pub struct Common {
    /// Requester ID.
    pub requester: u16,
    /// Tag of a non-posted request.
    pub tag: u16,
    /// TC.
    pub traffic_class: u8,
    /// Attr\[2:0\] as IDO, RO, NS.
    pub attributes: u8,
    /// ECRC, if the TLP carries one.
    pub digest: Option<u32>,
    /// What the stream carries in DW3's place after a 3 DW header.
    pub beyond_header: u32,
}

/// Common fields, any value.
pub fn common() -> impl Strategy<Value = Common> {
    (
        any::<u16>(),
        0u16..=Tag::MAX,
        0u8..8,
        0u8..8,
        prop::option::of(any::<u32>()),
        any::<u32>(),
    )
        .prop_map(
            |(requester, tag, traffic_class, attributes, digest, beyond_header)| Common {
                requester,
                tag,
                traffic_class,
                attributes,
                digest,
                beyond_header,
            },
        )
}

/// The request as a weft-pcie packet, its address placed against `windows`;
/// `None` if weft-pcie refuses it (an illegal combination drawn).
pub fn packet(request: &Request, common: &Common, windows: &[(bool, Window)]) -> Option<Packet> {
    let requester = Bdf(common.requester);
    let tag = Tag::new(common.tag).expect("drawn within 10 bits");
    let (body, payload_dw) = match request {
        Request::Memory {
            op,
            probe,
            length_dw,
            hint,
        } => {
            let (length_dw, align) = match op {
                // Table 2-15: operand sizes, and natural alignment to them.
                MemoryOp::FetchAdd | MemoryOp::Swap => {
                    let dw = 1 + length_dw % 2;
                    (dw, u64::from(dw) * 4)
                }
                MemoryOp::CompareAndSwap => {
                    let dw = 2 << (length_dw % 3);
                    (dw, u64::from(dw) * 2)
                }
                _ => (*length_dw, 4),
            };
            let ranges: Vec<(u64, u64)> = windows.iter().map(|(_, w)| (w.base, w.size)).collect();
            let address = probe.address(&ranges) & !(align - 1);
            // §2.2.7.1: no request crosses a 4 KiB boundary.
            let room = ((0x1000 - (address & 0xfff)) / 4) as u16;
            let length_dw = length_dw.min(room);
            let atomic = matches!(
                op,
                MemoryOp::FetchAdd | MemoryOp::Swap | MemoryOp::CompareAndSwap
            );
            let (first_be, last_be) = match (atomic, length_dw) {
                (true, _) => (0, 0),
                (false, 1) => (0xf, 0),
                (false, _) => (0xf, 0xf),
            };
            let with_data = *op != MemoryOp::Read && *op != MemoryOp::ReadLocked;
            let request = MemoryRequest {
                op: *op,
                traffic_class: TrafficClass::from_bits(common.traffic_class),
                attributes: attributes(common.attributes),
                address_type: AddressType::Untranslated,
                requester,
                tag: if *op == MemoryOp::Write {
                    Tag::from_8bit(tag.low())
                } else {
                    tag
                },
                address,
                length_dw,
                first_be,
                last_be,
                processing_hint: hint.map(ProcessingHint::from_bits),
            };
            (Body::Memory(request), if with_data { length_dw } else { 0 })
        }
        Request::Io(direction) => (
            Body::Io(IoRequest {
                direction: *direction,
                requester,
                tag,
                address: (common.tag as u32) << 2,
                first_be: 0xf,
            }),
            u16::from(*direction == Direction::Write),
        ),
        Request::Config(direction, config_type) => (
            Body::Config(ConfigRequest {
                direction: *direction,
                config_type: *config_type,
                requester,
                tag,
                target: Bdf(common.requester.rotate_left(8)),
                register_number: (common.tag & 0x3f) as u8,
                extended_register_number: (common.tag >> 6 & 0xf) as u8,
                first_be: 0xf,
            }),
            u16::from(*direction == Direction::Write),
        ),
        Request::Message(which, tag, bytes) => {
            let (code, routing) = MESSAGES[*which];
            let message = Message {
                tag: *tag,
                bytes_8_to_15: bytes.to_be_bytes(),
                ..Message::new(requester, code, routing)
            };
            (Body::Message(message), 0)
        }
    };
    let header = Header {
        digest_present: false,
        poisoned: false,
        body,
    };
    let mut packet = Packet::new(header, vec![0x5a; usize::from(payload_dw) * 4]);
    packet.digest = common.digest;
    packet.to_bytes().ok().map(|_| packet)
}

/// Attributes from bits IDO, RO, NS.
pub fn attributes(bits: u8) -> Attributes {
    Attributes {
        relaxed_ordering: bits & 0b010 != 0,
        no_snoop: bits & 0b001 != 0,
        id_based_ordering: bits & 0b100 != 0,
    }
}

/// A header's DWs as wire bytes: 3 DW or 4 DW by Fmt\[0\] (§2.2.1).
pub fn header_bytes(dws: [u32; 4]) -> Vec<u8> {
    let count = if dws[0] & 1 << 29 != 0 { 4 } else { 3 };
    dws[..count]
        .iter()
        .flat_map(|dw| dw.to_be_bytes())
        .collect()
}

/// Clears the tag of a non-posted request: T9 (byte 1 bit 7), T8 (byte 1 bit 3), Tag\[7:0\] (byte 6).
pub fn without_tag(mut header: Vec<u8>) -> Vec<u8> {
    header[1] &= !0x88;
    header[6] = 0;
    header
}

/// The RTL's class code of a flow control class (§2.6.1), as the switching core's `class` input takes it.
pub fn class_code(class: FlowControlClass) -> u64 {
    match class {
        FlowControlClass::Posted => CLASS_POSTED,
        FlowControlClass::NonPosted => CLASS_NON_POSTED,
        FlowControlClass::Completion => CLASS_COMPLETION,
    }
}

/// The index of a drop reason, as the RTL's drop reason outputs and the drop counters use it.
pub fn reason_code(reason: DropReason) -> u32 {
    DropReason::ALL
        .iter()
        .position(|r| *r == reason)
        .expect("ALL lists every reason") as u32
}

/// The registers of a window entry and their values, in the order the
/// firmware writes them (CONTROL, with VALID, last), tagged with an owner
/// host if `owner` is given.
pub fn window_registers((valid, w): &(bool, Window), owner: Option<u16>) -> [(Register, u32); 8] {
    let control = window::VALID.encode((*valid).into())
        | window::READ.encode(w.permissions.read.into())
        | window::WRITE.encode(w.permissions.write.into());
    let tag = window::OWNER_TAGGED.encode(owner.is_some().into())
        | window::OWNER_HOST_INDEX.encode(owner.unwrap_or(0).into());
    [
        (window::BASE_LOW, w.base as u32),
        (window::BASE_HIGH, (w.base >> 32) as u32),
        (window::SIZE_LOW, w.size as u32),
        (window::SIZE_HIGH, (w.size >> 32) as u32),
        (window::FABRIC_BASE_LOW, w.fabric_base as u32),
        (window::FABRIC_BASE_HIGH, (w.fabric_base >> 32) as u32),
        (window::OWNER, tag),
        (window::CONTROL, control),
    ]
}

/// Programs window entry `entry` of port `port` through a block's CSR
/// target, as the firmware does ([`window_registers`]).
pub fn program_window<B: rust_hdl::prelude::Block>(
    driver: &mut CycleDriver<B>,
    target: fn(&mut B) -> &mut CsrTarget,
    port: u32,
    entry: usize,
    window: &(bool, Window),
    owner: Option<u16>,
) {
    for (register, value) in window_registers(window, owner) {
        csr::write(driver, target, register.address(port, entry as u32), value)
            .expect("the stage settles");
    }
}

/// A TLP's header DWs as the header side bus carries them: DW3 of a 3 DW
/// header is whatever follows it on the stream.
pub fn header_dws(bytes: &[u8], beyond_header: u32) -> [u32; 4] {
    let dw = |i: usize| u32::from_be_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
    let four_dw = bytes[0] & 0x20 != 0;
    [
        dw(0),
        dw(1),
        dw(2),
        if four_dw { dw(3) } else { beyond_header },
    ]
}

/// The header bytes of a TLP in wire order (3 or 4 DW by Fmt\[0\]).
pub fn wire_header(wire: &[u8]) -> Vec<u8> {
    wire[..if wire[0] & 0x20 != 0 { 16 } else { 12 }].to_vec()
}
