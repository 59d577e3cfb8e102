//! Enabling SR-IOV VFs from the host, as writing Linux's `sriov_numvfs`
//! does: set NumVFs, read where the VFs land, set VF Enable and VF Memory
//! Space Enable, wait, then add each VF as a function with its share of
//! the VF BARs reserved at enumeration (PCIe Base 6.0 §9.3.3).

use std::time::Duration;

use weft_pcie::config::sriov;
use weft_pcie::Bdf;

use super::access::Cpu;
use super::error::HostError;
use super::scan::Scan;
use super::setup::{configure, release_interrupts};
use super::tree::{BarInfo, DeviceTree};
use super::HostConfig;

/// How long software waits after setting VF Enable before it sends
/// configuration requests to the VFs (§9.3.3.3.1: 100 ms).
pub const VF_ENABLE_DELAY: Duration = Duration::from_millis(100);

/// Removes every VF of `pf` and clears VF Enable.
pub fn disable_vfs(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    pf: Bdf,
) -> Result<Vec<Bdf>, HostError> {
    let Some(info) = tree.get(pf).and_then(|f| f.sriov.clone()) else {
        return Err(HostError::NotSriovCapable { bdf: pf });
    };
    let vfs: Vec<Bdf> = tree
        .iter()
        .filter(|f| f.physical_function == Some(pf))
        .map(|f| f.bdf)
        .collect();
    for vf in &vfs {
        for gone in tree.remove_subtree(*vf) {
            release_interrupts(cpu, &gone.interrupts);
        }
    }
    cpu.config_write_u16(pf, info.offset + sriov::CONTROL, 0)?;
    if let Some(sriov) = tree.get_mut(pf).and_then(|f| f.sriov.as_mut()) {
        sriov.num_vfs = 0;
    }
    Ok(vfs)
}

/// Enables `num_vfs` VFs of `pf` (disabling any first) and enumerates
/// them; returns their routing IDs. `num_vfs == 0` only disables.
pub fn set_num_vfs(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    config: &HostConfig,
    pf: Bdf,
    num_vfs: u16,
) -> Result<Vec<Bdf>, HostError> {
    let function = tree.get(pf).ok_or(HostError::NoSuchFunction { bdf: pf })?;
    let info = function
        .sriov
        .clone()
        .ok_or(HostError::NotSriovCapable { bdf: pf })?;
    let parent = function.parent;
    let vendor_id = function.vendor_id;
    if num_vfs > info.total_vfs {
        return Err(HostError::TooManyVfs {
            bdf: pf,
            requested: num_vfs,
            total: info.total_vfs,
        });
    }
    if info.num_vfs > 0 {
        disable_vfs(cpu, tree, pf)?;
    }
    if num_vfs == 0 {
        return Ok(Vec::new());
    }
    // NumVFs first: First VF Offset and VF Stride may depend on it
    // (§9.3.3.7, §9.3.3.9-10).
    cpu.config_write_u16(pf, info.offset + sriov::NUM_VFS, num_vfs)?;
    let routing = cpu.config_read(pf, info.offset + sriov::FIRST_VF_OFFSET)?;
    let (offset, stride) = (routing as u16, (routing >> 16) as u16);
    let vfs: Vec<Bdf> = (1..=num_vfs)
        .filter_map(|vf| sriov::vf_routing_id(pf, offset, stride, vf).ok())
        .collect();
    let subordinate = parent
        .and_then(|p| tree.get(p))
        .and_then(|f| f.bridge.as_ref())
        .map_or(0, |b| b.subordinate);
    if let Some(last) = vfs.last() {
        if parent.is_some() && last.bus() > subordinate {
            cpu.config_write_u16(pf, info.offset + sriov::NUM_VFS, 0)?;
            return Err(HostError::VfBusOutOfRange {
                bdf: pf,
                bus: last.bus(),
                subordinate,
            });
        }
    }
    let control = sriov::control::VF_ENABLE | sriov::control::VF_MEMORY_SPACE_ENABLE;
    cpu.config_write_u16(pf, info.offset + sriov::CONTROL, control)?;
    cpu.sleep(VF_ENABLE_DELAY);
    for (index, &vf) in vfs.iter().enumerate() {
        // A VF's Vendor and Device ID read FFFFh: software takes them from
        // the PF and its SR-IOV capability (§9.3.4.1.1-2).
        let dw0 = u32::from(vendor_id) | u32::from(info.vf_device_id) << 16;
        let mut function = Scan::new(cpu, tree, config).discover(vf, dw0, parent)?;
        function.physical_function = Some(pf);
        function.bars = info
            .vf_bars
            .iter()
            .map(|bar| BarInfo {
                address: bar.address.map(|base| base + index as u64 * bar.size),
                ..*bar
            })
            .collect();
        tree.insert(function);
        configure(cpu, tree, config, &[vf])?;
    }
    if let Some(sriov) = tree.get_mut(pf).and_then(|f| f.sriov.as_mut()) {
        sriov.num_vfs = num_vfs;
    }
    Ok(vfs)
}
