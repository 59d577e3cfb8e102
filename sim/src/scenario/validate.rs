//! A scenario file checked and resolved: names become indices and places,
//! links get their shapes, and anything inconsistent is an error at the
//! byte offset of the table or value it is about.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::Spanned;

use weft_devices::conventional::ConventionalSwitch;
use weft_devices::dump::{BarSizes, DumpDevice};
use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::nvme::{Nvme, NvmeConfig};
use weft_fabric::binding::UnbindMode;
use weft_fabric::limits::{MAX_HOST_PORTS, MAX_SLOTS_PER_HOST, MAX_SWITCHES};
use weft_pcie::config::bar::MAX_BARS;
use weft_pcie::config::FunctionIdentity;
use weft_pcie::link::{Link, LinkSpeed, LinkWidth};
use weft_pcie::tlp::CompletionStatus;
use weft_regs::capacity::PORTS;

use super::format::{
    ActionSpec, DataPlaneKind, EndpointKind, EndpointSpec, LinkShape, ManagerKind, ReadExpect,
    ReadSpace, Role, ScenarioFile, StepSpec, UnbindSpec,
};
use super::line_column;
use crate::firmware_board::FirmwareCore;
use crate::iss_manager::{FIRMWARE_BRIDGE_IDS, FIRMWARE_SWITCH_ID};
use crate::link::LinkConfig;
use crate::wiring::Place;

/// A link's shape when neither the link nor `[defaults.link]` gives one:
/// Gen3 x16 (the class of the published figures), 100 ns (PHY and data
/// link layer at both ends plus a short cable).
pub const DEFAULT_LINK: LinkConfig = LinkConfig {
    link: Link::new(LinkSpeed::Gen3, LinkWidth::X16),
    latency_ps: 100_000,
};

/// A validation error: where, and what.
#[derive(Debug)]
pub struct Invalid {
    /// Byte offset in the text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

fn invalid<T>(offset: usize, message: impl Into<String>) -> Result<T, Invalid> {
    Err(Invalid {
        offset,
        message: message.into(),
    })
}

/// A checked scenario, ready to build and run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its short name.
    pub name: String,
    /// One line saying what runs.
    pub title: String,
    /// Lines describing the fabric.
    pub description: Vec<String>,
    /// The fabric manager's settings.
    pub fabric: FabricPlan,
    /// The fabric manager that runs on switch 0.
    pub manager: ManagerPlan,
    /// The switches; index 0 runs the fabric manager.
    pub switches: Vec<SwitchPlan>,
    /// The hosts, in host index order.
    pub hosts: Vec<HostPlan>,
    /// The endpoints.
    pub endpoints: Vec<EndpointPlan>,
    /// Switch-to-switch links.
    pub cables: Vec<CablePlan>,
    /// The timeline.
    pub steps: Vec<Step>,
}

/// The fabric manager that runs on switch 0 (`[fabric] manager`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ManagerPlan {
    /// weft-fabric, run natively by the simulator.
    Native,
    /// The firmware on the instruction-set simulator or the RTL soft
    /// core, its flash provisioned with the scenario's host ports and NumVFs.
    Firmware {
        /// Where its ELF was read from.
        path: PathBuf,
        /// The ELF image.
        elf: Vec<u8>,
        /// The core it runs on.
        core: FirmwareCore,
    },
}

/// The fabric manager's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricPlan {
    /// Vendor ID of the virtual switch ports.
    pub vendor_id: u16,
    /// Device ID of each virtual upstream port.
    pub upstream_device_id: u16,
    /// Device ID of each virtual downstream port.
    pub downstream_device_id: u16,
    /// VFs enabled on every SR-IOV physical function.
    pub num_vfs: u16,
}

/// A switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchPlan {
    /// Its name in the file.
    pub name: String,
    /// Its switch ID.
    pub id: u64,
    /// Its port count.
    pub ports: u8,
    /// What carries its TLPs.
    pub data_plane: DataPlaneKind,
}

/// A host and where it is wired.
#[derive(Clone, Debug)]
pub struct HostPlan {
    /// Its name in the file.
    pub name: String,
    /// The switch port its root port is linked to.
    pub place: Place,
    /// Hot-plug slots of its virtual switch.
    pub slots: u8,
    /// Its link.
    pub link: LinkConfig,
}

/// The model an endpoint runs.
#[derive(Clone, Debug)]
pub enum EndpointModel {
    /// A GPU.
    Gpu(GpuConfig),
    /// An NVMe drive with SR-IOV.
    Nvme(NvmeConfig),
    /// A device from an `lspci -xxxx` dump.
    Dump {
        /// The dump's text.
        text: String,
        /// BAR sizes per function.
        sizes: Vec<BarSizes>,
    },
    /// A conventional PCIe switch with this many downstream ports.
    PcieSwitch {
        /// Downstream ports.
        ports: u8,
    },
}

/// The identity of a conventional switch's ports: a PCI-to-PCI bridge
/// (PCI Code and ID Assignment, class 06h, sub-class 04h) of a PCIe
/// switch vendor's ID, as the ports of a Gen3 fan-out switch report.
pub const PCIE_SWITCH_IDENTITY: FunctionIdentity = FunctionIdentity {
    vendor_id: 0x10b5,
    device_id: 0x8747,
    revision_id: 0xca,
    class_code: 0x06_04_00,
};

/// The most downstream ports a conventional switch may have: one per
/// device number on its internal bus (PCIe Base 6.0 §7.3.1).
pub const MAX_DOWNSTREAM_PORTS: u8 = 32;

impl EndpointModel {
    /// A fresh device of this model; a PCIe switch gets `below`, the
    /// devices on its downstream ports in order (missing ones: empty ports).
    pub fn device(
        &self,
        below: Vec<Option<Box<dyn weft_devices::Device>>>,
    ) -> Result<Box<dyn weft_devices::Device>, String> {
        Ok(match self {
            EndpointModel::PcieSwitch { ports } => {
                let mut below = below;
                below.resize_with(usize::from(*ports), || None);
                Box::new(
                    ConventionalSwitch::new(PCIE_SWITCH_IDENTITY, below)
                        .map_err(|e| format!("PCIe switch: {e:?}"))?,
                )
            }
            EndpointModel::Gpu(config) => {
                Box::new(Gpu::new(*config).map_err(|e| format!("GPU: {e:?}"))?)
            }
            EndpointModel::Nvme(config) => {
                Box::new(Nvme::new(*config).map_err(|e| format!("NVMe drive: {e:?}"))?)
            }
            EndpointModel::Dump { text, sizes } => {
                Box::new(DumpDevice::from_text(text, sizes).map_err(|e| e.to_string())?)
            }
        })
    }

    /// TotalVFs, for an SR-IOV model.
    pub fn total_vfs(&self) -> u16 {
        match self {
            EndpointModel::Nvme(config) => config.total_vfs,
            _ => 0,
        }
    }
}

/// An endpoint and where it is wired.
#[derive(Clone, Debug)]
pub struct EndpointPlan {
    /// Its name in the file.
    pub name: String,
    /// Its model.
    pub model: EndpointModel,
    /// The weft switch port it is below (through conventional switches).
    pub place: Place,
    /// The downstream port numbers of the conventional switches between
    /// `place` and it, outermost first; empty when it is on `place`'s link.
    pub path: Vec<u8>,
    /// The conventional switch (endpoint index) and downstream port it is
    /// on, if any.
    pub below: Option<(usize, u8)>,
    /// Its link.
    pub link: LinkConfig,
}

/// A link between two switch ports.
#[derive(Clone, Copy, Debug)]
pub struct CablePlan {
    /// One end.
    pub a: Place,
    /// The other.
    pub b: Place,
    /// Its shape.
    pub link: LinkConfig,
}

/// A function a step names: an endpoint's physical function, or one of
/// its VFs (`name.vfN`, N from 1 as in the SR-IOV capability).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    /// The endpoint's index.
    pub endpoint: usize,
    /// The VF, from 1; `None` for the physical function.
    pub vf: Option<u16>,
}

/// One step of the timeline.
#[derive(Clone, Debug)]
pub struct Step {
    /// Its line in the file.
    pub line: usize,
    /// The report's description, if the file gives one.
    pub label: Option<String>,
    /// What it does.
    pub action: Action,
}

/// A resolved action (see [`ActionSpec`] for each one's meaning).
#[derive(Clone, Debug)]
pub enum Action {
    /// Discover and enumerate the fabric.
    Enumerate,
    /// Hosts boot.
    Boot {
        /// Host indices.
        hosts: Vec<usize>,
    },
    /// Bind to a host.
    Bind {
        /// What.
        targets: Vec<Target>,
        /// The host.
        host: usize,
        /// The first slot, or the lowest free ones.
        slot: Option<u8>,
    },
    /// Unbind.
    Unbind {
        /// What.
        targets: Vec<Target>,
        /// How.
        mode: UnbindMode,
    },
    /// GPU peer-to-peer.
    P2p {
        /// The host.
        host: usize,
        /// GPU A.
        from: usize,
        /// GPU B.
        to: usize,
        /// Bytes per copy and direction.
        copy_bytes: u64,
        /// Bytes of the latency transfers.
        latency_bytes: u64,
        /// Whether the copied data is read back and compared.
        verify: bool,
    },
    /// NVMe write and read back.
    Nvme {
        /// The host.
        host: usize,
        /// The drive or VF.
        target: Target,
        /// Bytes.
        bytes: u64,
    },
    /// Endpoints stop answering.
    Hang {
        /// Endpoint indices, each a device with a link of its own.
        endpoints: Vec<usize>,
        /// The configuration requests each completes before it hangs;
        /// `None`: it hangs at once.
        after_config_requests: Option<u32>,
    },
    /// A host's CPU reads a function's first memory BAR, or its first
    /// configuration DW.
    Read {
        /// The host.
        host: usize,
        /// The function read.
        target: Target,
        /// Memory or configuration space.
        space: ReadSpace,
        /// The completion status the read must get.
        expect: CompletionStatus,
    },
    /// The host sees exactly these.
    Sees {
        /// The host.
        host: usize,
        /// What it must see.
        targets: Vec<Target>,
    },
    /// Every bound endpoint is visible to its host only.
    CheckBindings,
    /// Nothing lost or unexpected.
    CheckTraffic,
    /// An isolation probe.
    Probe {
        /// The host probing.
        host: usize,
        /// What it must not reach.
        target: Target,
        /// The GPU whose DMA engine reads, or `None` for the host's CPU.
        by: Option<usize>,
    },
}

/// What a link end names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum End {
    Port(Place),
    Host(usize),
    Endpoint(usize),
}

/// Names of everything, for resolving references.
struct Names<'a> {
    switches: Vec<(&'a str, u8)>,
    hosts: Vec<&'a str>,
    endpoints: Vec<&'a str>,
}

impl Names<'_> {
    fn end(&self, end: &Spanned<String>) -> Result<End, Invalid> {
        let text = end.get_ref();
        let at = end.span().start;
        if let Some((switch, port)) = text.split_once('.') {
            let Some(index) = self.switches.iter().position(|(name, _)| *name == switch) else {
                return invalid(at, format!("link end `{text}`: no switch named `{switch}`"));
            };
            let ports = self.switches[index].1;
            let Ok(port) = port.parse::<u8>() else {
                return invalid(
                    at,
                    format!("link end `{text}`: `{port}` is not a port number"),
                );
            };
            if port >= ports {
                return invalid(
                    at,
                    format!(
                        "link end `{text}`: switch `{switch}` has {ports} ports (0 to {}), port {port} does not exist",
                        ports - 1
                    ),
                );
            }
            return Ok(End::Port(Place::new(index, port)));
        }
        if let Some(host) = self.hosts.iter().position(|h| h == text) {
            return Ok(End::Host(host));
        }
        if let Some(endpoint) = self.endpoints.iter().position(|e| e == text) {
            return Ok(End::Endpoint(endpoint));
        }
        invalid(
            at,
            format!("link end `{text}`: no host or endpoint of that name (a switch port is written `switch.port`)"),
        )
    }

    fn host(&self, at: usize, name: &str) -> Result<usize, Invalid> {
        self.hosts
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| Invalid {
                offset: at,
                message: format!("`host`: no host named `{name}`"),
            })
    }

    fn target(&self, at: usize, field: &str, name: &str) -> Result<Target, Invalid> {
        let (base, vf) = match name.split_once('.') {
            Some((base, vf)) => {
                let number = vf
                    .strip_prefix("vf")
                    .and_then(|n| n.parse::<u16>().ok())
                    .filter(|n| *n >= 1);
                let Some(number) = number else {
                    return invalid(
                        at,
                        format!("`{field}`: `{name}`: a virtual function is written `endpoint.vfN`, N from 1"),
                    );
                };
                (base, Some(number))
            }
            None => (name, None),
        };
        let endpoint = self
            .endpoints
            .iter()
            .position(|e| *e == base)
            .ok_or_else(|| Invalid {
                offset: at,
                message: format!("`{field}`: no endpoint named `{base}`"),
            })?;
        Ok(Target { endpoint, vf })
    }
}

fn shape(own: LinkShape, defaults: LinkShape, at: usize) -> Result<LinkConfig, Invalid> {
    let generation = own.generation.or(defaults.generation);
    let speed = match generation {
        None => DEFAULT_LINK.link.speed,
        Some(g) => match LinkSpeed::ALL.iter().find(|s| s.generation() == g) {
            Some(speed) => *speed,
            None => {
                return invalid(
                    at,
                    format!("`generation` = {g}: the link model knows 1 to 5"),
                )
            }
        },
    };
    let width = match own.width.or(defaults.width) {
        None => DEFAULT_LINK.link.width,
        Some(lanes) => match LinkWidth::from_lanes(lanes) {
            Ok(width) => width,
            Err(_) => return invalid(at, format!("`width` = {lanes}: lanes are 1, 2, 4, 8 or 16")),
        },
    };
    let latency_ps = own
        .latency_ns
        .or(defaults.latency_ns)
        .map_or(DEFAULT_LINK.latency_ps, |ns| ns * 1000);
    Ok(LinkConfig {
        link: Link::new(speed, width),
        latency_ps,
    })
}

fn unique<'a>(
    names: &mut BTreeMap<&'a str, usize>,
    name: &'a str,
    at: usize,
    text: &str,
) -> Result<(), Invalid> {
    if name.is_empty() || name.contains('.') {
        return invalid(
            at,
            format!("`name` = {name:?}: names are non-empty and have no `.`"),
        );
    }
    if let Some(first) = names.insert(name, at) {
        let (line, _) = line_column(text, first);
        return invalid(
            at,
            format!("`name` = {name:?} is already used on line {line}"),
        );
    }
    Ok(())
}

fn endpoint_model(spec: &EndpointSpec, at: usize, base: &Path) -> Result<EndpointModel, Invalid> {
    let only = |field: &str, given: bool, kind: &str| -> Result<(), Invalid> {
        if given {
            invalid(at, format!("`{field}` is only for kind = \"{kind}\""))
        } else {
            Ok(())
        }
    };
    only(
        "downstream_ports",
        spec.downstream_ports.is_some() && spec.kind != EndpointKind::PcieSwitch,
        "pcie_switch",
    )?;
    let model = match spec.kind {
        EndpointKind::PcieSwitch => {
            only("memory_bytes", spec.memory_bytes.is_some(), "gpu")?;
            only("vfs", spec.vfs.is_some(), "nvme")?;
            only("dump", spec.dump.is_some(), "dump")?;
            only("bar_sizes", spec.bar_sizes.is_some(), "dump")?;
            let ports = match spec.downstream_ports {
                Some(ports) if (1..=MAX_DOWNSTREAM_PORTS).contains(&ports) => ports,
                Some(ports) => {
                    return invalid(
                        at,
                        format!("`downstream_ports` = {ports}: a PCIe switch has 1 to {MAX_DOWNSTREAM_PORTS}"),
                    )
                }
                None => {
                    return invalid(
                        at,
                        "kind = \"pcie_switch\" needs `downstream_ports`",
                    )
                }
            };
            EndpointModel::PcieSwitch { ports }
        }
        EndpointKind::Gpu => {
            only("vfs", spec.vfs.is_some(), "nvme")?;
            only("dump", spec.dump.is_some(), "dump")?;
            only("bar_sizes", spec.bar_sizes.is_some(), "dump")?;
            let mut config = GpuConfig::default();
            if let Some(bytes) = spec.memory_bytes {
                config.memory_size = bytes;
            }
            EndpointModel::Gpu(config)
        }
        EndpointKind::Nvme => {
            only("memory_bytes", spec.memory_bytes.is_some(), "gpu")?;
            only("dump", spec.dump.is_some(), "dump")?;
            only("bar_sizes", spec.bar_sizes.is_some(), "dump")?;
            let mut config = NvmeConfig::default();
            if let Some(vfs) = spec.vfs {
                config.total_vfs = vfs;
            }
            EndpointModel::Nvme(config)
        }
        EndpointKind::Dump => {
            only("memory_bytes", spec.memory_bytes.is_some(), "gpu")?;
            only("vfs", spec.vfs.is_some(), "nvme")?;
            let Some(file) = &spec.dump else {
                return invalid(at, "kind = \"dump\" needs `dump`, the lspci -xxxx file");
            };
            let Some(lists) = &spec.bar_sizes else {
                return invalid(
                    at,
                    "kind = \"dump\" needs `bar_sizes`, one list per function",
                );
            };
            let path = base.join(file);
            let text = std::fs::read_to_string(&path).map_err(|e| Invalid {
                offset: at,
                message: format!("`dump`: cannot read {}: {e}", path.display()),
            })?;
            let mut sizes = Vec::new();
            for list in lists {
                if list.len() > MAX_BARS {
                    return invalid(
                        at,
                        format!("`bar_sizes`: a function has at most {MAX_BARS} BARs"),
                    );
                }
                let mut slots: BarSizes = [None; MAX_BARS];
                for (slot, size) in list.iter().enumerate() {
                    slots[slot] = (*size != 0).then_some(*size);
                }
                sizes.push(slots);
            }
            EndpointModel::Dump { text, sizes }
        }
    };
    if let Err(why) = model.device(Vec::new()) {
        return invalid(at, format!("endpoint `{}`: {why}", spec.name));
    }
    Ok(model)
}

/// The manager `[fabric] manager` names. The firmware's ELF is read here
/// (relative to `base`); its host ports and NumVFs are provisioned in its
/// flash from the scenario ([`crate::iss_manager::provisioned_flash`]), but
/// its virtual switch ports are built in: they must be
/// [`FIRMWARE_BRIDGE_IDS`].
fn manager_plan(file: &ScenarioFile, base: &Path) -> Result<ManagerPlan, Invalid> {
    let fabric = &file.fabric;
    let Some(manager) = &fabric.manager else {
        return Ok(ManagerPlan::Native);
    };
    let at = manager.span().start;
    let core = match manager.get_ref() {
        ManagerKind::Native => {
            if let Some(firmware) = &fabric.firmware {
                return invalid(
                    firmware.span().start,
                    "`firmware` is for `manager = \"firmware-iss\"` or `\"firmware-rtl\"`",
                );
            }
            return Ok(ManagerPlan::Native);
        }
        ManagerKind::FirmwareIss => FirmwareCore::Iss,
        ManagerKind::FirmwareRtl => FirmwareCore::Rtl,
    };
    let (path, at_path) = match &fabric.firmware {
        Some(firmware) => (base.join(firmware.get_ref()), firmware.span().start),
        None => (weft_iss::elf::firmware_path(), at),
    };
    let elf = std::fs::read(&path).map_err(|e| Invalid {
        offset: at_path,
        message: format!(
            "the firmware ELF {}: {e} (build it with `cargo xtask firmware`, or name one with \
             `firmware`)",
            path.display()
        ),
    })?;
    let identities = (
        fabric.vendor_id,
        fabric.upstream_device_id,
        fabric.downstream_device_id,
    );
    if identities != FIRMWARE_BRIDGE_IDS {
        return invalid(
            at,
            format!(
                "the firmware's virtual switch ports are {:04x}:{:04x} (upstream) and \
                 {:04x}:{:04x} (downstream): `vendor_id`, `upstream_device_id` and \
                 `downstream_device_id` must be those",
                FIRMWARE_BRIDGE_IDS.0,
                FIRMWARE_BRIDGE_IDS.1,
                FIRMWARE_BRIDGE_IDS.0,
                FIRMWARE_BRIDGE_IDS.2
            ),
        );
    }
    Ok(ManagerPlan::Firmware { path, elf, core })
}

/// Checks `file` (parsed from `text`) and resolves its names; files it
/// names are read relative to `base`.
pub fn resolve(file: ScenarioFile, text: &str, base: &Path) -> Result<Scenario, Invalid> {
    let mut taken = BTreeMap::new();
    if file.switches.is_empty() {
        return invalid(0, "a scenario needs at least one `[[switch]]`");
    }
    if let Some(extra) = file.switches.get(MAX_SWITCHES) {
        return invalid(
            extra.span().start,
            format!("the fabric manager handles {MAX_SWITCHES} switches; this is one more"),
        );
    }
    if let Some(extra) = file.hosts.get(MAX_HOST_PORTS) {
        return invalid(
            extra.span().start,
            format!("the fabric manager has {MAX_HOST_PORTS} host ports; this host is one more"),
        );
    }
    let mut ids = BTreeMap::new();
    for switch in &file.switches {
        let at = switch.span().start;
        let spec = switch.get_ref();
        unique(&mut taken, &spec.name, at, text)?;
        if spec.ports == 0 || usize::from(spec.ports) > PORTS {
            return invalid(
                at,
                format!(
                    "`ports` = {}: a weft switch has 1 to {PORTS} ports",
                    spec.ports
                ),
            );
        }
        if let Some(first) = ids.insert(spec.id, at) {
            let (line, _) = line_column(text, first);
            return invalid(
                at,
                format!(
                    "`id` = {:#x} is already the ID of the switch on line {line}",
                    spec.id
                ),
            );
        }
    }
    for host in &file.hosts {
        unique(&mut taken, &host.get_ref().name, host.span().start, text)?;
        let slots = host.get_ref().slots;
        if slots == 0 || usize::from(slots) > MAX_SLOTS_PER_HOST {
            return invalid(
                host.span().start,
                format!("`slots` = {slots}: a host has 1 to {MAX_SLOTS_PER_HOST} slots"),
            );
        }
    }
    for endpoint in &file.endpoints {
        unique(
            &mut taken,
            &endpoint.get_ref().name,
            endpoint.span().start,
            text,
        )?;
    }
    let names = Names {
        switches: file
            .switches
            .iter()
            .map(|s| (s.get_ref().name.as_str(), s.get_ref().ports))
            .collect(),
        hosts: file
            .hosts
            .iter()
            .map(|h| h.get_ref().name.as_str())
            .collect(),
        endpoints: file
            .endpoints
            .iter()
            .map(|e| e.get_ref().name.as_str())
            .collect(),
    };

    // Links: every port used once, every host and endpoint exactly once.
    let mut port_used: BTreeMap<Place, usize> = BTreeMap::new();
    let mut node_link: BTreeMap<End, (usize, Place, LinkConfig)> = BTreeMap::new();
    let mut cables = Vec::new();
    for link in &file.links {
        let spec = link.get_ref();
        let at = link.span().start;
        let config = shape(
            LinkShape {
                generation: spec.generation,
                width: spec.width,
                latency_ns: spec.latency_ns,
            },
            file.defaults.link,
            at,
        )?;
        let ends = [names.end(&spec.ends[0])?, names.end(&spec.ends[1])?];
        for (end, written) in ends.iter().zip(&spec.ends) {
            if let End::Port(place) = end {
                if let Some(first) = port_used.insert(*place, written.span().start) {
                    let (line, _) = line_column(text, first);
                    return invalid(
                        written.span().start,
                        format!(
                            "link end `{}`: that port already has the link on line {line}",
                            written.get_ref()
                        ),
                    );
                }
            }
        }
        match ends {
            [End::Port(a), End::Port(b)] => cables.push(CablePlan { a, b, link: config }),
            [End::Port(place), node] | [node, End::Port(place)] => {
                let written = if matches!(ends[0], End::Port(_)) {
                    &spec.ends[1]
                } else {
                    &spec.ends[0]
                };
                if let Some((first, _, _)) =
                    node_link.insert(node, (written.span().start, place, config))
                {
                    let (line, _) = line_column(text, first);
                    return invalid(
                        written.span().start,
                        format!("link end `{}` already has the link on line {line}; a host or endpoint has one link", written.get_ref()),
                    );
                }
            }
            _ => {
                return invalid(
                    spec.ends[0].span().start,
                    "`ends`: a link has a switch port (`switch.port`) at one end at least",
                )
            }
        }
    }

    let mut hosts = Vec::new();
    for (index, host) in file.hosts.iter().enumerate() {
        let spec = host.get_ref();
        let Some((_, place, link)) = node_link.get(&End::Host(index)) else {
            return invalid(
                host.span().start,
                format!("host `{}` has no `[[link]]`", spec.name),
            );
        };
        hosts.push(HostPlan {
            name: spec.name.clone(),
            place: *place,
            slots: spec.slots,
            link: *link,
        });
    }
    let manager = manager_plan(&file, base)?;
    if matches!(manager, ManagerPlan::Firmware { .. }) {
        // The firmware names its own switch by its station address; the
        // host ports provisioned in its flash name the first switch.
        let first = &file.switches[0];
        if first.get_ref().id != FIRMWARE_SWITCH_ID {
            return invalid(
                first.span().start,
                format!(
                    "switch `{}`: with the firmware as its manager, the first switch is the \
                     firmware's, whose switch ID is {FIRMWARE_SWITCH_ID:#x} (its station \
                     address): `id` must be that",
                    first.get_ref().name
                ),
            );
        }
    }
    let mut models = Vec::new();
    for endpoint in &file.endpoints {
        models.push(endpoint_model(
            endpoint.get_ref(),
            endpoint.span().start,
            base,
        )?);
    }
    let below = resolve_below(&file, &names, &models, &node_link, text)?;
    let mut endpoints = Vec::new();
    for (index, (endpoint, model)) in file.endpoints.iter().zip(models).enumerate() {
        let spec = endpoint.get_ref();
        let at = endpoint.span().start;
        // Follow `below` up to the endpoint with the link.
        let mut path = Vec::new();
        let mut top = index;
        while let Some((parent, port)) = below[top] {
            if path.len() > file.endpoints.len() {
                return invalid(
                    at,
                    format!("endpoint `{}`: its `below` chain loops", spec.name),
                );
            }
            path.insert(0, port);
            top = parent;
        }
        let Some((_, place, link)) = node_link.get(&End::Endpoint(top)) else {
            return invalid(
                file.endpoints[top].span().start,
                format!(
                    "endpoint `{}` has no `[[link]]`",
                    file.endpoints[top].get_ref().name
                ),
            );
        };
        endpoints.push(EndpointPlan {
            name: spec.name.clone(),
            model,
            place: *place,
            path,
            below: below[index],
            link: *link,
        });
    }

    for (index, switch) in file.switches.iter().enumerate() {
        for (port, role) in &switch.get_ref().roles {
            let at = switch.span().start;
            let name = &switch.get_ref().name;
            let Some(number) = port
                .parse::<u8>()
                .ok()
                .filter(|p| *p < switch.get_ref().ports)
            else {
                return invalid(at, format!("`roles`: switch `{name}` has no port `{port}`"));
            };
            let place = Place::new(index, number);
            let wired = if cables.iter().any(|c| c.a == place || c.b == place) {
                Role::Fabric
            } else if hosts.iter().any(|h| h.place == place) {
                Role::Host
            } else if endpoints.iter().any(|e| e.place == place) {
                Role::Endpoint
            } else {
                Role::Unused
            };
            if wired != *role {
                return invalid(
                    at,
                    format!("`roles`: port {name}.{number} is {role:?} here but its links make it {wired:?}"),
                );
            }
        }
    }

    let mut steps = Vec::new();
    for step in &file.steps {
        let at = step.span().start;
        let StepSpec { label, action } = step.get_ref();
        let firmware = matches!(manager, ManagerPlan::Firmware { .. });
        if firmware
            && !matches!(
                action,
                ActionSpec::Enumerate {} | ActionSpec::Boot { .. } | ActionSpec::Hang { .. }
            )
        {
            return invalid(
                at,
                "with the firmware as its manager a scenario enumerates, boots hosts and \
                 hangs endpoints only: the other steps need the native fabric manager's state",
            );
        }
        let targets = |field: &str, list: &[String]| -> Result<Vec<Target>, Invalid> {
            list.iter()
                .map(|name| names.target(at, field, name))
                .collect()
        };
        let gpu = |field: &str, name: &str| -> Result<usize, Invalid> {
            let target = names.target(at, field, name)?;
            match (&endpoints[target.endpoint].model, target.vf) {
                (EndpointModel::Gpu(_), None) => Ok(target.endpoint),
                _ => invalid(at, format!("`{field}`: `{name}` is not a GPU")),
            }
        };
        let action = match action {
            ActionSpec::Enumerate {} => Action::Enumerate,
            ActionSpec::Boot { hosts } => Action::Boot {
                hosts: hosts
                    .iter()
                    .map(|h| names.host(at, h))
                    .collect::<Result<_, _>>()?,
            },
            ActionSpec::Bind {
                endpoints: list,
                host,
                slot,
            } => {
                let host = names.host(at, host)?;
                let targets = targets("endpoints", list)?;
                if let Some(first) = slot {
                    let slots = hosts[host].slots;
                    if usize::from(*first) + targets.len() > usize::from(slots) {
                        return invalid(
                            at,
                            format!("`slot` = {first}: {} endpoints from there do not fit the host's {slots} slots", targets.len()),
                        );
                    }
                }
                Action::Bind {
                    targets,
                    host,
                    slot: *slot,
                }
            }
            ActionSpec::Unbind { endpoints, mode } => Action::Unbind {
                targets: targets("endpoints", endpoints)?,
                mode: match mode {
                    UnbindSpec::Graceful => UnbindMode::Graceful,
                    UnbindSpec::Managed => UnbindMode::Managed,
                    UnbindSpec::Surprise => UnbindMode::Surprise,
                },
            },
            ActionSpec::P2p {
                host,
                from,
                to,
                copy_bytes,
                latency_bytes,
                verify,
            } => Action::P2p {
                host: names.host(at, host)?,
                from: gpu("from", from)?,
                to: gpu("to", to)?,
                copy_bytes: *copy_bytes,
                latency_bytes: *latency_bytes,
                verify: *verify,
            },
            ActionSpec::Nvme {
                host,
                endpoint,
                bytes,
            } => {
                let target = names.target(at, "endpoint", endpoint)?;
                if !matches!(endpoints[target.endpoint].model, EndpointModel::Nvme(_)) {
                    return invalid(at, format!("`endpoint`: `{endpoint}` is not an NVMe drive"));
                }
                if bytes % 512 != 0 || *bytes == 0 {
                    return invalid(
                        at,
                        format!("`bytes` = {bytes}: a multiple of the 512-byte block"),
                    );
                }
                Action::Nvme {
                    host: names.host(at, host)?,
                    target,
                    bytes: *bytes,
                }
            }
            ActionSpec::Hang {
                endpoints: names_given,
                after_config_requests,
            } => {
                let after_config_requests = match *after_config_requests {
                    None => None,
                    Some(requests) if requests < 1 => {
                        return invalid(
                            at,
                            format!("`after_config_requests` = {requests}: the configuration requests the endpoints complete before they hang, 1 or more; leave it out to hang them at once"),
                        )
                    }
                    Some(requests) => Some(u32::try_from(requests).or_else(|_| {
                        invalid(
                            at,
                            format!("`after_config_requests` = {requests}: at most {}", u32::MAX),
                        )
                    })?),
                };
                let mut hung = Vec::new();
                for target in targets("endpoints", names_given)? {
                    let endpoint = &endpoints[target.endpoint];
                    if let Some(vf) = target.vf {
                        return invalid(
                            at,
                            format!("`endpoints`: `{}.vf{vf}` is a virtual function; a device hangs whole: name `{}`", endpoint.name, endpoint.name),
                        );
                    }
                    hung.push(target.endpoint);
                }
                Action::Hang {
                    endpoints: hung,
                    after_config_requests,
                }
            }
            ActionSpec::Read {
                host,
                endpoint,
                space,
                expect,
            } => Action::Read {
                host: names.host(at, host)?,
                target: names.target(at, "endpoint", endpoint)?,
                space: *space,
                expect: match expect {
                    ReadExpect::Successful => CompletionStatus::Successful,
                    ReadExpect::UnsupportedRequest => CompletionStatus::UnsupportedRequest,
                    ReadExpect::CompleterAbort => CompletionStatus::CompleterAbort,
                },
            },
            ActionSpec::Sees { host, endpoints } => Action::Sees {
                host: names.host(at, host)?,
                targets: targets("endpoints", endpoints)?,
            },
            ActionSpec::CheckBindings {} => Action::CheckBindings,
            ActionSpec::CheckTraffic {} => Action::CheckTraffic,
            ActionSpec::Probe { host, endpoint, by } => Action::Probe {
                host: names.host(at, host)?,
                target: names.target(at, "endpoint", endpoint)?,
                by: by.as_deref().map(|by| gpu("by", by)).transpose()?,
            },
        };
        for target in action_targets(&action) {
            if let EndpointModel::PcieSwitch { .. } = endpoints[target.endpoint].model {
                return invalid(
                    at,
                    format!(
                        "`{}` is a PCIe switch: its ports stay with the fabric; name the endpoints below it",
                        endpoints[target.endpoint].name
                    ),
                );
            }
            if let Some(vf) = target.vf {
                let total = endpoints[target.endpoint].model.total_vfs();
                if vf > total.min(file.fabric.num_vfs) {
                    return invalid(
                        at,
                        format!(
                            "`{}.vf{vf}`: the endpoint has {total} VFs and the fabric enables {} (`[fabric] num_vfs`)",
                            endpoints[target.endpoint].name, file.fabric.num_vfs
                        ),
                    );
                }
            }
        }
        steps.push(Step {
            line: line_column(text, at).0,
            label: label.clone(),
            action,
        });
    }

    Ok(Scenario {
        name: file.scenario.name,
        title: file.scenario.title,
        description: file.scenario.description,
        fabric: FabricPlan {
            vendor_id: file.fabric.vendor_id,
            upstream_device_id: file.fabric.upstream_device_id,
            downstream_device_id: file.fabric.downstream_device_id,
            num_vfs: file.fabric.num_vfs,
        },
        manager,
        switches: file
            .switches
            .iter()
            .map(|s| SwitchPlan {
                name: s.get_ref().name.clone(),
                id: s.get_ref().id,
                ports: s.get_ref().ports,
                data_plane: s
                    .get_ref()
                    .data_plane
                    .as_ref()
                    .map_or(DataPlaneKind::Model, |kind| *kind.get_ref()),
            })
            .collect(),
        hosts,
        endpoints,
        cables,
        steps,
    })
}

/// Per endpoint, the conventional switch (endpoint index) and downstream
/// port its `below` names; checks that the switch is a `pcie_switch` with
/// that port, that no other endpoint is on the port, and that an endpoint
/// below a switch has no link of its own.
fn resolve_below(
    file: &ScenarioFile,
    names: &Names<'_>,
    models: &[EndpointModel],
    node_link: &BTreeMap<End, (usize, Place, LinkConfig)>,
    text: &str,
) -> Result<Vec<Option<(usize, u8)>>, Invalid> {
    let mut taken: BTreeMap<(usize, u8), usize> = BTreeMap::new();
    let mut below = Vec::new();
    for (index, endpoint) in file.endpoints.iter().enumerate() {
        let Some(written) = &endpoint.get_ref().below else {
            below.push(None);
            continue;
        };
        let at = written.span().start;
        let value = written.get_ref();
        let Some((switch, port)) = value.split_once('.') else {
            return invalid(
                at,
                format!("`below` = \"{value}\": written `switch.port`, a `pcie_switch` endpoint and its downstream port"),
            );
        };
        let Some(parent) = names.endpoints.iter().position(|e| *e == switch) else {
            return invalid(at, format!("`below`: no endpoint named `{switch}`"));
        };
        let EndpointModel::PcieSwitch { ports } = models[parent] else {
            return invalid(
                at,
                format!("`below`: `{switch}` is not a kind = \"pcie_switch\" endpoint"),
            );
        };
        let Some(port) = port.parse::<u8>().ok().filter(|p| *p < ports) else {
            return invalid(
                at,
                format!("`below`: `{switch}` has {ports} downstream ports (0 to {}), `{port}` is none of them", ports - 1),
            );
        };
        if let Some(first) = taken.insert((parent, port), at) {
            let (line, _) = line_column(text, first);
            return invalid(
                at,
                format!("`below`: {value} already has the endpoint on line {line}"),
            );
        }
        if let Some((link, _, _)) = node_link.get(&End::Endpoint(index)) {
            let (line, _) = line_column(text, *link);
            return invalid(
                at,
                format!("`below`: the endpoint is below `{switch}` and also has the link on line {line}"),
            );
        }
        below.push(Some((parent, port)));
    }
    Ok(below)
}

/// Every function an action names.
fn action_targets(action: &Action) -> Vec<Target> {
    match action {
        Action::Bind { targets, .. }
        | Action::Unbind { targets, .. }
        | Action::Sees { targets, .. } => targets.clone(),
        Action::Nvme { target, .. }
        | Action::Probe { target, .. }
        | Action::Read { target, .. } => vec![*target],
        _ => Vec::new(),
    }
}
