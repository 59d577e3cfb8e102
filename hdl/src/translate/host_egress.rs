//! Host egress: a fabric TLP header back into the host's own IDs and addresses, or dropped.
//!
//! DESIGN.md, "Domains and translation": host egress undoes what the
//! ingress stages did, so the host sees its own IDs and addresses. This is
//! weft-model's `Switch::egress` at a host port:
//!
//! - a memory request (an endpoint's DMA, or a peer request redirected up)
//!   must lie in the host's aperture; its address becomes the offset in it
//!   (`address - (HOST_APERTURE_BASE | host << HOST_APERTURE_SHIFT)`,
//!   re-encoded as 3 or 4 DW by its value, PCIe Base 6.0 §2.2.4.1), and its
//!   requester ID the ID the host enumerated the function at (the ID map);
//! - a completion answers one of this host's requests: it must be addressed
//!   to the host's proxy ID with a fabric tag in flight in the port's
//!   outstanding-request table; it gets the host's requester ID and tag
//!   back (§2.2.9), and as completer the host's ID of the function, or the
//!   port's own completer ID for a completer the host does not know (the
//!   switch itself); the table itself frees the tag with the last
//!   completion of its request (§2.3.1.1: its bytes cover the remaining
//!   Byte Count);
//! - a message routed by ID to the proxy goes to the host as the message
//!   an upstream port sends: an error or PME routed to the root complex
//!   from the function's host ID (§2.2.8.2, §2.2.8.3); an INTx message
//!   goes out as the port's own local message (§2.2.8.1) if the port's
//!   [`crate::translate::VirtualWires`], which collapse the pin over every
//!   function asserting it, say it changes the pin;
//! - anything else (I/O, configuration, other messages) is Unsupported here.
//!
//! Every header that passes loses TD (§2.7.1), as in the model.
//!
//! The outstanding-request table is its own block (a 1024-entry memory per
//! host port, [`crate::tables::OutstandingTable`]): this stage asks it
//! about a completion (`completion_query`; the table reads the fabric tag
//! from the header itself) and expects its answer one clock edge later, as
//! a block RAM read gives it, in `tag_found`, `tag_requester` and
//! `tag_host_tag`.
//!
//! Latency: one clock cycle; the answer holds while the same header (and
//! the same table answer) is presented.

use rust_hdl::prelude::*;
use weft_regs::aperture::{HOST_APERTURE_BASE, HOST_APERTURE_SHIFT};

use crate::csr::CsrTarget;
use crate::header_decode::HeaderDecoder;
use crate::tables::id_map::ID_BITS;
use crate::tables::IdMap;
use crate::translate::endpoint_ingress::HOST_BITS;
use crate::translate::host_ingress::{drop_reason_code, DROP_REASON_BITS};

/// Bits of a tag (§2.2.6.2: 10-bit tags), the outstanding-request table's index.
pub use crate::tables::outstanding::TAG_BITS;

// The aperture is recognised as address[63:52] = {1, host}.
const _: () = assert!(HOST_APERTURE_SHIFT == 52 && HOST_BITS == 11);
const _: () = assert!(HOST_APERTURE_BASE == 1 << 63);

/// Where the host egress stage sends a TLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EgressDestination {
    /// Out to the host, translated.
    Forward,
    /// Dropped, for the reason in `drop_reason`.
    Drop,
    /// An INTx message, translated, to be sent if the port's
    /// [`crate::translate::VirtualWires`] say it changes the pin's collapsed state.
    VirtualWire,
}

impl EgressDestination {
    /// Every destination, in code order.
    pub const ALL: [EgressDestination; 3] = [
        EgressDestination::Forward,
        EgressDestination::Drop,
        EgressDestination::VirtualWire,
    ];

    /// The value of [`HostEgress::destination`] for this destination.
    pub const fn code(self) -> u32 {
        match self {
            EgressDestination::Forward => 0,
            EgressDestination::Drop => 1,
            EgressDestination::VirtualWire => 2,
        }
    }

    /// The destination with code `code`, if there is one.
    pub fn from_code(code: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.code() == code)
    }
}

/// The host egress translation of one host port with an ID map of `N` entries.
#[derive(LogicBlock)]
pub struct HostEgress<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back of the port's ID map (`weft_regs::csr::id_map`).
    pub csr: CsrTarget,
    /// A TLP header is presented (the stream's valid on its sop beat).
    pub valid: Signal<In, Bit>,
    /// Header DW0 as it leaves the fabric.
    pub dw0: Signal<In, Bits<32>>,
    /// Header DW1.
    pub dw1: Signal<In, Bits<32>>,
    /// Header DW2.
    pub dw2: Signal<In, Bits<32>>,
    /// Header DW3 (ignored for a 3 DW header).
    pub dw3: Signal<In, Bits<32>>,
    /// The port passes traffic: `CONTROL.ENABLE` with role host.
    pub enabled: Signal<In, Bit>,
    /// The host's index, selecting its aperture: `HOST.INDEX`.
    pub host_index: Signal<In, Bits<HOST_BITS>>,
    /// The host's proxy fabric ID: `HOST.PROXY_ID`.
    pub proxy_id: Signal<In, Bits<ID_BITS>>,
    /// The port's own ID in the host's domain (its virtual upstream port): `COMPLETER_ID`.
    pub completer_id: Signal<In, Bits<ID_BITS>>,
    /// The presented header is a completion for the table to look up: well
    /// formed, on an enabled host port (the table checks the requester and the tag).
    pub completion_query: Signal<Out, Bit>,
    /// The table's answer, one cycle after the query: the tag is in flight.
    pub tag_found: Signal<In, Bit>,
    /// The host's requester ID of the request in flight under that tag.
    pub tag_requester: Signal<In, Bits<ID_BITS>>,
    /// The host's tag of that request.
    pub tag_host_tag: Signal<In, Bits<TAG_BITS>>,
    /// The header presented before the last clock edge is answered.
    pub answer_valid: Signal<Out, Bit>,
    /// Where it goes: an [`EgressDestination`] code.
    pub destination: Signal<Out, Bits<2>>,
    /// Why it is dropped, while `destination` is Drop: the index of the
    /// reason in weft-model's `DropReason::ALL`, as the drop counters use.
    pub drop_reason: Signal<Out, Bits<DROP_REASON_BITS>>,
    /// Header DW0 to send on.
    pub header_dw0: Signal<Out, Bits<32>>,
    /// Header DW1 to send on.
    pub header_dw1: Signal<Out, Bits<32>>,
    /// Header DW2 to send on.
    pub header_dw2: Signal<Out, Bits<32>>,
    /// Header DW3 to send on (zero for a 3 DW header).
    pub header_dw3: Signal<Out, Bits<32>>,
    /// The presented header's flow control class (§2.6.1), decoded in
    /// this cycle: what a discarded TLP gives back to the link's credit.
    pub flow_class: Signal<Out, Bits<2>>,
    /// The presented header carries data.
    pub has_data: Signal<Out, Bit>,
    /// Its Length field in DWs (meaningful with `has_data`).
    pub length_dw: Signal<Out, Bits<11>>,
    decoder: HeaderDecoder,
    id_map: IdMap<N>,
    valid_reg: DFF<Bit>,
    dw0_reg: DFF<Bits<32>>,
    dw1_reg: DFF<Bits<32>>,
    dw2_reg: DFF<Bits<32>>,
    dw3_reg: DFF<Bits<32>>,
    destination_reg: DFF<Bits<2>>,
    reason_reg: DFF<Bits<DROP_REASON_BITS>>,
    completion_reg: DFF<Bit>,
    known_reg: DFF<Bit>,
    host_id_reg: DFF<Bits<ID_BITS>>,
    completer_reg: DFF<Bits<ID_BITS>>,
    to_forward: Constant<Bits<2>>,
    to_drop: Constant<Bits<2>>,
    to_virtual_wire: Constant<Bits<2>>,
    malformed: Constant<Bits<DROP_REASON_BITS>>,
    port_disabled: Constant<Bits<DROP_REASON_BITS>>,
    outside_aperture: Constant<Bits<DROP_REASON_BITS>>,
    unsupported: Constant<Bits<DROP_REASON_BITS>>,
    unexpected_completion: Constant<Bits<DROP_REASON_BITS>>,
    unknown_function: Constant<Bits<DROP_REASON_BITS>>,
    dw0_kept: Constant<Bits<32>>,
    four_dw_bit: Constant<Bits<32>>,
    message_dw0_kept: Constant<Bits<32>>,
    local_routing: Constant<Bits<32>>,
    completion_dw0_kept: Constant<Bits<32>>,
    aperture_tag: Constant<Bits<12>>,
    aperture: Signal<Local, Bits<12>>,
    to_proxy: Signal<Local, Bit>,
    offset_high: Signal<Local, Bits<32>>,
}

impl<const N: usize> HostEgress<N> {
    /// The host egress of port `port`, its ID map answering that port's ID map registers.
    ///
    /// # Panics
    ///
    /// As [`IdMap::new`].
    pub fn new(port: u32) -> Self {
        let destination = |d: EgressDestination| Constant::new(d.code().to_bits());
        let reason = |name: &str| Constant::new(drop_reason_code(name).to_bits());
        // §2.2.1: Fmt[0] (DW0 bit 29) selects the 4 DW header; TD is DW0
        // bit 15; a message's routing r[2:0] is Type[2:0], DW0 bits 26:24;
        // T9 and T8 of a 10-bit tag are DW0 bits 23 and 19 (§2.2.6.2).
        let four_dw_bit = 1u32 << 29;
        let digest_bit = 1u32 << 15;
        let routing_bits = 0b111u32 << 24;
        let tag_high_bits = (1u32 << 23) | (1u32 << 19);
        HostEgress {
            clock: Default::default(),
            csr: Default::default(),
            valid: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            dw3: Default::default(),
            enabled: Default::default(),
            host_index: Default::default(),
            proxy_id: Default::default(),
            completer_id: Default::default(),
            completion_query: Default::default(),
            tag_found: Default::default(),
            tag_requester: Default::default(),
            tag_host_tag: Default::default(),
            answer_valid: Default::default(),
            destination: Default::default(),
            drop_reason: Default::default(),
            header_dw0: Default::default(),
            header_dw1: Default::default(),
            header_dw2: Default::default(),
            header_dw3: Default::default(),
            flow_class: Default::default(),
            has_data: Default::default(),
            length_dw: Default::default(),
            decoder: Default::default(),
            id_map: IdMap::new(port),
            valid_reg: Default::default(),
            dw0_reg: Default::default(),
            dw1_reg: Default::default(),
            dw2_reg: Default::default(),
            dw3_reg: Default::default(),
            destination_reg: Default::default(),
            reason_reg: Default::default(),
            completion_reg: Default::default(),
            known_reg: Default::default(),
            host_id_reg: Default::default(),
            completer_reg: Default::default(),
            to_forward: destination(EgressDestination::Forward),
            to_drop: destination(EgressDestination::Drop),
            to_virtual_wire: destination(EgressDestination::VirtualWire),
            malformed: reason("DROP_MALFORMED"),
            port_disabled: reason("DROP_PORT_DISABLED"),
            outside_aperture: reason("DROP_OUTSIDE_APERTURE"),
            unsupported: reason("DROP_UNSUPPORTED"),
            unexpected_completion: reason("DROP_UNEXPECTED_COMPLETION"),
            unknown_function: reason("DROP_UNKNOWN_FUNCTION"),
            dw0_kept: Constant::new((!(four_dw_bit | digest_bit)).to_bits()),
            four_dw_bit: Constant::new(four_dw_bit.to_bits()),
            message_dw0_kept: Constant::new((!(routing_bits | digest_bit)).to_bits()),
            // Table 2-20: r[2:0] = 100b, local (terminated at the receiver).
            local_routing: Constant::new((0b100u32 << 24).to_bits()),
            completion_dw0_kept: Constant::new((!(tag_high_bits | digest_bit)).to_bits()),
            aperture_tag: Constant::new((1u32 << HOST_BITS).to_bits()),
            aperture: Default::default(),
            to_proxy: Default::default(),
            offset_high: Default::default(),
        }
    }
}

impl<const N: usize> Logic for HostEgress<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            valid_reg,
            dw0_reg,
            dw1_reg,
            dw2_reg,
            dw3_reg,
            destination_reg,
            reason_reg,
            completion_reg,
            known_reg,
            host_id_reg,
            completer_reg
        );
        self.id_map.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.id_map.csr);

        // Cycle 1: decode, look the ID up, ask for the tag, rewrite what needs no answer.
        self.decoder.dw0.next = self.dw0.val();
        self.decoder.dw1.next = self.dw1.val();
        self.decoder.dw2.next = self.dw2.val();
        self.decoder.dw3.next = self.dw3.val();
        self.flow_class.next = self.decoder.flow_class.val();
        self.has_data.next = self.decoder.has_data.val();
        self.length_dw.next = self.decoder.length_dw.val();
        self.completion_query.next = self.valid.val()
            && self.enabled.val()
            && self.decoder.completion.val()
            && !self.decoder.reserved.val()
            && !self.decoder.prefix.val();
        // The requester ID of a request or message, the completer ID of a completion.
        self.id_map.fabric_query.next = self.decoder.dw1_id.val();
        self.id_map.host_query.next = bits::<ID_BITS>(0);
        self.known_reg.d.next = self.id_map.host_found.val();
        self.host_id_reg.d.next = self.id_map.host.val();
        self.completer_reg.d.next = self.completer_id.val();
        self.valid_reg.d.next = self.valid.val();
        self.dw0_reg.d.next = self.dw0.val();
        self.dw1_reg.d.next = self.dw1.val();
        self.dw2_reg.d.next = self.dw2.val();
        self.dw3_reg.d.next = self.dw3.val();

        // Address[63:52] of the host's aperture is {1, host}.
        self.aperture.next = self.decoder.address_high.val().get_bits::<12>(20);
        self.offset_high.next =
            bit_cast::<32, 20>(self.decoder.address_high.val().get_bits::<20>(0));
        self.completion_reg.d.next = false;
        // A message routed by ID (r = 010b) to the proxy ID in bytes 8–9 (§2.2.4.2).
        self.to_proxy.next = (self.decoder.message_routing.val() == 0b010)
            && (self.dw2.val().get_bits::<16>(16) == self.proxy_id.val());

        self.destination_reg.d.next = self.to_drop.val();
        self.reason_reg.d.next = self.malformed.val();
        if self.decoder.reserved.val() || self.decoder.prefix.val() {
            // A header of no type (reserved, or a prefix) is Malformed (§2.3.1).
            self.reason_reg.d.next = self.malformed.val();
        } else if !self.enabled.val() {
            self.reason_reg.d.next = self.port_disabled.val();
        } else if self.decoder.memory.val() {
            self.reason_reg.d.next = self.outside_aperture.val();
            if self.aperture.val()
                == (self.aperture_tag.val() | bit_cast::<12, HOST_BITS>(self.host_index.val()))
            {
                self.reason_reg.d.next = self.unknown_function.val();
                self.destination_reg.d.next = self.to_forward.val();
            }
            // §2.2.4.1: the host address needs the 4 DW header exactly at or above 4 GiB.
            self.dw0_reg.d.next = self.dw0.val() & self.dw0_kept.val();
            self.dw2_reg.d.next = self.decoder.address_low.val()
                | bit_cast::<32, 2>(self.decoder.processing_hint.val());
            self.dw3_reg.d.next = bits::<32>(0);
            if self.offset_high.val().any() {
                self.dw0_reg.d.next =
                    (self.dw0.val() & self.dw0_kept.val()) | self.four_dw_bit.val();
                self.dw2_reg.d.next = self.offset_high.val();
                self.dw3_reg.d.next = self.decoder.address_low.val()
                    | bit_cast::<32, 2>(self.decoder.processing_hint.val());
            }
        } else if self.decoder.completion.val() {
            self.reason_reg.d.next = self.unexpected_completion.val();
            self.completion_reg.d.next =
                self.decoder.completion_requester_id.val() == self.proxy_id.val();
            self.dw0_reg.d.next = self.dw0.val() & self.completion_dw0_kept.val();
        } else if self.decoder.message.val() && self.to_proxy.val() {
            // The message an upstream port sends: bytes 8–15 Reserved (zero).
            self.dw2_reg.d.next = bits::<32>(0);
            self.dw3_reg.d.next = bits::<32>(0);
            self.dw0_reg.d.next = self.dw0.val() & self.message_dw0_kept.val();
            // Assert_INTx 0010_0xxxb, Deassert_INTx 0010_01xxb (§2.2.8.1).
            if self.dw1.val().get_bits::<5>(3) == 0b00100 {
                self.destination_reg.d.next = self.to_virtual_wire.val();
                self.dw0_reg.d.next =
                    (self.dw0.val() & self.message_dw0_kept.val()) | self.local_routing.val();
            } else {
                // Routed to the root complex (r = 000b).
                self.reason_reg.d.next = self.unknown_function.val();
                self.destination_reg.d.next = self.to_forward.val();
            }
        } else {
            // I/O, configuration, and messages for anyone but this host.
            self.reason_reg.d.next = self.unsupported.val();
        }

        // Cycle 2: the ID map's and the outstanding-request table's answers.
        self.answer_valid.next = self.valid_reg.q.val();
        self.destination.next = self.destination_reg.q.val();
        self.drop_reason.next = self.reason_reg.q.val();
        self.header_dw0.next = self.dw0_reg.q.val();
        // §2.2.6.2: the requester ID of a request or message is DW1[31:16].
        self.header_dw1.next = (bit_cast::<32, ID_BITS>(self.host_id_reg.q.val()) << 16)
            | bit_cast::<32, 16>(self.dw1_reg.q.val().get_bits::<16>(0));
        self.header_dw2.next = self.dw2_reg.q.val();
        self.header_dw3.next = self.dw3_reg.q.val();
        if self.destination_reg.q.val() == self.to_virtual_wire.val() {
            self.header_dw1.next = (bit_cast::<32, ID_BITS>(self.completer_reg.q.val()) << 16)
                | bit_cast::<32, 16>(self.dw1_reg.q.val().get_bits::<16>(0));
        } else if (self.destination_reg.q.val() == self.to_forward.val()) && !self.known_reg.q.val()
        {
            // The host does not know the requester.
            self.destination.next = self.to_drop.val();
        }
        if self.completion_reg.q.val() {
            self.drop_reason.next = self.unexpected_completion.val();
            if self.tag_found.val() {
                self.destination.next = self.to_forward.val();
                // §2.2.9: the completer ID in DW1[31:16]; the requester ID in
                // DW2[31:16] and the tag in T9 (DW0 bit 23), T8 (bit 19), DW2[15:8].
                self.header_dw1.next = (bit_cast::<32, ID_BITS>(self.completer_reg.q.val()) << 16)
                    | bit_cast::<32, 16>(self.dw1_reg.q.val().get_bits::<16>(0));
                if self.known_reg.q.val() {
                    self.header_dw1.next = (bit_cast::<32, ID_BITS>(self.host_id_reg.q.val())
                        << 16)
                        | bit_cast::<32, 16>(self.dw1_reg.q.val().get_bits::<16>(0));
                }
                self.header_dw0.next = self.dw0_reg.q.val()
                    | (bit_cast::<32, 1>(self.tag_host_tag.val().get_bits::<1>(9)) << 23)
                    | (bit_cast::<32, 1>(self.tag_host_tag.val().get_bits::<1>(8)) << 19);
                self.header_dw2.next = (bit_cast::<32, ID_BITS>(self.tag_requester.val()) << 16)
                    | (bit_cast::<32, 8>(self.tag_host_tag.val().get_bits::<8>(0)) << 8)
                    | bit_cast::<32, 8>(self.dw2_reg.q.val().get_bits::<8>(0));
            }
        }
    }
}
