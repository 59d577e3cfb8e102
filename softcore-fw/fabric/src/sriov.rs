//! Enabling SR-IOV on a PF during enumeration (PCIe Base 6.0 §9.3.3).
//!
//! The order is the spec's: ARI Capable Hierarchy (lowest PF of an ARI
//! device only) and NumVFs are written while VF Enable is clear, since First
//! VF Offset and VF Stride may depend on both (§9.3.3.3.5, §9.3.3.9,
//! §9.3.3.10) and are read only afterwards; the VF BARs are sized and placed,
//! one region of NumVFs × the per-VF size each, aligned to the per-VF size
//! (§9.3.3.14); then VF Enable and VF MSE are set, and the VFs are accessed
//! after the 100 ms wait of §9.3.3.3.1, with Request Retry Status retried.
//! Each VF becomes its own entry in the inventory, with its routing ID and
//! BAR addresses, so it can be bound on its own.

use weft_pcie::config::bar::{size_bar_array, MAX_BARS};
use weft_pcie::config::header::{command, common, type0};
use weft_pcie::config::sriov::{self, control, vf_routing_id, SriovError};
use weft_pcie::config::ConfigWrite;
use weft_pcie::Bdf;

use crate::enumerate::{read, At, EnumerationError, Enumerator};
use crate::hw::{ConfigFault, Fabric, FabricConfig, FunctionAccess, Timer};
use crate::inventory::{Function, FunctionKind, PlacedBar, SriovSetup};
use crate::limits::MAX_FUNCTIONS;
use crate::readiness::{read_when_ready, READINESS_TIMEOUT_NS, RESET_TO_FIRST_REQUEST_NS};

/// Byte enables of the low 16-bit register of a DW (the high one may be RW1C or another register).
const LOW_HALF: u8 = 0b0011;

impl<C, T, F> Enumerator<'_, C, T, F>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
    F: Fabric + ?Sized,
{
    /// Enables the configured number of VFs on the PF at inventory index
    /// `pf_index`, whose SR-IOV capability is at `offset`; the buses its
    /// VFs sit on are given to the port.
    pub(crate) fn enable_sriov(
        &mut self,
        at: At,
        pf_index: usize,
        offset: u16,
        lowest_ari_pf: bool,
    ) -> Result<(), EnumerationError> {
        let pf = self.inventory.functions[pf_index].id;
        let path = self.path(at, pf.bus());
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: pf,
        };
        let total_vfs = read(&mut access, offset + sriov::TOTAL_VFS)? as u16;
        let num_vfs = self.settings.num_vfs.min(total_vfs);
        let mut setup = SriovSetup {
            offset,
            total_vfs,
            num_vfs,
            first_vf_offset: 0,
            vf_stride: 0,
        };
        if num_vfs == 0 {
            self.inventory.functions[pf_index].sriov = Some(setup);
            return Ok(());
        }
        let write16 = |access: &mut FunctionAccess<'_, C>, at: u16, value: u16| {
            access
                .write_dword(at, u32::from(value), LOW_HALF)
                .map_err(|fault| EnumerationError::Config { id: pf, fault })
        };
        // NumVFs may change only with VF Enable clear (§9.3.3.7).
        let mut control_bits = read(&mut access, offset + sriov::CONTROL)? as u16;
        control_bits &= !(control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE);
        if lowest_ari_pf {
            control_bits |= control::ARI_CAPABLE_HIERARCHY;
        }
        write16(&mut access, offset + sriov::CONTROL, control_bits)?;
        write16(&mut access, offset + sriov::NUM_VFS, num_vfs)?;
        let routing = read(&mut access, offset + sriov::FIRST_VF_OFFSET)?;
        setup.first_vf_offset = routing as u16;
        setup.vf_stride = (routing >> 16) as u16;
        if setup.vf_stride == 0 && num_vfs > 1 {
            return Err(EnumerationError::Sriov {
                id: pf,
                error: SriovError::ZeroStride,
            });
        }
        let vf_bar0 = offset + sriov::VF_BAR0;
        let decoded = size_bar_array(&mut access, vf_bar0, MAX_BARS as u8)
            .map_err(|error| EnumerationError::BarSizing { id: pf, error })?;
        let mut vf_bars: heapless::Vec<PlacedBar, MAX_BARS> = heapless::Vec::new();
        for bar in decoded.iter().flatten() {
            let host_register = type0::BAR0 + (bar.register - vf_bar0);
            let placed = self.place_bar(at, pf, bar, host_register, bar.bar.size, num_vfs)?;
            // At most six VF BARs were decoded.
            let _ = vf_bars.push(placed);
        }
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: pf,
        };
        let vf_device_id = read(&mut access, offset + sriov::VF_DEVICE_ID)? as u16;
        control_bits |= control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE;
        write16(&mut access, offset + sriov::CONTROL, control_bits)?;
        self.inventory.functions[pf_index].sriov = Some(setup);

        // §9.3.3.3.1: wait 100 ms after VF Enable before accessing the VFs.
        let enabled_at = self.timer.now_ns();
        self.timer
            .wait_until_ns(enabled_at.saturating_add(RESET_TO_FIRST_REQUEST_NS));
        let deadline = enabled_at.saturating_add(READINESS_TIMEOUT_NS);
        let vendor_id = self.inventory.functions[pf_index].vendor_id;
        for vf in 1..=num_vfs {
            let id = vf_routing_id(pf, setup.first_vf_offset, setup.vf_stride, vf)
                .map_err(|error| EnumerationError::Sriov { id: pf, error })?;
            // VFs may sit on buses after the PF's (§9.3.3.9).
            self.claim_bus(at, id.bus())?;
            let path = self.path(at, id.bus());
            if read_when_ready(self.config, self.timer, path, id, 0, deadline)
                .map_err(EnumerationError::Readiness)?
                .is_none()
            {
                return Err(EnumerationError::Config {
                    id,
                    fault: ConfigFault::UnsupportedRequest,
                });
            }
            self.add_vf(at, pf, id, vf, vendor_id, vf_device_id, &vf_bars)?;
        }
        Ok(())
    }

    /// Records VF `vf` at `id` and enables its bus mastering (a VF's Memory
    /// Space Enable is the PF's VF MSE, §9.3.4.1.3).
    #[allow(clippy::too_many_arguments)]
    fn add_vf(
        &mut self,
        at: At,
        pf: Bdf,
        id: Bdf,
        vf: u16,
        vendor_id: u16,
        device_id: u16,
        vf_bars: &[PlacedBar],
    ) -> Result<(), EnumerationError> {
        let path = self.path(at, id.bus());
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: id,
        };
        let class_code = read(&mut access, common::REVISION_ID)? >> 8;
        let current = read(&mut access, common::COMMAND)? as u16;
        access
            .write_dword(
                common::COMMAND,
                u32::from(current | command::BUS_MASTER),
                LOW_HALF,
            )
            .map_err(|fault| EnumerationError::Config { id, fault })?;
        let mut bars = heapless::Vec::new();
        for bar in vf_bars {
            let fabric_address = bar
                .fabric_address()
                .map(|base| base + u64::from(vf - 1) * bar.size());
            // vf_bars holds at most MAX_BARS entries, as bars does.
            let _ = bars.push(bar.at(fabric_address));
        }
        self.inventory
            .functions
            .push(Function {
                id,
                switch: at.switch,
                port: at.port,
                kind: FunctionKind::Virtual { pf, vf },
                vendor_id,
                device_id,
                class_code,
                bars,
                sriov: None,
                acs: None,
                bridge: self.bridge,
                binding: None,
            })
            .map_err(|_| EnumerationError::TooManyFunctions {
                capacity: MAX_FUNCTIONS,
            })
    }
}
