//! The RTL header decoder against `weft-pcie`, the spec as code.
//!
//! Every header DW pattern is decoded twice: by the rust-hdl block and by
//! `weft_pcie::tlp`. Where weft-pcie accepts the header, every field the
//! block outputs must equal weft-pcie's; where weft-pcie rejects the
//! Fmt/Type pair, the block must raise `reserved`. The header rules block
//! must call Malformed exactly the headers weft-pcie rejects.

use proptest::prelude::*;
use rust_hdl::prelude::*;
mod common;

use common::tlp::class_code;
use weft_hdl::{driver::settle, HeaderDecoder, HeaderRules};
use weft_pcie::tlp::{
    layout, Body, FlowControlClass, Header, MemoryOp, TlpError, TlpKind, TlpType,
};

fn decode_rtl(dws: [u32; 4]) -> HeaderDecoder {
    let mut decoder = HeaderDecoder::default();
    decoder.connect_all();
    for (signal, dw) in [
        &mut decoder.dw0,
        &mut decoder.dw1,
        &mut decoder.dw2,
        &mut decoder.dw3,
    ]
    .into_iter()
    .zip(dws)
    {
        signal.next = u64::from(dw).into();
    }
    settle(&mut decoder).expect("the decoder is combinational");
    decoder
}

/// Whether the RTL's header rules, fed by its decoder as the ingress feeds
/// them, call the header Malformed.
fn malformed_rtl(dws: [u32; 4]) -> bool {
    let d = decode_rtl(dws);
    let mut rules = HeaderRules::default();
    rules.connect_all();
    rules.tlp_type.next = d.tlp_type.val();
    rules.traffic_class.next = d.traffic_class.val();
    rules.attributes_low.next = d.attributes.val().get_bits::<2>(0);
    rules.processing_hints.next = d.hints.val().get_bit(0);
    rules.has_data.next = d.has_data.val();
    rules.byte_enables.next = d.byte_enables.val();
    rules.completion_status.next = u64::from(layout::COMPLETION_STATUS.read(&dws)).into();
    rules.memory.next = d.memory.val();
    rules.io.next = d.io.val();
    rules.configuration.next = d.configuration.val();
    rules.completion.next = d.completion.val();
    rules.message.next = d.message.val();
    rules.reserved.next = d.reserved.val();
    rules.four_dw.next = d.four_dw.val();
    rules.length_dw.next = d.length_dw.val();
    rules.address_high.next = d.address_high.val();
    rules.page_offset.next = d.address_low.val().get_bits::<12>(0);
    settle(&mut rules).expect("the rules are combinational");
    rules.malformed.val()
}

/// Byte 0 of every Fmt/Type pair Table 2-3 defines, DMWr included.
const DEFINED_BYTE0: &[u8] = &[
    0x00, 0x20, 0x01, 0x21, 0x40, 0x60, 0x02, 0x42, 0x04, 0x44, 0x05, 0x45, 0x0a, 0x4a, 0x0b, 0x4b,
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
    0x4c, 0x4d, 0x4e, 0x6c, 0x6d, 0x6e, 0x5b, 0x7b,
];

/// Message Codes with rules of their own (§2.2.8): the TC0-only ones and the Vendor_Defined pair.
const MESSAGE_CODES: &[u8] = &[
    0x00, 0x14, 0x18, 0x19, 0x1b, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x30, 0x31, 0x33,
    0x50, 0x7e, 0x7f,
];

/// Headers steered to where the §2.2 rules have edges: defined Fmt/Type
/// pairs, TC0 or not, short Lengths, byte enables of any shape, addresses
/// near a 4 KiB boundary or below 4 GiB in a 4 DW header, and Message
/// Codes with rules. Prefixes (Fmt 100b) are left out: the TLP stream
/// carries none.
fn edge_headers() -> impl Strategy<Value = [u32; 4]> {
    let byte0 = prop_oneof![
        2 => prop::sample::select(&[0x00_u8, 0x20, 0x40, 0x60][..]),
        2 => prop::sample::select(DEFINED_BYTE0),
        1 => any::<u8>().prop_filter("no prefixes", |b| b >> 5 != 0b100),
    ];
    let traffic_class = prop_oneof![Just(0_u32), 0_u32..8];
    let attr_low = prop_oneof![Just(0_u32), 0_u32..4];
    let length = prop_oneof![
        1 => prop::sample::select(&[1_u32, 2, 3, 4, 8, 16, 0][..]),
        2 => 1_u32..=16,
        1 => 0_u32..1024
    ];
    // Byte enables that are legal for some Length (1 DW, or contiguous).
    let byte_enables = prop::sample::select(&[0x0f_u8, 0x03, 0xff, 0x7f, 0x3c, 0x1e, 0x18][..]);
    let dw1_low = prop_oneof![
        prop::sample::select(MESSAGE_CODES),
        byte_enables,
        any::<u8>()
    ];
    // Within 16 DWs of a page's end, where a short request just fits or just crosses.
    let page_offset = prop_oneof![(1_u32..=16).prop_map(|dws| 0x1000 - 4 * dws), 0_u32..0x1000];
    let address_high = prop_oneof![Just(0_u32), any::<u32>()];
    (
        (byte0, traffic_class, attr_low, any::<bool>(), length),
        (
            dw1_low,
            any::<u32>(),
            page_offset,
            address_high,
            any::<u32>(),
        ),
    )
        .prop_map(
            |((byte0, tc, attr, th, length), (dw1_low, random, offset, high, low))| {
                let dw0 = (u32::from(byte0) << 24)
                    | (tc << 20)
                    | (u32::from(th) << 16)
                    | (attr << 12)
                    | (random & 0x0088_8f00)
                    | length;
                let dw1 = (random & 0xffff_ff00) | u32::from(dw1_low);
                let low = (low & !0xfff) | offset | (random & 0b11);
                if byte0 & 0x20 != 0 {
                    [dw0, dw1, high, low]
                } else {
                    [dw0, dw1, low, 0]
                }
            },
        )
}

/// The RTL's class flags: (kind, flow-control class), or `None` when it says reserved.
fn rtl_class(d: &HeaderDecoder) -> Option<(TlpKind, FlowControlClass)> {
    let kinds = [
        (d.memory.val(), TlpKind::Memory),
        (d.io.val(), TlpKind::Io),
        (d.configuration.val(), TlpKind::Config),
        (d.completion.val(), TlpKind::Completion),
        (d.message.val(), TlpKind::Message),
    ];
    let classes = [
        (d.posted.val(), FlowControlClass::Posted),
        (d.non_posted.val(), FlowControlClass::NonPosted),
        (d.completion.val(), FlowControlClass::Completion),
    ];
    let kind: Vec<_> = kinds
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, k)| *k)
        .collect();
    let class: Vec<_> = classes
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, c)| *c)
        .collect();
    assert!(
        kind.len() <= 1 && class.len() <= 1,
        "one-hot outputs: {kind:?} {class:?}"
    );
    assert_eq!(kind.is_empty(), d.reserved.val() || d.prefix.val());
    Some((*kind.first()?, *class.first()?))
}

fn class_of(tlp_type: TlpType) -> (TlpKind, FlowControlClass) {
    use FlowControlClass::*;
    match tlp_type {
        TlpType::MemoryWrite => (TlpKind::Memory, Posted),
        TlpType::MemoryRead | TlpType::MemoryReadLocked => (TlpKind::Memory, NonPosted),
        // AtomicOps carry data but are completed: non-posted (§2.2.9).
        TlpType::FetchAdd | TlpType::Swap | TlpType::CompareAndSwap => (TlpKind::Memory, NonPosted),
        TlpType::IoRead | TlpType::IoWrite => (TlpKind::Io, NonPosted),
        TlpType::ConfigRead0
        | TlpType::ConfigWrite0
        | TlpType::ConfigRead1
        | TlpType::ConfigWrite1 => (TlpKind::Config, NonPosted),
        TlpType::Completion
        | TlpType::CompletionWithData
        | TlpType::CompletionLocked
        | TlpType::CompletionWithDataLocked => (TlpKind::Completion, Completion),
        TlpType::Message(_) | TlpType::MessageWithData(_) => (TlpKind::Message, Posted),
    }
}

/// Decodes `dws` with both decoders; where weft-pcie accepts the header,
/// every field the block outputs must equal weft-pcie's.
fn fields_match(dws: [u32; 4]) -> Result<(), TestCaseError> {
    let Ok(header) = Header::decode_dws(&dws) else {
        return Ok(());
    };
    let d = decode_rtl(dws);
    prop_assert_eq!(d.fmt.val().to_u64(), u64::from(layout::FMT.read(&dws)));
    prop_assert_eq!(
        d.tlp_type.val().to_u64(),
        u64::from(layout::TYPE.read(&dws))
    );
    prop_assert_eq!(
        d.traffic_class.val().to_u64(),
        u64::from(header.traffic_class().get())
    );
    prop_assert_eq!(
        d.attributes.val().to_u64(),
        u64::from(header.attributes().bits())
    );
    prop_assert_eq!(d.digest.val(), header.digest_present);
    prop_assert_eq!(d.poisoned.val(), header.poisoned);
    prop_assert_eq!(d.has_data.val(), header.has_data());
    prop_assert_eq!(d.four_dw.val(), header.header_dws() == 4);
    prop_assert_eq!(d.wire_bytes.val().to_u64(), header.total_len(0) as u64);
    prop_assert_eq!(
        d.flow_class.val().to_u64(),
        class_code(header.flow_control_class())
    );
    if header.has_data() {
        prop_assert_eq!(
            d.length_dw.val().to_u64(),
            u64::from(header.payload_len_dw())
        );
    }
    match header.body {
        Body::Memory(m) => {
            prop_assert_eq!(d.dw1_id.val().to_u64(), u64::from(m.requester.0));
            prop_assert_eq!(d.address_high.val().to_u64(), m.address >> 32);
            prop_assert_eq!(d.address_low.val().to_u64(), m.address & 0xffff_ffff);
            prop_assert_eq!(d.length_dw.val().to_u64(), u64::from(m.length_dw));
            // Tag[9:8] are Reserved in posted requests (§2.2.6.2): compare the defined
            // bits. Reads and AtomicOps are non-posted and carry all ten.
            let defined = match m.op {
                MemoryOp::Write => 0xff,
                MemoryOp::Read
                | MemoryOp::ReadLocked
                | MemoryOp::FetchAdd
                | MemoryOp::Swap
                | MemoryOp::CompareAndSwap => 0x3ff,
            };
            prop_assert_eq!(d.tag.val().to_u64() & defined, u64::from(m.tag.get()));
        }
        Body::Completion(c) => {
            prop_assert_eq!(d.dw1_id.val().to_u64(), u64::from(c.completer.0));
            prop_assert_eq!(
                d.completion_requester_id.val().to_u64(),
                u64::from(c.requester.0)
            );
            prop_assert_eq!(d.tag.val().to_u64(), u64::from(c.tag.get()));
        }
        Body::Message(m) => {
            prop_assert_eq!(d.dw1_id.val().to_u64(), u64::from(m.requester.0));
            prop_assert_eq!(
                d.message_routing.val().to_u64(),
                u64::from(layout::TYPE.read(&dws) & 0b111)
            );
        }
        Body::Io(io) => {
            prop_assert_eq!(d.dw1_id.val().to_u64(), u64::from(io.requester.0));
            prop_assert_eq!(d.address_low.val().to_u64(), u64::from(io.address));
            prop_assert_eq!(d.tag.val().to_u64(), u64::from(io.tag.get()));
        }
        Body::Config(cfg) => {
            prop_assert_eq!(d.dw1_id.val().to_u64(), u64::from(cfg.requester.0));
            prop_assert_eq!(
                d.completion_requester_id.val().to_u64(),
                u64::from(cfg.target.0)
            );
            prop_assert_eq!(d.tag.val().to_u64(), u64::from(cfg.tag.get()));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn fmt_and_type_classify_as_the_spec_table_says(byte0 in any::<u8>(), rest in any::<[u32; 4]>()) {
        let dws = [(u32::from(byte0) << 24) | (rest[0] & 0x00ff_ffff), rest[1], rest[2], rest[3]];
        let d = decode_rtl(dws);
        match TlpType::from_byte0(byte0) {
            Ok(tlp_type) => prop_assert_eq!(rtl_class(&d), Some(class_of(tlp_type))),
            // Deferrable Memory Writes, the one defined type weft-pcie does not
            // model, are non-posted memory requests (Table 2-3); weft does not
            // route them, and `HeaderRules` drops them as weft-model does.
            Err(TlpError::UnsupportedFmtType { .. }) => {
                prop_assert_eq!(rtl_class(&d), Some((TlpKind::Memory, FlowControlClass::NonPosted)))
            }
            Err(TlpError::UnexpectedPrefix { .. }) => prop_assert!(d.prefix.val() && !d.reserved.val()),
            Err(err) => prop_assert!(d.reserved.val(), "{err}"),
        }
    }

    #[test]
    fn fields_of_every_accepted_header_match(byte0 in any::<u8>(), rest in any::<[u32; 4]>()) {
        let dws = [(u32::from(byte0) << 24) | (rest[0] & 0x00ff_ffff), rest[1], rest[2], rest[3]];
        fields_match(dws)?;
    }

    /// §2.2: the header rules flag exactly what the spec's decoder rejects.
    #[test]
    fn header_rules_call_malformed_what_weft_pcie_rejects(dws in edge_headers()) {
        let decoded = Header::decode_dws(&dws);
        prop_assert_eq!(malformed_rtl(dws), decoded.is_err(), "{:08x?}: {:?}", dws, decoded);
    }

    /// Random headers almost never hold a legal AtomicOp (Length and
    /// alignment must both fit, §2.2.7.1), so these are steered to one.
    #[test]
    fn fields_of_atomic_ops_match(
        byte0 in prop::sample::select(&[0x4c_u8, 0x6c, 0x4d, 0x6d, 0x4e, 0x6e][..]),
        length_pick in any::<prop::sample::Index>(),
        rest in any::<[u32; 4]>(),
    ) {
        // Table 2-15: FetchAdd and Swap take 1 or 2 DW, CAS 2, 4 or 8 DW.
        let cas = byte0 & 0x1f == 0b0_1110;
        let lengths: &[u32] = if cas { &[2, 4, 8] } else { &[1, 2] };
        let length = lengths[length_pick.index(lengths.len())];
        let operand_bytes = if cas { length * 2 } else { length * 4 };
        let dw0 = (u32::from(byte0) << 24) | (rest[0] & 0x00ff_fc00) | length;
        // Address[31:2] sits in DW 2 of a 3 DW header and DW 3 of a 4 DW one;
        // clear the bits below the operand size (PH in bits 1:0 stays random).
        let align = !(operand_bytes - 1) | 0b11;
        let mut dws = [dw0, rest[1], rest[2], rest[3]];
        if byte0 & 0x20 != 0 {
            dws[2] |= 1; // Address[63:32] non-zero: a 4 DW header is for 4 GiB and up.
            dws[3] &= align;
        } else {
            dws[2] &= align;
        }
        let header = Header::decode_dws(&dws);
        prop_assert!(header.is_ok(), "{header:?}");
        fields_match(dws)?;
    }
}
