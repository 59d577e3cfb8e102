//! The fabric's configuration: which ports face hosts, how many slots each
//! host's virtual switch has, how many VFs to enable, where BARs go.

use heapless::Vec;
use weft_pcie::config::function::CLASS_PCI_BRIDGE;
use weft_pcie::config::FunctionIdentity;
use weft_pcie::Bdf;

use crate::address::AddressPlan;
use crate::limits::{MAX_HOST_PORTS, MAX_SLOTS_PER_HOST, MAX_SRIOV_PFS};
use weft_regs::tables::{HostIndex, PortIndex};

/// One host port and the virtual switch presented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPort {
    /// The switch ID of the switch the port is on: the manager's own
    /// ([`FabricSettings::switch_id`]) or any other of the fabric, whose
    /// tables for the host are written in-band like its routes.
    pub switch: u64,
    /// The switch port the host's root port is linked to.
    pub port: PortIndex,
    /// The host's index, selecting its aperture.
    pub host: HostIndex,
    /// Virtual downstream ports (slots) of its virtual switch.
    pub slots: u8,
}

/// NumVFs of one PF, in place of [`FabricSettings::num_vfs`]: a change
/// made at run time, kept so that a saved configuration brings it back.
/// The PF is known by its fabric ID, vendor and device ID, so another
/// device at that ID after a restart does not take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfVfs {
    /// The PF's fabric ID.
    pub function: Bdf,
    /// Its vendor ID.
    pub vendor_id: u16,
    /// Its device ID.
    pub device_id: u16,
    /// Its NumVFs.
    pub num_vfs: u16,
}

/// The identity the virtual switch ports report when no other is configured.
///
/// Vendor ID 0xFFFF is the value no function may report (§7.5.1.1.1), so a
/// deployment must configure its own IDs; tests and the simulator do.
pub const UNCONFIGURED_IDENTITY: FunctionIdentity = FunctionIdentity {
    vendor_id: 0xffff,
    device_id: 0xffff,
    revision_id: 0,
    class_code: CLASS_PCI_BRIDGE,
};

/// Everything the fabric manager is told rather than discovers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricSettings {
    /// The switch ID of the switch the manager runs on (the one its
    /// identity VSEC shows its neighbours), so a loop back to it is known.
    pub switch_id: u64,
    /// The manager's own fabric ID: requester of its configuration requests
    /// and completer of what endpoint ports synthesize. Bus routes send its
    /// bus to the CPU, so it is bus 0 unless configured otherwise.
    pub manager_id: Bdf,
    /// The host ports, on any switch of the fabric; hosts get proxy buses
    /// in this order, right after the manager's bus.
    pub hosts: Vec<HostPort, MAX_HOST_PORTS>,
    /// VFs to enable on every SR-IOV PF (clamped to its TotalVFs; 0 leaves SR-IOV off).
    pub num_vfs: u16,
    /// PFs whose NumVFs differs from [`FabricSettings::num_vfs`].
    pub pf_vfs: Vec<PfVfs, MAX_SRIOV_PFS>,
    /// Where BARs are placed.
    pub address_plan: AddressPlan,
    /// Vendor, device, revision and class of each virtual upstream port.
    pub upstream_identity: FunctionIdentity,
    /// Vendor, device, revision and class of each virtual downstream port.
    pub downstream_identity: FunctionIdentity,
}

impl FabricSettings {
    /// No hosts, switch ID 0, the manager at bus 0, no VFs, the default
    /// address plan and unconfigured identities.
    pub const DEFAULT: FabricSettings = FabricSettings {
        switch_id: 0,
        manager_id: Bdf::new(0, 0, 0),
        hosts: Vec::new(),
        num_vfs: 0,
        pf_vfs: Vec::new(),
        address_plan: AddressPlan::DEFAULT,
        upstream_identity: UNCONFIGURED_IDENTITY,
        downstream_identity: UNCONFIGURED_IDENTITY,
    };
}

impl Default for FabricSettings {
    fn default() -> Self {
        FabricSettings::DEFAULT
    }
}

impl FabricSettings {
    /// The NumVFs to enable on the PF `function` with `vendor_id` and
    /// `device_id`: its own ([`FabricSettings::pf_vfs`]) or the fabric-wide one.
    pub fn num_vfs_for(&self, function: Bdf, vendor_id: u16, device_id: u16) -> u16 {
        self.pf_vfs
            .iter()
            .find(|p| (p.function, p.vendor_id, p.device_id) == (function, vendor_id, device_id))
            .map_or(self.num_vfs, |p| p.num_vfs)
    }

    /// Keeps `pf`'s NumVFs apart from the fabric-wide one; `Err` when
    /// [`MAX_SRIOV_PFS`] other PFs are kept already.
    pub fn keep_pf_vfs(&mut self, pf: PfVfs) -> Result<(), PfVfs> {
        let same = |p: &PfVfs| (p.function, p.vendor_id, p.device_id);
        match self.pf_vfs.iter_mut().find(|p| same(p) == same(&pf)) {
            Some(kept) => {
                kept.num_vfs = pf.num_vfs;
                Ok(())
            }
            None => self.pf_vfs.push(pf),
        }
    }

    /// The host port configuration of `port` of switch `switch`, if it faces a host.
    pub fn host_port(&self, switch: u64, port: PortIndex) -> Option<&HostPort> {
        self.hosts
            .iter()
            .find(|h| h.switch == switch && h.port == port)
    }
}

/// Why a host port cannot be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostPortError {
    /// A virtual switch has 1 to [`MAX_SLOTS_PER_HOST`] slots.
    Slots(u8),
    /// [`MAX_HOST_PORTS`] host ports are set already.
    Full,
}

/// Makes `port` of switch `switch` a host port with `slots` slots in
/// `hosts`, or changes the slots of the one it is. A new host port takes
/// the lowest host index no other has: a host's index picks its aperture
/// and names it in saved bindings, so one set before keeps its own.
pub fn set_host_port(
    hosts: &mut Vec<HostPort, MAX_HOST_PORTS>,
    switch: u64,
    port: PortIndex,
    slots: u8,
) -> Result<HostIndex, HostPortError> {
    if slots == 0 || usize::from(slots) > MAX_SLOTS_PER_HOST {
        return Err(HostPortError::Slots(slots));
    }
    if let Some(set) = hosts
        .iter_mut()
        .find(|h| h.switch == switch && h.port == port)
    {
        set.slots = slots;
        return Ok(set.host);
    }
    let host = (0..)
        .map(HostIndex)
        .find(|index| hosts.iter().all(|h| h.host != *index))
        .expect("fewer host ports than indices");
    hosts
        .push(HostPort {
            switch,
            port,
            host,
            slots,
        })
        .map_err(|_| HostPortError::Full)?;
    Ok(host)
}

/// Takes `port` of switch `switch` out of `hosts`; whether it was a host port.
pub fn remove_host_port(
    hosts: &mut Vec<HostPort, MAX_HOST_PORTS>,
    switch: u64,
    port: PortIndex,
) -> bool {
    let before = hosts.len();
    hosts.retain(|h| !(h.switch == switch && h.port == port));
    hosts.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_host_port_takes_the_lowest_free_index_and_a_set_one_keeps_its_own() {
        let mut hosts = Vec::new();
        let (a, b) = (PortIndex(0), PortIndex(3));
        assert_eq!(set_host_port(&mut hosts, 1, a, 4), Ok(HostIndex(0)));
        assert_eq!(set_host_port(&mut hosts, 1, b, 2), Ok(HostIndex(1)));
        assert_eq!(set_host_port(&mut hosts, 1, a, 8), Ok(HostIndex(0)));
        assert_eq!(hosts[0].slots, 8);
        assert!(remove_host_port(&mut hosts, 1, a));
        assert!(!remove_host_port(&mut hosts, 1, a));
        // The same port number on another switch is another host port.
        assert_eq!(set_host_port(&mut hosts, 2, b, 1), Ok(HostIndex(0)));
        assert_eq!(hosts.len(), 2);
    }

    #[test]
    fn slots_out_of_range_and_a_full_list_are_refused() {
        let mut hosts = Vec::new();
        assert_eq!(
            set_host_port(&mut hosts, 1, PortIndex(0), 0),
            Err(HostPortError::Slots(0))
        );
        let too_many = MAX_SLOTS_PER_HOST as u8 + 1;
        assert_eq!(
            set_host_port(&mut hosts, 1, PortIndex(0), too_many),
            Err(HostPortError::Slots(too_many))
        );
        for port in 0..MAX_HOST_PORTS as u8 {
            assert!(set_host_port(&mut hosts, 1, PortIndex(port), 1).is_ok());
        }
        assert_eq!(
            set_host_port(&mut hosts, 1, PortIndex(99), 1),
            Err(HostPortError::Full)
        );
        assert_eq!(hosts.len(), MAX_HOST_PORTS);
    }
}
