//! Removing the ECRC digest DW of a TLP whose header a translation rewrote.
//!
//! A TLP's digest (TD set, PCIe Base 6.0 §2.2.3) is one DW after its
//! payload, computed over the header as sent (§2.7.1). The edge translations
//! rewrite headers and clear TD, as weft-model's `Packet::invalidate_digest`
//! does, so the digest DW must leave the stream too. [`DigestStrip`] sits
//! on a TLP stream after a translation and does that, beat for beat: where
//! the payload ends inside a beat, that beat's `empty` grows by one, with
//! no added latency; a header-only TLP keeps its one beat, every DW empty.
//! Where the payload fills its last beat exactly, the digest's own beat is
//! taken and not passed on, and the beat before it becomes the last. That
//! beat is held until the digest's arrives and leaves in its place, with
//! its `nullify`: a TLP found void only in the digest's beat
//! ([`crate::stream`]) must not leave whole.

use rust_hdl::prelude::*;

use crate::header_decode::HeaderDecoder;
use crate::stream::{TlpSink, TlpSource, EMPTY_BITS};

/// Bits of a beat index within a TLP: 1024 payload DWs and a digest on a 32-bit bus.
const BEAT_INDEX_BITS: usize = 11;

/// Drops the digest DW of each TLP whose first beat comes with `drop_digest`.
#[derive(LogicBlock)]
pub struct DigestStrip<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// TLPs as the translation sends them: header rewritten, digest DW still in the payload.
    pub upstream: TlpSink<W>,
    /// The same TLPs without the digest DW of those stripped.
    pub downstream: TlpSource<W>,
    /// With a first beat: the TLP arrived with TD set and its header leaves with TD clear.
    pub drop_digest: Signal<In, Bit>,
    header: HeaderDecoder,
    beat: DFF<Bits<BEAT_INDEX_BITS>>,
    stripping: DFF<Bit>,
    alone: DFF<Bit>,
    last: DFF<Bits<BEAT_INDEX_BITS>>,
    held_sop: DFF<Bit>,
    held_dw0: DFF<Bits<32>>,
    held_dw1: DFF<Bits<32>>,
    held_dw2: DFF<Bits<32>>,
    held_dw3: DFF<Bits<32>>,
    held_payload: DFF<Bits<W>>,
    dw_mask: Constant<Bits<BEAT_INDEX_BITS>>,
    dw_shift: Constant<Bits<BEAT_INDEX_BITS>>,
    payload_dws: Signal<Local, Bits<BEAT_INDEX_BITS>>,
    index: Signal<Local, Bits<BEAT_INDEX_BITS>>,
    current_strip: Signal<Local, Bit>,
    current_alone: Signal<Local, Bit>,
    current_last: Signal<Local, Bits<BEAT_INDEX_BITS>>,
    hold: Signal<Local, Bit>,
    send_held: Signal<Local, Bit>,
    swallow: Signal<Local, Bit>,
}

impl<const W: usize> Default for DigestStrip<W> {
    fn default() -> Self {
        let dws = W / 32;
        assert!(
            dws.is_power_of_two() && W.is_multiple_of(32),
            "a payload bus of whole DWs, a power of two of them"
        );
        DigestStrip {
            clock: Default::default(),
            upstream: Default::default(),
            downstream: Default::default(),
            drop_digest: Default::default(),
            header: Default::default(),
            beat: Default::default(),
            stripping: Default::default(),
            alone: Default::default(),
            last: Default::default(),
            held_sop: Default::default(),
            held_dw0: Default::default(),
            held_dw1: Default::default(),
            held_dw2: Default::default(),
            held_dw3: Default::default(),
            held_payload: Default::default(),
            dw_mask: Constant::new((dws as u64 - 1).to_bits()),
            dw_shift: Constant::new(u64::from(dws.trailing_zeros()).to_bits()),
            payload_dws: Default::default(),
            index: Default::default(),
            current_strip: Default::default(),
            current_alone: Default::default(),
            current_last: Default::default(),
            hold: Default::default(),
            send_held: Default::default(),
            swallow: Default::default(),
        }
    }
}

impl<const W: usize> Logic for DigestStrip<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            beat,
            stripping,
            alone,
            last,
            held_sop,
            held_dw0,
            held_dw1,
            held_dw2,
            held_dw3,
            held_payload
        );
        self.header.dw0.next = self.upstream.dw0.val();
        self.header.dw1.next = self.upstream.dw1.val();
        self.header.dw2.next = self.upstream.dw2.val();
        self.header.dw3.next = self.upstream.dw3.val();

        // §2.2.1: the payload's DWs, Length if Fmt says data.
        self.payload_dws.next = bits::<BEAT_INDEX_BITS>(0);
        if self.header.has_data.val() {
            self.payload_dws.next = self.header.length_dw.val();
        }
        // The TLP's own facts on its first beat, held for the others: is the
        // digest alone in the last beat, and which beat ends the payload.
        self.index.next = self.beat.q.val();
        self.current_strip.next = self.stripping.q.val();
        self.current_alone.next = self.alone.q.val();
        self.current_last.next = self.last.q.val();
        if self.upstream.sop.val() {
            self.index.next = bits::<BEAT_INDEX_BITS>(0);
            self.current_strip.next = self.drop_digest.val();
            self.current_alone.next = ((self.payload_dws.val() & self.dw_mask.val()) == 0)
                & (self.payload_dws.val() != 0);
            self.current_last.next = (self.payload_dws.val() >> self.dw_shift.val()) - 1;
        }

        self.downstream.valid.next = self.upstream.valid.val();
        self.downstream.sop.next = self.upstream.sop.val();
        self.downstream.eop.next = self.upstream.eop.val();
        self.downstream.empty.next = self.upstream.empty.val();
        self.downstream.nullify.next = self.upstream.nullify.val();
        self.downstream.dw0.next = self.upstream.dw0.val();
        self.downstream.dw1.next = self.upstream.dw1.val();
        self.downstream.dw2.next = self.upstream.dw2.val();
        self.downstream.dw3.next = self.upstream.dw3.val();
        self.downstream.payload.next = self.upstream.payload.val();
        // The payload's last beat is held; the digest's beat, taken as it
        // leaves in the digest's place, gives it its nullify; any beat after
        // that (none, on a stream framed to its Length) is taken and dropped.
        self.hold.next = self.current_strip.val()
            & self.current_alone.val()
            & (self.index.val() == self.current_last.val());
        self.send_held.next = self.current_strip.val()
            & self.current_alone.val()
            & (self.index.val() == self.current_last.val() + 1);
        self.swallow.next = self.current_strip.val()
            & self.current_alone.val()
            & (self.index.val() > self.current_last.val() + 1);
        if self.current_strip.val() & !self.current_alone.val() & self.upstream.eop.val() {
            self.downstream.empty.next = self.upstream.empty.val() + 1;
        }
        if self.send_held.val() {
            self.downstream.sop.next = self.held_sop.q.val();
            self.downstream.eop.next = true;
            self.downstream.empty.next = bits::<EMPTY_BITS>(0);
            self.downstream.dw0.next = self.held_dw0.q.val();
            self.downstream.dw1.next = self.held_dw1.q.val();
            self.downstream.dw2.next = self.held_dw2.q.val();
            self.downstream.dw3.next = self.held_dw3.q.val();
            self.downstream.payload.next = self.held_payload.q.val();
        }
        if self.hold.val() | self.swallow.val() {
            self.downstream.valid.next = false;
        }
        self.upstream.ready.next =
            self.downstream.ready.val() | self.hold.val() | self.swallow.val();
        if self.hold.val() {
            self.held_sop.d.next = self.upstream.sop.val();
            self.held_dw0.d.next = self.upstream.dw0.val();
            self.held_dw1.d.next = self.upstream.dw1.val();
            self.held_dw2.d.next = self.upstream.dw2.val();
            self.held_dw3.d.next = self.upstream.dw3.val();
            self.held_payload.d.next = self.upstream.payload.val();
        }

        if self.upstream.valid.val() & self.upstream.ready.val() {
            self.beat.d.next = self.index.val() + 1;
            self.stripping.d.next = self.current_strip.val();
            self.alone.d.next = self.current_alone.val();
            self.last.d.next = self.current_last.val();
            if self.upstream.eop.val() {
                self.beat.d.next = bits::<BEAT_INDEX_BITS>(0);
            }
        }
    }
}
