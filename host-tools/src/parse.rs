//! What an operator types, read into the protocol's values: fabric IDs as
//! lspci writes them, numbers in decimal or hex, and switch addresses.
//!
//! Each function returns a `String` error that says what was expected, so
//! that clap can print it next to the argument's name.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use weft_pcie::{Bdf, BdfParseError};
use weft_proto::{FabricId, MANAGEMENT_UDP_PORT};

/// A fabric ID written as `bb:dd.f` (as lspci prints it, hexadecimal bus and
/// device, function 0–7), optionally after a `0000:` domain, or as a 16-bit
/// routing ID in hex (`0x0300` or `0300`).
pub fn fabric_id(text: &str) -> Result<FabricId, String> {
    let text = text.trim();
    let wanted = || {
        format!(
            "`{text}` is not a fabric ID: write it as bus:device.function in hex like lspci \
             (`03:00.0`), or as a 16-bit hex routing ID (`0x0300`)"
        )
    };
    if !text.contains(':') && !text.contains('.') {
        let digits = text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .unwrap_or(text);
        return u16::from_str_radix(digits, 16)
            .map(FabricId)
            .map_err(|_| wanted());
    }
    match text.parse::<Bdf>() {
        Ok(id) => Ok(FabricId::from(id)),
        Err(BdfParseError::OutOfRange) => Err(format!(
            "`{text}` is out of range: the device is 00–1f and the function 0–7 (PCIe Base 6.0 \
             §2.2.6.2)"
        )),
        Err(BdfParseError::Malformed) => Err(wanted()),
    }
}

/// A fabric ID as `bb:dd.f`.
pub fn show_fabric_id(id: FabricId) -> String {
    Bdf::from(id).to_string()
}

/// An unsigned number in decimal, or in hex after `0x`.
pub fn number(text: &str) -> Result<u64, String> {
    let text = text.trim().replace('_', "");
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("`{text}` is not a number (decimal, or hex after 0x)"))
}

/// A number that must fit the unsigned integer `T` (u8, u16, u32), in
/// decimal or hex.
pub fn bounded<T: TryFrom<u64>>(text: &str) -> Result<T, String> {
    let value = number(text)?;
    T::try_from(value).map_err(|_| {
        let bits = 8 * std::mem::size_of::<T>() as u32;
        let max = u64::MAX >> (64 - bits.min(64));
        format!("{value} is too large here (at most {max})")
    })
}

/// A switch address: `host:port`, `host` alone (port 7330), an IPv4
/// address, or an IPv6 address in brackets with a port.
pub fn switch_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, MANAGEMENT_UDP_PORT));
    }
    let resolved = if text.contains(':') {
        text.to_socket_addrs()
    } else {
        (text, MANAGEMENT_UDP_PORT).to_socket_addrs()
    };
    let mut addrs = resolved.map_err(|e| {
        format!(
            "cannot resolve switch address `{text}` ({e}); write it as host:port or an IP address"
        )
    })?;
    let all: Vec<SocketAddr> = addrs.by_ref().collect();
    all.iter()
        .find(|a| a.is_ipv4())
        .or_else(|| all.first())
        .copied()
        .ok_or_else(|| format!("switch address `{text}` resolves to no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lspci_notation_is_bus_device_function_in_hex() {
        // PCIe Base 6.0 §2.2.6.2: Bus[15:8] Device[7:3] Function[2:0].
        assert_eq!(fabric_id("03:00.0"), Ok(FabricId(0x0300)));
        assert_eq!(fabric_id("3a:1f.7"), Ok(FabricId(0x3aff)));
        assert_eq!(fabric_id("0000:03:00.1"), Ok(FabricId(0x0301)));
        assert_eq!(show_fabric_id(FabricId(0x3aff)), "3a:1f.7");
    }

    #[test]
    fn a_bare_number_is_a_hex_routing_id() {
        assert_eq!(fabric_id("0x0300"), Ok(FabricId(0x0300)));
        assert_eq!(fabric_id("300"), Ok(FabricId(0x0300)));
    }

    #[test]
    fn bad_fabric_ids_say_how_to_write_one() {
        for bad in ["03:20.0", "03:00.8", "zz:00.0", "1:03:00.0", "0x10000", ""] {
            let error = fabric_id(bad).expect_err(bad);
            assert!(
                error.contains("03:00.0") || error.contains("00–1f"),
                "{error}"
            );
        }
    }

    #[test]
    fn numbers_take_decimal_or_prefixed_hex() {
        assert_eq!(number("42"), Ok(42));
        assert_eq!(number("0x2a"), Ok(42));
        assert_eq!(number("0x5745_4654_0001"), Ok(0x5745_4654_0001));
        assert!(number("2a").is_err());
        assert_eq!(bounded::<u8>("255"), Ok(255u8));
        let error = bounded::<u8>("256").expect_err("too large");
        assert!(error.contains("at most 255"), "{error}");
    }

    #[test]
    fn an_address_without_a_port_gets_the_management_port() {
        assert_eq!(
            switch_addr("127.0.0.1"),
            Ok(SocketAddr::from(([127, 0, 0, 1], MANAGEMENT_UDP_PORT)))
        );
        assert_eq!(
            switch_addr("127.0.0.1:9000"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 9000)))
        );
        assert_eq!(
            switch_addr("[::1]:9000"),
            Ok("[::1]:9000".parse().expect("valid"))
        );
    }
}
