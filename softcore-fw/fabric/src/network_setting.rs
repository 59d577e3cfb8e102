//! The management port's network setting — a static IPv4 address, its
//! prefix length and an optional default gateway, or DHCP — as a two-slot
//! record ([`crate::persist`]), so a switch comes back after a power cycle
//! at the address it was given. The firmware stores it in its own span
//! of the configuration flash (`weft_drivers::spi_flash::NETWORK`) when
//! its console's `ip` command changes the setting and applies it at start;
//! the simulator reads it from a board's flash file to know where the
//! firmware will be.
//!
//! Record payload, [`NETWORK_RECORD_VERSION`] 1, magic "WFTN" (after the
//! record header); addresses in network byte order:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | the mode: 0 static, 1 DHCP |
//! | 1 | 4 | the static address (zero for DHCP) |
//! | 5 | 1 | the static prefix length, 0 to 32 (zero for DHCP) |
//! | 6 | 4 | the static default gateway, on the address's subnet and not the address; 0.0.0.0 for none (zero for DHCP) |
//!
//! A payload of another length or mode, a longer prefix, a gateway off the
//! subnet or equal to the address, or DHCP with any other byte set is not
//! a valid record: [`crate::persist::load_saved`] reports it as
//! [`crate::persist::Saved::Corrupt`].

use core::fmt;
use core::net::Ipv4Addr;

use crate::persist::{Record, RECORD_OVERHEAD};

/// The record layout this code writes and reads.
pub const NETWORK_RECORD_VERSION: u16 = 1;

const PAYLOAD_LEN: usize = 10;
const MODE_STATIC: u8 = 0;
const MODE_DHCP: u8 = 1;

/// Where the management port's address comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkSetting {
    /// A fixed address.
    Static(StaticAddress),
    /// A DHCP server's lease (RFC 2131).
    Dhcp,
}

/// A static address, its subnet and the default gateway, checked to make
/// sense together ([`StaticAddress::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticAddress {
    address: Ipv4Addr,
    prefix_len: u8,
    gateway: Option<Ipv4Addr>,
}

/// Why an address, prefix length and gateway are no static setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaticAddressError {
    /// An IPv4 prefix is at most 32 bits long.
    PrefixTooLong(u8),
    /// The gateway is not on the address's subnet, so no ARP reaches it.
    GatewayOffSubnet,
    /// The gateway is the address itself.
    GatewayIsAddress,
    /// 0.0.0.0 is no gateway's address.
    GatewayUnspecified,
}

impl fmt::Display for StaticAddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StaticAddressError::PrefixTooLong(len) => {
                write!(f, "a prefix is at most 32 bits long, not {len}")
            }
            StaticAddressError::GatewayOffSubnet => {
                f.write_str("the gateway must be on the address's subnet")
            }
            StaticAddressError::GatewayIsAddress => {
                f.write_str("the gateway must not be the address itself")
            }
            StaticAddressError::GatewayUnspecified => f.write_str("0.0.0.0 is no gateway"),
        }
    }
}

impl StaticAddress {
    /// `address`/`prefix_len` with `gateway`, if any, as the default route.
    pub const fn new(
        address: Ipv4Addr,
        prefix_len: u8,
        gateway: Option<Ipv4Addr>,
    ) -> Result<Self, StaticAddressError> {
        if prefix_len > 32 {
            return Err(StaticAddressError::PrefixTooLong(prefix_len));
        }
        let mask = match u32::MAX.checked_shl(32 - prefix_len as u32) {
            Some(mask) => mask,
            None => 0,
        };
        let own = u32::from_be_bytes(address.octets());
        if let Some(router) = gateway {
            let router_bits = u32::from_be_bytes(router.octets());
            if router.is_unspecified() {
                return Err(StaticAddressError::GatewayUnspecified);
            }
            if (router_bits ^ own) & mask != 0 {
                return Err(StaticAddressError::GatewayOffSubnet);
            }
            if router_bits == own {
                return Err(StaticAddressError::GatewayIsAddress);
            }
        }
        Ok(StaticAddress {
            address,
            prefix_len,
            gateway,
        })
    }

    /// The address.
    pub fn address(&self) -> Ipv4Addr {
        self.address
    }

    /// The subnet's prefix length, 0 to 32.
    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// The default gateway, if any.
    pub fn gateway(&self) -> Option<Ipv4Addr> {
        self.gateway
    }
}

impl Record for NetworkSetting {
    const MAGIC: u32 = u32::from_le_bytes(*b"WFTN");
    const VERSION: u16 = NETWORK_RECORD_VERSION;
    type Bytes = [u8; RECORD_OVERHEAD + PAYLOAD_LEN];

    fn bytes() -> Self::Bytes {
        [0; RECORD_OVERHEAD + PAYLOAD_LEN]
    }

    fn encode_payload(&self, out: &mut [u8]) -> usize {
        let out = &mut out[..PAYLOAD_LEN];
        out.fill(0);
        match self {
            NetworkSetting::Static(fixed) => {
                out[0] = MODE_STATIC;
                out[1..5].copy_from_slice(&fixed.address.octets());
                out[5] = fixed.prefix_len;
                out[6..10]
                    .copy_from_slice(&fixed.gateway.unwrap_or(Ipv4Addr::UNSPECIFIED).octets());
            }
            NetworkSetting::Dhcp => out[0] = MODE_DHCP,
        }
        PAYLOAD_LEN
    }

    fn decode_payload(payload: &[u8]) -> Option<Self> {
        let payload: &[u8; PAYLOAD_LEN] = payload.try_into().ok()?;
        let address_at = |at: usize| {
            Ipv4Addr::new(
                payload[at],
                payload[at + 1],
                payload[at + 2],
                payload[at + 3],
            )
        };
        match payload[0] {
            MODE_STATIC => {
                let gateway = Some(address_at(6)).filter(|g| !g.is_unspecified());
                StaticAddress::new(address_at(1), payload[5], gateway)
                    .ok()
                    .map(NetworkSetting::Static)
            }
            MODE_DHCP if payload[1..].iter().all(|&b| b == 0) => Some(NetworkSetting::Dhcp),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::memory_flash::MemoryFlash;
    use crate::persist::{crc32, load_saved, save_record, Saved};
    use proptest::prelude::*;

    const SECTOR: u32 = 4096;

    fn erased() -> MemoryFlash<std::vec::Vec<u8>> {
        MemoryFlash::new(std::vec![0xff; 2 * SECTOR as usize], SECTOR)
    }

    fn fixed(address: [u8; 4], prefix_len: u8, gateway: Option<[u8; 4]>) -> NetworkSetting {
        NetworkSetting::Static(
            StaticAddress::new(address.into(), prefix_len, gateway.map(Ipv4Addr::from))
                .expect("a valid setting"),
        )
    }

    /// A sealed record (header, `payload`, CRC) at the start of an erased region.
    fn sealed(payload: &[u8]) -> MemoryFlash<std::vec::Vec<u8>> {
        let mut record = std::vec::Vec::from(*b"WFTN");
        record.extend_from_slice(&1u16.to_le_bytes());
        record.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        record.extend_from_slice(&0u32.to_le_bytes());
        record.extend_from_slice(payload);
        let crc = crc32(&record);
        record.extend_from_slice(&crc.to_le_bytes());
        let mut bytes = std::vec![0xff; 2 * SECTOR as usize];
        bytes[..record.len()].copy_from_slice(&record);
        MemoryFlash::new(bytes, SECTOR)
    }

    #[test]
    fn the_payload_is_laid_out_as_the_module_docs_say() {
        let cases = [
            (
                fixed([10, 0, 0, 2], 24, Some([10, 0, 0, 1])),
                [0, 10, 0, 0, 2, 24, 10, 0, 0, 1],
            ),
            (
                fixed([192, 168, 70, 9], 16, None),
                [0, 192, 168, 70, 9, 16, 0, 0, 0, 0],
            ),
            (NetworkSetting::Dhcp, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        ];
        for (setting, payload) in cases {
            let mut flash = erased();
            save_record(&mut flash, &setting).expect("stored");
            assert_eq!(sealed(&payload).contents()[..26], flash.contents()[..26]);
            assert_eq!(load_saved(&mut flash), Ok(Saved::Record(setting)));
        }
    }

    #[test]
    fn the_gateway_must_be_on_the_subnet_and_not_the_address() {
        let address = Ipv4Addr::new(10, 0, 0, 2);
        assert_eq!(
            StaticAddress::new(address, 24, Some(Ipv4Addr::new(10, 0, 1, 1))),
            Err(StaticAddressError::GatewayOffSubnet)
        );
        assert_eq!(
            StaticAddress::new(address, 24, Some(address)),
            Err(StaticAddressError::GatewayIsAddress)
        );
        assert_eq!(
            StaticAddress::new(address, 0, Some(Ipv4Addr::UNSPECIFIED)),
            Err(StaticAddressError::GatewayUnspecified)
        );
        assert_eq!(
            StaticAddress::new(address, 33, None),
            Err(StaticAddressError::PrefixTooLong(33))
        );
        // A /0 subnet holds every address; a /32 only the address itself.
        assert!(StaticAddress::new(address, 0, Some(Ipv4Addr::new(192, 0, 2, 1))).is_ok());
        assert_eq!(
            StaticAddress::new(address, 32, Some(Ipv4Addr::new(10, 0, 0, 3))),
            Err(StaticAddressError::GatewayOffSubnet)
        );
        assert!(StaticAddress::new(address, 23, Some(Ipv4Addr::new(10, 0, 1, 254))).is_ok());
    }

    #[test]
    fn a_sealed_record_with_an_impossible_setting_is_corrupt() {
        for payload in [
            [0, 10, 0, 0, 2, 33, 0, 0, 0, 0],
            [0, 10, 0, 0, 2, 24, 10, 0, 1, 1],
            [0, 10, 0, 0, 2, 24, 10, 0, 0, 2],
            [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [1, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        ] {
            assert_eq!(
                load_saved::<NetworkSetting, _>(&mut sealed(&payload)),
                Ok(Saved::Corrupt),
                "{payload:?}"
            );
        }
        assert_eq!(
            load_saved::<NetworkSetting, _>(&mut sealed(&[0, 10, 0, 0, 2, 24, 0, 0, 0])),
            Ok(Saved::Corrupt),
            "a payload a byte short"
        );
        assert_eq!(
            load_saved::<NetworkSetting, _>(&mut erased()),
            Ok(Saved::Empty)
        );
    }

    proptest! {
        #[test]
        fn every_setting_reads_back_as_stored(
            address: u32,
            prefix_len in 0u8..=32,
            host: u32,
            with_gateway: bool,
            dhcp: bool,
        ) {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix_len)).unwrap_or(0);
            let gateway = Ipv4Addr::from((address & mask) | (host & !mask));
            let setting = match StaticAddress::new(
                address.into(),
                prefix_len,
                with_gateway.then_some(gateway),
            ) {
                _ if dhcp => NetworkSetting::Dhcp,
                Ok(fixed) => NetworkSetting::Static(fixed),
                // The generated gateway is on the subnet: only these can be wrong.
                Err(error) => {
                    prop_assert!(matches!(
                        error,
                        StaticAddressError::GatewayIsAddress
                            | StaticAddressError::GatewayUnspecified
                    ));
                    return Ok(());
                }
            };
            let mut flash = erased();
            save_record(&mut flash, &setting).expect("stored");
            save_record(&mut flash, &setting).expect("stored again, in the other slot");
            prop_assert_eq!(load_saved(&mut flash), Ok(Saved::Record(setting)));
        }
    }
}
