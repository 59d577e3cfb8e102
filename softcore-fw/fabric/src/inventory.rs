//! What enumeration found: every function with its fabric ID and placed
//! BARs, and what sits behind each port.

use heapless::Vec;
use weft_pcie::config::bar::MAX_BARS;
use weft_pcie::config::Bar;
use weft_pcie::Bdf;
use weft_regs::capacity;

use crate::limits::{MAX_FUNCTIONS, MAX_SKIPPED};
use weft_regs::tables::{HostIndex, PortIndex};

/// A BAR of a fabric function, and where it sits in the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedBar {
    /// Offset of the BAR's (low) register in the header the host sees
    /// (0x10 + 4 × BAR number); for a VF, the VF BAR it comes from has the
    /// same number (PCIe Base 6.0 §9.3.3.14).
    pub register: u16,
    /// Kind and size (per VF, for a VF).
    pub bar: Bar,
    /// Its fabric address; `None` for an I/O BAR, which the fabric does not carry.
    pub fabric_address: Option<u64>,
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

/// One function in the fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Its fabric ID.
    pub id: Bdf,
    /// The switch port it is below.
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
    /// Another weft switch (discovered, not yet enumerated through).
    Fabric {
        /// The neighbour's switch ID, from its identity VSEC.
        switch_id: u64,
    },
}

/// Why a device was left out of enumeration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// A Type 1 function (a conventional switch or bridge) below a port:
    /// enumeration through it is not implemented yet.
    Bridge,
}

/// A device left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The port.
    pub port: PortIndex,
    /// The function.
    pub id: Bdf,
    /// Why.
    pub reason: SkipReason,
}

/// Everything enumeration found and assigned.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    /// Every function, in enumeration order.
    pub functions: Vec<Function, MAX_FUNCTIONS>,
    /// What sits behind each port.
    pub ports: [PortKind; capacity::PORTS],
    /// Per port, the fabric address ranges `(base, end)` its BARs occupy:
    /// below 4 GiB, then 64-bit prefetchable.
    pub port_ranges: [[Option<(u64, u64)>; 2]; capacity::PORTS],
    /// Devices left out.
    pub skipped: Vec<Skipped, MAX_SKIPPED>,
}

impl Inventory {
    /// The index of the function with fabric ID `id`.
    pub fn index_of(&self, id: Bdf) -> Option<usize> {
        self.functions.iter().position(|f| f.id == id)
    }

    /// The function with fabric ID `id`.
    pub fn function(&self, id: Bdf) -> Option<&Function> {
        self.functions.iter().find(|f| f.id == id)
    }

    /// What sits behind `port`.
    pub fn port(&self, port: PortIndex) -> PortKind {
        self.ports
            .get(usize::from(port.0))
            .copied()
            .unwrap_or_default()
    }
}
