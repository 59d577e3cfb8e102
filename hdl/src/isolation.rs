//! The completion that answers a request the switch does not carry out.
//!
//! DESIGN.md, "Isolation is enforced in hardware": a TLP that no table
//! allows is dropped, counted, and answered with an Unsupported Request
//! completion where the spec says so. This is weft-model's
//! `error_completion` together with the rule of `Switch::refuse` on which
//! drops are answered:
//!
//! - only non-posted requests are completed (PCIe Base 6.0 §2.3.1): memory
//!   reads, locked reads, AtomicOps, I/O and configuration requests; a
//!   posted request (a memory write, a message) is only counted, and a
//!   completion is never answered;
//! - a malformed TLP is not answered (§2.3.1, it is an error of the link
//!   partner, and its fields cannot be trusted), nor is anything arriving
//!   at a disabled port, but a configuration request at a disabled port
//!   whose role the fabric manager has not yet settled (`unsettled`): the
//!   switch is not ready yet, and it says so with Request Retry Status
//!   (§2.3.1, §6.6.1) for the host to ask again;
//! - the completion is a Cpl (CplLk for a locked read, §2.2.9.1) without
//!   data, with the request's requester ID, tag (all 10 bits), traffic
//!   class and attributes (§2.2.9), the port's completer ID, and the
//!   status given (Unsupported Request for a drop, Request Retry Status at
//!   an unsettled port; Completer Abort for a request that timed out);
//! - its Byte Count and Lower Address are those of the whole request
//!   (§2.3.1.1, §2.2.9.1), so the requester retires it at once: for a read
//!   the bytes from the first to the last enabled byte and the address of
//!   the first enabled byte (with the byte enables implied by TH,
//!   §2.2.5.1); for an AtomicOp its operand size and Lower Address 0
//!   (Reserved); 4 and 0 for I/O and configuration requests.
//!
//! A Deferrable Memory Write (DMWr, Type 1_1011b) is not answered: weft
//! does not carry it, and the ingress stages never see one parse.
//!
//! The block is combinational: it reads the header of the request as it
//! was received, beside the drop decision.

use rust_hdl::prelude::*;

use crate::header_decode::HeaderDecoder;
use crate::tables::id_map::ID_BITS;
use crate::translate::host_ingress::{drop_reason_code, DROP_REASON_BITS};

/// Bits of a Completion Status (§2.2.9.1).
pub const STATUS_BITS: usize = 3;

/// Completion Status Successful Completion, 000b (§2.2.9.1, Table 2-36).
pub const STATUS_SUCCESSFUL: u32 = 0b000;

/// Completion Status Unsupported Request, 001b (§2.2.9.1, Table 2-36).
pub const STATUS_UNSUPPORTED_REQUEST: u32 = 0b001;

/// Completion Status Request Retry Status, 010b (§2.2.9.1, Table 2-36), for configuration requests only.
pub const STATUS_REQUEST_RETRY: u32 = 0b010;

/// Completion Status Completer Abort, 100b (§2.2.9.1, Table 2-36).
pub const STATUS_COMPLETER_ABORT: u32 = 0b100;

/// Builds the error completion of a dropped request, if it gets one.
#[derive(LogicBlock)]
pub struct ErrorCompletion {
    /// The request is dropped (for `drop_reason`).
    pub dropped: Signal<In, Bit>,
    /// Why: the index of the reason in weft-model's `DropReason::ALL`.
    pub drop_reason: Signal<In, Bits<DROP_REASON_BITS>>,
    /// Header DW0 of the request as received.
    pub dw0: Signal<In, Bits<32>>,
    /// Header DW1 of the request as received.
    pub dw1: Signal<In, Bits<32>>,
    /// Header DW2 of the request as received.
    pub dw2: Signal<In, Bits<32>>,
    /// Header DW3 of the request as received (ignored for a 3 DW header).
    pub dw3: Signal<In, Bits<32>>,
    /// The port's role is not yet settled (`CONTROL.SETTLED` clear): a
    /// configuration request dropped because the port is disabled is answered.
    pub unsettled: Signal<In, Bit>,
    /// The completer ID: the port's `COMPLETER_ID`, in its link partner's domain.
    pub completer_id: Signal<In, Bits<ID_BITS>>,
    /// The Completion Status to send ([`STATUS_UNSUPPORTED_REQUEST`] for a
    /// drop, [`STATUS_REQUEST_RETRY`] at an unsettled disabled port).
    pub status: Signal<In, Bits<STATUS_BITS>>,
    /// The request is answered with the completion below.
    pub respond: Signal<Out, Bit>,
    /// Completion DW0: Fmt/Type, tag\[9:8\], TC, attributes.
    pub completion_dw0: Signal<Out, Bits<32>>,
    /// Completion DW1: completer ID, status, Byte Count.
    pub completion_dw1: Signal<Out, Bits<32>>,
    /// Completion DW2: requester ID, tag\[7:0\], Lower Address.
    pub completion_dw2: Signal<Out, Bits<32>>,
    decoder: HeaderDecoder,
    malformed: Constant<Bits<DROP_REASON_BITS>>,
    port_disabled: Constant<Bits<DROP_REASON_BITS>>,
    copied_dw0: Constant<Bits<32>>,
    requester_and_tag: Constant<Bits<32>>,
    cpl: Constant<Bits<32>>,
    cpl_locked: Constant<Bits<32>>,
    answered: Signal<Local, Bit>,
    read: Signal<Local, Bit>,
    first_be: Signal<Local, Bits<4>>,
    last_be: Signal<Local, Bits<4>>,
    lowest: Signal<Local, Bits<3>>,
    highest: Signal<Local, Bits<3>>,
    skipped_at_end: Signal<Local, Bits<3>>,
    total: Signal<Local, Bits<12>>,
    byte_count: Signal<Local, Bits<12>>,
    lower_address: Signal<Local, Bits<7>>,
}

impl Default for ErrorCompletion {
    fn default() -> Self {
        // §2.2.1: T9 (DW0 bit 23), TC (22:20), T8 (19), Attr[2] (18), Attr[1:0] (13:12).
        let copied = (1u32 << 23) | (0b111 << 20) | (1 << 19) | (1 << 18) | (0b11 << 12);
        ErrorCompletion {
            dropped: Default::default(),
            drop_reason: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            dw3: Default::default(),
            unsettled: Default::default(),
            completer_id: Default::default(),
            status: Default::default(),
            respond: Default::default(),
            completion_dw0: Default::default(),
            completion_dw1: Default::default(),
            completion_dw2: Default::default(),
            decoder: Default::default(),
            malformed: Constant::new(drop_reason_code("DROP_MALFORMED").to_bits()),
            port_disabled: Constant::new(drop_reason_code("DROP_PORT_DISABLED").to_bits()),
            copied_dw0: Constant::new(copied.to_bits()),
            requester_and_tag: Constant::new(0xffff_ff00u32.to_bits()),
            // Table 2-3: Cpl is Fmt 000b Type 0_1010b, CplLk Type 0_1011b.
            cpl: Constant::new((0x0au32 << 24).to_bits()),
            cpl_locked: Constant::new((0x0bu32 << 24).to_bits()),
            answered: Default::default(),
            read: Default::default(),
            first_be: Default::default(),
            last_be: Default::default(),
            lowest: Default::default(),
            highest: Default::default(),
            skipped_at_end: Default::default(),
            total: Default::default(),
            byte_count: Default::default(),
            lower_address: Default::default(),
        }
    }
}

impl Logic for ErrorCompletion {
    #[hdl_gen]
    fn update(&mut self) {
        self.decoder.dw0.next = self.dw0.val();
        self.decoder.dw1.next = self.dw1.val();
        self.decoder.dw2.next = self.dw2.val();
        self.decoder.dw3.next = self.dw3.val();

        // MRd 0_0000b and MRdLk 0_0001b without data; AtomicOps 0_1100b..0_1110b (Table 2-3).
        self.read.next = self.decoder.memory.val() && !self.decoder.has_data.val();
        self.answered.next = self.read.val()
            || (self.decoder.memory.val()
                && (self.decoder.tlp_type.val() >= 12)
                && (self.decoder.tlp_type.val() <= 14))
            || self.decoder.io.val()
            || self.decoder.configuration.val();
        self.respond.next = self.dropped.val()
            && self.answered.val()
            && (self.drop_reason.val() != self.malformed.val())
            && ((self.drop_reason.val() != self.port_disabled.val())
                || (self.unsettled.val() && self.decoder.configuration.val()));

        // §2.2.5.1: a read with TH set carries ST[7:0] where its byte
        // enables were, and implies 1111b/0000b (1 DW) or 1111b/1111b.
        self.first_be.next = self.dw1.val().get_bits::<4>(0);
        self.last_be.next = self.dw1.val().get_bits::<4>(4);
        if self.decoder.hints.val().get_bit(0) {
            self.first_be.next = bits::<4>(0b1111);
            self.last_be.next = bits::<4>(0b1111);
            if self.decoder.length_dw.val() == 1 {
                self.last_be.next = bits::<4>(0);
            }
        }
        // The first and last enabled bytes of the first DW, and the
        // disabled bytes above the last enabled one of the last DW
        // (4 when First DW BE is 0000b, 4 when Last DW BE is 0000b).
        self.lowest.next = bits::<3>(4);
        if self.first_be.val().get_bit(3) {
            self.lowest.next = bits::<3>(3);
        }
        if self.first_be.val().get_bit(2) {
            self.lowest.next = bits::<3>(2);
        }
        if self.first_be.val().get_bit(1) {
            self.lowest.next = bits::<3>(1);
        }
        if self.first_be.val().get_bit(0) {
            self.lowest.next = bits::<3>(0);
        }
        self.highest.next = bits::<3>(0);
        if self.first_be.val().get_bit(1) {
            self.highest.next = bits::<3>(1);
        }
        if self.first_be.val().get_bit(2) {
            self.highest.next = bits::<3>(2);
        }
        if self.first_be.val().get_bit(3) {
            self.highest.next = bits::<3>(3);
        }
        self.skipped_at_end.next = bits::<3>(4);
        if self.last_be.val().get_bit(0) {
            self.skipped_at_end.next = bits::<3>(3);
        }
        if self.last_be.val().get_bit(1) {
            self.skipped_at_end.next = bits::<3>(2);
        }
        if self.last_be.val().get_bit(2) {
            self.skipped_at_end.next = bits::<3>(1);
        }
        if self.last_be.val().get_bit(3) {
            self.skipped_at_end.next = bits::<3>(0);
        }

        // §2.3.1.1, "Calculating Byte Count from Length and Byte Enables",
        // in the 12 bits of the field: 4096 bytes wrap to 0, its encoding
        // (§2.2.9.1), and the subtractions below agree modulo 4096.
        self.total.next = bit_cast::<12, 11>(self.decoder.length_dw.val()) << 2;
        self.byte_count.next = bits::<12>(4);
        self.lower_address.next = bits::<7>(0);
        if self.read.val() {
            self.lower_address.next =
                (bit_cast::<7, 5>(self.decoder.address_low.val().get_bits::<5>(2)) << 2)
                    | bit_cast::<7, 2>(self.lowest.val().get_bits::<2>(0));
            if self.decoder.length_dw.val() == 1 {
                // 1 for a zero-length read (First DW BE 0000b).
                self.byte_count.next = bits::<12>(1);
                if self.first_be.val().any() {
                    self.byte_count.next = bit_cast::<12, 3>(self.highest.val())
                        - bit_cast::<12, 3>(self.lowest.val())
                        + 1;
                }
            } else {
                self.byte_count.next = self.total.val()
                    - bit_cast::<12, 3>(self.lowest.val())
                    - bit_cast::<12, 3>(self.skipped_at_end.val());
                // Only 2 DW with no byte enabled at all skips every byte:
                // the count is then 1, as for a zero-length read.
                if (self.decoder.length_dw.val() == 2)
                    && !self.first_be.val().any()
                    && !self.last_be.val().any()
                {
                    self.byte_count.next = bits::<12>(1);
                }
            }
        } else if self.decoder.memory.val() {
            // An AtomicOp's operand: Length × 4, or Length × 2 for CAS (Table 2-15).
            self.byte_count.next = self.total.val();
            if self.decoder.tlp_type.val() == 14 {
                self.byte_count.next = self.total.val() >> 1;
            }
        }

        self.completion_dw0.next = (self.dw0.val() & self.copied_dw0.val()) | self.cpl.val();
        if self.decoder.tlp_type.val() == 1 {
            self.completion_dw0.next =
                (self.dw0.val() & self.copied_dw0.val()) | self.cpl_locked.val();
        }
        // §2.2.9.1: completer ID, status, BCM 0, Byte Count[11:0] (4096 as 0).
        self.completion_dw1.next = (bit_cast::<32, ID_BITS>(self.completer_id.val()) << 16)
            | (bit_cast::<32, STATUS_BITS>(self.status.val()) << 13)
            | bit_cast::<32, 12>(self.byte_count.val());
        // Requester ID and Tag[7:0] sit in DW1[31:8] of every request (§2.2.6.2).
        self.completion_dw2.next = (self.dw1.val() & self.requester_and_tag.val())
            | bit_cast::<32, 7>(self.lower_address.val());
    }
}
