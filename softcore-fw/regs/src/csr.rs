//! The data plane's control and status registers, as the soft core sees them.
//!
//! The data plane answers on a 1 MiB window of the soft core's address
//! space from [`CSR_BASE`], above the instruction and data memories, on the
//! CSR bus: 32-bit registers on 4-byte aligned byte addresses, whole-word
//! accesses only. The window holds, in address order:
//!
//! - [`global`]: what this data plane is (identity, version, port count, table capacities);
//! - [`port`]: each port's role and identity;
//! - [`counter_control`]: clearing the counters;
//! - [`window`]: each port's address windows;
//! - [`function_owner`]: each endpoint port's functions bound on their own;
//! - [`id_map`]: each host port's map between fabric and host requester IDs;
//! - [`address_route`] and [`bus_route`]: the switch's routing tables;
//! - [`counter`]: each port's traffic and drop counters;
//! - [`mailbox`] and [`mailbox_data`]: TLPs for the management CPU, one at a time;
//! - [`inject`] and [`inject_data`]: TLPs the management CPU sends out of a port.
//!
//! Table registers take effect for lookups from the second clock cycle
//! after the write (the RTL precomputes range ends from them); firmware that
//! rewrites a live entry clears its valid bit first and sets it last.
//!
//! The data plane has one interrupt line to the soft core, the level OR of
//! the mailbox's and the injector's (each enabled in its block's
//! `INT_ENABLE`, shown in its `INT_PENDING`). It is the core's machine
//! external interrupt (`mip.MEIP`, Privileged 20211203 §3.1.9) together
//! with the management MAC's ([`crate::soc::mac`]): `mip.MEIP` is pending
//! while either source is, so the firmware checks both when it wakes.

use crate::capacity;
use crate::markdown::RegisterMap;
use crate::register::{Access, EntryName, Field, Layout, Register, RegisterBlock};

/// First address of the data plane's CSR window in the soft core's address space.
pub const CSR_BASE: u32 = 0x4000_0000;
/// Size of the CSR window: 1 MiB.
pub const CSR_SIZE: u32 = 0x10_0000;
const _: () = assert!(CSR_SIZE >= 64 * 1024 && CSR_SIZE <= 1024 * 1024);
const _: () = assert!(CSR_BASE >= crate::DATA_RAM_BASE + crate::DATA_RAM_SIZE);

/// Every block, in address order.
pub const BLOCKS: &[RegisterBlock] = &[
    global::BLOCK,
    port::BLOCK,
    counter_control::BLOCK,
    window::BLOCK,
    function_owner::BLOCK,
    id_map::BLOCK,
    address_route::BLOCK,
    bus_route::BLOCK,
    counter::BLOCK,
    mailbox::BLOCK,
    mailbox_data::BLOCK,
    inject::BLOCK,
    inject_data::BLOCK,
];

/// One decoded access: which register of which instance and entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The register's block.
    pub block: &'static RegisterBlock,
    /// The register.
    pub register: Register,
    /// Its instance (port).
    pub instance: u32,
    /// Its entry.
    pub entry: u32,
}

/// Every register of the map, with its block and address, for a data
/// plane of `ports` ports (instances of per-port blocks beyond them left
/// out), block by block in address order: what a walk over the whole
/// window reads or writes.
pub fn registers(ports: u32) -> impl Iterator<Item = (&'static RegisterBlock, Register, u32)> {
    BLOCKS.iter().flat_map(move |block| {
        let layout = block.layout;
        (0..layout.instances.min(ports)).flat_map(move |instance| {
            (0..layout.entries).flat_map(move |entry| {
                block
                    .registers
                    .iter()
                    .map(move |register| (block, *register, register.address(instance, entry)))
            })
        })
    })
}

/// The register at `address` in this map, if there is one: what a
/// decoder of the window (the RTL's, the model's, a diagnostic access)
/// finds there.
pub fn decode(address: u32) -> Option<Decoded> {
    let located = locate(address)?;
    let block = &BLOCKS[located.block];
    Some(Decoded {
        block,
        register: block.registers[located.register],
        instance: located.instance,
        entry: located.entry,
    })
}

/// The most registers one block of the map has.
const MOST_REGISTERS: usize = {
    let mut most = 0;
    let mut block = 0;
    while block < BLOCKS.len() {
        if BLOCKS[block].registers.len() > most {
            most = BLOCKS[block].registers.len();
        }
        block += 1;
    }
    most
};

/// Where one block's registers sit, without their names, fields and
/// documentation: what [`locate`] needs, a few hundred bytes for the whole
/// map, so that a decoder on the soft core does not carry the map's text
/// in its data RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BlockSpan {
    layout: Layout,
    /// Each register's offset within its entry, in the block's order.
    offsets: [u32; MOST_REGISTERS],
    registers: usize,
}

/// The spans of [`BLOCKS`], in the same order, computed at compile time.
const SPANS: [BlockSpan; BLOCKS.len()] = {
    let empty = BlockSpan {
        layout: global::BLOCK.layout,
        offsets: [0; MOST_REGISTERS],
        registers: 0,
    };
    let mut spans = [empty; BLOCKS.len()];
    let mut block = 0;
    while block < BLOCKS.len() {
        let registers = BLOCKS[block].registers;
        spans[block].layout = BLOCKS[block].layout;
        spans[block].registers = registers.len();
        let mut register = 0;
        while register < registers.len() {
            spans[block].offsets[register] = registers[register].offset;
            register += 1;
        }
        block += 1;
    }
    spans
};

/// A register of the map found by its address, by index rather than by
/// reference, so that finding it takes none of the map's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    /// Its block's index in [`BLOCKS`].
    pub block: usize,
    /// Its index in the block's registers.
    pub register: usize,
    /// Its block's layout.
    pub layout: Layout,
    /// Its instance (port).
    pub instance: u32,
    /// Its entry.
    pub entry: u32,
}

/// Where the register at `address` is in this map, if there is one: the
/// lookup [`decode`] makes, for a decoder that needs only to know that a
/// register is there and in which block (the firmware's CSR diagnostics).
pub fn locate(address: u32) -> Option<Located> {
    let (block, span) = SPANS.iter().enumerate().find(|(_, span)| {
        let layout = span.layout;
        (layout.base..layout.base + layout.span()).contains(&address)
    })?;
    let layout = span.layout;
    let offset = address - layout.base;
    let instance = offset / layout.stride;
    let in_instance = offset % layout.stride;
    if in_instance >= layout.instance_span() {
        return None;
    }
    let entry = in_instance / layout.entry_stride;
    let in_entry = in_instance % layout.entry_stride;
    let register = span.offsets[..span.registers]
        .iter()
        .position(|&offset| offset == in_entry)?;
    Some(Located {
        block,
        register,
        layout,
        instance,
        entry,
    })
}

/// Ports as a register field count: one instance or one bit per port.
const PORTS: u32 = capacity::PORTS as u32;

/// Bits of a host index: enough for every host that fits an aperture.
pub const HOST_INDEX_BITS: u32 = crate::aperture::MAX_HOSTS.trailing_zeros();

/// The low half of a 64-bit value.
const LOW_HALF: &[Field] = &[Field::new("VALUE", 0, 32, "Bits 31:0 of the 64-bit value.")];
/// The low half of a 64-bit address or size, in whole DWs: bits 1:0 are
/// reserved and read as zero, so a range (and a window's translation) can
/// never produce an address that is not DW-aligned (PCIe Base 6.0 §2.2.4.1:
/// address bits 1:0 of a memory request are reserved).
const DW_LOW_HALF: &[Field] = &[Field::new(
    "VALUE",
    2,
    30,
    "Bits 31:2 of the 64-bit value; bits 1:0 read as zero.",
)];
/// The high half of a 64-bit value.
const HIGH_HALF: &[Field] = &[Field::new(
    "VALUE",
    0,
    32,
    "Bits 63:32 of the 64-bit value.",
)];

/// The first registers of a table entry holding an address range: its
/// base and size, each as two 32-bit halves, at offsets 0x0 to 0xC.
const fn range_registers(layout: Layout) -> [Register; 4] {
    [
        layout.register(
            "BASE_LOW",
            0x00,
            Access::ReadWrite,
            "First address of the range, bits 31:0 (whole DWs).",
            DW_LOW_HALF,
        ),
        layout.register(
            "BASE_HIGH",
            0x04,
            Access::ReadWrite,
            "First address of the range, bits 63:32.",
            HIGH_HALF,
        ),
        layout.register(
            "SIZE_LOW",
            0x08,
            Access::ReadWrite,
            "Size of the range in bytes, bits 31:0 (whole DWs); a range of size 0 matches nothing.",
            DW_LOW_HALF,
        ),
        layout.register(
            "SIZE_HIGH",
            0x0C,
            Access::ReadWrite,
            "Size of the range in bytes, bits 63:32.",
            HIGH_HALF,
        ),
    ]
}

/// A 16-bit PCI requester/completer ID (bus 15:8, device 7:3, function 2:0),
/// the one field of every ID register.
pub const ID: Field = Field::new(
    "ID",
    0,
    16,
    "Bus in 15:8, device in 7:3, function in 2:0 (PCIe Base 6.0 §2.2.6.2).",
);
/// The fields of an ID register.
const ID_FIELD: &[Field] = &[ID];

/// Where a routing table entry sends a TLP: [`address_route::DESTINATION`] and [`bus_route::DESTINATION`].
pub mod destination {
    use crate::register::Field;

    /// The entry is in use; an entry without it matches nothing.
    pub const VALID: Field = Field::new(
        "VALID",
        0,
        1,
        "The entry is in use; an entry without it matches nothing.",
    );
    /// The TLP goes to the management CPU's mailbox rather than out of a port.
    pub const CPU: Field = Field::new(
        "CPU",
        1,
        1,
        "The TLP goes to the management CPU's mailbox; PORT is ignored.",
    );
    /// The egress port.
    pub const PORT: Field = Field::new("PORT", 8, 8, "The egress port's index.");
    /// The register's fields.
    pub const FIELDS: &[Field] = &[VALID, CPU, PORT];
}

/// What this data plane is (read-only facts for the firmware to check
/// against its own build), and where its management BAR sits in the fabric.
pub mod global {
    use super::*;

    /// One instance at the bottom of the window.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE,
        instances: 1,
        stride: 0x100,
        entries: 1,
        entry_stride: 0x100,
    };
    /// The value of [`ID`]: "WEFT" in ASCII.
    pub const ID_VALUE: u32 = u32::from_be_bytes(*b"WEFT");
    /// Major version of this register map: changes when a register moves or changes meaning.
    pub const VERSION_MAJOR: u32 = 1;
    /// Minor version of this register map: changes when registers are added.
    /// 2 added [`MANAGEMENT_BAR_LOW`] and [`MANAGEMENT_BAR_HIGH`]; 3 added
    /// each port's `LINK` register; 4 added [`COMPLETION_TIMEOUT`].
    pub const VERSION_MINOR: u32 = 4;
    /// The completion timeout while [`COMPLETION_TIMEOUT`] reads 0, in
    /// microseconds: 50 ms, the top of PCIe's default range (50 µs to
    /// 50 ms, Completion Timeout Value 0000b, PCIe Base 6.0 §7.5.3.16).
    pub const DEFAULT_COMPLETION_TIMEOUT_US: u32 = 50_000;

    /// [`ID`]'s value.
    pub const MAGIC: Field = Field::new("MAGIC", 0, 32, "0x5745_4654.");
    /// [`VERSION`]'s minor version.
    pub const MINOR: Field = Field::new("MINOR", 0, 16, "Minor version: registers added.");
    /// [`VERSION`]'s major version.
    pub const MAJOR: Field = Field::new(
        "MAJOR",
        16,
        16,
        "Major version: registers moved or changed.",
    );
    /// [`PORTS`]' count.
    pub const PORT_COUNT: Field = Field::new("COUNT", 0, 8, "Ports.");
    /// [`PORT_TABLES`]' window entries per port.
    pub const WINDOWS: Field = Field::new("WINDOWS", 0, 16, "Window entries per port.");
    /// [`PORT_TABLES`]' ID map entries per host port.
    pub const ID_MAP_ENTRIES: Field = Field::new("ID_MAP", 16, 16, "ID map entries per host port.");
    /// [`ROUTE_TABLES`]' address route entries.
    pub const ADDRESS_ROUTES: Field = Field::new("ADDRESS", 0, 16, "Address route entries.");
    /// [`ROUTE_TABLES`]' bus route entries.
    pub const BUS_ROUTES: Field = Field::new("BUS", 16, 16, "Bus route entries.");
    /// [`OWNER_TABLES`]' function owner entries per endpoint port.
    pub const FUNCTION_OWNERS: Field = Field::new(
        "FUNCTION_OWNERS",
        0,
        16,
        "Function owner entries per endpoint port.",
    );

    /// Identifies a weft data plane.
    pub const ID: Register = LAYOUT.register(
        "ID",
        0x00,
        Access::ReadOnly,
        "Identifies a weft data plane: reads 0x5745_4654 (\"WEFT\").",
        &[MAGIC],
    );
    /// The register map's version.
    pub const VERSION: Register = LAYOUT.register(
        "VERSION",
        0x04,
        Access::ReadOnly,
        "The version of this register map.",
        &[MINOR, MAJOR],
    );
    /// How many ports the data plane has.
    pub const PORTS: Register = LAYOUT.register(
        "PORTS",
        0x08,
        Access::ReadOnly,
        "How many ports the data plane has.",
        &[PORT_COUNT],
    );
    /// Capacities of the per-port tables.
    pub const PORT_TABLES: Register = LAYOUT.register(
        "PORT_TABLES",
        0x0C,
        Access::ReadOnly,
        "Capacities of the per-port tables.",
        &[WINDOWS, ID_MAP_ENTRIES],
    );
    /// Capacities of the routing tables.
    pub const ROUTE_TABLES: Register = LAYOUT.register(
        "ROUTE_TABLES",
        0x10,
        Access::ReadOnly,
        "Capacities of the switch's routing tables.",
        &[ADDRESS_ROUTES, BUS_ROUTES],
    );
    /// Capacities of the endpoint ports' tables.
    pub const OWNER_TABLES: Register = LAYOUT.register(
        "OWNER_TABLES",
        0x14,
        Access::ReadOnly,
        "Capacities of the endpoint ports' ownership tables.",
        &[FUNCTION_OWNERS],
    );
    /// [`MANAGEMENT_BAR_LOW`]'s Memory Space Enables, one per port.
    pub const MANAGEMENT_ENABLE: Field = Field::new(
        "ENABLE",
        0,
        super::PORTS,
        "Bit n: the Memory Space Enable (Command bit 1, PCIe Base 6.0 §7.5.1.1.3) of \
         port n's management function; memory requests arriving on port n are executed \
         against this window only while it is set.",
    );
    /// [`MANAGEMENT_BAR_LOW`]'s base address bits: the BAR is as large as
    /// the CSR window and aligned to its size (§7.5.1.2.1).
    pub const MANAGEMENT_BASE: Field = Field::new(
        "BASE",
        CSR_SIZE.trailing_zeros(),
        32 - CSR_SIZE.trailing_zeros(),
        "Bits 31:20 of the management BAR's fabric address; the BAR spans the \
         CSR window's 1 MiB, aligned to it.",
    );

    /// Where the switch's management BAR sits, low half, and whether it decodes.
    ///
    /// The management function every port presents on its link (the one
    /// carrying weft's identity VSEC, `weft_pcie::config::vsec`) has one
    /// 64-bit memory BAR (BAR0 and BAR1) of [`CSR_SIZE`] bytes, which the
    /// fabric manager assigns in discovery like any BAR. The ports'
    /// configuration logic keeps it here, one BAR for the switch's one
    /// window whichever port's function is written: a Type 0 write to BAR0
    /// writes BASE, to BAR1 [`MANAGEMENT_BAR_HIGH`]; Command bit 1 of port
    /// n's function is ENABLE bit n, so only the link the manager enabled
    /// reaches the window. A memory request arriving on a fabric or
    /// disabled port n whose address falls in the BAR while ENABLE bit n is
    /// set is not routed on: it is a register access at the same offset of
    /// this window, a read answered out of port n.
    pub const MANAGEMENT_BAR_LOW: Register = LAYOUT.register(
        "MANAGEMENT_BAR_LOW",
        0x18,
        Access::ReadWrite,
        "The management BAR's address bits 31:20 and each port's Memory Space Enable: \
         memory requests hitting it on an enabled fabric or disabled port are accesses \
         to this window.",
        &[MANAGEMENT_ENABLE, MANAGEMENT_BASE],
    );
    /// [`COMPLETION_TIMEOUT`]'s time.
    pub const TIMEOUT_MICROSECONDS: Field = Field::new(
        "MICROSECONDS",
        0,
        31,
        "Microseconds; 0 (at reset): DEFAULT_COMPLETION_TIMEOUT_US, 50 ms.",
    );
    /// How long a host's non-posted request waits for its completion.
    ///
    /// Each host port's outstanding-request table completes a request
    /// still waiting after this long with Completer Abort (PCIe Base 6.0
    /// §2.8), so that no host waits for a completion that never comes. It
    /// should be shorter than the host's own completion timeout, so the
    /// host sees an answer rather than its own timeout. Requests already
    /// waiting are measured against the new value from the write on.
    pub const COMPLETION_TIMEOUT: Register = LAYOUT.register(
        "COMPLETION_TIMEOUT",
        0x20,
        Access::ReadWrite,
        "How long a host's non-posted request waits for its completion before the switch \
         completes it with Completer Abort (PCIe Base 6.0 §2.8), in microseconds, to about \
         1 µs; 0 selects the default of 50 ms.",
        &[TIMEOUT_MICROSECONDS],
    );
    /// Where the switch's management BAR sits, high half.
    pub const MANAGEMENT_BAR_HIGH: Register = LAYOUT.register(
        "MANAGEMENT_BAR_HIGH",
        0x1C,
        Access::ReadWrite,
        "The management BAR's address bits 63:32 (BAR1 of the management function).",
        HIGH_HALF,
    );

    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "global",
        doc: "What this data plane is, where its management BAR is, and how long hosts' \
              requests wait for completions. The identity and \
              capacity registers are read-only; the firmware checks them against the \
              capacities it was built with before it writes a table. The management BAR \
              registers are written by the ports' configuration logic when the fabric \
              manager assigns the BAR of the switch's management function.",
        layout: LAYOUT,
        registers: &[
            ID,
            VERSION,
            PORTS,
            PORT_TABLES,
            ROUTE_TABLES,
            OWNER_TABLES,
            MANAGEMENT_BAR_LOW,
            MANAGEMENT_BAR_HIGH,
            COMPLETION_TIMEOUT,
        ],
        entry_names: &[],
    };
}

/// Each port's role and the identities its translation uses (weft-model's `PortTables`).
pub mod port {
    use super::*;

    /// One instance per port.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x1000,
        instances: PORTS,
        stride: 0x40,
        entries: 1,
        entry_stride: 0x40,
    };
    /// [`CONTROL`]'s ROLE: nothing attached; every TLP arriving is dropped.
    pub const ROLE_DISABLED: u32 = 0;
    /// [`CONTROL`]'s ROLE: a host's root port.
    pub const ROLE_HOST: u32 = 1;
    /// [`CONTROL`]'s ROLE: an endpoint (or a conventional switch above endpoints).
    pub const ROLE_ENDPOINT: u32 = 2;
    /// [`CONTROL`]'s ROLE: a link to another weft switch.
    pub const ROLE_FABRIC: u32 = 3;

    /// [`CONTROL`]'s ENABLE field.
    pub const ENABLE: Field = Field::new(
                "ENABLE",
                0,
                1,
                "The port passes traffic; while clear, every TLP arriving is dropped as from a disabled port.",
            );
    /// [`CONTROL`]'s ROLE field.
    pub const ROLE: Field = Field::new(
        "ROLE",
        1,
        2,
        "0: disabled, 1: host, 2: endpoint, 3: fabric.",
    );
    /// [`CONTROL`]'s SETTLED field.
    pub const SETTLED: Field = Field::new(
        "SETTLED",
        3,
        1,
        "The fabric manager has settled the port's role. While clear (at reset), the switch \
                 is not yet ready behind a disabled port: a Configuration Request arriving there \
                 is answered with Request Retry Status from COMPLETER_ID (PCIe Base 6.0 §2.3.1, \
                 §6.6.1), so a host that asks before the fabric starts retries rather than times \
                 out. Once set, a disabled port drops every TLP and answers none.",
    );
    /// [`CONTROL`]'s P2P_REQUEST_REDIRECT field.
    pub const P2P_REQUEST_REDIRECT: Field = Field::new(
        "P2P_REQUEST_REDIRECT",
        8,
        1,
        "Endpoint ports: the owner host set ACS P2P Request Redirect on the virtual \
                 downstream port (PCIe Base 6.0 §7.7.11.3); peer requests go up to the host.",
    );
    /// [`CONTROL`]'s RETURN_TO_INGRESS field.
    pub const RETURN_TO_INGRESS: Field = Field::new(
        "RETURN_TO_INGRESS",
        9,
        1,
        "Endpoint ports facing a conventional switch whose downstream ports redirect peer \
                 traffic upstream (ACS P2P Request and Completion Redirect, PCIe Base 6.0 \
                 §6.12.1.1, §7.7.11): a request from below that a peer window of its \
                 requester's owner routes back to this port, or a completion between two \
                 functions of one owner below it, is sent back out of it, as a root port \
                 returns ACS-redirected peer traffic; while clear, and on host and fabric \
                 ports, it is dropped (DROP_ROUTES_TO_INGRESS).",
    );
    /// [`CONTROL`]'s INTX_SWIZZLE field.
    pub const INTX_SWIZZLE: Field = Field::new(
        "INTX_SWIZZLE",
        16,
        5,
        "Endpoint ports: the virtual device number of the slot, which swizzles INTx \
                 as a switch's downstream port does (§2.2.8.1).",
    );
    /// [`HOST`]'s INDEX field.
    pub const HOST_INDEX: Field = Field::new(
        "INDEX",
        0,
        HOST_INDEX_BITS,
        "The host's index, selecting its aperture in fabric address space.",
    );
    /// [`HOST`]'s PROXY_ID field.
    pub const HOST_PROXY_ID: Field = Field::new(
        "PROXY_ID",
        16,
        16,
        "The host's proxy fabric requester ID (bus 15:8, device 7:3, function 2:0).",
    );
    /// [`OWNER`]'s HOST_INDEX field.
    pub const OWNER_HOST_INDEX: Field = Field::new(
        "HOST_INDEX",
        0,
        HOST_INDEX_BITS,
        "The owner's index, selecting the aperture DMA goes to.",
    );
    /// [`OWNER`]'s BOUND field.
    pub const OWNER_BOUND: Field = Field::new(
        "BOUND",
        15,
        1,
        "The endpoint is bound; while clear it sits in the free pool and its requests are dropped.",
    );
    /// [`OWNER`]'s PROXY_ID field.
    pub const OWNER_PROXY_ID: Field = Field::new(
        "PROXY_ID",
        16,
        16,
        "The owner's proxy fabric ID, to which interrupts and error messages are routed.",
    );
    /// [`BUSES`]'s FIRST field.
    pub const BUSES_FIRST: Field = Field::new("FIRST", 0, 8, "First bus number below the port.");
    /// [`BUSES`]'s LAST field.
    pub const BUSES_LAST: Field = Field::new("LAST", 8, 8, "Last bus number below the port.");
    /// [`ABANDON`]'s HOST_PORTS field.
    pub const ABANDON_HOST_PORTS: Field = Field::new(
        "HOST_PORTS",
        0,
        PORTS,
        "One bit per host port whose requests are abandoned, port 0 in bit 0.",
    );

    /// The port's role and switches.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x00,
        Access::ReadWrite,
        "The port's role and switches.",
        &[
            ENABLE,
            ROLE,
            SETTLED,
            P2P_REQUEST_REDIRECT,
            RETURN_TO_INGRESS,
            INTX_SWIZZLE,
        ],
    );
    /// A host port's host.
    pub const HOST: Register = LAYOUT.register(
        "HOST",
        0x04,
        Access::ReadWrite,
        "Host ports: which host, and the fabric ID that stands for it.",
        &[HOST_INDEX, HOST_PROXY_ID],
    );
    /// An endpoint port's owner.
    pub const OWNER: Register = LAYOUT.register(
        "OWNER",
        0x08,
        Access::ReadWrite,
        "Endpoint ports: the host the endpoint is bound to.",
        &[OWNER_HOST_INDEX, OWNER_BOUND, OWNER_PROXY_ID],
    );
    /// An endpoint port's fabric bus range.
    pub const BUSES: Register = LAYOUT.register(
        "BUSES",
        0x0C,
        Access::ReadWrite,
        "Endpoint ports: the fabric bus numbers below the port, FIRST..=LAST; requester IDs \
         from other buses are spoofed (ACS Source Validation, PCIe Base 6.0 §6.12.1.1).",
        &[BUSES_FIRST, BUSES_LAST],
    );
    /// The ID of completions the port synthesizes.
    pub const COMPLETER_ID: Register = LAYOUT.register(
        "COMPLETER_ID",
        0x10,
        Access::ReadWrite,
        "The completer ID of completions this port synthesizes, in its link partner's \
         domain (for a host port, its virtual upstream port's ID).",
        ID_FIELD,
    );
    /// Completes the requests in flight to this port with an error.
    pub const ABANDON: Register = LAYOUT.register(
        "ABANDON",
        0x14,
        Access::WriteOnly,
        "Writing completes with Unsupported Request every host request in flight to this \
         port from the host ports whose bits are set: its endpoint, or one function of it, \
         is gone and will never answer (no host waits forever).",
        &[ABANDON_HOST_PORTS],
    );
    /// [`LINK`]'s HOT_RESET field.
    pub const LINK_HOT_RESET: Field = Field::new(
        "HOT_RESET",
        0,
        1,
        "Writing 1 sends a hot reset to the link partner: the port's LTSSM goes to Hot Reset \
         (PCIe Base 6.0 §4.2.5.11, §4.2.7) and stays there for its 2 ms timeout, then trains \
         again from Detect. Every function below the port takes a Conventional Reset (§6.6.1): \
         configuration space back to its defaults. A pulse: the hard IP adapter holds its \
         hot reset request for the LTSSM's timeout itself.",
    );
    /// [`LINK`]'s RETRAIN field.
    pub const LINK_RETRAIN: Field = Field::new(
        "RETRAIN",
        1,
        1,
        "Writing 1 retrains the link (Retrain Link, PCIe Base 6.0 §7.5.3.7): the LTSSM goes \
         through Recovery (§4.2.6.4) while the Data Link Layer stays up, so flow control \
         credits carry on (§3.4) and no configuration is lost. A pulse, like Retrain Link.",
    );

    /// Asks the port's link for a hot reset or retraining.
    pub const LINK: Register = LAYOUT.register(
        "LINK",
        0x18,
        Access::WriteOnly,
        "Link control of the port's LTSSM, which the board's hard IP adapter carries out \
         (its hot reset and retrain inputs). Each bit set acts once; reads return 0.",
        &[LINK_HOT_RESET, LINK_RETRAIN],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "port",
        doc: "Each port's role and the identities its translation uses. Program the \
              port's tables first, then set ENABLE.",
        layout: LAYOUT,
        registers: &[CONTROL, HOST, OWNER, BUSES, COMPLETER_ID, ABANDON, LINK],
        entry_names: &[],
    };
}

/// Clearing the counters.
pub mod counter_control {
    use super::*;

    /// One instance.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x2000,
        instances: 1,
        stride: 0x100,
        entries: 1,
        entry_stride: 0x100,
    };
    /// [`CLEAR`]'s ports.
    pub const CLEAR_PORTS: Field =
        Field::new("PORTS", 0, PORTS, "One bit per port, port 0 in bit 0.");
    /// Clears counters.
    pub const CLEAR: Register = LAYOUT.register(
        "CLEAR",
        0x00,
        Access::WriteOnly,
        "Writing a 1 to a port's bit sets every counter of that port to zero.",
        &[CLEAR_PORTS],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "counter_control",
        doc: "Clearing the counters of the `counter` block.",
        layout: LAYOUT,
        registers: &[CLEAR],
        entry_names: &[],
    };
}

/// Each port's address windows (weft-model's `Window`): the first window a request overlaps decides.
pub mod window {
    use super::*;

    /// Per port, [`capacity::WINDOWS_PER_PORT`] entries.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x1_0000,
        instances: PORTS,
        stride: 0x200,
        entries: capacity::WINDOWS_PER_PORT as u32,
        entry_stride: 0x20,
    };
    /// The range the window covers, in the host's domain.
    const RANGE: [Register; 4] = range_registers(LAYOUT);
    /// First host-domain address of the window, bits 31:0.
    pub const BASE_LOW: Register = RANGE[0];
    /// First host-domain address of the window, bits 63:32.
    pub const BASE_HIGH: Register = RANGE[1];
    /// Size of the window in bytes, bits 31:0.
    pub const SIZE_LOW: Register = RANGE[2];
    /// Size of the window in bytes, bits 63:32.
    pub const SIZE_HIGH: Register = RANGE[3];
    /// Fabric address of the first byte, bits 31:0.
    pub const FABRIC_BASE_LOW: Register = LAYOUT.register(
        "FABRIC_BASE_LOW",
        0x10,
        Access::ReadWrite,
        "The fabric address that BASE translates to, bits 31:0 (whole DWs). \
         It must agree with BASE modulo 16 bytes, and modulo 4 KiB unless the \
         fabric range lies in one 4 KiB page; otherwise translation could \
         misalign an AtomicOp or carry a request across a page (PCIe §2.2.7.1), \
         and the entry matches nothing.",
        DW_LOW_HALF,
    );
    /// Fabric address of the first byte, bits 63:32.
    pub const FABRIC_BASE_HIGH: Register = LAYOUT.register(
        "FABRIC_BASE_HIGH",
        0x14,
        Access::ReadWrite,
        "The fabric address that BASE translates to, bits 63:32.",
        HIGH_HALF,
    );
    /// The entry is in use.
    pub const VALID: Field = Field::new(
        "VALID",
        0,
        1,
        "The entry is in use; an entry without it matches nothing.",
    );
    /// Memory reads (and AtomicOps) may pass.
    pub const READ: Field = Field::new("READ", 1, 1, "Memory reads (and AtomicOps) may pass.");
    /// Memory writes (and AtomicOps) may pass.
    pub const WRITE: Field = Field::new("WRITE", 2, 1, "Memory writes (and AtomicOps) may pass.");
    /// Valid and permissions.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x18,
        Access::ReadWrite,
        "Whether the entry is in use and what it lets through.",
        &[VALID, READ, WRITE],
    );
    /// The owner host whose functions an endpoint port's window serves.
    pub const OWNER_HOST_INDEX: Field = Field::new(
        "HOST_INDEX",
        0,
        HOST_INDEX_BITS,
        "The host whose functions the window serves, when TAGGED.",
    );
    /// The window carries an owner tag.
    pub const OWNER_TAGGED: Field = Field::new(
        "TAGGED",
        15,
        1,
        "The window serves HOST_INDEX's functions; while clear, it serves the port's own owner.",
    );
    /// Endpoint ports: the owner tag.
    pub const OWNER: Register = LAYOUT.register(
        "OWNER",
        0x1C,
        Access::ReadWrite,
        "Endpoint ports: the owner host whose functions the window serves (their \
         function owner entry's owner, or else the port's). A request sees only its \
         owner's windows. Host ports ignore it.",
        &[OWNER_HOST_INDEX, OWNER_TAGGED],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "window",
        doc: "Each port's address windows. On a host port they are the BARs the host \
              assigned to its bound functions; on an endpoint port, the owner host's BAR \
              windows of the endpoint's peers. A request uses the first valid entry it \
              overlaps; it passes only if it lies wholly inside that window and the window \
              permits it, and its address becomes `FABRIC_BASE + (address - BASE)`.",
        layout: LAYOUT,
        registers: &[
            BASE_LOW,
            BASE_HIGH,
            SIZE_LOW,
            SIZE_HIGH,
            FABRIC_BASE_LOW,
            FABRIC_BASE_HIGH,
            CONTROL,
            OWNER,
        ],
        entry_names: &[],
    };
}

/// Each endpoint port's function owner entries (`weft_regs::tables::FunctionOwner`):
/// functions below the port bound one by one, each to its own host.
pub mod function_owner {
    use super::*;

    /// Per port, [`capacity::FUNCTION_OWNERS_PER_PORT`] entries.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x1_8000,
        instances: PORTS,
        stride: 0x100,
        entries: capacity::FUNCTION_OWNERS_PER_PORT as u32,
        entry_stride: 0x10,
    };
    /// The function's fabric ID.
    pub const FUNCTION: Register = LAYOUT.register(
        "FUNCTION",
        0x00,
        Access::ReadWrite,
        "The function's fabric ID, matched against the whole requester ID.",
        ID_FIELD,
    );
    /// The owner's index.
    pub const HOST_INDEX: Field = Field::new(
        "HOST_INDEX",
        0,
        HOST_INDEX_BITS,
        "The owner's index, selecting the aperture the function's DMA goes to.",
    );
    /// The owner's proxy fabric ID.
    pub const PROXY_ID: Field = Field::new(
        "PROXY_ID",
        16,
        16,
        "The owner's proxy fabric ID, to which the function's interrupts and error messages are routed.",
    );
    /// The host the function is bound to.
    pub const OWNER: Register = LAYOUT.register(
        "OWNER",
        0x04,
        Access::ReadWrite,
        "The host the function is bound to.",
        &[HOST_INDEX, PROXY_ID],
    );
    /// The entry is in use.
    pub const VALID: Field = Field::new(
        "VALID",
        0,
        1,
        "The entry is in use; an entry without it matches nothing.",
    );
    /// ACS P2P Request Redirect of the function's slot.
    pub const P2P_REQUEST_REDIRECT: Field = Field::new(
        "P2P_REQUEST_REDIRECT",
        8,
        1,
        "The owner set ACS P2P Request Redirect on the function's virtual downstream port \
         (PCIe Base 6.0 §7.7.11.3); its peer requests go up to the owner.",
    );
    /// The device number of the function's slot.
    pub const INTX_SWIZZLE: Field = Field::new(
        "INTX_SWIZZLE",
        16,
        5,
        "The virtual device number of the function's slot, which swizzles its INTx (§2.2.8.1).",
    );
    /// Valid and the slot's controls.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x08,
        Access::ReadWrite,
        "Whether the entry is in use, and the controls of the function's slot.",
        &[VALID, P2P_REQUEST_REDIRECT, INTX_SWIZZLE],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "function_owner",
        doc: "Each endpoint port's functions bound on their own (SR-IOV virtual functions of \
              one drive bound to different hosts, PCIe Base 6.0 §9.1). Ingress looks the \
              requester ID of every request and message up here first, in entry order, and \
              uses the port's OWNER, P2P_REQUEST_REDIRECT and INTX_SWIZZLE only when no valid \
              entry matches.",
        layout: LAYOUT,
        registers: &[FUNCTION, OWNER, CONTROL],
        entry_names: &[],
    };
}

/// Each host port's ID map (weft-model's `IdMapping`): bound functions' fabric and host IDs.
pub mod id_map {
    use super::*;

    /// Per port, [`capacity::BOUND_FUNCTIONS_PER_HOST`] entries.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x2_0000,
        instances: PORTS,
        stride: 0x200,
        entries: capacity::BOUND_FUNCTIONS_PER_HOST as u32,
        entry_stride: 0x10,
    };
    /// The function's fabric ID.
    pub const FABRIC_ID: Register = LAYOUT.register(
        "FABRIC_ID",
        0x00,
        Access::ReadWrite,
        "The bound function's fabric ID.",
        ID_FIELD,
    );
    /// The ID the host enumerated the function at.
    pub const HOST_ID: Register = LAYOUT.register(
        "HOST_ID",
        0x04,
        Access::ReadWrite,
        "The ID the host enumerated the function at, below its virtual downstream port.",
        ID_FIELD,
    );
    /// The entry is in use.
    pub const VALID: Field = Field::new(
        "VALID",
        0,
        1,
        "The entry is in use; an entry without it matches nothing.",
    );
    /// Valid.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x08,
        Access::ReadWrite,
        "Whether the entry is in use.",
        &[VALID],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "id_map",
        doc: "Each host port's map of the functions bound to its host. Host egress turns \
              fabric IDs into host IDs (first valid entry whose FABRIC_ID matches), host \
              ingress turns host IDs back (first valid entry whose HOST_ID matches).",
        layout: LAYOUT,
        registers: &[FABRIC_ID, HOST_ID, CONTROL],
        entry_names: &[],
    };
}

/// The switch's fabric address routes (weft-model's `RouteTables::by_address`): the first match wins.
pub mod address_route {
    use super::*;

    /// One table of [`capacity::ADDRESS_ROUTES`] entries.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x3_0000,
        instances: 1,
        stride: 0x800,
        entries: capacity::ADDRESS_ROUTES as u32,
        entry_stride: 0x20,
    };
    /// The fabric address range.
    const RANGE: [Register; 4] = range_registers(LAYOUT);
    /// First fabric address of the range, bits 31:0.
    pub const BASE_LOW: Register = RANGE[0];
    /// First fabric address of the range, bits 63:32.
    pub const BASE_HIGH: Register = RANGE[1];
    /// Size of the range in bytes, bits 31:0.
    pub const SIZE_LOW: Register = RANGE[2];
    /// Size of the range in bytes, bits 63:32.
    pub const SIZE_HIGH: Register = RANGE[3];
    /// Where TLPs addressed into the range go.
    pub const DESTINATION: Register = LAYOUT.register(
        "DESTINATION",
        0x10,
        Access::ReadWrite,
        "Where TLPs addressed into the range go.",
        destination::FIELDS,
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "address_route",
        doc: "The switch's fabric address ranges and the port that leads to each. An \
              address-routed TLP goes where the first valid entry with \
              `BASE <= address < BASE + SIZE` says; with none, it has no route.",
        layout: LAYOUT,
        registers: &[BASE_LOW, BASE_HIGH, SIZE_LOW, SIZE_HIGH, DESTINATION],
        entry_names: &[],
    };
}

/// The switch's bus number routes (weft-model's `RouteTables::by_id`): one entry per bus number.
pub mod bus_route {
    use super::*;

    /// One table of [`capacity::BUS_ROUTES`] entries, indexed by bus number.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x4_0000,
        instances: 1,
        stride: 0x400,
        entries: capacity::BUS_ROUTES as u32,
        entry_stride: 0x4,
    };
    /// Where TLPs routed by ID to this bus go.
    pub const DESTINATION: Register = LAYOUT.register(
        "DESTINATION",
        0x00,
        Access::ReadWrite,
        "Where ID-routed TLPs for this bus number go.",
        destination::FIELDS,
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "bus_route",
        doc: "The switch's bus number routes: entry N says where an ID-routed TLP for \
              fabric bus N goes; an entry without VALID means no route.",
        layout: LAYOUT,
        registers: &[DESTINATION],
        entry_names: &[],
    };
}

/// Each port's counters: 64 bits each, read as two halves.
pub mod counter {
    use super::*;

    /// Per port, one entry per counter.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x5_0000,
        instances: PORTS,
        stride: 0x100,
        entries: NAMES.len() as u32,
        entry_stride: 0x8,
    };
    /// Bits 31:0 of the count.
    pub const VALUE_LOW: Register = LAYOUT.register(
        "VALUE_LOW",
        0x0,
        Access::ReadOnly,
        "Bits 31:0 of the count. Reading it also captures bits 63:32 into VALUE_HIGH, \
         so read LOW then HIGH for a consistent 64-bit value.",
        LOW_HALF,
    );
    /// Bits 63:32 of the count, as captured by the last read of `VALUE_LOW`.
    pub const VALUE_HIGH: Register = LAYOUT.register(
        "VALUE_HIGH",
        0x4,
        Access::ReadOnly,
        "Bits 63:32 of the count as captured by the last read of VALUE_LOW.",
        HIGH_HALF,
    );

    /// Entry of posted TLPs received.
    pub const TLPS_IN_POSTED: u32 = 0;
    /// Entry of non-posted TLPs received.
    pub const TLPS_IN_NON_POSTED: u32 = 1;
    /// Entry of completions received.
    pub const TLPS_IN_COMPLETION: u32 = 2;
    /// Entry of bytes received.
    pub const BYTES_IN: u32 = 3;
    /// Entry of posted TLPs sent.
    pub const TLPS_OUT_POSTED: u32 = 4;
    /// Entry of non-posted TLPs sent.
    pub const TLPS_OUT_NON_POSTED: u32 = 5;
    /// Entry of completions sent.
    pub const TLPS_OUT_COMPLETION: u32 = 6;
    /// Entry of bytes sent.
    pub const BYTES_OUT: u32 = 7;
    /// Entry of cycles the egress waited for the link partner.
    pub const STALL_CYCLES: u32 = 8;
    /// Entry of the first drop counter; drop reason `r` (in weft-model's
    /// `DropReason::ALL` order) is counted at `FIRST_DROP + r`.
    pub const FIRST_DROP: u32 = 9;

    /// Every counter, in entry order.
    pub const NAMES: [EntryName; 21] = [
        EntryName {
            name: "TLPS_IN_POSTED",
            doc: "Posted TLPs received (malformed ones count only as drops).",
        },
        EntryName {
            name: "TLPS_IN_NON_POSTED",
            doc: "Non-posted TLPs received.",
        },
        EntryName {
            name: "TLPS_IN_COMPLETION",
            doc: "Completions received.",
        },
        EntryName {
            name: "BYTES_IN",
            doc: "Bytes of the TLPs received, as on the wire (prefixes, header, payload, digest).",
        },
        EntryName {
            name: "TLPS_OUT_POSTED",
            doc: "Posted TLPs sent.",
        },
        EntryName {
            name: "TLPS_OUT_NON_POSTED",
            doc: "Non-posted TLPs sent.",
        },
        EntryName {
            name: "TLPS_OUT_COMPLETION",
            doc: "Completions sent.",
        },
        EntryName {
            name: "BYTES_OUT",
            doc: "Bytes of the TLPs sent, as on the wire.",
        },
        EntryName {
            name: "STALL_CYCLES",
            doc: "Cycles the egress had a beat to send and the link partner could not take it.",
        },
        EntryName {
            name: "DROP_MALFORMED",
            doc: "Dropped: not a well-formed TLP (PCIe Base 6.0 §2.3.1).",
        },
        EntryName {
            name: "DROP_PORT_DISABLED",
            doc: "Dropped: the ingress port is disabled.",
        },
        EntryName {
            name: "DROP_UNBOUND",
            doc: "Dropped: a request from an endpoint bound to no host.",
        },
        EntryName {
            name: "DROP_SPOOFED_REQUESTER",
            doc: "Dropped: a requester ID not below the port (ACS Source Validation, §6.12.1.1).",
        },
        EntryName {
            name: "DROP_NO_WINDOW",
            doc: "Dropped: a host memory request inside none of the host's windows.",
        },
        EntryName {
            name: "DROP_FORBIDDEN",
            doc: "Dropped: a window covers the request but does not permit it.",
        },
        EntryName {
            name: "DROP_OUTSIDE_APERTURE",
            doc: "Dropped: an endpoint's DMA address outside its owner's aperture.",
        },
        EntryName {
            name: "DROP_UNSUPPORTED",
            doc: "Dropped: a request type the fabric does not carry.",
        },
        EntryName {
            name: "DROP_NO_ROUTE",
            doc: "Dropped: no routing table entry leads anywhere.",
        },
        EntryName {
            name: "DROP_ROUTES_TO_INGRESS",
            doc: "Dropped: the route leads back out of the ingress port, and the port does not \
                  return it (port CONTROL.RETURN_TO_INGRESS clear, not an endpoint port, or a \
                  completion between functions of different owners).",
        },
        EntryName {
            name: "DROP_UNEXPECTED_COMPLETION",
            doc: "Dropped: a completion that answers no outstanding request.",
        },
        EntryName {
            name: "DROP_UNKNOWN_FUNCTION",
            doc: "Dropped: a TLP for a host whose ID map does not know its requester or completer.",
        },
    ];

    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "counter",
        doc: "Each port's traffic and drop counters, 64 bits each, counting from zero \
              (at reset or when cleared through `counter_control`) and wrapping. The \
              drop counters follow weft-model's `DropReason::ALL` order.",
        layout: LAYOUT,
        registers: &[VALUE_LOW, VALUE_HIGH],
        entry_names: &NAMES,
    };
}

/// The queue of TLPs for the management CPU: the head TLP's source port and length.
pub mod mailbox {
    use super::*;

    /// One instance.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x8_0000,
        instances: 1,
        stride: 0x100,
        entries: 1,
        entry_stride: 0x100,
    };
    /// The longest TLP the mailbox holds, in DWs: prefixes, header, payload
    /// and digest. Longer TLPs for the CPU are dropped and counted in
    /// [`STATUS`]'s LOST.
    pub const TLP_DWORDS: u32 = 64;

    /// A TLP is waiting.
    pub const PENDING: Field = Field::new(
        "PENDING",
        0,
        1,
        "A TLP is at the head of the queue; DWORDS, PORT and `mailbox_data` describe it.",
    );
    /// TLPs were lost.
    pub const LOST: Field = Field::new(
        "LOST",
        1,
        1,
        "A TLP for the CPU was dropped since this bit was last cleared: the queue was \
         full or the TLP longer than TLP_DWORDS.",
    );
    /// The head TLP's length.
    pub const DWORDS: Field = Field::new(
        "DWORDS",
        8,
        8,
        "DWs of the head TLP in `mailbox_data`, prefixes and digest included.",
    );
    /// The head TLP's source port.
    pub const PORT: Field = Field::new("PORT", 16, 8, "The port the head TLP arrived on.");
    /// The head of the queue.
    pub const STATUS: Register = LAYOUT.register(
        "STATUS",
        0x00,
        Access::WriteOneToClear,
        "The head of the queue. Writing a 1 to LOST clears it; the other fields ignore writes.",
        &[PENDING, LOST, DWORDS, PORT],
    );
    /// Done with the head TLP.
    pub const DONE: Field = Field::new(
        "DONE",
        0,
        1,
        "Writing 1 discards the head TLP; the next one, if any, takes its place.",
    );
    /// Discards the head TLP.
    pub const POP: Register = LAYOUT.register(
        "POP",
        0x04,
        Access::WriteOnly,
        "Discards the head TLP once the CPU has read it.",
        &[DONE],
    );
    /// Interrupt while a TLP waits.
    pub const ON_PENDING: Field = Field::new(
        "PENDING",
        0,
        1,
        "Raise the data plane's interrupt while STATUS.PENDING is set.",
    );
    /// Which of the mailbox's conditions raise the data plane's interrupt.
    pub const INT_ENABLE: Register = LAYOUT.register(
        "INT_ENABLE",
        0x08,
        Access::ReadWrite,
        "Which conditions raise the data plane's interrupt (0 at reset: none).",
        &[ON_PENDING],
    );
    /// The mailbox raises the interrupt.
    pub const RAISED: Field = Field::new(
        "RAISED",
        0,
        1,
        "The mailbox raises the data plane's interrupt now: INT_ENABLE.PENDING \
         and STATUS.PENDING are both set.",
    );
    /// Whether the mailbox raises the data plane's interrupt.
    pub const INT_PENDING: Register = LAYOUT.register(
        "INT_PENDING",
        0x0C,
        Access::ReadOnly,
        "The mailbox's share of the data plane's interrupt line, as it is now.",
        &[RAISED],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "mailbox",
        doc: "The queue of TLPs for the management CPU (configuration requests from hosts, \
              messages routed to the switch, completions of the CPU's own requests), read \
              one at a time: STATUS describes the head, `mailbox_data` holds its DWs, POP \
              moves on. The interrupt is level-sensitive: with INT_ENABLE.PENDING \
              set, the mailbox raises the data plane's interrupt line while a TLP waits \
              (STATUS.PENDING) and lowers it when POP empties the queue, from the cycle \
              after the write that does it. Nothing needs acknowledging: the CPU reads and \
              pops until STATUS.PENDING is clear, and a TLP arriving before it sleeps \
              again keeps the line high, so none waits unnoticed.",
        layout: LAYOUT,
        registers: &[STATUS, POP, INT_ENABLE, INT_PENDING],
        entry_names: &[],
    };
}

/// The mailbox's head TLP, one DW per entry.
pub mod mailbox_data {
    use super::*;

    /// [`mailbox::TLP_DWORDS`] entries.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0x8_1000,
        instances: 1,
        stride: 0x100,
        entries: mailbox::TLP_DWORDS,
        entry_stride: 0x4,
    };
    /// One DW of the head TLP.
    pub const DATA: Register = LAYOUT.register(
        "DATA",
        0x00,
        Access::ReadOnly,
        "DW N of the head TLP in wire order: its byte 4N in bits 31:24, byte 4N+3 in \
         bits 7:0 (PCIe Base 6.0 §2.2.1). Entries past DWORDS read 0.",
        &[Field::new("DW", 0, 32, "The DW.")],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "mailbox_data",
        doc: "The DWs of the mailbox's head TLP, entry N holding DW N.",
        layout: LAYOUT,
        registers: &[DATA],
        entry_names: &[],
    };
}

/// TLPs the management CPU sends out of a port's egress.
pub mod inject {
    use super::*;

    /// One instance.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0xC_0000,
        instances: 1,
        stride: 0x100,
        entries: 1,
        entry_stride: 0x100,
    };
    /// The longest TLP the CPU can inject, in DWs.
    pub const TLP_DWORDS: u32 = 64;

    /// The injector takes a TLP.
    pub const READY: Field = Field::new(
        "READY",
        0,
        1,
        "SEND is taken now; while clear, the port's egress queue is full and SEND is ignored.",
    );
    /// The last SEND was refused.
    pub const MALFORMED: Field = Field::new(
        "MALFORMED",
        1,
        1,
        "A TLP was dropped: `inject_data` did not hold a well-formed TLP of DWORDS DWs \
         (PCIe Base 6.0 §2.3.1).",
    );
    /// The last SEND named a port that does not exist.
    pub const NO_SUCH_PORT: Field = Field::new(
        "NO_SUCH_PORT",
        2,
        1,
        "A TLP was dropped: SEND named a port the data plane does not have.",
    );
    /// Whether the injector takes a TLP, and why TLPs were dropped.
    pub const STATUS: Register = LAYOUT.register(
        "STATUS",
        0x00,
        Access::WriteOneToClear,
        "Whether SEND is taken, and why TLPs were dropped since the bits were last \
         cleared. Writing a 1 to MALFORMED or NO_SUCH_PORT clears it; READY ignores writes.",
        &[READY, MALFORMED, NO_SUCH_PORT],
    );
    /// The egress port.
    pub const PORT: Field = Field::new("PORT", 0, 8, "The port whose egress the TLP leaves by.");
    /// The TLP's length.
    pub const DWORDS: Field = Field::new(
        "DWORDS",
        8,
        8,
        "DWs of the TLP in `inject_data`, from entry 0.",
    );
    /// Sends the TLP in `inject_data`.
    pub const SEND: Register = LAYOUT.register(
        "SEND",
        0x04,
        Access::WriteOnly,
        "Writing sends the first DWORDS DWs of `inject_data` out of PORT as they are: \
         the CPU speaks the port's own domain. Check READY first.",
        &[PORT, DWORDS],
    );
    /// Interrupt while a TLP sent was dropped.
    pub const ON_DROPPED: Field = Field::new(
        "DROPPED",
        0,
        1,
        "Raise the data plane's interrupt while STATUS.MALFORMED or STATUS.NO_SUCH_PORT is set.",
    );
    /// Which of the injector's conditions raise the data plane's interrupt.
    pub const INT_ENABLE: Register = LAYOUT.register(
        "INT_ENABLE",
        0x08,
        Access::ReadWrite,
        "Which conditions raise the data plane's interrupt (0 at reset: none).",
        &[ON_DROPPED],
    );
    /// The injector raises the interrupt.
    pub const RAISED: Field = Field::new(
        "RAISED",
        0,
        1,
        "The injector raises the data plane's interrupt now: INT_ENABLE.DROPPED is \
         set and so is STATUS.MALFORMED or STATUS.NO_SUCH_PORT.",
    );
    /// Whether the injector raises the data plane's interrupt.
    pub const INT_PENDING: Register = LAYOUT.register(
        "INT_PENDING",
        0x0C,
        Access::ReadOnly,
        "The injector's share of the data plane's interrupt line, as it is now.",
        &[RAISED],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "inject",
        doc: "TLPs the management CPU sends out of any port's egress (its configuration \
              requests, completions to hosts, MSI writes): check READY, fill `inject_data`, \
              write SEND. The interrupt is level-sensitive: with INT_ENABLE.DROPPED \
              set, the injector raises the data plane's interrupt line while STATUS says a \
              TLP was dropped, so a TLP the CPU meant to send is not lost unnoticed; the CPU \
              acknowledges it by writing 1s to STATUS.MALFORMED and STATUS.NO_SUCH_PORT, \
              which lowers the line from the cycle after the write.",
        layout: LAYOUT,
        registers: &[STATUS, SEND, INT_ENABLE, INT_PENDING],
        entry_names: &[],
    };
}

/// The TLP the CPU injects next, one DW per entry.
pub mod inject_data {
    use super::*;

    /// [`inject::TLP_DWORDS`] entries.
    pub const LAYOUT: Layout = Layout {
        base: CSR_BASE + 0xC_1000,
        instances: 1,
        stride: 0x100,
        entries: inject::TLP_DWORDS,
        entry_stride: 0x4,
    };
    /// One DW of the TLP.
    pub const DATA: Register = LAYOUT.register(
        "DATA",
        0x00,
        Access::WriteOnly,
        "DW N of the TLP in wire order: its byte 4N in bits 31:24 (PCIe Base 6.0 §2.2.1). \
         Ignored while `inject` STATUS.READY is clear: the TLP leaving is read from here.",
        &[Field::new("DW", 0, 32, "The DW.")],
    );
    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "inject_data",
        doc: "The DWs of the TLP the next SEND injects, entry N holding DW N.",
        layout: LAYOUT,
        registers: &[DATA],
        entry_names: &[],
    };
}

/// The data plane's register map, as docs/registers.md shows it, followed
/// there by the soft core's peripherals ([`crate::soc::MAP`]).
pub const MAP: RegisterMap = RegisterMap {
    title: "weft data plane registers",
    doc: "The data plane's control and status registers, as the soft core reaches them \
          over the CSR bus: 32-bit registers at 4-byte aligned byte addresses, accessed as \
          whole words. Reserved bits read 0 and are ignored on writes. Table registers take \
          effect for lookups from the second clock cycle after the write; firmware that \
          rewrites a live table entry clears its VALID bit first and sets it last. The \
          data plane's one interrupt line is the level OR of the mailbox's and the \
          injector's (see their INT_ENABLE and INT_PENDING); it is the soft core's machine \
          external interrupt (`mip.MEIP`) together with the management MAC's. Every \
          address here comes from the Rust definitions in `weft_regs::csr`, which the RTL \
          and the firmware use too.",
    base: CSR_BASE,
    size: CSR_SIZE,
    blocks: BLOCKS,
    companions: &[crate::soc::MAP],
};

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::format;
    use std::string::String;

    use super::*;

    /// Every register of every instance and entry, by address.
    fn every_address() -> BTreeMap<u32, String> {
        let mut seen = BTreeMap::new();
        for block in BLOCKS {
            let layout = block.layout;
            for instance in 0..layout.instances {
                for entry in 0..layout.entries {
                    for register in block.registers {
                        let address = register.address(instance, entry);
                        let name = format!("{}[{instance}][{entry}].{}", block.name, register.name);
                        if let Some(other) = seen.insert(address, name.clone()) {
                            panic!("{name} and {other} share address {address:#x}");
                        }
                    }
                }
            }
        }
        seen
    }

    /// Every register of the map, in its first and last instance and
    /// entry, is located in its own block at its own index (the address
    /// from its layout, `Layout::entry_address`), and decoded to itself;
    /// the address just past a block's last entry is not in that block.
    #[test]
    fn every_register_is_located_at_its_own_address() {
        for (index, block) in BLOCKS.iter().enumerate() {
            let layout = block.layout;
            for (number, register) in block.registers.iter().enumerate() {
                for (instance, entry) in [(0, 0), (layout.instances - 1, layout.entries - 1)] {
                    let address = register.address(instance, entry);
                    let located = locate(address).expect("a register of the map");
                    assert_eq!(
                        (
                            located.block,
                            located.register,
                            located.instance,
                            located.entry
                        ),
                        (index, number, instance, entry),
                        "{}.{} at {address:#x}",
                        block.name,
                        register.name
                    );
                    let decoded = decode(address).expect("decoded");
                    assert_eq!(decoded.register, *register);
                    assert_eq!(decoded.block.name, block.name);
                }
            }
            let past = layout.entry_address(layout.instances - 1, layout.entries - 1)
                + layout.entry_stride;
            assert!(
                locate(past).is_none_or(|located| located.block != index),
                "{} ends at {past:#x}",
                block.name
            );
        }
    }

    #[test]
    fn no_two_registers_overlap() {
        let addresses = every_address();
        for (address, name) in &addresses {
            assert_eq!(address % 4, 0, "{name} is not word aligned");
        }
        // Registers are 4 bytes wide: distinct aligned addresses cannot overlap,
        // but an entry's registers must also stay inside its entry and an
        // instance's entries inside its instance, or a decoder sees aliases.
        for block in BLOCKS {
            let layout = block.layout;
            assert!(layout.entry_stride.is_power_of_two(), "{}", block.name);
            assert!(layout.instances == 1 || layout.instance_span() <= layout.stride);
            for register in block.registers {
                assert!(
                    register.offset + 4 <= layout.entry_stride,
                    "{}.{} runs past its entry",
                    block.name,
                    register.name
                );
            }
        }
        assert!(addresses.len() > 2000, "every table entry is enumerated");
    }

    #[test]
    fn blocks_are_disjoint_and_inside_the_window_in_address_order() {
        assert_eq!(BLOCKS[0].layout.base, CSR_BASE);
        for pair in BLOCKS.windows(2) {
            assert!(
                pair[0].end() <= pair[1].layout.base,
                "{} ends at {:#x}, after {} starts at {:#x}",
                pair[0].name,
                pair[0].end(),
                pair[1].name,
                pair[1].layout.base
            );
        }
        let last = BLOCKS.last().expect("the map has blocks");
        assert!(last.end() <= CSR_BASE + CSR_SIZE);
    }

    #[test]
    fn every_field_fits_its_register_and_no_two_fields_overlap() {
        for block in BLOCKS {
            for register in block.registers {
                let mut used = 0u32;
                for field in register.fields {
                    assert!(
                        field.width >= 1 && field.lsb + field.width <= 32,
                        "{}.{}.{} does not fit 32 bits",
                        block.name,
                        register.name,
                        field.name
                    );
                    assert_eq!(
                        used & field.mask(),
                        0,
                        "{}.{}.{} overlaps another field",
                        block.name,
                        register.name,
                        field.name
                    );
                    used |= field.mask();
                }
                assert_eq!(used, register.mask());
                assert_eq!(
                    register.layout, block.layout,
                    "{}.{}",
                    block.name, register.name
                );
            }
        }
    }

    #[test]
    fn addresses_are_base_plus_instance_plus_entry_plus_offset() {
        // Expected values worked out by hand from the documented layout.
        assert_eq!(global::ID.address(0, 0), 0x4000_0000);
        assert_eq!(port::BUSES.address(7, 0), 0x4000_11CC);
        assert_eq!(window::BASE_LOW.address(0, 0), 0x4001_0000);
        assert_eq!(window::CONTROL.address(3, 5), 0x4001_06B8);
        assert_eq!(window::FABRIC_BASE_HIGH.address(7, 15), 0x4001_0FF4);
        assert_eq!(id_map::HOST_ID.address(2, 31), 0x4002_05F4);
        assert_eq!(address_route::DESTINATION.address(0, 63), 0x4003_07F0);
        assert_eq!(bus_route::DESTINATION.address(0, 255), 0x4004_03FC);
        assert_eq!(
            counter::VALUE_HIGH.address(1, counter::FIRST_DROP + 4),
            0x4005_016C
        );
        assert_eq!(counter_control::CLEAR.address(0, 0), 0x4000_2000);
    }

    #[test]
    #[should_panic(expected = "entry index out of range")]
    fn an_entry_past_the_table_has_no_address() {
        window::BASE_LOW.address(0, capacity::WINDOWS_PER_PORT as u32);
    }

    #[test]
    fn tables_hold_their_capacities() {
        assert_eq!(window::LAYOUT.entries as usize, capacity::WINDOWS_PER_PORT);
        assert_eq!(
            id_map::LAYOUT.entries as usize,
            capacity::BOUND_FUNCTIONS_PER_HOST
        );
        assert_eq!(
            address_route::LAYOUT.entries as usize,
            capacity::ADDRESS_ROUTES
        );
        assert_eq!(bus_route::LAYOUT.entries as usize, capacity::BUS_ROUTES);
        assert_eq!(port::LAYOUT.instances as usize, capacity::PORTS);
        assert_eq!(counter::NAMES.len(), counter::LAYOUT.entries as usize);
        assert_eq!(
            counter::NAMES[counter::FIRST_DROP as usize].name,
            "DROP_MALFORMED"
        );
        assert_eq!(
            counter::NAMES[counter::STALL_CYCLES as usize].name,
            "STALL_CYCLES"
        );
        // Fields wide enough for the values they hold.
        let port_field = destination::PORT;
        assert!(capacity::PORTS <= 1 << port_field.width);
        assert_eq!(1 << HOST_INDEX_BITS, crate::aperture::MAX_HOSTS);
    }

    #[test]
    fn fields_encode_and_decode_their_bits() {
        let role = port::CONTROL.fields[1];
        assert_eq!(role.name, "ROLE");
        assert_eq!(role.encode(port::ROLE_FABRIC), 0b110);
        assert_eq!(role.decode(0xFFFF_FFF9), port::ROLE_DISABLED);
        assert_eq!(
            destination::PORT.encode(0x1_05),
            0x0500,
            "too-wide values are cut"
        );
        assert_eq!(window::CONTROL.mask(), 0b111);
        assert_eq!(global::ID_VALUE, 0x5745_4654);
    }
}
