//! What enumeration found: every function with its fabric ID and placed
//! BARs, and what sits behind each port.

use heapless::Vec;
use weft_pcie::config::bar::MAX_BARS;
use weft_pcie::config::header::type0;
use weft_pcie::config::{Bar, BarKind};
use weft_pcie::Bdf;
use weft_regs::capacity;

use crate::hw::{ConfigPath, DataPlane, Fabric, RemoteSwitch};
use crate::limits::{MAX_BRIDGES, MAX_FUNCTIONS, MAX_SWITCHES};
use crate::paths::NextHops;
use weft_regs::tables::{HostIndex, PortIndex};

/// A BAR of a fabric function, and where it sits in the fabric.
///
/// Kept in 16 bytes (the inventory holds up to six per function): the size,
/// a power of two (§7.5.1.2.1), as its log2, and the register as the BAR number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedBar {
    fabric_address: u64,
    kind: BarKind,
    size_log2: u8,
    number: u8,
    placed: bool,
}

impl PlacedBar {
    /// The BAR whose (low) register is at `register` in the header the host
    /// sees (0x10 + 4 × BAR number; for a VF, the VF BAR it comes from has
    /// the same number, PCIe Base 6.0 §9.3.3.14), of kind and size `bar`
    /// (per VF, for a VF), at `fabric_address` (`None` for an I/O BAR,
    /// which the fabric does not carry).
    pub const fn new(register: u16, bar: Bar, fabric_address: Option<u64>) -> Self {
        let (fabric_address, placed) = match fabric_address {
            Some(address) => (address, true),
            None => (0, false),
        };
        PlacedBar {
            fabric_address,
            kind: bar.kind,
            size_log2: bar.size.trailing_zeros() as u8,
            number: (register.wrapping_sub(type0::BAR0) / 4) as u8,
            placed,
        }
    }

    /// Offset of the BAR's (low) register in the header the host sees.
    pub const fn register(&self) -> u16 {
        type0::BAR0 + 4 * self.number as u16
    }

    /// Kind and size.
    pub const fn bar(&self) -> Bar {
        Bar {
            kind: self.kind,
            size: self.size(),
        }
    }

    /// Size in bytes.
    pub const fn size(&self) -> u64 {
        1 << self.size_log2
    }

    /// Its fabric address; `None` for an I/O BAR.
    pub const fn fabric_address(&self) -> Option<u64> {
        if self.placed {
            Some(self.fabric_address)
        } else {
            None
        }
    }

    /// The same BAR at another fabric address.
    pub const fn at(self, fabric_address: Option<u64>) -> Self {
        PlacedBar::new(self.register(), self.bar(), fabric_address)
    }
}

/// Physical or virtual function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// A function with its own header.
    Physical,
    /// SR-IOV Virtual Function `vf` (1-based) of the PF `pf` (§9.3.3).
    Virtual {
        /// The PF's fabric ID.
        pf: Bdf,
        /// The VF number.
        vf: u16,
    },
}

/// SR-IOV as the manager set it up on a PF (§9.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SriovSetup {
    /// Offset of the SR-IOV capability.
    pub offset: u16,
    /// TotalVFs.
    pub total_vfs: u16,
    /// NumVFs the manager enabled.
    pub num_vfs: u16,
    /// First VF Offset read after NumVFs was set (§9.3.3.9).
    pub first_vf_offset: u16,
    /// VF Stride read after NumVFs was set (§9.3.3.10).
    pub vf_stride: u16,
}

/// Which virtual switch slot a function is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The host.
    pub host: HostIndex,
    /// The virtual downstream port (slot) number, 0-based.
    pub slot: u8,
}

/// A switch's place in [`Inventory::switches`]: the order discovery
/// found it in; the manager's own switch is [`SwitchIndex::LOCAL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SwitchIndex(pub u8);

impl SwitchIndex {
    /// The switch the manager runs on.
    pub const LOCAL: SwitchIndex = SwitchIndex(0);
}

/// One function in the fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Its fabric ID.
    pub id: Bdf,
    /// The switch it is below.
    pub switch: SwitchIndex,
    /// The port of that switch it is below.
    pub port: PortIndex,
    /// Physical or virtual.
    pub kind: FunctionKind,
    /// Vendor ID (a VF's is its PF's, §9.3.4.1.1).
    pub vendor_id: u16,
    /// Device ID (a VF's is the PF's VF Device ID, §9.3.3.11).
    pub device_id: u16,
    /// Class code, 24 bits.
    pub class_code: u32,
    /// Its BARs.
    pub bars: Vec<PlacedBar, MAX_BARS>,
    /// For a PF with SR-IOV: what was enabled.
    pub sriov: Option<SriovSetup>,
    /// Offset of its ACS capability, whose controls belong to the fabric.
    pub acs: Option<u16>,
    /// The conventional switch's downstream port (or bridge) it sits
    /// directly below; `None` when it is on the weft port's link. Two
    /// functions with the same value are functions of one device.
    pub bridge: Option<Bdf>,
    /// The slot it is bound to, if any.
    pub binding: Option<Binding>,
}

/// What sits behind a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PortKind {
    /// Nothing answered, or the port is not used.
    #[default]
    Empty,
    /// A host's root port.
    Host {
        /// The host.
        host: HostIndex,
        /// Its proxy fabric ID.
        proxy_id: Bdf,
    },
    /// Endpoints, using fabric buses `first..=last`.
    Endpoint {
        /// The bus range below the port.
        buses: (u8, u8),
    },
    /// A link to another weft switch.
    Fabric {
        /// The neighbour's switch ID, from its identity VSEC.
        switch_id: u64,
        /// The neighbour's port at the other end of the link.
        port: PortIndex,
    },
}

/// What a Type 1 function below an endpoint port is, from its PCI Express
/// capability's Device/Port Type (PCIe Base 6.0 §7.5.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BridgeKind {
    /// The upstream port of a conventional switch: its secondary bus is
    /// the switch's internal bus, with a downstream port at each device number.
    SwitchUpstream,
    /// A downstream port of a conventional switch: one link, device 0
    /// below it (§7.3.1).
    SwitchDownstream,
    /// Any other bridge (PCI Express to PCI, or no PCI Express capability):
    /// every device number of its secondary bus is scanned.
    Other,
}

/// A conventional switch port or bridge below an endpoint port, as the
/// manager programmed it. It stays with the fabric: it is never bound, and
/// hosts never see it; the endpoints below it are bound on their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bridge {
    /// Its fabric ID.
    pub id: Bdf,
    /// The weft switch it is below.
    pub switch: SwitchIndex,
    /// The port of that switch it is below.
    pub port: PortIndex,
    /// What it is.
    pub kind: BridgeKind,
    /// The bridge above it, `None` when it sits on the weft port's link.
    pub parent: Option<Bdf>,
    /// Secondary and subordinate bus numbers (its primary is `id`'s bus).
    pub buses: (u8, u8),
    /// The memory window `(base, limit)`, limit inclusive; `None` when closed.
    pub memory: Option<(u64, u64)>,
    /// The prefetchable memory window `(base, limit)`; `None` when closed.
    pub prefetchable: Option<(u64, u64)>,
    /// The ACS controls the manager enabled (`weft_pcie::config::acs::feature`);
    /// 0 without an ACS capability.
    pub acs_enabled: u16,
    /// A downstream port only: the device on its link stopped completing
    /// the manager's configuration requests while it was probed (PCIe Base
    /// 6.0 §2.8), and what it had been given was released; the port's
    /// siblings and the weft port stay in use.
    pub device_not_responding: bool,
}

impl Bridge {
    /// Whether it sends every peer-to-peer request and completion that
    /// arrives on its secondary side upstream rather than across to
    /// another of its switch's ports (ACS P2P Request and Completion
    /// Redirect, §6.12.1.1). Upstream ports and other bridges have one
    /// secondary side and route nothing across.
    pub const fn redirects_peers(&self) -> bool {
        use weft_pcie::config::acs::feature;
        let both = feature::P2P_REQUEST_REDIRECT | feature::P2P_COMPLETION_REDIRECT;
        match self.kind {
            BridgeKind::SwitchDownstream => self.acs_enabled & both == both,
            BridgeKind::SwitchUpstream | BridgeKind::Other => true,
        }
    }
}

/// One weft switch of the fabric and what sits behind its ports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricSwitch {
    /// Its switch ID.
    pub id: u64,
    /// How many ports it has.
    pub port_count: u8,
    /// What sits behind each port.
    pub ports: [PortKind; capacity::PORTS],
    /// Per port, the fabric address ranges `(base, end)` its BARs occupy:
    /// below 4 GiB, then 64-bit prefetchable.
    pub port_ranges: [[Option<(u64, u64)>; 2]; capacity::PORTS],
    /// The manager's switch's port that routed configuration requests to
    /// it leave by ([`crate::hw::ConfigPath::Routed`]); `None` for the
    /// manager's own switch.
    pub via: Option<PortIndex>,
    /// The fabric address of its management BAR (its CSR window, reached
    /// in-band: [`crate::inband`]); `None` for the manager's own switch,
    /// whose CSRs the CPU reaches directly.
    pub management_bar: Option<u64>,
    /// The ports whose device stopped completing the manager's
    /// configuration requests while enumeration probed it, one bit per
    /// port: a request timed out, or the switch completed it with
    /// Completer Abort (PCIe Base 6.0 §2.8). Such a port is
    /// [`PortKind::Empty`], with nothing of its device in the inventory;
    /// the device is not responding ([`FabricSwitch::not_responding`]).
    pub not_responding: u32,
}

impl FabricSwitch {
    /// A switch with nothing found behind its ports yet.
    pub const fn new(id: u64, port_count: u8) -> Self {
        FabricSwitch {
            id,
            port_count,
            ports: [PortKind::Empty; capacity::PORTS],
            port_ranges: [[None; 2]; capacity::PORTS],
            via: None,
            management_bar: None,
            not_responding: 0,
        }
    }

    /// Whether the device behind `port` stopped completing the manager's
    /// configuration requests when the fabric was enumerated.
    pub fn not_responding(&self, port: PortIndex) -> bool {
        port.0 < 32 && self.not_responding & (1 << port.0) != 0
    }

    /// What sits behind `port`.
    pub fn port(&self, port: PortIndex) -> PortKind {
        self.ports
            .get(usize::from(port.0))
            .copied()
            .unwrap_or_default()
    }
}

/// Everything enumeration found and assigned.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    /// Every function, in enumeration order.
    pub functions: Vec<Function, MAX_FUNCTIONS>,
    /// Every weft switch, in discovery order (breadth first from the
    /// manager's own, each switch's ports in index order).
    pub switches: Vec<FabricSwitch, MAX_SWITCHES>,
    /// The first hop of the shortest path between every pair of switches.
    pub paths: NextHops,
    /// The conventional switch ports and bridges below endpoint ports,
    /// in enumeration order (depth first).
    pub bridges: Vec<Bridge, MAX_BRIDGES>,
}

impl Inventory {
    /// Nothing found yet.
    pub const EMPTY: Inventory = Inventory {
        functions: Vec::new(),
        switches: Vec::new(),
        paths: NextHops::EMPTY,
        bridges: Vec::new(),
    };

    /// Empties it, in place.
    pub fn clear(&mut self) {
        self.functions.clear();
        self.switches.clear();
        self.paths = NextHops::EMPTY;
        self.bridges.clear();
    }

    /// The index of the function with fabric ID `id`.
    pub fn index_of(&self, id: Bdf) -> Option<usize> {
        self.functions.iter().position(|f| f.id == id)
    }

    /// The function with fabric ID `id`.
    pub fn function(&self, id: Bdf) -> Option<&Function> {
        self.functions.iter().find(|f| f.id == id)
    }

    /// What sits behind `port` of the manager's own switch.
    pub fn port(&self, port: PortIndex) -> PortKind {
        self.port_on(SwitchIndex::LOCAL, port)
    }

    /// What sits behind `port` of switch `switch`.
    pub fn port_on(&self, switch: SwitchIndex, port: PortIndex) -> PortKind {
        self.switches
            .get(usize::from(switch.0))
            .map_or(PortKind::Empty, |s| s.port(port))
    }

    /// The index of the switch with ID `id`.
    pub fn switch_index(&self, id: u64) -> Option<SwitchIndex> {
        self.switches
            .iter()
            .position(|s| s.id == id)
            .map(|i| SwitchIndex(i as u8))
    }

    /// The data plane of `switch`; `Err` with its switch ID when `fabric`
    /// has no handle for it.
    pub fn plane<'f, F: Fabric + ?Sized>(
        &self,
        fabric: &'f mut F,
        switch: SwitchIndex,
    ) -> Result<&'f mut dyn DataPlane, u64> {
        if switch == SwitchIndex::LOCAL {
            return Ok(fabric.local());
        }
        let Some(found) = self.switches.get(usize::from(switch.0)) else {
            return Err(u64::MAX);
        };
        let remote = self.remote_switch(switch).ok_or(found.id)?;
        fabric.remote(remote).ok_or(found.id)
    }

    /// How the manager reaches `switch` in-band: `None` for its own switch,
    /// one it does not know, or one it has no way to yet.
    pub fn remote_switch(&self, switch: SwitchIndex) -> Option<RemoteSwitch> {
        if switch == SwitchIndex::LOCAL {
            return None;
        }
        let found = self.switches.get(usize::from(switch.0))?;
        Some(RemoteSwitch {
            id: found.id,
            via: found.via?,
            management_bar: found.management_bar,
        })
    }

    /// How the manager's configuration requests reach functions on bus
    /// `bus` below `port` of `switch`: routed out of the first hop of the
    /// path for another switch; on its own switch, on the link for the
    /// port's first bus and through the conventional switch below it for
    /// the others.
    pub fn config_path(&self, switch: SwitchIndex, port: PortIndex, bus: u8) -> ConfigPath {
        match self.switches.get(usize::from(switch.0)).and_then(|s| s.via) {
            Some(via) if switch != SwitchIndex::LOCAL => ConfigPath::Routed(via),
            _ => match self.port_on(switch, port) {
                PortKind::Endpoint { buses } if buses.0 != bus => ConfigPath::Below(port),
                _ => ConfigPath::Link(port),
            },
        }
    }

    /// How the manager's configuration requests reach `function`.
    pub fn path_to(&self, function: &Function) -> ConfigPath {
        self.config_path(function.switch, function.port, function.id.bus())
    }

    /// The bridge with fabric ID `id`.
    pub fn bridge(&self, id: Bdf) -> Option<&Bridge> {
        self.bridges.iter().find(|b| b.id == id)
    }

    /// Whether endpoint port `port` of `switch` sends peer traffic from
    /// below it back out of it (`DataPlane::set_return_to_ingress`): every
    /// function below it sits below a conventional switch's downstream
    /// port, and every such port between a function and the weft port
    /// redirects peer requests and completions upstream
    /// ([`Bridge::redirects_peers`]). The weft port then stands where a
    /// root port stands for the traffic those ports redirect, and returns
    /// it downstream after translation and isolation (PCIe Base 6.0
    /// §6.12.1.1, §7.7.11). Below any other downstream port the
    /// conventional switch decodes peer addresses itself, so nothing is
    /// returned to it.
    pub fn returns_peers_to(&self, switch: SwitchIndex, port: PortIndex) -> bool {
        let mut below = self
            .functions
            .iter()
            .filter(|f| f.switch == switch && f.port == port)
            .peekable();
        below.peek().is_some()
            && below.all(|f| self.below_switch_port(f) && self.peer_route_below(f).is_none())
    }

    /// Whether a conventional switch's downstream port is among the bridges above `function`.
    fn below_switch_port(&self, function: &Function) -> bool {
        let mut at = function.bridge;
        for _ in 0..MAX_BRIDGES {
            let Some(bridge) = at.and_then(|id| self.bridge(id)) else {
                return false;
            };
            if bridge.kind == BridgeKind::SwitchDownstream {
                return true;
            }
            at = bridge.parent;
        }
        false
    }

    /// The first conventional switch downstream port between `function`
    /// and its weft port that does not redirect peer traffic upstream
    /// ([`Bridge::redirects_peers`]); `None` when every one does, or there
    /// is none.
    pub fn peer_route_below(&self, function: &Function) -> Option<Bdf> {
        let mut at = function.bridge;
        for _ in 0..MAX_BRIDGES {
            let bridge = self.bridge(at?)?;
            if !bridge.redirects_peers() {
                return Some(bridge.id);
            }
            at = bridge.parent;
        }
        None
    }
}
