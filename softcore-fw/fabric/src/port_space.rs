//! The configuration space of a virtual port, kept compactly: per port
//! only the register values that can be non-zero, and the write masks once
//! per kind of port.
//!
//! A virtual port's space is laid out by weft-pcie's builders into a full
//! [`ConfigSpace`] once, when the virtual switch is built, and then folded
//! into a [`PortSpace`] (the values) and a [`PortLayout`] (which bits
//! software may write or clear, §7.4). Every port of one kind has the same
//! capabilities at the same offsets, so they share one layout; only the
//! header and capability registers are kept (the PCI-compatible space up to
//! [`PCI_BYTES`] and the first [`EXTENDED_BYTES`] of extended space), and
//! everything else reads as zero and is read-only, as it was in the full
//! space. A port costs [`PORT_DWORDS`] × 4 bytes instead of 12 KiB.
//!
//! [`PortSpace`] implements weft-pcie's [`ConfigRegisters`], so the
//! capability handles (`PcieCap`, `MsiCap`, `AcsCap`, `BusNumbers`) read
//! and update it directly, and its software writes use weft-pcie's
//! [`software_write`].

use weft_pcie::config::space::{software_write, CONFIG_SPACE_DWORDS, PCI_COMPATIBLE_SIZE};
use weft_pcie::config::{ConfigRegisters, ConfigSpace};

/// Bytes of the PCI-compatible space a virtual port keeps: the Type 1
/// header and the PCI Express, MSI and Power Management capabilities.
pub const PCI_BYTES: u16 = 0xa0;
/// Bytes of extended space a virtual port keeps, from 0x100: ACS with no
/// Egress Control Vector (§7.7.11).
pub const EXTENDED_BYTES: u16 = 0x08;
const PCI_DWORDS: usize = PCI_BYTES as usize / 4;
/// DWs a virtual port keeps.
pub const PORT_DWORDS: usize = PCI_DWORDS + EXTENDED_BYTES as usize / 4;

/// Where the DW holding byte `offset` is kept, if it is.
const fn slot(offset: u16) -> Option<usize> {
    // 12 bits address the space (§7.2.2), DW-aligned.
    let offset = offset & 0x0ffc;
    if offset < PCI_BYTES {
        Some(offset as usize / 4)
    } else if offset >= PCI_COMPATIBLE_SIZE && offset < PCI_COMPATIBLE_SIZE + EXTENDED_BYTES {
        Some(PCI_DWORDS + (offset - PCI_COMPATIBLE_SIZE) as usize / 4)
    } else {
        None
    }
}

/// A built space holds something outside the registers a virtual port keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutsideKeptRegisters {
    /// The offset of the first DW with a value or a writable bit there.
    pub offset: u16,
}

/// Which bits of a kind of virtual port software may write (RW) or clear
/// (RW1C); every other bit is read-only (§7.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortLayout {
    rw: [u32; PORT_DWORDS],
    rw1c: [u32; PORT_DWORDS],
}

impl PortLayout {
    /// Nothing writable: the layout before a port is laid out.
    pub const EMPTY: PortLayout = PortLayout {
        rw: [0; PORT_DWORDS],
        rw1c: [0; PORT_DWORDS],
    };
}

/// The register values of one virtual port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSpace {
    values: [u32; PORT_DWORDS],
}

/// Folds a built space into its values and its layout; fails if it holds
/// anything outside the kept registers.
pub fn compact(space: &ConfigSpace) -> Result<(PortSpace, PortLayout), OutsideKeptRegisters> {
    let mut values = [0; PORT_DWORDS];
    let mut layout = PortLayout {
        rw: [0; PORT_DWORDS],
        rw1c: [0; PORT_DWORDS],
    };
    for dword in 0..CONFIG_SPACE_DWORDS {
        let offset = (dword * 4) as u16;
        let (value, rw, rw1c) = (
            space.read(offset),
            space.rw_mask(offset),
            space.rw1c_mask(offset),
        );
        match slot(offset) {
            Some(index) => {
                values[index] = value;
                layout.rw[index] = rw;
                layout.rw1c[index] = rw1c;
            }
            None if value | rw | rw1c != 0 => return Err(OutsideKeptRegisters { offset }),
            None => {}
        }
    }
    Ok((PortSpace { values }, layout))
}

impl PortSpace {
    /// Reads the DW holding byte `offset`, as a Configuration Read does.
    pub const fn read(&self, offset: u16) -> u32 {
        match slot(offset) {
            Some(index) => self.values[index],
            None => 0,
        }
    }

    /// Applies a software Configuration Write with `layout`'s masks: RW bits
    /// take the written value, RW1C bits written as 1 clear, every other
    /// bit keeps its value (§7.4), in the bytes `byte_enables` selects (§2.2.7).
    pub fn write(&mut self, layout: &PortLayout, offset: u16, value: u32, byte_enables: u8) {
        if let Some(index) = slot(offset) {
            self.values[index] = software_write(
                self.values[index],
                value,
                layout.rw[index],
                layout.rw1c[index],
                byte_enables,
            );
        }
    }
}

/// The port's registers as weft-pcie's capability handles see them; a DW
/// that is not kept reads as zero and drops hardware updates, as no
/// register of a virtual port lives there.
impl ConfigRegisters for PortSpace {
    fn read(&self, offset: u16) -> u32 {
        PortSpace::read(self, offset)
    }

    fn set_u32(&mut self, offset: u16, value: u32) {
        if let Some(index) = slot(offset) {
            self.values[index] = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_pcie::config::acs::{feature, Acs, AcsCap};
    use weft_pcie::config::function::BusNumbers;
    use weft_pcie::config::msi::{Msi, MsiCap};
    use weft_pcie::config::pcie_cap::{
        slot_status, Link, LinkState, PcieCap, PcieCapability, PortType, Slot,
    };
    use weft_pcie::config::pm::PowerManagement;
    use weft_pcie::config::{CapabilityList, FunctionIdentity, Type1Function};

    /// A downstream port as the virtual switch lays it out.
    fn full_port() -> (ConfigSpace, PcieCap, MsiCap, AcsCap) {
        let mut space = Type1Function::switch_port(FunctionIdentity {
            vendor_id: 0x1d1d,
            device_id: 2,
            revision_id: 0,
            class_code: 0x06_04_00,
        })
        .build()
        .expect("no BARs");
        let mut pcie = PcieCapability::new(PortType::SwitchDownstream);
        pcie.link = Some(Link::trained(3, 16, 1));
        pcie.slot = Some(Slot::hot_plug(1));
        let mut list = CapabilityList::new(&mut space).expect("fresh");
        let p = list.push(&pcie).expect("fits");
        let m = list
            .push(&Msi {
                multiple_message_capable: 2,
                address_64: true,
                per_vector_masking: false,
            })
            .expect("fits");
        list.push(&PowerManagement::minimal()).expect("fits");
        let a = list
            .push_extended(&Acs {
                features: feature::DOWNSTREAM_PORT_REQUIRED,
                egress_vector_bits: 0,
            })
            .expect("fits");
        (space, PcieCap::at(p), MsiCap::at(m), AcsCap::at(a))
    }

    fn assert_same(full: &ConfigSpace, port: &PortSpace) {
        for dword in 0..CONFIG_SPACE_DWORDS as u16 {
            assert_eq!(
                full.read(dword * 4),
                port.read(dword * 4),
                "DW at {:#x}",
                dword * 4
            );
        }
    }

    /// Driven alike, by software writes through the masks and by weft-pcie's
    /// hardware updates, the compact port and the full space it was folded
    /// from hold the same registers and give the same answers.
    #[test]
    fn a_compact_port_behaves_like_its_full_space() {
        let (mut full, pcie, msi, acs) = full_port();
        let (mut port, layout) = compact(&full).expect("fits the kept registers");
        assert_same(&full, &port);
        let same_answers = |full: &ConfigSpace, port: &PortSpace| {
            assert_same(full, port);
            assert_eq!(
                pcie.hot_plug_interrupt_pending(full),
                pcie.hot_plug_interrupt_pending(port)
            );
            assert_eq!(msi.message(full, 0), msi.message(port, 0));
            assert_eq!(
                acs.p2p_request_redirect(full),
                acs.p2p_request_redirect(port)
            );
            assert_eq!(BusNumbers::read(full), BusNumbers::read(port));
        };
        let mut x: u32 = 0x1234_5678;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for round in 0..8u32 {
            // The port's hardware reports link and slot state and latches
            // events, so that the RW1C bits have something to clear.
            let state = LinkState {
                speed: 3,
                width: if round % 2 == 0 { 16 } else { 0 },
                dll_link_active: round % 2 == 0,
                training: round % 3 == 0,
            };
            pcie.set_link_state(&mut full, state);
            pcie.set_link_state(&mut port, state);
            let present = (next() as u16) & slot_status::STATE;
            pcie.set_slot_state(&mut full, present);
            pcie.set_slot_state(&mut port, present);
            let events = next() as u16;
            pcie.raise_slot_events(&mut full, events);
            pcie.raise_slot_events(&mut port, events);
            same_answers(&full, &port);
            // A pseudo-random walk over every DW up to the extended kept
            // ones: hardware sets some bits of one half of a kept DW (it has
            // no registers elsewhere), then software writes the DW with some
            // byte enables.
            for dword in 0..0x110u16 / 4 {
                let (bits, half) = (next(), next() as u16 & 2);
                let offset = dword * 4 + half;
                if slot(offset).is_some() {
                    full.set_bits_u16(offset, (bits & bits >> 16) as u16);
                    port.set_bits_u16(offset, (bits & bits >> 16) as u16);
                }
                let (value, be) = (next(), next() as u8 & 0xf);
                full.write(dword * 4, value, be);
                port.write(&layout, dword * 4, value, be);
            }
            same_answers(&full, &port);
        }
        // Writes outside the kept registers change nothing, as on the full
        // space; hardware updates there are dropped, as nothing implements them.
        full.write(0x200, u32::MAX, 0xf);
        port.write(&layout, 0x200, u32::MAX, 0xf);
        assert_same(&full, &port);
        port.set_u32(0x200, u32::MAX);
        assert_eq!(port.read(0x200), 0);
    }

    #[test]
    fn a_space_with_registers_beyond_the_kept_ones_is_refused() {
        let (mut full, ..) = full_port();
        full.define_u32(0x200, 1, 0, 0);
        assert_eq!(
            compact(&full).map(|_| ()),
            Err(OutsideKeptRegisters { offset: 0x200 })
        );
    }
}
