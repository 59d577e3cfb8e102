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
//! The register accessors mirror weft-pcie's on [`ConfigSpace`]
//! (`PcieCap`, `MsiCap`, `AcsCap`, `BusNumbers`); a test checks that both
//! agree bit for bit.

use weft_pcie::config::acs::{feature, AcsCap, CONTROL as ACS_CONTROL};
use weft_pcie::config::function::BusNumbers;
use weft_pcie::config::header::type1;
use weft_pcie::config::msi::{
    message_control, MsiCap, MsiMessage, MESSAGE_ADDRESS, MESSAGE_CONTROL, MESSAGE_UPPER_ADDRESS,
};
use weft_pcie::config::pcie_cap::{
    link_status, slot_control, slot_status, LinkState, PcieCap, LINK_STATUS, SLOT_CONTROL,
    SLOT_STATUS,
};
use weft_pcie::config::space::{byte_enable_mask, CONFIG_SPACE_DWORDS, PCI_COMPATIBLE_SIZE};
use weft_pcie::config::ConfigSpace;

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

    /// Reads the byte at `offset`.
    pub const fn read_u8(&self, offset: u16) -> u8 {
        (self.read(offset) >> ((offset & 3) * 8)) as u8
    }

    /// Reads the 16-bit register at `offset` (bit 0 ignored, §7.2).
    pub const fn read_u16(&self, offset: u16) -> u16 {
        (self.read(offset) >> ((offset & 2) * 8)) as u16
    }

    /// Applies a software Configuration Write with `layout`'s masks: RW bits
    /// take the written value, RW1C bits written as 1 clear, every other
    /// bit keeps its value (§7.4), in the bytes `byte_enables` selects (§2.2.7).
    pub fn write(&mut self, layout: &PortLayout, offset: u16, value: u32, byte_enables: u8) {
        let Some(index) = slot(offset) else {
            return;
        };
        let lanes = byte_enable_mask(byte_enables);
        let rw = layout.rw[index] & lanes;
        let rw1c = layout.rw1c[index] & lanes;
        let kept = self.values[index] & !rw;
        self.values[index] = (kept | (value & rw)) & !(value & rw1c);
    }

    /// Sets a 16-bit register as the port's hardware would, whatever its
    /// software access.
    fn set_u16(&mut self, offset: u16, value: u16) {
        if let Some(index) = slot(offset) {
            let shift = u32::from(offset & 2) * 8;
            let mask = 0xffff << shift;
            self.values[index] = (self.values[index] & !mask) | (u32::from(value) << shift);
        }
    }

    /// The bus number registers of the Type 1 header (§7.5.1.3.3-5).
    pub const fn bus_numbers(&self) -> BusNumbers {
        BusNumbers {
            primary: self.read_u8(type1::PRIMARY_BUS),
            secondary: self.read_u8(type1::SECONDARY_BUS),
            subordinate: self.read_u8(type1::SUBORDINATE_BUS),
        }
    }

    /// The port reports a new link state in Link Status (§7.5.3.8); the
    /// RW1C bandwidth status bits and Slot Clock Configuration are kept.
    pub fn set_link_state(&mut self, pcie: PcieCap, state: LinkState) {
        let offset = pcie.offset + LINK_STATUS;
        let kept = self.read_u16(offset)
            & (link_status::BANDWIDTH_MANAGEMENT_STATUS
                | link_status::AUTONOMOUS_BANDWIDTH_STATUS
                | link_status::SLOT_CLOCK_CONFIGURATION);
        let mut status = kept
            | u16::from(state.speed) & link_status::CURRENT_SPEED_MASK
            | (u16::from(state.width) << link_status::NEGOTIATED_WIDTH_SHIFT)
                & link_status::NEGOTIATED_WIDTH_MASK;
        if state.dll_link_active {
            status |= link_status::DLL_LINK_ACTIVE;
        }
        if state.training {
            status |= link_status::LINK_TRAINING;
        }
        self.set_u16(offset, status);
    }

    /// Slot Status as raw bits (§7.5.3.11).
    pub const fn slot_status(&self, pcie: PcieCap) -> u16 {
        self.read_u16(pcie.offset + SLOT_STATUS)
    }

    /// The slot reports its state: the read-only state bits of Slot Status;
    /// latched events are kept (§7.5.3.11).
    pub fn set_slot_state(&mut self, pcie: PcieCap, state: u16) {
        let offset = pcie.offset + SLOT_STATUS;
        let events = self.read_u16(offset) & !slot_status::STATE;
        self.set_u16(offset, events | (state & slot_status::STATE));
    }

    /// The slot latches events into Slot Status (RW1C bits, §7.5.3.11).
    pub fn raise_slot_events(&mut self, pcie: PcieCap, events: u16) {
        let offset = pcie.offset + SLOT_STATUS;
        let current = self.read_u16(offset);
        self.set_u16(offset, current | (events & slot_status::EVENTS));
    }

    /// Whether the slot's hot-plug interrupt is asserted: Hot-Plug Interrupt
    /// Enable is set and a latched event has its enable set (§6.7.3.4).
    pub const fn hot_plug_interrupt_pending(&self, pcie: PcieCap) -> bool {
        let control = self.read_u16(pcie.offset + SLOT_CONTROL);
        if control & slot_control::HOT_PLUG_INTERRUPT_ENABLE == 0 {
            return false;
        }
        let status = self.slot_status(pcie);
        let pairs = [
            (
                slot_status::ATTENTION_BUTTON_PRESSED,
                slot_control::ATTENTION_BUTTON_PRESSED_ENABLE,
            ),
            (
                slot_status::POWER_FAULT_DETECTED,
                slot_control::POWER_FAULT_DETECTED_ENABLE,
            ),
            (
                slot_status::MRL_SENSOR_CHANGED,
                slot_control::MRL_SENSOR_CHANGED_ENABLE,
            ),
            (
                slot_status::PRESENCE_DETECT_CHANGED,
                slot_control::PRESENCE_DETECT_CHANGED_ENABLE,
            ),
            (
                slot_status::COMMAND_COMPLETED,
                slot_control::COMMAND_COMPLETED_INTERRUPT_ENABLE,
            ),
            (
                slot_status::DLL_STATE_CHANGED,
                slot_control::DLL_STATE_CHANGED_ENABLE,
            ),
        ];
        let mut index = 0;
        while index < pairs.len() {
            let (event, enable) = pairs[index];
            if status & event != 0 && control & enable != 0 {
                return true;
            }
            index += 1;
        }
        false
    }

    /// The message the port sends for MSI vector 0: the programmed address
    /// and data; `None` while MSI is disabled (§7.7.1). With several vectors
    /// granted, vector 0's data has its low bits cleared (§7.7.1.2).
    pub const fn msi_message(&self, msi: MsiCap) -> Option<MsiMessage> {
        let control = self.read_u16(msi.offset + MESSAGE_CONTROL);
        if control & message_control::ENABLE == 0 {
            return None;
        }
        let granted = (control & message_control::MULTIPLE_MESSAGE_ENABLE_MASK)
            >> message_control::MULTIPLE_MESSAGE_ENABLE_SHIFT;
        let requested = (control & message_control::MULTIPLE_MESSAGE_CAPABLE_MASK)
            >> message_control::MULTIPLE_MESSAGE_CAPABLE_SHIFT;
        // Granting more than requested is undefined (§7.7.1.2); use the lesser.
        let log2 = if granted < requested {
            granted
        } else {
            requested
        };
        let vectors: u16 = 1 << if log2 > 5 { 5 } else { log2 };
        let address_64 = control & message_control::ADDRESS_64 != 0;
        let low = (self.read(msi.offset + MESSAGE_ADDRESS) & !0b11) as u64;
        let (address, data_offset) = if address_64 {
            (
                (self.read(msi.offset + MESSAGE_UPPER_ADDRESS) as u64) << 32 | low,
                msi.offset + 0x0c,
            )
        } else {
            (low, msi.offset + 0x08)
        };
        Some(MsiMessage {
            address,
            data: self.read_u16(data_offset) & !(vectors - 1),
        })
    }

    /// Whether software set ACS P2P Request Redirect (§7.7.11.3).
    pub const fn p2p_request_redirect(&self, acs: AcsCap) -> bool {
        self.read_u16(acs.offset + ACS_CONTROL) & feature::P2P_REQUEST_REDIRECT != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_pcie::config::acs::Acs;
    use weft_pcie::config::msi::Msi;
    use weft_pcie::config::pcie_cap::{Link, PcieCapability, PortType, Slot};
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

    /// Every software write and every hardware update gives the same
    /// registers and the same answers as weft-pcie's accessors on the full space.
    #[test]
    fn a_compact_port_behaves_like_its_full_space() {
        let (mut full, pcie, msi, acs) = full_port();
        let (mut port, layout) = compact(&full).expect("fits the kept registers");
        assert_same(&full, &port);
        // A pseudo-random walk of writes over every DW, all byte enables.
        let mut x: u32 = 0x1234_5678;
        for round in 0..4u32 {
            for dword in 0..0x110u16 / 4 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let be = (x >> 28) as u8 | 1;
                full.write(dword * 4, x, be);
                port.write(&layout, dword * 4, x, be);
            }
            let state = LinkState {
                speed: 3,
                width: if round % 2 == 0 { 16 } else { 0 },
                dll_link_active: round % 2 == 0,
                training: false,
            };
            pcie.set_link_state(&mut full, state);
            port.set_link_state(pcie, state);
            let present = if round % 2 == 0 {
                slot_status::PRESENCE_DETECT_STATE
            } else {
                0
            };
            pcie.set_slot_state(&mut full, present);
            port.set_slot_state(pcie, present);
            let events = slot_status::PRESENCE_DETECT_CHANGED | slot_status::DLL_STATE_CHANGED;
            pcie.raise_slot_events(&mut full, events);
            port.raise_slot_events(pcie, events);
            assert_same(&full, &port);
            assert_eq!(
                pcie.hot_plug_interrupt_pending(&full),
                port.hot_plug_interrupt_pending(pcie)
            );
            assert_eq!(msi.message(&full, 0), port.msi_message(msi));
            assert_eq!(
                acs.p2p_request_redirect(&full),
                port.p2p_request_redirect(acs)
            );
            assert_eq!(BusNumbers::read(&full), port.bus_numbers());
        }
        // Writes outside the kept registers change nothing, as on the full space.
        full.write(0x200, u32::MAX, 0xf);
        port.write(&layout, 0x200, u32::MAX, 0xf);
        assert_same(&full, &port);
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
