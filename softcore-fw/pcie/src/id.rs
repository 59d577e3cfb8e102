//! Routing IDs: bus, device and function numbers (PCIe Base 6.0 §2.2.4.2, §2.2.6.2).

use core::fmt;

/// A 16-bit routing ID (requester ID, completer ID or configuration target).
///
/// The conventional interpretation is bus\[15:8\], device\[7:3\],
/// function\[2:0\]. Under Alternative Routing-ID Interpretation (ARI,
/// PCIe Base 6.0 §6.13) the device number is absent and the function number
/// is 8 bits wide; [`Bdf::ari_function`] reads it that way. The 16-bit value
/// is the same either way, so routing never needs to know which applies.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bdf(pub u16);

impl Bdf {
    /// Builds an ID from its conventional parts.
    ///
    /// Device numbers wider than 5 bits and function numbers wider than 3
    /// bits are truncated to their field, as the hardware field would.
    pub const fn new(bus: u8, device: u8, function: u8) -> Self {
        Bdf(((bus as u16) << 8) | (((device & 0x1f) as u16) << 3) | ((function & 0x7) as u16))
    }

    /// Builds an ARI ID: an 8-bit function number on a bus (§6.13).
    pub const fn new_ari(bus: u8, function: u8) -> Self {
        Bdf(((bus as u16) << 8) | function as u16)
    }

    /// The bus number, bits \[15:8\].
    pub const fn bus(self) -> u8 {
        (self.0 >> 8) as u8
    }

    /// The device number, bits \[7:3\] (conventional interpretation).
    pub const fn device(self) -> u8 {
        ((self.0 >> 3) & 0x1f) as u8
    }

    /// The function number, bits \[2:0\] (conventional interpretation).
    pub const fn function(self) -> u8 {
        (self.0 & 0x7) as u8
    }

    /// The function number under ARI, bits \[7:0\] (§6.13).
    pub const fn ari_function(self) -> u8 {
        self.0 as u8
    }
}

/// Prints `bb:dd.f` as lspci does.
impl fmt::Display for Bdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02x}:{:02x}.{:x}",
            self.bus(),
            self.device(),
            self.function()
        )
    }
}

impl fmt::Debug for Bdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bdf({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventional_fields_sit_where_the_spec_puts_them() {
        // §2.2.6.2: Bus Number [15:8], Device Number [7:3], Function Number [2:0].
        let id = Bdf::new(0x3a, 0x1f, 0x5);
        assert_eq!(id.0, 0x3afd);
        assert_eq!((id.bus(), id.device(), id.function()), (0x3a, 0x1f, 0x5));
    }

    #[test]
    fn ari_function_spans_the_device_field() {
        let id = Bdf::new_ari(0x02, 0x81);
        assert_eq!(id.0, 0x0281);
        assert_eq!(id.ari_function(), 0x81);
        assert_eq!((id.device(), id.function()), (0x10, 0x1));
    }

    #[test]
    fn displays_like_lspci() {
        extern crate std;
        use std::format;
        assert_eq!(format!("{}", Bdf::new(0x3, 0x1c, 0x2)), "03:1c.2");
    }
}
