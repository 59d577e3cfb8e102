//! Turning an enumerated function on: Max_Payload_Size, the Command
//! register, and its interrupt messages (MSI or MSI-X), as Linux's
//! `pci_configure_device`, `pci_enable_device` and `pci_alloc_irq_vectors`
//! do.
//!
//! - Max_Payload_Size (§7.5.3.4): every function on the path from the root
//!   port down gets the smallest Max_Payload_Size Supported along that
//!   path; a bridge also no more than any function below it, so no TLP it
//!   forwards exceeds what its receiver accepts (§2.2.2). VFs use the PF's
//!   (§9.3.5.4).
//! - Command (§7.5.1.1.3): Memory Space Enable and Bus Master Enable; I/O
//!   Space stays off; INTx Disable is set once MSI or MSI-X is on.
//! - Interrupts: a function with MSI-X (§7.7.2) gets up to
//!   [`super::HostConfig::msix_vectors`] vectors, one per table entry;
//!   otherwise a function with MSI (§7.7.1) gets one vector. Bridges get
//!   MSI only for a hot-plug slot, which is what they signal.

use weft_pcie::config::header::{command, common};
use weft_pcie::config::pcie_cap::{self, device_control};
use weft_pcie::config::{msi, msix};
use weft_pcie::Bdf;

use super::access::Cpu;
use super::error::HostError;
use super::interrupts::Vector;
use super::tree::{DeviceTree, InterruptSetup};
use super::HostConfig;

/// The Max_Payload_Size (bytes) `bdf` should use.
pub fn payload_size_for(tree: &DeviceTree, bdf: Bdf) -> u16 {
    let mut size = tree.get(bdf).map_or(128, |f| f.max_payload_supported);
    for bridge in tree.path(bdf) {
        if let Some(f) = tree.get(bridge) {
            if f.capabilities.pcie.is_some() {
                size = size.min(f.max_payload_supported);
            }
        }
    }
    if tree.get(bdf).is_some_and(|f| f.bridge.is_some()) {
        for below in tree.descendants(bdf) {
            if let Some(f) = tree.get(below) {
                if f.capabilities.pcie.is_some() && !f.is_virtual() {
                    size = size.min(f.max_payload_supported);
                }
            }
        }
    }
    size
}

/// Programs Max_Payload_Size of `bdf`.
pub fn set_payload_size(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    bdf: Bdf,
) -> Result<(), HostError> {
    let Some(function) = tree.get(bdf) else {
        return Ok(());
    };
    let Some(pcie) = function.capabilities.pcie else {
        return Ok(());
    };
    if function.is_virtual() {
        return Ok(());
    }
    let bytes = payload_size_for(tree, bdf);
    let encoding = pcie_cap::payload_encoding_from_bytes(bytes).unwrap_or(0);
    let offset = pcie + pcie_cap::DEVICE_CONTROL;
    let control = cpu.config_read_u16(bdf, offset)?;
    let control = (control & !device_control::MAX_PAYLOAD_MASK)
        | u16::from(encoding) << device_control::MAX_PAYLOAD_SHIFT;
    cpu.config_write_u16(bdf, offset, control)?;
    if let Some(function) = tree.get_mut(bdf) {
        function.max_payload = bytes;
    }
    Ok(())
}

/// Sets Memory Space and Bus Master Enable (and INTx Disable when
/// `messages` is true), keeping the other Command bits.
pub fn enable(cpu: &mut Cpu<'_>, bdf: Bdf, messages: bool) -> Result<(), HostError> {
    let value = cpu.config_read_u16(bdf, common::COMMAND)?;
    let mut value = value | command::MEMORY_SPACE | command::BUS_MASTER;
    if messages {
        value |= command::INTERRUPT_DISABLE;
    }
    cpu.config_write_u16(bdf, common::COMMAND, value)?;
    Ok(())
}

/// Whether `bdf` wants message interrupts under the policy above.
fn wants_interrupts(tree: &DeviceTree, bdf: Bdf) -> bool {
    let Some(function) = tree.get(bdf) else {
        return false;
    };
    match &function.bridge {
        Some(bridge) => bridge.slot.is_some_and(|slot| slot.hot_plug),
        None => function.capabilities.msi.is_some() || function.capabilities.msix.is_some(),
    }
}

/// Allocates vectors and programs MSI-X or MSI for `bdf`.
pub fn set_up_interrupts(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    config: &HostConfig,
    bdf: Bdf,
) -> Result<(), HostError> {
    if !wants_interrupts(tree, bdf) {
        return Ok(());
    }
    let Some(function) = tree.get(bdf) else {
        return Ok(());
    };
    let caps = function.capabilities;
    let setup = if let Some(offset) = caps.msix {
        let vectors = program_msix(cpu, tree, config, bdf, offset)?;
        InterruptSetup::MsiX { vectors }
    } else if let Some(offset) = caps.msi {
        let vector = cpu
            .root_mut()
            .interrupts_mut()
            .allocate(&format!("{bdf} MSI"))?;
        program_msi(cpu, bdf, offset, vector)?;
        InterruptSetup::Msi { vector }
    } else {
        InterruptSetup::None
    };
    if let Some(function) = tree.get_mut(bdf) {
        function.interrupts = setup;
    }
    Ok(())
}

/// MSI with one vector: address, data, then MSI Enable with Multiple
/// Message Enable 0 (§7.7.1.2-5).
fn program_msi(cpu: &mut Cpu<'_>, bdf: Bdf, offset: u16, vector: Vector) -> Result<(), HostError> {
    let (address, data) = vector.message();
    let control = cpu.config_read_u16(bdf, offset + msi::MESSAGE_CONTROL)?;
    let wide = control & msi::message_control::ADDRESS_64 != 0;
    cpu.config_write(bdf, offset + msi::MESSAGE_ADDRESS, address as u32, 0b1111)?;
    let data_offset = if wide {
        cpu.config_write(
            bdf,
            offset + msi::MESSAGE_UPPER_ADDRESS,
            (address >> 32) as u32,
            0b1111,
        )?;
        offset + 0x0c
    } else {
        offset + 0x08
    };
    cpu.config_write_u16(bdf, data_offset, data as u16)?;
    let control = (control & !msi::message_control::MULTIPLE_MESSAGE_ENABLE_MASK)
        | msi::message_control::ENABLE;
    cpu.config_write_u16(bdf, offset + msi::MESSAGE_CONTROL, control)?;
    Ok(())
}

/// MSI-X: enable with the function masked, fill and unmask the entries,
/// then clear Function Mask (§7.7.2.2, §7.7.2.5).
fn program_msix(
    cpu: &mut Cpu<'_>,
    tree: &DeviceTree,
    config: &HostConfig,
    bdf: Bdf,
    offset: u16,
) -> Result<Vec<Vector>, HostError> {
    let control = cpu.config_read_u16(bdf, offset + msix::MESSAGE_CONTROL)?;
    let table_size = (control & msix::message_control::TABLE_SIZE_MASK) + 1;
    let table = cpu.config_read(bdf, offset + msix::TABLE)?;
    let bir = (table & msix::BIR_MASK) as u8;
    let Some(base) = tree
        .get(bdf)
        .and_then(|f| f.bar(bir))
        .and_then(|bar| bar.address)
    else {
        return Ok(Vec::new());
    };
    let table_address = base + u64::from(table & !msix::BIR_MASK);
    let masked = msix::message_control::ENABLE | msix::message_control::FUNCTION_MASK;
    cpu.config_write_u16(bdf, offset + msix::MESSAGE_CONTROL, control | masked)?;
    let count = table_size.min(config.msix_vectors.max(1));
    let mut vectors = Vec::new();
    for entry in 0..count {
        let vector = cpu
            .root_mut()
            .interrupts_mut()
            .allocate(&format!("{bdf} MSI-X {entry}"))?;
        let (address, data) = vector.message();
        let at = table_address + u64::from(entry) * u64::from(msix::TABLE_ENTRY_SIZE);
        cpu.write_u32(at, address as u32)?;
        cpu.write_u32(at + 4, (address >> 32) as u32)?;
        cpu.write_u32(at + 8, data)?;
        // Vector Control 0: the Mask Bit clear (§7.7.2.5).
        cpu.write_u32(at + 12, 0)?;
        vectors.push(vector);
    }
    let enabled = (control | msix::message_control::ENABLE) & !msix::message_control::FUNCTION_MASK;
    cpu.config_write_u16(bdf, offset + msix::MESSAGE_CONTROL, enabled)?;
    Ok(vectors)
}

/// Releases the vectors of a function that went away.
pub fn release_interrupts(cpu: &mut Cpu<'_>, setup: &InterruptSetup) {
    let vectors: Vec<Vector> = match setup {
        InterruptSetup::None => Vec::new(),
        InterruptSetup::Msi { vector } => vec![*vector],
        InterruptSetup::MsiX { vectors } => vectors.clone(),
    };
    for vector in vectors {
        cpu.root_mut().interrupts_mut().free(vector);
    }
}

/// Turns on every function in `list` (parents before children): MPS,
/// Command, interrupts.
pub fn configure(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    config: &HostConfig,
    list: &[Bdf],
) -> Result<(), HostError> {
    for &bdf in list {
        set_payload_size(cpu, tree, bdf)?;
        let messages = wants_interrupts(tree, bdf);
        enable(cpu, bdf, messages)?;
        set_up_interrupts(cpu, tree, config, bdf)?;
    }
    Ok(())
}
