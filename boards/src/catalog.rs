//! What each PCIe hard IP block can do: widths, bifurcation, roles, buses.
//!
//! These are vendor facts; each entry names the document it comes from.
//! Board files are checked against them.

use crate::model::{HardIpKind, Role, Vendor};

/// One way to split a tile's lanes: `ports` links of `lanes` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bifurcation {
    /// How many links.
    pub ports: u8,
    /// Lanes of each.
    pub lanes: u8,
}

/// What one kind of hard IP supports.
#[derive(Clone, Copy, Debug)]
pub struct Capability {
    /// Whose block it is.
    pub vendor: Vendor,
    /// Link widths one instance can be configured to.
    pub lanes: &'static [u8],
    /// Ways to split one tile among several instances.
    pub bifurcations: &'static [Bifurcation],
    /// Highest PCIe generation.
    pub max_gen: u8,
    /// Roles the block can take.
    pub roles: &'static [Role],
    /// The document these facts come from.
    pub source: &'static str,
}

const TILE_X16: &[Bifurcation] = &[
    Bifurcation {
        ports: 1,
        lanes: 16,
    },
    Bifurcation { ports: 2, lanes: 8 },
    Bifurcation { ports: 4, lanes: 4 },
];

const ONE_LINK: &[Bifurcation] = &[Bifurcation {
    ports: 1,
    lanes: 16,
}];

const BYPASS_ROLES: &[Role] = &[
    Role::SwitchUpstream,
    Role::SwitchDownstream,
    Role::RootPort,
    Role::Endpoint,
];

const ENDPOINT_OR_ROOT: &[Role] = &[Role::Endpoint, Role::RootPort];

/// The capability of a hard IP kind.
pub const fn capability(kind: HardIpKind) -> Capability {
    match kind {
        HardIpKind::PTile => Capability {
            vendor: Vendor::Intel,
            lanes: &[4, 8, 16],
            bifurcations: TILE_X16,
            max_gen: 4,
            roles: BYPASS_ROLES,
            source: "P-Tile Avalon Streaming IP for PCIe User Guide (683059), 3.3 TLP Bypass",
        },
        HardIpKind::FTile => Capability {
            vendor: Vendor::Intel,
            lanes: &[4, 8, 16],
            bifurcations: TILE_X16,
            max_gen: 4,
            roles: BYPASS_ROLES,
            source: "F-Tile Avalon Streaming IP for PCIe User Guide (683140), 4.2 TLP Bypass Mode",
        },
        HardIpKind::RTile => Capability {
            vendor: Vendor::Intel,
            lanes: &[4, 8, 16],
            bifurcations: TILE_X16,
            max_gen: 5,
            roles: BYPASS_ROLES,
            source: "R-Tile Avalon Streaming IP for PCIe User Guide (683501), 3.3 TL Bypass",
        },
        HardIpKind::Pcie4 => Capability {
            vendor: Vendor::Xilinx,
            lanes: &[1, 2, 4, 8, 16],
            bifurcations: ONE_LINK,
            max_gen: 3,
            roles: ENDPOINT_OR_ROOT,
            source: "UltraScale+ Devices Integrated Block for PCI Express (PG213)",
        },
        HardIpKind::Pcie4c => Capability {
            vendor: Vendor::Xilinx,
            lanes: &[1, 2, 4, 8, 16],
            bifurcations: ONE_LINK,
            max_gen: 4,
            roles: ENDPOINT_OR_ROOT,
            source: "UltraScale+ Devices Integrated Block for PCI Express (PG213)",
        },
    }
}

/// Why a role is out of reach for a kind, in words a board author can act on.
pub const fn role_limit(kind: HardIpKind, role: Role) -> &'static str {
    match (kind, role) {
        (HardIpKind::Pcie4, Role::SwitchUpstream) => {
            "the UltraScale+ PCIE4 lets user logic own configuration space only at \
             0x480-0x4FF, so a host-facing port cannot present a transparent switch's \
             Type 1 header; use role = \"endpoint\" (a synthetic upstream endpoint)"
        }
        (HardIpKind::Pcie4c, Role::SwitchUpstream) => {
            "the UltraScale+ PCIE4C lets user logic own configuration space only at \
             0xE80-0xFFF, so a host-facing port cannot present a transparent switch's \
             Type 1 header; use role = \"endpoint\" (a synthetic upstream endpoint)"
        }
        (HardIpKind::Pcie4 | HardIpKind::Pcie4c, Role::SwitchDownstream) => {
            "the UltraScale+ integrated block has no TLP bypass, so it cannot be a \
             switch downstream port; use role = \"root-port\""
        }
        _ => "the hard IP does not support this role",
    }
}

/// The F-tile's documented TLP Bypass role combinations per tile
/// (683140, table "Supported TLP Bypass Configurations"): 1x16 UP or DN;
/// 2x8 UP/UP, UP/DN, EP/UP, DN/DN; 4x4 all UP or all DN. Roles are
/// listed in the tile's port order.
pub fn ftile_roles_allowed(roles: &[Role]) -> bool {
    use Role::{Endpoint as Ep, SwitchDownstream as Dn, SwitchUpstream as Up};
    let bypass = roles
        .iter()
        .any(|role| matches!(role, Role::SwitchUpstream | Role::SwitchDownstream));
    if !bypass {
        return true;
    }
    match roles {
        [_] => true,
        [a, b] => matches!((a, b), (Up, Up) | (Up, Dn) | (Ep, Up) | (Dn, Dn)),
        _ => roles.iter().all(|r| *r == Up) || roles.iter().all(|r| *r == Dn),
    }
}

/// The TLP data bus width in bits the IP presents for a link width, as
/// configured for its highest rate (P-tile and F-tile: 128 bits per 4
/// lanes of Gen4; R-tile: 256 bits per 4 lanes of Gen5; UltraScale+: the
/// AXI4-Stream width at 250 MHz for Gen3, 64 bits at least).
pub const fn data_bits(kind: HardIpKind, lanes: u8) -> u32 {
    let lanes = lanes as u32;
    match kind {
        HardIpKind::PTile | HardIpKind::FTile => lanes * 32,
        HardIpKind::RTile => lanes * 64,
        HardIpKind::Pcie4 | HardIpKind::Pcie4c => {
            if lanes * 32 < 64 {
                64
            } else {
                lanes * 32
            }
        }
    }
}
