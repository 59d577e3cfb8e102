//! Edge translation: TLPs crossing between a host's or an endpoint's domain and the fabric's.
//!
//! Each stage applies one of DESIGN.md's rules ("Domains and translation")
//! with the semantics of the matching weft-model function, which the
//! differential tests hold it to:
//!
//! - [`HostIngress`]: memory requests from a host into the fabric (`Switch::host_ingress`).

pub mod host_ingress;

pub use host_ingress::{HostIngress, IngressDestination};
