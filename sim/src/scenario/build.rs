//! The [`World`] a scenario describes: its switches cabled together, the
//! fabric manager on the first one with a host port per host, hosts and
//! endpoints on their links.

use weft_devices::hang::{HangControl, Hangable};
use weft_devices::Device;
use weft_fabric::manager::FabricManager;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_pcie::config::FunctionIdentity;
use weft_regs::tables::{HostIndex, PortIndex};

use super::validate::{EndpointModel, ManagerPlan};
use super::Scenario;
use crate::host::{Host, HostConfig};
use crate::world::World;

/// Why a scenario's fabric could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// More hosts than the fabric manager has host ports.
    TooManyHosts {
        /// Hosts in the scenario.
        hosts: usize,
    },
    /// The fabric manager refused its settings.
    Settings(String),
    /// The firmware could not be made the fabric manager.
    Firmware(String),
    /// A switch's RTL data plane could not be built.
    Rtl {
        /// The switch.
        name: String,
        /// Why.
        why: String,
    },
    /// An endpoint model could not be built.
    Endpoint {
        /// The endpoint.
        name: String,
        /// Why.
        why: String,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::TooManyHosts { hosts } => write!(
                f,
                "{hosts} hosts: more than the fabric manager's {} host ports",
                weft_fabric::limits::MAX_HOST_PORTS
            ),
            BuildError::Settings(why) => {
                write!(f, "the fabric manager refused its settings: {why}")
            }
            BuildError::Endpoint { name, why } => write!(f, "endpoint `{name}`: {why}"),
            BuildError::Rtl { name, why } => write!(f, "switch `{name}`'s RTL: {why}"),
            BuildError::Firmware(why) => write!(f, "the firmware as fabric manager: {why}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// A virtual switch port's identity: `vendor_id`, `device_id`, a PCI bridge.
fn bridge(vendor_id: u16, device_id: u16) -> FunctionIdentity {
    FunctionIdentity {
        vendor_id,
        device_id,
        revision_id: 0,
        class_code: 0x06_04_00,
    }
}

/// Builds the world `scenario` describes, before any step has run.
pub fn world(scenario: &Scenario) -> Result<World, BuildError> {
    let manager_switch = &scenario.switches[0];
    let mut settings = FabricSettings {
        switch_id: manager_switch.id,
        num_vfs: scenario.fabric.num_vfs,
        upstream_identity: bridge(
            scenario.fabric.vendor_id,
            scenario.fabric.upstream_device_id,
        ),
        downstream_identity: bridge(
            scenario.fabric.vendor_id,
            scenario.fabric.downstream_device_id,
        ),
        ..FabricSettings::default()
    };
    for (index, host) in scenario.hosts.iter().enumerate() {
        settings
            .hosts
            .push(HostPort {
                switch: scenario.switches[host.place.switch].id,
                port: PortIndex(host.place.port),
                host: HostIndex(index as u16),
                slots: host.slots,
            })
            .map_err(|_| BuildError::TooManyHosts {
                hosts: scenario.hosts.len(),
            })?;
    }
    let manager =
        FabricManager::new(settings).map_err(|err| BuildError::Settings(format!("{err:?}")))?;
    let mut world = World::new(usize::from(manager_switch.ports), manager);
    for switch in &scenario.switches[1..] {
        world.add_switch(switch.id, usize::from(switch.ports));
    }
    for (index, switch) in scenario.switches.iter().enumerate() {
        if let Some(simulator) = switch.data_plane.rtl_simulator() {
            world
                .use_rtl(index, simulator)
                .map_err(|why| BuildError::Rtl {
                    name: switch.name.clone(),
                    why: why.to_string(),
                })?;
        }
    }
    for cable in &scenario.cables {
        world.connect(cable.a, cable.b, cable.link);
    }
    for host in &scenario.hosts {
        world.attach_host(host.place, Host::new(HostConfig::default()), host.link);
    }
    for (index, endpoint) in scenario.endpoints.iter().enumerate() {
        if endpoint.below.is_none() {
            let mut nested = Vec::new();
            let device = device(scenario, index, &mut nested)?;
            world.attach_device_at(endpoint.place, device, endpoint.link);
            for (inner, control) in nested {
                let inner = &scenario.endpoints[inner];
                world.control_nested_device(inner.place, inner.path.clone(), control);
            }
        }
    }
    if let ManagerPlan::Firmware { elf, core, .. } = &scenario.manager {
        world
            .hand_manager_to_firmware(elf, *core)
            .map_err(|err| BuildError::Firmware(err.to_string()))?;
    }
    Ok(world)
}

/// Endpoint `index`'s device; a PCIe switch's with the devices below it,
/// each [`Hangable`], their controls added to `nested` by endpoint index.
fn device(
    scenario: &Scenario,
    index: usize,
    nested: &mut Vec<(usize, HangControl)>,
) -> Result<Box<dyn Device>, BuildError> {
    let endpoint = &scenario.endpoints[index];
    let mut below = Vec::new();
    if let EndpointModel::PcieSwitch { ports } = endpoint.model {
        for port in 0..ports {
            let child = scenario
                .endpoints
                .iter()
                .position(|e| e.below == Some((index, port)));
            let Some(child) = child else {
                below.push(None);
                continue;
            };
            let (hangable, control) = Hangable::new(device(scenario, child, nested)?);
            nested.push((child, control));
            below.push(Some(Box::new(hangable) as Box<dyn Device>));
        }
    }
    endpoint
        .model
        .device(below)
        .map_err(|why| BuildError::Endpoint {
            name: endpoint.name.clone(),
            why,
        })
}
