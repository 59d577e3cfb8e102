//! The weft fabric manager.
//!
//! Every decision of weft's control plane lives here: discovery and
//! enumeration of the fabric, fabric IDs and addresses, routes, one virtual
//! PCIe switch per host, configuration-space virtualization, binding and
//! unbinding of endpoints and SR-IOV virtual functions, and hot-plug. It
//! reaches hardware only through the traits of [`hw`] (configuration
//! access, table writes, the host mailbox, a timer), so the same code runs
//! in the firmware, in the simulator and in unit tests, without a heap:
//! every list has a capacity named in [`limits`] and overflowing it is an
//! error.
//!
//! - [`hw`]: the hardware traits (the data plane's tables and their entries are `weft_regs::tables`).
//! - [`enumerate`], [`readiness`], [`sriov`], [`conventional`], [`address`]:
//!   the fabric domain — walking the ports, fabric IDs, BAR placement, VFs,
//!   conventional PCIe switches below ports; the result is an
//!   [`inventory::Inventory`].
//! - [`paths`]: shortest paths between the fabric's switches; [`routes`]:
//!   every switch's tables computed from the inventory and the paths.
//! - [`vswitch`]: one virtual switch per host port, its ports' registers
//!   kept by [`port_space`]; [`virtualize`]: host
//!   configuration requests answered or forwarded; [`binding`]: bind and
//!   unbind with hot-plug, each change advancing the [`generation`];
//!   [`manager`]: the whole, [`manager::FabricManager`]; [`operations`]:
//!   the IDs and outcomes of background operations, unbinds that wait
//!   for their host and NumVFs changes ([`sriov`]) that wait for their VFs.
//! - [`port_control`]: ports taken out of service and back;
//!   [`link_control`]: their links retrained or hot reset, and what a hot
//!   reset cleared programmed again.
//! - [`events`]: the event log; [`persist`]: the bindings stored in flash
//!   and restored at boot or on request; [`network_setting`]: the
//!   management port's address setting as a flash record; [`diagnostics`]: raw
//!   configuration-space access to the fabric's functions, with what the
//!   fabric owns protected; [`csr_diagnostics`]: the same for the data
//!   plane's CSR window; [`reset`]: the reset's two phases; [`board`]:
//!   what the board provides (CSR window, configuration flash, reset);
//!   [`management`]: the management protocol's requests answered;
//!   [`firmware_update`]: a new firmware image into the slot not running,
//!   committed for a trial boot, and the boot record's choice of slot;
//!   [`boot_image`]: the image format a slot holds, checked and copied
//!   into the soft core's RAMs by the boot loader, and its handoff;
//!   [`memory_flash`]: a flash region in memory for the simulator and tests.
//!
//! A fabric may have several weft switches linked in any graph: discovery
//! walks through fabric links, and every switch's tables are programmed,
//! remote switches' through [`hw::Fabric`], in-band ([`inband`]). Host ports and endpoints may
//! be on any switch; remote hosts' mailboxes are served through
//! [`hw::HostInterface`] like the local ones.
#![no_std]
#![forbid(unsafe_code)]

pub use weft_pcie as pcie;

pub mod address;
pub mod binding;
pub mod board;
pub mod boot_image;
pub mod conventional;
pub mod csr_diagnostics;
pub mod diagnostics;
pub mod enumerate;
pub mod events;
pub mod firmware_update;
pub mod generation;
pub mod hw;
pub mod inband;
pub mod inventory;
pub mod limits;
pub mod link_control;
pub mod management;
pub mod manager;
pub mod memory_flash;
pub mod network_setting;
pub mod operations;
pub mod paths;
pub mod persist;
pub mod port_control;
pub mod port_space;
pub mod readiness;
pub mod reset;
pub mod routes;
pub mod settings;
pub mod sriov;
pub mod virtualize;
pub mod vswitch;
