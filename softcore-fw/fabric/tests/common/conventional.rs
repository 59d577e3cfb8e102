//! A conventional PCIe switch below a weft port: an upstream port and
//! downstream ports, each a Type 1 function built with weft-pcie, routing
//! configuration requests by the bus numbers software wrote into them as
//! PCIe Base 6.0 §7.3.3 says: a Type 0 request on its link is the upstream
//! port's; a Type 1 request for the upstream port's secondary bus reaches
//! the downstream port at that device number; one for a downstream port's
//! secondary bus reaches the device below it as Type 0 (device 0 only
//! unless the port's ARI Forwarding Enable is set, §6.13), one for a bus
//! after that as Type 1; any other bus is Unsupported Request.

use weft_fabric::hw::ConfigFault;
use weft_fabric::pcie::config::acs::{feature, Acs};
use weft_fabric::pcie::config::function::BusNumbers;
use weft_fabric::pcie::config::pcie_cap::{
    device_capabilities_2, PcieCap, PcieCapability, PortType,
};
use weft_fabric::pcie::config::{CapabilityList, ConfigSpace, FunctionIdentity, Type1Function};
use weft_fabric::pcie::tlp::ConfigType;
use weft_fabric::pcie::Bdf;

use super::FakeDevice;

/// A switch port's configuration space: the Type 1 header `header` with
/// the PCI Express capability of `port_type` (a downstream port supports
/// ARI forwarding) and, if `acs`, the ACS capability a downstream port
/// implements (§6.12.1.1).
pub fn switch_port(header: Type1Function, port_type: PortType, acs: bool) -> ConfigSpace {
    let mut space = header.build().expect("valid BARs");
    let mut list = CapabilityList::new(&mut space).expect("fresh");
    let mut pcie = PcieCapability::new(port_type);
    if port_type == PortType::SwitchDownstream {
        pcie.device_capabilities_2 = device_capabilities_2::ARI_FORWARDING_SUPPORTED;
    }
    list.push(&pcie).expect("fits");
    if acs {
        list.push_extended(&Acs {
            features: feature::DOWNSTREAM_PORT_REQUIRED,
            egress_vector_bits: 0,
        })
        .expect("fits");
    }
    space
}

/// A downstream port and the device on its link.
pub struct DownstreamPort {
    pub space: ConfigSpace,
    pub device: Option<FakeDevice>,
    /// The device hangs once it has completed this many configuration
    /// requests: from then on it completes none.
    pub hang_after: Option<usize>,
    /// The configuration requests the device completed.
    pub completed: usize,
}

impl DownstreamPort {
    /// A downstream port of configuration space `space` with `device` on
    /// its link, which never hangs.
    pub fn new(space: ConfigSpace, device: Option<FakeDevice>) -> Self {
        DownstreamPort {
            space,
            device,
            hang_after: None,
            completed: 0,
        }
    }
}

/// The switch.
pub struct ConventionalSwitch {
    pub upstream: ConfigSpace,
    pub downstream: Vec<DownstreamPort>,
}

impl ConventionalSwitch {
    /// A switch with identity `identity` whose downstream port `n` has
    /// `ports[n].0` (ACS or not) and the device `ports[n].1`.
    pub fn new(identity: FunctionIdentity, ports: Vec<(bool, Option<FakeDevice>)>) -> Self {
        ConventionalSwitch {
            upstream: switch_port(
                Type1Function::switch_port(identity),
                PortType::SwitchUpstream,
                false,
            ),
            downstream: ports
                .into_iter()
                .map(|(acs, device)| {
                    DownstreamPort::new(
                        switch_port(
                            Type1Function::switch_port(identity),
                            PortType::SwitchDownstream,
                            acs,
                        ),
                        device,
                    )
                })
                .collect(),
        }
    }

    /// A configuration request arriving on the switch's upstream link at
    /// time `now`; a write carries `(value, byte enables)`. A request the
    /// switch forwards to a device that has hung ([`DownstreamPort::hang_after`])
    /// is never completed: `Err(ConfigFault::Timeout)` (a switch has no
    /// completion timeout of its own, PCIe Base 6.0 §2.8).
    pub fn config(
        &mut self,
        now: u64,
        config_type: ConfigType,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<Option<u32>, ConfigFault> {
        let access = |space: &mut ConfigSpace| match write {
            Some((value, byte_enables)) => {
                space.write(offset & !3, value, byte_enables);
                Ok(None)
            }
            None => Ok(Some(space.read(offset & !3))),
        };
        if config_type == ConfigType::Type0 {
            return if target.device() == 0 && target.function() == 0 {
                access(&mut self.upstream)
            } else {
                Err(ConfigFault::UnsupportedRequest)
            };
        }
        let bus = target.bus();
        let internal = BusNumbers::read(&self.upstream);
        if !internal.forwards(bus) {
            return Err(ConfigFault::UnsupportedRequest);
        }
        if bus == internal.secondary {
            return match self.downstream.get_mut(usize::from(target.device())) {
                Some(port) if target.function() == 0 => access(&mut port.space),
                _ => Err(ConfigFault::UnsupportedRequest),
            };
        }
        for port in &mut self.downstream {
            let buses = BusNumbers::read(&port.space);
            if !buses.forwards(bus) {
                continue;
            }
            // Type 0 on the link for its secondary bus (device 0 only),
            // Type 1 for the buses after it.
            let config_type = if bus == buses.secondary {
                ConfigType::Type0
            } else {
                ConfigType::Type1
            };
            let ari = PcieCap::find(&port.space)
                .ok()
                .flatten()
                .is_some_and(|pcie| pcie.ari_forwarding_enabled(&port.space));
            if port.hang_after.is_some_and(|last| port.completed >= last) {
                return Err(ConfigFault::Timeout);
            }
            port.completed += 1;
            let device = match port.device.as_mut() {
                Some(device)
                    if device.takes(config_type, target)
                        && (config_type == ConfigType::Type1 || ari || target.device() == 0) =>
                {
                    device
                }
                _ => return Err(ConfigFault::UnsupportedRequest),
            };
            return match write {
                Some((value, byte_enables)) => device
                    .config_write(now, target, offset, value, byte_enables)
                    .map(|_| None),
                None => device.config_read(now, target, offset).map(Some),
            };
        }
        Err(ConfigFault::UnsupportedRequest)
    }
}
