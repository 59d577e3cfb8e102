//! Configuration space and capability structures (PCIe Base 6.0 chapter 7,
//! and §9.3 for SR-IOV).
//!
//! - [`header`], [`cap_id`], [`ext_cap_id`]: register offsets, bit fields and
//!   IDs: the one definition for the firmware, the simulator and the RTL.
//! - [`ConfigSpace`]: a function's 4 KiB space with per-bit RO / RW / RW1C
//!   write semantics; [`ConfigRegisters`]: what the capability handles need
//!   of any storage of those registers.
//! - [`function`]: builders for Type 0 and Type 1 headers; [`bar`]: BAR
//!   layout, sizing and placement.
//! - [`walk`]: robust capability list walkers; [`list`]: appending
//!   capabilities and linking the lists.
//! - One module per capability structure, each with its offsets, bits, a
//!   builder that lays it out, and a handle with typed accessors:
//!   [`pcie_cap`], [`pm`], [`msi`], [`msix`], [`aer`], [`acs`], [`ari`],
//!   [`sriov`], and [`vsec`] for weft's own switch identity.

pub mod bar;
pub mod function;
pub mod header;
mod ids;
pub mod list;
pub mod space;
pub mod walk;

pub use bar::{Bar, BarKind, DecodedBar};
pub use function::{FunctionIdentity, Type0Function, Type1Function};
pub use ids::{cap_id, ext_cap_id};
pub use list::{Capability, CapabilityList, ExtendedCapability};
pub use space::{ConfigRead, ConfigRegisters, ConfigSpace, ConfigWrite};
pub use walk::{Capabilities, ExtendedCapabilities, WalkError};
pub mod acs;
pub mod aer;
pub mod ari;
pub mod msi;
pub mod msix;
pub mod pcie_cap;
pub mod pm;
pub mod sriov;
pub mod vsec;

#[cfg(test)]
mod tests {
    //! A whole function built from the pieces, checked byte by byte against
    //! the spec's offsets.

    use super::function::CLASS_PCI_BRIDGE;
    use super::msi::Msi;
    use super::pcie_cap::{link_speed, Link, PcieCap, PcieCapability, PortType, Slot};
    use super::pm::PowerManagement;
    use super::walk::CapabilityEntry;
    use super::*;

    const IDENTITY: FunctionIdentity = FunctionIdentity {
        vendor_id: 0x1d1d,
        device_id: 0x0002,
        revision_id: 1,
        class_code: CLASS_PCI_BRIDGE,
    };

    fn switch_downstream_port() -> ConfigSpace {
        let mut space = Type1Function::switch_port(IDENTITY)
            .build()
            .expect("valid header");
        let mut pcie = PcieCapability::new(PortType::SwitchDownstream);
        pcie.link = Some(Link {
            capabilities: pcie_cap::link_capabilities::DLL_LINK_ACTIVE_REPORTING,
            ..Link::trained(link_speed::GT_8, 16, 1)
        });
        pcie.slot = Some(Slot::hot_plug(0x12));
        pcie.validate().expect("valid PCIe capability");
        let mut list = CapabilityList::new(&mut space).expect("fresh header");
        assert_eq!(list.push(&pcie), Ok(0x40));
        assert_eq!(
            list.push(&Msi {
                multiple_message_capable: 0,
                address_64: true,
                per_vector_masking: false
            }),
            Ok(0x7c)
        );
        assert_eq!(list.push(&PowerManagement::minimal()), Ok(0x8c));
        space
    }

    #[test]
    fn a_switch_downstream_port_matches_the_spec_byte_for_byte() {
        let space = switch_downstream_port();
        let bytes = space.to_bytes();
        // §7.5.1.1: IDs, Command 0, Status = Capabilities List (bit 4).
        assert_eq!(
            &bytes[0x00..0x08],
            &[0x1d, 0x1d, 0x02, 0x00, 0x00, 0x00, 0x10, 0x00]
        );
        // Revision 1, class 06_04_00, header type 1.
        assert_eq!(&bytes[0x08..0x0c], &[0x01, 0x00, 0x04, 0x06]);
        assert_eq!(bytes[0x0e], 0x01);
        // I/O base/limit report 32-bit decode, prefetchable 64-bit (§7.5.1.3.6, .9).
        assert_eq!(&bytes[0x1c..0x1e], &[0x01, 0x01]);
        assert_eq!(&bytes[0x24..0x28], &[0x01, 0x00, 0x01, 0x00]);
        // Capabilities Pointer (§7.5.1.1.11).
        assert_eq!(bytes[0x34], 0x40);

        // PCI Express capability (§7.5.3): ID 0x10, next 0x7c; version 2,
        // port type 0110b in bits 7:4, Slot Implemented bit 8 -> 0x0162.
        assert_eq!(&bytes[0x40..0x44], &[0x10, 0x7c, 0x62, 0x01]);
        // Device Capabilities: MPS supported 256 (001b), Role-Based Error Reporting (15).
        assert_eq!(&bytes[0x44..0x48], &[0x01, 0x80, 0x00, 0x00]);
        // Device Control reset value 0x2810, Device Status 0.
        assert_eq!(&bytes[0x48..0x4c], &[0x10, 0x28, 0x00, 0x00]);
        // Link Capabilities: speed 3, width 16 (0x10 << 4 = 0x100), DLL Link
        // Active Reporting (20), port number 1 (31:24) -> 0x0110_0103.
        assert_eq!(&bytes[0x4c..0x50], &[0x03, 0x01, 0x10, 0x01]);
        // Link Status: speed 3, width 16 -> 0x0103.
        assert_eq!(&bytes[0x52..0x54], &[0x03, 0x01]);
        // Slot Capabilities: Hot-Plug Surprise (5), Hot-Plug Capable (6),
        // No Command Completed Support (18), Physical Slot 0x12 << 19
        // -> 0x0094_0060.
        assert_eq!(&bytes[0x54..0x58], &[0x60, 0x00, 0x94, 0x00]);
        // Link Capabilities 2: speeds 2.5, 5, 8 GT/s -> bits 3:1 = 0x0e.
        assert_eq!(&bytes[0x6c..0x70], &[0x0e, 0x00, 0x00, 0x00]);
        // Link Control 2: Target Link Speed 3.
        assert_eq!(&bytes[0x70..0x72], &[0x03, 0x00]);

        // MSI (§7.7.1): ID 0x05, next 0x8c, 64-bit capable (bit 7).
        assert_eq!(&bytes[0x7c..0x80], &[0x05, 0x8c, 0x80, 0x00]);
        // Power Management (§7.5.2): ID 0x01, last; PMC version 3;
        // PMCSR No_Soft_Reset (bit 3).
        assert_eq!(
            &bytes[0x8c..0x94],
            &[0x01, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x00]
        );
        // No extended capabilities: an all-zero header at 0x100 (§7.6.3).
        assert_eq!(&bytes[0x100..0x104], &[0, 0, 0, 0]);
    }

    #[test]
    fn the_built_port_walks_strictly_and_reads_back_through_accessors() {
        let space = switch_downstream_port();
        let mut walk = Capabilities::new(&space).strict();
        let expected = [
            CapabilityEntry {
                offset: 0x40,
                id: cap_id::PCI_EXPRESS,
            },
            CapabilityEntry {
                offset: 0x7c,
                id: cap_id::MSI,
            },
            CapabilityEntry {
                offset: 0x8c,
                id: cap_id::POWER_MANAGEMENT,
            },
        ];
        for entry in expected {
            assert_eq!(walk.next(), Some(Ok(entry)));
        }
        assert_eq!(walk.next(), None);
        let pcie = PcieCap::find(&space)
            .expect("well-formed")
            .expect("present");
        assert_eq!(pcie.port_type(&space), Some(PortType::SwitchDownstream));
        assert!(pcie.slot_implemented(&space));
    }

    #[test]
    fn a_hot_plug_event_reaches_the_host_through_msi() {
        use super::msi::{MsiCap, MsiMessage};
        use super::pcie_cap::{slot_control, slot_status};
        let mut space = switch_downstream_port();
        let pcie = PcieCap::at(0x40);
        let msi = MsiCap::at(0x7c);
        // The host's hot-plug driver programs MSI and enables the slot events.
        space.write_u32(0x80, 0xfee0_0000);
        space.write_u32(0x84, 0);
        space.write_u16(0x88, 0x0031);
        space.write_u16(0x7e, 0x0001);
        space.write_u16(
            0x58,
            slot_control::HOT_PLUG_INTERRUPT_ENABLE
                | slot_control::PRESENCE_DETECT_CHANGED_ENABLE
                | slot_control::DLL_STATE_CHANGED_ENABLE,
        );
        // Binding an endpoint: presence and link come up, both change bits latch.
        pcie.set_slot_state(&mut space, slot_status::PRESENCE_DETECT_STATE);
        pcie.raise_slot_events(
            &mut space,
            slot_status::PRESENCE_DETECT_CHANGED | slot_status::DLL_STATE_CHANGED,
        );
        assert!(pcie.hot_plug_interrupt_pending(&space));
        assert_eq!(
            msi.message(&space, 0),
            Some(MsiMessage {
                address: 0xfee0_0000,
                data: 0x0031
            })
        );
        // The driver acknowledges both events.
        space.write_u16(
            0x5a,
            slot_status::PRESENCE_DETECT_CHANGED | slot_status::DLL_STATE_CHANGED,
        );
        assert!(!pcie.hot_plug_interrupt_pending(&space));
        assert_eq!(pcie.slot_status(&space), slot_status::PRESENCE_DETECT_STATE);
    }
}
