//! Every host port of the fabric as one [`HostInterface`]: the manager's
//! own switch's, and those of the other weft switches, whose mailboxes and
//! injectors the manager reaches in-band.
//!
//! A host linked to another weft switch puts its configuration requests
//! into that switch's mailbox (its host port sends them to the CPU, as the
//! manager's own switch does). The manager reads that mailbox and answers
//! through that switch's injector with the register accesses it makes on
//! its own CSR bus ([`CsrMailbox`]), each a memory request to the switch's
//! management BAR ([`InbandCsr`], `weft_fabric::inband`), as it writes the
//! switch's tables. A remote mailbox raises no interrupt at the manager's
//! CPU: [`FabricHosts::receive`] polls it, one in-band read of its status
//! when the local mailbox and the remote mailboxes before it are empty.

use weft_fabric::hw::{
    FabricMemory, HostConfigRequest, HostInterface, HostSendError, RemoteSwitch, Timer,
};
use weft_fabric::inband::InbandCsr;
use weft_fabric::limits::MAX_HOST_PORTS;
use weft_fabric::manager::FabricManager;
use weft_pcie::config::msi::MsiMessage;
use weft_pcie::tlp::Completion;
use weft_pcie::Bdf;
use weft_regs::tables::PortIndex;

use crate::mailbox::CsrMailbox;

/// How often a manager reads the mailboxes of other switches with host
/// ports when nothing else wakes it: a remote host's configuration request
/// waits up to this long before it is read (its Completion Timeout
/// defaults to 50 µs–50 ms, PCIe Base 6.0 §7.5.3.16, and root complexes
/// wait milliseconds), and each poll, an in-band read per remote switch,
/// costs a few microseconds of fabric round trip.
pub const REMOTE_MAILBOX_POLL_NS: u64 = 50_000;

/// A remote switch's mailbox and injector, in-band.
pub type RemoteMailbox<M, T> = CsrMailbox<InbandCsr<M>, T>;

/// The host interface `L` of the manager's own switch, and the mailboxes of
/// other switches with host ports (at most one per host port,
/// [`MAX_HOST_PORTS`]).
pub struct FabricHosts<L, M, T> {
    local: L,
    local_switch: u64,
    remotes: heapless::Vec<(u64, RemoteMailbox<M, T>), MAX_HOST_PORTS>,
    /// The remote mailbox [`HostInterface::receive`] looks at first, so
    /// that a busy switch does not starve the others.
    next: usize,
}

/// Why a remote switch's mailbox was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteMailboxError {
    /// Discovery has not given the switch a management BAR (yet).
    NoManagementBar(u64),
    /// [`MAX_HOST_PORTS`] remote mailboxes are read already.
    Full(u64),
}

impl<L: HostInterface, M: FabricMemory, T: Timer> FabricHosts<L, M, T> {
    /// The hosts of `local`, the host interface of the manager's own switch
    /// (switch ID `local_switch`), and of no other switch yet.
    pub fn new(local: L, local_switch: u64) -> Self {
        FabricHosts {
            local,
            local_switch,
            remotes: heapless::Vec::new(),
            next: 0,
        }
    }

    /// Reads the mailbox of `switch` too, in-band through `memory`, for
    /// the manager whose fabric ID is `manager`; `timer` is the manager's
    /// clock. A switch already read is not added twice.
    pub fn add_remote(
        &mut self,
        switch: RemoteSwitch,
        memory: M,
        timer: T,
        manager: Bdf,
    ) -> Result<(), RemoteMailboxError> {
        if self.remotes.iter().any(|(id, _)| *id == switch.id) {
            return Ok(());
        }
        let bar = switch
            .management_bar
            .ok_or(RemoteMailboxError::NoManagementBar(switch.id))?;
        let csr = InbandCsr::new(memory, switch.via, bar);
        self.remotes
            .push((switch.id, CsrMailbox::new(csr, timer, switch.id, manager)))
            .map_err(|_| RemoteMailboxError::Full(switch.id))
    }

    /// The hosts of `manager`'s configuration: its own switch's through
    /// `local`, and every other switch's that discovery reached, through a
    /// mailbox read in-band over `memory()` on `timer()` (one of each per
    /// remote switch). A host port on a switch not found, or not yet given
    /// a management BAR, has no mailbox to read and is left out.
    pub fn of_manager(
        manager: &FabricManager,
        local: L,
        mut memory: impl FnMut() -> M,
        mut timer: impl FnMut() -> T,
    ) -> Self {
        let settings = manager.settings();
        let inventory = manager.inventory();
        let mut hosts = FabricHosts::new(local, settings.switch_id);
        for host in &settings.hosts {
            let remote = inventory
                .switch_index(host.switch)
                .and_then(|index| inventory.remote_switch(index));
            if let Some(remote) = remote {
                // At most one per host port: there is room for each.
                let _ = hosts.add_remote(remote, memory(), timer(), settings.manager_id);
            }
        }
        hosts
    }

    /// The local host interface, given back.
    pub fn into_local(self) -> L {
        self.local
    }

    /// The host interface of the switch whose ID is `switch`.
    fn of(
        &mut self,
        switch: u64,
        port: PortIndex,
    ) -> Result<&mut dyn HostInterface, HostSendError> {
        if switch == self.local_switch {
            return Ok(&mut self.local);
        }
        self.remotes
            .iter_mut()
            .find(|(id, _)| *id == switch)
            .map(|(_, mailbox)| mailbox as &mut dyn HostInterface)
            .ok_or(HostSendError::NoSuchPort(port))
    }
}

impl<L: HostInterface, M: FabricMemory, T: Timer> HostInterface for FabricHosts<L, M, T> {
    /// The local mailbox's next request, else the first remote mailbox's,
    /// from the one after the last that had one.
    fn receive(&mut self) -> Option<HostConfigRequest> {
        if let Some(request) = self.local.receive() {
            return Some(request);
        }
        let count = self.remotes.len();
        for step in 0..count {
            let at = (self.next + step) % count;
            if let Some(request) = self.remotes[at].1.receive() {
                self.next = (at + 1) % count;
                return Some(request);
            }
        }
        None
    }

    fn complete(
        &mut self,
        switch: u64,
        port: PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError> {
        self.of(switch, port)?
            .complete(switch, port, completion, data)
    }

    fn send_msi(
        &mut self,
        switch: u64,
        port: PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError> {
        self.of(switch, port)?
            .send_msi(switch, port, requester, message)
    }
}
