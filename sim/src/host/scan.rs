//! The bus walk: finds functions depth first, gives every bridge its bus
//! numbers, reads what each function is and sizes its BARs — what Linux's
//! `pci_scan_child_bus` and `pci_scan_bridge` do when the OS assigns all
//! bus numbers itself.
//!
//! - Presence: function 0's Vendor ID; all ones or an error completion
//!   means nothing is there (§7.5.1.1.1, §2.3.2). A Vendor ID of 0001h is
//!   Request Retry Status made visible by the root port (§2.3.2): the
//!   device is still booting, and the walk sleeps 1, 2, 4, … ms and reads
//!   again, giving up after [`super::HostConfig::crs_timeout`] (Linux's
//!   `pci_bus_wait_rrs`).
//! - Functions 1-7 are probed only when Header Type bit 7 says the device
//!   is multi-function (§7.5.1.1.9). Below a root port or downstream
//!   switch port only device 0 exists (§7.3.1, Linux's `only_one_child`).
//! - Bridges on a bus are numbered after all its functions were found: the
//!   next free bus becomes the secondary, the subordinate is opened to the
//!   limit while the walk goes below and then closed to the last bus used
//!   (§7.5.1.3.2-4). Hot-plug bridges keep at least
//!   [`super::HostConfig::hotplug_buses`] buses.

use std::time::Duration;

use weft_pcie::config::bar::{size_bar_array, size_header_bars};
use weft_pcie::config::header::{common, header_type, type1};
use weft_pcie::config::pcie_cap::{
    self, capabilities, device_capabilities, slot_capabilities, PortType,
};
use weft_pcie::config::walk::{Capabilities, ExtendedCapabilities};
use weft_pcie::config::{cap_id, ext_cap_id, sriov, BarKind};
use weft_pcie::Bdf;

use super::access::{ConfigAccessError, Cpu, RRS_VENDOR_ID};
use super::error::HostError;
use super::tree::{
    BarInfo, BridgeInfo, CapabilityOffsets, DeviceTree, Function, InterruptSetup, SlotInfo,
    SriovInfo,
};
use super::HostConfig;

/// What the walk counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Vendor ID reads that returned RRS (0001h) and were retried.
    pub rrs_retries: u32,
    /// Time spent sleeping between those retries.
    pub rrs_wait: Duration,
    /// Functions found.
    pub functions: u32,
}

/// One walk over part of the hierarchy.
pub struct Scan<'c, 'a> {
    cpu: &'c mut Cpu<'a>,
    tree: &'c mut DeviceTree,
    config: &'c HostConfig,
    /// What the walk counted.
    pub stats: ScanStats,
}

/// Whether a Vendor ID read means nothing answered.
fn absent(dw0: u32) -> bool {
    let vendor = dw0 as u16;
    vendor == 0xffff || vendor == 0x0000
}

impl<'c, 'a> Scan<'c, 'a> {
    /// A walk through `cpu` recording into `tree`.
    pub fn new(cpu: &'c mut Cpu<'a>, tree: &'c mut DeviceTree, config: &'c HostConfig) -> Self {
        Scan {
            cpu,
            tree,
            config,
            stats: ScanStats::default(),
        }
    }

    /// Reads function `bdf`'s first DW, waiting out RRS; `None` if nothing
    /// is there or it never became ready.
    fn probe(&mut self, bdf: Bdf) -> Result<Option<u32>, HostError> {
        let mut dw0 = match self.cpu.config_request(bdf, 0, None) {
            Ok(dw0) => dw0,
            Err(ConfigAccessError::Status { .. } | ConfigAccessError::Timeout { .. }) => {
                return Ok(None)
            }
            Err(error) => return Err(error.into()),
        };
        let mut delay = Duration::from_millis(1);
        let mut waited = Duration::ZERO;
        while dw0 == RRS_VENDOR_ID {
            if waited >= self.config.crs_timeout {
                return Ok(None);
            }
            self.cpu.sleep(delay);
            waited += delay;
            self.stats.rrs_retries += 1;
            self.stats.rrs_wait += delay;
            delay *= 2;
            dw0 = match self.cpu.config_request(bdf, 0, None) {
                Ok(dw0) => dw0,
                Err(ConfigAccessError::Status { .. } | ConfigAccessError::Timeout { .. }) => {
                    return Ok(None)
                }
                Err(error) => return Err(error.into()),
            };
        }
        Ok((!absent(dw0)).then_some(dw0))
    }

    /// Walks bus `bus` (whose bridge is `parent`) and everything below,
    /// using bus numbers up to `limit`; returns the last bus used.
    pub fn scan_bus(&mut self, bus: u8, parent: Option<Bdf>, limit: u8) -> Result<u8, HostError> {
        let only_device_zero = parent
            .and_then(|p| self.tree.get(p))
            .and_then(|f| f.port_type)
            .is_some_and(|t| matches!(t, PortType::RootPort | PortType::SwitchDownstream));
        let devices = if only_device_zero { 1 } else { 32 };
        let mut bridges = Vec::new();
        for device in 0..devices {
            let first = Bdf::new(bus, device, 0);
            let Some(dw0) = self.probe(first)? else {
                continue;
            };
            let header = (self.cpu.config_read(first, common::HEADER_TYPE)? >> 16) as u8;
            let functions = if header & header_type::MULTI_FUNCTION != 0 {
                8
            } else {
                1
            };
            for number in 0..functions {
                let bdf = Bdf::new(bus, device, number);
                let dw0 = if number == 0 {
                    dw0
                } else {
                    match self.probe(bdf)? {
                        Some(dw0) => dw0,
                        None => continue,
                    }
                };
                let function = self.discover(bdf, dw0, parent)?;
                if function.bridge.is_some() {
                    bridges.push(bdf);
                }
                self.tree.insert(function);
                self.stats.functions += 1;
            }
        }
        let mut last = bus;
        for bridge in bridges {
            last = self.number_bridge(bridge, bus, last, limit)?;
        }
        Ok(last)
    }

    /// Gives `bridge` (on `bus`) the next bus after `last` and walks below.
    fn number_bridge(
        &mut self,
        bridge: Bdf,
        bus: u8,
        last: u8,
        limit: u8,
    ) -> Result<u8, HostError> {
        if last >= limit {
            return Err(HostError::BusNumbersExhausted { bridge, limit });
        }
        let secondary = last + 1;
        self.write_bus_numbers(bridge, bus, secondary, limit)?;
        let mut subordinate = self.scan_bus(secondary, Some(bridge), limit)?;
        let hot_plug = self
            .tree
            .get(bridge)
            .and_then(|f| f.bridge.as_ref())
            .and_then(|b| b.slot)
            .is_some_and(|slot| slot.hot_plug);
        if hot_plug {
            let reserved = secondary.saturating_add(self.config.hotplug_buses.max(1) - 1);
            subordinate = subordinate.max(reserved.min(limit));
        }
        self.write_bus_numbers(bridge, bus, secondary, subordinate)?;
        Ok(subordinate)
    }

    /// Primary, Secondary and Subordinate Bus Number in one write, leaving
    /// the Secondary Latency Timer byte alone (§7.5.1.3.2-4).
    fn write_bus_numbers(
        &mut self,
        bridge: Bdf,
        primary: u8,
        secondary: u8,
        subordinate: u8,
    ) -> Result<(), HostError> {
        let value = u32::from(primary) | u32::from(secondary) << 8 | u32::from(subordinate) << 16;
        self.cpu
            .config_write(bridge, type1::PRIMARY_BUS, value, 0b0111)?;
        if let Some(info) = self.tree.get_mut(bridge).and_then(|f| f.bridge.as_mut()) {
            info.primary = primary;
            info.secondary = secondary;
            info.subordinate = subordinate;
        }
        Ok(())
    }

    /// Reads what function `bdf` is: IDs, class, capabilities, BARs.
    pub fn discover(
        &mut self,
        bdf: Bdf,
        dw0: u32,
        parent: Option<Bdf>,
    ) -> Result<Function, HostError> {
        let class_dw = self.cpu.config_read(bdf, common::REVISION_ID)?;
        let header = (self.cpu.config_read(bdf, common::HEADER_TYPE)? >> 16) as u8;
        let is_bridge = header & header_type::LAYOUT_MASK == header_type::TYPE1;
        let mut function = Function {
            bdf,
            vendor_id: dw0 as u16,
            device_id: (dw0 >> 16) as u16,
            class: class_dw >> 8,
            revision: class_dw as u8,
            parent,
            physical_function: None,
            port_type: None,
            max_payload_supported: 128,
            max_payload: 128,
            bars: Vec::new(),
            bridge: None,
            capabilities: CapabilityOffsets::default(),
            interrupts: InterruptSetup::None,
            sriov: None,
        };
        self.read_capabilities(&mut function)?;
        function.bars = self.size_bars(bdf, None)?;
        if is_bridge {
            let slot = self.read_slot(&function)?;
            function.bridge = Some(BridgeInfo {
                primary: 0,
                secondary: 0,
                subordinate: 0,
                memory: None,
                prefetchable: None,
                slot,
            });
        }
        if let Some(offset) = function.capabilities.sriov {
            function.sriov = Some(self.read_sriov(bdf, offset)?);
        }
        Ok(function)
    }

    fn read_capabilities(&mut self, function: &mut Function) -> Result<(), HostError> {
        let bdf = function.bdf;
        let walk_error = |error| HostError::CapabilityWalk { bdf, error };
        let entries: Vec<_> = Capabilities::new(self.cpu.function(bdf))
            .collect::<Result<_, _>>()
            .map_err(walk_error)?;
        for entry in entries {
            match entry.id {
                cap_id::PCI_EXPRESS => function.capabilities.pcie = Some(entry.offset),
                cap_id::MSI => function.capabilities.msi = Some(entry.offset),
                cap_id::MSIX => function.capabilities.msix = Some(entry.offset),
                _ => {}
            }
        }
        let Some(pcie) = function.capabilities.pcie else {
            return Ok(());
        };
        let caps = self.cpu.config_read(bdf, pcie)? >> 16;
        let port_bits =
            ((caps as u16 & capabilities::PORT_TYPE_MASK) >> capabilities::PORT_TYPE_SHIFT) as u8;
        function.port_type = PortType::from_bits(port_bits);
        let device_caps = self
            .cpu
            .config_read(bdf, pcie + pcie_cap::DEVICE_CAPABILITIES)?;
        let supported = (device_caps & device_capabilities::MAX_PAYLOAD_SUPPORTED_MASK) as u8;
        function.max_payload_supported =
            pcie_cap::payload_bytes_from_encoding(supported).unwrap_or(128);
        let control = self
            .cpu
            .config_read_u16(bdf, pcie + pcie_cap::DEVICE_CONTROL)?;
        let current = ((control & pcie_cap::device_control::MAX_PAYLOAD_MASK)
            >> pcie_cap::device_control::MAX_PAYLOAD_SHIFT) as u8;
        function.max_payload = pcie_cap::payload_bytes_from_encoding(current).unwrap_or(128);
        let extended: Vec<_> = ExtendedCapabilities::new(self.cpu.function(bdf))
            .collect::<Result<_, _>>()
            .map_err(walk_error)?;
        for entry in extended {
            if entry.id == ext_cap_id::SRIOV {
                function.capabilities.sriov = Some(entry.offset);
            }
        }
        Ok(())
    }

    /// The slot of a downstream port, if Slot Implemented (§7.5.3.2).
    fn read_slot(&mut self, function: &Function) -> Result<Option<SlotInfo>, HostError> {
        let Some(pcie) = function.capabilities.pcie else {
            return Ok(None);
        };
        let caps = self
            .cpu
            .config_read_u16(function.bdf, pcie + pcie_cap::CAPABILITIES)?;
        if caps & capabilities::SLOT_IMPLEMENTED == 0 {
            return Ok(None);
        }
        let slot = self
            .cpu
            .config_read(function.bdf, pcie + pcie_cap::SLOT_CAPABILITIES)?;
        Ok(Some(SlotInfo {
            physical: ((slot & slot_capabilities::PHYSICAL_SLOT_MASK)
                >> slot_capabilities::PHYSICAL_SLOT_SHIFT) as u16,
            hot_plug: slot & slot_capabilities::HOT_PLUG_CAPABLE != 0,
            capabilities: slot,
            powered_off: false,
        }))
    }

    /// Sizes the header's BARs, or the VF BAR array of an SR-IOV
    /// capability at `sriov_offset` (§9.3.3.14), with weft-pcie's helpers.
    fn size_bars(
        &mut self,
        bdf: Bdf,
        sriov_offset: Option<u16>,
    ) -> Result<Vec<BarInfo>, HostError> {
        let sizing_error = |error| HostError::BarSizing { bdf, error };
        let (decoded, base) = match sriov_offset {
            None => (
                size_header_bars(&mut self.cpu.function(bdf)).map_err(sizing_error)?,
                weft_pcie::config::header::type0::BAR0,
            ),
            Some(offset) => {
                let base = offset + sriov::VF_BAR0;
                (
                    size_bar_array(&mut self.cpu.function(bdf), base, 6).map_err(sizing_error)?,
                    base,
                )
            }
        };
        Ok(decoded
            .iter()
            .flatten()
            .map(|bar| BarInfo {
                index: ((bar.register - base) / 4) as u8,
                register: bar.register,
                kind: bar.bar.kind,
                size: bar.bar.size,
                address: None,
            })
            .collect())
    }

    fn read_sriov(&mut self, bdf: Bdf, offset: u16) -> Result<SriovInfo, HostError> {
        let counts = self.cpu.config_read(bdf, offset + sriov::INITIAL_VFS)?;
        let ids = self
            .cpu
            .config_read(bdf, (offset + sriov::VF_DEVICE_ID) & !3)?;
        let vf_bars = self.size_bars(bdf, Some(offset))?;
        Ok(SriovInfo {
            offset,
            total_vfs: (counts >> 16) as u16,
            num_vfs: 0,
            vf_device_id: (ids >> 16) as u16,
            vf_bars: vf_bars
                .into_iter()
                .filter(|bar| bar.kind != BarKind::Io)
                .collect(),
        })
    }
}
