//! Where a function's memory BARs decode right now, from the values software
//! programmed (PCIe Base 6.0 §7.5.1.2.1, and §9.3.3.14 for VF BARs).

use weft_pcie::config::bar::MAX_BARS;
use weft_pcie::config::header::{command, common, type0};
use weft_pcie::config::{Bar, BarKind, ConfigSpace};

/// One memory BAR as currently programmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarWindow {
    /// The BAR slot (0..=5); a 64-bit BAR is named by its low register.
    pub slot: u8,
    /// The address software placed it at.
    pub base: u64,
    /// Its size in bytes.
    pub size: u64,
}

impl BarWindow {
    /// The offset of `address` inside the window, if it falls there.
    pub fn offset_of(&self, address: u64) -> Option<u64> {
        address
            .checked_sub(self.base)
            .filter(|&offset| offset < self.size)
    }
}

/// The address held by the BAR array registers at `base` for the BAR in
/// `slot` (both halves for a 64-bit BAR), with the flag bits masked off.
pub fn programmed_address(space: &ConfigSpace, base: u16, slot: u8, bar: &Bar) -> u64 {
    let register = base + 4 * u16::from(slot);
    let low = u64::from(space.read_u32(register) & !0xf);
    let high = match bar.kind {
        BarKind::Memory64 { .. } => u64::from(space.read_u32(register + 4)),
        _ => 0,
    };
    (high << 32 | low) & !(bar.size - 1)
}

/// The memory BARs of a Type 0 header that decode now: every programmed
/// memory BAR while Memory Space Enable is set (§7.5.1.1.3).
///
/// A BAR still at address 0 is treated as unassigned and left out: software
/// never enables a BAR it has not placed, and address 0 is host memory.
pub fn header_windows(space: &ConfigSpace, bars: &[Option<Bar>; MAX_BARS]) -> Vec<BarWindow> {
    if space.read_u16(common::COMMAND) & command::MEMORY_SPACE == 0 {
        return Vec::new();
    }
    windows_at(space, type0::BAR0, bars, 0)
}

/// The memory BARs of an array at `register_base`, each moved up by
/// `index * size` (how VF n's BARs follow VF 1's, §9.3.3.14; `index` is 0
/// for a header), leaving out I/O BARs and unassigned ones.
pub fn windows_at(
    space: &ConfigSpace,
    register_base: u16,
    bars: &[Option<Bar>; MAX_BARS],
    index: u64,
) -> Vec<BarWindow> {
    let mut windows = Vec::new();
    for (slot, bar) in bars.iter().enumerate() {
        let Some(bar) = bar else { continue };
        if bar.kind == BarKind::Io {
            continue;
        }
        let first = programmed_address(space, register_base, slot as u8, bar);
        if first == 0 {
            continue;
        }
        let Some(base) = index
            .checked_mul(bar.size)
            .and_then(|step| first.checked_add(step))
        else {
            continue;
        };
        windows.push(BarWindow {
            slot: slot as u8,
            base,
            size: bar.size,
        });
    }
    windows
}

/// The window holding `address`, and the offset in it.
pub fn find(windows: &[BarWindow], address: u64) -> Option<(BarWindow, u64)> {
    windows
        .iter()
        .find_map(|window| window.offset_of(address).map(|offset| (*window, offset)))
}
