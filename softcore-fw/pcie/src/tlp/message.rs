//! Message routing r\[2:0\] and message codes (PCIe Base 6.0 §2.2.8).

/// How a Msg/MsgD is routed: the r\[2:0\] subfield of its Type (Table 2-20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageRouting {
    /// 000b: routed to the Root Complex (a switch sends it out its Upstream Port).
    ToRootComplex,
    /// 001b: routed by the address in bytes 8–15, like a memory request.
    ByAddress,
    /// 010b: routed by the ID in bytes 8–9, like a completion.
    ById,
    /// 011b: broadcast from the Root Complex to every Downstream Port.
    BroadcastFromRoot,
    /// 100b: local, terminates at the receiver.
    Local,
    /// 101b: gathered and routed to the Root Complex (only PME_TO_Ack).
    GatheredToRoot,
    /// 110b or 111b: reserved; the receiver terminates it as if Local (§2.3).
    Reserved(u8),
}

impl MessageRouting {
    /// The 3-bit r\[2:0\] value.
    pub const fn bits(self) -> u8 {
        match self {
            Self::ToRootComplex => 0b000,
            Self::ByAddress => 0b001,
            Self::ById => 0b010,
            Self::BroadcastFromRoot => 0b011,
            Self::Local => 0b100,
            Self::GatheredToRoot => 0b101,
            Self::Reserved(bits) => bits & 0b111,
        }
    }

    /// Reads r\[2:0\], ignoring higher bits.
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b111 {
            0b000 => Self::ToRootComplex,
            0b001 => Self::ByAddress,
            0b010 => Self::ById,
            0b011 => Self::BroadcastFromRoot,
            0b100 => Self::Local,
            0b101 => Self::GatheredToRoot,
            other => Self::Reserved(other),
        }
    }
}

/// One of the four legacy interrupt virtual wires (§2.2.8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntxPin {
    /// INTA.
    A,
    /// INTB.
    B,
    /// INTC.
    C,
    /// INTD.
    D,
}

impl IntxPin {
    /// 0 for INTA through 3 for INTD: the low two bits of the Assert/Deassert codes.
    pub const fn index(self) -> u8 {
        match self {
            Self::A => 0,
            Self::B => 1,
            Self::C => 2,
            Self::D => 3,
        }
    }

    /// The pin numbered `index & 3`.
    pub const fn from_index(index: u8) -> Self {
        match index & 0b11 {
            0 => Self::A,
            1 => Self::B,
            2 => Self::C,
            _ => Self::D,
        }
    }
}

/// A Message Code\[7:0\] (§2.2.8), named where weft acts on it.
///
/// Codes weft has no use for keep their value in [`MessageCode::Other`]; the
/// code must be decoded fully (no aliasing), so nothing is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageCode {
    /// Assert_INTx, 0010 00xxb (Table 2-21).
    AssertIntx(IntxPin),
    /// Deassert_INTx, 0010 01xxb (Table 2-21).
    DeassertIntx(IntxPin),
    /// PM_Active_State_Nak, 0001 0100b (Table 2-23).
    PmActiveStateNak,
    /// PM_PME, 0001 1000b (Table 2-23).
    PmPme,
    /// PME_Turn_Off, 0001 1001b (Table 2-23).
    PmeTurnOff,
    /// PME_TO_Ack, 0001 1011b (Table 2-23).
    PmeToAck,
    /// ERR_COR, 0011 0000b (Table 2-24).
    ErrCor,
    /// ERR_NONFATAL, 0011 0001b (Table 2-24).
    ErrNonFatal,
    /// ERR_FATAL, 0011 0011b (Table 2-24).
    ErrFatal,
    /// Unlock, 0000 0000b (Table 2-26).
    Unlock,
    /// Set_Slot_Power_Limit, 0101 0000b, with a 1 DW payload (Table 2-27).
    SetSlotPowerLimit,
    /// Vendor_Defined Type 0, 0111 1110b: unsupported ones are Unsupported Requests (Table 2-28).
    VendorDefinedType0,
    /// Vendor_Defined Type 1, 0111 1111b: unsupported ones are silently discarded (Table 2-28).
    VendorDefinedType1,
    /// Any other code (LTR, OBFF, PTM, ...), kept as its value.
    Other(u8),
}

impl MessageCode {
    /// The 8-bit Message Code.
    pub const fn code(self) -> u8 {
        match self {
            Self::AssertIntx(pin) => 0x20 | pin.index(),
            Self::DeassertIntx(pin) => 0x24 | pin.index(),
            Self::PmActiveStateNak => 0x14,
            Self::PmPme => 0x18,
            Self::PmeTurnOff => 0x19,
            Self::PmeToAck => 0x1b,
            Self::ErrCor => 0x30,
            Self::ErrNonFatal => 0x31,
            Self::ErrFatal => 0x33,
            Self::Unlock => 0x00,
            Self::SetSlotPowerLimit => 0x50,
            Self::VendorDefinedType0 => 0x7e,
            Self::VendorDefinedType1 => 0x7f,
            Self::Other(code) => code,
        }
    }

    /// Names an 8-bit Message Code. `from_code(c).code() == c` for every `c`.
    pub const fn from_code(code: u8) -> Self {
        match code {
            0x20..=0x23 => Self::AssertIntx(IntxPin::from_index(code)),
            0x24..=0x27 => Self::DeassertIntx(IntxPin::from_index(code)),
            0x14 => Self::PmActiveStateNak,
            0x18 => Self::PmPme,
            0x19 => Self::PmeTurnOff,
            0x1b => Self::PmeToAck,
            0x30 => Self::ErrCor,
            0x31 => Self::ErrNonFatal,
            0x33 => Self::ErrFatal,
            0x00 => Self::Unlock,
            0x50 => Self::SetSlotPowerLimit,
            0x7e => Self::VendorDefinedType0,
            0x7f => Self::VendorDefinedType1,
            other => Self::Other(other),
        }
    }

    /// Whether the spec requires this message on TC0 and requires receivers
    /// to treat any other TC as Malformed: INTx (§2.2.8.1), power management
    /// (§2.2.8.2), error signalling (§2.2.8.3), Unlock (§2.2.8.4) and
    /// Set_Slot_Power_Limit (§2.2.8.5).
    pub const fn requires_tc0(self) -> bool {
        !matches!(
            self,
            Self::VendorDefinedType0 | Self::VendorDefinedType1 | Self::Other(_)
        )
    }

    /// The routing the spec assigns to this message, where it assigns exactly one.
    pub const fn defined_routing(self) -> Option<MessageRouting> {
        match self {
            Self::AssertIntx(_)
            | Self::DeassertIntx(_)
            | Self::PmActiveStateNak
            | Self::SetSlotPowerLimit => Some(MessageRouting::Local),
            Self::PmPme | Self::ErrCor | Self::ErrNonFatal | Self::ErrFatal => {
                Some(MessageRouting::ToRootComplex)
            }
            Self::PmeTurnOff | Self::Unlock => Some(MessageRouting::BroadcastFromRoot),
            Self::PmeToAck => Some(MessageRouting::GatheredToRoot),
            Self::VendorDefinedType0 | Self::VendorDefinedType1 | Self::Other(_) => None,
        }
    }

    /// Whether this is a Vendor_Defined message, which carries a Vendor ID in bytes 10–11 (§2.2.8.6).
    pub const fn is_vendor_defined(self) -> bool {
        matches!(self, Self::VendorDefinedType0 | Self::VendorDefinedType1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for code in 0..=u8::MAX {
            assert_eq!(MessageCode::from_code(code).code(), code);
        }
        for bits in 0..8 {
            assert_eq!(MessageRouting::from_bits(bits).bits(), bits);
        }
    }

    #[test]
    fn codes_match_the_spec_tables() {
        // Tables 2-21, 2-23, 2-24, 2-26, 2-27, 2-28 (binary as printed there).
        assert_eq!(MessageCode::AssertIntx(IntxPin::A).code(), 0b0010_0000);
        assert_eq!(MessageCode::AssertIntx(IntxPin::D).code(), 0b0010_0011);
        assert_eq!(MessageCode::DeassertIntx(IntxPin::A).code(), 0b0010_0100);
        assert_eq!(MessageCode::DeassertIntx(IntxPin::D).code(), 0b0010_0111);
        assert_eq!(MessageCode::PmActiveStateNak.code(), 0b0001_0100);
        assert_eq!(MessageCode::PmPme.code(), 0b0001_1000);
        assert_eq!(MessageCode::PmeTurnOff.code(), 0b0001_1001);
        assert_eq!(MessageCode::PmeToAck.code(), 0b0001_1011);
        assert_eq!(MessageCode::ErrCor.code(), 0b0011_0000);
        assert_eq!(MessageCode::ErrNonFatal.code(), 0b0011_0001);
        assert_eq!(MessageCode::ErrFatal.code(), 0b0011_0011);
        assert_eq!(MessageCode::Unlock.code(), 0b0000_0000);
        assert_eq!(MessageCode::SetSlotPowerLimit.code(), 0b0101_0000);
        assert_eq!(MessageCode::VendorDefinedType0.code(), 0b0111_1110);
        assert_eq!(MessageCode::VendorDefinedType1.code(), 0b0111_1111);
    }
}
