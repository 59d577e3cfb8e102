//! One port of the switch: its registers, its ingress pipeline into the switching core and its egress out of it.
//!
//! [`crate::top::SwitchTop`] puts one of each per port around the
//! [`crate::switching::SwitchCore`].

pub mod boundary;
pub mod digest;
pub mod egress;
pub mod error_completions;
pub mod ingress;
pub mod injected;
pub mod registers;

pub use boundary::TlpBoundary;
pub use digest::DigestStrip;
pub use egress::PortEgress;
pub use error_completions::ErrorCompletionQueue;
pub use ingress::PortIngress;
pub use injected::InjectMerge;
pub use registers::PortRegisters;
