//! Remote switches' tables written in-band: each register access to
//! another weft switch's CSR window becomes a one-DW memory request to
//! that switch's management BAR, sent by the management CPU into the
//! fabric ([`FabricMemory`]).
//!
//! Discovery gives every remote switch's management function a memory
//! BAR over its CSR window and routes it there
//! ([`crate::inventory::FabricSwitch::management_bar`]); a memory request
//! arriving at the switch in that BAR is executed against its window
//! rather than routed on (`weft_regs::csr::global::MANAGEMENT_BAR_LOW`).
//! So the register-level driver the firmware runs on its own CSR bus,
//! `weft_regs::driver::CsrDataPlane`, drives a remote switch unchanged
//! over [`InbandCsr`]: a register at CSR address `a` is the DW at
//! `bar + (a - CSR_BASE)`. Writes are posted and cost one TLP; reads (the
//! identity check, read-modify-writes of port controls, counters) wait
//! for their completion as configuration reads do.
//!
//! A failed access (a read answered with an error status or not at all, a
//! write the injector would not take) makes the table write that made it
//! fail with [`TableWriteError::InBand`], naming the register.

use weft_regs::csr;
use weft_regs::driver::{CsrBus, CsrDataPlane};
use weft_regs::tables::{DataPlane, DataPlaneAccess, PortIndex, TableWriteError};

use crate::hw::{Fabric, FabricMemory, RemoteSwitch};
use crate::limits::MAX_SWITCHES;

/// A remote switch's CSR window as a [`CsrBus`], through its management BAR.
pub struct InbandCsr<M> {
    memory: M,
    via: PortIndex,
    bar: u64,
    /// The CSR address of the first access that failed since the last look.
    failed: Option<u32>,
}

impl<M: FabricMemory> InbandCsr<M> {
    /// The window whose management BAR is at fabric address `bar`, reached
    /// by requests out of `via` of the manager's switch.
    pub fn new(memory: M, via: PortIndex, bar: u64) -> Self {
        InbandCsr {
            memory,
            via,
            bar,
            failed: None,
        }
    }

    /// The fabric address of CSR address `address`.
    fn fabric_address(&self, address: u32) -> u64 {
        self.bar + u64::from(address.wrapping_sub(csr::CSR_BASE))
    }

    /// The CSR address of the first access that failed since the last
    /// call, if one did.
    pub fn take_failure(&mut self) -> Option<u32> {
        self.failed.take()
    }
}

impl<M: FabricMemory> CsrBus for InbandCsr<M> {
    /// A read that does not complete successfully reads all ones, as a
    /// root complex returns it (PCIe Base 6.0 §2.3.2), and is remembered.
    fn read32(&mut self, address: u32) -> u32 {
        let at = self.fabric_address(address);
        match self.memory.read_memory(self.via, at) {
            Ok(value) => value,
            Err(_) => {
                self.failed.get_or_insert(address);
                u32::MAX
            }
        }
    }

    fn write32(&mut self, address: u32, value: u32) {
        let at = self.fabric_address(address);
        if self.memory.write_memory(self.via, at, value).is_err() {
            self.failed.get_or_insert(address);
        }
    }
}

/// A remote switch's tables, written in-band.
pub struct InbandPlane<M>(CsrDataPlane<InbandCsr<M>>);

impl<M: FabricMemory> InbandPlane<M> {
    /// The data plane behind `csr`, once its identity registers show a
    /// weft data plane of this register map (`CsrDataPlane::new`); `None`
    /// if they do not, or could not be read.
    pub fn new(csr: InbandCsr<M>) -> Option<Self> {
        let mut plane = CsrDataPlane::new(csr).ok()?;
        plane
            .bus()
            .take_failure()
            .is_none()
            .then_some(InbandPlane(plane))
    }
}

/// Each table access fails if a register access it made failed.
impl<M: FabricMemory> DataPlaneAccess for InbandPlane<M> {
    fn port_count(&self) -> usize {
        self.0.ports()
    }

    fn access<R>(
        &mut self,
        access: impl FnOnce(&mut dyn DataPlane) -> Result<R, TableWriteError>,
    ) -> Result<R, TableWriteError> {
        let result = access(&mut self.0);
        match self.0.bus().take_failure() {
            Some(address) => Err(TableWriteError::InBand { address }),
            None => result,
        }
    }
}

/// Every remote switch's tables, in-band over `M`. The plane of each
/// switch asked for is kept, so its identity is checked once.
pub struct InbandPlanes<M> {
    memory: M,
    planes: heapless::Vec<(RemoteSwitch, InbandPlane<M>), MAX_SWITCHES>,
}

impl<M: FabricMemory + Clone> InbandPlanes<M> {
    /// Remote switches reached through `memory`.
    pub fn new(memory: M) -> Self {
        InbandPlanes {
            memory,
            planes: heapless::Vec::new(),
        }
    }

    /// The tables of `switch`, if discovery gave it a management BAR and a
    /// weft data plane of this register map answers there.
    pub fn plane(&mut self, switch: RemoteSwitch) -> Option<&mut InbandPlane<M>> {
        let bar = switch.management_bar?;
        let known = self.planes.iter().position(|(at, _)| at.id == switch.id);
        let index = match known {
            Some(index) if self.planes[index].0 == switch => index,
            _ => {
                // A switch whose way or BAR changed (a new discovery) is checked again.
                if let Some(index) = known {
                    self.planes.swap_remove(index);
                }
                let csr = InbandCsr::new(self.memory.clone(), switch.via, bar);
                let plane = InbandPlane::new(csr)?;
                if self.planes.is_full() {
                    self.planes.swap_remove(0);
                }
                // There is room: one was just made if there was none.
                let _ = self.planes.push((switch, plane));
                self.planes.len() - 1
            }
        };
        self.planes.get_mut(index).map(|(_, plane)| plane)
    }
}

/// The manager's own switch's tables `local`, reached directly, and every
/// other switch's in-band ([`InbandPlanes`]).
pub struct InbandFabric<'a, L, M> {
    local: &'a mut L,
    remotes: InbandPlanes<M>,
}

impl<'a, L: DataPlane, M: FabricMemory + Clone> InbandFabric<'a, L, M> {
    /// The fabric whose manager's switch has the tables `local`, and whose
    /// memory requests `memory` sends.
    pub fn new(local: &'a mut L, memory: M) -> Self {
        InbandFabric {
            local,
            remotes: InbandPlanes::new(memory),
        }
    }
}

impl<L: DataPlane, M: FabricMemory + Clone> Fabric for InbandFabric<'_, L, M> {
    fn local(&mut self) -> &mut dyn DataPlane {
        self.local
    }

    fn remote(&mut self, switch: RemoteSwitch) -> Option<&mut dyn DataPlane> {
        self.remotes
            .plane(switch)
            .map(|plane| plane as &mut dyn DataPlane)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::cell::RefCell;
    use std::rc::Rc;

    use weft_model::{CsrWindow, Packet, Switch};
    use weft_pcie::tlp::{
        AddressType, Attributes, Body, CompletionStatus, Header, MemoryOp, MemoryRequest, Tag,
        TrafficClass,
    };
    use weft_pcie::Bdf;
    use weft_regs::csr::{bus_route, global, port};
    use weft_regs::tables::{Destination, PortRole};

    use super::*;
    use crate::hw::ConfigFault;

    /// Where the remote switch's management BAR is.
    const BAR: u64 = 0xffd0_0000;
    /// The remote switch's port its link to the manager's switch ends on.
    const FABRIC_PORT: PortIndex = PortIndex(1);

    /// A remote switch (weft-model's CSR window) one link away, its BAR
    /// at [`BAR`]: each memory request crosses to its fabric port as a TLP.
    #[derive(Clone)]
    struct OneLinkAway(Rc<RefCell<CsrWindow>>);

    impl OneLinkAway {
        fn new() -> Self {
            let mut csr = CsrWindow::new(Switch::new(4));
            let fabric = port::ENABLE.encode(1) | port::ROLE.encode(port::ROLE_FABRIC);
            csr.write32(port::CONTROL.address(u32::from(FABRIC_PORT.0), 0), fabric);
            // What the port's configuration logic holds once discovery assigned the BAR.
            let enable = global::MANAGEMENT_ENABLE.encode(1 << FABRIC_PORT.0);
            csr.write32(
                global::MANAGEMENT_BAR_LOW.address(0, 0),
                BAR as u32 | enable,
            );
            OneLinkAway(Rc::new(RefCell::new(csr)))
        }

        /// Sends a memory request and returns the completion's status and data, if any came.
        fn send(
            &mut self,
            op: MemoryOp,
            address: u64,
            data: &[u8],
        ) -> Option<(CompletionStatus, u32)> {
            let request = MemoryRequest {
                op,
                traffic_class: TrafficClass::default(),
                attributes: Attributes::default(),
                address_type: AddressType::default(),
                requester: Bdf::new(0, 0, 0),
                tag: Tag::from_8bit(1),
                address,
                length_dw: 1,
                first_be: 0xf,
                last_be: 0,
                processing_hint: None,
            };
            let header = Header {
                digest_present: false,
                poisoned: false,
                body: Body::Memory(request),
            };
            let bytes = Packet::new(header, data.to_vec())
                .to_bytes()
                .expect("well-formed");
            let forwarding = self
                .0
                .borrow_mut()
                .forward(FABRIC_PORT, &bytes)
                .expect("port");
            forwarding
                .deliveries
                .iter()
                .find_map(|delivery| match delivery.packet.header.body {
                    Body::Completion(completion) => {
                        let data = delivery
                            .packet
                            .payload
                            .get(..4)
                            .map_or(0, |dw| u32::from_le_bytes(dw.try_into().expect("one DW")));
                        Some((completion.status, data))
                    }
                    _ => None,
                })
        }
    }

    impl FabricMemory for OneLinkAway {
        fn read_memory(&mut self, _via: PortIndex, address: u64) -> Result<u32, ConfigFault> {
            match self.send(MemoryOp::Read, address, &[]) {
                Some((CompletionStatus::Successful, data)) => Ok(data),
                Some(_) => Err(ConfigFault::CompleterAbort),
                None => Err(ConfigFault::Timeout),
            }
        }

        fn write_memory(
            &mut self,
            _via: PortIndex,
            address: u64,
            value: u32,
        ) -> Result<(), ConfigFault> {
            self.send(MemoryOp::Write, address, &value.to_le_bytes());
            Ok(())
        }
    }

    #[test]
    fn table_writes_reach_the_remote_switchs_tables_through_its_bar() {
        let remote = OneLinkAway::new();
        let mut planes = InbandPlanes::new(remote.clone());
        let switch = RemoteSwitch {
            id: 0x20,
            via: PortIndex(3),
            management_bar: Some(BAR),
        };
        let plane = planes.plane(switch).expect("a weft data plane answers");
        assert_eq!(plane.ports(), 4);
        plane
            .set_bus_route(5, Some(Destination::Port(PortIndex(2))))
            .expect("written");
        let role = PortRole::Endpoint {
            owner: None,
            buses: (5, 6),
        };
        plane.set_port_role(PortIndex(2), role).expect("written");
        let csr = remote.0.borrow();
        let tables = csr.switch();
        assert_eq!(
            tables.routes().buses[5],
            Some(Destination::Port(PortIndex(2)))
        );
        assert_eq!(tables.port_tables(PortIndex(2)).expect("port").role, role);
        assert!(csr.stray_accesses().is_empty());
        assert!(csr.refused_management_writes().is_empty());
    }

    #[test]
    fn a_switch_without_a_bar_or_a_weft_window_behind_it_is_not_reached() {
        let mut planes = InbandPlanes::new(OneLinkAway::new());
        let mut switch = RemoteSwitch {
            id: 0x20,
            via: PortIndex(3),
            management_bar: None,
        };
        assert!(planes.plane(switch).is_none(), "no BAR assigned");
        // One MiB below the BAR nothing answers: the identity read times out.
        switch.management_bar = Some(BAR - 0x10_0000);
        assert!(planes.plane(switch).is_none());
    }

    /// [`OneLinkAway`], counting the reads that cross the link.
    #[derive(Clone)]
    struct CountingReads(OneLinkAway, Rc<core::cell::Cell<usize>>);

    impl FabricMemory for CountingReads {
        fn read_memory(&mut self, via: PortIndex, address: u64) -> Result<u32, ConfigFault> {
            self.1.set(self.1.get() + 1);
            self.0.read_memory(via, address)
        }

        fn write_memory(&mut self, via: PortIndex, at: u64, value: u32) -> Result<(), ConfigFault> {
            self.0.write_memory(via, at, value)
        }
    }

    #[test]
    fn each_switchs_identity_is_read_once_until_its_way_changes() {
        let reads = Rc::new(core::cell::Cell::new(0));
        let mut planes = InbandPlanes::new(CountingReads(OneLinkAway::new(), reads.clone()));
        let switch = RemoteSwitch {
            id: 0x20,
            via: PortIndex(3),
            management_bar: Some(BAR),
        };
        planes.plane(switch).expect("reached");
        let identity = reads.get();
        assert!(identity > 0, "the identity registers are read");
        // Another switch in between (the same model behind the same BAR will do).
        let other = RemoteSwitch { id: 0x30, ..switch };
        planes.plane(other).expect("reached");
        planes.plane(switch).expect("reached");
        assert_eq!(reads.get(), 2 * identity, "read once for each switch");
        planes
            .plane(RemoteSwitch {
                via: PortIndex(2),
                ..switch
            })
            .expect("reached");
        assert_eq!(reads.get(), 3 * identity, "a new way is checked again");
    }

    /// Memory whose reads succeed, one link away, and whose writes cannot be sent.
    #[derive(Clone)]
    struct WritesRefused(OneLinkAway);

    impl FabricMemory for WritesRefused {
        fn read_memory(&mut self, via: PortIndex, address: u64) -> Result<u32, ConfigFault> {
            self.0.read_memory(via, address)
        }

        fn write_memory(&mut self, via: PortIndex, _: u64, _: u32) -> Result<(), ConfigFault> {
            Err(ConfigFault::NoSuchPort(via))
        }
    }

    #[test]
    fn an_access_that_fails_fails_the_table_write_and_names_the_register() {
        let csr = InbandCsr::new(WritesRefused(OneLinkAway::new()), PortIndex(3), BAR);
        let mut plane = InbandPlane::new(csr).expect("the identity reads succeed");
        let error = plane
            .set_bus_route(5, None)
            .expect_err("the write was not sent");
        let register = bus_route::DESTINATION.address(0, 5);
        assert_eq!(error, TableWriteError::InBand { address: register });
        // The next write fails on its own account, not the last one's.
        assert_eq!(
            plane.set_bus_route(6, None),
            Err(TableWriteError::InBand {
                address: bus_route::DESTINATION.address(0, 6)
            })
        );
    }
}
