//! Edge translation: TLPs crossing between a host's or an endpoint's domain and the fabric's.
//!
//! Each stage applies one of DESIGN.md's rules ("Domains and translation")
//! with the semantics of the matching weft-model function, which the
//! differential tests hold it to:
//!
//! - [`HostIngress`]: memory requests from a host into the fabric (`Switch::host_ingress`);
//! - [`EndpointIngress`]: DMA and messages from an endpoint into the fabric (`Switch::endpoint_ingress`);
//! - [`HostEgress`]: TLPs from the fabric back into a host's terms (`Switch::egress` at a host port);
//! - [`VirtualWires`]: the INTx messages that change a host's collapsed virtual wires.

pub mod endpoint_ingress;
pub mod host_egress;
pub mod host_ingress;
pub mod virtual_wire;

pub use endpoint_ingress::EndpointIngress;
pub use host_egress::{EgressDestination, HostEgress};
pub use host_ingress::{HostIngress, IngressDestination};
pub use virtual_wire::VirtualWires;
