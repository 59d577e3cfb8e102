//! The weft switch data plane's behaviour in plain Rust.
//!
//! This is the executable specification that the rust-hdl data plane is
//! tested against, TLP for TLP, and the fast transaction-level switch of the
//! simulator. It keeps the rules of DESIGN.md's "Domains and translation":
//!
//! - **Host ingress.** Configuration requests and messages go to the
//!   management CPU's mailbox. A memory request must fall wholly inside one
//!   of the host's windows and be permitted there; its address becomes the
//!   window's fabric address and its requester ID the host's proxy fabric
//!   ID. A non-posted one also gets a fabric tag from the port's
//!   outstanding-request table, which remembers the host's own ID and tag.
//!   A completion from the host (to an endpoint's read of host memory) gets
//!   the endpoint's fabric ID back as its requester and the proxy ID as its
//!   completer.
//! - **Endpoint ingress.** The requester ID must lie below the port (ACS
//!   Source Validation). Its owner is its function owner entry's if it has
//!   one (functions of one port bound to different hosts), else the port's.
//!   A memory request hitting one of that owner's windows of a peer goes to
//!   the peer's fabric address, so peer-to-peer stays in the fabric, unless
//!   the owner set ACS P2P Request Redirect; everything else goes into the
//!   owner's aperture. INTx (swizzled), error and PME messages are routed
//!   by ID to the owner's proxy; errors are also copied to the CPU.
//! - **Fabric ingress.** Nothing changes; the tables route.
//! - **Host egress.** Undoes the above: addresses leave the aperture,
//!   fabric function IDs become the IDs the host enumerated, completions get
//!   the host's requester ID and tag back, INTx virtual wires are collapsed
//!   per pin.
//! - **Isolation.** A TLP that no table allows is dropped and counted by
//!   reason; a dropped non-posted request is answered with Unsupported
//!   Request. Host requests that never complete are completed by the switch.
//!
//! Tables and their capacities are those of the RTL (`weft-regs`).
//!
//! [`fabric`] walks TLPs through several switches cabled together, by the
//! rules of fabric links and of configuration requests leaving the fabric,
//! for the simulator and the fabric manager's tests alike.
#![forbid(unsafe_code)]

pub mod counters;
pub mod csr_window;
pub mod fabric;
pub mod isolation;
pub mod ordering;
pub mod outstanding;
pub mod packet;
pub mod plane;
pub mod switch;
pub mod tables;

pub use counters::{PortCounters, Traffic};
pub use csr_window::CsrWindow;
pub use isolation::DropReason;
pub use packet::Packet;
pub use switch::{Delivery, Forwarding, IngressError, Switch};
pub use tables::{
    AddressRoute, Destination, FunctionOwner, HostIndex, IdMapping, Owner, Ownership, Permissions,
    PortIndex, PortRole, PortTables, RouteTables, Window,
};
pub use weft_regs::tables::LinkRequest;
