//! The RTL error completion agrees with weft-model's `error_completion` and `Switch::refuse`.
//!
//! Random requests of every kind (memory reads with any byte enables,
//! TLP Processing Hints, lengths up to 4 KiB; locked reads, AtomicOps,
//! writes, I/O, configuration requests, messages, completions) dropped for
//! every reason, at ports settled or not: the RTL answers exactly when the
//! model does (a non-posted request, not malformed, not at a disabled port
//! but a configuration request there before the port is settled), with the
//! header bytes of the model's completion. Then directed tests from the
//! tables of PCIe Base 6.0 §2.3.1.1 and the completion layout of §2.2.9.1.

mod common;

use common::tlp::{common, header_bytes, header_dws, packet, reason_code, request, wire_header};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::settle;
use weft_hdl::isolation::{
    ErrorCompletion, STATUS_COMPLETER_ABORT, STATUS_REQUEST_RETRY, STATUS_UNSUPPORTED_REQUEST,
};
use weft_model::isolation::{error_completion, refusal_status};
use weft_model::{DropReason, Packet, Permissions, Window};
use weft_pcie::tlp::{
    AddressType, Body, CompletionStatus, Header, MemoryOp, MemoryRequest, ProcessingHint, Tag,
    TrafficClass,
};
use weft_pcie::Bdf;

/// The RTL's completion for a request dropped at a port `settled` or not: `None` when it does not respond.
fn rtl_completion(
    dws: [u32; 4],
    reason: DropReason,
    settled: bool,
    completer: u16,
    status: u32,
) -> Option<Vec<u8>> {
    let mut block = ErrorCompletion::default();
    block.connect_all();
    block.dropped.next = true;
    block.drop_reason.next = reason_code(reason).to_bits();
    block.unsettled.next = !settled;
    block.dw0.next = dws[0].to_bits();
    block.dw1.next = dws[1].to_bits();
    block.dw2.next = dws[2].to_bits();
    block.dw3.next = dws[3].to_bits();
    block.completer_id.next = u32::from(completer).to_bits();
    block.status.next = status.to_bits();
    settle(&mut block).expect("the block is combinational");
    block.respond.val().then(|| {
        header_bytes([
            block.completion_dw0.val().to_u32(),
            block.completion_dw1.val().to_u32(),
            block.completion_dw2.val().to_u32(),
            0,
        ])
    })
}

/// The model's: `Switch::refuse` answers with `refusal_status`, Unsupported
/// Request there becoming Completer Abort when the request timed out
/// (`abort`), and `error_completion` builds it.
fn model_completion(
    header: &Header,
    reason: DropReason,
    settled: bool,
    completer: u16,
    abort: bool,
) -> Option<Vec<u8>> {
    let status = match refusal_status(header, reason, settled)? {
        CompletionStatus::UnsupportedRequest if abort => CompletionStatus::CompleterAbort,
        status => status,
    };
    let reply = error_completion(header, Bdf(completer), status)?;
    Some(wire_header(&reply.to_bytes().expect("a legal completion")))
}

/// A memory read or locked read with any byte enables and hint.
fn read() -> impl Strategy<Value = MemoryRequest> {
    (
        prop::bool::weighted(0.8),
        any::<u64>(),
        prop_oneof![2 => 1u16..=2, 2 => 3u16..=16, 1 => 1u16..=1024],
        (0u8..16, 0u8..16),
        prop::option::weighted(0.2, 0u8..4),
        (any::<u16>(), 0u16..=Tag::MAX, 0u8..8, 0u8..8),
    )
        .prop_map(
            |(plain, address, length_dw, (first_be, last_be), hint, (requester, tag, tc, attr))| {
                let address = address & !3;
                let room = ((0x1000 - (address & 0xfff)) / 4) as u16;
                let length_dw = length_dw.min(room);
                MemoryRequest {
                    op: if plain {
                        MemoryOp::Read
                    } else {
                        MemoryOp::ReadLocked
                    },
                    traffic_class: TrafficClass::from_bits(tc),
                    attributes: common::tlp::attributes(attr),
                    address_type: AddressType::Untranslated,
                    requester: Bdf(requester),
                    tag: Tag::new(tag).expect("drawn within 10 bits"),
                    address,
                    length_dw,
                    first_be,
                    last_be: if length_dw == 1 { 0 } else { last_be },
                    processing_hint: hint.map(ProcessingHint::from_bits),
                }
            },
        )
}

fn any_request() -> impl Strategy<Value = Option<Packet>> {
    let window = Window {
        base: 0x9000_0000,
        size: 0x1000,
        fabric_base: 0,
        permissions: Permissions::READ_WRITE,
    };
    prop_oneof![
        1 => read().prop_map(|m| {
            let header = Header { digest_present: false, poisoned: false, body: Body::Memory(m) };
            let packet = Packet::new(header, Vec::new());
            packet.to_bytes().ok().map(|_| packet)
        }),
        1 => (request(), common()).prop_map(move |(r, c)| packet(&r, &c, &[(true, window)])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn error_completion_is_the_models(
        request in any_request(),
        reason in prop::sample::select(&DropReason::ALL[..]),
        settled in any::<bool>(),
        completer in any::<u16>(),
        abort in any::<bool>(),
        beyond_header in any::<u32>(),
    ) {
        let Some(packet) = request else {
            return Ok(());
        };
        // The status the port's ingress (or outstanding table) gives the block.
        let code = match (reason, abort) {
            (DropReason::PortDisabled, _) => STATUS_REQUEST_RETRY,
            (_, true) => STATUS_COMPLETER_ABORT,
            (_, false) => STATUS_UNSUPPORTED_REQUEST,
        };
        let bytes = packet.to_bytes().expect("checked when built");
        let expected = model_completion(&packet.header, reason, settled, completer, abort);
        let dws = header_dws(&bytes, beyond_header);
        let rtl = rtl_completion(dws, reason, settled, completer, code);
        prop_assert_eq!(rtl, expected, "{:?} {:?} settled {}", packet.header, reason, settled);
    }
}

/// The UR completion of a request header, by completer 01:00.0.
fn ur(dws: [u32; 4], reason: DropReason) -> Option<[u32; 3]> {
    answer(dws, reason, true, STATUS_UNSUPPORTED_REQUEST)
}

/// The completion with `status` of a request header dropped at a port `settled` or not, by completer 01:00.0.
fn answer(dws: [u32; 4], reason: DropReason, settled: bool, status: u32) -> Option<[u32; 3]> {
    rtl_completion(dws, reason, settled, 0x0100, status).map(|bytes| {
        [0, 1, 2].map(|i| u32::from_be_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes")))
    })
}

// Completion by hand (§2.2.9.1): DW0 Fmt 000b Type 0_1010b (Cpl) = 0x0a or
// 0_1011b (CplLk) = 0x0b, T9 bit 23, TC 22:20, T8 bit 19, Attr[2] bit 18,
// Attr[1:0] 13:12; DW1 completer ID, status 001b (UR) in 15:13, Byte Count
// 11:0; DW2 requester ID, Tag[7:0], Lower Address 6:0. UR in DW1 is 0x2000.

#[test]
fn a_read_is_answered_with_its_whole_byte_count_and_first_byte() {
    // MRd, TC 3, RO (DW0 0x0030_2004: Length 4), from 02:00.0 tag 0x2a5 (T9
    // set, bit 23), First DW BE 1100b, Last DW BE 0011b, at 0x1234_5678.
    // §2.3.1.1: 16 bytes less 2 before the first enabled byte, less 2 after
    // the last: 12; Lower Address 0x78 & 0x7c | 2 = 0x7a.
    assert_eq!(
        ur(
            [0x00b0_2004, 0x0200_a53c, 0x1234_5678, 0],
            DropReason::NoWindow
        ),
        Some([0x0ab0_2000, 0x0100_200c, 0x0200_a57a])
    );
}

#[test]
fn single_dw_byte_counts_follow_the_spec_table() {
    // §2.3.1.1, Length 1 rows: First DW BE → Byte Count.
    for (first_be, count) in [
        (0b1001, 4),
        (0b1111, 4),
        (0b0101, 3),
        (0b1110, 3),
        (0b0011, 2),
        (0b1100, 2),
        (0b0100, 1),
        (0b0000, 1),
    ] {
        let answer = ur(
            [0x0000_0001, 0x0200_0100 | first_be, 0x1000, 0],
            DropReason::NoWindow,
        )
        .expect("a read is answered");
        assert_eq!(answer[1] & 0xfff, count, "First DW BE {first_be:04b}");
    }
}

#[test]
fn a_read_with_processing_hints_has_implied_byte_enables() {
    // §2.2.5.1: TH set (DW0 bit 16), Length 2: 1111b/1111b, 8 bytes, whatever DW1[7:0] holds (ST).
    assert_eq!(
        ur(
            [0x0001_0002, 0x0200_0111, 0x0000_1001, 0],
            DropReason::NoWindow
        ),
        Some([0x0a00_0000, 0x0100_2008, 0x0200_0100])
    );
}

#[test]
fn a_4_kib_read_has_byte_count_zero() {
    // Length 0 means 1024 DW; 4096 bytes is encoded as 0 (§2.2.9.1).
    assert_eq!(
        ur(
            [0x0000_0000, 0x0200_01ff, 0x0000_2000, 0],
            DropReason::NoWindow
        ),
        Some([0x0a00_0000, 0x0100_2000, 0x0200_0100])
    );
}

#[test]
fn locked_reads_get_cpllk_and_atomics_their_operand_size() {
    // MRdLk (0x01), 1 DW: CplLk.
    assert_eq!(
        ur([0x0100_0001, 0x0200_070f, 0x1000, 0], DropReason::Forbidden),
        Some([0x0b00_0000, 0x0100_2004, 0x0200_0700])
    );
    // CAS (Fmt 010b Type 0_1110b = 0x4e), Length 4: two 8-byte operands,
    // Byte Count 8, Lower Address 0 (Reserved for AtomicOps).
    assert_eq!(
        ur([0x4e00_0004, 0x0200_0800, 0x1008, 0], DropReason::Forbidden),
        Some([0x0a00_0000, 0x0100_2008, 0x0200_0800])
    );
}

#[test]
fn io_and_configuration_requests_get_byte_count_4() {
    // CfgRd0 from 00:00.0 tag 3, and IOWr (0x42).
    assert_eq!(
        ur(
            [0x0400_0001, 0x0000_030f, 0x0100_0010, 0],
            DropReason::Unsupported
        ),
        Some([0x0a00_0000, 0x0100_2004, 0x0000_0300])
    );
    assert_eq!(
        ur(
            [0x4200_0001, 0x0000_040f, 0x0000_0cf8, 0],
            DropReason::Unsupported
        ),
        Some([0x0a00_0000, 0x0100_2004, 0x0000_0400])
    );
}

#[test]
fn posted_malformed_and_disabled_port_drops_are_not_answered() {
    // MWr (0x40) and a message (0x30) are posted; a completion (0x0a) is not a request.
    for dws in [
        [0x4000_0001, 0x0200_000f, 0x1000, 0],
        [0x3000_0000, 0x0200_0033, 0, 0],
        [0x0a00_0000, 0x0200_2004, 0x0100_0000, 0],
    ] {
        assert_eq!(ur(dws, DropReason::NoWindow), None, "{dws:08x?}");
    }
    let read = [0x0000_0001, 0x0200_000f, 0x1000, 0];
    assert_eq!(ur(read, DropReason::Malformed), None);
    assert_eq!(ur(read, DropReason::PortDisabled), None);
    assert!(ur(read, DropReason::SpoofedRequester).is_some());
    // Nothing dropped, nothing answered.
    let mut block = ErrorCompletion::default();
    block.connect_all();
    block.dw0.next = read[0].to_bits();
    settle(&mut block).expect("combinational");
    assert!(!block.respond.val());
}

#[test]
fn a_configuration_request_at_an_unsettled_disabled_port_is_asked_to_retry() {
    // §2.3.1, §6.6.1: CfgRd0 from 00:00.0 tag 5 at a disabled port the
    // fabric manager has not settled: Cpl, Request Retry Status (010b,
    // DW1[15:13] = 0x4000), Byte Count 4, Lower Address 0.
    let cfg_read = [0x0400_0001, 0x0000_050f, 0x0100_0000, 0];
    assert_eq!(
        answer(
            cfg_read,
            DropReason::PortDisabled,
            false,
            STATUS_REQUEST_RETRY
        ),
        Some([0x0a00_0000, 0x0100_4004, 0x0000_0500])
    );
    // A CfgWr1 (0x45) too; once settled, neither.
    let cfg_write = [0x4500_0001, 0x0000_060f, 0x0200_0000, 0];
    assert_eq!(
        answer(
            cfg_write,
            DropReason::PortDisabled,
            false,
            STATUS_REQUEST_RETRY
        ),
        Some([0x0a00_0000, 0x0100_4004, 0x0000_0600])
    );
    for dws in [cfg_read, cfg_write] {
        assert_eq!(
            answer(dws, DropReason::PortDisabled, true, STATUS_REQUEST_RETRY),
            None
        );
    }
    // RRS is for Configuration Requests only: a read there stays unanswered.
    let read = [0x0000_0001, 0x0200_000f, 0x1000, 0];
    assert_eq!(
        answer(read, DropReason::PortDisabled, false, STATUS_REQUEST_RETRY),
        None
    );
}
