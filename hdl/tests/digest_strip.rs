//! `DigestStrip` removes exactly the ECRC digest DW of the TLPs it is told to, and nothing else.
//!
//! PCIe Base 6.0 §2.2.1 and §2.2.3: a TLP with TD set carries one digest DW
//! after its payload (Length DWs if Fmt says data, none otherwise). TLPs
//! with TD set, of every payload length around the beat boundaries of a
//! 128-bit bus, arrive back to back, each marked to strip or not, while the
//! consumer takes beats or not at random. Every TLP must come out whole
//! and in order, framed one `sop` to one `eop`: a stripped one with its
//! payload alone (a header-only one as one beat with every DW empty), any
//! other exactly as it went in. A TLP that arrives void (`nullify` on its
//! last beat) leaves void, even when that beat held its digest alone.

use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::CycleDriver;
use weft_hdl::port::DigestStrip;

/// Payload bits of the stream.
const W: usize = 128;
/// DWs per beat.
const DWS: usize = W / 32;

/// A TLP on the stream: header DW0, the DWs after the header, and whether
/// its last beat voids it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tlp {
    dw0: u32,
    dws: Vec<u32>,
    void: bool,
}

/// A TLP with TD set and `payload` payload DWs (0: a memory read), its
/// digest last, void or whole.
fn with_digest(payload: usize, seed: u32, void: bool) -> Tlp {
    // §2.2.1: MWr Fmt 010b or MRd Fmt 000b with Length 1; TD is bit 15.
    let dw0 = if payload == 0 {
        0x0000_8001
    } else {
        0x4000_8000 | payload as u32
    };
    let dws = (0..=payload as u32)
        .map(|k| seed.wrapping_add(k).rotate_left(k))
        .collect();
    Tlp { dw0, dws, void }
}

/// One beat: sop, eop, empty DWs, nullify, header DW0, the payload DWs it carries.
type Beat = (bool, bool, usize, bool, u32, Vec<u32>);

fn beats(tlp: &Tlp) -> Vec<Beat> {
    let chunks: Vec<&[u32]> = tlp.dws.chunks(DWS).collect();
    chunks
        .iter()
        .enumerate()
        .map(|(k, chunk)| {
            (
                k == 0,
                k + 1 == chunks.len(),
                DWS - chunk.len(),
                tlp.void && k + 1 == chunks.len(),
                tlp.dw0,
                chunk.to_vec(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_digest_dw_goes_and_nothing_else(
        tlps in prop::collection::vec((0usize..14, any::<u32>(), any::<bool>(), any::<bool>()), 1..8),
        ready_seed in any::<u64>(),
    ) {
        let sent: Vec<(Tlp, bool)> = tlps
            .iter()
            .map(|&(p, seed, strip, void)| (with_digest(p, seed, void), strip))
            .collect();
        let expected: Vec<Tlp> = sent
            .iter()
            .map(|(tlp, strip)| {
                let mut tlp = tlp.clone();
                if *strip {
                    tlp.dws.pop();
                }
                tlp
            })
            .collect();
        let offered: Vec<(Beat, bool)> = sent
            .iter()
            .flat_map(|(tlp, strip)| beats(tlp).into_iter().map(move |b| (b, *strip)))
            .collect();

        let mut rtl = CycleDriver::new(DigestStrip::<W>::default(), |b| &mut b.clock).expect("well formed");
        let mut next = 0;
        let mut got: Vec<Tlp> = Vec::new();
        let mut open: Option<Tlp> = None;
        for cycle in 0u64..2000 {
            let block = rtl.block();
            block.downstream.ready.next = (cycle ^ ready_seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 62 != 0;
            block.upstream.valid.next = next < offered.len();
            if let Some(((sop, eop, empty, nullify, dw0, chunk), strip)) = offered.get(next) {
                block.upstream.sop.next = *sop;
                block.upstream.eop.next = *eop;
                block.upstream.empty.next = (*empty as u64).into();
                block.upstream.nullify.next = *nullify;
                block.upstream.dw0.next = dw0.to_bits();
                block.drop_digest.next = *strip;
                let mut bus = Bits::<W>::default();
                for (k, dw) in chunk.iter().enumerate() {
                    bus.set_bits::<32>(W - 32 * (k + 1), u64::from(*dw).into());
                }
                block.upstream.payload.next = bus;
            }
            rtl.settle().expect("settles");
            let block = rtl.block();
            let out = &block.downstream;
            if out.valid.val() && out.ready.val() {
                prop_assert_eq!(out.sop.val(), open.is_none(), "cycle {}: framing", cycle);
                let tlp = open.get_or_insert_with(|| Tlp {
                    dw0: out.dw0.val().to_u32(),
                    dws: Vec::new(),
                    void: false,
                });
                prop_assert!(!out.nullify.val() || out.eop.val(), "cycle {}: nullify on a last beat only", cycle);
                tlp.void = out.nullify.val();
                let used = if out.eop.val() { DWS - out.empty.val().to_u64() as usize } else { DWS };
                let bus = out.payload.val();
                tlp.dws.extend((0..used).map(|k| bus.get_bits::<32>(W - 32 * (k + 1)).to_u32()));
                if out.eop.val() {
                    got.push(open.take().expect("opened"));
                }
            }
            if block.upstream.valid.val() && block.upstream.ready.val() {
                next += 1;
            }
            rtl.tick().expect("settles");
        }
        prop_assert_eq!(next, offered.len(), "every beat is taken");
        prop_assert!(open.is_none(), "the last TLP ended");
        prop_assert_eq!(got, expected);
    }
}
