//! The whole switch's RTL answers a refused non-posted request with an Unsupported Request completion, as the spec says.
//!
//! Expected from PCIe Base 6.0, not from weft-model's Switch (whose packet
//! parser only reads the fields back): a host port with no
//! window refuses every memory request from its host. A read must come
//! back on the host's own link as a Cpl without data (§2.2.9.1, Table
//! 2-3) with status Unsupported Request (001b), the read's requester ID,
//! all 10 bits of its tag (§2.2.6.2), its traffic class and attributes,
//! the port's completer ID, and the Byte Count and Lower Address of the
//! whole read from its length, byte enables and address (§2.3.1.1,
//! §2.2.9.1), so the requester retires it (§2.3.1); its completion credit
//! is reported to the link layer (§2.6.1). A posted write is dropped
//! and gets no answer (§2.3.1). With no completion credit at the link
//! partner nothing is sent and nothing is lost: the port holds the
//! requests it cannot answer yet on its link, and sends every answer,
//! in order, once credit comes.

mod common;

use common::top::TopBus;
use rust_hdl::prelude::*;
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::port::error_completions::DEPTH;
use weft_hdl::port::ingress::PIPELINE_BEATS;
use weft_hdl::switching::CLASS_COMPLETION;
use weft_hdl::top::SwitchTop;
use weft_model::{HostIndex, Packet, PortIndex, PortRole};
use weft_pcie::tlp::{Body, CompletionStatus};
use weft_pcie::Bdf;
use weft_regs::driver::CsrDataPlane;
use weft_regs::tables::DataPlane;

/// Payload bits and ports of the top: small, for debug-build speed.
const W: usize = 128;
const PORTS: usize = 4;
/// The host port, and its completer ID in the host's domain.
const HOST_PORT: usize = 1;
const COMPLETER: u16 = 0x0a10;
/// The host's requester ID.
const REQUESTER: u16 = 0x0300;

type Top = SwitchTop<W, PORTS>;

/// A switch whose port `HOST_PORT` faces host 0 with no window; every link has every credit.
fn switch() -> CycleDriver<Top> {
    let driver = CycleDriver::new(Top::default(), |b| &mut b.clock).expect("well formed");
    let mut plane = CsrDataPlane::new(TopBus(driver)).expect("the RTL identifies as weft");
    let port = PortIndex(HOST_PORT as u8);
    plane.set_completer_id(port, Bdf(COMPLETER)).expect("legal");
    plane
        .set_port_role(
            port,
            PortRole::Host {
                host: HostIndex(0),
                proxy_id: Bdf(0x0100),
            },
        )
        .expect("legal");
    let mut driver = plane.into_bus().0;
    let all = (1u64 << PORTS) - 1;
    let top = driver.block();
    top.egress_credit_posted.next = all.into();
    top.egress_credit_non_posted.next = all.into();
    top.egress_credit_completion.next = all.into();
    for i in 0..PORTS {
        top.egress[i].ready.next = true;
    }
    driver
}

/// A memory read with a 32-bit address (§2.2.1, Fmt 000b Type 0_0000b):
/// TC 5, Relaxed Ordering, a 10-bit tag, `length` DWs with the given byte enables.
fn read(tag: u16, length: u32, first_be: u32, last_be: u32, address: u32) -> [u32; 3] {
    let t9 = u32::from(tag >> 9 & 1) << 23;
    let t8 = u32::from(tag >> 8 & 1) << 19;
    [
        t9 | 5 << 20 | t8 | 1 << 13 | length,
        u32::from(REQUESTER) << 16 | u32::from(tag & 0xff) << 8 | last_be << 4 | first_be,
        address,
    ]
}

/// A one-DW memory write with a 32-bit address (Fmt 010b Type 0_0000b).
fn write(address: u32) -> [u32; 3] {
    [0x4000_0001, u32::from(REQUESTER) << 16 | 0x0f, address]
}

/// What the switch did over a run.
#[derive(Default)]
struct Seen {
    /// TLPs leaving on the host's link, as wire bytes.
    answers: Vec<Vec<u8>>,
    /// The host port's egress_consume pulses: class bits and data DWs.
    consumed: Vec<(u64, u64)>,
    /// TLPs taken from the host's link while it had no completion credit.
    taken_without_credit: usize,
    /// Drops at the host port's ingress.
    dropped: u64,
}

/// Offers `tlps` (one beat each) on the host's link for `cycles` cycles,
/// with the host's link partner holding completion credit while `credit(cycle)`.
fn offer(
    top: &mut CycleDriver<Top>,
    tlps: &[[u32; 3]],
    cycles: u64,
    credit: impl Fn(u64) -> bool,
) -> Seen {
    let mut seen = Seen::default();
    let mut next = 0;
    let all = (1u64 << PORTS) - 1;
    for cycle in 0..cycles {
        let block = top.block();
        let completion = if credit(cycle) {
            all
        } else {
            all & !(1 << HOST_PORT)
        };
        block.egress_credit_completion.next = completion.into();
        let link = &mut block.ingress[HOST_PORT];
        link.valid.next = next < tlps.len();
        if let Some(header) = tlps.get(next) {
            link.sop.next = true;
            link.eop.next = true;
            // A write carries one DW; a read none (§2.2.1, crate::stream).
            let data = header[0] & 1 << 30 != 0;
            link.empty.next = if data {
                W as u64 / 32 - 1
            } else {
                W as u64 / 32
            }
            .into();
            link.payload.next = Bits::<W>::default();
            link.dw0.next = header[0].to_bits();
            link.dw1.next = header[1].to_bits();
            link.dw2.next = header[2].to_bits();
            link.dw3.next = 0.into();
        }
        top.settle().expect("settles");
        let block = top.block();
        if block.ingress[HOST_PORT].valid.val() && block.ingress[HOST_PORT].ready.val() {
            next += 1;
            if !credit(cycle) {
                seen.taken_without_credit += 1;
            }
        }
        if block.ingress_dropped[HOST_PORT].val() {
            seen.dropped += 1;
        }
        let consume = block.egress_consume[HOST_PORT].val().to_u64();
        if consume != 0 {
            seen.consumed
                .push((consume, block.egress_consume_dws[HOST_PORT].val().to_u64()));
        }
        let out = &block.egress[HOST_PORT];
        if out.valid.val() && out.ready.val() {
            assert!(
                out.sop.val() && out.eop.val(),
                "a completion without data is one beat"
            );
            assert_eq!(
                out.empty.val().to_u64(),
                W as u64 / 32,
                "and carries no payload"
            );
            let dws = [out.dw0.val(), out.dw1.val(), out.dw2.val()];
            seen.answers.push(
                dws.iter()
                    .flat_map(|dw| dw.to_u32().to_be_bytes())
                    .collect(),
            );
        }
        for (j, port) in block.egress.iter().enumerate() {
            assert!(
                j == HOST_PORT || !port.valid.val(),
                "cycle {cycle}: nothing leaves on port {j}"
            );
        }
        top.tick().expect("settles");
    }
    assert_eq!(next, tlps.len(), "every TLP offered is taken");
    seen
}

/// The completion in `bytes`, parsed as the spec lays it out.
fn completion(bytes: &[u8]) -> weft_pcie::tlp::Completion {
    let packet = Packet::parse(bytes).expect("a well-formed TLP");
    assert!(packet.payload.is_empty() && packet.digest.is_none());
    match packet.header.body {
        Body::Completion(completion) => completion,
        other => panic!("not a completion: {other:?}"),
    }
}

#[test]
fn a_read_the_port_refuses_is_answered_unsupported_request() {
    on_big_stack(|| {
        let mut top = switch();
        // 3 DWs from 0x8000_0044, First DW BE 1100b, Last DW BE 0011b:
        // bytes 0x46..0x4e, so Byte Count 12 - 2 - 2 = 8 and Lower Address
        // 0x46, the first enabled byte's (§2.3.1.1, Table 2-39).
        let tag = 0x25a;
        let seen = offer(
            &mut top,
            &[read(tag, 3, 0b1100, 0b0011, 0x8000_0044)],
            40,
            |_| true,
        );
        assert_eq!(seen.dropped, 1, "the read is dropped");
        assert_eq!(seen.answers.len(), 1, "and answered once");
        let answer = completion(&seen.answers[0]);
        assert!(!answer.locked, "a read's answer is a Cpl, not a CplLk");
        assert_eq!(answer.status, CompletionStatus::UnsupportedRequest);
        assert_eq!(answer.completer, Bdf(COMPLETER), "the port's completer ID");
        assert_eq!(answer.requester, Bdf(REQUESTER), "the read's requester ID");
        assert_eq!(answer.tag.get(), tag, "all 10 bits of the read's tag");
        assert_eq!(answer.byte_count, 8);
        assert_eq!(answer.lower_address, 0x46);
        assert!(!answer.byte_count_modified);
        assert_eq!(answer.data_dw, None, "a Cpl carries no data");
        assert_eq!(answer.traffic_class.get(), 5, "the read's traffic class");
        assert!(answer.attributes.relaxed_ordering, "and attributes");
        // One completion header credit, no data credit (§2.6.1).
        assert_eq!(seen.consumed, vec![(1 << CLASS_COMPLETION, 0)]);
    });
}

#[test]
fn a_refused_write_gets_no_answer() {
    on_big_stack(|| {
        let mut top = switch();
        let seen = offer(&mut top, &[write(0x8000_0040)], 40, |_| true);
        assert_eq!(seen.dropped, 1, "the write is dropped");
        assert!(seen.answers.is_empty(), "a posted request is not answered");
        assert!(seen.consumed.is_empty(), "and takes no credit");
    });
}

#[test]
fn without_completion_credit_the_port_holds_requests_and_loses_no_answer() {
    on_big_stack(|| {
        let mut top = switch();
        // More reads than the port can queue answers for, with writes between them.
        let reads = DEPTH + 2;
        let mut tlps = Vec::new();
        for k in 0..reads {
            tlps.push(read(k as u16 * 0x81, 1, 0b1111, 0, 0x8000_0000));
            tlps.push(write(0x8000_0000));
        }
        let starved = 200;
        let seen = offer(&mut top, &tlps, starved + 100, |cycle| cycle >= starved);
        // The first DEPTH reads' answers are queued, the writes between
        // them need none; the next read waits for room at the end of the
        // ingress pipeline, the beat after it behind it, the rest on the link.
        assert_eq!(
            seen.taken_without_credit,
            2 * DEPTH + PIPELINE_BEATS,
            "the link is held while no answer can be queued"
        );
        assert_eq!(seen.dropped, 2 * reads as u64, "every request is dropped");
        let tags: Vec<u16> = seen
            .answers
            .iter()
            .map(|bytes| {
                let answer = completion(bytes);
                assert_eq!(answer.status, CompletionStatus::UnsupportedRequest);
                assert_eq!((answer.byte_count, answer.lower_address), (4, 0));
                answer.tag.get()
            })
            .collect();
        let sent: Vec<u16> = (0..reads).map(|k| k as u16 * 0x81).collect();
        assert_eq!(
            tags, sent,
            "every read answered once, in order, after credit came"
        );
        assert_eq!(seen.consumed, vec![(1 << CLASS_COMPLETION, 0); reads]);
    });
}

#[test]
fn no_answer_leaves_before_credit() {
    on_big_stack(|| {
        let mut top = switch();
        let tlps = [read(1, 1, 0b1111, 0, 0x8000_0000)];
        let seen = offer(&mut top, &tlps, 100, |_| false);
        assert_eq!(seen.dropped, 1);
        assert!(seen.answers.is_empty() && seen.consumed.is_empty());
        let later = offer(&mut top, &[], 20, |_| true);
        assert_eq!(
            later.answers.len(),
            1,
            "the queued answer leaves once credit comes"
        );
        assert_eq!(later.consumed, vec![(1 << CLASS_COMPLETION, 0)]);
    });
}
