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

/// Why text is not a routing ID written as lspci writes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BdfParseError {
    /// Not `bb:dd.f` (hex), optionally after a `0000:` domain.
    Malformed,
    /// A device above 1f or a function above 7 (§2.2.6.2).
    OutOfRange,
}

impl fmt::Display for BdfParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BdfParseError::Malformed => {
                "not bus:device.function in hex like lspci (such as 03:00.0)"
            }
            BdfParseError::OutOfRange => {
                "the device is 00-1f and the function 0-7 (PCIe Base 6.0 §2.2.6.2)"
            }
        })
    }
}

/// Reads `bb:dd.f` in hex as lspci prints it, optionally after lspci -D's
/// `0000:` domain (a fabric has one domain), into the conventional fields.
impl core::str::FromStr for Bdf {
    type Err = BdfParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let (head, function) = text.rsplit_once('.').ok_or(BdfParseError::Malformed)?;
        let mut parts = head.rsplit(':');
        let device = parts.next().ok_or(BdfParseError::Malformed)?;
        let bus = parts.next().ok_or(BdfParseError::Malformed)?;
        if let Some(domain) = parts.next() {
            if u32::from_str_radix(domain, 16) != Ok(0) || parts.next().is_some() {
                return Err(BdfParseError::Malformed);
            }
        }
        let hex =
            |digits: &str| u8::from_str_radix(digits, 16).map_err(|_| BdfParseError::Malformed);
        let (bus, device, function) = (hex(bus)?, hex(device)?, hex(function)?);
        if device > 0x1f || function > 7 {
            return Err(BdfParseError::OutOfRange);
        }
        Ok(Bdf::new(bus, device, function))
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
    fn reads_what_lspci_prints() {
        assert_eq!("03:1c.2".parse(), Ok(Bdf::new(0x3, 0x1c, 0x2)));
        assert_eq!("0000:ff:1f.7".parse(), Ok(Bdf::new(0xff, 0x1f, 0x7)));
        assert_eq!(" 3:0.1 ".parse(), Ok(Bdf::new(0x3, 0, 1)));
        assert_eq!("03:20.0".parse::<Bdf>(), Err(BdfParseError::OutOfRange));
        assert_eq!("03:00.8".parse::<Bdf>(), Err(BdfParseError::OutOfRange));
        for bad in [
            "0300",
            "03.00.0",
            "0001:03:00.0",
            "1:2:3:00.0",
            "03:00.x",
            "",
            ":.",
            "103:00.0",
        ] {
            assert_eq!(bad.parse::<Bdf>(), Err(BdfParseError::Malformed), "{bad}");
        }
    }

    #[test]
    fn displays_like_lspci() {
        extern crate std;
        use std::format;
        assert_eq!(format!("{}", Bdf::new(0x3, 0x1c, 0x2)), "03:1c.2");
    }
}
