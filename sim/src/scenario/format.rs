//! The scenario file as written: TOML tables deserialized with serde,
//! unknown keys rejected, each table carrying its place in the text so
//! that validation can point at it.
//!
//! Names are resolved and the fabric is checked in
//! [`validate`](super::validate); this module only describes the shape.

use serde::Deserialize;
use toml::Spanned;

use crate::rtl_plane::RtlSimulator;

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// What the scenario is, for the report.
    pub scenario: About,
    /// Values every table falls back to.
    #[serde(default)]
    pub defaults: Defaults,
    /// The fabric manager's settings.
    #[serde(default)]
    pub fabric: FabricSection,
    /// The switches; the first runs the fabric manager.
    #[serde(rename = "switch")]
    pub switches: Vec<Spanned<SwitchSpec>>,
    /// The hosts.
    #[serde(rename = "host", default)]
    pub hosts: Vec<Spanned<HostSpec>>,
    /// The endpoints.
    #[serde(rename = "endpoint", default)]
    pub endpoints: Vec<Spanned<EndpointSpec>>,
    /// Every link: switch to switch, host to switch, endpoint to switch.
    #[serde(rename = "link", default)]
    pub links: Vec<Spanned<LinkSpec>>,
    /// The timeline, run in order.
    #[serde(rename = "step", default)]
    pub steps: Vec<Spanned<StepSpec>>,
}

/// The `[scenario]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct About {
    /// A short name (`reference`).
    pub name: String,
    /// One line saying what runs.
    pub title: String,
    /// Lines describing the fabric, printed under the title.
    #[serde(default)]
    pub description: Vec<String>,
}

/// The `[defaults]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// The shape of every link that does not give its own.
    #[serde(default)]
    pub link: LinkShape,
}

/// A link's generation, width and latency; what is missing comes from
/// `[defaults.link]`, and then from Gen3 x16 with 100 ns.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkShape {
    /// PCIe generation, 1 to 5.
    pub generation: Option<u8>,
    /// Lanes: 1, 2, 4, 8 or 16.
    pub width: Option<u8>,
    /// From the last byte sent to delivery, ns.
    pub latency_ns: Option<u64>,
}

/// The `[fabric]` table: the fabric manager's settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricSection {
    /// Vendor ID of the virtual switch ports the hosts see.
    #[serde(default = "default_vendor")]
    pub vendor_id: u16,
    /// Device ID of each host's virtual upstream port.
    #[serde(default = "default_upstream")]
    pub upstream_device_id: u16,
    /// Device ID of each host's virtual downstream ports.
    #[serde(default = "default_downstream")]
    pub downstream_device_id: u16,
    /// VFs the manager enables on every SR-IOV physical function.
    #[serde(default)]
    pub num_vfs: u16,
    /// Which fabric manager runs on switch 0 (`"native"` if absent).
    #[serde(default)]
    pub manager: Option<Spanned<ManagerKind>>,
    /// The firmware ELF for `manager = "firmware-iss"` or
    /// `"firmware-rtl"`, relative to the
    /// scenario file; the workspace's build (`cargo xtask firmware`, or
    /// the `WEFT_FIRMWARE` variable) if absent.
    #[serde(default)]
    pub firmware: Option<Spanned<String>>,
}

/// The fabric manager a scenario runs on switch 0.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ManagerKind {
    /// weft-fabric, run natively by the simulator.
    #[default]
    Native,
    /// The firmware ELF on the instruction-set simulator
    /// (`World::hand_manager_to_firmware`).
    FirmwareIss,
    /// The firmware ELF on the RTL soft core (the SoC of weft-hdl, cycle
    /// by cycle; `World::hand_manager_to_firmware`).
    FirmwareRtl,
}

fn default_vendor() -> u16 {
    crate::scenario::VIRTUAL_SWITCH_VENDOR
}

fn default_upstream() -> u16 {
    0x0001
}

fn default_downstream() -> u16 {
    0x0002
}

impl Default for FabricSection {
    fn default() -> Self {
        FabricSection {
            vendor_id: default_vendor(),
            upstream_device_id: default_upstream(),
            downstream_device_id: default_downstream(),
            num_vfs: 0,
            manager: None,
            firmware: None,
        }
    }
}

/// A `[[switch]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    /// Its name in the file (no `.`).
    pub name: String,
    /// Its switch ID, unique in the fabric.
    pub id: u64,
    /// How many ports it has.
    pub ports: u8,
    /// Roles the file expects ports to have (`port number = "host" |
    /// "fabric" | "endpoint" | "unused"`), checked against the links.
    #[serde(default)]
    pub roles: std::collections::BTreeMap<String, Role>,
    /// What carries its TLPs: `"model"` (weft-model, the default),
    /// `"rtl"` (weft-hdl's switch in rust-hdl's simulator, checked against
    /// the model, `crate::rtl_plane`) or `"verilated"` (the same switch's
    /// Verilog run by Verilator, checked alike).
    #[serde(default)]
    pub data_plane: Option<toml::Spanned<DataPlaneKind>>,
}

/// What carries a switch's TLPs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataPlaneKind {
    /// weft-model's transaction-level switch.
    #[default]
    Model,
    /// weft-hdl's RTL, clocked cycle by cycle in rust-hdl's simulator.
    Rtl,
    /// weft-hdl's RTL as the Verilog weft emits, built and clocked by Verilator.
    Verilated,
}

impl DataPlaneKind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [DataPlaneKind; 3] = [
        DataPlaneKind::Model,
        DataPlaneKind::Rtl,
        DataPlaneKind::Verilated,
    ];

    /// Its name in a scenario file and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DataPlaneKind::Model => "model",
            DataPlaneKind::Rtl => "rtl",
            DataPlaneKind::Verilated => "verilated",
        }
    }

    /// What simulates the RTL of a switch of this kind; none for the model.
    pub fn rtl_simulator(self) -> Option<RtlSimulator> {
        match self {
            DataPlaneKind::Model => None,
            DataPlaneKind::Rtl => Some(RtlSimulator::RustHdl),
            DataPlaneKind::Verilated => Some(RtlSimulator::Verilator),
        }
    }
}

impl std::str::FromStr for DataPlaneKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        DataPlaneKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| format!("{name}: expected model, rtl or verilated"))
    }
}

/// What a port is wired to, as a switch table states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A host's root port.
    Host,
    /// Another switch.
    Fabric,
    /// An endpoint.
    Endpoint,
    /// Nothing.
    Unused,
}

/// A `[[host]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Its name in the file.
    pub name: String,
    /// Hot-plug slots of its virtual switch.
    pub slots: u8,
}

/// A `[[endpoint]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointSpec {
    /// Its name in the file (no `.`).
    pub name: String,
    /// What it is.
    pub kind: EndpointKind,
    /// GPU: bytes of memory behind BAR1 (a power of two).
    pub memory_bytes: Option<u64>,
    /// NVMe: TotalVFs of the SR-IOV capability.
    pub vfs: Option<u16>,
    /// Dump: the `lspci -xxxx` file, relative to the scenario file.
    pub dump: Option<String>,
    /// Dump: per function, the size of each BAR slot in bytes (0: none,
    /// or the upper half of a 64-bit BAR).
    pub bar_sizes: Option<Vec<Vec<u64>>>,
    /// PCIe switch: how many downstream ports it has.
    pub downstream_ports: Option<u8>,
    /// The downstream port of a conventional PCIe switch this endpoint is
    /// on, `"switch.port"` naming a `pcie_switch` endpoint; such an
    /// endpoint has no `[[link]]` of its own.
    pub below: Option<Spanned<String>>,
}

/// Which model an endpoint runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointKind {
    /// weft-devices' GPU.
    Gpu,
    /// weft-devices' NVMe drive with SR-IOV.
    Nvme,
    /// A device from an `lspci -xxxx` dump.
    Dump,
    /// weft-devices' conventional PCIe switch, with the endpoints whose
    /// `below` names its downstream ports.
    PcieSwitch,
}

/// A `[[link]]`: two ends, each `"switch.port"` or a host's or
/// endpoint's name, and optionally its own shape.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Both ends.
    pub ends: [Spanned<String>; 2],
    /// PCIe generation, 1 to 5.
    pub generation: Option<u8>,
    /// Lanes.
    pub width: Option<u8>,
    /// Latency, ns.
    pub latency_ns: Option<u64>,
}

/// A `[[step]]` of the timeline: `do` says which action, the other keys
/// are its arguments; `label` replaces the report's description. Unknown
/// keys are rejected by the action (serde's `deny_unknown_fields` cannot
/// sit beside `flatten`).
#[derive(Debug, Deserialize)]
pub struct StepSpec {
    /// The report's description of the step.
    pub label: Option<String>,
    /// The action and its arguments.
    #[serde(flatten)]
    pub action: ActionSpec,
}

/// An action with its arguments, as written.
#[derive(Debug, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case", deny_unknown_fields)]
pub enum ActionSpec {
    /// The fabric manager discovers and enumerates the fabric. (Actions
    /// without arguments are written `{}` so unknown keys are rejected.)
    Enumerate {},
    /// Hosts boot: enumerate their hierarchy and load drivers.
    Boot {
        /// The hosts, in order.
        hosts: Vec<String>,
    },
    /// Bind endpoints (or VFs, `name.vfN`) to a host's slots.
    Bind {
        /// What to bind.
        endpoints: Vec<String>,
        /// The host.
        host: String,
        /// The first slot; the next ones follow. Default: the host's
        /// lowest free slots.
        slot: Option<u8>,
    },
    /// Unbind endpoints from whichever host has them.
    Unbind {
        /// What to unbind.
        endpoints: Vec<String>,
        /// `graceful` (default), `managed` or `surprise`.
        #[serde(default)]
        mode: UnbindSpec,
    },
    /// GPU peer-to-peer between two GPUs a host drives: bandwidth one way
    /// and both ways, and latency; with `verify`, the data checked too.
    P2p {
        /// The host running the test.
        host: String,
        /// GPU A.
        from: String,
        /// GPU B.
        to: String,
        /// Bytes per copy and direction.
        copy_bytes: u64,
        /// Bytes of the latency transfers.
        latency_bytes: u64,
        /// The GPU driver's peer test: each GPU's source is a pattern the
        /// CPU puts there first, and what landed in its peer must read
        /// back equal. Default: off, so the copies alone are timed.
        #[serde(default)]
        verify: bool,
    },
    /// A host writes a pattern to an NVMe function and reads it back.
    Nvme {
        /// The host.
        host: String,
        /// The drive or VF (`name.vfN`).
        endpoint: String,
        /// Bytes written and read (a multiple of 512).
        bytes: u64,
    },
    /// Endpoints stop answering, as devices whose firmware has crashed
    /// (`World::hang_device`): each takes in every TLP that reaches it and
    /// sends nothing, its link still up. A host's request to one is then
    /// completed by the switch with Completer Abort once the switch's
    /// completion timeout has passed (PCIe Base 6.0 §2.8), and the fabric
    /// manager's own configuration requests by the manager's timeout.
    /// Before `enumerate`, the manager finds the device not responding.
    Hang {
        /// The endpoints: whole devices (no `name.vfN`). A `pcie_switch`
        /// hangs with every device below it; a device below one hangs
        /// alone, the switch forwarding to it what it would.
        endpoints: Vec<String>,
        /// With it, each endpoint hangs partway
        /// (`World::hang_device_after`): it completes this many more
        /// configuration requests — reads and writes, from the fabric
        /// manager or a host, to any of its functions or below it — and
        /// hangs as the next one reaches it. Before `enumerate`, it hangs
        /// while the manager probes it (after its first read, during BAR
        /// sizing, its capability walks, SR-IOV set-up), and the manager
        /// finds it not responding all the same. From 1; without it, the
        /// endpoints hang at once.
        after_config_requests: Option<i64>,
    },
    /// A host's CPU reads the first DW of an endpoint's first memory BAR,
    /// at the address the host has for it, or with `space = "config"` the
    /// function's Vendor ID and Device ID (the first DW of its
    /// configuration space, which the fabric manager forwards to it), and
    /// must get the completion `expect` names; the report gives the time
    /// from the read to its completion.
    Read {
        /// The host reading.
        host: String,
        /// The function read (`name.vfN` for a VF); the host must see it.
        endpoint: String,
        /// What is read. Default: `memory`.
        #[serde(default)]
        space: ReadSpace,
        /// The completion status the read must get. Default: `successful`.
        #[serde(default)]
        expect: ReadExpect,
    },
    /// A host's hierarchy shows exactly these endpoints.
    Sees {
        /// The host.
        host: String,
        /// What it must see, and nothing else.
        endpoints: Vec<String>,
    },
    /// Every bound endpoint is visible to its host and to no other.
    CheckBindings {},
    /// No TLP lost, dropped beyond the isolation probes, or unexpected.
    CheckTraffic {},
    /// A host's driver reads an endpoint it does not own (at the address
    /// it last had for it) and must get Unsupported Request, not a hang.
    Probe {
        /// The host probing.
        host: String,
        /// The endpoint it must not reach.
        endpoint: String,
        /// A GPU the host drives that makes the read, peer to peer with its
        /// DMA engine, instead of the host's CPU. Default: the CPU.
        by: Option<String>,
    },
}

/// What a `read` step reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadSpace {
    /// The first DW of the function's first memory BAR: a memory read the
    /// switch carries to the function.
    #[default]
    Memory,
    /// The first DW of the function's configuration space (Vendor ID and
    /// Device ID): a configuration read the fabric manager answers for
    /// the host's virtual switch by forwarding it to the function.
    Config,
}

/// The completion a `read` step must get (the Completion Status field, PCIe Base 6.0 §2.2.9.1, Table 2-37).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadExpect {
    /// Successful Completion, with the data.
    #[default]
    Successful,
    /// Unsupported Request: nothing the host may reach is at the address.
    UnsupportedRequest,
    /// Completer Abort: the switch completes a request its target never
    /// answered once the completion timeout has passed (§2.8).
    CompleterAbort,
}

/// How an unbind takes the endpoint away (PCIe Base 6.0 §6.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnbindSpec {
    /// The host gives the device up first: an operator on the host powers
    /// its slot off, and the unbind then takes effect; requests in flight
    /// complete.
    #[default]
    Graceful,
    /// The switch presses the slot's Attention Button, the host's hot-plug
    /// driver releases the device and powers the slot off after its 5 s
    /// abort window, and the unbind then takes effect.
    Managed,
    /// The endpoint is gone at once; requests in flight complete with an error.
    Surprise,
}
