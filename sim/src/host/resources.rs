//! Memory resource assignment: bridge windows sized bottom-up to cover
//! their children, then placed top-down with every BAR inside them — the
//! two passes of Linux's `pci_assign_unassigned_resources`.
//!
//! Policy:
//!
//! - Two spaces. The non-prefetchable window (below 4 GiB) takes 32-bit
//!   BARs and 64-bit non-prefetchable BARs; the prefetchable window
//!   (64-bit, above 4 GiB) takes 64-bit prefetchable BARs
//!   (§7.5.1.3.8-10). I/O BARs are left unassigned and I/O decoding off.
//! - Sizes. A window covers its children packed largest alignment first,
//!   rounded up to its 1 MiB granularity (§7.5.1.3.8); a BAR's alignment is
//!   its size (§7.5.1.2.1). SR-IOV VF BARs of a PF count as one resource of
//!   VF BAR size × TotalVFs aligned to the VF BAR size (§9.3.3.14).
//! - Hot-plug. A bridge whose slot is Hot-Plug Capable gets at least
//!   [`super::HostConfig::hotplug_mmio`] non-prefetchable and
//!   [`super::HostConfig::hotplug_mmio_pref`] prefetchable bytes, like
//!   Linux's `pci=hpmmiosize=…,hpmmioprefsize=…`, so a device plugged in
//!   later fits without moving anything.
//! - Placement. Children go in order of decreasing alignment (BAR order
//!   for ties, VF BARs after the function's own), each at the next aligned
//!   address from the window's base.

use std::ops::RangeInclusive;

use weft_pcie::config::bar::{assign_bar, DecodedBar};
use weft_pcie::config::header::type1;
use weft_pcie::config::{Bar, BarKind};
use weft_pcie::Bdf;

use super::access::Cpu;
use super::error::HostError;
use super::tree::{BarInfo, DeviceTree};
use super::HostConfig;

/// Bridge memory window granularity (§7.5.1.3.8).
pub const WINDOW_GRANULARITY: u64 = 1 << 20;

/// Which bridge window a resource lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// The non-prefetchable window, below 4 GiB.
    Memory,
    /// The 64-bit prefetchable window.
    Prefetchable,
}

impl Space {
    /// The window a BAR of `kind` goes in; `None` for I/O.
    pub fn of(kind: BarKind) -> Option<Space> {
        match kind {
            BarKind::Io => None,
            BarKind::Memory64 { prefetchable: true } => Some(Space::Prefetchable),
            BarKind::Memory32 { .. } | BarKind::Memory64 { .. } => Some(Space::Memory),
        }
    }
}

/// What gets placed in a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Bar { bdf: Bdf, index: u8 },
    VfBar { bdf: Bdf, index: u8 },
    Window { bridge: Bdf },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Item {
    owner: Owner,
    size: u64,
    align: u64,
}

fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align.max(1)) * align.max(1)
}

/// The resources directly below `parent` (`None`: bus 0) in `space`, in
/// placement order.
fn items(tree: &DeviceTree, config: &HostConfig, parent: Option<Bdf>, space: Space) -> Vec<Item> {
    let mut items = Vec::new();
    for bdf in tree.children(parent) {
        let Some(function) = tree.get(bdf) else {
            continue;
        };
        if function.is_virtual() {
            continue;
        }
        for bar in &function.bars {
            if Space::of(bar.kind) == Some(space) {
                items.push(Item {
                    owner: Owner::Bar {
                        bdf,
                        index: bar.index,
                    },
                    size: bar.size,
                    align: bar.size,
                });
            }
        }
        if let Some(sriov) = &function.sriov {
            for bar in &sriov.vf_bars {
                if Space::of(bar.kind) == Some(space) && sriov.total_vfs > 0 {
                    items.push(Item {
                        owner: Owner::VfBar {
                            bdf,
                            index: bar.index,
                        },
                        size: bar.size * u64::from(sriov.total_vfs),
                        align: bar.size,
                    });
                }
            }
        }
        if function.bridge.is_some() {
            let (size, align) = window_need(tree, config, bdf, space);
            if size > 0 {
                items.push(Item {
                    owner: Owner::Window { bridge: bdf },
                    size,
                    align,
                });
            }
        }
    }
    // Stable: equal alignments keep BAR order, VF BARs after the BARs.
    items.sort_by_key(|item| std::cmp::Reverse(item.align));
    items
}

/// Bytes the items need when packed from an address aligned to the
/// first (largest) alignment.
fn packed_size(items: &[Item]) -> u64 {
    items
        .iter()
        .fold(0, |end, item| align_up(end, item.align) + item.size)
}

/// The size and alignment of `bridge`'s window in `space`: its children
/// packed, rounded to 1 MiB, and the hot-plug reservation for a hot-plug
/// slot; size 0 if nothing needs it.
fn window_need(tree: &DeviceTree, config: &HostConfig, bridge: Bdf, space: Space) -> (u64, u64) {
    let below = items(tree, config, Some(bridge), space);
    let mut size = align_up(packed_size(&below), WINDOW_GRANULARITY);
    let align = below.first().map_or(WINDOW_GRANULARITY, |item| {
        item.align.max(WINDOW_GRANULARITY)
    });
    let hot_plug = tree
        .get(bridge)
        .and_then(|f| f.bridge.as_ref())
        .and_then(|b| b.slot)
        .is_some_and(|slot| slot.hot_plug);
    if hot_plug {
        let reserve = match space {
            Space::Memory => config.hotplug_mmio,
            Space::Prefetchable => config.hotplug_mmio_pref,
        };
        size = size.max(align_up(reserve, WINDOW_GRANULARITY));
    }
    (size, align)
}

/// Places everything below `parent` in `space` inside `range`, programming
/// BARs and bridge windows on the way down.
pub fn place(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    config: &HostConfig,
    parent: Option<Bdf>,
    space: Space,
    range: RangeInclusive<u64>,
) -> Result<(), HostError> {
    let list = items(tree, config, parent, space);
    let start = *range.start();
    let available = range.end() - start + 1;
    let mut cursor = start;
    let mut placements = Vec::new();
    for item in &list {
        let at = align_up(cursor, item.align);
        cursor = at + item.size;
        placements.push((*item, at));
    }
    let needed = cursor - start;
    if needed > available {
        return Err(HostError::WindowTooSmall {
            bridge: parent,
            prefetchable: space == Space::Prefetchable,
            needed,
            available,
        });
    }
    for (item, at) in placements {
        match item.owner {
            Owner::Bar { bdf, index } => program_bar(cpu, tree, bdf, index, at, false)?,
            Owner::VfBar { bdf, index } => program_bar(cpu, tree, bdf, index, at, true)?,
            Owner::Window { bridge } => {
                let window = at..=at + item.size - 1;
                program_window(cpu, tree, bridge, space, Some(window.clone()))?;
                place(cpu, tree, config, Some(bridge), space, window)?;
            }
        }
    }
    Ok(())
}

/// Writes a BAR (or VF BAR) with weft-pcie's `assign_bar` and records it.
fn program_bar(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    bdf: Bdf,
    index: u8,
    address: u64,
    vf: bool,
) -> Result<(), HostError> {
    let Some(function) = tree.get_mut(bdf) else {
        return Ok(());
    };
    let bars: &mut Vec<BarInfo> = if vf {
        match function.sriov.as_mut() {
            Some(sriov) => &mut sriov.vf_bars,
            None => return Ok(()),
        }
    } else {
        &mut function.bars
    };
    let Some(bar) = bars.iter_mut().find(|bar| bar.index == index) else {
        return Ok(());
    };
    let decoded = DecodedBar {
        register: bar.register,
        bar: Bar {
            kind: bar.kind,
            size: bar.size,
        },
        address: 0,
    };
    assign_bar(&mut cpu.function(bdf), &decoded, address)
        .map_err(|error| HostError::BarAssignment { bdf, error })?;
    bar.address = Some(address);
    Ok(())
}

/// Programs one bridge window; `None` closes it (base above limit,
/// §7.5.1.3.8-10).
pub fn program_window(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    bridge: Bdf,
    space: Space,
    window: Option<RangeInclusive<u64>>,
) -> Result<(), HostError> {
    let (base, limit) = match &window {
        Some(w) => (*w.start(), *w.end()),
        None => (0xfff0_0000, 0),
    };
    let base_field = (base >> 16) as u32 & 0xfff0;
    let limit_field = (limit >> 16) as u32 & 0xfff0;
    match space {
        Space::Memory => {
            cpu.config_write(
                bridge,
                type1::MEMORY_BASE,
                base_field | limit_field << 16,
                0b1111,
            )?;
        }
        Space::Prefetchable => {
            // Upper halves first, so the window never briefly spans a
            // wrong 64-bit range.
            cpu.config_write(
                bridge,
                type1::PREFETCHABLE_BASE_UPPER,
                (base >> 32) as u32,
                0b1111,
            )?;
            cpu.config_write(
                bridge,
                type1::PREFETCHABLE_LIMIT_UPPER,
                (limit >> 32) as u32,
                0b1111,
            )?;
            cpu.config_write(
                bridge,
                type1::PREFETCHABLE_BASE,
                base_field | limit_field << 16,
                0b1111,
            )?;
        }
    }
    if let Some(info) = tree.get_mut(bridge).and_then(|f| f.bridge.as_mut()) {
        match space {
            Space::Memory => info.memory = window,
            Space::Prefetchable => info.prefetchable = window,
        }
    }
    Ok(())
}

/// Assigns the whole hierarchy: bus 0's resources (the root port's
/// windows) inside the host's MMIO ranges, and everything below.
pub fn assign_all(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    config: &HostConfig,
) -> Result<(), HostError> {
    for bridge in tree
        .iter()
        .filter(|f| f.bridge.is_some())
        .map(|f| f.bdf)
        .collect::<Vec<_>>()
    {
        program_window(cpu, tree, bridge, Space::Memory, None)?;
        program_window(cpu, tree, bridge, Space::Prefetchable, None)?;
    }
    let mmio32 = config.mmio32.start..=config.mmio32.end - 1;
    let mmio64 = config.mmio64.start..=config.mmio64.end - 1;
    place(cpu, tree, config, None, Space::Memory, mmio32)?;
    place(cpu, tree, config, None, Space::Prefetchable, mmio64)
}

/// Assigns what is below `bridge` inside the windows it already has (a
/// slot's devices after a hot-add).
pub fn assign_below(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    config: &HostConfig,
    bridge: Bdf,
) -> Result<(), HostError> {
    let Some(info) = tree.get(bridge).and_then(|f| f.bridge.clone()) else {
        return Ok(());
    };
    for (space, window) in [
        (Space::Memory, info.memory),
        (Space::Prefetchable, info.prefetchable),
    ] {
        match window {
            Some(window) => place(cpu, tree, config, Some(bridge), space, window)?,
            None => {
                let needed = packed_size(&items(tree, config, Some(bridge), space));
                if needed > 0 {
                    return Err(HostError::WindowTooSmall {
                        bridge: Some(bridge),
                        prefetchable: space == Space::Prefetchable,
                        needed,
                        available: 0,
                    });
                }
            }
        }
    }
    Ok(())
}
