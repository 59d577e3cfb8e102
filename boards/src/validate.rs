//! Cross-checks of a board against the hard IP catalog and itself.
//!
//! Every problem names the field it was found at, as `hard_ip[1] (down0).lanes`,
//! so the fix is one look away.

use std::collections::BTreeMap;
use std::fmt;

use crate::catalog::{self, Bifurcation};
use crate::ethernet::{self, Management};
use crate::model::{
    Board, EthernetInterface, FlashAccess, HardIpKind, Pin, Role, UartLink, Vendor,
};
use crate::pll::{self, Unreachable};

/// Ports the emitted switch design has (`weft_regs::capacity::PORTS`).
pub const SWITCH_PORTS: usize = weft_regs::capacity::PORTS;

/// One problem in a board file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// A hard IP configured to a link width its block does not offer.
    UnsupportedLanes {
        /// Where.
        field: String,
        /// The block.
        kind: HardIpKind,
        /// The width asked for.
        lanes: u8,
        /// The widths it offers.
        supported: &'static [u8],
    },
    /// A generation beyond the block's.
    UnsupportedGen {
        /// Where.
        field: String,
        /// The block.
        kind: HardIpKind,
        /// The generation asked for.
        gen: u8,
        /// The block's highest.
        max: u8,
    },
    /// A role the block cannot take.
    UnsupportedRole {
        /// Where.
        field: String,
        /// The block.
        kind: HardIpKind,
        /// The role asked for.
        role: Role,
        /// Why not, and what to use instead.
        reason: &'static str,
    },
    /// A block of the other vendor's on this board.
    WrongVendor {
        /// Where.
        field: String,
        /// The block.
        kind: HardIpKind,
        /// The board's vendor.
        vendor: Vendor,
    },
    /// Instances on one tile that no bifurcation mode of the tile allows.
    TileOversubscribed {
        /// The tile.
        tile: String,
        /// The link widths asked of it, in file order.
        lanes: Vec<u8>,
        /// The modes the tile offers.
        modes: &'static [Bifurcation],
    },
    /// Roles on one tile that its TLP Bypass mode does not combine.
    TileRoles {
        /// The tile.
        tile: String,
        /// The roles asked of it, in file order.
        roles: Vec<Role>,
    },
    /// A data bus width that is not what the block presents at that link width.
    DataWidth {
        /// Where.
        field: String,
        /// The width written.
        data_bits: u32,
        /// The width the block presents.
        expected: u32,
    },
    /// A reference to a clock or reset that the board does not declare.
    UnknownSignal {
        /// Where.
        field: String,
        /// The name referred to.
        name: String,
    },
    /// A citation of a source the board does not list.
    UnknownSource {
        /// Where.
        field: String,
        /// The id cited.
        id: String,
    },
    /// Two items with one name.
    DuplicateName {
        /// Where the second is.
        field: String,
        /// The name.
        name: String,
    },
    /// One package pin given to two signals.
    DuplicatePin {
        /// The pin.
        pin: String,
        /// The first signal's field.
        first: String,
        /// The second signal's field.
        second: String,
    },
    /// More hard IPs than the switch design has ports.
    TooManyPorts {
        /// Hard IPs on the board.
        ports: usize,
        /// Ports in the design.
        capacity: usize,
    },
    /// No port faces a host.
    NoHostPort,
    /// The board's device family has no PLL weft knows.
    NoPll {
        /// The vendor.
        vendor: Vendor,
        /// The family.
        family: String,
    },
    /// The PLL cannot make weft's clocks from the clock that feeds it.
    PllUnreachable {
        /// The clock feeding the PLL.
        clock: String,
        /// Why not.
        reason: Unreachable,
    },
    /// A flash reached through `STARTUPE3` on a family without that
    /// primitive (UltraScale and UltraScale+ only: UG974, "STARTUPE3").
    NoStartupe3 {
        /// The vendor.
        vendor: Vendor,
        /// The family.
        family: String,
    },
    /// A pin named for a flash signal that `STARTUPE3` carries on a
    /// dedicated configuration pin, which is no user pin.
    FlashPinOnConfigPins {
        /// Where.
        field: String,
        /// The pin written.
        pin: String,
    },
    /// A flash signal given a pin where `[flash]` says no flash reaches
    /// user logic.
    FlashPinAbsent {
        /// Where.
        field: String,
        /// The pin written.
        pin: String,
    },
    /// Console settings the generator cannot build.
    UartUnsupported {
        /// Where.
        field: String,
        /// Why not, and what to write instead.
        reason: &'static str,
    },
    /// Management Ethernet settings the generator has no adapter for.
    EthernetUnsupported {
        /// Where.
        field: String,
        /// Why not, and what to write instead.
        reason: &'static str,
    },
    /// A pin the management Ethernet's interface needs that `[ethernet]`
    /// does not name ([`ethernet::SGMII_PINS`]).
    EthernetPinMissing {
        /// The interface.
        interface: EthernetInterface,
        /// The pin's name.
        pin: &'static str,
    },
    /// An SGMII data or clock pin on another I/O standard than LVDS, which
    /// the PCS/PMA's LVDS SelectIO interface needs (PG047).
    EthernetIoStandard {
        /// Where.
        field: String,
        /// The standard written.
        io_standard: String,
    },
    /// The board's name differs from its file's stem.
    NameMismatch {
        /// The name in the file.
        name: String,
        /// The file's stem.
        stem: String,
    },
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::UnsupportedLanes {
                field,
                kind,
                lanes,
                supported,
            } => write!(
                f,
                "{field}: {kind:?} cannot be configured x{lanes}; it offers x{supported:?}"
            ),
            Invalid::UnsupportedGen {
                field,
                kind,
                gen,
                max,
            } => write!(f, "{field}: {kind:?} goes up to Gen{max}, not Gen{gen}"),
            Invalid::UnsupportedRole {
                field,
                kind,
                role,
                reason,
            } => write!(f, "{field}: {kind:?} cannot be {role:?}: {reason}"),
            Invalid::WrongVendor {
                field,
                kind,
                vendor,
            } => write!(f, "{field}: {kind:?} is not a {vendor:?} block"),
            Invalid::TileOversubscribed { tile, lanes, modes } => write!(
                f,
                "hard_ip tile {tile:?}: links {lanes:?} fit none of its modes {}",
                modes
                    .iter()
                    .map(|m| format!("{}x{}", m.ports, m.lanes))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Invalid::TileRoles { tile, roles } => write!(
                f,
                "hard_ip tile {tile:?}: TLP Bypass does not combine roles {roles:?} on one tile"
            ),
            Invalid::DataWidth {
                field,
                data_bits,
                expected,
            } => write!(
                f,
                "{field}: the block presents {expected} bits at this link width, not {data_bits}"
            ),
            Invalid::UnknownSignal { field, name } => {
                write!(f, "{field}: no clock or reset is named {name:?}")
            }
            Invalid::UnknownSource { field, id } => {
                write!(f, "{field}: no [[source]] has id {id:?}")
            }
            Invalid::DuplicateName { field, name } => {
                write!(f, "{field}: the name {name:?} is already used")
            }
            Invalid::DuplicatePin { pin, first, second } => {
                write!(f, "pin {pin} is given to both {first} and {second}")
            }
            Invalid::TooManyPorts { ports, capacity } => write!(
                f,
                "the board has {ports} hard IPs but the switch design has {capacity} ports"
            ),
            Invalid::NoHostPort => write!(
                f,
                "no hard_ip faces a host: give one role \"switch-upstream\" or \"endpoint\""
            ),
            Invalid::NoPll { vendor, family } => write!(
                f,
                "board.family: weft has no PLL for the {vendor:?} family {family:?}; \
                 add its PLL and ranges to boards/src/pll.rs"
            ),
            Invalid::PllUnreachable { clock, reason } => write!(
                f,
                "pll.refclk: the PLL cannot make weft's clocks from {clock:?}: {reason}; \
                 feed it another clock"
            ),
            Invalid::NoStartupe3 { vendor, family } => write!(
                f,
                "flash.access: the {vendor:?} family {family:?} has no STARTUPE3 \
                 (UltraScale and UltraScale+ only); name the flash's user pins instead"
            ),
            Invalid::FlashPinOnConfigPins { field, pin } => write!(
                f,
                "{field}: STARTUPE3 carries this signal on a dedicated configuration pin, \
                 not on the user pin {pin}; leave it out"
            ),
            Invalid::FlashPinAbsent { field, pin } => write!(
                f,
                "{field}: flash.access is \"absent\", so no flash signal has a pin; \
                 leave out {pin} or name the flash's access"
            ),
            Invalid::UartUnsupported { field, reason } | Invalid::EthernetUnsupported { field, reason } => {
                write!(f, "{field}: {reason}")
            }
            Invalid::EthernetPinMissing { interface, pin } => write!(
                f,
                "ethernet.pin: {interface:?} needs a pin named {pin:?} (write \"TODO\" if its ball is not known)"
            ),
            Invalid::EthernetIoStandard { field, io_standard } => write!(
                f,
                "{field}: SGMII over LVDS SelectIO needs io_standard \"LVDS\", not {io_standard:?}"
            ),
            Invalid::NameMismatch { name, stem } => {
                write!(
                    f,
                    "board.name: {name:?} differs from the file name {stem:?}"
                )
            }
        }
    }
}

/// Every problem in `board`, in file order; empty when the board is sound.
pub fn check(board: &Board) -> Vec<Invalid> {
    let mut problems = Vec::new();
    check_sources(board, &mut problems);
    check_names(board, &mut problems);
    check_hard_ips(board, &mut problems);
    check_tiles(board, &mut problems);
    check_pins(board, &mut problems);
    check_pll(board, &mut problems);
    check_flash(board, &mut problems);
    check_uart(board, &mut problems);
    check_ethernet(board, &mut problems);
    if board.hard_ips.len() > SWITCH_PORTS {
        problems.push(Invalid::TooManyPorts {
            ports: board.hard_ips.len(),
            capacity: SWITCH_PORTS,
        });
    }
    if !board.hard_ips.iter().any(|ip| ip.role.faces_host()) {
        problems.push(Invalid::NoHostPort);
    }
    problems
}

/// The field path of the `index`th hard IP.
fn ip_field(board: &Board, index: usize, field: &str) -> String {
    format!("hard_ip[{index}] ({}).{field}", board.hard_ips[index].name)
}

fn check_sources(board: &Board, problems: &mut Vec<Invalid>) {
    let cited = std::iter::once(("board.source".to_owned(), &board.board.source))
        .chain(
            board
                .hard_ips
                .iter()
                .enumerate()
                .map(|(i, ip)| (ip_field(board, i, "source"), &ip.source)),
        )
        .chain(
            board
                .clocks
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("clock[{i}].source"), &c.source)),
        )
        .chain(
            board
                .resets
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("reset[{i}].source"), &r.source)),
        )
        .chain(
            board
                .leds
                .iter()
                .enumerate()
                .map(|(i, l)| (format!("led[{i}].source"), &l.source)),
        )
        .chain(std::iter::once((
            "pll.source".to_owned(),
            &board.pll.source,
        )))
        .chain(
            board
                .ethernet
                .iter()
                .map(|e| ("ethernet.source".to_owned(), &e.source)),
        )
        .chain(
            board
                .ethernet
                .iter()
                .filter_map(|e| e.lvds.as_ref())
                .map(|l| ("ethernet.lvds.source".to_owned(), &l.source)),
        )
        .chain(
            board
                .flash
                .iter()
                .map(|e| ("flash.source".to_owned(), &e.source)),
        )
        .chain(
            board
                .uart
                .iter()
                .map(|e| ("uart.source".to_owned(), &e.source)),
        );
    for (field, id) in cited {
        if !board.sources.iter().any(|s| &s.id == id) {
            problems.push(Invalid::UnknownSource {
                field,
                id: id.clone(),
            });
        }
    }
}

fn check_names(board: &Board, problems: &mut Vec<Invalid>) {
    let mut seen = std::collections::BTreeSet::new();
    let names = board
        .hard_ips
        .iter()
        .enumerate()
        .map(|(i, ip)| (ip_field(board, i, "name"), &ip.name))
        .chain(
            board
                .clocks
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("clock[{i}].name"), &c.name)),
        )
        .chain(
            board
                .resets
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("reset[{i}].name"), &r.name)),
        )
        .chain(
            board
                .leds
                .iter()
                .enumerate()
                .map(|(i, l)| (format!("led[{i}].name"), &l.name)),
        );
    for (field, name) in names {
        if !seen.insert(name.clone()) {
            problems.push(Invalid::DuplicateName {
                field,
                name: name.clone(),
            });
        }
    }
}

fn check_hard_ips(board: &Board, problems: &mut Vec<Invalid>) {
    for (i, ip) in board.hard_ips.iter().enumerate() {
        let cap = catalog::capability(ip.kind);
        if cap.vendor != board.board.vendor {
            problems.push(Invalid::WrongVendor {
                field: ip_field(board, i, "kind"),
                kind: ip.kind,
                vendor: board.board.vendor,
            });
        }
        if !cap.lanes.contains(&ip.lanes) {
            problems.push(Invalid::UnsupportedLanes {
                field: ip_field(board, i, "lanes"),
                kind: ip.kind,
                lanes: ip.lanes,
                supported: cap.lanes,
            });
        } else {
            let expected = catalog::data_bits(ip.kind, ip.lanes);
            if ip.data_bits != expected {
                problems.push(Invalid::DataWidth {
                    field: ip_field(board, i, "data_bits"),
                    data_bits: ip.data_bits,
                    expected,
                });
            }
        }
        if ip.gen == 0 || ip.gen > cap.max_gen {
            problems.push(Invalid::UnsupportedGen {
                field: ip_field(board, i, "gen"),
                kind: ip.kind,
                gen: ip.gen,
                max: cap.max_gen,
            });
        }
        if !cap.roles.contains(&ip.role) {
            problems.push(Invalid::UnsupportedRole {
                field: ip_field(board, i, "role"),
                kind: ip.kind,
                role: ip.role,
                reason: catalog::role_limit(ip.kind, ip.role),
            });
        }
        let clocks = std::iter::once(("refclk", &ip.refclk))
            .chain(ip.refclk1.iter().map(|clock| ("refclk1", clock)));
        for (field, clock) in clocks {
            if !board.clocks.iter().any(|c| &c.name == clock) {
                problems.push(Invalid::UnknownSignal {
                    field: ip_field(board, i, field),
                    name: clock.clone(),
                });
            }
        }
        if let Some(perst) = &ip.perst {
            if !board.resets.iter().any(|r| &r.name == perst) {
                problems.push(Invalid::UnknownSignal {
                    field: ip_field(board, i, "perst"),
                    name: perst.clone(),
                });
            }
        }
    }
}

fn check_pll(board: &Board, problems: &mut Vec<Invalid>) {
    let Some(device) = pll::for_board(board) else {
        problems.push(Invalid::NoPll {
            vendor: board.board.vendor,
            family: board.board.family.clone(),
        });
        return;
    };
    let Some(clock) = board.clocks.iter().find(|c| c.name == board.pll.refclk) else {
        problems.push(Invalid::UnknownSignal {
            field: "pll.refclk".to_owned(),
            name: board.pll.refclk.clone(),
        });
        return;
    };
    if let Err(reason) = pll::plan(pll::hz(clock.mhz), device.limits.as_ref()) {
        problems.push(Invalid::PllUnreachable {
            clock: clock.name.clone(),
            reason,
        });
    }
}

/// Whether a family has the `STARTUPE3` primitive (UG974: "Families:
/// UltraScale, UltraScale+").
fn has_startupe3(vendor: Vendor, family: &str) -> bool {
    vendor == Vendor::Xilinx && family.contains("UltraScale")
}

fn check_flash(board: &Board, problems: &mut Vec<Invalid>) {
    let Some(flash) = &board.flash else {
        return;
    };
    if flash.access == FlashAccess::Pins {
        return;
    }
    if flash.access == FlashAccess::Startupe3
        && !has_startupe3(board.board.vendor, &board.board.family)
    {
        problems.push(Invalid::NoStartupe3 {
            vendor: board.board.vendor,
            family: board.board.family.clone(),
        });
    }
    // Through STARTUPE3, or with no flash at all, no signal has a user pin.
    for (field, pin) in flash_pins(flash) {
        if let Some(name) = pin.known() {
            let pin = name.to_owned();
            problems.push(match flash.access {
                FlashAccess::Startupe3 => Invalid::FlashPinOnConfigPins { field, pin },
                _ => Invalid::FlashPinAbsent { field, pin },
            });
        }
    }
}

/// The console: over JTAG only on an Intel board (the channel is Intel's
/// JTAG UART), and then with no pins; on pins, with their I/O standard.
fn check_uart(board: &Board, problems: &mut Vec<Invalid>) {
    let Some(uart) = &board.uart else {
        return;
    };
    let mut bad = |field: &str, reason| {
        problems.push(Invalid::UartUnsupported {
            field: field.to_owned(),
            reason,
        })
    };
    match uart.link {
        UartLink::Jtag => {
            if board.board.vendor != Vendor::Intel {
                bad(
                    "uart.link",
                    "the JTAG console is Intel's JTAG UART channel; name the UART's pins instead",
                );
            }
            for (field, pin) in [("uart.tx", &uart.tx), ("uart.rx", &uart.rx)] {
                if pin.known().is_some() {
                    bad(field, "a console over JTAG has no pins; leave it out");
                }
            }
            if uart.io_standard.is_some() {
                bad(
                    "uart.io_standard",
                    "a console over JTAG has no pins; leave it out",
                );
            }
        }
        UartLink::Pins => {
            if uart.io_standard.is_none() {
                bad(
                    "uart.io_standard",
                    "the UART's pins need their I/O standard",
                );
            }
        }
    }
}

/// The management Ethernet: SGMII is generated on LVDS SelectIO of
/// UltraScale(+) only, with every pin of [`ethernet::SGMII_PINS`] named
/// and its data and clock pairs on LVDS; `[ethernet.lvds]` belongs to SGMII.
fn check_ethernet(board: &Board, problems: &mut Vec<Invalid>) {
    let Some(eth) = &board.ethernet else {
        return;
    };
    match (eth.interface, &eth.lvds) {
        (EthernetInterface::Sgmii, None) => problems.push(Invalid::EthernetUnsupported {
            field: "ethernet.lvds".to_owned(),
            reason: "SGMII is generated only on LVDS SelectIO: give [ethernet.lvds] \
                     (PG047's LVDS settings), or write interface = \"todo\"",
        }),
        (EthernetInterface::Sgmii, Some(_)) if !ethernet::lvds_capable(board) => {
            problems.push(Invalid::EthernetUnsupported {
                field: "ethernet.lvds".to_owned(),
                reason: "PG047's asynchronous SGMII over LVDS is for UltraScale and \
                         UltraScale+ SelectIO only",
            })
        }
        (EthernetInterface::Rgmii | EthernetInterface::Todo, Some(_)) => {
            problems.push(Invalid::EthernetUnsupported {
                field: "ethernet.lvds".to_owned(),
                reason:
                    "[ethernet.lvds] describes SGMII: set interface = \"sgmii\" or leave it out",
            })
        }
        _ => {}
    }
    if eth.interface != EthernetInterface::Sgmii {
        return;
    }
    for (name, _) in ethernet::SGMII_PINS {
        match eth.pins.iter().position(|p| p.name == *name) {
            None => problems.push(Invalid::EthernetPinMissing {
                interface: eth.interface,
                pin: name,
            }),
            Some(i) if name.starts_with("sgmii_") && eth.pins[i].io_standard != "LVDS" => problems
                .push(Invalid::EthernetIoStandard {
                    field: format!("ethernet.pin[{i}] ({name}).io_standard"),
                    io_standard: eth.pins[i].io_standard.clone(),
                }),
            Some(_) => {}
        }
    }
}

fn check_tiles(board: &Board, problems: &mut Vec<Invalid>) {
    let mut tiles: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, ip) in board.hard_ips.iter().enumerate() {
        tiles.entry(&ip.tile).or_default().push(i);
    }
    for (tile, members) in tiles {
        let kind = board.hard_ips[members[0]].kind;
        let modes = catalog::capability(kind).bifurcations;
        let lanes: Vec<u8> = members.iter().map(|&i| board.hard_ips[i].lanes).collect();
        let fits = modes.iter().any(|mode| {
            lanes.len() <= usize::from(mode.ports) && lanes.iter().all(|&l| l == mode.lanes)
        });
        // A single link narrower than the widest mode is fine: it uses
        // the tile's first lanes and leaves the rest unused.
        let single = lanes.len() == 1;
        if !fits && !single {
            problems.push(Invalid::TileOversubscribed {
                tile: tile.to_owned(),
                lanes,
                modes,
            });
        }
        let roles: Vec<Role> = members.iter().map(|&i| board.hard_ips[i].role).collect();
        if kind == HardIpKind::FTile && !catalog::ftile_roles_allowed(&roles) {
            problems.push(Invalid::TileRoles {
                tile: tile.to_owned(),
                roles,
            });
        }
    }
}

/// Every pin the board gives, with the field it is given at.
pub fn pins(board: &Board) -> Vec<(String, &Pin)> {
    let mut all = Vec::new();
    for (i, c) in board.clocks.iter().enumerate() {
        all.push((format!("clock[{i}] ({}).pin", c.name), &c.pin));
        if let Some(n) = &c.pin_n {
            all.push((format!("clock[{i}] ({}).pin_n", c.name), n));
        }
    }
    for (i, r) in board.resets.iter().enumerate() {
        all.push((format!("reset[{i}] ({}).pin", r.name), &r.pin));
    }
    for (i, l) in board.leds.iter().enumerate() {
        all.push((format!("led[{i}] ({}).pin", l.name), &l.pin));
    }
    if let Some(uart) = board.uart_on_pins() {
        all.push(("uart.tx".to_owned(), &uart.tx));
        all.push(("uart.rx".to_owned(), &uart.rx));
    }
    if let Some(flash) = board.flash_on_pins() {
        all.extend(flash_pins(flash));
    }
    if let Some(eth) = &board.ethernet {
        for (i, p) in eth.pins.iter().enumerate() {
            all.push((format!("ethernet.pin[{i}] ({}).pin", p.name), &p.pin));
        }
    }
    all
}

/// The flash's four pins, with their fields.
fn flash_pins(flash: &crate::model::Flash) -> [(String, &Pin); 4] {
    [
        ("flash.sclk".to_owned(), &flash.sclk),
        ("flash.cs_n".to_owned(), &flash.cs_n),
        ("flash.mosi".to_owned(), &flash.mosi),
        ("flash.miso".to_owned(), &flash.miso),
    ]
}

/// Every fact a build needs that the board file does not confirm: pins of
/// the clocks weft uses, of the resets, the console UART, the
/// configuration flash and the management Ethernet the wrapper connects,
/// and the PLL's ranges where weft sets its counters from them
/// ([`pll::PllDevice::unconfirmed_for_build`]). The generator writes no build
/// script while any is open ([`crate::generate::build_files`]).
pub fn unconfirmed_required(board: &Board) -> Vec<String> {
    let mut open = Vec::new();
    let used = |name: &str| {
        board.pll.refclk == name
            || board
                .hard_ips
                .iter()
                .any(|ip| ip.refclk == name || ip.refclk1.as_deref() == Some(name))
    };
    for (i, c) in board.clocks.iter().enumerate() {
        if used(&c.name) && c.pin == Pin::Todo {
            open.push(format!("clock[{i}] ({}).pin", c.name));
        }
    }
    for (i, r) in board.resets.iter().enumerate() {
        if r.pin == Pin::Todo {
            open.push(format!("reset[{i}] ({}).pin", r.name));
        }
    }
    match &board.uart {
        Some(uart) if uart.link == UartLink::Jtag => {}
        Some(uart) => {
            for (field, pin) in [("uart.tx", &uart.tx), ("uart.rx", &uart.rx)] {
                if *pin == Pin::Todo {
                    open.push(field.to_owned());
                }
            }
        }
        None => open.push("[uart]: the console UART".to_owned()),
    }
    match &board.flash {
        Some(flash) if matches!(flash.access, FlashAccess::Startupe3 | FlashAccess::Absent) => {}
        Some(flash) => {
            for (field, pin) in flash_pins(flash) {
                if *pin == Pin::Todo {
                    open.push(field);
                }
            }
            if flash.io_standard.is_none() {
                open.push("flash.io_standard".to_owned());
            }
        }
        None => open.push("[flash]: the configuration flash".to_owned()),
    }
    if let (Management::SgmiiLvds(_), Some(eth)) = (ethernet::management(board), &board.ethernet) {
        for (i, p) in eth.pins.iter().enumerate() {
            if p.pin == Pin::Todo {
                open.push(format!("ethernet.pin[{i}] ({}).pin", p.name));
            }
        }
    }
    if let Some(fact) = pll::for_board(board).and_then(|d| d.unconfirmed_for_build()) {
        open.push(fact);
    }
    open
}

fn check_pins(board: &Board, problems: &mut Vec<Invalid>) {
    let mut seen: BTreeMap<&str, String> = BTreeMap::new();
    for (field, pin) in pins(board) {
        if let Some(name) = pin.known() {
            if let Some(first) = seen.get(name) {
                problems.push(Invalid::DuplicatePin {
                    pin: name.to_owned(),
                    first: first.clone(),
                    second: field,
                });
            } else {
                seen.insert(name, field);
            }
        }
    }
}

/// Every fact still open: pins and parts written `"TODO"`, an Ethernet
/// interface not yet known. Not errors: the checker lists them.
pub fn todos(board: &Board) -> Vec<String> {
    let mut open: Vec<String> = pins(board)
        .into_iter()
        .filter(|(_, pin)| **pin == Pin::Todo)
        .map(|(field, _)| field)
        .collect();
    if let Some(eth) = &board.ethernet {
        if eth.interface == EthernetInterface::Todo {
            open.push("ethernet.interface".to_owned());
        }
        if eth.phy == "TODO" {
            open.push("ethernet.phy".to_owned());
        }
    }
    if let Some(flash) = &board.flash {
        if flash.part == "TODO" && flash.access != FlashAccess::Absent {
            open.push("flash.part".to_owned());
        }
    }
    if let Some(fact) = pll::for_board(board).and_then(|d| d.unconfirmed()) {
        open.push(fact);
    }
    open
}

/// Every item marked `verify = true`: facts not yet checked against their source.
pub fn unverified(board: &Board) -> Vec<String> {
    let mut open = Vec::new();
    for (i, ip) in board.hard_ips.iter().enumerate() {
        if ip.verify {
            open.push(format!("hard_ip[{i}] ({})", ip.name));
        }
    }
    for (i, c) in board.clocks.iter().enumerate() {
        if c.verify {
            open.push(format!("clock[{i}] ({})", c.name));
        }
    }
    for (i, r) in board.resets.iter().enumerate() {
        if r.verify {
            open.push(format!("reset[{i}] ({})", r.name));
        }
    }
    for (i, l) in board.leds.iter().enumerate() {
        if l.verify {
            open.push(format!("led[{i}] ({})", l.name));
        }
    }
    if board.ethernet.as_ref().is_some_and(|e| e.verify) {
        open.push("ethernet".to_owned());
    }
    if board.flash.as_ref().is_some_and(|e| e.verify) {
        open.push("flash".to_owned());
    }
    if board.uart.as_ref().is_some_and(|e| e.verify) {
        open.push("uart".to_owned());
    }
    open
}
