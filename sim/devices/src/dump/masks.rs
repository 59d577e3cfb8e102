//! Giving a dumped configuration space the write semantics of real
//! hardware: which bits software may write or clear, and the values they
//! hold after a reset.
//!
//! A dump holds values only. The header's masks come from the spec
//! (PCIe Base 6.0 §7.5.1), BAR masks from the BAR sizes the user supplies
//! (§7.5.1.2.1), and each capability weft-pcie knows is laid out again by
//! its builder, with parameters read from the dump, so that its masks are
//! the builder's. Registers of unknown capabilities stay read-only.
//!
//! The dump comes from a running system whose operating system enabled
//! decoding, placed BARs and turned interrupts on; the model shows the
//! function as after a reset instead (Command 0, BARs unplaced, status
//! events clear, MSI/MSI-X and VFs disabled), so an enumerator starts from
//! scratch.

use weft_pcie::config::aer::{self, Aer};
use weft_pcie::config::ari::{self, Ari};
use weft_pcie::config::bar::{install_bars, BarError, MAX_BARS};
use weft_pcie::config::header::{command, common, header_type, status, type0};
use weft_pcie::config::list::{Capability, ExtendedCapability};
use weft_pcie::config::msi::{self, Msi};
use weft_pcie::config::msix::{self, MsiX};
use weft_pcie::config::pcie_cap::{self, PcieCapability, PortType};
use weft_pcie::config::pm::{self, PowerManagement};
use weft_pcie::config::sriov::{self, SrIov};
use weft_pcie::config::walk::{Capabilities, ExtendedCapabilities};
use weft_pcie::config::{cap_id, ext_cap_id, Bar, ConfigSpace};

/// Every uncorrectable error bit AER defines for an endpoint (§7.8.4.2).
const ENDPOINT_UNCORRECTABLE: u32 = aer::uncorrectable::DATA_LINK_PROTOCOL
    | aer::uncorrectable::SURPRISE_DOWN
    | aer::uncorrectable::POISONED_TLP
    | aer::uncorrectable::FLOW_CONTROL_PROTOCOL
    | aer::uncorrectable::COMPLETION_TIMEOUT
    | aer::uncorrectable::COMPLETER_ABORT
    | aer::uncorrectable::UNEXPECTED_COMPLETION
    | aer::uncorrectable::RECEIVER_OVERFLOW
    | aer::uncorrectable::MALFORMED_TLP
    | aer::uncorrectable::ECRC
    | aer::uncorrectable::UNSUPPORTED_REQUEST
    | aer::uncorrectable::INTERNAL;

/// The values of `bytes` (4096), every bit read-only.
pub fn read_only_space(bytes: &[u8]) -> ConfigSpace {
    let mut space = ConfigSpace::new();
    for (index, dw) in bytes.chunks_exact(4).enumerate() {
        let value = u32::from_le_bytes([dw[0], dw[1], dw[2], dw[3]]);
        space.define_u32((index * 4) as u16, value, 0, 0);
    }
    space
}

/// The BAR a dumped register describes, given its size: kind from the low
/// bits the dump shows (§7.5.1.2.1).
pub fn bar_from_register(register: u32, size: u64) -> Bar {
    use weft_pcie::config::header::bar as bits;
    if register & bits::IO_SPACE != 0 {
        return Bar::io(size);
    }
    let prefetchable = register & bits::PREFETCHABLE != 0;
    if register & bits::MEMORY_TYPE_MASK == bits::MEMORY_TYPE_64 {
        Bar::memory64(size, prefetchable)
    } else {
        Bar {
            kind: weft_pcie::config::BarKind::Memory32 { prefetchable },
            size,
        }
    }
}

/// Applies the Type 0 header's masks and reset values (§7.5.1.1,
/// §7.5.1.2) and lays out `bars`.
pub fn apply_header(
    space: &mut ConfigSpace,
    bars: &[Option<Bar>; MAX_BARS],
) -> Result<(), BarError> {
    space.define_u16(common::COMMAND, 0, command::RW_BITS, 0);
    let status_value = space.read_u16(common::STATUS) & !status::RW1C_BITS;
    space.define_u16(common::STATUS, status_value, 0, status::RW1C_BITS);
    space.define_u8(common::CACHE_LINE_SIZE, 0, 0xff, 0);
    space.define_u8(common::INTERRUPT_LINE, 0, 0xff, 0);
    let layout = space.read_u8(common::HEADER_TYPE) & header_type::LAYOUT_MASK;
    if layout == header_type::TYPE0 {
        install_bars(space, type0::BAR0, type0::BAR_COUNT, bars)?;
    }
    Ok(())
}

/// Copies the masks `scratch` holds for `offset..offset + size` onto
/// `space`, keeping `space`'s values.
fn take_masks(space: &mut ConfigSpace, scratch: &ConfigSpace, offset: u16, size: u16) {
    let end = (u32::from(offset) + u32::from(size)).min(4096);
    for dw in (u32::from(offset & !3)..end).step_by(4) {
        let dw = dw as u16;
        let value = space.read(dw);
        space.define_u32(dw, value, scratch.rw_mask(dw), scratch.rw1c_mask(dw));
    }
}

fn relayout<C: Capability>(space: &mut ConfigSpace, offset: u16, capability: &C) {
    let mut scratch = ConfigSpace::new();
    capability.install(&mut scratch, offset);
    take_masks(space, &scratch, offset, capability.size_bytes());
}

fn relayout_extended<C: ExtendedCapability>(space: &mut ConfigSpace, offset: u16, capability: &C) {
    let mut scratch = ConfigSpace::new();
    capability.install(&mut scratch, offset);
    take_masks(space, &scratch, offset, capability.size_bytes());
}

/// Clears the bits of the 16-bit register at `offset` as a reset would.
fn clear_u16(space: &mut ConfigSpace, offset: u16, bits: u16) {
    space.clear_bits_u16(offset, bits);
}

/// Gives each capability weft-pcie knows its masks and reset values.
pub fn apply_capabilities(space: &mut ConfigSpace) {
    let entries: Vec<_> = Capabilities::new(&*space).filter_map(Result::ok).collect();
    for entry in entries {
        let at = entry.offset;
        match entry.id {
            cap_id::MSI => {
                let control = space.read_u16(at + msi::MESSAGE_CONTROL);
                let capability = Msi {
                    multiple_message_capable: ((control
                        & msi::message_control::MULTIPLE_MESSAGE_CAPABLE_MASK)
                        >> msi::message_control::MULTIPLE_MESSAGE_CAPABLE_SHIFT)
                        as u8,
                    address_64: control & msi::message_control::ADDRESS_64 != 0,
                    per_vector_masking: control & msi::message_control::PER_VECTOR_MASKING != 0,
                };
                relayout(space, at, &capability);
                clear_u16(
                    space,
                    at + msi::MESSAGE_CONTROL,
                    msi::message_control::ENABLE
                        | msi::message_control::MULTIPLE_MESSAGE_ENABLE_MASK,
                );
            }
            cap_id::MSIX => {
                let control = space.read_u16(at + msix::MESSAGE_CONTROL);
                let capability = MsiX {
                    table_entries: (control & msix::message_control::TABLE_SIZE_MASK) + 1,
                    table: msix::MsiXCap::at(at).table(space),
                    pending_bits: msix::MsiXCap::at(at).pending_bits(space),
                };
                relayout(space, at, &capability);
                clear_u16(
                    space,
                    at + msix::MESSAGE_CONTROL,
                    msix::message_control::ENABLE | msix::message_control::FUNCTION_MASK,
                );
            }
            cap_id::POWER_MANAGEMENT => {
                let capability = PowerManagement {
                    capabilities: space.read_u16(at + pm::PMC),
                    no_soft_reset: space.read_u16(at + pm::PMCSR) & pm::pmcsr::NO_SOFT_RESET != 0,
                };
                relayout(space, at, &capability);
                clear_u16(
                    space,
                    at + pm::PMCSR,
                    pm::pmcsr::POWER_STATE_MASK | pm::pmcsr::PME_STATUS,
                );
            }
            cap_id::PCI_EXPRESS => apply_pcie(space, at),
            _ => {}
        }
    }
    let extended: Vec<_> = ExtendedCapabilities::new(&*space)
        .filter_map(Result::ok)
        .collect();
    for entry in extended {
        let at = entry.offset;
        match entry.id {
            ext_cap_id::AER => {
                let capability = Aer {
                    uncorrectable_supported: ENDPOINT_UNCORRECTABLE,
                    correctable_supported: aer::correctable::ALL,
                    root_port: false,
                };
                relayout_extended(space, at, &capability);
                for register in [aer::UNCORRECTABLE_STATUS, aer::CORRECTABLE_STATUS] {
                    space.set_u32(at + register, 0);
                }
            }
            ext_cap_id::ARI => {
                let value = space.read_u16(at + ari::CAPABILITY);
                let capability = Ari {
                    next_function: (value >> ari::capability::NEXT_FUNCTION_SHIFT) as u8,
                    function_groups: value & 0b11,
                };
                relayout_extended(space, at, &capability);
            }
            ext_cap_id::SRIOV => apply_sriov(space, at),
            _ => {}
        }
    }
}

fn apply_pcie(space: &mut ConfigSpace, at: u16) {
    let capabilities = space.read_u16(at + pcie_cap::CAPABILITIES);
    let bits = ((capabilities & pcie_cap::capabilities::PORT_TYPE_MASK)
        >> pcie_cap::capabilities::PORT_TYPE_SHIFT) as u8;
    let Some(port_type) = PortType::from_bits(bits) else {
        return;
    };
    let device_capabilities = space.read_u32(at + pcie_cap::DEVICE_CAPABILITIES);
    let link_capabilities = space.read_u32(at + pcie_cap::LINK_CAPABILITIES);
    let mut capability = PcieCapability::new(port_type);
    capability.device_capabilities = device_capabilities;
    capability.max_payload_supported =
        (device_capabilities & pcie_cap::device_capabilities::MAX_PAYLOAD_SUPPORTED_MASK) as u8;
    capability.device_capabilities_2 = space.read_u32(at + pcie_cap::DEVICE_CAPABILITIES_2);
    let link_status = space.read_u16(at + pcie_cap::LINK_STATUS);
    capability.link = Some(pcie_cap::Link {
        max_speed: (link_capabilities & pcie_cap::link_capabilities::MAX_SPEED_MASK) as u8,
        max_width: ((link_capabilities & pcie_cap::link_capabilities::MAX_WIDTH_MASK)
            >> pcie_cap::link_capabilities::MAX_WIDTH_SHIFT) as u8,
        port_number: (link_capabilities >> pcie_cap::link_capabilities::PORT_NUMBER_SHIFT) as u8,
        capabilities: link_capabilities,
        current_speed: (link_status & pcie_cap::link_status::CURRENT_SPEED_MASK) as u8,
        negotiated_width: ((link_status & pcie_cap::link_status::NEGOTIATED_WIDTH_MASK)
            >> pcie_cap::link_status::NEGOTIATED_WIDTH_SHIFT) as u8,
    });
    // Only the registers up to Link Status 2 are relaid; slot and root
    // registers of a port dump keep their values, read-only.
    let mut scratch = ConfigSpace::new();
    capability.install(&mut scratch, at);
    for register in [
        pcie_cap::DEVICE_CONTROL,
        pcie_cap::LINK_CONTROL,
        pcie_cap::DEVICE_CAPABILITIES_2 + 4,
        pcie_cap::LINK_CAPABILITIES_2 + 4,
    ] {
        take_masks(space, &scratch, at + register, 4);
    }
    // Device Status events from the running system are cleared.
    space.set_u16(at + pcie_cap::DEVICE_STATUS, 0);
}

fn apply_sriov(space: &mut ConfigSpace, at: u16) {
    let capability = SrIov {
        capabilities: space.read_u32(at + sriov::CAPABILITIES),
        initial_vfs: space.read_u16(at + sriov::INITIAL_VFS),
        total_vfs: space.read_u16(at + sriov::TOTAL_VFS),
        function_dependency_link: space.read_u8(at + sriov::FUNCTION_DEPENDENCY_LINK),
        first_vf_offset: space.read_u16(at + sriov::FIRST_VF_OFFSET),
        vf_stride: space.read_u16(at + sriov::VF_STRIDE),
        vf_device_id: space.read_u16(at + sriov::VF_DEVICE_ID),
        supported_page_sizes: space.read_u32(at + sriov::SUPPORTED_PAGE_SIZES),
        // VF BAR sizes are not in a dump: the VF BARs stay read-only.
        vf_bars: [None; MAX_BARS],
        migration_state_array: space.read_u32(at + sriov::VF_MIGRATION_STATE_ARRAY_OFFSET),
    };
    let mut scratch = ConfigSpace::new();
    capability.install(&mut scratch, at);
    take_masks(space, &scratch, at + sriov::CONTROL, 4);
    take_masks(space, &scratch, at + sriov::NUM_VFS, 4);
    take_masks(space, &scratch, at + sriov::SYSTEM_PAGE_SIZE, 4);
    space.set_u16(at + sriov::CONTROL, 0);
    space.set_u16(at + sriov::NUM_VFS, 0);
}
