//! The management port's network setting — a static address, prefix and
//! optional default gateway, or DHCP ([`AddressMode`]) — kept in flash
//! ([`crate::flash::NETWORK_REGION`]) as a weft-fabric two-slot record, so
//! a switch comes back after a power cycle at the address it was given
//! rather than at the default.
//!
//! The console's `ip` command stores the record each time it changes the
//! setting (one 4 KiB sector erase at a person's typing speed, so wear is
//! no concern), and the firmware reads it once at start. A region that was
//! never written (a new board, erased flash) leaves weft-proto's default
//! address; so does a damaged record (a torn write, flash wear, a layout
//! this firmware does not read), which the console reports: the port stays
//! reachable at the known default rather than at none.
//!
//! Record payload, [`NETWORK_RECORD_VERSION`] 1, magic "WFTN" (after
//! weft-fabric's record header); addresses in network byte order:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | the mode: 0 static, 1 DHCP |
//! | 1 | 4 | the static address (zero for DHCP) |
//! | 5 | 1 | the static prefix length, 0 to 32 (zero for DHCP) |
//! | 6 | 4 | the static default gateway, on the address's subnet; 0.0.0.0 for none (zero for DHCP) |
//!
//! A payload of another length, another mode, a longer prefix, a gateway
//! off the subnet, or DHCP with any other byte set is not a valid record.

use smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use weft_fabric::persist::{self, Flash, PersistError, Record, Saved, RECORD_OVERHEAD};

use crate::addressing::AddressMode;

/// The record layout this code writes and reads.
pub const NETWORK_RECORD_VERSION: u16 = 1;

const PAYLOAD_LEN: usize = 10;
const MODE_STATIC: u8 = 0;
const MODE_DHCP: u8 = 1;

/// The address mode as stored.
struct NetworkRecord(AddressMode);

impl Record for NetworkRecord {
    const MAGIC: u32 = u32::from_le_bytes(*b"WFTN");
    const VERSION: u16 = NETWORK_RECORD_VERSION;
    type Bytes = [u8; RECORD_OVERHEAD + PAYLOAD_LEN];

    fn bytes() -> Self::Bytes {
        [0; RECORD_OVERHEAD + PAYLOAD_LEN]
    }

    fn encode_payload(&self, out: &mut [u8]) -> usize {
        let out = &mut out[..PAYLOAD_LEN];
        out.fill(0);
        match self.0 {
            AddressMode::Static { address, gateway } => {
                out[0] = MODE_STATIC;
                out[1..5].copy_from_slice(&address.address().octets());
                out[5] = address.prefix_len();
                out[6..10].copy_from_slice(&gateway.unwrap_or(Ipv4Address::UNSPECIFIED).octets());
            }
            AddressMode::Dhcp => out[0] = MODE_DHCP,
        }
        PAYLOAD_LEN
    }

    fn decode_payload(payload: &[u8]) -> Option<Self> {
        let payload: &[u8; PAYLOAD_LEN] = payload.try_into().ok()?;
        let address_at = |at: usize| {
            Ipv4Address::new(
                payload[at],
                payload[at + 1],
                payload[at + 2],
                payload[at + 3],
            )
        };
        match payload[0] {
            MODE_STATIC if payload[5] <= 32 => {
                let address = Ipv4Cidr::new(address_at(1), payload[5]);
                let gateway = Some(address_at(6)).filter(|g| !g.is_unspecified());
                AddressMode::fixed(address, gateway).map(NetworkRecord)
            }
            MODE_DHCP if payload[1..].iter().all(|&b| b == 0) => {
                Some(NetworkRecord(AddressMode::Dhcp))
            }
            _ => None,
        }
    }
}

/// The stored address mode, or whether none was ever stored or only a damaged one.
pub fn load<F: Flash>(flash: &mut F) -> Result<Saved<AddressMode>, PersistError> {
    Ok(match persist::load_saved::<NetworkRecord, F>(flash)? {
        Saved::Record(NetworkRecord(mode)) => Saved::Record(mode),
        Saved::Empty => Saved::Empty,
        Saved::Corrupt => Saved::Corrupt,
    })
}

/// Stores `mode` for the next start.
pub fn store<F: Flash>(flash: &mut F, mode: AddressMode) -> Result<(), PersistError> {
    persist::save_record(flash, &NetworkRecord(mode)).map(|_| ())
}
