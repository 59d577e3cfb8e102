//! Header decode: a TLP's four header DWs into the fields the data plane acts on.
//!
//! This is the first stage of every ingress port. It is purely
//! combinational: the header DWs of the TLP at the head of the stream go
//! in, and out come the format, type, class and routing fields, each as its
//! own signal of at most 32 bits (rust-hdl computes on those in machine
//! words; see DESIGN.md). Field positions follow PCIe Base 6.0 §2.2.1
//! (common header), §2.2.4 (address), §2.2.6.2 (IDs and tags) and §2.2.9
//! (completions); the tests hold every slice to `weft_pcie::tlp`.

use rust_hdl::prelude::*;

use crate::switching::{CLASS_COMPLETION, CLASS_NON_POSTED, CLASS_POSTED};

/// Bits of a TLP's length on the wire in bytes: at most 4096 bytes of
/// payload (Length 1024 DW, PCIe Base 6.0 §2.2.1), a 4 DW header, a
/// digest and a few prefix DWs (§2.2.10) stay below 2^13.
pub const WIRE_BYTES_BITS: usize = 13;

// `flow_class` is built from these codes as literals.
const _: () = assert!(CLASS_POSTED == 0 && CLASS_NON_POSTED == 1 && CLASS_COMPLETION == 2);

/// Decodes one TLP header, presented as four big-endian DWs (DW0 first).
///
/// Classification follows the Fmt/Type table (§2.2.1, Table 2-3) and the
/// ordering classes of §2.4.1: memory writes and messages are posted;
/// completions are completions; every other request is non-posted.
/// Encodings the table reserves, and Fmt/Type pairs it does not list,
/// raise `reserved` and no class.
#[derive(LogicBlock, Default)]
pub struct HeaderDecoder {
    /// Header DW0: Fmt, Type, TC, attributes, TD, EP, AT, Length.
    pub dw0: Signal<In, Bits<32>>,
    /// Header DW1: requester or completer ID, tag, byte enables or status and byte count.
    pub dw1: Signal<In, Bits<32>>,
    /// Header DW2: address\[31:2\] (3 DW), address\[63:32\] (4 DW), or requester ID and tag.
    pub dw2: Signal<In, Bits<32>>,
    /// Header DW3: address\[31:2\] of a 4 DW request.
    pub dw3: Signal<In, Bits<32>>,
    /// Fmt\[2:0\] (§2.2.1).
    pub fmt: Signal<Out, Bits<3>>,
    /// Type\[4:0\] (§2.2.1).
    pub tlp_type: Signal<Out, Bits<5>>,
    /// Traffic class (§2.2.6.6).
    pub traffic_class: Signal<Out, Bits<3>>,
    /// Attr\[2\] (ID-Based Ordering), Attr\[1\] (Relaxed Ordering), Attr\[0\] (No Snoop), §2.2.6.3.
    pub attributes: Signal<Out, Bits<3>>,
    /// Address Type (§2.2.4.1, §10.2.2): untranslated, translation request, translated.
    pub address_type: Signal<Out, Bits<2>>,
    /// Lightweight Notification (LN, §2.2.1) and TLP Processing Hints present (TH, §2.2.7.1).
    pub hints: Signal<Out, Bits<2>>,
    /// TLP Digest present (§2.2.1).
    pub digest: Signal<Out, Bit>,
    /// Poisoned (§2.7.2).
    pub poisoned: Signal<Out, Bit>,
    /// Payload length in DW, with the encoding 0 read as 1024 (§2.2.1).
    pub length_dw: Signal<Out, Bits<11>>,
    /// The header is 4 DW long (Fmt\[0\]).
    pub four_dw: Signal<Out, Bit>,
    /// The TLP carries a payload (Fmt\[1\]).
    pub has_data: Signal<Out, Bit>,
    /// DW0 is a TLP prefix, not a header (Fmt = 100b, §2.2.10).
    pub prefix: Signal<Out, Bit>,
    /// A memory request (read, read-locked, write, AtomicOp, deferrable write).
    pub memory: Signal<Out, Bit>,
    /// An I/O request.
    pub io: Signal<Out, Bit>,
    /// A configuration request (Type 0 or 1).
    pub configuration: Signal<Out, Bit>,
    /// A completion (Cpl, CplD, CplLk, CplDLk).
    pub completion: Signal<Out, Bit>,
    /// A message (Msg, MsgD).
    pub message: Signal<Out, Bit>,
    /// Ordering/flow-control class: posted (§2.4.1).
    pub posted: Signal<Out, Bit>,
    /// Ordering/flow-control class: non-posted (§2.4.1).
    pub non_posted: Signal<Out, Bit>,
    /// The class as the switching core's code: `CLASS_POSTED`,
    /// `CLASS_NON_POSTED`, else `CLASS_COMPLETION` (of [`crate::switching`]).
    pub flow_class: Signal<Out, Bits<2>>,
    /// The TLP's bytes on the wire without prefixes: header, payload (if
    /// Fmt says data) and digest (TD), as weft-pcie's `Header::total_len`.
    pub wire_bytes: Signal<Out, Bits<WIRE_BYTES_BITS>>,
    /// The Fmt/Type pair is reserved or unlisted: the TLP is malformed (§2.3.1).
    pub reserved: Signal<Out, Bit>,
    /// Requester ID of a request; completer ID of a completion (DW1\[31:16\]).
    pub dw1_id: Signal<Out, Bits<16>>,
    /// Requester ID carried by a completion (DW2\[31:16\]).
    pub completion_requester_id: Signal<Out, Bits<16>>,
    /// The 10-bit tag: T9 and T8 from DW0, T7..T0 from DW1 (requests) or DW2
    /// (completions), §2.2.6.2. Posted requests have Tag\[9:8\] Reserved; they
    /// come out as received, for the egress to forward unmodified.
    pub tag: Signal<Out, Bits<10>>,
    /// First DW and last DW byte enables, DW1\[3:0\] and \[7:4\] of a request (§2.2.5).
    pub byte_enables: Signal<Out, Bits<8>>,
    /// Processing Hint, address\[1:0\] of a memory request with TH set (§2.2.7.1).
    pub processing_hint: Signal<Out, Bits<2>>,
    /// Routing subfield r\[2:0\] of a message (Type\[2:0\], §2.2.8).
    pub message_routing: Signal<Out, Bits<3>>,
    /// Address\[63:32\]: DW2 of a 4 DW request, zero for 3 DW.
    pub address_high: Signal<Out, Bits<32>>,
    /// Address\[31:0\] with bits \[1:0\] zero: DW2 (3 DW) or DW3 (4 DW) of a request.
    pub address_low: Signal<Out, Bits<32>>,
    /// Header and digest bytes: 12, 4 more for a 4 DW header, 4 more for TD.
    overhead_bytes: Signal<Local, Bits<WIRE_BYTES_BITS>>,
}

impl Logic for HeaderDecoder {
    #[hdl_gen]
    fn update(&mut self) {
        // §2.2.1: DW0 = Fmt[31:29] Type[28:24] T9[23] TC[22:20] T8[19]
        // Attr[2][18] LN[17] TH[16] TD[15] EP[14] Attr[1:0][13:12] AT[11:10] Length[9:0].
        self.fmt.next = self.dw0.val().get_bits::<3>(29);
        self.tlp_type.next = self.dw0.val().get_bits::<5>(24);
        self.traffic_class.next = self.dw0.val().get_bits::<3>(20);
        self.attributes.next = (bit_cast::<3, 1>(self.dw0.val().get_bits::<1>(18)) << 2)
            | bit_cast::<3, 2>(self.dw0.val().get_bits::<2>(12));
        self.address_type.next = self.dw0.val().get_bits::<2>(10);
        self.hints.next = self.dw0.val().get_bits::<2>(16);
        self.digest.next = self.dw0.val().get_bit(15);
        self.poisoned.next = self.dw0.val().get_bit(14);
        self.length_dw.next = bit_cast::<11, 10>(self.dw0.val().get_bits::<10>(0));
        if self.dw0.val().get_bits::<10>(0) == 0 {
            self.length_dw.next = bits::<11>(1024);
        }
        self.four_dw.next = self.dw0.val().get_bit(29);
        self.has_data.next = self.dw0.val().get_bit(30);
        self.prefix.next = self.dw0.val().get_bits::<3>(29) == 4;
        self.message_routing.next = self.dw0.val().get_bits::<3>(24);

        // Table 2-3: which Type values each Fmt may carry.
        // MRd/MWr 0_0000 (any 3/4 DW Fmt), MRdLk 0_0001 (no data),
        // FetchAdd/Swap/CAS 0_1100..0_1110 and DMWr 1_1011 (with data).
        self.memory.next = ((self.dw0.val().get_bits::<5>(24) == 0)
            & (self.dw0.val().get_bits::<3>(29) != 4)
            & !self.dw0.val().get_bit(31))
            | ((self.dw0.val().get_bits::<5>(24) == 1) & (self.dw0.val().get_bits::<2>(30) == 0))
            | ((self.dw0.val().get_bits::<5>(24) >= 12)
                & (self.dw0.val().get_bits::<5>(24) <= 14)
                & (self.dw0.val().get_bits::<2>(30) == 1))
            | ((self.dw0.val().get_bits::<5>(24) == 27) & (self.dw0.val().get_bits::<2>(30) == 1));
        // IORd/IOWr 0_0010, CfgRd0/CfgWr0 0_0100, CfgRd1/CfgWr1 0_0101: 3 DW only.
        self.io.next = (self.dw0.val().get_bits::<5>(24) == 2)
            & !self.dw0.val().get_bit(31)
            & !self.dw0.val().get_bit(29);
        self.configuration.next = ((self.dw0.val().get_bits::<5>(24) == 4)
            | (self.dw0.val().get_bits::<5>(24) == 5))
            & !self.dw0.val().get_bit(31)
            & !self.dw0.val().get_bit(29);
        // Cpl/CplD 0_1010, CplLk/CplDLk 0_1011: 3 DW only.
        self.completion.next = ((self.dw0.val().get_bits::<5>(24) == 10)
            | (self.dw0.val().get_bits::<5>(24) == 11))
            & !self.dw0.val().get_bit(31)
            & !self.dw0.val().get_bit(29);
        // Msg/MsgD 1_0rrr: always 4 DW. Routing r = 110b and 111b are
        // reserved but still messages, terminated at the receiver (§2.2.8, Table 2-20).
        self.message.next = (self.dw0.val().get_bits::<2>(27) == 2)
            & !self.dw0.val().get_bit(31)
            & self.dw0.val().get_bit(29);

        // §2.4.1: posted = memory writes (MWr, not AtomicOps or DMWr) and messages.
        self.posted.next = ((self.dw0.val().get_bits::<5>(24) == 0)
            & (self.dw0.val().get_bits::<2>(30) == 1))
            | self.message.val();
        self.non_posted.next =
            (self.memory.val() | self.io.val() | self.configuration.val()) & !self.posted.val();
        self.flow_class.next = bits::<2>(2);
        if self.posted.val() {
            self.flow_class.next = bits::<2>(0);
        }
        if self.non_posted.val() {
            self.flow_class.next = bits::<2>(1);
        }
        self.reserved.next = !(self.memory.val()
            | self.io.val()
            | self.configuration.val()
            | self.completion.val()
            | self.message.val()
            | self.prefix.val());

        // §2.2.1: the header, the payload if Fmt says data, the digest if TD.
        self.overhead_bytes.next = bits::<WIRE_BYTES_BITS>(12)
            + (bit_cast::<WIRE_BYTES_BITS, 1>(self.dw0.val().get_bits::<1>(29)) << 2)
            + (bit_cast::<WIRE_BYTES_BITS, 1>(self.dw0.val().get_bits::<1>(15)) << 2);
        self.wire_bytes.next = self.overhead_bytes.val();
        if self.dw0.val().get_bit(30) {
            self.wire_bytes.next = self.overhead_bytes.val()
                + (bit_cast::<WIRE_BYTES_BITS, 11>(self.length_dw.val()) << 2);
        }

        // §2.2.6.2 / §2.2.9: IDs and the 10-bit tag.
        self.dw1_id.next = self.dw1.val().get_bits::<16>(16);
        self.byte_enables.next = self.dw1.val().get_bits::<8>(0);
        self.completion_requester_id.next = self.dw2.val().get_bits::<16>(16);
        self.tag.next = (bit_cast::<10, 1>(self.dw0.val().get_bits::<1>(23)) << 9)
            | (bit_cast::<10, 1>(self.dw0.val().get_bits::<1>(19)) << 8)
            | bit_cast::<10, 8>(self.dw1.val().get_bits::<8>(8));
        if self.completion.val() {
            self.tag.next = (bit_cast::<10, 1>(self.dw0.val().get_bits::<1>(23)) << 9)
                | (bit_cast::<10, 1>(self.dw0.val().get_bits::<1>(19)) << 8)
                | bit_cast::<10, 8>(self.dw2.val().get_bits::<8>(8));
        }

        // §2.2.4.1: a 4 DW header carries address[63:32] in DW2 and [31:2] in DW3.
        self.address_high.next = bits::<32>(0);
        self.address_low.next = bit_cast::<32, 30>(self.dw2.val().get_bits::<30>(2)) << 2;
        self.processing_hint.next = self.dw2.val().get_bits::<2>(0);
        if self.dw0.val().get_bit(29) {
            self.address_high.next = self.dw2.val();
            self.address_low.next = bit_cast::<32, 30>(self.dw3.val().get_bits::<30>(2)) << 2;
            self.processing_hint.next = self.dw3.val().get_bits::<2>(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::settle;

    /// Decodes one header and returns the settled decoder.
    fn decode(dws: [u32; 4]) -> HeaderDecoder {
        let mut decoder = HeaderDecoder::default();
        decoder.connect_all();
        decoder.dw0.next = u64::from(dws[0]).into();
        decoder.dw1.next = u64::from(dws[1]).into();
        decoder.dw2.next = u64::from(dws[2]).into();
        decoder.dw3.next = u64::from(dws[3]).into();
        settle(&mut decoder).expect("the decoder is combinational");
        decoder
    }

    /// The class flags as (memory, io, configuration, completion, message, posted, non_posted, reserved).
    fn classes(d: &HeaderDecoder) -> [bool; 8] {
        [
            d.memory.val(),
            d.io.val(),
            d.configuration.val(),
            d.completion.val(),
            d.message.val(),
            d.posted.val(),
            d.non_posted.val(),
            d.reserved.val(),
        ]
    }

    #[test]
    fn memory_write_with_64_bit_address() {
        // §2.2.1: Fmt 011b (4 DW, data), Type 0_0000b → byte 0 = 0110_0000b = 0x60;
        // TC 0, no attributes, Length 0x040 (64 DW).
        // DW1: requester 01:00.0 = 0x0100, tag 0x2a, last BE 0xF, first BE 0xF.
        // DW2/DW3: address 0x1_2000_0000.
        let d = decode([0x6000_0040, 0x0100_2aff, 0x0000_0001, 0x2000_0000]);
        assert_eq!(
            classes(&d),
            [true, false, false, false, false, true, false, false]
        );
        assert_eq!(d.fmt.val().to_u64(), 0b011);
        assert!(d.four_dw.val() && d.has_data.val());
        assert_eq!(d.length_dw.val().to_u64(), 64);
        assert_eq!(d.dw1_id.val().to_u64(), 0x0100);
        assert_eq!(d.tag.val().to_u64(), 0x2a);
        assert_eq!(d.byte_enables.val().to_u64(), 0xff);
        assert_eq!(d.address_high.val().to_u64(), 0x1);
        assert_eq!(d.address_low.val().to_u64(), 0x2000_0000);
    }

    #[test]
    fn memory_read_with_ten_bit_tag_and_processing_hint() {
        // DW0: Fmt 000b Type 0_0000b, T9 (bit 23) set, TH (bit 16) set, Attr[2] IDO (bit 18),
        // RO (bit 13), TC 5 (bits 22:20), Length 1 → 0x00d5_2001.
        // DW1: requester 02:01.0 = 0x0208, tag[7:0] 0x55, last BE 0, first BE 0xF.
        // DW2: address 0xfeed_0000 with PH 01b in bits [1:0].
        let d = decode([0x00d5_2001, 0x0208_550f, 0xfeed_0001, 0]);
        assert_eq!(
            classes(&d),
            [true, false, false, false, false, false, true, false]
        );
        assert_eq!(d.tag.val().to_u64(), 0x255);
        assert_eq!(d.traffic_class.val().to_u64(), 5);
        assert_eq!(d.attributes.val().to_u64(), 0b110, "IDO and RO, not NS");
        assert_eq!(d.hints.val().to_u64(), 0b01, "TH set, LN clear");
        assert_eq!(d.address_high.val().to_u64(), 0);
        assert_eq!(d.address_low.val().to_u64(), 0xfeed_0000);
        assert_eq!(d.processing_hint.val().to_u64(), 0b01);
        assert!(!d.four_dw.val() && !d.has_data.val());
    }

    #[test]
    fn completion_with_data_takes_requester_and_tag_from_dw2() {
        // §2.2.9: CplD = Fmt 010b Type 0_1010b → 0x4a; Length 1; T8 (bit 19) set.
        // DW1: completer 03:00.0 = 0x0300, status SC, byte count 4.
        // DW2: requester 01:00.0 = 0x0100, tag[7:0] 0x7f, lower address 0x10.
        let d = decode([0x4a08_0001, 0x0300_0004, 0x0100_7f10, 0]);
        assert_eq!(
            classes(&d),
            [false, false, false, true, false, false, false, false]
        );
        assert_eq!(d.dw1_id.val().to_u64(), 0x0300);
        assert_eq!(d.completion_requester_id.val().to_u64(), 0x0100);
        assert_eq!(d.tag.val().to_u64(), 0x17f);
    }

    #[test]
    fn messages_are_posted_and_carry_their_routing() {
        // ERR_FATAL: Msg, Fmt 001b Type 1_0000b (route to root complex) → 0x30.
        let d = decode([0x3000_0000, 0x0100_0033, 0, 0]);
        assert_eq!(
            classes(&d),
            [false, false, false, false, true, true, false, false]
        );
        assert_eq!(d.message_routing.val().to_u64(), 0b000);
        // Vendor_Defined Type 1 routed by ID: MsgD, Fmt 011b Type 1_0010b → 0x72.
        let d = decode([0x7200_0002, 0x0100_007f, 0x0300_1ab4, 0]);
        assert_eq!(
            classes(&d),
            [false, false, false, false, true, true, false, false]
        );
        assert_eq!(d.message_routing.val().to_u64(), 0b010);
        // Routing 110b is reserved, yet the TLP is a message that its receiver terminates.
        let d = decode([0x3600_0000, 0, 0, 0]);
        assert_eq!(
            classes(&d),
            [false, false, false, false, true, true, false, false]
        );
    }

    #[test]
    fn configuration_io_and_atomics_are_non_posted() {
        // CfgRd0: Fmt 000b Type 0_0100b → 0x04.
        let d = decode([0x0400_0001, 0x0000_010f, 0x0100_0010, 0]);
        assert_eq!(
            classes(&d),
            [false, false, true, false, false, false, true, false]
        );
        // IOWr: Fmt 010b Type 0_0010b → 0x42.
        let d = decode([0x4200_0001, 0x0000_010f, 0x0000_0cf8, 0]);
        assert_eq!(
            classes(&d),
            [false, true, false, false, false, false, true, false]
        );
        // FetchAdd, 4 DW: Fmt 011b Type 0_1100b → 0x6c.
        let d = decode([0x6c00_0002, 0x0000_01ff, 0x0000_0001, 0x0000_0008]);
        assert_eq!(
            classes(&d),
            [true, false, false, false, false, false, true, false]
        );
    }

    #[test]
    fn length_zero_encodes_1024_dw() {
        // §2.2.1: Length 00_0000_0000b means 1024 DW.
        let d = decode([0x4000_0000, 0x0000_00ff, 0x0000_1000, 0]);
        assert_eq!(d.length_dw.val().to_u64(), 1024);
    }

    #[test]
    fn prefixes_are_recognised() {
        // §2.2.10: Fmt 100b marks a TLP prefix (here a local prefix, Type 0_0000b).
        let d = decode([0x8000_0000, 0, 0, 0]);
        assert!(d.prefix.val());
        assert!(!d.reserved.val());
    }

    #[test]
    fn reserved_encodings_have_no_class() {
        for (dw0, why) in [
            (0x0300_0001, "Type 0_0011b is reserved"),
            (0xa000_0001, "Fmt 101b is reserved"),
            (0x2200_0001, "I/O requests have no 4 DW form"),
            (0x2a00_0000, "completions have no 4 DW form"),
            (0x4100_0001, "MRdLk carries no data"),
            (0x0c00_0001, "AtomicOps carry data"),
        ] {
            let d = decode([dw0, 0, 0, 0]);
            assert_eq!(
                classes(&d),
                [false, false, false, false, false, false, false, true],
                "{why}"
            );
        }
    }
}
