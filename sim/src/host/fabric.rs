//! What the host's link leads to: the far side the root port sends TLPs
//! into and receives TLPs from, in simulated time.
//!
//! The host's software (enumerator, drivers) runs synchronously: it issues
//! a request and then lets the far side run until the completion comes
//! back. A simulator, a switch model or a test harness implements
//! [`Fabric`] for "everything on the other side of this host's root port".

use std::time::Duration;

use weft_model::Packet;

/// The far side of a host's root port link.
pub trait Fabric {
    /// The current simulated time.
    fn now(&self) -> Duration;

    /// Accepts a TLP the root port sends down its link.
    fn send(&mut self, packet: Packet);

    /// Lets the far side run. Returns as soon as one or more TLPs have
    /// reached the root port (time then stands at their arrival), or, when
    /// nothing can reach the host before `deadline`, with no TLPs and time
    /// at `deadline` (or later, if it already was).
    fn run(&mut self, deadline: Duration) -> Vec<Packet>;
}
