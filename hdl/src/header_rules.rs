//! Header rules: the checks of PCIe Base 6.0 §2.2 that make a received TLP Malformed.
//!
//! [`HeaderDecoder`](crate::HeaderDecoder) says what a header is; this block
//! says whether its fields break a rule the receiver must (or, where the
//! spec permits, does) check. It is combinational and sits beside the
//! decoder at every ingress, fed by the decoder's fields, so each check
//! works on a field of at most 32 bits. `weft-model`
//! drops exactly the headers `weft_pcie::tlp::Header::decode_dws` rejects
//! as Malformed, and the tests hold this block to that decoder header for
//! header.
//!
//! What is checked:
//! - a Fmt/Type pair Table 2-3 reserves (§2.2.1.1), and Deferrable Memory
//!   Writes, which weft does not route;
//! - memory requests: a 4 DW header for an address below 4 GiB (§2.2.4.1),
//!   the First/Last DW byte-enable rules (§2.2.5.1, not where TH puts a
//!   Steering Tag in their place), and a request that crosses a 4 KiB
//!   boundary (§2.2.7.1);
//! - AtomicOps: an operand size Table 2-15 does not define, and an address
//!   not naturally aligned to the operand (§2.2.7.1);
//! - I/O and Configuration requests: TC other than TC0, Attr\[1:0\] other
//!   than 00b, Length other than 1 DW, Last DW BE other than 0000b (§2.2.7.1,
//!   §2.2.5.1);
//! - completions: a Completion Status Table 2-37 reserves (§2.2.9.1);
//! - messages that §2.2.8.1–§2.2.8.5 restrict to TC0 on another TC.
//!
//! The TLP's length against its stream (§2.2.2) is the ingress's check, as
//! it needs the beats.

use rust_hdl::prelude::*;

/// Raises `malformed` for a header that breaks a receiver rule of §2.2 (see the module docs).
///
/// Its inputs are fields the ingress's [`HeaderDecoder`](crate::HeaderDecoder)
/// decodes, each no wider than the rules need.
#[derive(LogicBlock, Default)]
pub struct HeaderRules {
    /// Type\[4:0\].
    pub tlp_type: Signal<In, Bits<5>>,
    /// TC\[2:0\].
    pub traffic_class: Signal<In, Bits<3>>,
    /// Attr\[1:0\] (Relaxed Ordering, No Snoop).
    pub attributes_low: Signal<In, Bits<2>>,
    /// TH: the request carries processing hints (§2.2.7.1).
    pub processing_hints: Signal<In, Bit>,
    /// Fmt says the TLP carries data.
    pub has_data: Signal<In, Bit>,
    /// DW1\[7:0\]: a request's Last and First DW BE, or a message's Message Code.
    pub byte_enables: Signal<In, Bits<8>>,
    /// DW1\[15:13\]: a completion's Completion Status.
    pub completion_status: Signal<In, Bits<3>>,
    /// The decoder's memory request class (reads, writes, AtomicOps, DMWr).
    pub memory: Signal<In, Bit>,
    /// The decoder's I/O request class.
    pub io: Signal<In, Bit>,
    /// The decoder's Configuration request class.
    pub configuration: Signal<In, Bit>,
    /// The decoder's completion class.
    pub completion: Signal<In, Bit>,
    /// The decoder's message class.
    pub message: Signal<In, Bit>,
    /// The decoder found a reserved Fmt/Type pair.
    pub reserved: Signal<In, Bit>,
    /// The header is 4 DWs.
    pub four_dw: Signal<In, Bit>,
    /// Length in DWs, 1 to 1024.
    pub length_dw: Signal<In, Bits<11>>,
    /// Address\[63:32\] of a memory request (zero in a 3 DW header).
    pub address_high: Signal<In, Bits<32>>,
    /// Address\[11:0\] of a request, bits \[1:0\] zero: where in its 4 KiB page it starts.
    pub page_offset: Signal<In, Bits<12>>,
    /// The header breaks a rule: the TLP is Malformed (§2.3.1).
    pub malformed: Signal<Out, Bit>,
    first_be: Signal<Local, Bits<4>>,
    last_be: Signal<Local, Bits<4>>,
    atomic: Signal<Local, Bit>,
    byte_enables_legal: Signal<Local, Bit>,
    page_end: Signal<Local, Bits<14>>,
    memory_broken: Signal<Local, Bit>,
    atomic_broken: Signal<Local, Bit>,
    io_config_broken: Signal<Local, Bit>,
    completion_broken: Signal<Local, Bit>,
    message_broken: Signal<Local, Bit>,
}

impl Logic for HeaderRules {
    #[hdl_gen]
    fn update(&mut self) {
        self.first_be.next = self.byte_enables.val().get_bits::<4>(0);
        self.last_be.next = self.byte_enables.val().get_bits::<4>(4);
        // Table 2-3: FetchAdd 0_1100b, Swap 0_1101b, CAS 0_1110b.
        self.atomic.next = self.memory.val()
            & (self.tlp_type.val() >= 0b0_1100)
            & (self.tlp_type.val() <= 0b0_1110);

        // §2.2.5.1: a 1 DW request has Last DW BE 0000b and any First DW BE;
        // a longer one has neither 0000b, and unless it is 2 DWs at a QW
        // aligned address, its enabled bytes run without a gap (First DW BE
        // 1000b, 1100b, 1110b or 1111b; Last DW BE 0001b, 0011b, 0111b or 1111b).
        self.byte_enables_legal.next = (self.first_be.val() != 0)
            & (self.last_be.val() != 0)
            & (((self.length_dw.val() == 2) & !self.page_offset.val().get_bit(2))
                | (((self.first_be.val() == 0b1000)
                    | (self.first_be.val() == 0b1100)
                    | (self.first_be.val() == 0b1110)
                    | (self.first_be.val() == 0b1111))
                    & ((self.last_be.val() == 0b0001)
                        | (self.last_be.val() == 0b0011)
                        | (self.last_be.val() == 0b0111)
                        | (self.last_be.val() == 0b1111))));
        if self.length_dw.val() == 1 {
            self.byte_enables_legal.next = self.last_be.val() == 0;
        }
        // §2.2.7.1: a request's bytes stay within one 4 KiB page.
        self.page_end.next = bit_cast::<14, 12>(self.page_offset.val())
            + (bit_cast::<14, 11>(self.length_dw.val()) << 2);
        // §2.2.4.1: the 4 DW format is for addresses of 4 GiB and up. A
        // Deferrable Memory Write (Type 1_1011b) is not routed. Byte
        // enables and the page rule are for reads, writes and locked reads;
        // a read's TH (no data) puts a Steering Tag where the byte enables were.
        self.memory_broken.next = self.memory.val()
            & ((self.four_dw.val() & (self.address_high.val() == 0))
                | (self.tlp_type.val() == 0b1_1011)
                | (!self.atomic.val()
                    & ((!self.byte_enables_legal.val()
                        & !(self.processing_hints.val() & !self.has_data.val()))
                        | (self.page_end.val() > 4096))));

        // Table 2-15: FetchAdd and Swap take a 1 or 2 DW operand, CAS two
        // operands of 1, 2 or 4 DWs; the address is aligned to the operand
        // size (Length × 4, or Length × 2 for CAS).
        self.atomic_broken.next = self.atomic.val()
            & (((self.length_dw.val() != 1) & (self.length_dw.val() != 2))
                | ((self.length_dw.val() == 2) & self.page_offset.val().get_bit(2)));
        if self.tlp_type.val() == 0b0_1110 {
            self.atomic_broken.next = self.atomic.val()
                & (((self.length_dw.val() != 2)
                    & (self.length_dw.val() != 4)
                    & (self.length_dw.val() != 8))
                    | ((self.length_dw.val() == 4) & self.page_offset.val().get_bit(2))
                    | ((self.length_dw.val() == 8)
                        & (self.page_offset.val().get_bits::<2>(2) != 0)));
        }

        // §2.2.7.1: I/O and Configuration requests are TC0, Attr[1:0] 00b, 1 DW.
        self.io_config_broken.next = (self.io.val() | self.configuration.val())
            & ((self.traffic_class.val() != 0)
                | (self.attributes_low.val() != 0)
                | (self.length_dw.val() != 1)
                | (self.last_be.val() != 0));

        // Table 2-37: SC 000b, UR 001b, RRS 010b, CA 100b; the rest are reserved.
        self.completion_broken.next = self.completion.val()
            & ((self.completion_status.val() == 0b011) | (self.completion_status.val() >= 0b101));

        // TC0 only: INTx 0x20–0x27 (§2.2.8.1), power management 0x14,
        // 0x18, 0x19, 0x1b (§2.2.8.2), errors 0x30, 0x31, 0x33 (§2.2.8.3),
        // Unlock 0x00 (§2.2.8.4), Set_Slot_Power_Limit 0x50 (§2.2.8.5).
        self.message_broken.next = self.message.val()
            & (self.traffic_class.val() != 0)
            & (((self.byte_enables.val() >= 0x20) & (self.byte_enables.val() <= 0x27))
                | (self.byte_enables.val() == 0x14)
                | (self.byte_enables.val() == 0x18)
                | (self.byte_enables.val() == 0x19)
                | (self.byte_enables.val() == 0x1b)
                | (self.byte_enables.val() == 0x30)
                | (self.byte_enables.val() == 0x31)
                | (self.byte_enables.val() == 0x33)
                | (self.byte_enables.val() == 0x00)
                | (self.byte_enables.val() == 0x50));

        self.malformed.next = self.reserved.val()
            | self.memory_broken.val()
            | self.atomic_broken.val()
            | self.io_config_broken.val()
            | self.completion_broken.val()
            | self.message_broken.val();
    }
}
