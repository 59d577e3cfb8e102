//! Spec-derived tests for the TLP module.
//!
//! Expected bytes are written out from the field layout figures of PCIe Base
//! 6.0 §2.2, with the bit arithmetic in comments; they are never produced by
//! the encoder under test.

extern crate std;

use std::vec::Vec;

use proptest::prelude::*;

use super::*;
use crate::id::Bdf;

fn decode(bytes: &[u8]) -> Header {
    Header::decode(bytes).expect("a well-formed header")
}

fn assert_encodes_to(header: &Header, bytes: &[u8]) {
    let mut out = [0u8; 16];
    let len = header
        .encode(&mut out)
        .expect("a header a transmitter may form");
    assert_eq!(&out[..len], bytes);
}

fn memory(header: &Header) -> MemoryRequest {
    match header.body {
        Body::Memory(request) => request,
        other => panic!("expected a memory request, got {other:?}"),
    }
}

fn completion(header: &Header) -> Completion {
    match header.body {
        Body::Completion(completion) => completion,
        other => panic!("expected a completion, got {other:?}"),
    }
}

fn message(header: &Header) -> Message {
    match header.body {
        Body::Message(message) => message,
        other => panic!("expected a message, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Hand-written wire vectors, one per kind
// ---------------------------------------------------------------------------

/// MRd, 3 DW: 4 DW at 0xfedc_ba90 for requester 01:00.0, tag 0x12.
const MRD_32: [u8; 12] = [
    0x00, // Fmt 000b (3 DW, no data) << 5 | Type 0_0000b (MRd)
    0x00, // T9 0, TC 000b, T8 0, A2 0, R, TH 0
    0x00, // TD 0, EP 0, Attr[1:0] 00b, AT 00b, Length[9:8] 00b
    0x04, // Length[7:0] = 4 DW
    0x01, 0x00, // Requester ID 0x0100 = bus 1, device 0, function 0
    0x12, // Tag[7:0]
    0xff, // Last DW BE 1111b << 4 | First DW BE 1111b
    0xfe, 0xdc, 0xba, 0x90, // Address[31:2] with PH[1:0] = 00b
];

#[test]
fn memory_read_32_bit() {
    let header = decode(&MRD_32);
    let request = memory(&header);
    assert_eq!(request.op, MemoryOp::Read);
    assert_eq!(request.address, 0xfedc_ba90);
    assert_eq!(request.length_dw, 4);
    assert_eq!(request.requester, Bdf::new(1, 0, 0));
    assert_eq!(request.tag.get(), 0x12);
    assert_eq!((request.first_be, request.last_be), (0xf, 0xf));
    assert_eq!(request.processing_hint, None);
    assert_eq!(header.header_len(), 12);
    assert_eq!(header.flow_control_class(), FlowControlClass::NonPosted);
    assert_eq!(header.route(), Route::Address(0xfedc_ba90));
    assert_eq!(header.payload_len_dw(), 0);
    assert_encodes_to(&header, &MRD_32);
}

/// MWr, 4 DW, with every DW 0 flag that a write may carry.
const MWR_64: [u8; 16] = [
    0x60, // Fmt 011b (4 DW, data) << 5 | Type 0_0000b = 0110_0000b
    0x24, // T9 0, TC 010b, T8 0, A2 (IDO) 1, R 0, TH 0 = 0_010_0_1_0_0b
    0xb8, // TD 1, EP 0, Attr[1:0] (RO, NS) 11b, AT 10b, Length[9:8] 00b = 1_0_11_10_00b
    0x01, // Length 1 DW
    0x03, 0x00, // Requester ID 03:00.0
    0x00, // Tag[7:0]
    0x03, // Last DW BE 0000b, First DW BE 0011b
    0x00, 0x00, 0x00, 0x12, // Address[63:32]
    0x34, 0x56, 0x78, 0x00, // Address[31:2], PH 00b
];

#[test]
fn memory_write_64_bit_with_attributes() {
    let header = decode(&MWR_64);
    let request = memory(&header);
    assert_eq!(request.op, MemoryOp::Write);
    assert_eq!(request.address, 0x12_3456_7800);
    assert_eq!(request.traffic_class.get(), 2);
    assert_eq!(
        request.attributes,
        Attributes {
            relaxed_ordering: true,
            no_snoop: true,
            id_based_ordering: true
        }
    );
    assert_eq!(request.address_type, AddressType::Translated);
    assert!(header.digest_present && !header.poisoned);
    assert_eq!((request.first_be, request.last_be), (0b0011, 0));
    assert_eq!(header.header_len(), 16);
    assert_eq!(header.payload_len_dw(), 1);
    // 16 header + 4 payload + 4 digest.
    assert_eq!(header.total_len(0), 24);
    assert_eq!(header.flow_control_class(), FlowControlClass::Posted);
    assert_encodes_to(&header, &MWR_64);
}

/// MRdLk with TH set, a 10-bit tag, and a Steering Tag in place of the byte enables.
const MRDLK_TPH: [u8; 12] = [
    0x01, // Fmt 000b << 5 | Type 0_0001b (MRdLk)
    0x09, // T9 0, TC 000b, T8 1, A2 0, R 0, TH 1 = 0_000_1_0_0_1b
    0x00, //
    0x02, // Length 2 DW
    0x02, 0x08, // Requester ID 02:01.0 = 0x02 << 8 | 1 << 3
    0xc3, // Tag[7:0]; Tag = T9 T8 : 0xc3 = 0x1c3
    0x5a, // ST[7:0] (TH set on a read: byte 7 is the Steering Tag)
    0x00, 0x00, 0x10, 0x02, // Address 0x1000, PH 10b (Target)
];

#[test]
fn locked_read_with_tph_and_10_bit_tag() {
    let header = decode(&MRDLK_TPH);
    let request = memory(&header);
    assert_eq!(request.op, MemoryOp::ReadLocked);
    assert_eq!(request.tag.get(), 0x1c3);
    assert_eq!(request.requester, Bdf::new(2, 1, 0));
    assert_eq!(request.processing_hint, Some(ProcessingHint::Target));
    assert_eq!(request.steering_tag(), Some(0x5a));
    // §2.2.5.1: with TH set, a >1 DW read has implied enables 1111b/1111b.
    assert_eq!(request.effective_byte_enables(), (0xf, 0xf));
    assert_eq!(request.address, 0x1000);
    assert_encodes_to(&header, &MRDLK_TPH);
}

/// IOWr with a 10-bit tag.
const IOWR: [u8; 12] = [
    0x42, // Fmt 010b << 5 | Type 0_0010b = 0100_0010b
    0x88, // T9 1, TC 000b, T8 1 = 1_000_1_000b
    0x00, //
    0x01, // Length 1 DW
    0x00, 0x10, // Requester ID 00:02.0
    0x01, // Tag[7:0]; Tag = 11b : 0x01 = 0x301
    0x0c, // Last DW BE 0000b, First DW BE 1100b
    0x00, 0x00, 0x0c, 0xf8, // Address 0xcf8
];

#[test]
fn io_write() {
    let header = decode(&IOWR);
    let Body::Io(request) = header.body else {
        panic!("expected I/O, got {header:?}");
    };
    assert_eq!(request.direction, Direction::Write);
    assert_eq!(request.tag.get(), 0x301);
    assert_eq!(request.address, 0xcf8);
    assert_eq!(request.first_be, 0b1100);
    assert_eq!(header.flow_control_class(), FlowControlClass::NonPosted);
    assert_eq!(header.route().kind(), RoutingKind::Address);
    assert_eq!(header.payload_len_dw(), 1);
    assert_encodes_to(&header, &IOWR);
}

/// CfgRd0 of offset 0x110 in 05:1f.7.
const CFGRD0: [u8; 12] = [
    0x04, // Fmt 000b << 5 | Type 0_0100b (CfgRd0)
    0x00, 0x00, 0x01, // Length 1 DW
    0x00, 0x00, // Requester ID 00:00.0
    0x07, // Tag
    0x0f, // Last DW BE 0000b, First DW BE 1111b
    0x05, // Bus Number 5
    0xff, // Device 1_1111b << 3 | Function 111b
    0x01, // Reserved 0000b, Extended Register Number 0001b
    0x10, // Register Number 00_0100b << 2 → byte offset 0x100 + 4 * 4 = 0x110
];

#[test]
fn config_read_type_0() {
    let header = decode(&CFGRD0);
    let Body::Config(request) = header.body else {
        panic!("expected configuration, got {header:?}");
    };
    assert_eq!(request.direction, Direction::Read);
    assert_eq!(request.config_type, ConfigType::Type0);
    assert_eq!(request.target, Bdf::new(5, 0x1f, 7));
    assert_eq!(request.extended_register_number, 1);
    assert_eq!(request.register_number, 4);
    assert_eq!(request.byte_offset(), 0x110);
    assert_eq!(header.route(), Route::Id(Bdf::new(5, 0x1f, 7)));
    assert_encodes_to(&header, &CFGRD0);
}

#[test]
fn config_write_type_1_ignores_reserved_ido_and_th() {
    let bytes = [
        0x45, // Fmt 010b << 5 | Type 0_0101b (CfgWr1)
        0x05, // A2 1 and TH 1: both Reserved for configuration requests (§2.2.7.1)
        0x00, 0x01, 0x00, 0x08, 0x00, 0x0f, //
        0x02, 0x00, 0x00, 0x04, // 02:00.0, register 1 (offset 4)
    ];
    let header = decode(&bytes);
    let Body::Config(request) = header.body else {
        panic!("expected configuration, got {header:?}");
    };
    assert_eq!(request.config_type, ConfigType::Type1);
    assert_eq!(request.direction, Direction::Write);
    assert_eq!(request.byte_offset(), 4);
    assert_eq!(header.attributes(), Attributes::default());
}

#[test]
fn a_new_config_request_reads_a_whole_dw_or_writes_the_enabled_bytes() {
    let tag = Tag::new(0x2a5).expect("10 bits");
    let (requester, target) = (Bdf::new(0, 0, 0), Bdf::new(5, 0x1f, 7));
    // Offset 0x112: extended register 1, register 4 (0x110); bits [1:0] dropped.
    let read = ConfigRequest::new(ConfigType::Type0, requester, tag, target, 0x112, None);
    assert_eq!(
        (
            read.direction,
            read.first_be,
            read.extended_register_number,
            read.register_number
        ),
        (Direction::Read, 0xf, 1, 4)
    );
    assert_eq!(
        (read.requester, read.tag, read.target),
        (requester, tag, target)
    );
    let write = ConfigRequest::new(ConfigType::Type1, requester, tag, target, 4, Some(0x13));
    assert_eq!(
        (
            write.direction,
            write.config_type,
            write.first_be,
            write.byte_offset()
        ),
        (Direction::Write, ConfigType::Type1, 0x3, 4),
        "only First DW BE[3:0] is kept"
    );
}

/// CplD: 1 DW of a successful read, 10-bit tag.
const CPLD: [u8; 12] = [
    0x4a, // Fmt 010b << 5 | Type 0_1010b = 0100_1010b
    0x80, // T9 1, TC 000b, T8 0
    0x00, //
    0x01, // Length 1 DW
    0x05, 0x00, // Completer ID 05:00.0
    0x00, // Status 000b (SC) << 5 | BCM 0 << 4 | Byte Count[11:8] 0000b
    0x04, // Byte Count[7:0] = 4
    0x01, 0x00, // Requester ID 01:00.0
    0xa5, // Tag[7:0]; Tag = 10b : 0xa5 = 0x2a5
    0x00, // R, Lower Address 0
];

#[test]
fn completion_with_data() {
    let header = decode(&CPLD);
    let cpl = completion(&header);
    assert_eq!(cpl.status, CompletionStatus::Successful);
    assert_eq!(cpl.completer, Bdf::new(5, 0, 0));
    assert_eq!(cpl.requester, Bdf::new(1, 0, 0));
    assert_eq!(cpl.tag.get(), 0x2a5);
    assert_eq!(cpl.byte_count, 4);
    assert_eq!(cpl.data_dw, Some(1));
    assert!(!cpl.locked);
    assert_eq!(header.route(), Route::Id(Bdf::new(1, 0, 0)));
    assert_eq!(header.flow_control_class(), FlowControlClass::Completion);
    assert_encodes_to(&header, &CPLD);
}

/// CplLk with UR, BCM, byte count 4096 and the largest Lower Address.
const CPLLK_UR: [u8; 12] = [
    0x0b, // Fmt 000b << 5 | Type 0_1011b (CplLk)
    0x00, 0x00, 0x00, // Length Reserved for a completion without data
    0x05, 0x00, // Completer ID
    0x30, // Status 001b (UR) << 5 | BCM 1 << 4 | Byte Count[11:8] 0 = 0011_0000b
    0x00, // Byte Count[7:0]; 000h means 4096
    0x01, 0x00, 0x07, //
    0x7f, // Lower Address 111_1111b
];

#[test]
fn locked_completion_with_unsupported_request() {
    let header = decode(&CPLLK_UR);
    let cpl = completion(&header);
    assert!(cpl.locked);
    assert_eq!(cpl.status, CompletionStatus::UnsupportedRequest);
    assert!(cpl.byte_count_modified);
    assert_eq!(cpl.byte_count, 4096);
    assert_eq!(cpl.lower_address, 0x7f);
    assert_eq!(cpl.data_dw, None);
    assert_eq!(header.payload_len_dw(), 0);
    assert_encodes_to(&header, &CPLLK_UR);
}

#[test]
fn request_retry_and_completer_abort_statuses() {
    let mut bytes = CPLLK_UR;
    bytes[6] = 0b010 << 5;
    assert_eq!(
        completion(&decode(&bytes)).status,
        CompletionStatus::RequestRetry
    );
    bytes[6] = 0b100 << 5;
    assert_eq!(
        completion(&decode(&bytes)).status,
        CompletionStatus::CompleterAbort
    );
}

/// A Msg header: Fmt 001b, Type 10r₂r₁r₀b, requester 03:00.0, code, bytes 8–15 zero.
const fn msg(routing: u8, code: u8) -> [u8; 16] {
    [
        0x20 | 0x10 | routing, // Fmt 001b << 5 | Type 1_0rrrb
        0x00,
        0x00,
        0x00,
        0x03,
        0x00,
        0x00,
        code, //
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ]
}

#[test]
fn interrupt_power_and_error_messages() {
    // (routing r[2:0], code, expected code, expected routing) from Tables 2-21 to 2-26.
    let cases = [
        (
            0b100,
            0x21,
            MessageCode::AssertIntx(IntxPin::B),
            MessageRouting::Local,
        ),
        (
            0b100,
            0x27,
            MessageCode::DeassertIntx(IntxPin::D),
            MessageRouting::Local,
        ),
        (
            0b100,
            0x14,
            MessageCode::PmActiveStateNak,
            MessageRouting::Local,
        ),
        (
            0b000,
            0x18,
            MessageCode::PmPme,
            MessageRouting::ToRootComplex,
        ),
        (
            0b011,
            0x19,
            MessageCode::PmeTurnOff,
            MessageRouting::BroadcastFromRoot,
        ),
        (
            0b101,
            0x1b,
            MessageCode::PmeToAck,
            MessageRouting::GatheredToRoot,
        ),
        (
            0b000,
            0x30,
            MessageCode::ErrCor,
            MessageRouting::ToRootComplex,
        ),
        (
            0b000,
            0x31,
            MessageCode::ErrNonFatal,
            MessageRouting::ToRootComplex,
        ),
        (
            0b000,
            0x33,
            MessageCode::ErrFatal,
            MessageRouting::ToRootComplex,
        ),
        (
            0b011,
            0x00,
            MessageCode::Unlock,
            MessageRouting::BroadcastFromRoot,
        ),
    ];
    for (routing, code, expected_code, expected_routing) in cases {
        let bytes = msg(routing, code);
        let header = decode(&bytes);
        let m = message(&header);
        assert_eq!(m.code, expected_code);
        assert_eq!(m.routing, expected_routing);
        assert_eq!(m.code.defined_routing(), Some(expected_routing));
        assert_eq!(m.requester, Bdf::new(3, 0, 0));
        assert_eq!(header.route(), Route::Implicit(expected_routing));
        assert_eq!(header.flow_control_class(), FlowControlClass::Posted);
        assert_eq!(header.header_len(), 16);
        assert_encodes_to(&header, &bytes);
    }
}

#[test]
fn set_slot_power_limit_carries_one_dw() {
    let mut bytes = msg(0b100, 0x50);
    bytes[0] = 0x74; // Fmt 011b (MsgD) << 5 | Type 1_0100b
    bytes[3] = 0x01; // Length 1 DW
    let header = decode(&bytes);
    let m = message(&header);
    assert_eq!(m.code, MessageCode::SetSlotPowerLimit);
    assert_eq!(m.data_dw, Some(1));
    assert_eq!(header.payload_len_dw(), 1);
    assert_encodes_to(&header, &bytes);
}

#[test]
fn vendor_defined_message_routed_by_id() {
    let bytes = [
        0x32, // Fmt 001b << 5 | Type 1_0010b (Msg, route by ID)
        0x00, 0x00, 0x00, 0x03, 0x00, 0x00, //
        0x7f, // Vendor_Defined Type 1
        0x04, 0x00, // Destination ID 04:00.0
        0x1a, 0xf4, // Vendor ID 0x1af4
        0xde, 0xad, 0xbe, 0xef, // vendor-defined
    ];
    let header = decode(&bytes);
    let m = message(&header);
    assert_eq!(m.code, MessageCode::VendorDefinedType1);
    assert_eq!(m.target(), Some(Bdf::new(4, 0, 0)));
    assert_eq!(m.vendor_id(), Some(0x1af4));
    assert_eq!(header.route(), Route::Id(Bdf::new(4, 0, 0)));
    let built = Message::new(
        Bdf::new(3, 0, 0),
        MessageCode::VendorDefinedType1,
        MessageRouting::ById,
    )
    .with_target(Bdf::new(4, 0, 0))
    .with_vendor_id(0x1af4);
    assert_eq!(built.bytes_8_to_15[..4], bytes[8..12]);
    assert_encodes_to(&header, &bytes);
}

#[test]
fn address_routed_message() {
    let mut bytes = msg(0b001, 0x7e);
    bytes[8..16].copy_from_slice(&[0, 0, 0, 0x01, 0x80, 0, 0, 0x08]);
    let header = decode(&bytes);
    assert_eq!(header.route(), Route::Address(0x1_8000_0008));
}

#[test]
fn reserved_message_routing_terminates_at_receiver() {
    // §2.3: r[2:0] = 110b or 111b is handled as Local; it is not Malformed.
    let header = decode(&msg(0b110, 0x7f));
    assert_eq!(
        header.route(),
        Route::Implicit(MessageRouting::Reserved(0b110))
    );
}

/// An End-End PASID prefix, then MWr 3 DW with TD: 4 + 12 + 4 + 4 = 24 bytes.
const PREFIXED_MWR_WITH_DIGEST: [u8; 24] = [
    0x91, 0x00, 0x12, 0x34, // Fmt 100b << 5 | Type 1_0001b (End-End, PASID)
    0x40, // Fmt 010b << 5 | Type 0_0000b (MWr, 3 DW)
    0x00, //
    0x80, // TD 1
    0x01, // Length 1 DW
    0x01, 0x00, 0x00, 0x0f, // Requester 01:00.0, tag 0, BE 0000b/1111b
    0x00, 0x00, 0x20, 0x00, // Address 0x2000
    0x11, 0x22, 0x33, 0x44, // payload
    0xaa, 0xbb, 0xcc, 0xdd, // TLP Digest
];

#[test]
fn whole_tlp_with_prefix_payload_and_digest() {
    let tlp = Tlp::parse(&PREFIXED_MWR_WITH_DIGEST).expect("a well-formed TLP");
    assert_eq!(tlp.prefixes.len(), 1);
    let prefix = tlp.prefixes.as_slice()[0];
    assert_eq!(prefix.scope(), PrefixScope::EndEnd);
    assert_eq!(prefix.subtype(), Prefix::END_END_PASID);
    assert_eq!(memory(&tlp.header).address, 0x2000);
    assert_eq!(tlp.payload, &[0x11, 0x22, 0x33, 0x44]);
    assert_eq!(tlp.digest, Some(0xaabb_ccdd));
    assert_eq!(tlp.wire_len(), 24);
    let mut out = [0u8; 32];
    assert_eq!(tlp.emit(&mut out), Ok(24));
    assert_eq!(out[..24], PREFIXED_MWR_WITH_DIGEST);
}

// ---------------------------------------------------------------------------
// AtomicOps (§2.2.7.1, Table 2-15; §2.2.9.1 for their completions)
// ---------------------------------------------------------------------------

/// FetchAdd, 3 DW, 32-bit operand: 1 DW at 0x8000_1004 for 02:00.0, 10-bit tag.
const FETCH_ADD_32: [u8; 12] = [
    0x4c, // Fmt 010b (3 DW, data) << 5 | Type 0_1100b (FetchAdd) = 010_01100b
    0x80, // T9 1, TC 000b, T8 0, A2 0, R 0, TH 0 = 1_000_0_0_0_0b
    0x00, // TD 0, EP 0, Attr[1:0] 00b, AT 00b, Length[9:8] 00b
    0x01, // Length 1 DW: one 32-bit operand
    0x02, 0x00, // Requester ID 02:00.0
    0xb7, // Tag[7:0]; Tag = T9 T8 : 0xb7 = 10b : 0xb7 = 0x2b7
    0x00, // Last DW BE, First DW BE: Reserved for AtomicOps with TH clear
    0x80, 0x00, 0x10, 0x04, // Address[31:2] = 0x8000_1004 (4-byte aligned), PH 00b
];

#[test]
fn fetch_add_32_bit() {
    let header = decode(&FETCH_ADD_32);
    let request = memory(&header);
    assert_eq!(request.op, MemoryOp::FetchAdd);
    assert_eq!(header.tlp_type(), TlpType::FetchAdd);
    assert_eq!(request.address, 0x8000_1004);
    assert_eq!(request.length_dw, 1);
    assert_eq!(request.requester, Bdf::new(2, 0, 0));
    assert_eq!(request.tag.get(), 0x2b7);
    assert_eq!(request.atomic_operand_bytes(), Some(4));
    assert_eq!(header.kind(), TlpKind::Memory);
    assert_eq!(header.flow_control_class(), FlowControlClass::NonPosted);
    assert_eq!(header.route(), Route::Address(0x8000_1004));
    assert!(header.has_data());
    assert_eq!(header.payload_len_dw(), 1);
    assert_eq!(header.header_len(), 12);
    assert_encodes_to(&header, &FETCH_ADD_32);

    // The operand follows the header: 12 + 4 bytes, nothing less.
    let mut tlp = [0u8; 16];
    tlp[..12].copy_from_slice(&FETCH_ADD_32);
    tlp[12..].copy_from_slice(&[0, 0, 0, 1]); // add 1
    let parsed = Tlp::parse(&tlp).expect("a well-formed AtomicOp");
    assert_eq!(parsed.payload, &[0, 0, 0, 1]);
    assert_eq!(
        Tlp::parse(&FETCH_ADD_32),
        Err(TlpError::LengthMismatch {
            expected: 16,
            got: 12
        })
    );
}

/// Swap, 4 DW, 64-bit operand at 0x1_2345_6788, TC3 with Relaxed Ordering.
const SWAP_64: [u8; 16] = [
    0x6d, // Fmt 011b (4 DW, data) << 5 | Type 0_1101b (Swap) = 011_01101b
    0x30, // T9 0, TC 011b, T8 0, A2 0, R 0, TH 0 = 0_011_0_0_0_0b
    0x20, // TD 0, EP 0, Attr[1:0] (RO, NS) 10b, AT 00b, Length[9:8] 00b = 0_0_10_00_00b
    0x02, // Length 2 DW: one 64-bit operand
    0x03, 0x00, // Requester ID 03:00.0
    0x42, // Tag[7:0]; T9 T8 = 00b
    0x00, // byte enables Reserved
    0x00, 0x00, 0x00, 0x01, // Address[63:32]
    0x23, 0x45, 0x67, 0x88, // Address[31:2]: 0x88 = 136 = 17 * 8, so 8-byte aligned; PH 00b
];

#[test]
fn swap_64_bit_with_four_dw_header() {
    let header = decode(&SWAP_64);
    let request = memory(&header);
    assert_eq!(request.op, MemoryOp::Swap);
    assert_eq!(request.address, 0x1_2345_6788);
    assert_eq!(request.length_dw, 2);
    assert_eq!(request.traffic_class.get(), 3);
    assert!(request.attributes.relaxed_ordering && !request.attributes.no_snoop);
    assert_eq!(request.tag.get(), 0x42);
    assert_eq!(request.atomic_operand_bytes(), Some(8));
    assert_eq!(header.header_len(), 16);
    assert_eq!(header.payload_len_dw(), 2);
    assert_eq!(header.total_len(0), 24);
    assert_eq!(header.flow_control_class(), FlowControlClass::NonPosted);
    assert_encodes_to(&header, &SWAP_64);
}

/// CAS, 4 DW, two 128-bit operands (8 DW) in the last 16 bytes of a 4 KiB page.
const CAS_128: [u8; 16] = [
    0x6e, // Fmt 011b << 5 | Type 0_1110b (CAS) = 011_01110b
    0x08, // T9 0, TC 000b, T8 1 = 0_000_1_0_0_0b
    0x00, //
    0x08, // Length 8 DW: "compare" then "swap", 16 bytes each
    0x01, 0x08, // Requester ID 01:01.0 = 0x01 << 8 | 1 << 3
    0xff, // Tag[7:0]; Tag = 01b : 0xff = 0x1ff
    0x00, // byte enables Reserved
    0x00, 0x00, 0x00, 0x20, // Address[63:32] = 0x20
    0x00, 0x00, 0x0f, 0xf0, // Address[31:2]: 0xff0 = 255 * 16, 16-byte aligned
];

#[test]
fn compare_and_swap_128_bit_at_the_end_of_a_page() {
    let header = decode(&CAS_128);
    let request = memory(&header);
    assert_eq!(request.op, MemoryOp::CompareAndSwap);
    assert_eq!(request.address, 0x20_0000_0ff0);
    assert_eq!(request.length_dw, 8);
    assert_eq!(request.tag.get(), 0x1ff);
    assert_eq!(request.requester, Bdf::new(1, 1, 0));
    // Length counts two operands; the memory touched is one (§2.2.7.1).
    assert_eq!(request.atomic_operand_bytes(), Some(16));
    assert_eq!(header.payload_len_dw(), 8);
    assert_encodes_to(&header, &CAS_128);

    // §2.2.7.1: 0xff0 + 16 bytes stays in the page, so this is no 4 KiB
    // crossing; the same Length as a read (Fmt 001b, Type 0 = 0x20, byte
    // enables 1111b/1111b) does cross.
    let mut read = CAS_128;
    read[0] = 0x20;
    read[7] = 0xff;
    assert_eq!(
        Header::decode(&read),
        Err(TlpError::CrossesFourKiB {
            address: 0x20_0000_0ff0,
            length_dw: 8
        })
    );
}

/// CAS, 3 DW, two 32-bit operands, with TH set: byte 7 is ST[7:0].
const CAS_32_TPH: [u8; 12] = [
    0x4e, // Fmt 010b << 5 | Type 0_1110b = 010_01110b
    0x01, // TH 1
    0x00, //
    0x02, // Length 2 DW: two 32-bit operands
    0x00, 0x10, // Requester ID 00:02.0 = 2 << 3
    0x05, // Tag 0x05
    0xa5, // ST[7:0] (TH set on an AtomicOp: byte 7 is the Steering Tag)
    0x00, 0x00, 0x20, 0x05, // Address[31:2] = 0x2004 (4-byte aligned, not 8), PH 01b
];

#[test]
fn compare_and_swap_32_bit_with_steering_tag() {
    let header = decode(&CAS_32_TPH);
    let request = memory(&header);
    assert_eq!(request.op, MemoryOp::CompareAndSwap);
    assert_eq!(request.address, 0x2004);
    assert_eq!(request.processing_hint, Some(ProcessingHint::Requester));
    assert_eq!(request.steering_tag(), Some(0xa5));
    // The byte enables are implied to be Reserved: none apply (§2.2.7.1).
    assert_eq!(request.effective_byte_enables(), (0, 0));
    assert_eq!(request.atomic_operand_bytes(), Some(4));
    assert_encodes_to(&header, &CAS_32_TPH);
}

#[test]
fn atomic_op_completion_carries_one_operand() {
    // §2.2.9.1: an AtomicOp Completion's Byte Count is the operand size in
    // bytes and its Lower Address is Reserved; the data is the target's
    // original value, one operand (§6.15). (Expected DW, Byte Count, Lower Address.)
    let cases: [(&[u8], u16, u16, u8); 4] = [
        (&FETCH_ADD_32, 1, 4, 0),
        (&SWAP_64, 2, 8, 0),
        (&CAS_128, 4, 16, 0),
        (&CAS_32_TPH, 1, 4, 0),
    ];
    for (bytes, data_dw, byte_count, lower) in cases {
        let request = memory(&decode(bytes));
        assert_eq!(request.completion_data_dw(), Some(data_dw), "{request:?}");
        assert_eq!(request.completion_byte_count(), Some(byte_count));
        assert_eq!(request.completion_lower_address(), Some(lower));
    }
    // A read: Length DW, and Byte Count / Lower Address from the byte enables (§2.3.1.1).
    let read = memory(&decode(&MRD_32));
    assert_eq!(read.completion_data_dw(), Some(4));
    assert_eq!(read.completion_byte_count(), Some(16));
    assert_eq!(read.completion_lower_address(), Some(0x10));
    // A posted write is not completed.
    let write = memory(&decode(&MWR_64));
    assert_eq!(write.completion_data_dw(), None);
    assert_eq!(write.completion_byte_count(), None);
    assert_eq!(write.completion_lower_address(), None);
}

#[test]
fn atomic_op_lengths_outside_table_2_15_are_malformed() {
    let cases: [(&[u8], u8, MemoryOp, u16); 6] = [
        (&FETCH_ADD_32, 0x03, MemoryOp::FetchAdd, 3),
        (&FETCH_ADD_32, 0x04, MemoryOp::FetchAdd, 4),
        (&SWAP_64, 0x04, MemoryOp::Swap, 4),
        (&CAS_128, 0x01, MemoryOp::CompareAndSwap, 1),
        (&CAS_128, 0x10, MemoryOp::CompareAndSwap, 16),
        // Length[9:0] = 0 means 1024 DW (Table 2-4).
        (&CAS_128, 0x00, MemoryOp::CompareAndSwap, 1024),
    ];
    for (bytes, length_field, op, length_dw) in cases {
        let mut bytes = bytes.to_vec();
        bytes[3] = length_field;
        assert_eq!(
            Header::decode(&bytes),
            Err(TlpError::AtomicOpLength { op, length_dw })
        );
    }
}

#[test]
fn misaligned_atomic_ops_are_malformed() {
    // FetchAdd with Length 2 (a 64-bit operand) at 0x8000_1004: 4 mod 8.
    let mut bytes = FETCH_ADD_32;
    bytes[3] = 0x02;
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::AtomicOpMisaligned {
            address: 0x8000_1004,
            operand_bytes: 8
        })
    );
    // Swap 64-bit at 0x1_2345_678c: 0x8c = 140 = 17 * 8 + 4.
    let mut bytes = SWAP_64;
    bytes[15] = 0x8c;
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::AtomicOpMisaligned {
            address: 0x1_2345_678c,
            operand_bytes: 8
        })
    );
    // CAS 128-bit at 0x20_0000_0ff8: 0xff8 = 255 * 16 + 8.
    let mut bytes = CAS_128;
    bytes[15] = 0xf8;
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::AtomicOpMisaligned {
            address: 0x20_0000_0ff8,
            operand_bytes: 16
        })
    );
    // CAS with Length 4 (two 64-bit operands) at 0x2004: operand alignment
    // is Length * 2 = 8 bytes, not Length * 4.
    let mut bytes = CAS_32_TPH;
    bytes[3] = 0x04;
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::AtomicOpMisaligned {
            address: 0x2004,
            operand_bytes: 8
        })
    );
}

#[test]
fn atomic_op_byte_enables_are_reserved() {
    // §2.2.7.1: with TH clear the BE fields are Reserved, so a receiver
    // ignores them, even ones §2.2.5.1 would call illegal for 1 DW.
    let mut bytes = FETCH_ADD_32;
    bytes[7] = 0xff;
    let header = decode(&bytes);
    let request = memory(&header);
    assert_eq!((request.first_be, request.last_be), (0, 0));
    assert_encodes_to(&header, &FETCH_ADD_32);
    // A transmitter fills Reserved fields with 0 (§2.2).
    let mut out = [0u8; 16];
    let set = Header {
        body: Body::Memory(MemoryRequest {
            first_be: 0xf,
            ..request
        }),
        ..header
    };
    assert_eq!(
        set.encode(&mut out),
        Err(TlpError::AtomicOpByteEnables {
            first: 0xf,
            last: 0
        })
    );
}

#[test]
fn encoder_refuses_malformed_atomic_ops() {
    let header = decode(&SWAP_64);
    let request = memory(&header);
    let with = |request| Header {
        body: Body::Memory(request),
        ..header
    };
    let mut out = [0u8; 16];
    let cas_of_1 = MemoryRequest {
        op: MemoryOp::CompareAndSwap,
        length_dw: 1,
        ..request
    };
    assert_eq!(
        with(cas_of_1).encode(&mut out),
        Err(TlpError::AtomicOpLength {
            op: MemoryOp::CompareAndSwap,
            length_dw: 1
        })
    );
    let misaligned = MemoryRequest {
        address: 0x1_0000_0004,
        ..request
    };
    assert_eq!(
        with(misaligned).encode(&mut out),
        Err(TlpError::AtomicOpMisaligned {
            address: 0x1_0000_0004,
            operand_bytes: 8
        })
    );
}

#[test]
fn deferrable_memory_write_stays_unsupported() {
    // DMWr: Fmt 010b/011b, Type 1_1011b = 0x5b / 0x7b (Table 2-3).
    for byte0 in [0x5b, 0x7b] {
        let mut bytes = [0u8; 16];
        bytes[0] = byte0;
        assert_eq!(
            Header::decode(&bytes),
            Err(TlpError::UnsupportedFmtType {
                fmt: byte0 >> 5,
                ty: 0b1_1011
            })
        );
    }
    // An AtomicOp Type without data is not a TLP type at all (Table 2-3).
    let mut bytes = FETCH_ADD_32;
    bytes[0] = 0x0c; // Fmt 000b, Type 0_1100b
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::ReservedFmtType {
            fmt: 0,
            ty: 0b0_1100
        })
    );
}

// ---------------------------------------------------------------------------
// Malformed input
// ---------------------------------------------------------------------------

#[test]
fn truncated_headers() {
    assert_eq!(
        Header::decode(&MRD_32[..11]),
        Err(TlpError::Truncated {
            needed: 12,
            got: 11
        })
    );
    assert_eq!(
        Header::decode(&MWR_64[..12]),
        Err(TlpError::Truncated {
            needed: 16,
            got: 12
        })
    );
    assert_eq!(
        Header::decode(&[]),
        Err(TlpError::Truncated { needed: 12, got: 0 })
    );
}

#[test]
fn tlp_length_must_match_the_header() {
    let bytes = &PREFIXED_MWR_WITH_DIGEST;
    assert_eq!(
        Tlp::parse(&bytes[..23]),
        Err(TlpError::LengthMismatch {
            expected: 24,
            got: 23
        })
    );
    let mut longer = [0u8; 25];
    longer[..24].copy_from_slice(bytes);
    assert_eq!(
        Tlp::parse(&longer),
        Err(TlpError::LengthMismatch {
            expected: 24,
            got: 25
        })
    );
    // TD clear but a digest's worth of bytes present (§2.2.3).
    let mut no_td = *bytes;
    no_td[6] = 0x00;
    assert_eq!(
        Tlp::parse(&no_td),
        Err(TlpError::LengthMismatch {
            expected: 20,
            got: 24
        })
    );
}

#[test]
fn reserved_and_unsupported_fmt_type() {
    let mut bytes = MRD_32;
    bytes[0] = 0b101 << 5; // Fmt 101b is reserved
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::ReservedFmtType { fmt: 0b101, ty: 0 })
    );
    bytes[0] = 0x2a; // Fmt 001b, Type 0_1010b: a 4 DW completion does not exist
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::ReservedFmtType {
            fmt: 0b001,
            ty: 0b0_1010
        })
    );
    bytes[0] = 0x5b; // Fmt 010b, Type 1_1011b: DMWr
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::UnsupportedFmtType {
            fmt: 0b010,
            ty: 0b1_1011
        })
    );
}

#[test]
fn four_dw_header_below_4_gib_is_rejected() {
    let mut bytes = MWR_64;
    bytes[8..12].copy_from_slice(&[0, 0, 0, 0]); // Address[63:32] = 0
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::FourDwAddressBelow4G {
            address: 0x3456_7800
        })
    );
}

#[test]
fn illegal_byte_enables_are_rejected() {
    let mut bytes = MRD_32;
    bytes[3] = 0x01; // Length 1 DW...
    bytes[7] = 0x1f; // ...with Last DW BE 0001b
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::IllegalByteEnables {
            first: 0xf,
            last: 0x1,
            length: 1
        })
    );
    bytes[3] = 0x03; // Length 3 DW
    bytes[7] = 0xf5; // First DW BE 0101b is not contiguous
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::IllegalByteEnables {
            first: 0x5,
            last: 0xf,
            length: 3
        })
    );
}

#[test]
fn request_crossing_4_kib_is_rejected() {
    let mut bytes = MRD_32;
    bytes[8..12].copy_from_slice(&[0, 0, 0x0f, 0xfc]); // Address 0xffc
    bytes[3] = 0x02; // 2 DW: bytes 0xffc..0x1004
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::CrossesFourKiB {
            address: 0xffc,
            length_dw: 2
        })
    );
}

#[test]
fn reserved_completion_status_is_rejected() {
    let mut bytes = CPLD;
    bytes[6] = 0b011 << 5;
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::ReservedCompletionStatus { status: 0b011 })
    );
}

#[test]
fn io_and_config_must_be_one_dw_on_tc0_without_attributes() {
    let mut bytes = CFGRD0;
    bytes[3] = 0x02;
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::NotSingleDw { length_dw: 2 })
    );
    let mut bytes = IOWR;
    bytes[3] = 0x00; // Length 0 means 1024 DW
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::NotSingleDw { length_dw: 1024 })
    );
    let mut bytes = IOWR;
    bytes[1] |= 0b001 << 4; // TC1
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::IoConfigTrafficClass { traffic_class: 1 })
    );
    let mut bytes = CFGRD0;
    bytes[2] = 0b01 << 4; // No Snoop
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::IoConfigAttributes { attr: 0b01 })
    );
    let mut bytes = CFGRD0;
    bytes[7] = 0x1f; // Last DW BE 0001b
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::IllegalByteEnables {
            first: 0xf,
            last: 0x1,
            length: 1
        })
    );
}

#[test]
fn interrupt_message_on_tc1_is_rejected() {
    let mut bytes = msg(0b100, 0x20);
    bytes[1] = 0b001 << 4;
    assert_eq!(
        Header::decode(&bytes),
        Err(TlpError::MessageRequiresTc0 {
            code: 0x20,
            traffic_class: 1
        })
    );
}

#[test]
fn prefix_rules_are_enforced() {
    let mut bytes: Vec<u8> = Vec::new();
    for _ in 0..5 {
        bytes.extend_from_slice(&[0x9e, 0, 0, 0]); // End-End VendPrefixE0
    }
    bytes.extend_from_slice(&MRD_32);
    assert_eq!(
        Tlp::parse(&bytes),
        Err(TlpError::TooManyEndEndPrefixes { max: 4 })
    );
    let mut bytes: Vec<u8> = Vec::new();
    bytes.extend_from_slice(&[0x9e, 0, 0, 0]); // End-End
    bytes.extend_from_slice(&[0x8e, 0, 0, 0]); // then Local: Malformed (§2.2.10.1)
    bytes.extend_from_slice(&MRD_32);
    assert_eq!(Tlp::parse(&bytes), Err(TlpError::LocalPrefixAfterEndEnd));
    assert_eq!(
        Header::decode(&[0x9e, 0, 0, 0]),
        Err(TlpError::UnexpectedPrefix { byte0: 0x9e })
    );
}

#[test]
fn encoder_refuses_what_a_transmitter_must_not_form() {
    let request = memory(&decode(&MRD_32));
    let header = |body| Header {
        digest_present: false,
        poisoned: false,
        body,
    };
    let mut out = [0u8; 16];
    let unaligned = MemoryRequest {
        address: 0x1002,
        ..request
    };
    assert_eq!(
        header(Body::Memory(unaligned)).encode(&mut out),
        Err(TlpError::AddressNotDwAligned { address: 0x1002 })
    );
    let too_long = MemoryRequest {
        address: 0,
        length_dw: 1025,
        ..request
    };
    assert_eq!(
        header(Body::Memory(too_long)).encode(&mut out),
        Err(TlpError::LengthOutOfRange { length_dw: 1025 })
    );
    let posted_10_bit_tag = MemoryRequest {
        op: MemoryOp::Write,
        tag: Tag::new(0x100).expect("fits 10 bits"),
        ..request
    };
    assert_eq!(
        header(Body::Memory(posted_10_bit_tag)).encode(&mut out),
        Err(TlpError::PostedTagTooWide { tag: 0x100 })
    );
    let wide_be = MemoryRequest {
        first_be: 0x1f,
        ..request
    };
    assert_eq!(
        header(Body::Memory(wide_be)).encode(&mut out),
        Err(TlpError::FieldOutOfRange {
            field: layout::FIRST_DW_BE,
            value: 0x1f
        })
    );
    assert_eq!(
        header(Body::Memory(request)).encode(&mut out[..11]),
        Err(TlpError::BufferTooSmall {
            needed: 12,
            got: 11
        })
    );
    // 64-bit addresses pick the 4 DW header, so a 4 DW header below 4 GiB cannot be formed.
    let high = MemoryRequest {
        address: FOUR_GIB,
        ..request
    };
    assert_eq!(header(Body::Memory(high)).encode(&mut out), Ok(16));
    assert_eq!(out[0] >> 5, 0b001);
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

fn bdf() -> impl Strategy<Value = Bdf> {
    any::<u16>().prop_map(Bdf)
}

fn tag10() -> impl Strategy<Value = Tag> {
    (0..=Tag::MAX).prop_map(|value| Tag::new(value).expect("in range"))
}

fn traffic_class() -> impl Strategy<Value = TrafficClass> {
    (0u8..8).prop_map(TrafficClass::from_bits)
}

fn attributes() -> impl Strategy<Value = Attributes> {
    (0u8..8).prop_map(Attributes::from_bits)
}

fn processing_hint() -> impl Strategy<Value = Option<ProcessingHint>> {
    proptest::option::of((0u8..4).prop_map(ProcessingHint::from_bits))
}

fn length() -> impl Strategy<Value = u16> {
    1..=MAX_LENGTH_DW
}

/// Byte enables built from the rules of §2.2.5.1, not from the checker.
fn legal_byte_enables(length_dw: u16, address: u64, choice: [u8; 4]) -> (u8, u8) {
    const CONTIGUOUS_FIRST: [u8; 4] = [0b1000, 0b1100, 0b1110, 0b1111];
    const CONTIGUOUS_LAST: [u8; 4] = [0b0001, 0b0011, 0b0111, 0b1111];
    let [any_first, any_last, pick_first, pick_last] = choice;
    match length_dw {
        1 => (any_first & 0xf, 0),
        2 if address & 0b100 == 0 => (1 + any_first % 15, 1 + any_last % 15),
        _ => (
            CONTIGUOUS_FIRST[usize::from(pick_first % 4)],
            CONTIGUOUS_LAST[usize::from(pick_last % 4)],
        ),
    }
}

/// Table 2-15: the Length values of the architected operand sizes.
fn atomic_lengths(op: MemoryOp) -> &'static [u16] {
    match op {
        MemoryOp::FetchAdd | MemoryOp::Swap => &[1, 2],
        MemoryOp::CompareAndSwap => &[2, 4, 8],
        MemoryOp::Read | MemoryOp::ReadLocked | MemoryOp::Write => &[],
    }
}

/// §2.2.7.1: the operand, and so the alignment, is Length DW for FetchAdd and
/// Swap and half of it for CAS.
fn atomic_alignment(op: MemoryOp, length_dw: u16) -> u64 {
    let operands = if op == MemoryOp::CompareAndSwap { 2 } else { 1 };
    u64::from(length_dw) * 4 / operands
}

fn memory_op() -> impl Strategy<Value = MemoryOp> {
    prop_oneof![
        Just(MemoryOp::Read),
        Just(MemoryOp::ReadLocked),
        Just(MemoryOp::Write),
        Just(MemoryOp::FetchAdd),
        Just(MemoryOp::Swap),
        Just(MemoryOp::CompareAndSwap),
    ]
}

prop_compose! {
    fn memory_request()(
        op in memory_op(),
        traffic_class in traffic_class(),
        attributes in attributes(),
        address_type in (0u8..4).prop_map(AddressType::from_bits),
        requester in bdf(),
        tag in tag10(),
        high in prop_oneof![Just(0u64), 1u64..=u64::from(u32::MAX)],
        low in any::<u32>(),
        raw_length in length(),
        choice in any::<[u8; 4]>(),
        processing_hint in processing_hint(),
    ) -> MemoryRequest {
        let address = (high << 32) | u64::from(low & !0b11);
        // Keep inside the 4 KiB page (§2.2.7.1).
        let room = ((4096 - (address % 4096)) / 4) as u16;
        let length_dw = 1 + (raw_length - 1) % room;
        let mut request = MemoryRequest {
            op, traffic_class, attributes, address_type, requester, tag, address, length_dw,
            first_be: 0, last_be: 0, processing_hint,
        };
        if op == MemoryOp::Write {
            request.tag = Tag::from_8bit(tag.low());
        }
        if op.is_atomic() {
            let lengths = atomic_lengths(op);
            request.length_dw = lengths[usize::from(choice[2]) % lengths.len()];
            // Natural alignment (§2.2.7.1) also keeps the operand inside the page.
            request.address &= !(atomic_alignment(op, request.length_dw) - 1);
        }
        if request.byte_enables_replaced_by_steering_tag() {
            // Byte 7 is ST[7:0]: any value.
            request.first_be = choice[0] & 0xf;
            request.last_be = choice[1] & 0xf;
        } else if op.is_atomic() {
            // Reserved without TH (§2.2.7.1).
            (request.first_be, request.last_be) = (0, 0);
        } else {
            (request.first_be, request.last_be) = legal_byte_enables(length_dw, address, choice);
        }
        request
    }
}

prop_compose! {
    fn io_request()(
        write in any::<bool>(), requester in bdf(), tag in tag10(),
        address in any::<u32>(), first_be in 0u8..16,
    ) -> IoRequest {
        IoRequest {
            direction: if write { Direction::Write } else { Direction::Read },
            requester, tag, address: address & !0b11, first_be,
        }
    }
}

prop_compose! {
    fn config_request()(
        write in any::<bool>(), type1 in any::<bool>(), requester in bdf(), tag in tag10(),
        target in bdf(), offset in 0u16..4096, first_be in 0u8..16,
    ) -> ConfigRequest {
        ConfigRequest {
            direction: if write { Direction::Write } else { Direction::Read },
            config_type: if type1 { ConfigType::Type1 } else { ConfigType::Type0 },
            requester, tag, target, register_number: 0, extended_register_number: 0, first_be,
        }.with_byte_offset(offset)
    }
}

prop_compose! {
    fn completion_header()(
        locked in any::<bool>(), traffic_class in traffic_class(), attributes in attributes(),
        completer in bdf(),
        status in prop_oneof![
            Just(CompletionStatus::Successful),
            Just(CompletionStatus::UnsupportedRequest),
            Just(CompletionStatus::RequestRetry),
            Just(CompletionStatus::CompleterAbort),
        ],
        byte_count_modified in any::<bool>(), byte_count in 1..=MAX_BYTE_COUNT,
        requester in bdf(), tag in tag10(), lower_address in 0u8..0x80,
        data_dw in proptest::option::of(length()),
    ) -> Completion {
        Completion {
            locked, traffic_class, attributes, completer, status, byte_count_modified,
            byte_count, requester, tag, lower_address, data_dw,
        }
    }
}

prop_compose! {
    fn message_header()(
        traffic_class in traffic_class(), attributes in attributes(), requester in bdf(),
        tag in any::<u8>(), code in any::<u8>(), routing in 0u8..8,
        bytes_8_to_15 in any::<[u8; 8]>(), data_dw in proptest::option::of(length()),
    ) -> Message {
        let code = MessageCode::from_code(code);
        Message {
            // Messages that must use TC0 get TC0 (§2.2.8.1–§2.2.8.5).
            traffic_class: if code.requires_tc0() { TrafficClass::TC0 } else { traffic_class },
            attributes, requester, tag, code, routing: MessageRouting::from_bits(routing),
            bytes_8_to_15, data_dw,
        }
    }
}

fn header() -> impl Strategy<Value = Header> {
    let body = prop_oneof![
        memory_request().prop_map(Body::Memory),
        io_request().prop_map(Body::Io),
        config_request().prop_map(Body::Config),
        completion_header().prop_map(Body::Completion),
        message_header().prop_map(Body::Message),
    ];
    (any::<bool>(), any::<bool>(), body).prop_map(|(digest_present, poisoned, body)| Header {
        digest_present,
        poisoned,
        body,
    })
}

fn prefixes() -> impl Strategy<Value = Prefixes> {
    (0usize..=2, 0usize..=4, any::<[u32; 6]>()).prop_map(|(local, end_end, bodies)| {
        let mut prefixes = Prefixes::new();
        for (index, body) in bodies.iter().enumerate().take(local + end_end) {
            let scope = if index < local {
                PrefixScope::Local
            } else {
                PrefixScope::EndEnd
            };
            let subtype = (*body >> 24) as u8 & 0xf;
            prefixes
                .push(Prefix::new(scope, subtype, *body))
                .expect("within the limits, locals first");
        }
        prefixes
    })
}

/// Byte 0 values of every modelled type, to steer random bytes past the Fmt/Type check.
const VALID_BYTE0: [u8; 26] = [
    0x00, 0x20, 0x01, 0x21, 0x40, 0x60, 0x02, 0x42, 0x04, 0x44, 0x05, 0x45, 0x0a, 0x4a, 0x0b, 0x4b,
    0x30, 0x32, 0x71, 0x9e, 0x4c, 0x6c, 0x4d, 0x6d, 0x4e, 0x6e,
];

proptest! {
    #[test]
    fn every_valid_header_round_trips(header in header()) {
        let mut bytes = [0u8; 16];
        let len = header.encode(&mut bytes).expect("generated headers are valid");
        prop_assert_eq!(len, header.header_len());
        prop_assert_eq!(Header::decode(&bytes[..len]), Ok(header));
        prop_assert_eq!(TlpType::from_byte0(bytes[0]), Ok(header.tlp_type()));
        let dws = header.encode_dws().expect("valid");
        prop_assert_eq!(Header::decode_dws(&dws), Ok(header));
    }

    #[test]
    fn every_valid_tlp_round_trips(
        header in header(),
        prefixes in prefixes(),
        fill in any::<u8>(),
        digest in any::<u32>(),
    ) {
        let payload: Vec<u8> = (0..header.payload_len()).map(|i| fill.wrapping_add(i as u8)).collect();
        let tlp = Tlp {
            prefixes,
            header,
            payload: &payload,
            digest: header.digest_present.then_some(digest),
        };
        let mut out = std::vec![0u8; tlp.wire_len()];
        prop_assert_eq!(tlp.emit(&mut out), Ok(tlp.wire_len()));
        prop_assert_eq!(Tlp::parse(&out), Ok(tlp));
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..48)) {
        let _ = Header::decode(&bytes);
        let _ = Tlp::parse(&bytes);
        let _ = Prefixes::decode(&bytes);
    }

    #[test]
    fn decoded_headers_re_encode_to_the_same_header(
        byte0 in proptest::sample::select(&VALID_BYTE0[..]),
        rest in any::<[u8; 23]>(),
    ) {
        let mut bytes = [0u8; 24];
        bytes[0] = byte0;
        bytes[1..].copy_from_slice(&rest);
        let _ = Tlp::parse(&bytes);
        if let Ok(header) = Header::decode(&bytes) {
            // Whatever a receiver accepts, weft can send again unchanged (Reserved bits aside).
            let mut out = [0u8; 16];
            let len = header.encode(&mut out).expect("accepted headers are encodable");
            prop_assert_eq!(Header::decode(&out[..len]), Ok(header));
        }
    }

    #[test]
    fn atomic_ops_are_accepted_exactly_as_table_2_15_and_alignment_allow(
        op in prop_oneof![
            Just(MemoryOp::FetchAdd),
            Just(MemoryOp::Swap),
            Just(MemoryOp::CompareAndSwap),
        ],
        length_dw in length(),
        address in any::<u32>(),
        be in any::<u8>(),
    ) {
        let address = address & !0b11;
        let ty = match op {
            MemoryOp::FetchAdd => 0b0_1100,
            MemoryOp::Swap => 0b0_1101,
            _ => 0b0_1110,
        };
        // Fmt 010b, 3 DW with data; Length[9:0] 0 means 1024 (Table 2-4).
        let field = length_dw % 1024;
        let mut bytes = [0u8; 12];
        bytes[0] = 0b010 << 5 | ty;
        bytes[2] = (field >> 8) as u8;
        bytes[3] = field as u8;
        bytes[7] = be;
        bytes[8..12].copy_from_slice(&address.to_be_bytes());
        let expected = if !atomic_lengths(op).contains(&length_dw) {
            Err(TlpError::AtomicOpLength { op, length_dw })
        } else if u64::from(address) % atomic_alignment(op, length_dw) != 0 {
            Err(TlpError::AtomicOpMisaligned {
                address: address.into(),
                operand_bytes: atomic_alignment(op, length_dw) as u16,
            })
        } else {
            Ok((op, length_dw, u64::from(address), 0, 0))
        };
        let got = Header::decode(&bytes).map(|header| {
            let m = memory(&header);
            (m.op, m.length_dw, m.address, m.first_be, m.last_be)
        });
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn byte_count_never_exceeds_the_requested_length(
        length_dw in length(), address in any::<u32>(), choice in any::<[u8; 4]>(),
    ) {
        let address = u64::from(address & !0b11);
        let (first, last) = legal_byte_enables(length_dw, address, choice);
        let count = read_request_byte_count(length_dw, first, last);
        prop_assert!(count >= 1 && count <= length_dw * 4);
        prop_assert_eq!(lower_address(address, first) & 0x7c, (address as u8) & 0x7c);
    }
}
