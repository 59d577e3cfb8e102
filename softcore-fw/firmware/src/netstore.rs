//! The management port's network setting — a static address, prefix and
//! optional default gateway, or DHCP — kept in flash
//! ([`crate::flash::NETWORK_REGION`]) as weft-fabric's network record
//! (`weft_fabric::network_setting`, which has the layout), so a switch
//! comes back after a power cycle at the address it was given rather than
//! at the default.
//!
//! The console's `ip` command stores the record each time it changes the
//! setting (one 4 KiB sector erase at a person's typing speed, so wear is
//! no concern), and the firmware reads it once at start. A region that was
//! never written (a new board, erased flash) leaves weft-proto's default
//! address; so does a damaged record (a torn write, flash wear, a setting
//! that cannot be, a layout this firmware does not read), which the
//! console reports: the port stays reachable at the known default rather
//! than at none.

use weft_fabric::network_setting::NetworkSetting;
use weft_fabric::persist::{self, Flash, PersistError, Saved};

/// The stored setting, or whether none was ever stored or only a damaged one.
pub fn load<F: Flash>(flash: &mut F) -> Result<Saved<NetworkSetting>, PersistError> {
    persist::load_saved(flash)
}

/// Stores `setting` for the next start.
pub fn store<F: Flash>(flash: &mut F, setting: &NetworkSetting) -> Result<(), PersistError> {
    persist::save_record(flash, setting).map(|_| ())
}
