//! Every port's TLPs for the management CPU, queued into the one mailbox one DW per cycle.
//!
//! weft-model's `Switch` delivers a TLP to `Destination::Cpu` whole, and
//! its `CsrWindow` queues it in the mailbox as it arrives
//! (`CsrWindow::queue_for_cpu`). Here several ports may have a TLP for the
//! CPU in the same cycle, and the [`crate::management::Mailbox`] takes one
//! DW per cycle, so the ports take turns: [`MailboxFeed`] serves one port's
//! TLP at a time, and a port's ingress holds each beat of a TLP for the
//! CPU on its link until every DW of the beat is in the mailbox
//! (`crate::port::PortIngress`'s `cpu_offer`/`cpu_take`). Nothing is
//! lost on the way: a TLP waits on its link, as a TLP waits for room in
//! the switching core. What the mailbox itself cannot hold is lost there
//! with STATUS.LOST, as the model loses it.
//!
//! **Order.** A port's TLPs reach the mailbox in the order they arrived.
//! Among ports whose TLPs for the CPU wait together, the next served is
//! the first in ascending port order from the port after the last one
//! served (round robin, starting at port 0): from an idle switch, TLPs
//! arriving together on several ports are queued in ascending port order.
//!
//! **DWs.** A TLP is queued in wire order (PCIe Base 6.0 §2.2.1): the
//! header as the CPU gets it (3 or 4 DWs, by Fmt), then the payload DWs of
//! each beat, first DW most significant, up to the length the header
//! announces (header, data and digest; weft-pcie's `Header::total_len`),
//! which leaves out a digest DW whose TD the ingress translation cleared
//! (§2.7.1). A TLP that weft-model delivers to the CPU twice (an error
//! message routed to the CPU and copied to its event log) is queued twice
//! when it fits in its first beat, which every message without data does;
//! a longer one is queued once and its second delivery is lost with
//! STATUS.LOST (`lose`). A TLP whose beats belie its Length (`belied`,
//! from the beat that shows it) is void: its last DW pushed says so
//! (`push_void`) and the mailbox drops it, as weft-model never delivers
//! a Malformed TLP.

use rust_hdl::prelude::*;

use crate::header_decode::{HeaderDecoder, WIRE_BYTES_BITS};
use crate::management::PORT_BITS;
use crate::stream::EMPTY_BITS;

/// Bits of a DW position within a TLP (at most 1029 DWs).
const POSITION_BITS: usize = 16;

/// Serves `N` ports' TLPs for the CPU, of `W`-bit beats, into the mailbox.
#[derive(LogicBlock)]
pub struct MailboxFeed<const W: usize, const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Per port: a beat of a TLP for the CPU waits on its link (`PortIngress::cpu_offer`).
    pub offer: [Signal<In, Bit>; N],
    /// Per port, with the first beat's offer: the TLP goes to the CPU twice.
    pub twice: [Signal<In, Bit>; N],
    /// Per port, with the first beat's offer: header DW0 as the CPU gets it.
    pub dw0: [Signal<In, Bits<32>>; N],
    /// Header DW1.
    pub dw1: [Signal<In, Bits<32>>; N],
    /// Header DW2.
    pub dw2: [Signal<In, Bits<32>>; N],
    /// Header DW3.
    pub dw3: [Signal<In, Bits<32>>; N],
    /// Per port: the beat offered is the TLP's last.
    pub eop: [Signal<In, Bit>; N],
    /// Per port: the beat offered shows its TLP's beats belie its Length,
    /// so the TLP is void (`PortIngress::beat_void`).
    pub belied: [Signal<In, Bit>; N],
    /// Per port: its empty payload DWs (on the last beat).
    pub empty: [Signal<In, Bits<EMPTY_BITS>>; N],
    /// Per port: the beat's payload, first DW most significant.
    pub payload: [Signal<In, Bits<W>>; N],
    /// Per port: the link takes the beat offered.
    pub taken: [Signal<In, Bit>; N],
    /// Per port: the mailbox holds every DW of the beat offered; the link may take it.
    pub take: [Signal<Out, Bit>; N],
    /// A DW for the mailbox (`Mailbox::push`).
    pub push: Signal<Out, Bit>,
    /// It is the TLP's DW 0.
    pub push_first: Signal<Out, Bit>,
    /// It is the TLP's last DW.
    pub push_last: Signal<Out, Bit>,
    /// With `push_last`: the TLP is void, to be dropped (`Mailbox::push_void`).
    pub push_void: Signal<Out, Bit>,
    /// The DW.
    pub push_dw: Signal<Out, Bits<32>>,
    /// The port the TLP arrived on.
    pub push_port: Signal<Out, Bits<PORT_BITS>>,
    /// A one-cycle pulse: a TLP for the CPU is lost before the mailbox (`Mailbox::lose`).
    pub lose: Signal<Out, Bit>,
    decoder: HeaderDecoder,
    busy: DFF<Bit>,
    owner: DFF<Bits<PORT_BITS>>,
    next_port: DFF<Bits<PORT_BITS>>,
    position: DFF<Bits<POSITION_BITS>>,
    total: DFF<Bits<POSITION_BITS>>,
    header_dws: DFF<Bits<POSITION_BITS>>,
    beat_start: DFF<Bits<POSITION_BITS>>,
    first_beat: DFF<Bit>,
    double: DFF<Bit>,
    second: DFF<Bit>,
    ports: Constant<Bits<PORT_BITS>>,
    beat_dws: Constant<Bits<POSITION_BITS>>,
    last_dw: Constant<Bits<POSITION_BITS>>,
    found: Signal<Local, Bit>,
    pick: Signal<Local, Bits<PORT_BITS>>,
    pick_twice: Signal<Local, Bit>,
    owner_offer: Signal<Local, Bit>,
    owner_eop: Signal<Local, Bit>,
    owner_void: Signal<Local, Bit>,
    owner_taken: Signal<Local, Bit>,
    owner_empty: Signal<Local, Bits<EMPTY_BITS>>,
    owner_payload: Signal<Local, Bits<W>>,
    owner_dw0: Signal<Local, Bits<32>>,
    owner_dw1: Signal<Local, Bits<32>>,
    owner_dw2: Signal<Local, Bits<32>>,
    owner_dw3: Signal<Local, Bits<32>>,
    beat_end: Signal<Local, Bits<POSITION_BITS>>,
    limit: Signal<Local, Bits<POSITION_BITS>>,
    pushing: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    drained: Signal<Local, Bit>,
}

impl<const W: usize, const N: usize> Default for MailboxFeed<W, N> {
    fn default() -> Self {
        assert!(
            W.is_multiple_of(32) && W / 32 < 1 << EMPTY_BITS && N < 1 << PORT_BITS,
            "a payload bus of whole DWs, and ports the mailbox can name"
        );
        MailboxFeed {
            clock: Default::default(),
            offer: std::array::from_fn(|_| Default::default()),
            twice: std::array::from_fn(|_| Default::default()),
            dw0: std::array::from_fn(|_| Default::default()),
            dw1: std::array::from_fn(|_| Default::default()),
            dw2: std::array::from_fn(|_| Default::default()),
            dw3: std::array::from_fn(|_| Default::default()),
            eop: std::array::from_fn(|_| Default::default()),
            belied: std::array::from_fn(|_| Default::default()),
            empty: std::array::from_fn(|_| Default::default()),
            payload: std::array::from_fn(|_| Default::default()),
            taken: std::array::from_fn(|_| Default::default()),
            take: std::array::from_fn(|_| Default::default()),
            push: Default::default(),
            push_first: Default::default(),
            push_last: Default::default(),
            push_void: Default::default(),
            push_dw: Default::default(),
            push_port: Default::default(),
            lose: Default::default(),
            decoder: Default::default(),
            busy: Default::default(),
            owner: Default::default(),
            next_port: Default::default(),
            position: Default::default(),
            total: Default::default(),
            header_dws: Default::default(),
            beat_start: Default::default(),
            first_beat: Default::default(),
            double: Default::default(),
            second: Default::default(),
            ports: Constant::new(N.to_bits()),
            beat_dws: Constant::new((W / 32).to_bits()),
            last_dw: Constant::new((W / 32 - 1).to_bits()),
            found: Default::default(),
            pick: Default::default(),
            pick_twice: Default::default(),
            owner_offer: Default::default(),
            owner_eop: Default::default(),
            owner_void: Default::default(),
            owner_taken: Default::default(),
            owner_empty: Default::default(),
            owner_payload: Default::default(),
            owner_dw0: Default::default(),
            owner_dw1: Default::default(),
            owner_dw2: Default::default(),
            owner_dw3: Default::default(),
            beat_end: Default::default(),
            limit: Default::default(),
            pushing: Default::default(),
            last: Default::default(),
            drained: Default::default(),
        }
    }
}

impl<const W: usize, const N: usize> Logic for MailboxFeed<W, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, busy, owner, next_port, position, total, header_dws, beat_start,
            first_beat, double, second
        );

        // The port being served, and its link.
        self.owner_offer.next = false;
        self.owner_eop.next = false;
        self.owner_void.next = false;
        self.owner_taken.next = false;
        self.owner_empty.next = bits::<EMPTY_BITS>(0);
        self.owner_payload.next = 0.into();
        self.owner_dw0.next = bits::<32>(0);
        self.owner_dw1.next = bits::<32>(0);
        self.owner_dw2.next = bits::<32>(0);
        self.owner_dw3.next = bits::<32>(0);
        for i in 0..N {
            if self.owner.q.val().index() == i {
                self.owner_offer.next = self.offer[i].val();
                self.owner_eop.next = self.eop[i].val();
                self.owner_void.next = self.belied[i].val();
                self.owner_taken.next = self.taken[i].val();
                self.owner_empty.next = self.empty[i].val();
                self.owner_payload.next = self.payload[i].val();
                self.owner_dw0.next = self.dw0[i].val();
                self.owner_dw1.next = self.dw1[i].val();
                self.owner_dw2.next = self.dw2[i].val();
                self.owner_dw3.next = self.dw3[i].val();
            }
        }

        // The DWs the beat offered holds: its payload after the header, up to
        // the end of the stream or the length the header announces.
        self.beat_end.next = self.beat_start.q.val() + self.beat_dws.val();
        if self.owner_eop.val() {
            self.beat_end.next = self.beat_start.q.val() + self.beat_dws.val()
                - bit_cast::<POSITION_BITS, EMPTY_BITS>(self.owner_empty.val());
        }
        self.limit.next = self.beat_end.val();
        if self.total.q.val() < self.beat_end.val() {
            self.limit.next = self.total.q.val();
        }
        self.pushing.next =
            self.busy.q.val() & self.owner_offer.val() & (self.position.q.val() < self.limit.val());
        self.last.next = ((self.position.q.val() + 1) == self.limit.val())
            & ((self.limit.val() == self.total.q.val()) | self.owner_eop.val());
        self.drained.next = self.busy.q.val() & (self.position.q.val() >= self.limit.val());

        // DW `position`: a header DW, else a payload DW of the beat.
        self.push_dw.next = bit_cast::<32, W>(
            self.owner_payload.val()
                >> ((self.last_dw.val() - (self.position.q.val() - self.beat_start.q.val())) << 5),
        );
        if self.position.q.val() < self.header_dws.q.val() {
            self.push_dw.next = self.owner_dw0.val();
            if self.position.q.val() == 1 {
                self.push_dw.next = self.owner_dw1.val();
            }
            if self.position.q.val() == 2 {
                self.push_dw.next = self.owner_dw2.val();
            }
            if self.position.q.val() == 3 {
                self.push_dw.next = self.owner_dw3.val();
            }
        }
        self.push.next = self.pushing.val();
        self.push_first.next = self.pushing.val() & (self.position.q.val() == 0);
        self.push_last.next = self.pushing.val() & self.last.val();
        // The beat that holds the last DW shows whether the TLP is void.
        self.push_void.next = self.pushing.val() & self.last.val() & self.owner_void.val();
        self.push_port.next = self.owner.q.val();
        self.lose.next = false;
        if self.pushing.val() {
            self.position.d.next = self.position.q.val() + 1;
            if self.last.val() & self.double.q.val() & !self.second.q.val() {
                if self.first_beat.q.val() {
                    // The second delivery: the same DWs again, while the beat waits.
                    self.position.d.next = bits::<POSITION_BITS>(0);
                    self.second.d.next = true;
                } else {
                    self.lose.next = true;
                }
            }
        }

        // The beat leaves the link once all its DWs are queued.
        for i in 0..N {
            self.take[i].next = self.drained.val() & (self.owner.q.val().index() == i);
        }
        if self.busy.q.val() & self.owner_taken.val() {
            self.first_beat.d.next = false;
            self.beat_start.d.next = self.beat_start.q.val() + self.beat_dws.val();
            if self.owner_eop.val() {
                self.busy.d.next = false;
            }
        }

        // The next TLP: round robin from the port after the last served.
        self.found.next = false;
        self.pick.next = bits::<PORT_BITS>(0);
        for i in 0..N {
            if self.offer[i].val() & !self.found.val() & (self.next_port.q.val().index() <= i) {
                self.found.next = true;
                self.pick.next = i.to_bits();
            }
        }
        for i in 0..N {
            if self.offer[i].val() & !self.found.val() {
                self.found.next = true;
                self.pick.next = i.to_bits();
            }
        }
        self.decoder.dw0.next = bits::<32>(0);
        self.decoder.dw1.next = bits::<32>(0);
        self.decoder.dw2.next = bits::<32>(0);
        self.decoder.dw3.next = bits::<32>(0);
        self.pick_twice.next = false;
        for i in 0..N {
            if self.pick.val().index() == i {
                self.decoder.dw0.next = self.dw0[i].val();
                self.pick_twice.next = self.twice[i].val();
            }
        }
        if !self.busy.q.val() & self.found.val() {
            self.busy.d.next = true;
            self.owner.d.next = self.pick.val();
            self.next_port.d.next = self.pick.val() + 1;
            if (self.pick.val() + 1) == self.ports.val() {
                self.next_port.d.next = bits::<PORT_BITS>(0);
            }
            self.position.d.next = bits::<POSITION_BITS>(0);
            self.total.d.next =
                bit_cast::<POSITION_BITS, WIRE_BYTES_BITS>(self.decoder.wire_bytes.val()) >> 2;
            self.header_dws.d.next = bits::<POSITION_BITS>(3);
            self.beat_start.d.next = bits::<POSITION_BITS>(3);
            if self.decoder.four_dw.val() {
                self.header_dws.d.next = bits::<POSITION_BITS>(4);
                self.beat_start.d.next = bits::<POSITION_BITS>(4);
            }
            self.first_beat.d.next = true;
            self.double.d.next = self.pick_twice.val();
            self.second.d.next = false;
        }
    }
}
