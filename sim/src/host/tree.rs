//! What the host found: every function with its IDs, class, BARs and
//! bridge windows, and `lspci`-like printouts of it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::RangeInclusive;

use weft_pcie::config::pcie_cap::PortType;
use weft_pcie::config::BarKind;
use weft_pcie::Bdf;

use super::interrupts::Vector;

/// One memory or I/O BAR as sized and placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarInfo {
    /// BAR index (0..=5); a 64-bit BAR is named by its low register.
    pub index: u8,
    /// Configuration-space offset of its (low) register.
    pub register: u16,
    /// Decode type.
    pub kind: BarKind,
    /// Size in bytes.
    pub size: u64,
    /// Where it was placed; `None` if it was left unassigned (I/O BARs).
    pub address: Option<u64>,
}

impl BarInfo {
    /// Whether the BAR holds `address`.
    pub fn contains(&self, address: u64) -> bool {
        self.address
            .is_some_and(|base| address >= base && address - base < self.size)
    }
}

/// A hot-plug or plain slot on a downstream port (§7.5.3.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotInfo {
    /// Physical Slot Number.
    pub physical: u16,
    /// Slot Capabilities: Hot-Plug Capable.
    pub hot_plug: bool,
    /// Slot Capabilities as read (see `weft_pcie`'s `slot_capabilities`).
    pub capabilities: u32,
    /// Whether the hot-plug driver turned the slot's power off (Power
    /// Controller Control), which it remembers as pciehp does in its slot
    /// state rather than reading Slot Control again.
    pub powered_off: bool,
}

impl SlotInfo {
    /// Whether Slot Capabilities has `bit`.
    pub const fn has(&self, bit: u32) -> bool {
        self.capabilities & bit != 0
    }
}

/// What a Type 1 function forwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeInfo {
    /// Primary bus number.
    pub primary: u8,
    /// Secondary bus number.
    pub secondary: u8,
    /// Subordinate bus number.
    pub subordinate: u8,
    /// The non-prefetchable memory window, if open.
    pub memory: Option<RangeInclusive<u64>>,
    /// The prefetchable memory window, if open.
    pub prefetchable: Option<RangeInclusive<u64>>,
    /// The slot behind the port, if it has one.
    pub slot: Option<SlotInfo>,
}

/// Capability offsets the host uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CapabilityOffsets {
    /// PCI Express capability.
    pub pcie: Option<u16>,
    /// MSI capability.
    pub msi: Option<u16>,
    /// MSI-X capability.
    pub msix: Option<u16>,
    /// SR-IOV extended capability.
    pub sriov: Option<u16>,
}

/// How the function's interrupts were set up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum InterruptSetup {
    /// None (no MSI or MSI-X capability, or not set up yet).
    #[default]
    None,
    /// MSI with one vector (§7.7.1).
    Msi {
        /// The vector.
        vector: Vector,
    },
    /// MSI-X with these vectors, entry n raising `vectors[n]` (§7.7.2).
    MsiX {
        /// One vector per table entry used.
        vectors: Vec<Vector>,
    },
}

/// The SR-IOV state of a PF (§9.3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SriovInfo {
    /// Offset of the capability.
    pub offset: u16,
    /// TotalVFs.
    pub total_vfs: u16,
    /// NumVFs enabled now (0 while VF Enable is clear).
    pub num_vfs: u16,
    /// VF Device ID.
    pub vf_device_id: u16,
    /// VF BARs: VF 1's placement; VF n's is `(n - 1) * size` above.
    pub vf_bars: Vec<BarInfo>,
}

/// One function the host enumerated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Bus, device, function.
    pub bdf: Bdf,
    /// Vendor ID.
    pub vendor_id: u16,
    /// Device ID.
    pub device_id: u16,
    /// Class code (base, sub-class, programming interface).
    pub class: u32,
    /// Revision ID.
    pub revision: u8,
    /// The bridge whose secondary bus holds this function; `None` on bus 0.
    pub parent: Option<Bdf>,
    /// The PF of a VF.
    pub physical_function: Option<Bdf>,
    /// Device/Port Type from the PCI Express capability.
    pub port_type: Option<PortType>,
    /// Max_Payload_Size Supported, in bytes.
    pub max_payload_supported: u16,
    /// Max_Payload_Size programmed, in bytes.
    pub max_payload: u16,
    /// Memory BARs (and unassigned I/O BARs).
    pub bars: Vec<BarInfo>,
    /// Bridge state, for Type 1 functions.
    pub bridge: Option<BridgeInfo>,
    /// Capabilities found.
    pub capabilities: CapabilityOffsets,
    /// Interrupts set up.
    pub interrupts: InterruptSetup,
    /// SR-IOV state, for PFs.
    pub sriov: Option<SriovInfo>,
}

impl Function {
    /// The base class and sub-class (class code bits 23:8).
    pub fn class_id(&self) -> u16 {
        (self.class >> 8) as u16
    }

    /// The BAR with index `index`.
    pub fn bar(&self, index: u8) -> Option<&BarInfo> {
        self.bars.iter().find(|bar| bar.index == index)
    }

    /// Whether this is a virtual function.
    pub fn is_virtual(&self) -> bool {
        self.physical_function.is_some()
    }
}

/// The name lspci gives a class (base class and sub-class).
pub fn class_name(class_id: u16) -> &'static str {
    match class_id {
        0x0100 => "SCSI storage controller",
        0x0106 => "SATA controller",
        0x0108 => "Non-Volatile memory controller",
        0x0200 => "Ethernet controller",
        0x0207 => "Infiniband controller",
        0x0300 => "VGA compatible controller",
        0x0302 => "3D controller",
        0x0600 => "Host bridge",
        0x0604 => "PCI bridge",
        0x0880 => "System peripheral",
        0x1200 => "Processing accelerators",
        _ => "Unclassified device",
    }
}

/// The functions the host knows, by routing ID.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceTree {
    functions: BTreeMap<Bdf, Function>,
}

impl DeviceTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// The function at `bdf`.
    pub fn get(&self, bdf: Bdf) -> Option<&Function> {
        self.functions.get(&bdf)
    }

    /// The function at `bdf`, mutably.
    pub fn get_mut(&mut self, bdf: Bdf) -> Option<&mut Function> {
        self.functions.get_mut(&bdf)
    }

    /// Every function in BDF order.
    pub fn iter(&self) -> impl Iterator<Item = &Function> {
        self.functions.values()
    }

    /// How many functions there are.
    pub fn len(&self) -> usize {
        self.functions.len()
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// Adds or replaces a function.
    pub fn insert(&mut self, function: Function) {
        self.functions.insert(function.bdf, function);
    }

    /// The functions directly below `parent` (`None`: bus 0), in BDF order.
    pub fn children(&self, parent: Option<Bdf>) -> Vec<Bdf> {
        self.functions
            .values()
            .filter(|f| f.parent == parent)
            .map(|f| f.bdf)
            .collect()
    }

    /// Every function below `bridge`, depth first, deepest last.
    pub fn descendants(&self, bridge: Bdf) -> Vec<Bdf> {
        let mut out = Vec::new();
        for child in self.children(Some(bridge)) {
            out.push(child);
            out.extend(self.descendants(child));
        }
        out
    }

    /// Removes `bdf` and everything below it; returns what was removed.
    pub fn remove_subtree(&mut self, bdf: Bdf) -> Vec<Function> {
        let mut gone = Vec::new();
        for below in self.descendants(bdf) {
            gone.extend(self.functions.remove(&below));
        }
        gone.extend(self.functions.remove(&bdf));
        gone
    }

    /// The bridges from bus 0 down to `bdf`'s parent, top first.
    pub fn path(&self, bdf: Bdf) -> Vec<Bdf> {
        let mut path = Vec::new();
        let mut at = self.get(bdf).and_then(|f| f.parent);
        while let Some(bridge) = at {
            path.push(bridge);
            at = self.get(bridge).and_then(|f| f.parent);
        }
        path.reverse();
        path
    }

    /// Functions of class `class_id` (base class and sub-class).
    pub fn of_class(&self, class_id: u16) -> Vec<Bdf> {
        self.functions
            .values()
            .filter(|f| f.class_id() == class_id)
            .map(|f| f.bdf)
            .collect()
    }

    /// The tree as `lspci -tv` draws it: bridges with their bus ranges,
    /// children indented under them.
    pub fn lspci_tree(&self) -> String {
        let mut out = String::from("-[0000:00]\n");
        let roots = self.children(None);
        self.draw(&mut out, &roots, "  ");
        out
    }

    fn draw(&self, out: &mut String, list: &[Bdf], indent: &str) {
        for (position, bdf) in list.iter().enumerate() {
            let Some(function) = self.get(*bdf) else {
                continue;
            };
            let last = position + 1 == list.len();
            let branch = if last { "\\-" } else { "+-" };
            let buses = function
                .bridge
                .as_ref()
                .map(|b| {
                    if b.secondary == b.subordinate {
                        format!("-[{:02x}]-", b.secondary)
                    } else {
                        format!("-[{:02x}-{:02x}]-", b.secondary, b.subordinate)
                    }
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{indent}{branch}{bdf}{buses}  {:04x}:{:04x} {}",
                function.vendor_id,
                function.device_id,
                class_name(function.class_id()),
            );
            let children = self.children(Some(*bdf));
            if !children.is_empty() {
                let deeper = format!("{indent}{}", if last { "    " } else { "|   " });
                self.draw(out, &children, &deeper);
            }
        }
    }

    /// One entry per function, as `lspci -vv` summarises it: class, IDs,
    /// regions, bus numbers and windows, interrupts, MPS.
    pub fn lspci_list(&self) -> String {
        let mut out = String::new();
        for f in self.functions.values() {
            let _ = writeln!(
                out,
                "{} {} [{:04x}]: {:04x}:{:04x} (rev {:02x}){}",
                f.bdf,
                class_name(f.class_id()),
                f.class_id(),
                f.vendor_id,
                f.device_id,
                f.revision,
                if f.is_virtual() {
                    " [virtual function]"
                } else {
                    ""
                },
            );
            for bar in &f.bars {
                let _ = writeln!(out, "\t{}", describe_bar("Region", bar));
            }
            if let Some(sriov) = &f.sriov {
                let _ = writeln!(
                    out,
                    "\tSR-IOV: TotalVFs={} NumVFs={} VF Device ID={:04x}",
                    sriov.total_vfs, sriov.num_vfs, sriov.vf_device_id
                );
                for bar in &sriov.vf_bars {
                    let _ = writeln!(out, "\t\t{}", describe_bar("VF Region", bar));
                }
            }
            if let Some(bridge) = &f.bridge {
                let _ = writeln!(
                    out,
                    "\tBus: primary={:02x}, secondary={:02x}, subordinate={:02x}",
                    bridge.primary, bridge.secondary, bridge.subordinate
                );
                let window = |w: &Option<RangeInclusive<u64>>| match w {
                    Some(range) => format!(
                        "{:x}-{:x} [size={}]",
                        range.start(),
                        range.end(),
                        human_size(range.end() - range.start() + 1)
                    ),
                    None => "[disabled]".into(),
                };
                let _ = writeln!(out, "\tMemory behind bridge: {}", window(&bridge.memory));
                let _ = writeln!(
                    out,
                    "\tPrefetchable memory behind bridge: {}",
                    window(&bridge.prefetchable)
                );
                if let Some(slot) = bridge.slot {
                    let _ = writeln!(
                        out,
                        "\tSlot #{}, HotPlug{}",
                        slot.physical,
                        if slot.hot_plug { "+" } else { "-" }
                    );
                }
            }
            match &f.interrupts {
                InterruptSetup::None => {}
                InterruptSetup::Msi { vector } => {
                    let _ = writeln!(out, "\tMSI: Enable+ Count=1/1 Vector={:#04x}", vector.0);
                }
                InterruptSetup::MsiX { vectors } => {
                    let list: Vec<String> =
                        vectors.iter().map(|v| format!("{:#04x}", v.0)).collect();
                    let _ = writeln!(
                        out,
                        "\tMSI-X: Enable+ Count={} Vectors={}",
                        vectors.len(),
                        list.join(",")
                    );
                }
            }
            if f.capabilities.pcie.is_some() {
                let _ = writeln!(
                    out,
                    "\tDevCap: MaxPayload {} bytes; DevCtl: MaxPayload {} bytes",
                    f.max_payload_supported, f.max_payload
                );
            }
        }
        out
    }
}

/// `Memory at e0000000 (64-bit, prefetchable) [size=256M]`.
fn describe_bar(label: &str, bar: &BarInfo) -> String {
    let (space, width, prefetch) = match bar.kind {
        BarKind::Io => ("I/O ports", "", ""),
        BarKind::Memory32 { prefetchable } => ("Memory", "32-bit, ", prefetch_word(prefetchable)),
        BarKind::Memory64 { prefetchable } => ("Memory", "64-bit, ", prefetch_word(prefetchable)),
    };
    let at = match bar.address {
        Some(address) => format!("at {address:x}"),
        None => "<unassigned>".into(),
    };
    format!(
        "{label} {}: {space} {at} ({width}{prefetch}) [size={}]",
        bar.index,
        human_size(bar.size)
    )
    .replace(" ()", "")
}

fn prefetch_word(prefetchable: bool) -> &'static str {
    if prefetchable {
        "prefetchable"
    } else {
        "non-prefetchable"
    }
}

/// Sizes as lspci prints them: 16K, 256M, 4G.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    for (unit, suffix) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}
