//! A device that can be made to hang while it is wired in, as a device
//! whose firmware crashes: from then on it takes in every TLP that reaches
//! it and sends nothing, no completion included.
//!
//! A device with a link of its own is made to hang by the simulator's
//! wiring, which stops delivering to it. A device inside another model (on
//! a conventional switch's downstream port, [`crate::conventional`]) is
//! reached only through that model, so it is wrapped in a [`Hangable`]
//! when it is built, and its [`HangControl`] kept to make it hang later.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use weft_pcie::tlp::Body;
use weft_pcie::Bdf;

use crate::device::{Claim, ConfigError, Device};
use crate::packet::Packet;

/// Whether a [`Hangable`] device answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// It answers as its model does.
    Answering,
    /// It completes this many more configuration requests, then hangs as
    /// the next one reaches it.
    After(u32),
    /// It has hung.
    Hung,
}

/// Makes a [`Hangable`] device hang; a handle the device shares.
#[derive(Clone, Debug)]
pub struct HangControl(Rc<Cell<State>>);

impl HangControl {
    /// Makes the device hang now. Returns whether it had not hung already.
    pub fn hang(&self) -> bool {
        self.0.replace(State::Hung) != State::Hung
    }

    /// Makes the device complete `requests` more configuration requests
    /// (reads and writes, to any of its functions) and hang as the next
    /// one reaches it, that request unanswered. Returns whether it had not
    /// hung already.
    pub fn hang_after(&self, requests: u32) -> bool {
        if self.0.get() == State::Hung {
            return false;
        }
        self.0.set(State::After(requests));
        true
    }

    /// Whether the device has hung.
    pub fn hung(&self) -> bool {
        self.0.get() == State::Hung
    }
}

/// A device that answers as `inner` until its [`HangControl`] makes it
/// hang (see the module docs).
pub struct Hangable {
    inner: Box<dyn Device>,
    state: HangControl,
}

impl Hangable {
    /// `inner`, answering until the control returned makes it hang.
    pub fn new(inner: Box<dyn Device>) -> (Self, HangControl) {
        let state = HangControl(Rc::new(Cell::new(State::Answering)));
        (
            Hangable {
                inner,
                state: state.clone(),
            },
            state,
        )
    }

    /// Counts `packet` against the configuration requests left before the
    /// device hangs; returns whether the device answers it.
    fn answers(&self, packet: &Packet) -> bool {
        let cell = &self.state.0;
        match (cell.get(), &packet.header.body) {
            (State::Hung, _) => false,
            (State::After(0), Body::Config(_)) => {
                cell.set(State::Hung);
                false
            }
            (State::After(left), Body::Config(_)) => {
                cell.set(State::After(left - 1));
                true
            }
            _ => true,
        }
    }
}

impl Device for Hangable {
    fn config_read(&mut self, now: Duration, target: Bdf, offset: u16) -> Result<u32, ConfigError> {
        self.inner.config_read(now, target, offset)
    }

    fn config_write(
        &mut self,
        now: Duration,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigError> {
        self.inner
            .config_write(now, target, offset, value, byte_enables)
    }

    fn claim(&self, address: u64) -> Option<Claim> {
        self.inner.claim(address)
    }

    fn memory_read(&mut self, now: Duration, address: u64, out: &mut [u8]) {
        self.inner.memory_read(now, address, out);
    }

    fn memory_write(&mut self, now: Duration, address: u64, data: &[u8]) {
        self.inner.memory_write(now, address, data);
    }

    fn receive_completion(&mut self, now: Duration, completion: &Packet) {
        if !self.state.hung() {
            self.inner.receive_completion(now, completion);
        }
    }

    fn poll(&mut self, now: Duration) -> Vec<Packet> {
        if self.state.hung() {
            return Vec::new();
        }
        self.inner.poll(now)
    }

    fn owns(&self, id: Bdf) -> bool {
        self.inner.owns(id)
    }

    fn reset(&mut self, now: Duration) {
        self.inner.reset(now);
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        self.inner.completer_for_unclaimed()
    }

    fn handle(&mut self, now: Duration, packet: &Packet) -> Vec<Packet> {
        if !self.answers(packet) {
            return Vec::new();
        }
        self.inner.handle(now, packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{Gpu, GpuConfig};
    use crate::packet::config_read;
    use weft_pcie::tlp::Tag;

    /// A Vendor ID read of the GPU at 01:00.0, from 00:00.0 with tag `tag`.
    fn read(tag: u8) -> Packet {
        config_read(Bdf::new(0, 0, 0), Tag::from_8bit(tag), Bdf::new(1, 0, 0), 0)
    }

    #[test]
    fn a_device_completes_the_requests_it_was_given_and_then_nothing() {
        let gpu = Gpu::new(GpuConfig::default()).expect("the GPU builds");
        let (mut device, control) = Hangable::new(Box::new(gpu));
        let now = Duration::from_secs(1);
        assert_eq!(
            device.handle(now, &read(0)).len(),
            1,
            "answers while not told"
        );
        assert!(control.hang_after(2));
        assert_eq!(device.handle(now, &read(1)).len(), 1);
        assert_eq!(device.handle(now, &read(2)).len(), 1);
        assert!(!control.hung());
        assert!(
            device.handle(now, &read(3)).is_empty(),
            "the third hangs it"
        );
        assert!(control.hung());
        assert!(device.handle(now, &read(4)).is_empty());
        assert!(device.poll(now).is_empty());
        assert!(!control.hang(), "it had hung already");
        assert!(!control.hang_after(1));
    }
}
